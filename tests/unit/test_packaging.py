"""Packaging: the engine installs and imports without LangChain or LlamaIndex; the adapters are extras."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run(code: str) -> subprocess.CompletedProcess[str]:
    """``code`` in a fresh interpreter (nothing imported yet), from the repository root."""
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, cwd=ROOT, timeout=300
    )


def test_importing_the_engine_imports_no_framework():
    done = _run(
        """
        import importlib, pkgutil, sys
        import recall_core, recall_core.memory
        for module in pkgutil.walk_packages(recall_core.__path__, "recall_core."):
            importlib.import_module(module.name)  # every engine module, the adapters' glue included
        loaded = sorted(m for m in sys.modules if m.split(".")[0].startswith(("langchain", "llama_index")))
        print("loaded:", loaded)
        print("plotting:", sorted(m for m in sys.modules if m.split(".")[0] == "matplotlib"))
        """
    )
    assert done.returncode == 0, done.stderr
    assert "loaded: []" in done.stdout
    assert "plotting: []" in done.stdout  # matplotlib is the bench extra's: only benchmarks and the cookbook plot


@pytest.mark.parametrize(
    ("package", "blocked", "extra"),
    [
        ("langchain_recall", ["langchain_core"], "recall-llm[langchain]"),
        ("llamaindex_recall", ["llama_index", "llama_index.core"], "recall-llm[llamaindex]"),
    ],
)
def test_an_adapter_without_its_framework_says_which_extra_to_install(package, blocked, extra):
    done = _run(
        f"""
        import sys
        for name in {blocked!r}:
            sys.modules[name] = None  # as if the framework were not installed
        try:
            import {package}
        except ImportError as error:
            print("ImportError:", error)
        """
    )
    assert done.returncode == 0, done.stderr
    assert "ImportError:" in done.stdout and f'pip install "{extra}"' in done.stdout


def test_the_frameworks_are_extras_and_make_installs_them():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert not [d for d in project["dependencies"] if d.startswith(("langchain", "llama-index"))]
    extras = project["optional-dependencies"]
    # LangGraph for RecallStore (langchain_recall imports it only when RecallStore is used)
    assert [d.split(">")[0] for d in extras["langchain"]] == ["langchain-core", "langgraph"]
    assert [d.split(">")[0] for d in extras["llamaindex"]] == ["llama-index-core"]
    assert extras["all"] == ["recall-llm[langchain,llamaindex]"]
    assert not [d for d in project["dependencies"] if d.startswith("matplotlib")]
    assert [d for d in extras["bench"] if d.startswith("matplotlib")]
    assert '-e ".[all,dev,bench]"' in (ROOT / "Makefile").read_text()  # bench: the peers the benchmarks measure
    installed = importlib.metadata.requires("recall-llm") or []  # the metadata pip installed
    framework = [r for r in installed if r.startswith(("langchain-core", "llama-index-core"))]
    assert framework and all("extra ==" in r for r in framework)

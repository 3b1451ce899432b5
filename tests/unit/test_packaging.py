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


def test_make_test_runs_the_suite_on_a_worker_a_core_that_make_installs():
    """One xdist worker a core, two to four (24 min on one worker, 13.5 on two, on the 2-core test
    machine, 2026-11-28; four on two cores no faster than two), taking the modules in the suite's
    order (tests/conftest.py). xdist must come from the dev extra, or a fresh clone's ``make test``
    fails on ``-n``."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    dev = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["dev"]
    assert [d for d in dev if d.startswith("pytest-xdist")]
    pytest_line = [line for line in _make_dry_run("test") if "pytest" in line][-1]
    try:  # what make's rule reads, with its fallback of 2 where there is no nproc
        cores = subprocess.run(["nproc"], capture_output=True, text=True, timeout=60).stdout.strip()
    except FileNotFoundError:
        cores = ""
    workers = min(max(int(cores) if cores.isdigit() else 2, 2), 4)
    assert f"-n {workers} --dist loadfile --no-loadscope-reorder" in pytest_line
    assert " -n " not in [line for line in _make_dry_run("test", "PYTEST_WORKERS=0") if "pytest" in line][-1]


@pytest.mark.parametrize("installer", ["uv", "pip"])
def test_make_install_byte_compiles_torch_and_the_packages(installer):
    """uv writes no .pyc files unless asked, and where PYTHONDONTWRITEBYTECODE is set (these machines)
    every process then compiled every module again: a fresh clone's `.ci/run` took 1213-1274 s so,
    1031-1083 s byte-compiled (2026-12-06). pip picks torch's wheel (its configuration, TORCH_SPEC) and
    the installer installs that file with the rest, so torch is compiled too."""
    lines = _make_dry_run("-B", "install", f"INSTALLER={installer}")
    download = [line for line in lines if " download " in line]
    assert len(download) == 1 and "--no-deps" in download[0] and download[0].endswith("torch==2.13.0")
    wheel_dir = download[0].split("--dest ")[1].split()[0]
    installs = [line for line in lines if ' -e ".[all,dev,bench]"' in line]
    assert len(installs) == 1 and f"{wheel_dir}/torch-*.whl" in installs[0]
    assert not [line for line in lines if "--no-compile" in line]
    if installer == "uv":
        assert installs[0].startswith(".venv/bin/uv pip install") and "--compile-bytecode" in installs[0]
    else:
        assert installs[0].startswith(".venv/bin/pip install")


def _make_dry_run(*args: str) -> list[str]:
    """The commands `make -n ARGS` would run, a line each."""
    done = subprocess.run(["make", "-n", *args], capture_output=True, text=True, cwd=ROOT, timeout=60)
    return done.stdout.splitlines()

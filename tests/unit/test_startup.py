"""Start-up: the packages import nothing heavy until a name needs it, and a model load is quiet.

Each check runs in a fresh interpreter (what a user's script or ``recall --help`` starts from);
the figures themselves are measured by ``python -m benchmarks.startup``, not here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("torch", "transformers", "chromadb", "sentence_transformers", "langchain_core", "llama_index.core")
BAR = "Loading weights"


def _run(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, "PYTHONPATH": str(ROOT), **env}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, cwd=ROOT,
                          timeout=300, env=environ)  # fmt: skip


def _loaded(code: str) -> list[str]:
    done = _run(textwrap.dedent(code) + f"\nimport json, sys\nprint(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("package", ["recall_core", "langchain_recall", "llamaindex_recall"])
def test_importing_a_package_imports_no_torch(package):
    assert _loaded(f"import {package}") == []


def test_recall_help_imports_no_torch():
    code = """
        import contextlib, io
        from recall_core.cli import main
        with contextlib.redirect_stdout(io.StringIO()) as out, contextlib.suppress(SystemExit):
            main(["--help"])
        assert "demo" in out.getvalue() and "train" in out.getvalue()
    """
    assert _loaded(code) == []


def test_the_public_names_load_on_first_use():
    code = """
        import recall_core
        assert "RecallGenerator" not in vars(recall_core)  # not imported yet
        assert "RecallGenerator" in dir(recall_core)
        config = recall_core.RecallConfig(max_recalls=2)
        assert config.max_recalls == 2 and recall_core.RECALL_TOKEN == "<recall>"
        from recall_core import RecallGenerator, RecallSession  # noqa: F401
        try:
            recall_core.NoSuchName
        except AttributeError as error:
            assert "NoSuchName" in str(error)
        else:
            raise AssertionError("no AttributeError")
    """
    assert "torch" in _loaded(code)  # the engine's names load the engine, when asked for


@pytest.fixture(scope="module")
def tiny_folder(tmp_path_factory) -> Path:
    from tests.helpers.tiny import tiny_model

    folder = tmp_path_factory.mktemp("tiny-llama")
    model, tokenizer = tiny_model("llama")
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def test_a_model_load_is_quiet_progress_true_shows_the_bars_and_a_callers_own_setting_stays(tiny_folder):
    # Three loads in one fresh process, their stderr told apart by markers (a process start costs
    # seconds: the three cases share one).
    code = f"""
        import sys
        from recall_core import load_model
        from transformers.utils import logging
        import huggingface_hub.utils as hub
        load_model({str(tiny_folder)!r})
        print("bars after:", logging.is_progress_bar_enabled(), not hub.are_progress_bars_disabled())
        print("=== progress", file=sys.stderr, flush=True)
        load_model({str(tiny_folder)!r}, progress=True)
        print("=== the caller's own setting", file=sys.stderr, flush=True)
        logging.disable_progress_bar()
        load_model({str(tiny_folder)!r}, progress=True)
        print("bars after own:", logging.is_progress_bar_enabled())
    """
    done = _run(code)
    assert done.returncode == 0, done.stderr
    quiet, shown, own = done.stderr.split("=== ")
    assert BAR not in quiet and "it/s" not in quiet, quiet
    assert "bars after: True True" in done.stdout  # the caller's settings are as they were
    assert BAR in shown
    assert BAR not in own and "bars after own: False" in done.stdout

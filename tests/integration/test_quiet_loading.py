"""The embedded default model and encoder load without a progress bar (once converted)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]


def test_the_default_model_and_encoder_load_quietly():
    code = (
        "from recall_core import load_model\n"
        "from recall_core.memory import default_encoder\n"
        "load_model()\n"
        "default_encoder().encode(['a first sentence'])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Loading weights" not in done.stderr and "it/s" not in done.stderr, done.stderr


def test_the_demo_prints_no_progress_bar_once_the_models_are_converted(tmp_path):
    home = tmp_path / "home"  # a fresh memory; the converted models of RECALL_HOME, linked
    home.mkdir()
    (home / "models").symlink_to(Path(os.environ.get("RECALL_HOME", "")).expanduser().resolve() / "models")
    code = "from recall_core.cli import main\nraise SystemExit(main(['demo']))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=900,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "RECALL_HOME": str(home)})  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "it/s" not in done.stderr and "Loading" not in done.stderr, done.stderr
    assert "bot>" in done.stdout

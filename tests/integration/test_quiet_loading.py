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

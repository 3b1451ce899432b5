"""load_model's intra-op threads: one for a small model on CPU unless the user chose (threads=,
OMP_NUM_THREADS); each check in a fresh process (the setting is the whole process's)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one core: torch uses one thread anyway")


@pytest.fixture(scope="module")
def tiny_folder(tmp_path_factory) -> Path:
    from tests.helpers.tiny import tiny_model

    folder = tmp_path_factory.mktemp("tiny-llama")
    model, tokenizer = tiny_model("llama")
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def _threads(folder: Path, *arguments: str, **env: str) -> list[str]:
    """torch's thread count after each ``load_model(folder<arguments>)``, in order, in one fresh process."""
    loads = "".join(f"load_model({str(folder)!r}{a})\nprint(torch.get_num_threads())\n" for a in arguments)
    code = "import torch\nfrom recall_core import load_model\n" + loads
    environ = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300,
                          env={**environ, "PYTHONPATH": str(ROOT), **env})  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout.split()[-len(arguments) :]


def test_a_small_model_on_cpu_gets_one_thread_and_threads_is_the_users_choice(tiny_folder):
    assert _threads(tiny_folder, "", ", threads=2") == ["1", "2"]


def test_omp_num_threads_is_the_users_choice(tiny_folder):
    assert _threads(tiny_folder, "", OMP_NUM_THREADS="2") == ["2"]


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_bad_threads_are_refused_before_loading(bad):
    from recall_core import load_model

    with pytest.raises(ValueError, match="threads"):
        load_model("/nonexistent/model", threads=bad)

"""Shared test set-up: offline, one cache folder for converted models, tiny and real models."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# The converted default model lives here across runs (the Makefile fetches it once).
os.environ.setdefault("RECALL_HOME", str(ROOT / ".recall_home"))

from tests.helpers.tiny import tiny_model  # noqa: E402 - after the environment above


@pytest.fixture(params=["llama", "gpt2", "qwen2"])
def any_tiny(request):
    """Each tiny random architecture in turn: ``(model, tokenizer)``."""
    return tiny_model(request.param)


@pytest.fixture
def tiny():
    return tiny_model("llama")


@pytest.fixture(scope="session")
def smollm():
    """The embedded default model (SmolLM2-135M-Instruct, recall-tuned), loaded once per test session."""
    from recall_core import load_model

    return load_model()


@pytest.fixture(scope="session")
def smollm_plain():
    """The embedded default model as released, without the recall adapter (``tuned=False``)."""
    from recall_core import load_model

    return load_model(tuned=False)

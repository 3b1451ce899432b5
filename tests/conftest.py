"""Shared test set-up: offline, one cache folder for converted models, tiny models, a Chroma server,
and the ``integration`` marker given by where a test is filed.

The tests are filed by kind: ``unit/`` (offline, tiny random models, seconds), ``property/``
(hypothesis state machines and properties), ``integration/`` (the real embedded models, real
processes end to end, the cookbook), ``frameworks/{langchain,llamaindex}/`` (the adapters; their
real-model tests are the modules named ``*_integration.py``). ``pytest tests/unit`` is the quick
run; ``pytest -m "not integration and not server"`` is every test that needs no real model and
no ``chroma run`` server.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# The converted default model lives here across runs (the Makefile fetches it once).
os.environ.setdefault("RECALL_HOME", str(ROOT / ".recall_home"))

from tests.helpers.tiny import tiny_model  # noqa: E402 - after the environment above


def is_integration(path: Path) -> bool:
    """Filed as an integration test: under ``tests/integration/``, or a module named
    ``*_integration.py`` (a framework's real-model tests, next to its unit tests)."""
    try:
        folder = path.resolve().relative_to(TESTS).parts[0]
    except ValueError:  # not under tests/
        return False
    return folder == "integration" or path.stem.endswith("_integration")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The ``integration`` marker comes from the file's place, so a new test cannot forget it."""
    for item in items:
        if is_integration(item.path):
            item.add_marker(pytest.mark.integration)


@pytest.fixture(params=["llama", "gpt2", "qwen2"])
def any_tiny(request):
    """Each tiny random architecture in turn: ``(model, tokenizer)``."""
    return tiny_model(request.param)


@pytest.fixture
def tiny():
    return tiny_model("llama")


@pytest.fixture(scope="module")
def chroma_server(tmp_path_factory: pytest.TempPathFactory):
    """A real ``chroma run`` server on a free loopback port, one per test module (stopped after it)."""
    from recall_core.memory.chroma_server import ChromaServer

    with ChromaServer(tmp_path_factory.mktemp("chroma-server") / "data") as server:
        yield server

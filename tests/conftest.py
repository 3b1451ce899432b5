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
import torch

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
    """The ``integration`` marker comes from the file's place, so a new test cannot forget it.

    The modules with an integration test then run first, each module's tests in their order.
    `make test`'s xdist workers take modules in this order (``--no-loadscope-reorder``), so the
    minute-long real-model tests are not the last work left to one worker while the other idles:
    the many short unit modules fill the end. xdist's own order, the modules with most tests
    first, put `tests/integration/test_your_conversations.py` (one test, about 110 s) last."""
    for item in items:
        if is_integration(item.path):
            item.add_marker(pytest.mark.integration)
    real = {item.path for item in items if item.get_closest_marker("integration") is not None}
    items.sort(key=lambda item: item.path not in real)  # stable, by module: a module's tests stay together


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    """Tests other than integration tests run torch on one thread, their fixtures too (a module's
    fixtures are made in its first test's setup). Their models are tiny: a second thread has
    nothing to share but the waiting, and on two busy cores that waiting made
    tests/unit/test_engine_loop.py take 93 s instead of 8 s. The real models keep torch's default."""
    if item.get_closest_marker("integration") is not None:
        yield
        return
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


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

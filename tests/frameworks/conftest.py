"""Fixtures of the LangChain and LlamaIndex adapter tests: tiny generators, a local store, the
LlamaIndex events of a test, and (for the real agents) a store that remembers a past session."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from recall_core import RecallGenerator
from recall_core.memory import HashEncoder, MemoryStore
from recall_core.models.templates import SMOLLM2_TOOLS_TEMPLATE
from tests.helpers.tiny import tiny_model


@pytest.fixture(scope="module")
def generator() -> RecallGenerator:
    """A generator over a tiny random Llama, one per test module."""
    model, tokenizer = tiny_model("llama")
    return RecallGenerator(model, tokenizer)


@pytest.fixture(scope="module")
def tools_generator() -> RecallGenerator:
    """A tiny random Llama whose chat template renders tools (SmolLM2's), one per test module."""
    model, tokenizer = tiny_model("llama")
    model.config.max_position_embeddings = 2048  # the tools' description is long in a 400-token vocabulary
    tokenizer.chat_template = SMOLLM2_TOOLS_TEMPLATE
    return RecallGenerator(model, tokenizer)


@pytest.fixture
def store(tmp_path) -> Iterator[MemoryStore]:
    """A local memory store (Chroma, hash encoder) in the test's own folder."""
    store = MemoryStore.local(tmp_path / "memory", encoder=HashEncoder(64))
    yield store
    store.close()


@pytest.fixture(scope="module")
def past_session(tmp_path_factory) -> Iterator[MemoryStore]:
    """A store (default encoder) where user "ada" said where she lives, in an earlier session."""
    store = MemoryStore.local(tmp_path_factory.mktemp("agents") / "memory")
    # A fixed day: the note is searched and read with its date in front ("[24 November 2026] ..."), and
    # the untuned model's forced tool call followed the date it ran on (Lisbon on the 24th, Mumbai on the 25th).
    store.writer.add_turn("ada", "user", "I live in Lisbon, by the river.", session_id="monday",
                          timestamp="2026-11-24T12:00:00")
    yield store
    store.close()


@pytest.fixture
def events() -> Iterator[list[Any]]:
    """The LlamaIndex instrumentation events dispatched while the test runs, in order."""
    from llama_index.core.instrumentation import get_dispatcher
    from llama_index.core.instrumentation.event_handlers import BaseEventHandler

    class EventCollector(BaseEventHandler):
        events: list[Any] = []

        @classmethod
        def class_name(cls) -> str:
            return "EventCollector"

        def handle(self, event: Any, **kwargs: Any) -> None:
            self.events.append(event)

    dispatcher = get_dispatcher()
    handler = EventCollector(events=[])
    dispatcher.add_event_handler(handler)
    yield handler.events
    dispatcher.event_handlers.remove(handler)

"""What the LangChain and LlamaIndex adapter tests share besides fixtures (those are in
tests/frameworks/conftest.py): test memories and stores, a tool and a schema, helpers.

Nothing here imports LangChain or LlamaIndex.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import pytest
from pydantic import BaseModel, Field

from recall_core import RecallGenerator
from recall_core.memory import MemoryUnavailableError
from recall_core.types import Memory, MemoryCandidate, RecallQuery
from tests.helpers.memories import FixedMemory
from tests.helpers.tiny import tiny_model

T = TypeVar("T")

#: A chat template that refuses every role but system, user and assistant (as many real ones do).
STRICT_CHAT_TEMPLATE = (
    "{% for m in messages %}{% if m['role'] not in ['system', 'user', 'assistant'] %}"
    "{{ raise_exception('unknown role ' + m['role']) }}{% endif %}"
    "{{ '<|im_start|>' + m['role'] + '\n' + m['content'] + '<|im_end|>\n' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)


# --------------------------------------------------------------------------- a tool and a schema
class Person(BaseModel):
    """A person mentioned in the text."""

    name: str = Field(description="the person's name")
    age: int = Field(description="their age in years")


def weather(city: str) -> str:
    """Get today's weather in a city."""
    return f"It is sunny and 24 C in {city}."


# --------------------------------------------------------------------------- models, memories, stores
def strict_roles_generator() -> RecallGenerator:
    """A tiny random Llama whose chat template raises on roles other than system, user, assistant."""
    model, tokenizer = tiny_model("llama")
    tokenizer.chat_template = STRICT_CHAT_TEMPLATE
    return RecallGenerator(model, tokenizer)


class SlowMemory(FixedMemory):
    """A memory whose search blocks its thread for ``delay`` seconds (to see who else gets to run)."""

    def __init__(self, *texts: str, delay: float = 0.4) -> None:
        super().__init__(*texts)
        self.delay = delay

    def search(self, query: RecallQuery, k: int) -> list[MemoryCandidate]:
        time.sleep(self.delay)
        return super().search(query, k)


class DownWriter:
    """A ``MemoryWriter`` whose index cannot be reached."""

    def add_turn(self, *args: Any, **kwargs: Any) -> list[str]:
        raise MemoryUnavailableError("the index is unreachable")


class HalfDownStore:
    """A store whose writes fail; a search gets ``memory`` (without one, a search fails the test)."""

    writer = DownWriter()

    def __init__(self, memory: Memory | None = None) -> None:
        self.memory = memory

    def for_user(self, user_id: str) -> Memory:
        if self.memory is None:
            raise AssertionError("not searched here")
        return self.memory


# --------------------------------------------------------------------------- helpers
def pick_stop(text: str) -> str:
    """A two-character stop string that first occurs inside ``text`` (not at its start)."""
    for start in range(2, len(text) - 1):
        piece = text[start : start + 2]
        if piece.isalnum() and piece.isascii() and text.index(piece) == start:
            return piece
    pytest.skip(f"no usable stop string in {text!r}")


class Ticker:
    """``async with Ticker() as ticker``: counts in ``ticker.ticks`` how often a task that sleeps
    ``interval`` seconds got to run meanwhile. A blocked event loop does not tick."""

    def __init__(self, interval: float = 0.01) -> None:
        self.interval = interval
        self.ticks = 0

    async def __aenter__(self) -> Ticker:
        self._done = asyncio.Event()
        self._task = asyncio.create_task(self._tick())
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self._done.set()
        await self._task

    async def _tick(self) -> None:
        while not self._done.is_set():
            await asyncio.sleep(self.interval)
            self.ticks += 1


def ticker_during(coro_factory: Callable[[], Awaitable[T]], interval: float = 0.01) -> tuple[T, int]:
    """Run ``coro_factory()`` while a :class:`Ticker` counts; return ``(result, ticks)``."""

    async def main() -> tuple[T, int]:
        async with Ticker(interval) as ticker:
            result = await coro_factory()
        return result, ticker.ticks

    return asyncio.run(main())

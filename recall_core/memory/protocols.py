"""The protocols the memory package's parts are written against.

* :class:`StoreParts`: what a store's users' handles, writer and upkeep read from the store that
  owns them. Typing them against it rather than the store's class keeps the store the only
  module that imports them: no import cycle, not even one for annotations.
* :class:`DerivedCache`: what the writer tells a cache of things computed from memories' text.
  The memory package imports no engine module, so a part of the engine that keeps something
  derived from memories (the KV blocks of ``inject_mode="kv"``,
  :class:`recall_core.kv.memories.KVPrecompute`) implements it, and the writer calls it:
  ``written`` after memories are written or updated, ``drop`` before they change or go.
  Whatever writer issues a forget, delete or update also calls :func:`recall_core.paths.drop_derived`,
  which reaches every cache registered in the process and their files on disk.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from recall_core.memory.encoders import Encoder
from recall_core.memory.index import ChromaIndex
from recall_core.memory.journal import Journal
from recall_core.types import MemoryCandidate


class StoreParts(Protocol):
    """The parts of a :class:`~recall_core.memory.store.MemoryStore` its users, writer and upkeep use."""

    @property
    def journal(self) -> Journal: ...

    @property
    def index(self) -> ChromaIndex: ...

    @property
    def encoder(self) -> Encoder: ...

    @property
    def closed(self) -> bool: ...

    @property
    def kind(self) -> str: ...

    @property
    def location(self) -> str: ...

    @property
    def root(self) -> Path | None: ...

    @property
    def writer(self) -> Any: ...  # the store's MemoryWriter

    retrieval: str
    unit: str
    roles: tuple[str, ...] | None
    read_only: bool

    def for_user(self, user_id: str) -> Any: ...  # the user's UserMemory

    def use_encoder(self, encoder: Encoder | str | Path) -> Encoder: ...


@runtime_checkable
class DerivedCache(Protocol):
    """Keeps something computed from memories; told by the writer when they change."""

    def written(self, memories: Sequence[MemoryCandidate]) -> None:
        """Memories were written (or rewritten): compute what is kept for them. A failure
        should warn, not raise: the write has already happened."""
        ...

    def drop(self, memory_ids: str | Iterable[str]) -> Any:
        """Forget what is kept for these memories (updated, deleted or forgotten)."""
        ...


def derived_cache(source: Any) -> DerivedCache:
    """``source`` as a :class:`DerivedCache`: one already, or an object whose ``kv_precompute()``
    returns one (a :class:`~recall_core.RecallGenerator`)."""
    make = getattr(source, "kv_precompute", None)
    if callable(make):
        source = make()
    if isinstance(source, DerivedCache):
        return source
    hint = (
        ": pass KVPrecompute.of((model, tokenizer)) (recall_core.kv.memories) or the RecallGenerator"
        if isinstance(source, tuple) else ""
    )  # fmt: skip
    raise ValueError(
        "precompute_kv must be a RecallGenerator, a KVPrecompute or another object with written(memories) "
        f"and drop(memory_ids), got {type(source).__name__}{hint}"
    )

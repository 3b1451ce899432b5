"""What a store's parts read from the store that owns them.

A :class:`~recall_core.memory.store.MemoryStore` makes its users' handles, its writer and its
upkeep, and each of those reads the store's journal, index and encoder back. Typing them
against this protocol rather than the store's class keeps the store the only module that
imports them: no import cycle, not even one for annotations.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from recall_core.memory.encoders import Encoder
from recall_core.memory.index import ChromaIndex
from recall_core.memory.journal import Journal


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

    def for_user(self, user_id: str) -> Any: ...  # the user's UserMemory

    def use_encoder(self, encoder: Encoder | str | Path) -> Encoder: ...

"""What a memory is, as callers write it (:class:`Turn`) and read it (:class:`MemoryRecord`)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from recall_core.memory.journal import JournalRow
from recall_core.memory.validation import RESERVED_KEYS, check_user_id, storable_metadata

#: The turn fields a mapping may carry (``content`` or ``text``).
TURN_FIELDS = frozenset({"user_id", "role", "content", "text", "session_id", "timestamp", "metadata", "turn_index"})


@dataclass(frozen=True)
class Turn:
    """One conversation turn to remember (see :meth:`MemoryWriter.add_turn` for the fields)."""

    user_id: str
    role: str
    content: str | bytes
    session_id: str | None = None
    timestamp: Any = None
    metadata: Mapping[str, Any] | None = None
    turn_index: int | None = None

    @classmethod
    def from_mapping(cls, item: Mapping[str, Any], user_id: str | None = None) -> Turn:
        """A turn from a dict (``content`` or ``text``); ``user_id`` fills a missing one and must match a present one."""
        if not isinstance(item, Mapping):
            raise ValueError(f"a turn must be an object, got {type(item).__name__}")
        unknown = set(item) - TURN_FIELDS
        if unknown:
            raise ValueError(f"unknown turn fields {sorted(unknown)} (known: {sorted(TURN_FIELDS)})")
        own = item.get("user_id")
        # compared in NFC, as user ids are (a line's decomposed "José" was "another user" until 2026-12-07)
        if user_id is not None and own is not None and check_user_id(own) != check_user_id(user_id):
            raise ValueError(f"turn belongs to user {own!r}, but the turns are being written for {user_id!r}")
        if "content" in item and "text" in item:
            raise ValueError("a turn has both 'content' and 'text': give one")
        content = item["content"] if "content" in item else item.get("text")
        return cls(
            user_id=own if own is not None else user_id,  # type: ignore[arg-type]
            role=item.get("role"),  # type: ignore[arg-type]
            content=content,  # type: ignore[arg-type]
            session_id=item.get("session_id"), timestamp=item.get("timestamp"),
            metadata=item.get("metadata"), turn_index=item.get("turn_index"),
        )  # fmt: skip


@dataclass(frozen=True)
class MemoryRecord:
    """One stored memory (one chunk of one turn), as :meth:`UserMemory.get` and ``all`` return it.

    ``metadata`` holds the caller's extra metadata (for LoCoMo: speaker, dia_id, session_date);
    ``key`` the caller's key for memories written with :meth:`UserMemory.put` (else ``None``).
    """

    id: str
    user_id: str
    text: str
    role: str
    session_id: str
    timestamp: str
    turn_index: int
    chunk_index: int = 0
    n_chunks: int = 1
    metadata: dict[str, Any] = field(default_factory=dict)
    key: str | None = None

    @classmethod
    def from_index(cls, memory_id: str, text: str, meta: Mapping[str, Any]) -> MemoryRecord:
        extra = {k: v for k, v in meta.items() if k not in RESERVED_KEYS}
        key = meta.get("key")
        return cls(
            id=memory_id, user_id=str(meta.get("user_id")), text=text, role=str(meta.get("role")),
            session_id=str(meta.get("session_id")), timestamp=str(meta.get("timestamp")),
            turn_index=int(meta.get("turn_index", 0)), chunk_index=int(meta.get("chunk_index", 0)),
            n_chunks=int(meta.get("n_chunks", 1)), metadata=extra, key=None if key is None else str(key),
        )  # fmt: skip

    @classmethod
    def from_journal(cls, row: JournalRow) -> MemoryRecord:
        extra = {k: v for k, v in row.extra.items() if k not in RESERVED_KEYS}
        key = row.extra.get("key")
        return cls(
            id=row.id, user_id=row.user_id, text=row.text, role=row.role, session_id=row.session_id,
            timestamp=row.timestamp, turn_index=row.turn_index, chunk_index=row.chunk_index,
            n_chunks=row.n_chunks, metadata=extra, key=None if key is None else str(key),
        )  # fmt: skip


def index_metadata(row: JournalRow) -> dict[str, Any]:
    """The metadata a journal row gets in the index: its extra metadata as far as the index can hold
    it (:func:`~recall_core.memory.validation.storable_metadata`), then the store's own fields."""
    meta: dict[str, Any] = storable_metadata(row.extra)
    meta.update(
        user_id=row.user_id, role=row.role, session_id=row.session_id, timestamp=row.timestamp,
        turn_index=row.turn_index, chunk_index=row.chunk_index, n_chunks=row.n_chunks,
        written_at=float(row.created_at),
    )  # fmt: skip
    return meta


def check_owner(user_id: str, memory_id: str, meta: Mapping[str, Any] | None) -> None:
    """The second isolation check: a collection is its user's by name; each row must say so too."""
    owner = (meta or {}).get("user_id")
    if owner != user_id:
        from recall_core.memory.errors import MemoryIsolationError

        raise MemoryIsolationError(
            f"memory {memory_id} in the collection of user {user_id!r} is marked as another user's; "
            "refusing to return it (run `recall doctor`)"
        )


def memory_id(user_id: str, session_id: str, turn_key: str, chunk_index: int) -> str:
    """Deterministic id of one chunk of one turn (32 hex digits)."""
    payload = json.dumps([user_id, session_id, turn_key, chunk_index], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:32]


def key_memory_id(user_id: str, key: str) -> str:
    """Id of the memory a user keeps under ``key`` (:meth:`MemoryWriter.put`), whatever its session."""
    return memory_id(user_id, "", f"key:{key}", 0)

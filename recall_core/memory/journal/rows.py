"""A journal row (one memory) and what a read may see of one user's rows."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from recall_core.memory.journal.schema import PENDING

COLUMNS = (
    "id, user_id, session_id, role, text, timestamp, turn_index, chunk_index, n_chunks, extra, "
    "embedding, encoder, state, created_at, updated_at, context"
)


def same_metadata(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Whether two metadata mappings are the same as the journal and the index keep them: as JSON,
    so that ``1`` and ``True`` (equal in Python, told apart by Chroma's ``where``) differ; but
    ``-0.0`` and ``0.0`` are the same (the index keeps ``-0.0`` as ``0.0``)."""
    return _canonical(a) == _canonical(b)


def _canonical(metadata: Mapping[str, Any]) -> str:
    return json.dumps({k: 0.0 if isinstance(v, float) and v == 0.0 else v for k, v in metadata.items()}, sort_keys=True)


@dataclass(frozen=True)
class JournalRow:
    """One memory (one chunk of one turn) as the journal keeps it."""

    id: str
    user_id: str
    session_id: str
    role: str
    text: str
    timestamp: str
    turn_index: int
    chunk_index: int
    n_chunks: int
    extra: dict[str, Any] = field(default_factory=dict)
    embedding: np.ndarray | None = None
    encoder: str | None = None
    state: str = PENDING
    created_at: float = 0.0
    updated_at: float = 0.0
    #: What is embedded and word-indexed when it is more than ``text`` (the writer adds the date,
    #: the speaker and the turn before); ``text`` is what a search returns and recall injects.
    context: str | None = None

    @property
    def search_text(self) -> str:
        return self.context if self.context is not None else self.text

    def with_(self, **changes: Any) -> JournalRow:
        return replace(self, **changes)


@dataclass(frozen=True)
class Visibility:
    """Which of one user's index rows a read may return, by the journal.

    Never a tombstoned memory (deleted, its removal from the index not finished yet). While a
    ``forget`` of the user has not reached the index, only the memories live in this journal
    (written after the forget); everything else in the user's collections is on its way out.
    """

    deleted: frozenset[str] = frozenset()
    #: During an unfinished forget: the only ids a read may return; ``None`` otherwise.
    only: frozenset[str] | None = None

    @property
    def everything(self) -> bool:
        """Whether nothing is hidden (the common case: reads need not filter)."""
        return not self.deleted and self.only is None

    def allows(self, memory_id: str) -> bool:
        if self.only is not None:
            return memory_id in self.only
        return memory_id not in self.deleted


EVERYTHING = Visibility()


def to_blob(vector: np.ndarray | None) -> bytes | None:
    return None if vector is None else np.asarray(vector, dtype=np.float32).tobytes()


def from_blob(blob: bytes | None) -> np.ndarray | None:
    return None if blob is None else np.frombuffer(blob, dtype=np.float32).copy()


def row_from(values: Sequence[Any]) -> JournalRow:
    (id_, user, session, role, text, ts, turn, chunk, n_chunks, extra, emb, enc, state, c, u, context) = values
    return JournalRow(
        id=id_, user_id=user, session_id=session, role=role, text=text, timestamp=ts,
        turn_index=turn, chunk_index=chunk, n_chunks=n_chunks, extra=json.loads(extra),
        embedding=from_blob(emb), encoder=enc, state=state, created_at=c, updated_at=u, context=context,
    )  # fmt: skip

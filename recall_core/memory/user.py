"""`UserMemory`: one user's memory, the only handle through which anything is read or written.

Writes go to the store's :class:`~recall_core.memory.writer.MemoryWriter` (the one write
path); searches to :func:`recall_core.memory.search.search`; reads to the index, each row
checked to be this user's and to be visible by the journal (a memory deleted or forgotten is
never read back, even while the index still holds it). When the index has lost a user's
collection that the journal says it had, reads raise ``MemoryUnavailableError`` rather than
answer "nothing".
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import IO, Any

import numpy as np

from recall_core.memory.errors import MemoryStoreError
from recall_core.memory.index import MEMORIES
from recall_core.memory.journal import PENDING, Visibility
from recall_core.memory.protocols import StoreParts
from recall_core.memory.records import MemoryRecord, check_owner, key_memory_id
from recall_core.memory.search import check_not_lost, check_retrieval, check_roles, check_unit, search
from recall_core.memory.upkeep.transfer import export_jsonl, export_records
from recall_core.memory.validation import (
    check_count,
    check_id,
    check_ids,
    check_key,
    check_where,
    chroma_filter_errors,
)
from recall_core.types import MemoryCandidate, RecallQuery

#: Items per request when reading a whole collection.
_PAGE = 1000


class UserMemory:
    """The memory of one user: search, add, put, update, delete, get, list, count, all, export, forget.

    Implements the engine's :class:`~recall_core.types.Memory` protocol (``search``). Get one
    from :meth:`MemoryStore.for_user`; it can only ever see its own user's memories.
    """

    def __init__(self, store: StoreParts, user_id: str) -> None:
        self._store = store
        self.user_id = user_id

    def __repr__(self) -> str:
        return f"UserMemory({self.user_id!r}, store={self._store!r})"

    @property
    def store(self) -> StoreParts:
        return self._store

    def _visibility(self) -> Visibility:
        """What the journal lets this user's reads return (a closed store refuses, as the index does)."""
        if self._store.closed:
            raise MemoryStoreError("this MemoryStore is closed")
        return self._store.journal.visibility(self.user_id)

    # -- search --------------------------------------------------------------------------------

    def search(
        self,
        query: RecallQuery | str,
        k: int = 4,
        *,
        where: Mapping[str, Any] | None = None,
        retrieval: str | None = None,
        unit: str | None = None,
        roles: tuple[str, ...] | None | str = "store",
    ) -> list[MemoryCandidate]:
        """Up to ``k`` memories for ``query``, best first; ``score`` is the cosine similarity.

        ``query.mode == "text"`` embeds ``query.text`` with the store's encoder and ranks by
        ``retrieval`` (default: the store's, ``"hybrid"``): ``"hybrid"`` orders by cosine plus
        the query-normalised BM25 score of the words (so the order need not follow ``score``),
        ``"vector"`` by cosine alone, ``"lexical"`` by BM25 alone. ``"hidden"`` ranks the same
        way with ``query.vector``, a query head's vector, in place of the text's embedding.
        ``where`` filters on metadata inside this user's memories (for example
        ``{"session_id": "s1"}``). ``roles`` (default: the store's) keeps only what those speakers
        said (``("user",)``), ``None`` every speaker. ``unit`` (default: the store's) is what each text holds:
        ``"turn"``, ``"window"`` (with the turn before) or ``"exchange"`` (a turn and the reply
        to it). See :mod:`recall_core.memory.search`.

        Raises:
            MemoryUnavailableError: the index cannot be reached.
            EncoderMismatchError: the query vector's dimension is not the stored one.
        """
        if isinstance(query, str):
            query = RecallQuery(text=query)
        if not isinstance(query, RecallQuery):
            raise ValueError(f"query must be a string or a RecallQuery, got {type(query).__name__}")
        if query.text is not None and not isinstance(query.text, str):  # (a raw AttributeError until 2026-12-07)
            raise ValueError(f"query.text must be a string, got {type(query.text).__name__}")
        where = check_where(where)
        store = self._store
        if store.closed:
            raise MemoryStoreError("this MemoryStore is closed")
        retrieval = store.retrieval if retrieval is None else check_retrieval(retrieval)
        unit = store.unit if unit is None else check_unit(unit)
        roles = store.roles if roles == "store" else check_roles(roles)
        pending = store.catch_up.pending(self.user_id)
        with chroma_filter_errors(where):
            found = search(store.index, store.journal, store.encoder, self.user_id, query, k, retrieval, where, unit, roles)
        if store.catch_up.after_search(self.user_id, pending) and not store.closed:  # what an outage left pending is indexed: look again
            with chroma_filter_errors(where):
                found = search(store.index, store.journal, store.encoder, self.user_id, query, k, retrieval, where, unit, roles)
        return found

    # -- writing -------------------------------------------------------------------------------

    def add(
        self,
        content: str | bytes,
        role: str = "user",
        session_id: str | None = None,
        timestamp: Any = None,
        metadata: Mapping[str, Any] | None = None,
        turn_index: int | None = None,
    ) -> list[str]:
        """Write one turn (chunked if long) with the store's writer; return the memory ids."""
        return self._store.writer.add_turn(
            self.user_id, role, content, session_id=session_id, timestamp=timestamp, metadata=metadata,
            turn_index=turn_index,
        )  # fmt: skip

    def put(
        self,
        key: str,
        text: str | bytes,
        *,
        role: str = "user",
        session_id: str | None = None,
        timestamp: Any = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> str:
        """Write, or replace, the memory kept under ``key``; return its id (see :meth:`MemoryWriter.put`)."""
        return self._store.writer.put(
            self.user_id, key, text, role=role, session_id=session_id, timestamp=timestamp, metadata=metadata
        )

    def update(
        self,
        memory_id: str,
        text: str | bytes,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        """Replace one memory's text and, if given, its extra metadata (see :meth:`MemoryWriter.update`).

        Raises:
            KeyError: this user has no memory ``memory_id``.
            ValueError: ``memory_id`` is not a string, or the text or metadata is refused.
        """
        self._store.writer.update(self.user_id, check_id(memory_id), text, metadata=metadata)

    def delete(self, memory_ids: str | Iterable[str]) -> int:
        """Delete memories of this user by id; return how many existed. Ids of other users are ignored."""
        return self._store.writer.delete(self.user_id, memory_ids)

    def delete_key(self, key: str) -> bool:
        """Delete the memory kept under ``key``; return whether there was one."""
        return self.delete(key_memory_id(self.user_id, check_key(key))) > 0

    def forget(self) -> int:
        """Delete every memory of this user ("forget me"), index and journal; return how many there were."""
        return self._store.writer.forget(self.user_id)

    # -- reading -------------------------------------------------------------------------------

    def get(self, memory_id: str) -> MemoryRecord | None:
        """The memory ``memory_id`` of this user, or ``None`` (``ValueError`` if it is not a string)."""
        found = self.get_many([check_id(memory_id)])
        return found[0] if found else None

    def get_by_key(self, key: str) -> MemoryRecord | None:
        """The memory kept under ``key`` (:meth:`put`), or ``None``."""
        return self.get(key_memory_id(self.user_id, check_key(key)))

    def get_many(self, ids: str | Iterable[str]) -> list[MemoryRecord]:
        """The memories of this user among ``ids`` (one id or several, as :meth:`delete` takes them),
        in the order of ``ids`` (missing ones left out); ``ValueError`` naming ``memory_ids`` for
        anything else (a plain string used to be read as its characters, and found nothing)."""
        wanted = check_ids(ids)
        visible = self._visibility()
        ids = [i for i in dict.fromkeys(wanted) if visible.allows(i)]
        if not ids:
            return []
        result = self._store.index.get(self.user_id, ids, include=["documents", "metadatas"])
        if result is None and self._check_not_lost():
            result = self._store.index.get(self.user_id, ids, include=["documents", "metadatas"])
        if result is None:
            return []
        found = {}
        for memory_id, text, meta in zip(result["ids"], result["documents"], result["metadatas"], strict=True):
            check_owner(self.user_id, memory_id, meta)
            found[memory_id] = MemoryRecord.from_index(memory_id, text, meta)
        return [found[i] for i in ids if i in found]

    def count(self) -> int:
        """How many memories of this user are in the index (those deleted meanwhile left out)."""
        visible = self._visibility()

        def visible_count(collection: Any) -> int:
            if visible.everything:
                return int(collection.count())
            asked = visible.only if visible.only is not None else visible.deleted
            present = len(collection.get(ids=list(asked), include=[])["ids"]) if asked else 0
            return present if visible.only is not None else int(collection.count()) - present

        counted = self._store.index.with_collection(self.user_id, MEMORIES, visible_count)
        if counted is None and self._check_not_lost():
            counted = self._store.index.with_collection(self.user_id, MEMORIES, visible_count)
        return 0 if counted is None else counted

    def _check_not_lost(self) -> bool:
        """Raise if the index lost this user's memories; ``True`` if they were indexed again (look again)."""
        return check_not_lost(self._store.journal, self.user_id, self._store.index)

    def list(
        self, *, where: Mapping[str, Any] | None = None, limit: int | None = None, offset: int = 0
    ) -> list[MemoryRecord]:
        """This user's memories in the order they were written, optionally filtered by metadata
        (``where``, Chroma's filter syntax), from ``offset``, at most ``limit``."""
        offset = check_count("offset", offset, 0)
        limit = None if limit is None else check_count("limit", limit, 0)
        with chroma_filter_errors(check_where(where)):
            records = [record for record, _ in self._read(include_embeddings=False, where=where)]
        return records[offset:] if limit is None else records[offset : offset + limit]

    def all(self, include_embeddings: bool = False) -> list[MemoryRecord] | list[tuple[MemoryRecord, np.ndarray]]:
        """Every memory of this user in the index, in the order they were written.

        With ``include_embeddings`` the items are ``(record, vector)`` pairs.
        """
        items = self._read(include_embeddings=include_embeddings)
        if include_embeddings:
            return [(record, np.asarray(vec, dtype=np.float32)) for record, vec in items]
        return [record for record, _ in items]

    def export(self) -> list[dict[str, Any]]:
        """This user's memories as plain dicts, in the order they were written: every field
        :meth:`MemoryStore.import_memories` needs to give them back (ids, text, roles, timestamps,
        sessions, metadata, keys; see :mod:`recall_core.memory.upkeep.transfer`). Read from the
        journal, so it works on a store opened read-only or whose index is down; on a server, the
        memories other clients wrote are read from the server after them."""
        if self._store.closed:
            raise MemoryStoreError("this MemoryStore is closed")
        return list(export_records(self._store, self.user_id))

    def export_jsonl(self, out: str | Path | IO[str]) -> int:
        """:meth:`export` written to ``out`` (a path, written whole or not at all, or a text
        stream), one JSON object a line; return how many memories."""
        if self._store.closed:
            raise MemoryStoreError("this MemoryStore is closed")
        return export_jsonl(self._store, self.user_id, out)

    def pending(self) -> int:
        """How many of this user's memories are journaled but not indexed yet."""
        return sum(1 for _ in self._store.journal.rows(self.user_id, states=(PENDING,)))

    def _read(self, include_embeddings: bool, where: Mapping[str, Any] | None = None) -> list[tuple[MemoryRecord, Any]]:
        """``(record, vector or None)`` of every memory (matching ``where``), in the order they were written."""
        include = ["documents", "metadatas"] + (["embeddings"] if include_embeddings else [])
        visible = self._visibility()
        items: list[tuple[MemoryRecord, Any, Any]] = []
        offset = 0
        while True:
            result = self._store.index.page(self.user_id, include, _PAGE, offset, where)
            if result is None and offset == 0 and self._check_not_lost():
                result = self._store.index.page(self.user_id, include, _PAGE, offset, where)
            if result is None or not result["ids"]:
                break
            vectors = result["embeddings"] if include_embeddings else [None] * len(result["ids"])
            for memory_id, text, meta, vec in zip(result["ids"], result["documents"], result["metadatas"], vectors, strict=True):
                check_owner(self.user_id, memory_id, meta)
                if not visible.allows(memory_id):
                    continue
                items.append((MemoryRecord.from_index(memory_id, text, meta), (meta or {}).get("written_at", 0.0), vec))
            if len(result["ids"]) < _PAGE:
                break
            offset += _PAGE
        # at one write time (a batch), the journal's order: until 2026-12-07 the sessions' names decided (a
        # reviewer: zeta, alpha, mid written in one call listed alpha first); another client's rows (a server) last
        order = self._store.journal.written_order(self.user_id)
        items.sort(key=lambda item: (item[1], order.get(item[0].id, math.inf), item[0].session_id, item[0].turn_index,
                                     item[0].chunk_index))  # fmt: skip
        return [(record, vec) for record, _, vec in items]

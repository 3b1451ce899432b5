"""Memories only the index holds, journaled again: what a local store's repair does after its
journal was lost (deleted, emptied, or restored from an older copy), instead of deleting them."""

from __future__ import annotations

from recall_core.memory.index import MEMORIES
from recall_core.memory.journal import JournalRow
from recall_core.memory.protocols import StoreParts
from recall_core.memory.text.neighbours import context_of
from recall_core.memory.writer import MemoryWriter


def adopt_index_only(store: StoreParts, writer: MemoryWriter, user_id: str, ids: list[str]) -> list[JournalRow]:
    """Index-only memories journaled again, with the time each was first written and what it is searched by."""
    got = store.index.with_collection(user_id, MEMORIES, lambda c: c.get(ids=list(ids), include=["metadatas"]))
    written = {i: float(m.get("written_at", 0) or 0) for i, m in zip(got["ids"], got["metadatas"], strict=True)} if got else {}
    rows = [writer.adopt(user_id, memory_id) for memory_id in sorted(written, key=written.__getitem__)]
    with store.journal.transaction() as db:
        for row in rows:
            if written[row.id]:
                db.execute("UPDATE memories SET created_at=?, updated_at=? WHERE id=?", (written[row.id], written[row.id], row.id))
    for row in rows:
        store.journal.set_context(row.id, context_of(store.journal, writer.search_text, row))
    return [r for r in store.journal.get_many([row.id for row in rows])]


"""A write that finds a user's collection gone although the journal holds memories of theirs as
indexed (:meth:`~recall_core.memory.index.ChromaIndex.write`'s ``on_missing``).

* On a local store nothing but this process writes the index, so the collection was deleted
  behind the store's back: the journal's memories of the user are indexed again at once, under
  the journal's write lock, so that a ``forget`` or ``delete`` of another thread waits for it
  instead of being undone by it.
* On a server the same sight has two causes: the server lost its data (restarted without its
  volume), or another client forgot the user. Indexing this journal's memories again would undo
  the second, so the server's mark tells them apart (:mod:`~recall_core.memory.upkeep.marks`):
  a server that lost its data has every memory of this journal indexed again; one that kept it
  gets a warning naming the other client's forget and what to run. A journal that has no mark
  of the server yet (new to it, or older than marks) cannot tell: it warns, naming both.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence

from recall_core.memory.errors import MemoryIndexWarning, MemoryUnavailableError
from recall_core.memory.index import MARK_KEPT, MARK_LOST
from recall_core.memory.journal import INDEXED, JournalRow
from recall_core.memory.protocols import StoreParts
from recall_core.memory.upkeep.marks import KEPT_DATA


def found_missing(
    store: StoreParts, user_id: str, fresh: set[str], reindex: Callable[[Sequence[JournalRow]], None],
    indexed: set[str] | None = None,
) -> None:
    """React to ``user_id``'s collection found missing by a write of the user's rows ``fresh`` (ids;
    see the module docstring); ``reindex`` embeds and indexes journal rows. ``indexed``: the ids the
    journal held as indexed when the collection was made; a row indexed since went into the new
    collection (another thread's write: until 2026-12-07 a new user's first writes at once warned
    that the collection was lost, a reviewer)."""
    journal = store.journal
    if store.kind != "local":
        held = _absent(store, user_id, fresh)
        if not held:
            return
        check = store.index.check_server
        outcome = check() if check is not None else None
        if outcome == MARK_LOST:  # every memory of the journal, this user's among them, was indexed again
            return
        cause = (
            KEPT_DATA if outcome == MARK_KEPT else
            "Either the server lost its data (restarted without its volume?): `recall doctor --repair` "
            "(repair(store)) indexes them again from this journal; or another client forgot the user: forget "
            "them through this client too"
        )  # fmt: skip
        warnings.warn(
            f"the Chroma server at {store.location} had no collection for user {user_id!r}, though this client's "
            f"journal holds {held} of their memories as indexed. {cause}. Until then searches find only what "
            "was written since", MemoryIndexWarning, stacklevel=4,
        )  # fmt: skip
        return
    with journal.transaction():  # a forget or delete of another thread waits for this one
        again = [row for row in journal.rows(user_id, (INDEXED,))
                 if row.id not in fresh and (indexed is None or row.id in indexed)]  # fmt: skip
        if not again:
            return
        warnings.warn(
            f"the memory index at {store.location} had no collection for user {user_id!r} (deleted behind the "
            f"store's back?): indexing their {len(again)} memories again from the journal",
            MemoryIndexWarning, stacklevel=4,
        )  # fmt: skip
        try:
            reindex(again)
        except MemoryUnavailableError as exc:  # the write itself is done: its turns are indexed
            warnings.warn(
                f"indexing the {len(again)} memories of user {user_id!r} again failed ({exc}): "
                "`recall doctor --repair` (repair(store)) indexes them", MemoryIndexWarning, stacklevel=4,
            )  # fmt: skip


def _absent(store: StoreParts, user_id: str, fresh: set[str]) -> int:
    """How many of the memories the journal holds as indexed for ``user_id`` (but ``fresh``) the
    server's collection lacks now. Another process sharing the journal can make the collection and
    index the user between this write's look and its write (both catching up the same user after an
    outage): until 2026-12-07 its rows were counted as lost, and the warning told the operator to
    forget, through this client too, a user who had lost nothing (a reviewer: 6 of 12 such races)."""
    indexed = store.journal.indexed_ids(user_id)
    ids = [memory_id for memory_id in indexed if memory_id not in fresh]
    if not ids:
        return 0
    batch, found = store.index.max_batch_size(), 0
    for start in range(0, len(ids), batch):
        got = store.index.get(user_id, ids[start : start + batch])
        found += len(got["ids"]) if got is not None else 0
    return len(ids) - found

"""Memories a ``delete`` or ``forget`` removed while they were being written to the index.

A write embeds and indexes its rows outside the journal's lock, so that writes do not queue
behind the encoder or a slow server; ``repair`` and ``rebuild_index`` do the same. A removal in
that gap empties the journal and the index, and the write then puts the rows back: the user
was told "forgot 2", and every read showed the turn again (a write's since 2026-12-06; a
repair's and a rebuild's until 2026-12-07). Marking the rows indexed
(:meth:`~recall_core.memory.journal.Journal.mark_indexed`) finds them; here they leave the index
again. If the index cannot be reached for it, they stay as tombstones (hidden from every read)
and ``repair`` finishes the delete.
"""

from __future__ import annotations

import logging
import sqlite3
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from recall_core.memory.backends import scrub_deleted
from recall_core.memory.errors import MemoryUnavailableError, free_note
from recall_core.memory.journal import DELETING, Journal, JournalRow
from recall_core.memory.protocols import StoreParts

logger = logging.getLogger(__name__)


#: Rounds of writing the current copy of rows that changed while they were written (each round
#: is one more change racing it: past this, they stay pending for the next write or `repair`).
_ROUNDS = 3


def mark_written(store: StoreParts, rows: Sequence[JournalRow]) -> None:
    """Mark ``rows``, just written to the live index, ``indexed``; take out of the index again
    those a delete or forget removed meanwhile; and where an ``update`` (or a new write under the
    same id, after a forget) changed a row meanwhile, put its current copy over the one just
    written, which may be older than what its own write had put there (a reviewer's race,
    2026-12-07: the forgotten value came back; an update was lost, and marked indexed)."""
    for round_ in range(1, _ROUNDS + 1):
        gone, changed = store.journal.mark_indexed(rows)
        _take_back(store, gone)
        if not changed or round_ == _ROUNDS:  # (a copy written is always checked by a mark after it)
            return
        try:
            rows = _current_copies(store, changed)
        except (MemoryUnavailableError, sqlite3.Error) as exc:  # the caller's own write is done: upkeep
            logger.warning("memories changed while they were written stay pending until the next write or "
                           "repair (%s)", exc)  # fmt: skip
            return


def _current_copies(store: StoreParts, changed: Sequence[JournalRow]) -> list[JournalRow]:
    """Write again the current copy of each changed row that holds this store's vector; return those
    written. One that holds none yet has the older copy deleted, then is read again: if its own
    write set its vector meanwhile, its copy may have landed before the delete, so it is written
    again too (its own write sets the vector before it writes the index: a row read without one
    after the delete gets its copy in after it). A reviewer's race, 2026-12-07."""
    encoder = store.encoder.name

    def ready_of(rows: list[JournalRow]) -> list[JournalRow]:
        return [r for r in rows if r.state != DELETING and r.embedding is not None and r.encoder == encoder]

    ready = ready_of(store.journal.get_many([r.id for r in changed]))
    waiting = [r for r in changed if r.id not in {w.id for w in ready}]
    for user_id in dict.fromkeys(r.user_id for r in waiting):
        store.index.delete(user_id, [r.id for r in waiting if r.user_id == user_id])
    if waiting:
        ready += ready_of(store.journal.get_many([r.id for r in waiting]))
    return store.index.write(ready, encoder) if ready else []


def _take_back(store: StoreParts, gone: Sequence[JournalRow]) -> None:
    for user_id in dict.fromkeys(r.user_id for r in gone):
        ids = [r.id for r in gone if r.user_id == user_id]
        try:
            store.index.delete(user_id, ids)
            if not store.index.count(user_id):  # a forget's: no collection naming them, no words on disk
                store.index.drop_user(user_id)
                scrub_forgotten(store)
        except MemoryUnavailableError as exc:  # hidden from reads as tombstones; `repair` finishes it
            logger.warning("memories of %r deleted during their write stay in the index until repair (%s)", user_id, exc)
        else:
            with tidying(store.journal, "the memories are deleted"):
                store.journal.purge(ids)


def scrub_forgotten(store: StoreParts) -> None:
    """A forget's last step: the purged rows' words out of the journal's word index now, and the
    deleted collections' folders and free pages out of a local index at the store's close
    (:func:`~recall_core.memory.backends.scrub_deleted`)."""
    with tidying(store.journal, "the user is forgotten"):
        store.journal.scrub_words()
    scrub_deleted(store.root)


@contextmanager
def tidying(journal: Journal, done: str) -> Iterator[None]:
    """A delete's or forget's last step, dropping the journal's tombstones once the index no longer
    holds their rows. If SQLite refuses it (a full disk), what was asked is ``done`` (hidden from
    every read, gone from the index): a warning, not an error, and ``repair`` drops them later."""
    try:
        yield
    except sqlite3.OperationalError as exc:
        warnings.warn(
            f"{done} (hidden from every read, gone from the index), but the journal {journal.path} could not drop "
            f"their tombstones ({exc}{free_note(journal.path)}): `recall doctor --repair` (repair(store)) drops them",
            RuntimeWarning, stacklevel=4,
        )  # fmt: skip

"""Indexing, at a search, what an outage left pending for the user who searches.

A write whose index write failed (a server down, a local index that refused it) is journaled,
acknowledged, and pending: searchable only once indexed. The user's next write indexes it (the
writer's catch-up) and so does ``repair``; until 2026-12-07 a user who only searched waited for
either. Now, after a search has answered (so the index answers too), up to
:data:`SEARCH_CATCH_UP` of the user's pending memories that hold this store's encoder's vector
are indexed, and the search looks again.

What the two earlier attempts lacked (taken back after reviews: inside the search under the
journal's lock, 2026-12-06; in a background thread, 2026-12-07), this one keeps:

* no lock is held across an index call (holding the journal's across an index write
  deadlocked with a server's heal, which takes the marks' lock first);
* no encoding on the search path: a row without its vector (the encoder failed at the write)
  waits for the next write or ``repair``; so a running write's turns are never encoded twice;
* one catch-up per user at a time, registered on the store (every writer of it shares it); a
  search of the user in another thread meanwhile waits for it, then looks again;
* one bounded read of the journal (:meth:`~recall_core.memory.journal.Journal.pending_rows`);
* a failure backs the user off (:data:`BACKOFF_S`, doubling to :data:`MAX_BACKOFF_S`), so a
  flaky index does not cost every search a second request, and is logged, never raised: the
  search has answered;
* a ``forget`` or ``delete`` that runs meanwhile is taken back when the rows are marked indexed
  (:mod:`~recall_core.memory.upkeep.taken_back`), as for any write.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time

from recall_core.memory.errors import MemoryStoreError, MemoryUnavailableError
from recall_core.memory.journal import PENDING
from recall_core.memory.protocols import StoreParts

logger = logging.getLogger(__name__)

#: Pending memories a search indexes at most (with their stored vectors: an index write, no encoding).
SEARCH_CATCH_UP = 256
#: Seconds a user's catch-up waits after a failure, doubling at each failure up to :data:`MAX_BACKOFF_S`.
BACKOFF_S = 30.0
MAX_BACKOFF_S = 900.0
#: Seconds a search waits at most for another thread's catch-up of the same user.
WAIT_S = 10.0


class SearchCatchUp:
    """A store's catch-up at search time (see the module docstring); thread-safe."""

    def __init__(self, store: StoreParts) -> None:
        self.store = store
        self._lock = threading.Lock()  # guards the fields below, never held across a call out
        self._idle = threading.Condition(self._lock)  # a user's catch-up ended
        self._running: set[str] = set()
        self._failed: dict[str, tuple[int, float]] = {}  # user -> (failures in a row, monotonic retry time)
        self._empty: dict[str, tuple[int, float]] = {}  # user -> (pending count none of which had a vector, until)

    def pending(self, user_id: str) -> int:
        """How many of ``user_id``'s memories are pending (a search counts them before it asks the index)."""
        return 0 if self.store.read_only else self.store.journal.count(user_id, PENDING)

    def after_search(self, user_id: str, before: int | None = None) -> int:
        """Index up to :data:`SEARCH_CATCH_UP` of ``user_id``'s pending memories that hold their vector;
        return how many were written (``0``: nothing to do, backed off, or failed: logged). While
        another thread of the store catches the user up, wait for it (at most :data:`WAIT_S`) and
        return how many of the user's memories stopped being pending meanwhile. ``before``: the
        pending count taken before the search asked the index; those another thread indexed since
        count too (until 2026-12-07 a search whose answer came before that thread's catch-up ended,
        and its count after, found none pending and did not look again: a reviewer, 10 of 40)."""
        store = self.store
        pending = self.pending(user_id)  # the common case: one count
        if before is None:
            before = pending
        if not pending:
            return max(0, before)
        with self._lock:
            if user_id in self._running:
                # Until 2026-12-07 this search answered from what was indexed before that thread's
                # write, nothing at all after a server's loss, while that thread's search answered
                # (a reviewer, two threads of a process that shares a healing journal).
                self._idle.wait_for(lambda: user_id not in self._running, timeout=WAIT_S)
                waited = True
            else:
                failures, retry_at = self._failed.get(user_id, (0, 0.0))
                unchanged, empty_until = self._empty.get(user_id, (-1, 0.0))
                now = time.monotonic()
                if now < retry_at or (pending == unchanged and now < empty_until):
                    return 0
                self._running.add(user_id)
                waited = False
        if waited:  # (the search has answered: a store closed meanwhile is no error of this step's)
            try:
                return 0 if store.closed else max(0, max(before, pending) - store.journal.count(user_id, PENDING))
            except (sqlite3.Error, MemoryStoreError):
                return 0
        try:
            rows = store.journal.pending_rows(user_id, SEARCH_CATCH_UP, encoder=store.encoder.name)
            if not rows:  # pending without a vector (the encoder failed): a write's catch-up encodes them;
                with self._lock:  # the read walked them all: not again while the same rows are pending
                    self._empty[user_id] = (pending, time.monotonic() + BACKOFF_S)
                return 0
            store.writer.index(rows)
        except Exception as exc:  # noqa: BLE001 - the search has answered: a catch-up never fails it
            delay = min(BACKOFF_S * 2**failures, MAX_BACKOFF_S)
            with self._lock:
                self._failed[user_id] = (failures + 1, time.monotonic() + delay)
            expected = isinstance(exc, (MemoryUnavailableError, sqlite3.Error))  # an outage, a busy journal
            logger.log(logging.INFO if expected else logging.WARNING,
                       "pending memories of %r stay pending (%s: %s); the next search tries again in %.0f s, "
                       "the user's next write or `recall doctor --repair` indexes them",
                       user_id, type(exc).__name__, exc, delay)  # fmt: skip
            return 0
        finally:
            with self._lock:
                self._running.discard(user_id)
                self._idle.notify_all()
        with self._lock:
            self._failed.pop(user_id, None)
        return len(rows)

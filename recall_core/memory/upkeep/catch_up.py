"""Pending memories indexed after an outage, without waiting for ``repair``.

A turn written while the index was unreachable is in the journal (acknowledged) and *pending*: no
search finds it until it is indexed. Besides ``repair``, two things index it:

* the user's next write that reaches the index (:func:`after_write`): up to :data:`CATCH_UP` of
  the user's pending memories, inside the write, under the journal's write lock (since 2026-12-06);
* the user's search (:class:`SearchCatchUp`, since 2026-12-07): after a search has answered (so the
  index is up), a worker thread indexes the user's pending memories, a batch at a time. The search
  itself never waits for it, never embeds, and never raises for it.

The search's catch-up was first built inside the search (2026-12-06) and taken back after a review:
it added a second timeout to every search while a server hung, re-embedded a running write's own
turns, stopped for good after one failure, and raced a ``forget``. Here: it runs after the search
and off its thread; it skips the turns this process's writes are indexing (``MemoryWriter.writing``);
a failure backs the user off (:data:`BACKOFF_S`, doubling) instead of ending it; the slow part
(encoding) runs outside the journal's lock, and the index write under it, on the rows as the
journal holds them then (a row deleted, forgotten or changed meanwhile is left alone; a removal
that lands after it is taken back by ``Journal.mark_indexed``).
"""

from __future__ import annotations

import atexit
import logging
import sqlite3
import threading
import time
import weakref
from collections.abc import Collection, Sequence
from typing import Protocol

from recall_core.memory.encoders import Encoder, encode_checked
from recall_core.memory.errors import MemoryUnavailableError
from recall_core.memory.journal import PENDING, JournalRow
from recall_core.memory.protocols import StoreParts

logger = logging.getLogger(__name__)

class PendingWriter(Protocol):
    """What a catch-up needs of :class:`recall_core.memory.writer.MemoryWriter` (which makes one)."""

    store: StoreParts
    batch_size: int

    @property
    def encoder(self) -> Encoder: ...

    def embed(self, rows: list[JournalRow]) -> list[JournalRow]: ...

    def index(self, rows: Sequence[JournalRow]) -> None: ...

    def writing(self) -> frozenset[str]: ...


#: Older pending memories of a user indexed with each of their writes, and by each search's catch-up.
CATCH_UP = 512
#: Rows indexed a journal transaction by the search's catch-up: the write lock is held only this long.
BATCH = 64
#: Seconds a user's search catch-up waits after a failure before it is tried again (doubled after
#: each further failure, up to :data:`MAX_BACKOFF_S`).
BACKOFF_S = 30.0
MAX_BACKOFF_S = 900.0
#: Seconds ``MemoryStore.close()`` waits for a catch-up in progress (one index write at most).
CLOSE_WAIT_S = 10.0


def index_pending(writer: PendingWriter, user_id: str, skip: Collection[str] = (), limit: int | None = None) -> int:
    """Index ``user_id``'s pending memories (but ``skip``, at most ``limit``) with their stored vectors,
    embedding only those without one (never re-encoding another encoder's); return how many.

    Under the journal's write lock, as a lost collection's re-indexing is (upkeep/lost.py): a
    ``forget`` or ``delete`` of another thread or process waits for it, instead of running between
    the read and the index's write and having the memory it removed written back."""
    journal = writer.store.journal
    with journal.transaction():
        rows = [row for row in journal.rows(user_id, (PENDING,)) if row.id not in skip][:limit]
        if not rows:
            return 0
        missing = [row for row in rows if row.embedding is None]
        embedded = {row.id: row for row in writer.embed(missing)} if missing else {}
        writer.index([embedded.get(row.id, row) for row in rows])
    return len(rows)


def after_write(writer: PendingWriter, users: Collection[str], skip: Collection[str]) -> None:
    """Index up to :data:`CATCH_UP` of each of these users' pending memories (an outage's, a cut
    heal's) but ``skip``, best effort, now that the index took a write: until 2026-12-06 they waited
    for `repair`, unsearchable. A failure is logged (the write itself is done) and stops it."""
    for user_id in sorted(users):
        try:
            done = index_pending(writer, user_id, skip, CATCH_UP)
        except (MemoryUnavailableError, sqlite3.Error) as exc:  # unreachable, or the journal busy
            logger.info("pending memories of %r stay pending (%s)", user_id, exc)
            return
        except Exception as exc:  # noqa: BLE001 - refused (an encoder's output or error, the index's answer)
            logger.warning("pending memories of %r stay pending (%s); `recall doctor --repair` names the cause",
                           user_id, exc)  # fmt: skip
            return
        if done:
            logger.info("indexed %d pending memories of %r", done, user_id)


#: Every catch-up that started a worker: closed at exit, so that none is cut inside an index write.
_STARTED: weakref.WeakSet[SearchCatchUp] = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    for catch_up in list(_STARTED):
        catch_up.close()


class SearchCatchUp:
    """A writer's background catch-up of pending memories, asked for by its users' searches."""

    def __init__(self, writer: PendingWriter) -> None:
        self.writer = writer
        self._lock = threading.Lock()
        self._queued: dict[str, None] = {}  # users waiting or being caught up, in order
        self._retry_at: dict[str, float] = {}  # user -> time.monotonic() before which it is not tried
        self._failures: dict[str, int] = {}
        self._thread: threading.Thread | None = None
        self._idle = threading.Condition(self._lock)
        self._closed = False

    def after_search(self, user_id: str) -> None:
        """Queue ``user_id`` if the journal holds pending memories of theirs (one indexed count), unless
        a failure backed them off; returns at once."""
        if self._closed or time.monotonic() < self._retry_at.get(user_id, 0.0):
            return
        if not self.writer.store.journal.count(user_id, PENDING):
            return
        with self._lock:
            if self._closed or user_id in self._queued:
                return
            self._queued[user_id] = None
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="recall-catch-up", daemon=True)
                _STARTED.add(self)
                self._thread.start()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until no catch-up is queued or running; ``False`` if ``timeout`` passed first."""
        with self._idle:
            return self._idle.wait_for(lambda: not self._queued, timeout)

    def close(self, timeout: float = CLOSE_WAIT_S) -> None:
        """No new catch-up; wait up to ``timeout`` for the one in progress (the store closes after)."""
        with self._lock:
            self._closed = True
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def _run(self) -> None:
        while True:
            with self._lock:
                if self._closed or not self._queued:
                    self._queued.clear()
                    self._thread = None
                    self._idle.notify_all()
                    return
                user_id = next(iter(self._queued))
            try:
                done = self._catch_up(user_id)
            except Exception as exc:  # noqa: BLE001 - logged; the user is tried again after the backoff
                self._failed(user_id, exc)
            else:
                self._failures.pop(user_id, None)
                self._retry_at.pop(user_id, None)
                if done:
                    logger.info("indexed %d pending memories of %r after their search", done, user_id)
            with self._lock:
                self._queued.pop(user_id, None)
                self._idle.notify_all()

    def _failed(self, user_id: str, exc: Exception) -> None:
        if self._closed:  # the store closed under it: nothing to say
            return
        failures = self._failures[user_id] = self._failures.get(user_id, 0) + 1
        wait = min(BACKOFF_S * 2 ** (failures - 1), MAX_BACKOFF_S)
        self._retry_at[user_id] = time.monotonic() + wait
        log = logger.info if isinstance(exc, (MemoryUnavailableError, sqlite3.Error)) else logger.warning
        log("pending memories of %r stay pending (%s: %s); their searches try again in %.0f s, or "
            "`recall doctor --repair`", user_id, type(exc).__name__, exc, wait)  # fmt: skip

    def _catch_up(self, user_id: str) -> int:
        """Index up to :data:`CATCH_UP` of the user's pending memories, :data:`BATCH` at a time; return how many."""
        writer, journal = self.writer, self.writer.store.journal
        done, tried = 0, set()
        while done < CATCH_UP and not self._closed:
            busy = writer.writing()
            rows = [r for r in journal.rows(user_id, (PENDING,)) if r.id not in busy and r.id not in tried][:BATCH]
            if not rows:
                return done
            tried.update(r.id for r in rows)
            encoder = writer.encoder
            need = [r for r in rows if r.embedding is None]  # a stored vector is indexed as it is (as repair does)
            # The slow part, outside the journal's lock: a write or forget of another thread goes on.
            vectors = dict(zip([r.id for r in need], encode_checked(encoder, [r.search_text for r in need],
                                                                   writer.batch_size) if need else [], strict=True))
            with journal.transaction():
                # The rows as the journal holds them now: one deleted, forgotten, changed or being
                # written meanwhile is left to its own writer (a vector is stored only for the text it was made from).
                now = {r.id: r for r in journal.get_many([r.id for r in rows])}
                busy = writer.writing()
                ready = [now[r.id] for r in rows if r.id in now and r.id not in busy and now[r.id].state == PENDING
                         and now[r.id].search_text == r.search_text]  # fmt: skip
                fresh = [r.id for r in ready if r.id in vectors]
                if fresh:
                    journal.set_vectors(fresh, [vectors[i] for i in fresh], encoder.name)
                ready = [r.with_(embedding=vectors[r.id], encoder=encoder.name) if r.id in vectors else r for r in ready]
                if ready:
                    writer.index(ready)
            done += len(ready)
        return done

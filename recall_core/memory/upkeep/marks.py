"""A Chroma server's mark: telling a server that lost its data from another client's forget.

A server restarted without its volume comes back empty. Seen from one client, a user's
collection that is gone has two causes: the server lost its data, or another client forgot
(or deleted) the user. Indexing this client's journal again is right for the first and undoes
the second, so the client must tell them apart.

Each server (each tenant and database) holds one small collection, :data:`MARK_COLLECTION`,
with one record: a random id, written by the first recall client that meets the server. A
forget or delete never touches it; a server that lost its data lost it too. Each journal
records the mark it last saw there (its ``index_marks`` table). So, when a client opens its
connection and whenever it finds a user's collection gone:

* the same mark: the server kept its data; a collection that is gone was deleted by another
  client, and this one only warns (:mod:`~recall_core.memory.upkeep.lost`);
* another mark, or none: the server lost its data since this journal last saw it. Every memory
  the journal holds as indexed is indexed again (outside the journal's lock: a forget or delete
  meanwhile is taken back, not undone), then the new mark is recorded. If that fails, the mark is not recorded and the next check tries again;
* nothing recorded (a journal new to this server, or older than marks): the mark is recorded.
  If the journal already held memories as indexed there, there is nothing to compare them with:
  for the life of this store object, a collection found gone gets the warning that names both
  causes.

The mark costs two requests when a client opens its connection, and one more when it finds a
collection gone. A forget made through another client, followed by a server that lost its
data, brings that user back from this client's journal: forget through every client.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import uuid
import warnings
from typing import Any

from recall_core.memory.errors import EncoderMismatchError, MemoryIndexWarning, MemoryStoreError
from recall_core.memory.index import MARK_FIRST, MARK_KEPT, MARK_LOST
from recall_core.memory.journal import INDEXED, PENDING
from recall_core.memory.protocols import StoreParts

logger = logging.getLogger(__name__)

#: The collection holding a server's mark. Not ``recall-...``: the index's maintenance reads
#: those as users' collections.
MARK_COLLECTION = "recall_server_mark"
_MARK_ID = "mark"
#: A user's collection gone from a server that kept its data, and what to do (a write's warning, a read's error).
KEPT_DATA = (
    "The server kept its data (its mark is unchanged), so another client deleted or forgot the user: forget them "
    "through this client too, or run `recall doctor --repair` (repair(store)) to index them again from this journal"
)
#: Memories to index again before a progress bar is shown.
_BAR_FROM = 500


def mark_key(store: StoreParts, client: Any) -> str:
    """Where a mark is recorded in the journal: the server and the client's tenant and database."""
    return f"{store.location}/{getattr(client, 'tenant', '')}/{getattr(client, 'database', '')}"


def server_mark(client: Any) -> str:
    """The server's mark, written first if it has none (a racing client's mark wins: ``add``
    keeps an id that is already there)."""
    collection = client.get_or_create_collection(name=MARK_COLLECTION, metadata={"recall_mark": 1}, embedding_function=None)
    found = collection.get(ids=[_MARK_ID], include=["documents"])
    if not found["ids"]:
        collection.add(ids=[_MARK_ID], embeddings=[[1.0]], documents=[uuid.uuid4().hex])
        found = collection.get(ids=[_MARK_ID], include=["documents"])
    return str(found["documents"][0])


def compare(store: StoreParts) -> tuple[str, str, str]:
    """``(outcome, key, mark)``: :data:`MARK_KEPT`, :data:`MARK_LOST`, or :data:`MARK_FIRST`: nothing
    to compare with, or a mark recorded while the journal already held memories as indexed there
    (they may have been lost before it: the mark does not vouch for them)."""
    index = store.index
    client = index.client()
    key = mark_key(store, client)
    mark = index.call(server_mark, client)
    journal = store.journal
    seen, vouched = journal.index_mark(key)
    if seen is None:
        try:  # nothing to heal: a busy journal (another process's write) records it next time
            journal.set_index_mark(key, mark, vouched=journal.count(state=INDEXED) == 0)
        except sqlite3.OperationalError as exc:
            logger.debug("the server's mark was not recorded in %s: %s", journal.path, exc)
        return MARK_FIRST, key, mark
    if seen != mark:
        return MARK_LOST, key, mark
    return (MARK_KEPT if vouched else MARK_FIRST), key, mark


class ServerMarks:
    """Checks one server store's mark (see the module docstring), and heals the index when the
    server lost its data. Checks are serialised."""

    def __init__(self, store: StoreParts) -> None:
        self.store = store
        self._lock = threading.RLock()
        self._healing = False
        self._heals = 0  # heals done: a check that waited for another thread's heal needs none

    def check(self) -> str:
        """Compare the server's mark with the journal's: :data:`MARK_KEPT`, :data:`MARK_FIRST` (it
        cannot tell), or :data:`MARK_LOST`, once the memories were indexed again (or left pending,
        with a warning, where the index refused them)."""
        heals = self._heals
        with self._lock:
            if self._healing or self._heals != heals:  # this thread's heal, or one that ended meanwhile
                return MARK_LOST
            outcome, key, mark = compare(self.store)
            if outcome != MARK_LOST:
                return outcome
            self._healing = True
            try:
                healed = heal(self.store, key, mark)
            finally:
                self._healing = False
            if not healed:
                return MARK_FIRST
            self._heals += 1
            return MARK_LOST


    def await_heal(self) -> bool:
        """Wait for a heal running in another thread; ``True`` if one was running (look again).

        A heal makes every indexed memory pending before it indexes them again, user by user: a
        search meanwhile finds a user not yet done with no collection and nothing indexed, and
        would answer "no memory" (CI caught it, 2026-12-07)."""
        if not self._healing:
            return False
        with self._lock:  # the healing thread holds it until its heal ends
            return True


def heal(store: StoreParts, key: str, mark: str) -> bool:
    """Index again what the journal held as indexed on a server that lost it; ``False`` if the
    journal could not even be written (busy or full: the next check tries again).

    In one journal transaction every indexed memory becomes pending and the new mark is recorded,
    so a crash midway leaves pending rows for ``repair``, not a second heal. Then each user's
    pending memories are indexed with their stored vectors (never re-encoded by this client's
    encoder), outside the journal's lock: other threads read and write meanwhile, and a forget or
    delete of what is being indexed is taken back when it is marked indexed (until 2026-12-07 the
    lock was held across each user's index writes, and every search of the process waited).
    A user the index refuses stays pending, with a warning; the others go on."""
    journal = store.journal
    try:
        with journal.transaction():
            # Another process sharing the journal may have seen the same loss first and recorded the
            # new mark (its heal done or under way): healing again would make its work pending and do
            # it twice. Read under the write lock, so two processes never both go on.
            if journal.index_mark(key)[0] == mark:
                return True
            counts = {user: n for user, n in journal.indexed_counts().items() if n}
            waiting = journal.count(state=PENDING)  # pending already (an outage's): indexed by the heal too
            journal.mark_all_pending()
            journal.set_index_mark(key, mark, vouched=True)
    except sqlite3.OperationalError as exc:
        warnings.warn(
            f"the Chroma server at {store.location} lost its data, but this client's journal {journal.path} could not "
            f"be written to index its memories again ({exc}): `recall doctor --repair` (repair(store)) does it",
            MemoryIndexWarning, stacklevel=5,
        )  # fmt: skip
        return False
    store.index.forget_all_cached()  # every handle points at a collection the server lost
    total = sum(counts.values())
    if not total:
        return True
    warnings.warn(
        f"the Chroma server at {store.location} lost its data since this client's journal last wrote to it (its "
        f"mark changed): indexing the journal's {total} memories of {len(counts)} user{'s' * (len(counts) != 1)} again"
        + (f", and {waiting} pending ones" if waiting else ""),  # (until 2026-12-07 not counted: a reviewer)
        MemoryIndexWarning, stacklevel=5,
    )  # fmt: skip
    failed: dict[str, str] = {}
    from tqdm.auto import tqdm

    with tqdm(total=total + waiting, desc="re-index", unit="memory", disable=total < _BAR_FROM) as bar:
        for user_id in journal.users():
            try:  # outside the journal's lock: a forget or delete meanwhile is taken back (taken_back.py)
                bar.update(store.writer.index_pending_of(user_id))
            except (MemoryStoreError, sqlite3.OperationalError) as exc:
                failed[user_id] = f"{type(exc).__name__}: {exc}"
                if not isinstance(exc, EncoderMismatchError):
                    break  # the index or the journal is gone: the rest waits for repair
    if failed:
        left = journal.count(state=PENDING)
        first = next(iter(failed.items()))
        warnings.warn(
            f"indexing the memories again stopped short: {left} memories wait in the journal as pending (user "
            f"{first[0]!r}: {first[1]}). `recall doctor --repair` (repair(store)) indexes them, and each user's "
            "next write indexes theirs",
            MemoryIndexWarning, stacklevel=5,
        )  # fmt: skip
    return True


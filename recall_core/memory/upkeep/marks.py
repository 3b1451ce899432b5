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
  the journal holds as indexed is indexed again (each user's under the journal's write lock,
  so a forget or delete of this journal waits instead of being undone), then the new mark is
  recorded. If that fails, the mark is not recorded and the next check tries again;
* nothing recorded (a journal new to this server, or older than marks): the mark is recorded.
  If the journal already held memories as indexed there, there is nothing to compare them with:
  for the life of this store object, a collection found gone gets the warning that names both
  causes.

The mark costs two requests when a client opens its connection, and one more when it finds a
collection gone. A forget made through another client, followed by a server that lost its
data, brings that user back from this client's journal: forget through every client.
"""

from __future__ import annotations

import threading
import uuid
import warnings
from typing import Any

from recall_core.memory.errors import MemoryIndexWarning, MemoryUnavailableError
from recall_core.memory.index import MARK_FIRST, MARK_KEPT, MARK_LOST
from recall_core.memory.journal import INDEXED
from recall_core.memory.protocols import StoreParts

#: The collection holding a server's mark. Not ``recall-...``: the index's maintenance reads
#: those as users' collections.
MARK_COLLECTION = "recall_server_mark"
_MARK_ID = "mark"
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
    """``(outcome, key, mark)``: :data:`MARK_KEPT`, :data:`MARK_LOST` or :data:`MARK_FIRST` (recorded now)."""
    index = store.index
    client = index.client()
    key = mark_key(store, client)
    mark = index.call(server_mark, client)
    seen = store.journal.index_mark(key)
    if seen is None:
        store.journal.set_index_mark(key, mark)
        return MARK_FIRST, key, mark
    return (MARK_KEPT if seen == mark else MARK_LOST), key, mark


class ServerMarks:
    """Checks one server store's mark (see the module docstring), and heals the index when the
    server lost its data. Checks are serialised."""

    def __init__(self, store: StoreParts) -> None:
        self.store = store
        self._lock = threading.RLock()
        self._healing = False
        # The journal had no mark of the server, but memories indexed there, when this store met
        # it: an unchanged mark vouches only for the time since, so it is reported as MARK_FIRST.
        self._first = False

    def check(self) -> str:
        """Compare the server's mark with the journal's: :data:`MARK_KEPT`, :data:`MARK_FIRST` (nothing
        to compare: recorded now), or :data:`MARK_LOST`, once everything was indexed again."""
        with self._lock:
            if self._healing:  # a check made by the healing itself (this thread): it is under way
                return MARK_LOST
            outcome, key, mark = compare(self.store)
            if outcome == MARK_LOST:
                self._healing = True
                try:
                    heal(self.store, key, mark)
                finally:
                    self._healing = False
            elif outcome == MARK_FIRST:
                # Memories indexed before the mark was recorded may have been lost before it.
                self._first = self.store.journal.count(state=INDEXED) > 0
            return MARK_FIRST if self._first else outcome


def heal(store: StoreParts, key: str, mark: str) -> int:
    """Index again every memory the journal holds as indexed, then record ``mark``; return how
    many. A failure warns with the repair and leaves the old mark, so the next check tries again."""
    journal = store.journal
    counts = {user: n for user, n in journal.indexed_counts().items() if n}
    total = sum(counts.values())
    warnings.warn(
        f"the Chroma server at {store.location} lost its data since this client's journal last wrote to it (its "
        f"mark changed): indexing the journal's {total} memories of {len(counts)} user{'s' * (len(counts) != 1)} again",
        MemoryIndexWarning, stacklevel=5,
    )  # fmt: skip
    writer = store.writer
    store.index.forget_all_cached()  # every handle points at a collection the server lost
    from tqdm.auto import tqdm

    done = 0
    try:
        with tqdm(total=total, desc="re-index", unit="memory", disable=total < _BAR_FROM) as bar:
            for user_id in counts:
                with journal.transaction():  # this journal's forget or delete of the user waits
                    rows = list(journal.rows(user_id, (INDEXED,)))
                    if rows:
                        store.index.write(writer.embed(rows), writer.encoder.name)
                done += len(rows)
                bar.update(len(rows))
    except MemoryUnavailableError as exc:
        warnings.warn(
            f"indexing the memories again stopped after {done} of {total} ({exc}): `recall doctor --repair` "
            "(repair(store)) indexes them", MemoryIndexWarning, stacklevel=5,
        )  # fmt: skip
        return done
    journal.set_index_mark(key, mark)
    return done

"""The journal: an SQLite log of every accepted memory, the source of truth.

Chroma's index can be lost or left corrupt (its HNSW files can be half-written by a kill
mid-flush), so every memory is written here first and indexed second. Each row has a
``state``:

* ``pending``: written here, not (yet) in the index (the server was down, the process died);
* ``indexed``: in the index with this text and vector;
* ``deleting``: deleted by the user, not yet removed from the index (a tombstone, so that a
  failed delete or ``forget`` is finished by ``repair`` instead of being resurrected).

Tombstones also hide their memories from every read at once (:class:`Visibility`), and a
``forget`` leaves a mark on its user until the index has dropped them, so "forget me" holds
from the moment ``forget`` is called, whether or not the index could be reached.

Rows keep their vectors, so the index can be rebuilt exactly, without re-encoding, as long
as the encoder has not changed.

The file uses WAL mode: readers do not block the writer, and a crash loses at most the
transaction in flight.
"""

from recall_core.memory.journal.database import Journal
from recall_core.memory.journal.rows import EVERYTHING, JournalRow, Visibility, same_metadata
from recall_core.memory.journal.schema import DELETING, INDEXED, PENDING

__all__ = ["DELETING", "EVERYTHING", "INDEXED", "PENDING", "Journal", "JournalRow", "Visibility", "same_metadata"]

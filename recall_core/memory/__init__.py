"""Long-term memory for recall: a Chroma-backed store, a writer, a journal and their upkeep.

Typical use::

    from recall_core.memory import MemoryStore, MemoryWriter

    store = MemoryStore.local()                  # embedded, under $RECALL_HOME/memory
    writer = MemoryWriter(store)
    writer.add_turn("alice", "user", "My sister Ana lives in Porto.")
    memory = store.for_user("alice")             # the recall loop's Memory
    memory.search(RecallQuery("where does my sister live?"), k=4)
"""

# What a user of the memory needs: the store, its writer and a user's memory, the records they
# return, the errors a caller catches, the upkeep commands and their reports, and the encoders to
# pick from. The rest (index, journal, search, composition) is imported from its own module.
from recall_core.memory.encoders import (
    Encoder,
    EncoderLoadError,
    HashEncoder,
    SentenceTransformerEncoder,
    default_encoder,
)
from recall_core.memory.errors import (
    EncoderMismatchError,
    EncoderOutputError,
    JournalDamagedError,
    JournalWriteError,
    MemoryIndexWarning,
    MemoryIsolationError,
    MemoryLockedError,
    MemoryReadOnlyError,
    MemoryStoreError,
    MemoryUnavailableError,
)
from recall_core.memory.records import MemoryRecord, Turn
from recall_core.memory.store import MemoryStore
from recall_core.memory.text.ingest import IngestReport
from recall_core.memory.upkeep.maintenance import (
    DoctorReport,
    RepairReport,
    UserReport,
    doctor,
    rebuild_index,
    repair,
)
from recall_core.memory.user import UserMemory
from recall_core.memory.writer import MemoryWriter

__all__ = [
    "DoctorReport",
    "Encoder",
    "EncoderLoadError",
    "EncoderMismatchError",
    "EncoderOutputError",
    "HashEncoder",
    "IngestReport",
    "JournalDamagedError",
    "JournalWriteError",
    "MemoryIndexWarning",
    "MemoryIsolationError",
    "MemoryLockedError",
    "MemoryReadOnlyError",
    "MemoryRecord",
    "MemoryStore",
    "MemoryStoreError",
    "MemoryUnavailableError",
    "MemoryWriter",
    "RepairReport",
    "SentenceTransformerEncoder",
    "Turn",
    "UserMemory",
    "UserReport",
    "default_encoder",
    "doctor",
    "rebuild_index",
    "repair",
]

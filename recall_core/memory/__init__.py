"""Long-term memory for recall: a Chroma-backed store, a writer, a journal and their upkeep.

Typical use::

    from recall_core.memory import MemoryStore, MemoryWriter

    store = MemoryStore.local()                  # embedded, under $RECALL_HOME/memory
    writer = MemoryWriter(store)
    writer.add_turn("alice", "user", "My sister Ana lives in Porto.")
    memory = store.for_user("alice")             # the recall loop's Memory
    memory.search(RecallQuery("where does my sister live?"), k=4)
"""

from recall_core.memory.chunking import chunk_text
from recall_core.memory.composition import SearchText
from recall_core.memory.encoders import (
    DEFAULT_ENCODER_NAME,
    Encoder,
    EncoderLoadError,
    HashEncoder,
    SentenceTransformerEncoder,
    default_encoder,
    load_encoder,
)
from recall_core.memory.errors import (
    EncoderMismatchError,
    MemoryIndexWarning,
    MemoryIsolationError,
    MemoryLockedError,
    MemoryStoreError,
    MemoryUnavailableError,
)
from recall_core.memory.index import ChromaIndex, collection_name
from recall_core.memory.journal import Journal, JournalRow
from recall_core.memory.records import MemoryRecord, Turn
from recall_core.memory.search import RETRIEVALS
from recall_core.memory.store import MemoryStore
from recall_core.memory.upkeep.maintenance import (
    DoctorReport,
    RepairReport,
    UserReport,
    doctor,
    rebuild_index,
    repair,
)
from recall_core.memory.user import UserMemory
from recall_core.memory.validation import ROLES
from recall_core.memory.writer import IngestReport, MemoryWriter

__all__ = [
    "DEFAULT_ENCODER_NAME",
    "RETRIEVALS",
    "ROLES",
    "ChromaIndex",
    "DoctorReport",
    "Encoder",
    "EncoderLoadError",
    "EncoderMismatchError",
    "HashEncoder",
    "IngestReport",
    "Journal",
    "JournalRow",
    "MemoryIndexWarning",
    "MemoryIsolationError",
    "MemoryLockedError",
    "MemoryRecord",
    "MemoryStore",
    "MemoryStoreError",
    "MemoryUnavailableError",
    "MemoryWriter",
    "RepairReport",
    "SearchText",
    "SentenceTransformerEncoder",
    "Turn",
    "UserMemory",
    "UserReport",
    "chunk_text",
    "collection_name",
    "default_encoder",
    "doctor",
    "load_encoder",
    "rebuild_index",
    "repair",
]

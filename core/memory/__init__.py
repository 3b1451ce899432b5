"""Long-term memory for recall: a Chroma-backed store, a writer, a journal and their upkeep.

Typical use::

    from recall_core.memory import MemoryStore, MemoryWriter

    store = MemoryStore.local()                  # embedded, under $RECALL_HOME/memory
    writer = MemoryWriter(store)
    writer.add_turn("alice", "user", "My sister Ana lives in Porto.")
    memory = store.for_user("alice")             # the recall loop's Memory
    memory.search(RecallQuery("where does my sister live?"), k=4)
"""

from .chunking import chunk_text
from .composition import SearchText
from .encoders import (
    DEFAULT_ENCODER_NAME,
    Encoder,
    EncoderLoadError,
    HashEncoder,
    SentenceTransformerEncoder,
    default_encoder,
    load_encoder,
)
from .errors import (
    EncoderMismatchError,
    MemoryIndexWarning,
    MemoryIsolationError,
    MemoryLockedError,
    MemoryStoreError,
    MemoryUnavailableError,
)
from .index import ChromaIndex, collection_name
from .journal import Journal, JournalRow
from .maintenance import DoctorReport, RepairReport, UserReport, doctor, rebuild_index, repair
from .records import MemoryRecord, Turn
from .search import RETRIEVALS
from .store import MemoryStore
from .user import UserMemory
from .validation import ROLES
from .writer import IngestReport, MemoryWriter

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

"""The memory's own errors."""

from __future__ import annotations

from pathlib import Path


class MemoryStoreError(RuntimeError):
    """Base class of the memory's own errors."""


class MemoryUnavailableError(MemoryStoreError):
    """The index cannot be reached (server down, proxy refusing, local index failing).

    On a write the turn is already in the journal, marked unindexed: ``repair`` (``recall
    doctor --repair``) indexes it once the index is back.
    """


class JournalDamagedError(MemoryStoreError):
    """The journal file cannot be read as SQLite (garbled, truncated). The message names the file
    and the way out: the index still holds what was indexed, and a new journal adopts it."""


class MemoryLockedError(MemoryStoreError):
    """Another process (or another store object) has this local memory open."""


class MemoryReadOnlyError(MemoryStoreError):
    """A write to a store opened read-only (``MemoryStore.local(path, read_only=True)``), or a
    store that cannot be opened for writing because its folder is read-only."""


class EncoderMismatchError(MemoryStoreError, ValueError):
    """The encoder's dimension differs from the one the collection was written with."""


class MemoryIsolationError(MemoryStoreError):
    """A result carried another user's id: refused rather than returned."""


class MemoryIndexWarning(UserWarning):
    """Opening a store found its index damaged, or missing memories the journal holds; the
    message says what to run (``recall rebuild-index --fresh``, ``recall doctor --repair``)."""

def journal_damaged_hint(path: Path, problem: str) -> str:
    """What to say of a journal SQLite cannot read, and how to get the memories back."""
    return (
        f"the journal {path} is damaged ({problem}). The index still holds every memory that was indexed: "
        "move the file aside (keep it: turns not indexed yet are only there, and `sqlite3 FILE .recover` may "
        "save them), reopen the store and run `recall doctor --repair`, which writes the index's memories "
        "into a new journal"
    )

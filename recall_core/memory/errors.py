"""The memory's own errors."""

from __future__ import annotations

import re
import shutil
import socket
from pathlib import Path

#: Below this much free space, an index failure names the disk as its likely cause.
LOW_DISK_BYTES = 64 * 2**20


class MemoryStoreError(RuntimeError):
    """Base class of the memory's own errors."""


class MemoryUnavailableError(MemoryStoreError):
    """The index cannot be reached (server down, proxy refusing, local index failing).

    On a write the turn is already in the journal, marked unindexed: ``repair`` (``recall
    doctor --repair``) indexes it once the index is back.
    """


class JournalWriteError(MemoryStoreError):
    """SQLite could not write the journal (a full disk, an I/O error, a lock held past the
    timeout): nothing of the call was written, and nothing written before is lost. The message
    names the file, SQLite's error and the free space on its disk."""


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


class EncoderOutputError(MemoryStoreError):
    """The encoder returned something the index cannot hold: not one vector of its ``dimension`` per
    text, or numbers that are not finite (NaN, inf). Nothing of it is stored: a turn being written
    stays pending in the journal, and a search is not run. The message names the encoder and the text."""


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


def free_space(path: str | Path) -> int | None:
    """Bytes free on the disk holding ``path`` (its nearest existing folder), ``None`` if unknown."""
    folder = Path(path)
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    try:
        return shutil.disk_usage(folder).free
    except OSError:
        return None


def index_failure_hint(kind: str, location: str, otherwise: str) -> str:
    """What to do about an index failure: the server, the disk (Chroma does not say it is full), else ``otherwise``."""
    if kind == "server":
        return "is the server running?"
    free = free_space(location)
    if free is not None and free < LOW_DISK_BYTES:
        return f"its disk has {size_text(free)} free: free space, then `recall doctor --repair` indexes what is pending"
    return otherwise


def size_text(count: int) -> str:
    """``count`` bytes for a person: "4 KB", "3.2 MB", "12 GB"."""
    for unit, scale in (("GB", 2**30), ("MB", 2**20), ("KB", 2**10)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}".replace(".0 ", " ")
    return f"{count} bytes"


def free_note(path: str | Path) -> str:
    """"; 4 KB free on its disk" for the disk holding ``path`` ("" if unknown)."""
    free = free_space(path)
    return "" if free is None else f"; {size_text(free)} free on its disk"


def journal_write_hint(path: Path, error: BaseException, undone: str) -> str:
    """What to say when SQLite refused a write to the journal ``path``; ``undone``: what the call did not do."""
    return (
        f"the journal {path} could not be written ({error}{free_note(path)}): {undone}, and nothing written "
        "before is lost. Free space (or wait for the process holding the file), then try again"
    )


# -- what a Chroma error means ------------------------------------------------------------------


def is_not_found(exc: BaseException) -> bool:
    """Whether ``exc`` says a collection is not there (not a tenant or database: :func:`namespace_lost`)."""
    from chromadb.errors import NotFoundError

    if namespace_lost(exc):
        return False
    if isinstance(exc, NotFoundError):
        return True
    text = str(exc).lower()
    return "does not exist" in text or "not found" in text


_NAMESPACE_LOST = re.compile(r"\b(tenant|database) \[[^\]]*\] (does not exist|not found)", re.IGNORECASE)


def namespace_lost(exc: BaseException) -> bool:
    """Whether ``exc`` says the server holds no such tenant or database ("Database [mem] does not exist")."""
    return bool(_NAMESPACE_LOST.search(str(exc)))


def is_unavailable(exc: BaseException, kind: str) -> bool:
    """Whether ``exc`` means the index cannot be reached (rather than a bad request)."""
    import httpx
    from chromadb.errors import AuthorizationError, ChromaAuthError, InternalError, RateLimitError

    if isinstance(exc, (httpx.TransportError, httpx.HTTPStatusError, ConnectionError, TimeoutError, socket.error)):
        return True
    if isinstance(exc, (AuthorizationError, ChromaAuthError, RateLimitError, InternalError)):
        return True
    # The HTTP client raises a bare Exception(response text) for a non-Chroma error status
    # (a proxy's 502, a 500 page).
    return kind == "server" and type(exc) is Exception

"""Opening a store's two halves: the Chroma client (embedded or server) and the journal.

A local store holds a file lock for as long as it is open: Chroma's persistent folder gives a
second process stale results or hangs, so only one process (and one store object) may open
it. A server store opens its client on first use, with its own heartbeat probe and timeout,
so turns can be journaled while the server is down.
"""

from __future__ import annotations

import logging
import os
import socket
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recall_core.memory.errors import MemoryLockedError, MemoryUnavailableError
from recall_core.memory.journal import Journal
from recall_core.paths import default_memory_dir

logger = logging.getLogger(__name__)

CHROMA_DIR = "chroma"
JOURNAL_FILE = "journal.sqlite3"
LOCK_FILE = "recall.lock"
OWNER_FILE = "recall.lock.owner"


@dataclass(frozen=True)
class Backend:
    """How to open a Chroma client, and how to describe where it is (for messages)."""

    kind: str
    location: str
    open_client: Callable[[], Any]


@dataclass
class LocalLock:
    """The lock a local store holds on its folder while it is open."""

    root: Path
    lock: Any

    def release(self) -> None:
        try:
            (self.root / OWNER_FILE).unlink()
        except OSError:
            pass
        self.lock.release()


def open_local(path: str | Path | None) -> tuple[Backend, Journal, LocalLock]:
    """Lock the folder ``path`` (default ``$RECALL_HOME/memory``), open its journal, describe its index.

    Raises:
        MemoryLockedError: another process or store object has it open.
    """
    from filelock import FileLock, Timeout

    root = Path(path).expanduser() if path is not None else default_memory_dir()
    root.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(root / LOCK_FILE))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        owner = _read_owner(root)
        raise MemoryLockedError(
            f"the memory at {root} is already open{owner}. Only one process (and one store object) "
            f"may open a local memory. To share it between processes, run a Chroma server on it: "
            f"`chroma run --path {root / CHROMA_DIR} --host 127.0.0.1 --port 8000`, then open it with "
            f"MemoryStore.server(port=8000, journal_path='{root / JOURNAL_FILE}')."
        ) from None
    try:
        _write_owner(root)
        journal = Journal(root / JOURNAL_FILE)
    except BaseException:
        lock.release()
        raise

    return local_backend(root / CHROMA_DIR, str(root)), journal, LocalLock(root, lock)


def local_backend(chroma_dir: Path, location: str) -> Backend:
    """An embedded Chroma index in ``chroma_dir`` (a rebuild fills a second one beside the first)."""

    def open_client() -> Any:
        import chromadb
        from chromadb.config import Settings

        try:
            return chromadb.PersistentClient(path=str(chroma_dir), settings=Settings(anonymized_telemetry=False))
        except Exception:
            forget_chroma_system(chroma_dir)
            raise

    return Backend("local", location, open_client)


def open_server(
    host: str,
    port: int,
    headers: Mapping[str, str] | None,
    journal_path: str | Path | None,
    ssl: bool,
    timeout: float,
    tenant: str | None,
    database: str | None,
) -> tuple[Backend, Journal]:
    """The journal of this client and a backend that connects to the server on first use
    (see :meth:`~recall_core.memory.MemoryStore.server` for the arguments)."""
    headers = dict(headers or {})
    if journal_path is None:
        safe_host = "".join(c if c.isalnum() or c in "-." else "_" for c in host)
        journal_path = default_memory_dir() / "server-journals" / f"{safe_host}_{int(port)}.sqlite3"
    journal = Journal(Path(journal_path).expanduser())
    scheme = "https" if ssl else "http"
    location = f"{scheme}://{host}:{int(port)}"

    def open_client() -> Any:
        import chromadb
        import httpx
        from chromadb.config import DEFAULT_DATABASE, DEFAULT_TENANT, Settings

        # Our own probe, with a timeout: Chroma's client waits forever on a silent host.
        try:
            response = httpx.get(f"{location}/api/v2/heartbeat", headers=headers, timeout=timeout)
        except httpx.HTTPError as exc:
            raise MemoryUnavailableError(f"the Chroma server at {location} is unreachable: {exc}") from exc
        if response.status_code in (401, 403):
            raise MemoryUnavailableError(
                f"the server at {location} refused the request ({response.status_code}): check the token in headers"
            )
        if response.status_code >= 400:
            raise MemoryUnavailableError(
                f"the server at {location} answered {response.status_code} to a heartbeat: {response.text[:200]}"
            )
        try:
            client = chromadb.HttpClient(
                host=host, port=int(port), ssl=ssl, headers=headers,
                settings=Settings(anonymized_telemetry=False),
                tenant=tenant or DEFAULT_TENANT, database=database or DEFAULT_DATABASE,
            )  # fmt: skip
        except ValueError as exc:  # Chroma's "Could not connect to a Chroma server"
            raise MemoryUnavailableError(f"the Chroma server at {location} is unreachable: {exc}") from exc
        session = getattr(getattr(client, "_server", None), "_session", None)
        if session is not None:
            session.timeout = httpx.Timeout(timeout)
        return client

    return Backend("server", location, open_client), journal


def forget_chroma_system(chroma_dir: str | Path) -> None:
    """Drop Chroma's per-process cache entry of a folder it failed to open (or that was deleted).

    chromadb 1.5 keeps the half-started system of a failed PersistentClient, so the next
    attempt in the same process (after ``rebuild_index(fresh=True)`` cleared the folder)
    would fail with an AttributeError instead of opening the new, empty folder. This reaches
    into Chroma's private cache: the one place recall does.
    """
    try:
        from chromadb.api.shared_system_client import SharedSystemClient

        target = os.path.abspath(chroma_dir)
        for key in [k for k in SharedSystemClient._identifier_to_system if os.path.abspath(k) == target]:
            SharedSystemClient._identifier_to_system.pop(key, None)
            SharedSystemClient._identifier_to_refcount.pop(key, None)
    except Exception as exc:  # private API: if it moved, the next open will say what is wrong
        logger.debug("could not reset Chroma's system cache: %s", exc)


def _write_owner(root: Path) -> None:
    try:
        (root / OWNER_FILE).write_text(f"pid {os.getpid()} on {socket.gethostname()} ({' '.join(sys.argv[:2])})\n")
    except OSError:
        pass


def _read_owner(root: Path) -> str:
    try:
        owner = (root / OWNER_FILE).read_text().strip()
    except OSError:
        return ""
    return f" by {owner}" if owner else ""

"""Opening a store's two halves: the Chroma client (embedded or server) and the journal.

A local store holds a file lock for as long as it is open: Chroma's persistent folder gives a
second process stale results or hangs, so only one process (and one store object) may open
it. A server store opens its client on first use, with its own heartbeat probe and timeout,
so turns can be journaled while the server is down.
"""

from __future__ import annotations

import errno
import logging
import os
import re
import shutil
import socket
import sqlite3
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recall_core.memory.errors import MemoryLockedError, MemoryReadOnlyError, MemoryUnavailableError
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
    """Lock the folder ``path`` (default :func:`~recall_core.paths.default_memory_dir`), open its journal, describe its index.

    Raises:
        ValueError: ``path`` is a file, or under one.
        MemoryLockedError: another process or store object has it open.
        MemoryReadOnlyError: the folder cannot be written (read-only storage or permissions).
    """
    from filelock import FileLock, Timeout

    root = store_folder(path)
    try:
        root.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(root / LOCK_FILE))
        lock.acquire(timeout=0)
    except Timeout:
        owner = _read_owner(root)
        raise MemoryLockedError(
            f"the memory at {root} is already open{owner}. Only one process (and one store object) "
            f"may open a local memory. To share it between processes, run a Chroma server on it: "
            f"`chroma run --path {root / CHROMA_DIR} --host 127.0.0.1 --port 8000`, then open it with "
            f"MemoryStore.server(port=8000, journal_path='{root / JOURNAL_FILE}')."
        ) from None
    except OSError as exc:
        if exc.errno not in (errno.EACCES, errno.EPERM, errno.EROFS):
            raise
        raise MemoryReadOnlyError(
            f"the memory at {root} cannot be opened for writing ({exc.strerror or exc}): the folder is "
            "read-only to this process. To search it, open it read-only: "
            "MemoryStore.local(path, read_only=True) (CLI: --read-only)"
        ) from None
    try:
        _write_owner(root)
        journal = Journal(root / JOURNAL_FILE)
    except BaseException:
        lock.release()
        raise

    return local_backend(root / CHROMA_DIR, str(root)), journal, LocalLock(root, lock)


def store_folder(path: str | Path | None) -> Path:
    """The folder of a local store (default: :func:`~recall_core.paths.default_memory_dir`).

    Raises:
        ValueError: ``path``, or a folder above it, is a file (a store is a folder).
    """
    root = Path(path).expanduser() if path is not None else default_memory_dir()
    for folder in (root, *root.parents):
        if folder.exists() and not folder.is_dir():
            which = "" if folder == root else f" ({folder} is a file)"
            raise ValueError(
                f"store path {str(root)!r} must be a folder (created if missing), not a file{which}: "
                "give MemoryStore.local() the folder a store lives in"
            )
        if folder.exists():
            break
    return root


def open_local_snapshot(path: str | Path | None) -> tuple[Backend, Journal, Path]:
    """Open a local store read-only: a snapshot of its journal and index in a temporary folder.

    Nothing is written where the store is (no lock, no owner file, no trust mark): it may be on
    read-only storage, or open in another process. The journal is copied with SQLite's backup
    API from a read-only connection (a consistent copy even while another process writes),
    the index folder file by file (Chroma opens its folder for writing, even to read). The copy
    is what searches see: writes made to the store afterwards are not. The caller deletes the
    returned folder when done.

    Raises:
        ValueError: ``path`` is a file, or holds no store.
    """
    root = store_folder(path)
    if not (root / JOURNAL_FILE).is_file():
        raise ValueError(f"store path {str(root)!r} holds no memory store (no {JOURNAL_FILE}): nothing to open read-only")
    snapshot = Path(tempfile.mkdtemp(prefix="recall-readonly-"))
    try:
        _copy_journal(root / JOURNAL_FILE, snapshot / JOURNAL_FILE)
        if (root / CHROMA_DIR).is_dir():
            shutil.copytree(root / CHROMA_DIR, snapshot / CHROMA_DIR)
        journal = Journal(snapshot / JOURNAL_FILE)
    except BaseException:
        shutil.rmtree(snapshot, ignore_errors=True)
        raise
    return local_backend(snapshot / CHROMA_DIR, str(root)), journal, snapshot


def _copy_journal(source: Path, target: Path) -> None:
    """Copy an SQLite journal without writing beside it.

    A journal closed cleanly has no ``-wal`` file: it is read as immutable (no ``-shm`` file is
    made). With a ``-wal`` (open in another process, or not closed) it is read through it, and
    as immutable only if that fails (read-only storage: what the last checkpoint holds).
    """
    wal = source.with_name(source.name + "-wal")
    queries = ("mode=ro", "mode=ro&immutable=1") if wal.exists() else ("mode=ro&immutable=1",)
    for query in queries:
        try:
            src = sqlite3.connect(f"{source.resolve().as_uri()}?{query}", uri=True)
        except sqlite3.Error:
            continue
        try:
            dst = sqlite3.connect(str(target))
            try:
                src.backup(dst)
                return
            finally:
                dst.close()
        except sqlite3.OperationalError as exc:
            logger.debug("reading %s with %s failed: %s", source, query, exc)
            target.unlink(missing_ok=True)
        finally:
            src.close()
    raise MemoryReadOnlyError(f"cannot read the journal {source}: check its permissions")


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


def _let_go(database: Path, timeout: float = 2.0) -> bool:
    """Whether no file descriptor of this process is open on ``database`` (waiting up to ``timeout``
    seconds): Chroma's client closes its SQLite connection on a worker thread after ``close()``
    returns (a reviewer saw it open 0.5 s on). ``True`` where the process's descriptors cannot be
    listed (no ``/proc/self/fd``): there the close is trusted."""
    fds = Path("/proc/self/fd")
    if not fds.is_dir():
        return True
    target, deadline = os.path.realpath(database), time.monotonic() + timeout
    while True:
        try:
            held = any(os.path.realpath(fd) == target for fd in fds.iterdir())
        except OSError:  # a descriptor closed while listed: look again
            held = True
        if not held:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)


def check_server(host: object, port: object, timeout: object) -> int:
    """``port`` as an int; ``ValueError`` naming the field unless ``host`` is a non-empty string,
    ``port`` an int (or its digits) in 1-65535 and ``timeout`` a finite number of seconds > 0: a bad one would only show at the first
    write, as a server that cannot be reached (the turn journaled for a ``repair`` that can never work)."""
    if isinstance(port, str) and port.strip().isdigit():  # "8000", from an environment variable
        port = int(port)
    if not isinstance(host, str) or not host.strip():
        raise ValueError(f"host must be a non-empty string, got {host!r}")
    if "://" in host or "/" in host:  # (until 2026-12-07 "http://h" became "http://http://h": a reviewer)
        raise ValueError(f"host must be a host name or address without a scheme or path (ssl=True for https), got {host!r}")
    if not isinstance(port, int) or isinstance(port, bool) or not 1 <= port <= 65535:
        raise ValueError(f"port must be an int in [1, 65535], got {port!r}")
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout < float("inf"):
        raise ValueError(f"timeout must be a finite number of seconds > 0, got {timeout!r}")
    return port


_HEADER_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
#: h11's rule for a header value: printable ASCII, spaces and tabs only between other characters.
_HEADER_VALUE = re.compile(r"(?:[\x21-\x7e](?:[\x20\x09]*[\x21-\x7e])*)?")
#: Headers the HTTP client writes from the body itself: given too, the request is malformed (a
#: ``Host`` or ``Connection`` of the caller's is used instead of httpx's: a proxy routed by name).
_OWN_HEADERS = frozenset({"content-length", "transfer-encoding"})
#: Chroma's rule for a database name (its server refuses others, some only at the first write): 3 to
#: 512 of these characters, a letter or digit first and last, no "..", not an IPv4 address.
_DATABASE = re.compile(r"(?!.*\.\.)(?![0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}$)[A-Za-z0-9][A-Za-z0-9._-]{1,510}[A-Za-z0-9]")


def check_connection(headers: object, ssl: object, tenant: object, database: object) -> None:
    """``ValueError`` naming the field unless ``headers`` is ``None`` or a mapping of strings to strings,
    ``ssl`` a bool, ``tenant`` ``None`` or a name (no spaces at its ends, no ``/``) and ``database``
    ``None`` or a name Chroma takes.
    Until 2026-12-07 a bad one showed at the first write, after the turn was journaled, as a raw
    ``TypeError`` or Chroma error (a reviewer)."""
    if headers is not None:
        if not isinstance(headers, Mapping):
            raise ValueError(f"headers must be a mapping of header names to strings, got {type(headers).__name__}")
        for name, value in headers.items():
            # HTTP's rules (RFC 9110): a name is a token; a value printable ASCII, no line break (httpx raised
            # a raw UnicodeEncodeError for "tökén", and took "a\nb" for a server that cannot be reached)
            if not isinstance(name, str) or not _HEADER_NAME.fullmatch(name):
                raise ValueError(f"headers: {name!r} is not a header name (letters, digits and !#$%&'*+-.^_`|~)")
            if name.lower() in _OWN_HEADERS:
                raise ValueError(f"headers: {name!r} is written by the HTTP client itself")
            if not isinstance(value, str) or not _HEADER_VALUE.fullmatch(value):
                raise ValueError(f"headers: the value of {name!r} must be printable ASCII text without line breaks "
                                 "or spaces at its ends, "
                                 f"got {value!r}")  # fmt: skip
    if not isinstance(ssl, bool):
        raise ValueError(f"ssl must be True or False, got {ssl!r}")
    if tenant is not None and (not isinstance(tenant, str) or not tenant.strip() or tenant != tenant.strip() or "/" in tenant):
        raise ValueError(f"tenant must be None or a name without spaces at its ends or '/', got {tenant!r}")
    if database is not None and (not isinstance(database, str) or not _DATABASE.fullmatch(database)):
        raise ValueError(f"database must be None or a name Chroma takes: 3 to 512 of a-z A-Z 0-9 . _ -, a letter or "
                         f"digit first and last, no '..', not an IPv4 address, got {database!r}")  # fmt: skip


def _default_journal(host: str, port: int, tenant: str | None, database: str | None) -> Path:
    """``$RECALL_HOME/memory/server-journals/HOST_PORT[_TENANT_DATABASE].sqlite3``: each database its
    own journal, since a journal's repair (or a lost server's heal) indexes all its users there."""
    def safe(text: str) -> str:
        return "".join(c if c.isalnum() or c in "-." else "_" for c in text)

    folder = default_memory_dir() / "server-journals"
    shared = folder / f"{safe(host)}_{int(port)}.sqlite3"
    if tenant is None and database is None:
        return shared
    own = folder / f"{shared.stem}_{safe(tenant or 'default_tenant')}_{safe(database or 'default_database')}.sqlite3"
    if shared.exists() and not own.exists():
        warnings.warn(
            f"the journal of tenant {tenant!r}, database {database!r} is now {own}; until 2026-12-06 every database "
            f"of this server shared {shared}, which may hold its memories: pass journal_path= to keep using it",
            RuntimeWarning, stacklevel=4,
        )  # fmt: skip
    return own


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
        journal_path = _default_journal(host, port, tenant, database)
    journal = Journal(Path(journal_path).expanduser())
    scheme = "https" if ssl else "http"
    location = f"{scheme}://{host}:{int(port)}"

    def open_client() -> Any:
        import httpx
        from chromadb.api.client import Client
        from chromadb.config import DEFAULT_DATABASE, DEFAULT_TENANT, Settings
        from chromadb.errors import NotFoundError

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
        # Chroma's session waits forever (httpx.Client(timeout=None)), and its client asks the server
        # for the identity, tenant and database while it is built, before a timeout could be set on
        # it: a server that answered the heartbeat and then hung hung every write and search for good
        # (until 2026-12-07, a reviewer). The timeout is set just before the first of those requests.
        class TimedClient(Client):
            def get_user_identity(self) -> Any:
                session = getattr(self._server, "_session", None)
                if session is not None:
                    session.timeout = httpx.Timeout(timeout)
                return super().get_user_identity()

        settings = Settings(
            anonymized_telemetry=False, chroma_api_impl="chromadb.api.fastapi.FastAPI", chroma_server_host=host,
            chroma_server_http_port=int(port), chroma_server_ssl_enabled=ssl, chroma_server_headers=headers,
        )  # fmt: skip
        names = f"tenant {tenant or DEFAULT_TENANT!r}, database {database or DEFAULT_DATABASE!r}"
        try:
            client = TimedClient(tenant=tenant or DEFAULT_TENANT, database=database or DEFAULT_DATABASE, settings=settings)
        except NotFoundError as exc:  # a tenant or database the server does not hold (or lost with its data)
            raise MemoryUnavailableError(
                f"the Chroma server at {location} has no {names} ({exc}): create them with chromadb's "
                "AdminClient (create_tenant, create_database), or pass ones it holds"
            ) from exc
        except (ValueError, httpx.HTTPError) as exc:  # "Could not connect to a Chroma server", a timeout
            raise MemoryUnavailableError(f"the Chroma server at {location} is unreachable: {exc}") from exc
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


#: A local store's file that says deleted collections or rows left bytes in its Chroma files.
SCRUB_MARK = "chroma.scrub-due"


def scrub_deleted(root: Path | None) -> None:
    """Have a local store's Chroma files scrubbed, at its close, of what deleted collections and
    rows left (:func:`scrub_if_due`): a forgotten user's words and vectors must not stay on disk.
    A failure warns with what finishes it."""
    if root is None:
        return
    try:
        (root / SCRUB_MARK).touch()
    except OSError as error:
        warnings.warn(f"what a forget, delete or update removed may stay in {root / CHROMA_DIR} until it is scrubbed: "
                      f"`recall doctor --repair` does it ({error})", RuntimeWarning, stacklevel=3)  # fmt: skip


def scrub_if_due(root: Path | None) -> None:
    """If a forget or delete left them (:func:`scrub_deleted`), remove from a local store's Chroma
    files the segment folders of deleted collections (Chroma 1.x keeps them, vectors and all,
    chroma-core/chroma#5259), the unused capacity hnswlib wrote into the live ones from memory it
    never cleared (:func:`~recall_core.memory.upkeep.segments.clear_unused_capacity`), and the
    database's free pages (SQLite keeps deleted rows' bytes,
    ids and texts, until they are reused: a VACUUM).

    Only where no Chroma client of this process has the files open: at the store's close, after
    its client closed, and at its opening, before one opens (a process killed before its close).
    This process's Chroma holds the database through its own copy of SQLite, whose locks
    Python's sqlite3 cannot see: a VACUUM beside another thread's write corrupted
    ``chroma.sqlite3``, and a folder listed beside another thread's first write of a new user was
    taken for a deleted one (a reviewer, 2026-12-07; sqlite.org/howtocorrupt.html 2.2.1)."""
    mark = root / SCRUB_MARK if root is not None else None
    if mark is None or not mark.exists():
        return
    from recall_core.memory.upkeep.segments import clear_unused_capacity, leftover_segments

    chroma_dir = root / CHROMA_DIR  # type: ignore[operator]
    database = chroma_dir / "chroma.sqlite3"
    if database.is_file() and not _let_go(database):
        logger.info("Chroma still holds %s open: its scrub waits for the store's next close or opening", database)
        return
    try:
        if database.is_file():
            for folder in leftover_segments(chroma_dir):
                shutil.rmtree(folder)
            clear_unused_capacity(chroma_dir)  # hnswlib's uncleared memory, written to the live files
            connection = sqlite3.connect(database, timeout=30, isolation_level=None)
            try:
                blank_replaced_log_entries(connection)
                connection.execute("VACUUM")
            finally:
                connection.close()
        mark.unlink(missing_ok=True)
    except (sqlite3.Error, OSError) as error:  # the mark stays: the next close or opening tries again
        warnings.warn(f"what a forget, delete or update removed may stay in {chroma_dir} (a deleted collection's folder, the "
                      f"database's free pages) until the store's next close or opening: {error}",
                      RuntimeWarning, stacklevel=3)  # fmt: skip


def clear_capacity_written(root: Path | None, since: float) -> None:
    """At a local store's close, zero the unused capacity hnswlib wrote, from memory it never
    cleared, into the segment files this process changed since ``since`` (its opening).

    Whatever the process's heap held lands there: after a process killed following a ``delete``,
    the next opening's scrub read the deleted words (VACUUM, the word index's merge), and Chroma's
    next save wrote them back into ``data_level0.bin`` (this project's CI, 2026-12-07). Only where
    no Chroma client of this process has the files open; a failure warns and leaves the files."""
    if root is None or not (chroma_dir := root / CHROMA_DIR).is_dir():
        return
    from recall_core.memory.upkeep.segments import clear_unused_capacity

    database = chroma_dir / "chroma.sqlite3"
    if database.is_file() and not _let_go(database):
        logger.info("Chroma still holds %s open: its segments' unused capacity is left as written", database)
        return
    try:
        clear_unused_capacity(chroma_dir, written_since=since)
    except OSError as error:
        warnings.warn(f"the unused part of {chroma_dir}'s vector files may hold bytes this process held: {error}",
                      RuntimeWarning, stacklevel=3)  # fmt: skip


#: Chroma's log operations (its ``Operation`` enum): a later ADD or UPSERT holds a record whole, a DELETE ends it.
_LOG_WHOLE_OR_GONE = (0, 2, 3)


def blank_replaced_log_entries(connection: sqlite3.Connection) -> None:
    """Empty the document and metadata of Chroma's log entries (``embeddings_queue``) that a later
    entry for the same record deletes or replaces whole, and merge Chroma's word index (FTS5 keeps
    a deleted row's trigrams in its segments until they merge).

    Chroma keeps an ADD in its log, document and all, until every segment has persisted past it,
    so after ``delete`` or ``update`` the old words stayed in ``chroma.sqlite3`` (until 2026-12-07:
    a reviewer). Only the vector index replays the log, from its last persisted entry: it reads
    the operation, id and vector, which are kept; the record's end state is the later entry's.
    """
    if connection.execute("SELECT 1 FROM sqlite_master WHERE name='embeddings_queue'").fetchone() is None:
        return
    marks = ", ".join("?" * len(_LOG_WHOLE_OR_GONE))
    connection.execute("BEGIN IMMEDIATE")
    try:
        # the last whole-or-gone entry of each record, in a keyed temporary table: a correlated query over
        # the log grew with its square (50 s at a close after one delete on a log of 20,000; a reviewer)
        connection.execute("CREATE TEMP TABLE recall_last_entry (topic TEXT, id TEXT, seq_id INTEGER, "
                           "PRIMARY KEY (topic, id))")  # fmt: skip
        connection.execute(
            "INSERT INTO recall_last_entry SELECT topic, id, max(seq_id) FROM embeddings_queue "
            f"WHERE operation IN ({marks}) GROUP BY topic, id",
            _LOG_WHOLE_OR_GONE,
        )
        connection.execute(
            "UPDATE embeddings_queue SET metadata = NULL WHERE metadata IS NOT NULL AND operation != 3 AND seq_id < "
            "(SELECT last.seq_id FROM recall_last_entry AS last WHERE last.topic = embeddings_queue.topic "
            "AND last.id = embeddings_queue.id)"
        )
        connection.execute("DROP TABLE recall_last_entry")
        if connection.execute("SELECT 1 FROM sqlite_master WHERE name='embedding_fulltext_search'").fetchone():
            connection.execute("INSERT INTO embedding_fulltext_search(embedding_fulltext_search) VALUES('optimize')")
        connection.execute("COMMIT")
    except BaseException:
        connection.execute("ROLLBACK")
        raise

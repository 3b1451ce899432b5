"""`MemoryStore` and `UserMemory`: the Chroma-backed long-term memory.

Layout of a local store (``MemoryStore.local(path)``)::

    path/chroma/           Chroma's PersistentClient folder (the index: rebuildable)
    path/journal.sqlite3   the journal (the source of truth, see journal.py)
    path/recall.lock       held while a process has the store open

Isolation: every user has collections of their own, named from a hash of the user id
(``recall-m-<hash>`` for memories, ``recall-k-<hash>`` for LM-space keys). The only way
to read or write is a :class:`UserMemory` handle bound to one user, so no call can forget
a ``where`` filter and leak another user's memories; every result's metadata is checked
for the user id as well.
"""

from __future__ import annotations

import hashlib
import logging
import os
import socket
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from ..paths import default_memory_dir
from ..types import MemoryCandidate, RecallQuery
from .encoders import Encoder, load_encoder
from .journal import DELETING, INDEXED, PENDING, Journal, JournalRow
from .lexical import linear_fusion

if TYPE_CHECKING:
    from .writer import MemoryWriter

logger = logging.getLogger(__name__)

T = TypeVar("T")

MEMORIES = "m"
LM_KEYS = "k"
#: Keys the store writes in each memory's metadata; user metadata may not use them.
RESERVED_KEYS = frozenset(
    {"user_id", "role", "session_id", "timestamp", "turn_index", "chunk_index", "n_chunks", "written_at"}
)
#: Collections up to this size are searched exactly (see ``_exact_nearest``). HNSW is
#: approximate: with Chroma's defaults a memory at cosine 0.42 was missed among 1,000
#: near-duplicate notes (all at 0.16), and the top hit was wrong for 10 of 100 random queries
#: at 2,000 items.
EXACT_SEARCH_MAX = 2000
#: HNSW settings of new collections: cosine space, Chroma's defaults otherwise. A denser graph
#: and a wider beam (32 / 200 / 200) made the index part of a query at 100k memories 7x slower
#: (21 ms p50 against 3 ms), and the collections where recall matters most, the small ones,
#: are searched exactly anyway.
HNSW_CONFIG = {"space": "cosine"}
#: Seconds a server store trusts a collection's size (other clients write too). Chroma's
#: count() takes 9 ms at 100k items, more than the search itself; a local store is this
#: process's alone, so there the size is known from its own writes.
SIZE_TTL_S = 10.0
#: How ``text`` queries rank memories: ``"hybrid"`` fuses the vector ranking with BM25 over
#: the journal (lexical.py); ``"vector"`` is the index's cosine ranking alone.
RETRIEVALS = ("hybrid", "vector")
#: How deep each ranking is read before fusing.
FUSION_DEPTH = 50
_CHROMA_DIR = "chroma"
_JOURNAL_FILE = "journal.sqlite3"
_LOCK_FILE = "recall.lock"
_OWNER_FILE = "recall.lock.owner"


class MemoryStoreError(RuntimeError):
    """Base class of the memory's own errors."""


class MemoryUnavailableError(MemoryStoreError):
    """The index cannot be reached (server down, proxy refusing, local index failing).

    On a write the turn is already in the journal, marked unindexed: ``repair`` (``recall
    doctor --repair``) indexes it once the index is back.
    """


class MemoryLockedError(MemoryStoreError):
    """Another process (or another store object) has this local memory open."""


class EncoderMismatchError(MemoryStoreError, ValueError):
    """The encoder's dimension differs from the one the collection was written with."""


class MemoryIsolationError(MemoryStoreError):
    """A result carried another user's id: refused rather than returned."""


def collection_name(user_id: str, kind: str = MEMORIES) -> str:
    """The Chroma collection of ``user_id`` (``kind`` is ``"m"`` memories or ``"k"`` LM keys).

    A hash, so that any user id (emails, unicode, slashes) makes a valid name and the name
    reveals nothing; 160 bits, so two users never share one.
    """
    digest = hashlib.sha256(user_id.encode("utf-8")).hexdigest()[:40]
    return f"recall-{kind}-{digest}"


def check_retrieval(retrieval: object) -> str:
    """``retrieval`` if it is one of :data:`RETRIEVALS`, else ``ValueError`` naming them."""
    if retrieval not in RETRIEVALS:
        raise ValueError(f"retrieval must be one of {', '.join(map(repr, RETRIEVALS))}, got {retrieval!r}")
    return str(retrieval)


def check_user_id(user_id: object) -> str:
    """Return ``user_id`` if it is a usable id (a non-empty string), else raise ``ValueError``."""
    if isinstance(user_id, bytes):
        try:
            user_id = user_id.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"user_id is not valid UTF-8: {exc}") from None
    if not isinstance(user_id, str) or not user_id.strip():
        raise ValueError(f"user_id must be a non-empty string, got {user_id!r}")
    try:
        user_id.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(f"user_id is not valid UTF-8 text: {exc}") from None
    return user_id


@dataclass(frozen=True)
class MemoryRecord:
    """One stored memory (one chunk of one turn), as :meth:`UserMemory.get` and ``all`` return it.

    ``metadata`` holds the caller's extra metadata (for LoCoMo: speaker, dia_id, session_date).
    """

    id: str
    user_id: str
    text: str
    role: str
    session_id: str
    timestamp: str
    turn_index: int
    chunk_index: int = 0
    n_chunks: int = 1
    metadata: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_index(cls, memory_id: str, text: str, meta: Mapping[str, Any]) -> MemoryRecord:
        extra = {k: v for k, v in meta.items() if k not in RESERVED_KEYS}
        return cls(
            id=memory_id, user_id=str(meta.get("user_id")), text=text, role=str(meta.get("role")),
            session_id=str(meta.get("session_id")), timestamp=str(meta.get("timestamp")),
            turn_index=int(meta.get("turn_index", 0)), chunk_index=int(meta.get("chunk_index", 0)),
            n_chunks=int(meta.get("n_chunks", 1)), metadata=extra,
        )  # fmt: skip

    @classmethod
    def from_journal(cls, row: JournalRow) -> MemoryRecord:
        return cls(
            id=row.id, user_id=row.user_id, text=row.text, role=row.role, session_id=row.session_id,
            timestamp=row.timestamp, turn_index=row.turn_index, chunk_index=row.chunk_index,
            n_chunks=row.n_chunks, metadata=dict(row.extra),
        )  # fmt: skip


def index_metadata(row: JournalRow) -> dict[str, Any]:
    """The metadata a journal row gets in the index (Chroma refuses ``None`` values)."""
    meta: dict[str, Any] = {k: v for k, v in row.extra.items() if v is not None}
    meta.update(
        user_id=row.user_id, role=row.role, session_id=row.session_id, timestamp=row.timestamp,
        turn_index=row.turn_index, chunk_index=row.chunk_index, n_chunks=row.n_chunks,
        written_at=float(row.created_at),
    )  # fmt: skip
    return meta


class _Backend:
    """How to open a Chroma client and how to describe where it is (for messages)."""

    def __init__(self, kind: str, location: str, open_client: Callable[[], Any]) -> None:
        self.kind = kind
        self.location = location
        self.open_client = open_client


class MemoryStore:
    """A Chroma-backed long-term memory with a journal; open it with :meth:`local` or :meth:`server`.

    The store holds the sentence encoder (loaded lazily) because a ``text`` query must be
    embedded with the encoder that wrote the memories. Read and write through
    :meth:`for_user`. Close it (or use it as a context manager) to release the lock.
    """

    def __init__(
        self,
        backend: _Backend,
        journal: Journal,
        encoder: Encoder | str | Path | None = None,
        lock: Any = None,
        root: Path | None = None,
        retrieval: str = "hybrid",
    ) -> None:
        self.retrieval = check_retrieval(retrieval)
        self._backend = backend
        self.journal = journal
        self._encoder_spec = encoder
        self._encoder: Encoder | None = encoder if encoder is not None and not isinstance(encoder, (str, Path)) else None
        self._lock = lock
        self.root = root
        self._client: Any = None
        self._client_lock = threading.Lock()
        self._collections: dict[tuple[str, str], Any] = {}
        # (user, kind) -> the dimension already checked against that collection's metadata
        self._checked: dict[tuple[str, str], int] = {}
        # (user, kind) -> (collection size, when it was counted); dropped on every write of that user
        self._sizes: dict[tuple[str, str], tuple[int, float]] = {}
        self._writer: MemoryWriter | None = None
        self._max_batch: int | None = None
        self._closed = False

    # -- opening -----------------------------------------------------------------------------

    @classmethod
    def local(
        cls, path: str | Path | None = None, encoder: Encoder | str | Path | None = None, retrieval: str = "hybrid"
    ) -> MemoryStore:
        """Open (or create) an embedded store in ``path`` (default: ``$RECALL_HOME/memory``).

        Only one process may have a local store open: Chroma's persistent folder gives a
        second process stale results or hangs. A second opener, even in the same process,
        gets :class:`MemoryLockedError`; share a memory between processes with a server
        (``chroma run --path PATH/chroma``) and :meth:`server`.

        Args:
            path: folder of the store.
            encoder: an :class:`~recall_core.memory.encoders.Encoder`, a sentence-transformers
                name or path, or ``None`` for the packaged all-MiniLM-L6-v2.
            retrieval: how text queries rank memories: ``"hybrid"`` (vector + BM25 words,
                the default) or ``"vector"``.
        """
        check_retrieval(retrieval)
        from filelock import FileLock, Timeout

        root = Path(path).expanduser() if path is not None else default_memory_dir()
        root.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(root / _LOCK_FILE))
        try:
            lock.acquire(timeout=0)
        except Timeout:
            owner = _read_owner(root)
            raise MemoryLockedError(
                f"the memory at {root} is already open{owner}. Only one process (and one store object) "
                f"may open a local memory. To share it between processes, run a Chroma server on it: "
                f"`chroma run --path {root / _CHROMA_DIR} --host 127.0.0.1 --port 8000`, then open it with "
                f"MemoryStore.server(port=8000, journal_path='{root / _JOURNAL_FILE}')."
            ) from None
        try:
            _write_owner(root)
            journal = Journal(root / _JOURNAL_FILE)
        except BaseException:
            lock.release()
            raise

        def open_client() -> Any:
            import chromadb
            from chromadb.config import Settings

            chroma_dir = str(root / _CHROMA_DIR)
            try:
                return chromadb.PersistentClient(path=chroma_dir, settings=Settings(anonymized_telemetry=False))
            except Exception:
                _forget_chroma_system(chroma_dir)
                raise

        return cls(_Backend("local", str(root), open_client), journal, encoder, lock=lock, root=root, retrieval=retrieval)

    @classmethod
    def server(
        cls,
        host: str = "127.0.0.1",
        port: int = 8000,
        headers: Mapping[str, str] | None = None,
        encoder: Encoder | str | Path | None = None,
        journal_path: str | Path | None = None,
        ssl: bool = False,
        timeout: float = 30.0,
        tenant: str | None = None,
        database: str | None = None,
        retrieval: str = "hybrid",
    ) -> MemoryStore:
        """Connect to a Chroma server (``chroma run --path DIR --host 127.0.0.1 --port 8000``).

        The connection is made on first use, so turns can be journaled while the server is
        down (they are indexed later by ``repair``).

        The Chroma 1.x server has **no authentication** of its own: keep it on 127.0.0.1, or
        put an authenticating proxy in front and pass its token in ``headers`` (for example
        ``{"Authorization": "Bearer ..."}``). Tenants and databases are namespaces, not security.

        Args:
            host, port, ssl: where the server (or the proxy) listens.
            headers: HTTP headers sent with every request.
            encoder: as in :meth:`local`.
            journal_path: the journal of this client (default:
                ``$RECALL_HOME/memory/server-journals/HOST_PORT.sqlite3``). Processes on one
                machine may share it; each machine writing to the server keeps its own.
            timeout: seconds before a request to the server is given up.
            tenant, database: Chroma namespaces (defaults: Chroma's).
            retrieval: as in :meth:`local`. The word (BM25) half of ``"hybrid"`` searches this
                client's journal, so it covers the memories written through it (every process
                sharing ``journal_path``); memories another machine wrote are found by vector only.
        """
        check_retrieval(retrieval)
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

        return cls(_Backend("server", location, open_client), journal, encoder, retrieval=retrieval)

    # -- properties ----------------------------------------------------------------------------

    @property
    def kind(self) -> str:
        """``"local"`` or ``"server"``."""
        return self._backend.kind

    @property
    def location(self) -> str:
        """The folder of a local store, the URL of a server."""
        return self._backend.location

    @property
    def encoder(self) -> Encoder:
        """The sentence encoder (the packaged all-MiniLM-L6-v2 unless one was given), loaded lazily."""
        if self._encoder is None:
            self._encoder = load_encoder(self._encoder_spec)
        return self._encoder

    def use_encoder(self, encoder: Encoder | str | Path) -> Encoder:
        """Set the store's encoder if it has not been given or used yet; return the encoder in use.

        Raises ``ValueError`` if the store already uses a different encoder: the memories and
        the queries must share one.
        """
        resolved = load_encoder(encoder)
        if self._encoder is None and self._encoder_spec is None:
            self._encoder = resolved
            return resolved
        current = self.encoder
        if current is resolved or current.name == resolved.name:
            return current
        raise ValueError(
            f"this store already uses the encoder {current.name!r}; a writer cannot use {resolved.name!r}. "
            "Give the encoder to the store (MemoryStore.local(encoder=...)) and create the writer without one."
        )

    @property
    def writer(self) -> MemoryWriter:
        """A default :class:`~recall_core.memory.writer.MemoryWriter` on this store (used by ``UserMemory.add``)."""
        if self._writer is None:
            from .writer import MemoryWriter

            self._writer = MemoryWriter(self)
        return self._writer

    # -- users ---------------------------------------------------------------------------------

    def for_user(self, user_id: str) -> UserMemory:
        """The memory of one user: the only way to read or write."""
        return UserMemory(self, check_user_id(user_id))

    def users(self) -> list[str]:
        """User ids with memories in this store's journal (administration, not search)."""
        return self.journal.users()

    # -- lifecycle -----------------------------------------------------------------------------

    def close(self) -> None:
        """Close the index client and the journal, and release the lock. Safe to call twice."""
        if self._closed:
            return
        self._closed = True
        client, self._client = self._client, None
        self._collections.clear()
        if client is not None:
            try:
                client.close()
            except Exception as exc:  # closing must not hide the caller's own error
                logger.debug("closing the Chroma client failed: %s", exc)
        self.journal.close()
        if self._lock is not None:
            if self.root is not None:
                try:
                    (self.root / _OWNER_FILE).unlink()
                except OSError:
                    pass
            self._lock.release()

    def __enter__(self) -> MemoryStore:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:  # a forgotten close() must not keep the lock for the process's life
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self) -> str:
        return f"MemoryStore.{self.kind}({self.location!r})"

    # -- the index (internal: used by UserMemory, the writer and maintenance) -------------------

    def _ensure_open(self) -> None:
        if self._closed:
            raise MemoryStoreError("this MemoryStore is closed")

    def _get_client(self) -> Any:
        self._ensure_open()
        if self._client is None:
            with self._client_lock:
                if self._client is None:
                    self._client = self._call(self._backend.open_client)
        return self._client

    def _call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run a Chroma call, turning "cannot reach the index" failures into MemoryUnavailableError."""
        try:
            return fn(*args, **kwargs)
        except MemoryStoreError:
            raise
        except Exception as exc:
            if _is_unavailable(exc, self.kind):
                hint = (
                    "is the server running?" if self.kind == "server"
                    else "`recall doctor` checks the index; `rebuild_index(store, fresh=True)` rebuilds it from the journal"
                )  # fmt: skip
                raise MemoryUnavailableError(f"the memory index at {self.location} failed: {exc} ({hint})") from exc
            raise

    def _max_batch_size(self) -> int:
        if self._max_batch is None:
            client = self._get_client()
            try:
                limit = int(self._call(client.get_max_batch_size))
            except MemoryUnavailableError:
                raise
            except Exception:
                limit = 1000
            # Over HTTP, keep each request short: a 5,000-item upsert can outlast the timeout
            # on a busy server, and a failed request is retried whole by `repair`.
            self._max_batch = min(limit, 1000) if self.kind == "server" else limit
        return self._max_batch

    def _collection(
        self, user_id: str, kind: str, create: bool = False, metadata: Mapping[str, Any] | None = None
    ) -> Any | None:
        """The collection of ``user_id`` (``None`` if it does not exist and ``create`` is false)."""
        key = (user_id, kind)
        cached = self._collections.get(key)
        if cached is not None:
            return cached
        client = self._get_client()
        name = collection_name(user_id, kind)
        if create:
            meta = {"recall": 1, "kind": "memories" if kind == MEMORIES else "lm_keys", "user_id": user_id}
            meta.update(metadata or {})
            # Cosine space: chromadb 1.5 takes it in `configuration` (the old `hnsw:space` metadata
            # is the legacy spelling). embedding_function=None: never let Chroma embed (it downloads).
            collection = self._call(
                client.get_or_create_collection,
                name=name, configuration={"hnsw": dict(HNSW_CONFIG)}, metadata=meta, embedding_function=None,
            )  # fmt: skip
        else:
            try:
                collection = self._call(client.get_collection, name=name, embedding_function=None)
            except MemoryStoreError:
                raise
            except Exception as exc:
                if _is_not_found(exc):
                    return None
                raise
        owner = (collection.metadata or {}).get("user_id")
        if owner is not None and owner != user_id:
            raise MemoryIsolationError(f"collection {name} belongs to another user; refusing to use it")
        self._collections[key] = collection
        return collection

    def _forget_cached(self, user_id: str) -> None:
        for kind in (MEMORIES, LM_KEYS):
            self._collections.pop((user_id, kind), None)
            self._checked.pop((user_id, kind), None)
            self._sizes.pop((user_id, kind), None)

    def _size(self, user_id: str, kind: str, collection: Any) -> int:
        """How many items the collection holds (cached; see ``SIZE_TTL_S``)."""
        key = (user_id, kind)
        cached = self._sizes.get(key)
        now = time.monotonic()
        if cached is not None and (self.kind == "local" or now - cached[1] < SIZE_TTL_S):
            return cached[0]
        size = int(collection.count())
        self._sizes[key] = (size, now)
        return size

    def _with_collection(self, user_id: str, kind: str, fn: Callable[[Any], T], create: bool = False,
                         metadata: Mapping[str, Any] | None = None) -> T | None:  # fmt: skip
        """Call ``fn(collection)``; if another client deleted the collection meanwhile, look it up again once."""
        for attempt in (0, 1):
            collection = self._collection(user_id, kind, create=create, metadata=metadata)
            if collection is None:
                return None
            try:
                return self._call(fn, collection)
            except MemoryStoreError:
                raise
            except Exception as exc:
                if attempt == 0 and _is_not_found(exc):
                    self._forget_cached(user_id)
                    continue
                raise
        return None  # pragma: no cover - the loop always returns or raises

    def _check_dimension(self, user_id: str, kind: str, collection: Any, dimension: int, what: str) -> None:
        """Raise EncoderMismatchError if ``dimension`` is not the collection's (checked once per collection)."""
        key = (user_id, kind)
        if self._checked.get(key) == dimension:
            return
        meta = collection.metadata or {}
        stored = meta.get("dim")
        name = meta.get("encoder") if kind == MEMORIES else meta.get("lm")
        if stored is not None and int(stored) != int(dimension):
            fix = (
                "use the encoder the memories were written with, or re-encode them with "
                "`rebuild_index(store, reencode=True)` (`recall rebuild-index --reencode`)"
                if kind == MEMORIES else "use the model the LM keys were written with, or write them again"
            )  # fmt: skip
            raise EncoderMismatchError(
                f"dimension mismatch for user {user_id!r}: the stored {'memories' if kind == MEMORIES else 'LM keys'} "
                f"were written by {name!r} with {int(stored)} dimensions, but {what} has {int(dimension)} dimensions; {fix}"
            )
        if kind == MEMORIES and name is not None and name != self.encoder.name:
            warnings.warn(
                f"the memories of user {user_id!r} were written by encoder {name!r}; this store searches them "
                f"with {self.encoder.name!r} (same dimension, but scores may be meaningless)",
                stacklevel=3,
            )
        self._checked[key] = dimension

    def _index(self, rows: Sequence[JournalRow]) -> None:
        """Put journal rows (with vectors) into the index, then mark them indexed in the journal."""
        by_user: dict[str, list[JournalRow]] = {}
        for row in rows:
            if row.state == DELETING:
                continue
            if row.embedding is None:
                raise MemoryStoreError(f"memory {row.id} has no embedding to index")
            by_user.setdefault(row.user_id, []).append(row)
        for user_id, user_rows in by_user.items():
            self._index_user(user_id, user_rows)
            self.journal.mark([r.id for r in user_rows], INDEXED)

    def _index_user(self, user_id: str, rows: Sequence[JournalRow]) -> None:
        for kind in (MEMORIES, LM_KEYS):
            self._sizes.pop((user_id, kind), None)
        dim = int(rows[0].embedding.shape[0])  # type: ignore[union-attr]
        encoder_name = rows[0].encoder or self.encoder.name
        meta = {"encoder": encoder_name, "dim": dim}
        batch = self._max_batch_size()

        def upsert(collection: Any, part: Sequence[JournalRow], vectors: list[np.ndarray]) -> None:
            collection.upsert(
                ids=[r.id for r in part], embeddings=np.stack(vectors), documents=[r.text for r in part],
                metadatas=[index_metadata(r) for r in part],
            )  # fmt: skip

        for start in range(0, len(rows), batch):
            part = rows[start : start + batch]
            collection = self._collection(user_id, MEMORIES, create=True, metadata=meta)
            self._check_dimension(user_id, MEMORIES, collection, dim, f"the encoder {encoder_name!r}")
            vectors = [r.embedding for r in part]
            self._with_collection(
                user_id, MEMORIES, lambda c, p=part, v=vectors: upsert(c, p, v), create=True, metadata=meta
            )

        keyed = [r for r in rows if r.lm_key is not None]
        unkeyed = [r.id for r in rows if r.lm_key is None]
        if keyed:
            key_meta = {"lm": keyed[0].lm_name or "unknown", "dim": int(keyed[0].lm_key.shape[0])}  # type: ignore[union-attr]
            for start in range(0, len(keyed), batch):
                part = keyed[start : start + batch]
                collection = self._collection(user_id, LM_KEYS, create=True, metadata=key_meta)
                self._check_dimension(user_id, LM_KEYS, collection, key_meta["dim"], f"the LM {key_meta['lm']!r}")
                vectors = [r.lm_key for r in part]
                self._with_collection(
                    user_id, LM_KEYS, lambda c, p=part, v=vectors: upsert(c, p, v), create=True, metadata=key_meta
                )
        if unkeyed:
            # A memory re-indexed without an LM key (its text was updated) must not keep a stale key.
            self._with_collection(user_id, LM_KEYS, lambda c: c.delete(ids=unkeyed))

    def _unindex(self, user_id: str, ids: Sequence[str]) -> None:
        """Delete ids from the user's collections (both kinds)."""
        if not ids:
            return
        for kind in (MEMORIES, LM_KEYS):
            self._sizes.pop((user_id, kind), None)
            self._with_collection(user_id, kind, lambda c: c.delete(ids=list(ids)))

    def _drop_user(self, user_id: str) -> None:
        """Delete the user's collections from the index."""
        client = self._get_client()
        for kind in (MEMORIES, LM_KEYS):
            try:
                self._call(client.delete_collection, name=collection_name(user_id, kind))
            except MemoryStoreError:
                raise
            except Exception as exc:
                if not _is_not_found(exc):
                    raise
        self._forget_cached(user_id)

    def _index_collections(self) -> list[Any]:
        """Every recall collection in the index (for maintenance)."""
        client = self._get_client()
        result, offset, page = [], 0, 1000
        while True:
            # chromadb 1.x lists Collection objects (with metadata): one request per page.
            items = self._call(client.list_collections, limit=page, offset=offset)
            for item in items:
                if isinstance(item, str):  # older clients list names only
                    item = self._call(client.get_collection, name=item, embedding_function=None)
                if item.name.startswith("recall-"):
                    result.append(item)
            if len(items) < page:
                return result
            offset += page


class UserMemory:
    """The memory of one user: search, add, update, delete, get, count, all, forget.

    Implements the engine's :class:`~recall_core.types.Memory` protocol (``search``). Get one
    from :meth:`MemoryStore.for_user`; it can only ever see its own user's memories.
    """

    def __init__(self, store: MemoryStore, user_id: str) -> None:
        self._store = store
        self.user_id = user_id

    def __repr__(self) -> str:
        return f"UserMemory({self.user_id!r}, store={self._store!r})"

    @property
    def store(self) -> MemoryStore:
        return self._store

    # -- search --------------------------------------------------------------------------------

    def search(
        self,
        query: RecallQuery | str,
        k: int = 4,
        *,
        where: Mapping[str, Any] | None = None,
        retrieval: str | None = None,
    ) -> list[MemoryCandidate]:
        """Up to ``k`` memories for ``query``, best first; ``score`` is the cosine similarity.

        ``query.mode == "text"`` embeds ``query.text`` with the store's encoder and ranks by
        ``retrieval`` (default: the store's, ``"hybrid"``): ``"hybrid"`` orders by cosine plus
        the query-normalised BM25 score of the words (so the order need not follow ``score``),
        ``"vector"`` by cosine alone. ``"hidden"`` compares ``query.hidden`` with the LM-space
        keys written with ``MemoryWriter(lm_keys=True)``. ``where`` filters on metadata inside
        this user's memories (for example ``{"session_id": "s1"}``).

        Raises:
            MemoryUnavailableError: the index cannot be reached.
            EncoderMismatchError: the query vector's dimension is not the stored one.
        """
        if isinstance(query, str):
            query = RecallQuery(text=query)
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"k must be an int >= 1, got {k!r}")
        retrieval = self._store.retrieval if retrieval is None else check_retrieval(retrieval)
        if query.mode == "hidden":
            return self._search_hidden(query, k, where)
        if query.mode != "text":
            raise ValueError(f"query mode must be 'text' or 'hidden', got {query.mode!r}")
        if not query.text or not query.text.strip():
            return []  # nothing to search by
        store = self._store
        collection = store._collection(self.user_id, MEMORIES)
        if collection is None:
            return []
        store._check_dimension(self.user_id, MEMORIES, collection, store.encoder.dimension, f"the encoder {store.encoder.name!r}")
        vector = store.encoder.encode([query.text])[0]
        if retrieval == "vector":
            return self._query(MEMORIES, vector, k, where)
        return self._hybrid(query.text, vector, k, where)

    def _hybrid(self, text: str, vector: np.ndarray, k: int, where: Mapping[str, Any] | None) -> list[MemoryCandidate]:
        """The vector and BM25 rankings fused (lexical.linear_fusion): BM25 ``FUSION_DEPTH`` deep, the
        cosine of every memory of a small collection (else ``FUSION_DEPTH`` deep)."""
        embedding = np.asarray(vector, dtype=np.float32)
        where = dict(where) if where else None
        depth = max(k, FUSION_DEPTH)
        words = self._store.journal.search_text(self.user_id, text, depth)

        def run(collection: Any) -> Any:
            size = self._store._size(self.user_id, MEMORIES, collection)
            # A small collection's exact search has every distance anyway: keep them all, so no
            # word hit needs its vector fetched.
            wanted = size if size <= EXACT_SEARCH_MAX else depth
            cosine = {memory_id: 1.0 - d for memory_id, d in _nearest(collection, embedding, size, wanted, where)}
            lexical_only = [memory_id for memory_id, _ in words if memory_id not in cosine]
            if lexical_only:
                # Their cosine from the index's vectors; `where` drops the ones it excludes.
                got = collection.get(ids=lexical_only, where=where, include=["embeddings"])
                for memory_id, stored in zip(got["ids"], got["embeddings"], strict=True):
                    cosine[memory_id] = _cosine(np.asarray(stored, dtype=np.float32), embedding)
            fused = linear_fusion(cosine, dict(words))[:k]
            return _fetch(collection, [(memory_id, 1.0 - cosine[memory_id]) for memory_id, _ in fused])

        return self._candidates(self._store._with_collection(self.user_id, MEMORIES, run), keep_order=True)

    def _search_hidden(self, query: RecallQuery, k: int, where: Mapping[str, Any] | None) -> list[MemoryCandidate]:
        if query.hidden is None:
            raise ValueError("a 'hidden' query needs query.hidden (the <recall> hidden state)")
        hidden: Any = query.hidden
        if hasattr(hidden, "detach"):  # a torch tensor, possibly on an accelerator
            hidden = hidden.detach().float().cpu().numpy()
        vector = np.asarray(hidden, dtype=np.float32).reshape(-1)
        if vector.size == 0 or not np.isfinite(vector).all():
            raise ValueError("query.hidden must be a non-empty vector of finite numbers")
        store = self._store
        collection = store._collection(self.user_id, LM_KEYS)
        if collection is None:
            if self.count() > 0:
                raise MemoryStoreError(
                    f"user {self.user_id!r} has memories but no LM keys, which the 'hidden' query mode needs: "
                    "write them with MemoryWriter(store, lm=(model, tokenizer), lm_keys=True), or use query_mode='text'"
                )
            return []
        store._check_dimension(self.user_id, LM_KEYS, collection, vector.size, "the query hidden state")
        return self._query(LM_KEYS, vector, k, where)

    def _query(self, kind: str, vector: np.ndarray, k: int, where: Mapping[str, Any] | None) -> list[MemoryCandidate]:
        embedding = np.asarray(vector, dtype=np.float32)
        where = dict(where) if where else None
        include = ["documents", "metadatas", "distances", "embeddings"]

        def run(collection: Any) -> dict[str, list[Any]] | None:
            size = self._store._size(self.user_id, kind, collection)
            if size > EXACT_SEARCH_MAX:  # approximate, in one request
                found = collection.query(query_embeddings=[embedding], n_results=k, where=where, include=include)
                return {key: found[key][0] for key in ("ids", *include)}
            return _fetch(collection, _exact_nearest(collection, embedding, size, k, where))

        result = self._store._with_collection(self.user_id, kind, run)
        return self._candidates(result)

    def _candidates(self, result: Mapping[str, Any] | None, keep_order: bool = False) -> list[MemoryCandidate]:
        """Candidates from a fetched result, owner-checked; best cosine first unless ``keep_order``."""
        if result is None:
            return []
        candidates = []
        for memory_id, text, meta, distance, embedding in zip(
            result["ids"], result["documents"], result["metadatas"], result["distances"], result["embeddings"], strict=True
        ):  # fmt: skip
            self._check_owner(memory_id, meta)
            # Chroma's cosine distance is 1 - cosine; clip the float noise outside [-1, 1].
            score = float(min(1.0, max(-1.0, 1.0 - float(distance))))
            vector_out = None if embedding is None else np.asarray(embedding, dtype=np.float32).tolist()
            candidates.append(MemoryCandidate(memory_id, score, text, vector_out, dict(meta)))
        if not keep_order:
            # Equal scores by id, so that the order does not depend on the index's insertion order.
            candidates.sort(key=lambda c: (-c.score, c.id))
        return candidates

    def _check_owner(self, memory_id: str, meta: Mapping[str, Any] | None) -> None:
        # The second check: the collection is this user's by name; the row must say so too.
        owner = (meta or {}).get("user_id")
        if owner != self.user_id:
            raise MemoryIsolationError(
                f"memory {memory_id} in the collection of user {self.user_id!r} is marked as another user's; "
                "refusing to return it (run `recall doctor`)"
            )

    # -- writing -------------------------------------------------------------------------------

    def add(
        self,
        content: str | bytes,
        role: str = "user",
        session_id: str | None = None,
        timestamp: Any = None,
        metadata: Mapping[str, Any] | None = None,
        turn_index: int | None = None,
    ) -> list[str]:
        """Write one turn (chunked if long) with the store's default writer; return the memory ids."""
        return self._store.writer.add_turn(
            self.user_id, role, content, session_id=session_id, timestamp=timestamp, metadata=metadata,
            turn_index=turn_index,
        )  # fmt: skip

    def update(
        self,
        memory_id: str,
        text: str | bytes,
        metadata: Mapping[str, Any] | None = None,
        lm_key: Sequence[float] | np.ndarray | None = None,
    ) -> None:
        """Replace one memory's text (re-embedded) and, if given, its extra metadata.

        The memory keeps its id, role, session and turn index. Its LM key, if it had one, is
        dropped unless ``lm_key`` gives the new one (``MemoryWriter.update`` computes it).
        The text is not chunked: it is embedded as one memory.

        Raises:
            KeyError: this user has no memory ``memory_id``.
        """
        from .writer import check_content, check_metadata

        text = check_content(text)
        extra = check_metadata(metadata) if metadata is not None else None
        store = self._store
        row = store.journal.get(memory_id)
        if row is None or row.user_id != self.user_id or row.state == DELETING:
            row = self._adopt(memory_id)
        store.journal.update_text(memory_id, text, extra)
        vector = store.encoder.encode([text])  # an updated memory is searched by its new text alone
        key = None if lm_key is None else np.asarray(lm_key, dtype=np.float32).reshape(1, -1)
        store.journal.set_vectors([memory_id], vector, store.encoder.name, key, row.lm_name if key is not None else None)
        store._index(store.journal.get_many([memory_id]))

    def _adopt(self, memory_id: str) -> JournalRow:
        """A memory found in the index but not in this journal (written by another client): journal it."""
        record = self.get(memory_id)
        if record is None:
            raise KeyError(f"user {self.user_id!r} has no memory {memory_id!r}")
        row = JournalRow(
            id=record.id, user_id=self.user_id, session_id=record.session_id, role=record.role, text=record.text,
            timestamp=record.timestamp, turn_index=record.turn_index, chunk_index=record.chunk_index,
            n_chunks=record.n_chunks, extra=dict(record.metadata),
        )  # fmt: skip
        self._store.journal.insert([row])
        return self._store.journal.get(memory_id) or row

    def delete(self, memory_ids: str | Iterable[str]) -> int:
        """Delete memories of this user by id; return how many existed. Ids of other users are ignored."""
        ids = [memory_ids] if isinstance(memory_ids, str) else list(memory_ids)
        if not ids:
            return 0
        store = self._store
        journaled = store.journal.mark_deleting(self.user_id, ids)
        in_index = {r.id for r in self._get_many(ids)} if len(journaled) < len(ids) else set()
        # Tombstones first: if the index is unreachable, the delete is finished by `repair`.
        store._unindex(self.user_id, ids)
        store.journal.purge(journaled)
        return len(set(journaled) | in_index)

    def forget(self) -> int:
        """Delete every memory of this user ("forget me"), index and journal; return how many there were."""
        store = self._store
        # Tombstones first: if the index is unreachable (raises here), `repair` finishes the job
        # instead of re-indexing what the user asked to forget.
        journaled = store.journal.mark_user_deleting(self.user_id)
        indexed = self.count()
        store._drop_user(self.user_id)
        store.journal.purge_user(self.user_id)
        return max(journaled, indexed)

    # -- reading -------------------------------------------------------------------------------

    def get(self, memory_id: str) -> MemoryRecord | None:
        """The memory ``memory_id`` of this user, or ``None``."""
        found = self._get_many([memory_id])
        return found[0] if found else None

    def _get_many(self, ids: Sequence[str]) -> list[MemoryRecord]:
        result = self._store._with_collection(
            self.user_id, MEMORIES, lambda c: c.get(ids=list(ids), include=["documents", "metadatas"])
        )
        if result is None:
            return []
        records = []
        for memory_id, text, meta in zip(result["ids"], result["documents"], result["metadatas"], strict=True):
            self._check_owner(memory_id, meta)
            records.append(MemoryRecord.from_index(memory_id, text, meta))
        return records

    def count(self) -> int:
        """How many memories of this user are in the index."""
        value = self._store._with_collection(self.user_id, MEMORIES, lambda c: c.count())
        return int(value or 0)

    def all(self, include_embeddings: bool = False) -> list[MemoryRecord] | list[tuple[MemoryRecord, np.ndarray]]:
        """Every memory of this user in the index, in the order they were written.

        With ``include_embeddings`` the items are ``(record, vector)`` pairs.
        """
        include = ["documents", "metadatas"] + (["embeddings"] if include_embeddings else [])
        page = 1000
        items: list[tuple[MemoryRecord, Any]] = []
        offset = 0
        while True:
            result = self._store._with_collection(
                self.user_id, MEMORIES, lambda c, o=offset: c.get(include=include, limit=page, offset=o)
            )
            if result is None or not result["ids"]:
                break
            vectors = result["embeddings"] if include_embeddings else [None] * len(result["ids"])
            for memory_id, text, meta, vec in zip(result["ids"], result["documents"], result["metadatas"], vectors, strict=True):
                self._check_owner(memory_id, meta)
                items.append((MemoryRecord.from_index(memory_id, text, meta), (meta or {}).get("written_at", 0.0), vec))
            if len(result["ids"]) < page:
                break
            offset += page
        items.sort(key=lambda item: (item[1], item[0].session_id, item[0].turn_index, item[0].chunk_index))
        if include_embeddings:
            return [(record, np.asarray(vec, dtype=np.float32)) for record, _, vec in items]
        return [record for record, _, _ in items]

    def pending(self) -> int:
        """How many of this user's memories are journaled but not indexed yet."""
        return sum(1 for _ in self._store.journal.rows(self.user_id, states=(PENDING,)))


def _nearest(
    collection: Any, embedding: np.ndarray, size: int, k: int, where: dict[str, Any] | None
) -> list[tuple[str, float]]:
    """The ``k`` nearest ``(id, cosine distance)`` of a collection of ``size`` items, best first:
    exact up to ``EXACT_SEARCH_MAX`` items."""
    if size > EXACT_SEARCH_MAX:
        found = collection.query(query_embeddings=[embedding], n_results=k, where=where, include=["distances"])
        return list(zip(found["ids"][0], found["distances"][0], strict=True))
    return _exact_nearest(collection, embedding, size, k, where)


def _exact_nearest(
    collection: Any, embedding: np.ndarray, size: int, k: int, where: dict[str, Any] | None
) -> list[tuple[str, float]]:
    """The ``k`` nearest ``(id, cosine distance)`` of a small collection, exactly.

    Asking HNSW for every item widens its beam (ef = n_results) to the whole graph: 2-6 ms
    for up to 2,000 items. That is exact only if every node is reachable, and HNSW's neighbour
    pruning can leave nodes without incoming links (among 1,000 near-duplicate notes, up to
    half were). So when fewer than ``size`` come back, or a ``where`` filter hides how many
    should, the distances are computed here from the stored vectors (10-50 ms at this size).
    """
    if size == 0:
        return []
    if where is None:
        wide = collection.query(query_embeddings=[embedding], n_results=size, include=["distances"])
        if len(wide["ids"][0]) >= size:
            return list(zip(wide["ids"][0][:k], wide["distances"][0][:k], strict=True))
        logger.debug("HNSW reached %d of %d items; computing the distances exactly", len(wide["ids"][0]), size)
    stored = collection.get(where=where, include=["embeddings"])
    if not stored["ids"]:
        return []
    matrix = np.asarray(stored["embeddings"], dtype=np.float32)
    norms = np.maximum(np.linalg.norm(matrix, axis=1) * float(np.linalg.norm(embedding)), 1e-12)
    distances = 1.0 - matrix @ embedding / norms
    order = np.argsort(distances, kind="stable")[:k]
    return [(stored["ids"][i], float(distances[i])) for i in order]


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / max(float(np.linalg.norm(a) * np.linalg.norm(b)), 1e-12))


def _fetch(collection: Any, nearest: Sequence[tuple[str, float]]) -> dict[str, list[Any]] | None:
    """Texts, metadata and vectors of ``nearest`` ``(id, distance)``, in that order (``None`` if empty)."""
    if not nearest:
        return None
    got = collection.get(ids=[memory_id for memory_id, _ in nearest], include=["documents", "metadatas", "embeddings"])
    at = {memory_id: i for i, memory_id in enumerate(got["ids"])}
    kept = [(memory_id, d, at[memory_id]) for memory_id, d in nearest if memory_id in at]  # a concurrent delete
    vectors = got.get("embeddings")
    return {
        "ids": [memory_id for memory_id, _, _ in kept],
        "distances": [d for _, d, _ in kept],
        "documents": [got["documents"][i] for _, _, i in kept],
        "metadatas": [got["metadatas"][i] for _, _, i in kept],
        "embeddings": [None if vectors is None else vectors[i] for _, _, i in kept],
    }


def _is_not_found(exc: BaseException) -> bool:
    from chromadb.errors import NotFoundError

    if isinstance(exc, NotFoundError):
        return True
    text = str(exc).lower()
    return "does not exist" in text or "not found" in text


def _is_unavailable(exc: BaseException, kind: str) -> bool:
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


def _forget_chroma_system(chroma_dir: str) -> None:
    """Drop Chroma's per-process cache entry of a folder it failed to open.

    chromadb 1.5 keeps the half-started system of a failed PersistentClient, so the next
    attempt in the same process (after ``rebuild_index(fresh=True)`` cleared the folder)
    would fail with an AttributeError instead of opening the new, empty folder.
    """
    try:
        from chromadb.api.shared_system_client import SharedSystemClient

        for key in [k for k in SharedSystemClient._identifier_to_system if os.path.abspath(k) == os.path.abspath(chroma_dir)]:
            SharedSystemClient._identifier_to_system.pop(key, None)
            SharedSystemClient._identifier_to_refcount.pop(key, None)
    except Exception as exc:  # private API: if it moved, the next open will say what is wrong
        logger.debug("could not reset Chroma's system cache: %s", exc)


def _write_owner(root: Path) -> None:
    try:
        (root / _OWNER_FILE).write_text(f"pid {os.getpid()} on {socket.gethostname()} ({' '.join(sys.argv[:2])})\n")
    except OSError:
        pass


def _read_owner(root: Path) -> str:
    try:
        owner = (root / _OWNER_FILE).read_text().strip()
    except OSError:
        return ""
    return f" by {owner}" if owner else ""

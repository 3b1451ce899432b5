"""`MemoryStore`: the journal, the index and the encoder of one long-term memory, together.

Layout of a local store (``MemoryStore.local(path)``)::

    path/chroma/           Chroma's PersistentClient folder (the index: rebuildable)
    path/journal.sqlite3   the journal (the source of truth, see journal.py)
    path/recall.lock       held while a process has the store open

Where each part lives: opening a store, backends.py; the index, index.py; searching,
search.py; writing, writer.py; one user's handle, user.py.

Isolation: every user has collections of their own, named from a hash of the user id. The
only way to read or write is a :class:`~recall_core.memory.user.UserMemory` handle bound to
one user, so no call can forget a ``where`` filter and leak another user's memories; every
result's metadata is checked for the user id as well.
"""

from __future__ import annotations

import logging
import os
import shutil
import time
import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import IO, Any

from recall_core.memory.backends import (
    CHROMA_DIR,
    Backend,
    LocalLock,
    check_connection,
    check_server,
    clear_capacity_written,
    open_local,
    open_local_snapshot,
    open_server,
    scrub_if_due,
)
from recall_core.memory.encoders import ENCODER_PARTS, Encoder, load_encoder, missing_parts
from recall_core.memory.errors import MemoryIndexWarning, MemoryReadOnlyError, MemoryStoreError
from recall_core.memory.index import ChromaIndex
from recall_core.memory.journal import Journal
from recall_core.memory.search import check_retrieval, check_roles, check_unit
from recall_core.memory.upkeep.catch_up import SearchCatchUp
from recall_core.memory.upkeep.health import (
    OpenCheck,
    check_local_index,
    distrust,
    index_without_journal,
    lost_journal_warning,
    trust,
)
from recall_core.memory.upkeep.maintenance import finish_renames
from recall_core.memory.upkeep.marks import ServerMarks
from recall_core.memory.upkeep.probe import WHOLE_INDEX
from recall_core.memory.upkeep.transfer import ImportReport, import_jsonl
from recall_core.memory.user import UserMemory
from recall_core.memory.validation import check_user_id
from recall_core.memory.writer import MemoryWriter

logger = logging.getLogger(__name__)

#: What a found memory's text holds unless the store is told otherwise: the turn, with the turn
#: it answers ("answered"). An assistant's reply comes with the user turn before it, so an
#: acknowledgement ("Good luck with the new job!"), which matches a question's words better than
#: the long turn that holds the fact and took one of two notes in 56 of 100 held-out answers
#: (issue 19), brings that fact along; a user's answer comes with the question it answers
#: ("Which language?" / "Dutch!"). See docs/benchmarks/heldout.md.
DEFAULT_UNIT = "answered"
#: Whose words a search returns by default (``None``: every speaker's).
DEFAULT_ROLES: tuple[str, ...] | None = None


def check_encoder(encoder: object) -> None:
    """``ValueError`` naming ``encoder`` unless it is ``None``, a model name or path, or an encoder object
    (:func:`~recall_core.memory.encoders.load_encoder`'s rule, without computing a sentence-transformers
    encoder's ``dimension``). Without this, ``encoder=5`` opened and the first ``add`` raised an ``AttributeError``."""
    if isinstance(encoder, str) and not encoder.strip():  # (an AttributeError's traceback until 2026-12-07)
        raise ValueError(f"encoder must not be empty (None for the default), got {encoder!r}")
    if encoder is None or isinstance(encoder, (str, Path)):
        return
    missing = missing_parts(encoder)
    if missing:
        raise ValueError(
            "encoder must be None, a sentence-transformers model name or path, or an Encoder object "
            f"(with {', '.join(ENCODER_PARTS)}), got {type(encoder).__name__} (no {', '.join(missing)})"
        )


def check_path(field: str, path: object) -> None:
    """``ValueError`` naming ``field`` unless ``path`` is ``None`` or a str or os.PathLike without NUL
    (the OS refuses NUL with a bare "embedded null byte" that does not say which argument)."""
    if path is None:
        return
    if not isinstance(path, (str, os.PathLike)):
        raise ValueError(f"{field} must be a path (str or os.PathLike) or None, got {type(path).__name__}")
    text = os.fspath(path)
    nul = "\x00" if isinstance(text, str) else b"\x00"
    if nul in text:
        raise ValueError(f"{field} contains a NUL character (position {text.index(nul)}): not a path, got {path!r}")
    if not text.strip():  # Path("") is the current folder: an unset variable put a store there (until 2026-12-07)
        raise ValueError(f"{field} must not be empty (None for the default), got {path!r}")


class MemoryStore:
    """A Chroma-backed long-term memory with a journal; open it with :meth:`local` or :meth:`server`.

    The store holds the sentence encoder (loaded lazily) because a ``text`` query must be
    embedded with the encoder that wrote the memories. Read and write through
    :meth:`for_user`. Close it (or use it as a context manager) to release the lock.

    Attributes:
        journal: the :class:`~recall_core.memory.journal.Journal` (the source of truth).
        index: the :class:`~recall_core.memory.index.ChromaIndex` (rebuildable from the journal).
        retrieval: how text queries rank memories by default (see :mod:`recall_core.memory.search`).
        unit: what a found memory's text holds by default: ``"turn"``, ``"window"``, ``"exchange"``
            or ``"answered"``.
        roles: whose memories a search returns by default (``("user",)``: the user's words only;
            ``None``: everyone's).
    """

    def __init__(
        self,
        backend: Backend,
        journal: Journal,
        encoder: Encoder | str | Path | None = None,
        lock: LocalLock | None = None,
        root: Path | None = None,
        retrieval: str = "hybrid",
        unit: str = DEFAULT_UNIT,
        roles: tuple[str, ...] | None = DEFAULT_ROLES,
    ) -> None:
        check_encoder(encoder)
        self.retrieval = check_retrieval(retrieval)
        self.unit = check_unit(unit)
        self.roles = check_roles(roles)
        self.journal = journal
        self.index = ChromaIndex(backend)
        self.root = root
        self._encoder_spec = encoder
        self._encoder: Encoder | None = encoder if encoder is not None and not isinstance(encoder, (str, Path)) else None
        self._lock = lock
        self._writer: MemoryWriter | None = None
        self._closed = False
        self._opened_at = time.time()
        #: A read-only store (:meth:`local` with ``read_only=True``) refuses writes; ``_snapshot`` is its copy.
        self.read_only = False
        self._snapshot: Path | None = None
        #: What opening found wrong with a local index (nothing for a server: its files are not ours).
        self.open_check = OpenCheck()
        self._checked_at_open = False  # a local index is trusted at close only if opening checked it
        #: Indexes, after a search, what an outage left pending for the user (upkeep/catch_up.py).
        self.catch_up = SearchCatchUp(self)

    # -- opening -----------------------------------------------------------------------------

    @classmethod
    def local(
        cls,
        path: str | Path | None = None,
        encoder: Encoder | str | Path | None = None,
        retrieval: str = "hybrid",
        unit: str = DEFAULT_UNIT,
        roles: tuple[str, ...] | None = DEFAULT_ROLES,
        read_only: bool = False,
    ) -> MemoryStore:
        """Open (or create) an embedded store in ``path`` (default: :func:`~recall_core.paths.default_memory_dir`).

        Only one process may have a local store open: Chroma's persistent folder gives a
        second process stale results or hangs. A second opener, even in the same process,
        gets :class:`MemoryLockedError`; share a memory between processes with a server
        (``chroma run --path PATH/chroma``) and :meth:`server`.

        Unless the index folder is as a store that closed cleanly left it, opening checks it
        first (health.py): damaged HNSW files are fenced off (searching them raises
        :class:`MemoryUnavailableError` instead of crashing the process), and users with fewer
        memories in the index than in the journal are found. Either gives a
        :class:`MemoryIndexWarning` naming the command that fixes it; ``store.open_check``
        holds the details.

        Args:
            path: folder of the store.
            encoder: an :class:`~recall_core.memory.encoders.Encoder`, a sentence-transformers
                name or path, or ``None`` for the packaged all-MiniLM-L6-v2.
            retrieval: how text queries rank memories: ``"hybrid"`` (vector + BM25 words,
                the default), ``"vector"`` or ``"lexical"``.
            unit: what a found memory's text holds: ``"answered"`` (the default: the turn after
                the turn it answers: a reply after the user's turn, a user's answer after the
                question), ``"turn"`` (its own words), ``"exchange"`` (a turn and the reply to it)
                or ``"window"`` (a turn and the one before it).
            roles: whose memories a search returns: ``("user",)`` the user's own words (the
                assistant's replies stay as context of the turns around them), ``None`` everyone's.
            read_only: search and read without writing anything where the store is (read-only
                storage, a store another process has open): no lock is taken, the store is read
                from a snapshot made at opening (copied to a temporary folder, removed at close),
                and every write raises :class:`~recall_core.memory.errors.MemoryReadOnlyError`.

        Raises:
            ValueError: ``path`` is a file, not a path or has a NUL (or, with ``read_only``, holds no
                store); ``encoder`` is none of the above.
            MemoryLockedError: another process or store object has it open (not with ``read_only``).
            MemoryReadOnlyError: the folder cannot be written (open it with ``read_only=True``).
        """
        check_path("path", path)
        check_encoder(encoder)
        check_retrieval(retrieval)
        check_unit(unit)
        check_roles(roles)
        if not isinstance(read_only, bool):
            raise ValueError(f"read_only must be True or False, got {read_only!r}")
        if read_only:
            return cls._local_read_only(path, encoder, retrieval, unit, roles)
        opened_at = time.time()  # the segment files Chroma writes from then on are cleared at the close
        backend, journal, lock = open_local(path)
        scrub_if_due(lock.root)  # a forget's, in a process killed before its close: before a client opens
        store = cls(backend, journal, encoder, lock=lock, root=lock.root, retrieval=retrieval, unit=unit, roles=roles)
        store._opened_at = opened_at
        try:
            store.open_check = check_local_index(lock.root, lock.root / CHROMA_DIR, journal, store.index)
            store._checked_at_open = True
            for message in store.open_check.warnings(store.location):
                warnings.warn(message, MemoryIndexWarning, stacklevel=2)
            indexed_before = (lock.root / CHROMA_DIR / "chroma.sqlite3").exists() and WHOLE_INDEX not in store.open_check.damaged
            if indexed_before and (unjournaled := index_without_journal(journal, store.index)):
                warnings.warn(lost_journal_warning(store.location, journal, unjournaled), MemoryIndexWarning, stacklevel=2)
            store._finish_renames()
        except BaseException:
            store.close()
            raise
        return store

    @classmethod
    def _local_read_only(
        cls, path: str | Path | None, encoder: Any, retrieval: str, unit: str, roles: tuple[str, ...] | None
    ) -> MemoryStore:
        backend, journal, snapshot = open_local_snapshot(path)
        store = cls(backend, journal, encoder, retrieval=retrieval, unit=unit, roles=roles)
        store.read_only, store._snapshot = True, snapshot
        try:
            store.open_check = check_local_index(snapshot, snapshot / CHROMA_DIR, journal, store.index)
            for message in store.open_check.warnings(store.location):
                warnings.warn(message, MemoryIndexWarning, stacklevel=3)
        except BaseException:
            store.close()
            raise
        return store

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
        unit: str = DEFAULT_UNIT,
        roles: tuple[str, ...] | None = DEFAULT_ROLES,
    ) -> MemoryStore:
        """Connect to a Chroma server (``chroma run --path DIR --host 127.0.0.1 --port 8000``).

        The connection is made on first use, so turns can be journaled while the server is
        down (they are indexed later by ``repair``). A server that lost its data (restarted
        without its volume) is found by its mark when the client connects or finds a
        collection gone, and this client's journal is indexed there again
        (:mod:`~recall_core.memory.upkeep.marks`).

        The Chroma 1.x server has **no authentication** of its own: keep it on 127.0.0.1, or
        put an authenticating proxy in front and pass its token in ``headers`` (for example
        ``{"Authorization": "Bearer ..."}``). Tenants and databases are namespaces, not security.

        Args:
            host, port, ssl: where the server (or the proxy) listens.
            headers: HTTP headers sent with every request.
            encoder: as in :meth:`local`.
            journal_path: the journal of this client (default:
                ``$RECALL_HOME/memory/server-journals/HOST_PORT.sqlite3``, with ``_TENANT_DATABASE``
                before the suffix when either is given: each database its own). Processes on one
                machine may share it; each machine writing to the server keeps its own.
            timeout: seconds before a request to the server is given up.
            tenant, database: Chroma namespaces (defaults: Chroma's).
            retrieval: as in :meth:`local`. The word (BM25) half of ``"hybrid"`` searches this
                client's journal, so it covers the memories written through it (every process
                sharing ``journal_path``); memories another machine wrote are found by vector only.
            unit: as in :meth:`local` (the turns around a memory come from this client's journal).
        """
        port = check_server(host, port, timeout)
        check_connection(headers, ssl, tenant, database)
        check_path("journal_path", journal_path)
        check_encoder(encoder)
        check_retrieval(retrieval)
        check_unit(unit)
        check_roles(roles)
        backend, journal = open_server(host, port, headers, journal_path, ssl, timeout, tenant, database)
        store = cls(backend, journal, encoder, retrieval=retrieval, unit=unit, roles=roles)
        # A server that lost its data is told from another client's forget by its mark (upkeep/marks.py).
        marks = ServerMarks(store)
        store.index.check_server, store.index.await_heal = marks.check, marks.await_heal
        store._finish_renames()
        return store

    def _finish_renames(self) -> None:
        """Index the rows of users whose ids the journal upgrade normalised (schema 3), under
        their new collections; if the index cannot be reached, ``repair`` does it later."""
        if not self.journal.renamed_users():
            return
        try:
            moved = finish_renames(self)
        except MemoryStoreError as exc:
            logger.warning("user ids normalised to NFC in %s; their memories wait for `recall doctor --repair`: %s",
                           self.journal.path, exc)  # fmt: skip
            return
        logger.info("user ids normalised to NFC: %d memories moved to their new collections", moved)

    # -- properties ----------------------------------------------------------------------------

    @property
    def kind(self) -> str:
        """``"local"`` or ``"server"``."""
        return self.index.kind

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closed

    @property
    def location(self) -> str:
        """The folder of a local store, the URL of a server."""
        return self.index.location

    @property
    def encoder(self) -> Encoder:
        """The sentence encoder, loaded lazily: the one given, else the one the journal records for its
        memories (a store written with ``encoder="hash"`` is searched and rebuilt with it, never
        re-encoded by another), else the packaged all-MiniLM-L6-v2.

        Raises:
            ValueError: none was given and the memories were written by several encoders.
        """
        if self._encoder is None:
            self._encoder = load_encoder(self._encoder_spec if self._encoder_spec is not None else self._recorded_encoder())
        return self._encoder

    def _recorded_encoder(self) -> str | None:
        names = self.journal.encoders()
        if len(names) > 1:
            raise ValueError(
                f"the memories at {self.location} were written by several encoders ({', '.join(map(repr, names))}): "
                "choose one with encoder= (MemoryStore.local(encoder=...), `--encoder NAME` on the command line); "
                "rebuild_index(store, reencode=True) (`recall rebuild-index --reencode`) then embeds them all with it"
            )
        return names[0] if names else None

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
        """The :class:`~recall_core.memory.writer.MemoryWriter` that :class:`UserMemory` writes with.

        A writer with the defaults unless one was set: ``store.writer = MemoryWriter(store, dated=False)``
        makes every ``add``, ``put`` and ``update`` of this store compose what is searched that way.
        """
        if self.read_only:
            raise MemoryReadOnlyError(
                f"the memory at {self.location} is open read-only: writes are refused "
                "(open it with MemoryStore.local(path) to write)"
            )
        if self._writer is None:
            self._writer = MemoryWriter(self)
        return self._writer

    @writer.setter
    def writer(self, writer: MemoryWriter) -> None:
        if not isinstance(writer, MemoryWriter) or writer.store is not self:
            raise ValueError("store.writer must be a MemoryWriter made on this store: MemoryWriter(store, ...)")
        self._writer = writer

    # -- users ---------------------------------------------------------------------------------

    def for_user(self, user_id: str) -> UserMemory:
        """The memory of one user: the only way to read or write."""
        return UserMemory(self, check_user_id(user_id))

    def users(self) -> list[str]:
        """User ids with memories in this store's journal (administration, not search)."""
        return self.journal.users()

    def import_memories(self, source: str | Path | IO[str] | Iterable[Mapping[str, Any]],
                        progress: bool = False) -> ImportReport:  # fmt: skip
        """Import memories exported by :meth:`UserMemory.export_jsonl` (a JSONL path or stream)
        or :meth:`UserMemory.export` (the dicts), keeping their ids, text, roles, timestamps,
        sessions, metadata and keys; ids the store holds already are left alone.

        The whole input is checked first: a bad line raises ``ValueError`` naming the line and
        the field, and nothing is written. See :mod:`recall_core.memory.upkeep.transfer`.
        """
        if self._closed:
            raise MemoryStoreError("this MemoryStore is closed")
        return import_jsonl(self, source, progress=progress)

    # -- lifecycle -----------------------------------------------------------------------------

    def close(self) -> None:
        """Close the index client and the journal, and release the lock. Safe to call twice."""
        if self._closed:
            return
        self._closed = True
        self.index.close()
        if self.root is not None:
            scrub_if_due(self.root)  # what a forget left in the files; only now that no Chroma client of ours writes
            clear_capacity_written(self.root, self._opened_at)  # hnswlib saves memory it never cleared
            # Trust the index folder as it is now only if nothing was found wrong with it:
            # otherwise the next open checks it again.
            if self._checked_at_open and self.open_check.ok and not self.index.damaged():
                trust(self.root, self.root / CHROMA_DIR)
            else:
                distrust(self.root)
        self.journal.close()
        if self._lock is not None:
            self._lock.release()
        if self._snapshot is not None:
            shutil.rmtree(self._snapshot, ignore_errors=True)

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

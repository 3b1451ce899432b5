"""`ChromaIndex`: the Chroma side of the memory (client, per-user collections, writes, nearest neighbours).

The index is rebuildable: the journal is the source of truth (journal.py). Each user has a
collection of their own, named from a hash of the user id (``recall-m-<hash>``), which records
its owner, encoder and dimension in its metadata. Chroma's failures are mapped here: "cannot
reach the index" becomes :class:`MemoryUnavailableError`, a collection deleted by another
client is looked up again once.

A collection whose files were found damaged (see health.py) is never handed to Chroma again
in this process, because Chroma crashes the process on some damaged HNSW files: every use
raises :class:`MemoryUnavailableError` saying how to rebuild it, and it can only be dropped.
A rebuild writes a user's rows into staging collections and swaps them in only when they are
complete (:meth:`ChromaIndex.swap_in`), so a failed rebuild leaves the old collections as they were.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np

from recall_core.memory.backends import Backend
from recall_core.memory.errors import (
    EncoderMismatchError,
    MemoryIsolationError,
    MemoryStoreError,
    MemoryUnavailableError,
    index_failure_hint,
    is_not_found,
    is_unavailable,
    namespace_lost,
)
from recall_core.memory.journal import DELETING, JournalRow
from recall_core.memory.records import index_metadata
from recall_core.memory.upkeep.quiet import Quiet

logger = logging.getLogger(__name__)

T = TypeVar("T")

MEMORIES = "m"
#: LM-space keys (``recall-k-<hash>``), which earlier releases wrote for a hidden query without a
#: query head. Nothing writes or searches them now: they are deleted with their memories and
#: their user, ``doctor`` reports what is left as obsolete and ``repair`` drops it.
OBSOLETE_LM_KEYS = "k"
#: Every kind of collection a user may have.
KINDS = (MEMORIES, OBSOLETE_LM_KEYS)
#: HNSW settings of new collections: cosine space, Chroma's defaults otherwise. A denser graph
#: and a wider beam made large collections much slower to query, and the small collections,
#: where recall matters most, are searched exactly anyway.
HNSW_CONFIG = {"space": "cosine"}
#: Seconds a server store trusts a collection's size (other clients write too): Chroma's
#: count() can cost more than the search itself. A local store is this process's alone, so
#: there the size is known from its own writes.
SIZE_TTL_S = 10.0


#: A Chroma server's transient answer for a collection whose first segment it has not written yet.
NOT_ON_DISK_YET = "Error creating hnsw segment reader: Nothing found on disk"

#: What a server store's mark says (:attr:`ChromaIndex.check_server`, upkeep/marks.py): the server
#: kept its data, lost it (and the journal's memories were indexed again), or nothing to compare yet.
MARK_KEPT, MARK_LOST, MARK_FIRST = "kept", "lost", "first"

#: Suffix of the collections a rebuild fills before swapping them in.
STAGING_SUFFIX = "-next"
#: What to run when a local index is damaged.
REBUILD_HINT = "run `recall rebuild-index --fresh` (rebuild_index(store, fresh=True)): the journal holds every memory"


def collection_name(user_id: str, kind: str = MEMORIES) -> str:
    """The Chroma collection of ``user_id`` (``kind``: one of :data:`KINDS`).

    A hash, so that any user id (emails, unicode, slashes) makes a valid name and the name
    reveals nothing; 160 bits, so two users never share one.
    """
    digest = hashlib.sha256(user_id.encode("utf-8")).hexdigest()[:40]
    return f"recall-{kind}-{digest}"


def staging_name(user_id: str, kind: str = MEMORIES) -> str:
    """The collection a rebuild of ``user_id`` fills before it replaces :func:`collection_name`'s."""
    return collection_name(user_id, kind) + STAGING_SUFFIX


class ChromaIndex:
    """The Chroma client of one store and what it knows about each user's collections.

    Caches (all per collection name, a user's dropped together by :meth:`forget_cached`, all by
    :meth:`reset`): the collection handles, the dimension already checked against each
    collection, and each collection's size. Damaged collections (:meth:`mark_damaged`) are
    remembered for the life of the object, until dropped or swapped out.
    """

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self._client: Any = None
        self._client_lock = threading.Lock()
        self._collections: dict[str, Any] = {}
        self._making: dict[str, threading.RLock] = {}  # per collection name: one thread looks up and makes it
        self._checked: dict[str, int] = {}
        self._sizes: dict[str, tuple[int, float]] = {}
        self._damaged: dict[str, str] = {}
        self._max_batch: int | None = None
        self._closed = False
        self._resets = 0  # times the client was closed and forgotten: a call one cuts short says so (:meth:`call`)
        self.quiet = Quiet()  # every Chroma call holds it shared; doctor's check of the files alone (upkeep/quiet.py)
        #: Held by doctor, repair and rebuild_index: one at a time in this process, since each may reset the
        #: client under another's reads (two doctors at once: the whole index reported damaged, a reviewer).
        self.upkeep = threading.RLock()
        #: Set by a server store (upkeep/marks.py): called when the client opens and when a user's
        #: collection is found gone; returns :data:`MARK_KEPT`, :data:`MARK_LOST` or :data:`MARK_FIRST`.
        self.check_server: Callable[[], str] | None = None
        #: Set with it: waits for a heal another thread is running; ``True`` if there was one.
        self.await_heal: Callable[[], bool] | None = None

    @property
    def kind(self) -> str:
        """``"local"`` or ``"server"``."""
        return self.backend.kind

    @property
    def location(self) -> str:
        return self.backend.location

    # -- client ---------------------------------------------------------------------------------

    def client(self) -> Any:
        """The Chroma client, opened on first use."""
        if self._closed:
            raise MemoryStoreError("this MemoryStore is closed")
        if self._client is None:
            opened = False
            with self._client_lock:
                if self._client is None:
                    self._client = self.call(self.backend.open_client)
                    opened = True
            if opened and self.check_server is not None:
                try:
                    self.check_server()
                except BaseException:
                    self._client = None  # the next call opens and checks again
                    raise
        return self._client

    def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run a Chroma call, turning "cannot reach the index" failures into MemoryUnavailableError.
        A server's "Nothing found on disk" (a collection's first segment not written there yet,
        chroma-core/chroma#4212; a reader beside writers met it once in the load test) is retried once."""
        resets = self._resets
        for attempt in (1, 2):
            try:
                with self.quiet.call():
                    return fn(*args, **kwargs)
            except MemoryStoreError:
                raise
            except Exception as exc:
                if self._closed:  # closed by another thread during the call: not the index's fault
                    raise MemoryStoreError("this MemoryStore is closed") from exc
                if self._resets != resets:  # reopened meanwhile (a doctor or repair in another thread; until
                    # 2026-12-07 Chroma's AttributeError, a reviewer): what was journaled is safe
                    raise MemoryUnavailableError(f"the memory index at {self.location} was reopened during the call "
                                                 "(a doctor or repair in another thread): try again") from exc  # fmt: skip
                if attempt == 1 and self.kind == "server" and NOT_ON_DISK_YET in str(exc):
                    time.sleep(0.2)
                    continue
                if is_unavailable(exc, self.kind):
                    hint = index_failure_hint(self.kind, self.location, f"`recall doctor` checks the index; {REBUILD_HINT}")
                    raise MemoryUnavailableError(f"the memory index at {self.location} failed: {exc} ({hint})") from exc
                if self.kind == "server" and namespace_lost(exc):
                    # (until 2026-12-07 Chroma's raw InvalidArgumentError, on a write already journaled: a reviewer)
                    raise MemoryUnavailableError(
                        f"the Chroma server at {self.location} has lost this store's tenant or database ({exc}): "
                        "a server restarted without its data loses them too. Create them again (chromadb's "
                        "AdminClient: create_tenant, create_database); the journal is then indexed there again"
                    ) from exc
                raise
        raise AssertionError("unreachable")  # pragma: no cover

    def reset(self) -> None:
        """Close the client and forget every cache (the next call opens the index again)."""
        client, self._client = self._client, None
        self._resets += 1
        self.forget_all_cached()
        if client is not None:
            try:
                client.close()
            except Exception as exc:  # closing must not hide the caller's own error
                logger.debug("closing the Chroma client failed: %s", exc)

    def close(self) -> None:
        self._closed = True  # first: a call the close cuts short says so (:meth:`call`)
        self.reset()

    def max_batch_size(self) -> int:
        if self._max_batch is None:
            client = self.client()
            try:
                limit = int(self.call(client.get_max_batch_size))
            except MemoryUnavailableError:
                raise
            except Exception:
                limit = 1000
            # Over HTTP, keep each request short: a 5,000-item upsert can outlast the timeout
            # on a busy server, and a failed request is retried whole by `repair`.
            self._max_batch = min(limit, 1000) if self.kind == "server" else limit
        return self._max_batch

    # -- collections -----------------------------------------------------------------------------

    def collection(
        self,
        user_id: str,
        kind: str,
        create: bool = False,
        metadata: Mapping[str, Any] | None = None,
        staging: bool = False,
        on_create: Callable[[], None] | None = None,
    ) -> Any | None:
        """The collection of ``user_id`` (``None`` if it does not exist and ``create`` is false);
        ``staging``: the one a rebuild fills (:func:`staging_name`). ``on_create`` is called when
        ``create`` made it (one lookup more: Chroma's get-or-create cannot tell).

        Raises:
            MemoryUnavailableError: the collection is damaged (:meth:`mark_damaged`).
        """
        name = staging_name(user_id, kind) if staging else collection_name(user_id, kind)
        self._refuse_damaged(user_id, name)
        # Under the quiet gate, so that doctor's reset of the client cannot fall between the client's
        # lookup and its use (until 2026-12-08 a raw AttributeError on a journaled write: a reviewer).
        with self.quiet.call():
            cached = self._collections.get(name)
            if cached is not None:
                return cached
            # One thread at a time looks the collection up and makes it: two first writes of a new user
            # at once each found none, and the second, given the first's by get-or-create, called
            # on_create and warned the collection was lost (until 2026-12-07: a reviewer).
            with self._making.setdefault(name, threading.RLock()):  # (setdefault: atomic under the GIL)
                return self._collection(user_id, name, create, metadata, on_create)

    def _collection(
        self, user_id: str, name: str, create: bool, metadata: Mapping[str, Any] | None,
        on_create: Callable[[], None] | None,
    ) -> Any | None:  # fmt: skip
        cached = self._collections.get(name)
        if cached is not None:
            return cached
        resets = self._resets
        client = self.client()
        # With on_create, look first: Chroma's get-or-create cannot say whether it made the collection.
        collection = self._lookup(name) if not create or on_create is not None else None
        if collection is None:
            if not create:
                return None
            meta = {"recall": 1, "kind": "memories", "user_id": user_id}
            meta.update(metadata or {})
            # Cosine space: chromadb 1.5 takes it in `configuration` (the old `hnsw:space` metadata
            # is the legacy spelling). embedding_function=None: never let Chroma embed (it downloads).
            collection = self.call(
                client.get_or_create_collection,
                name=name, configuration={"hnsw": dict(HNSW_CONFIG)}, metadata=meta, embedding_function=None,
            )  # fmt: skip
            if on_create is not None:
                on_create()
        owner = (collection.metadata or {}).get("user_id")
        if owner is not None and owner != user_id:
            raise MemoryIsolationError(f"collection {name} belongs to another user; refusing to use it")
        if self._resets == resets:  # a handle of a client closed meanwhile (doctor, repair) is not kept: until
            self._collections[name] = collection  # 2026-12-08 it failed every later call for its user (a reviewer)
        return collection

    def _lookup(self, name: str) -> Any | None:
        """The collection ``name`` from the index, or ``None`` if it has none."""
        client = self.client()
        try:
            return self.call(client.get_collection, name=name, embedding_function=None)
        except MemoryStoreError:
            raise
        except Exception as exc:
            if is_not_found(exc):
                return None
            raise

    def with_collection(
        self,
        user_id: str,
        kind: str,
        fn: Callable[[Any], T],
        create: bool = False,
        metadata: Mapping[str, Any] | None = None,
        staging: bool = False,
        on_create: Callable[[], None] | None = None,
    ) -> T | None:
        """Call ``fn(collection)`` (``None`` if there is no collection and ``create`` is false).

        If another client deleted the collection meanwhile, it is looked up again once, and
        ``on_create`` (as in :meth:`collection`) is called: whatever is there now was made since.
        """
        for attempt in (0, 1):
            try:
                with self.quiet.call():  # the handle is used before doctor can reset its client (quiet.py)
                    collection = self.collection(
                        user_id, kind, create=create, metadata=metadata, staging=staging, on_create=on_create
                    )  # fmt: skip
                    if collection is None:
                        return None
                    return self.call(fn, collection)
            except MemoryStoreError:
                raise
            except Exception as exc:
                if attempt == 0 and is_not_found(exc):
                    self.forget_cached(user_id)
                    # The collection used before is gone. On a server, its mark says whether the
                    # server lost its data (and then every memory was indexed again).
                    healed = self.check_server is not None and self.check_server() == MARK_LOST
                    if on_create is not None and not healed:  # what is there now is new
                        on_create()
                    continue
                raise
        return None  # pragma: no cover - the loop always returns or raises

    def forget_all_cached(self) -> None:
        """Forget every user's collection handles, checked dimensions and sizes."""
        self._collections.clear()
        self._checked.clear()
        self._sizes.clear()

    def forget_cached(self, user_id: str) -> None:
        for kind in KINDS:
            for name in (collection_name(user_id, kind), staging_name(user_id, kind)):
                self._collections.pop(name, None)
                self._checked.pop(name, None)
                self._sizes.pop(name, None)

    # -- damage ----------------------------------------------------------------------------------

    def mark_damaged(self, damaged: Mapping[str, str]) -> None:
        """Never hand these collections (name -> what is wrong) to Chroma again: it could crash."""
        self._damaged.update(damaged)
        for name in damaged:
            self._collections.pop(name, None)

    def damaged(self) -> dict[str, str]:
        """The collections known to be damaged: name -> what is wrong."""
        return dict(self._damaged)

    def clear_damaged(self) -> None:
        """Forget every damage mark (the whole index was replaced)."""
        self._damaged.clear()

    def damage(self, user_id: str) -> str | None:
        """What is wrong with ``user_id``'s collections, or ``None`` if nothing is known to be."""
        found = [self._damaged[n] for n in (collection_name(user_id, k) for k in KINDS) if n in self._damaged]
        return "; ".join(found) if found else None

    def _refuse_damaged(self, user_id: str, name: str) -> None:
        reason = self._damaged.get(name)
        if reason is not None:
            raise MemoryUnavailableError(
                f"the index of user {user_id!r} at {self.location} is damaged ({reason}); {REBUILD_HINT}"
            )

    def size(self, user_id: str, kind: str, collection: Any) -> int:
        """How many items the collection holds (cached; see ``SIZE_TTL_S``)."""
        key = collection.name
        cached = self._sizes.get(key)
        now = time.monotonic()
        if cached is not None and (self.kind == "local" or now - cached[1] < SIZE_TTL_S):
            return cached[0]
        size = int(collection.count())
        self._sizes[key] = (size, now)
        return size

    def check_dimension(
        self, user_id: str, collection: Any, dimension: int, what: str, encoder_name: str | None = None
    ) -> None:
        """Raise EncoderMismatchError if ``dimension`` is not the collection's (checked once per collection).

        ``encoder_name``: the encoder that will search this collection; a different name with the
        same dimension only warns (the scores may be meaningless).
        """
        key = collection.name
        if self._checked.get(key) == dimension:
            return
        meta = collection.metadata or {}
        stored = meta.get("dim")
        name = meta.get("encoder")
        if stored is not None and int(stored) != int(dimension):
            raise EncoderMismatchError(
                f"dimension mismatch for user {user_id!r}: the stored memories were written by {name!r} with "
                f"{int(stored)} dimensions, but {what} has {int(dimension)} dimensions; use the encoder the memories "
                "were written with, or re-encode them with `rebuild_index(store, reencode=True)` "
                "(`recall rebuild-index --reencode`)"
            )
        if name is not None and encoder_name is not None and name != encoder_name:
            warnings.warn(
                f"the memories of user {user_id!r} were written by encoder {name!r}; this store searches them "
                f"with {encoder_name!r} (same dimension, but scores may be meaningless)",
                stacklevel=4,
            )
        self._checked[key] = dimension

    def collections(self) -> list[Any]:
        """Every recall collection in the index (for maintenance)."""
        client = self.client()
        result, offset, page = [], 0, 1000
        while True:
            # chromadb 1.x lists Collection objects (with metadata): one request per page.
            items = self.call(client.list_collections, limit=page, offset=offset)
            for item in items:
                if isinstance(item, str):  # older clients list names only
                    item = self.call(client.get_collection, name=item, embedding_function=None)
                if item.name.startswith("recall-"):
                    result.append(item)
            if len(items) < page:
                return result
            offset += page

    def delete_collection(self, name: str) -> None:
        """Delete a collection by name (one that names no user, found by ``doctor``)."""
        client = self.client()
        self.call(client.delete_collection, name=name)

    # -- writes ---------------------------------------------------------------------------------

    def write(
        self,
        rows: Sequence[JournalRow],
        encoder_name: str | None = None,
        staging: bool = False,
        on_missing: Callable[[str], None] | None = None,
    ) -> list[JournalRow]:
        """Upsert journal rows (with vectors) into their users' collections (``staging``: the ones a
        rebuild fills); return the rows written.

        Tombstoned rows are skipped. ``on_missing(user_id)`` is called for each user whose live
        collection was not there and was made for these rows: new, or lost since (a server that
        restarted empty, another client's forget, a collection deleted behind the store's back).
        """
        by_user: dict[str, list[JournalRow]] = {}
        for row in rows:
            if row.state == DELETING:
                continue
            if row.embedding is None:
                raise MemoryStoreError(f"memory {row.id} has no embedding to index")
            by_user.setdefault(row.user_id, []).append(row)
        for user_id, user_rows in by_user.items():
            created = None if staging or on_missing is None else (lambda u=user_id: on_missing(u))
            self._write_user(user_id, user_rows, encoder_name, staging, created)
        return [row for user_rows in by_user.values() for row in user_rows]

    def _write_user(
        self,
        user_id: str,
        rows: Sequence[JournalRow],
        encoder_name: str | None,
        staging: bool,
        on_create: Callable[[], None] | None,
    ) -> None:
        self._sizes.pop(staging_name(user_id) if staging else collection_name(user_id), None)
        dim = int(rows[0].embedding.shape[0])  # type: ignore[union-attr]
        written_by = rows[0].encoder or encoder_name
        meta = {"encoder": written_by, "dim": dim}
        batch = self.max_batch_size()

        def upsert(collection: Any, part: Sequence[JournalRow], vectors: list[np.ndarray]) -> None:
            metadatas = [index_metadata(r) for r in part]
            if not staging:  # (a rebuild's staging collection is new: nothing to merge into)
                _drop_removed_keys(collection, part, metadatas)
            collection.upsert(
                ids=[r.id for r in part], embeddings=np.stack(vectors), documents=[r.text for r in part],
                metadatas=metadatas,
            )  # fmt: skip

        for start in range(0, len(rows), batch):
            part = rows[start : start + batch]
            collection = self.collection(
                user_id, MEMORIES, create=True, metadata=meta, staging=staging, on_create=on_create
            )  # fmt: skip
            self.check_dimension(user_id, collection, dim, f"the encoder {written_by!r}", encoder_name)
            vectors = [r.embedding for r in part]
            self.with_collection(
                user_id, MEMORIES, lambda c, p=part, v=vectors: upsert(c, p, v), create=True, metadata=meta,
                staging=staging, on_create=on_create,
            )  # fmt: skip

    def drop_staging(self, user_id: str) -> None:
        """Delete what an earlier, unfinished rebuild of ``user_id`` left in staging."""
        for kind in KINDS:
            self._delete_named(staging_name(user_id, kind))
        self.forget_cached(user_id)

    def swap_in(self, user_id: str) -> None:
        """Replace ``user_id``'s collections by the staging ones a rebuild filled (a kind with no
        staging collection is dropped: the rebuilt user has none of it).

        Chroma cannot rename over an existing name, so the old collection is deleted first;
        a crash between the two steps leaves the user with no collection and the rows in the
        journal, which ``repair`` indexes again.
        """
        for kind in KINDS:
            live, staged = collection_name(user_id, kind), staging_name(user_id, kind)
            collection = self._collections.get(staged) or self._lookup(staged)
            self._delete_named(live)
            self._damaged.pop(live, None)
            if collection is not None:
                self.call(collection.modify, name=live)
        self.forget_cached(user_id)

    def _delete_named(self, name: str) -> None:
        """Delete a collection by name if it exists (deleting never loads its files)."""
        client = self.client()
        try:
            self.call(client.delete_collection, name=name)
        except MemoryStoreError:
            raise
        except Exception as exc:
            if not is_not_found(exc):
                raise

    def delete(self, user_id: str, ids: Sequence[str]) -> None:
        """Delete ids from the user's collections (every kind: an obsolete LM key of theirs goes too)."""
        if not ids:
            return
        for kind in KINDS:
            self._sizes.pop(collection_name(user_id, kind), None)
            self.with_collection(user_id, kind, lambda c: c.delete(ids=list(ids)))

    def drop_user(self, user_id: str) -> None:
        """Delete the user's collections from the index (damaged ones too: deleting is safe)."""
        for kind in KINDS:
            name = collection_name(user_id, kind)
            self._delete_named(name)
            self._damaged.pop(name, None)
        self.forget_cached(user_id)

    # -- reads ------------------------------------------------------------------------------------

    def get(self, user_id: str, ids: Sequence[str], kind: str = MEMORIES, include: Sequence[str] = ()) -> Any:
        """Chroma's ``get`` of ``ids`` in the user's collection (``None`` if it has none)."""
        return self.with_collection(user_id, kind, lambda c: c.get(ids=list(ids), include=list(include)))

    def count(self, user_id: str, kind: str = MEMORIES) -> int:
        """How many items the user's collection holds, counted now."""
        return int(self.with_collection(user_id, kind, lambda c: c.count()) or 0)

    def page(self, user_id: str, include: Sequence[str], limit: int, offset: int, where: Mapping[str, Any] | None = None) -> Any:
        """One page of the user's memories in the index's own order (``None`` if there is no collection)."""
        return self.with_collection(
            user_id, MEMORIES,
            lambda c: c.get(include=list(include), limit=limit, offset=offset, where=dict(where) if where else None),
        )  # fmt: skip


def _drop_removed_keys(collection: Any, rows: Sequence[JournalRow], metadatas: list[dict[str, Any]]) -> None:
    """Have the upsert remove the metadata keys the index holds for these rows and their journal
    rows no longer have: Chroma's upsert merges a record's metadata into what the index holds (a
    key is removed only when given as ``None``), so a key dropped by ``update(..., metadata=...)``
    stayed in the index, in every search's and ``get``'s metadata and ``where`` filter, until
    2026-12-07. Every row is read back (one ``get`` a batch, about 25 ms for 1,000 ids not there,
    against 660 ms for their upsert, locally): a row written again over a tombstone whose delete
    failed, ``repair``'s rewrite of a mismatched row, or another journal's write of the same id
    can all meet an older record (a reviewer; "changed since the first write" missed those)."""
    found = collection.get(ids=[row.id for row in rows], include=["metadatas"])
    held = dict(zip(found["ids"], found["metadatas"] or [], strict=False))
    for row, metadata in zip(rows, metadatas, strict=True):
        for key in held.get(row.id) or {}:
            metadata.setdefault(key, None)

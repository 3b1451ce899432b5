"""`MemoryWriter`: the one write path of the memory (journal first, index second).

A turn is checked (role, non-empty UTF-8 text, metadata), split into chunks that fit the
encoder's window, given deterministic ids, appended to the journal, embedded in batches
(this is where the throughput comes from), and indexed.
Updates, keyed writes (``put``), deletes and ``forget`` go through here too, so every
memory is searched by what :class:`~recall_core.memory.text.composition.SearchText` composes,
however it was written.

Ids are a hash of (user, session, turn index, chunk) when the caller gives the turn's
index (files), else of (user, session, content, chunk): writing the same turn twice never
duplicates it, and a given position holds one turn (:mod:`recall_core.memory.positions`). A
keyed memory's id is a hash of (user, key).
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from recall_core.memory.backends import scrub_deleted
from recall_core.memory.encoders import Encoder, encode_checked
from recall_core.memory.errors import (
    EncoderMismatchError,
    EncoderOutputError,
    MemoryUnavailableError,
    free_note,
)
from recall_core.memory.index import MEMORIES
from recall_core.memory.journal import DELETING, INDEXED, PENDING, JournalRow, same_metadata
from recall_core.memory.protocols import StoreParts, derived_cache
from recall_core.memory.records import Turn, index_metadata, key_memory_id
from recall_core.memory.search import expand
from recall_core.memory.text.composition import CONTEXT_RESERVE, SearchText, check_window
from recall_core.memory.text.ingest import IngestReport, ingest_file
from recall_core.memory.text.neighbours import context_of, following
from recall_core.memory.text.new_rows import OnTaken, journal_turns
from recall_core.memory.text.prepared import Prepared, prepare_turn
from recall_core.memory.upkeep.lost import found_missing
from recall_core.memory.upkeep.taken_back import mark_written, scrub_forgotten, tidying
from recall_core.memory.validation import (
    DEFAULT_SESSION,
    check_content,
    check_count,
    check_flag,
    check_ids,
    check_key,
    check_metadata,
    check_role,
    check_session,
    check_user_id,
    format_timestamp,
)
from recall_core.paths import drop_derived
from recall_core.types import MemoryCandidate

logger = logging.getLogger(__name__)

#: Older pending memories of a user indexed with each of their writes (see ``MemoryWriter._catch_up``).
CATCH_UP = 512
#: Default chunk size in encoder tokens: short enough to retrieve precisely and to inject
#: cheaply, far inside all-MiniLM-L6-v2's 256-token window.
DEFAULT_CHUNK_TOKENS = 128


class MemoryWriter:
    """Writes conversation turns into a :class:`~recall_core.memory.store.MemoryStore`.

    Args:
        store: where the memories go.
        encoder: optional; if given it becomes the store's encoder (it must not differ from
            one the store already uses). ``None`` uses the store's.
        chunk_tokens: most encoder tokens per memory; longer turns are split (never dropped).
            Capped by the encoder's window.
        batch_size: turns embedded per encoder batch.
        dated: search each memory with the day of its turn in front, ``"[8 May 2023] "``, so
            that "when" questions find it.
        window: when to search it with the end of the turn before (same session) on the line
            above: ``"questions"`` (the default: when that turn asks something, so that an answer,
            "Yes, last Tuesday", is found by the question it answers), ``"always"`` (``True``) or
            ``"never"`` (``False``).
        speakers: begin each searched line with its speaker: ``metadata["speaker"]`` if the
            turn has one, else its role (``"User: ..."``).
        precompute_kv: compute each written memory's keys and values for ``inject_mode="kv"``
            now, not at its first recall: a ``RecallGenerator``, a
            :class:`~recall_core.kv.memories.KVPrecompute` (``KVPrecompute.of((model, tokenizer))``)
            or any :class:`~recall_core.memory.protocols.DerivedCache`. An updated memory gets new
            blocks, a deleted or forgotten one loses them (a failure to compute warns; the write
            stands).

    These three shape only what is *searched* (embedded and word-indexed, the journal's
    ``context``; see :mod:`~recall_core.memory.text.composition`). A memory's ``text``, what a search
    returns and recall injects, stays the turn's own words. The defaults are what won on the
    LoCoMo dev file with hybrid search (BENCHMARKS.md).
    """

    def __init__(
        self,
        store: StoreParts,
        encoder: Encoder | str | Path | None = None,
        chunk_tokens: int = DEFAULT_CHUNK_TOKENS,
        batch_size: int = 64,
        dated: bool = True,
        window: bool | str = "questions",
        speakers: bool = True,
        precompute_kv: Any = None,
    ) -> None:
        chunk_tokens = check_count("chunk_tokens", chunk_tokens, 8)
        self.store = store
        if encoder is not None:
            store.use_encoder(encoder)
        self.chunk_tokens = chunk_tokens
        self.batch_size = check_count("batch_size", batch_size, 1)
        flags = {"dated": check_flag("dated", dated), "speakers": check_flag("speakers", speakers)}
        self.search_text = SearchText(window=check_window(window), **flags)
        self.kv = derived_cache(precompute_kv) if precompute_kv is not None else None
        self._sized: set[str] = set()  # users whose stored vectors have this encoder's size
        self._server_sized: set[str] = set()  # the same, of a server's collections (_check_server_sizes)

    @property
    def encoder(self) -> Encoder:
        return self.store.encoder

    @property
    def dated(self) -> bool:
        return self.search_text.dated

    @property
    def window(self) -> str:
        return self.search_text.window

    @property
    def speakers(self) -> bool:
        return self.search_text.speakers

    # -- writing turns -----------------------------------------------------------------------

    def add_turn(
        self,
        user_id: str,
        role: str,
        content: str | bytes,
        session_id: str | None = None,
        timestamp: Any = None,
        metadata: Mapping[str, Any] | None = None,
        turn_index: int | None = None,
    ) -> list[str]:
        """Remember one turn; return the ids of its memories (one per chunk).

        Args:
            user_id: whose memory this is.
            role: ``"user"``, ``"assistant"`` or ``"system"``.
            content: the text (str, or UTF-8 bytes).
            session_id: the conversation it belongs to (default ``"default"``).
            timestamp: datetime, epoch seconds or a string; default now (UTC).
            metadata: extra flat metadata kept with each chunk.
            turn_index: the turn's position in its session; default: next in the journal.
                Given, it makes the id positional (re-ingesting a file never duplicates), and
                the position holds one turn: another text or role there is refused.

        Raises:
            ValueError: bad role, empty or non-UTF-8 content, bad metadata, another turn at
                ``turn_index`` (nothing is written).
            MemoryUnavailableError: the index is unreachable; the turn is in the journal and
                ``repair`` indexes it later.
        """
        turn = Turn(user_id, role, content, session_id, timestamp, metadata, turn_index)
        return self.add_turns([turn])[0]

    def add_turns(self, turns: Iterable[Turn | Mapping[str, Any]], progress: bool | Any = False) -> list[list[str]]:
        """Remember many turns, embedding them in batches; return the ids of each turn, in order.

        Every turn is checked before anything is written: one bad turn raises ``ValueError``
        and none is written. ``progress`` shows a tqdm bar (or pass a tqdm instance to update).
        """
        if turns is None or isinstance(turns, (str, bytes, Mapping, Turn)) or not isinstance(turns, Iterable):
            raise ValueError(
                f"turns must be an iterable of turns (Turn objects or mappings), got {type(turns).__name__}; "
                "add_turn writes one turn, or pass [turn] (nothing was written)"
            )
        return self._write_all(self._prepare_all(turns), progress)

    def put(
        self,
        user_id: str,
        key: str,
        text: str | bytes,
        *,
        role: str = "user",
        session_id: str | None = None,
        timestamp: Any = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> str:
        """Write, or replace, the memory ``user_id`` keeps under ``key``; return its id.

        A keyed memory is one memory (not chunked: only the first encoder window of a long
        text is searched, the whole text is returned). Putting a key again with other text
        or metadata replaces them (the memory keeps its id, role, session and position);
        putting it again unchanged writes nothing. It is searched like a turn, without the
        turn before (a keyed memory is a note, not part of a dialogue).
        """
        user_id = check_user_id(user_id)
        key = check_key(key)
        text = check_content(text)
        extra = {**check_metadata(metadata), "key": key}
        memory_id_ = key_memory_id(user_id, key)
        row = self.store.journal.get(memory_id_)
        if row is not None and row.user_id == user_id and row.state != DELETING:
            if row.text != text or not same_metadata(row.extra, extra):  # (1 and True differ)
                self.update(user_id, memory_id_, text, metadata=extra)
            return memory_id_
        prepared = Prepared(
            user_id=user_id, role=check_role(role), session_id=check_session(session_id),
            timestamp=format_timestamp(timestamp), extra=extra, turn_index=None, chunks=[text], ids=[memory_id_],
        )  # fmt: skip
        self._write([prepared])
        return memory_id_

    def update(
        self,
        user_id: str,
        memory_id: str,
        text: str | bytes,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        """Replace one memory's text (re-embedded) and, if given, its extra metadata.

        The memory keeps its id, role, session and turn index, and is searched exactly as a new
        turn with that text would be (date, speaker, the turn before). The turn after it in
        its session, which is searched with the end of this one, is searched by the new words
        too. The text is not chunked.

        Raises:
            KeyError: this user has no memory ``memory_id``.
        """
        user_id = check_user_id(user_id)
        text = check_content(text)
        if metadata is not None and not isinstance(metadata, Mapping):
            raise ValueError(f"metadata must be a mapping, got {type(metadata).__name__}")
        extra = check_metadata({k: v for k, v in metadata.items() if k != "key"}) if metadata is not None else None
        journal = self.store.journal
        if user_id not in self._sized:
            self._check_vector_size(user_id)
        unreachable = self._check_server_sizes([user_id])
        row = journal.get(memory_id)
        if row is None or row.user_id != user_id or row.state == DELETING:
            if unreachable is not None:  # the server holds the only copy, and it just did not answer
                raise MemoryUnavailableError(f"{unreachable}. Nothing was changed") from unreachable
            row = self.adopt(user_id, memory_id)
        if extra is not None and "key" in row.extra:
            extra["key"] = row.extra["key"]  # a keyed memory keeps its key
        updated = row.with_(text=text, extra=row.extra if extra is None else extra)
        ids = [memory_id]
        after = following(journal, self.search_text, updated)
        with self.store.journal.writing("the memory was not changed"):
            journal.update_text(memory_id, text, extra, context=context_of(journal, self.search_text, updated))
            context = None if after is None else context_of(journal, self.search_text, after)
            if after is not None and context != after.context:
                journal.set_context(after.id, context)
                ids.append(after.id)
        self._index_pending(ids, unreachable=unreachable)
        scrub_deleted(self.store.root)  # the old words in Chroma's files, at the close
        # The old text's derived copies go, whoever wrote them (this process or another).
        if self.kv is not None:
            self.kv.drop(memory_id)
        drop_derived([memory_id])
        # the turn after it too: its block holds this one's words where the store's unit joins them
        self._precompute_kv([memory_id, *self._next_turns([updated])])

    def delete(self, user_id: str, memory_ids: str | Iterable[str]) -> int:
        """Delete memories of ``user_id`` by id; return how many existed. Ids of other users are ignored."""
        user_id = check_user_id(user_id)
        ids = check_ids(memory_ids)
        if not ids:
            return 0
        journal, index = self.store.journal, self.store.index
        removed = [r for r in journal.get_many(list(ids)) if r.user_id == user_id and r.state != DELETING]
        with self.store.journal.writing("nothing was deleted"):
            journaled = journal.mark_deleting(user_id, ids)
            # The turn after a deleted one was searched with its words (kept until 2026-12-07, a reviewer)
            followers = {a.id: a for a in (following(journal, self.search_text, r) for r in removed) if a is not None}
            for after in followers.values():
                context = context_of(journal, self.search_text, after)
                if context != after.context:
                    journal.set_context(after.id, context)
        in_index = {r.id for r in self.store.for_user(user_id).get_many(ids)} if len(journaled) < len(ids) else set()
        # Hidden from every read from here on: their derived copies (KV blocks, on disk and in
        # process, whoever wrote them) go now, then the index rows.
        if self.kv is not None:
            self.kv.drop(ids)
        drop_derived(ids)
        # Tombstones first: if the index is unreachable, the delete is finished by `repair`.
        index.delete(user_id, ids)
        scrub_deleted(self.store.root)  # their words in Chroma's files, at the close (the journal's: its close)
        with tidying(self.store.journal, "the memories are deleted"):
            journal.purge(journaled)
        try:  # best effort: the delete is done (an encoder down must not say otherwise); the next catch-up
            self._index_pending(list(followers))  # indexes what is left pending
            self._precompute_kv(self._next_turns(removed))  # their blocks held the deleted words: dropped above
        except Exception as exc:
            logger.warning("%d memories after the deleted ones are left pending: %s", len(followers), exc)
        return len(set(journaled) | in_index)

    def forget(self, user_id: str) -> int:
        """Delete every memory of ``user_id``, index and journal; return how many there were."""
        user_id = check_user_id(user_id)
        journal, index = self.store.journal, self.store.index
        ids = [row.id for row in journal.rows(user_id, (PENDING, INDEXED, DELETING))]
        if self.kv is not None:
            self.kv.drop(ids)
        # Tombstones first: if the index is unreachable (raises here), `repair` finishes the job
        # instead of re-indexing what the user asked to forget.
        # From here on every read of the user hides what was forgotten (journal.Visibility).
        with self.store.journal.writing("nothing was forgotten"):
            journaled = journal.mark_user_deleting(user_id)
        # Every derived copy (KV blocks on disk and in any cache of this process, whoever wrote them).
        drop_derived(ids)
        # A damaged collection cannot be counted (Chroma would load it), only dropped.
        indexed = 0 if index.damage(user_id) else index.count(user_id)
        index.drop_user(user_id)
        with tidying(self.store.journal, f"user {user_id!r} is forgotten"):
            for old, new in journal.renamed_users():  # collections under an older spelling of the id
                if new == user_id:
                    index.drop_user(old)
                    journal.clear_renamed(old)
            journal.purge_user(user_id)
        scrub_forgotten(self.store)
        return max(journaled, indexed)

    def ingest(
        self, path: str | Path, user_id: str | None = None, progress: bool = True, skip_invalid: bool = False
    ) -> IngestReport:
        """Remember the turns of a file: JSONL (one turn per line) or LoCoMo-style JSON
        (:func:`recall_core.memory.text.ingest.ingest_file`, which says how)."""
        return ingest_file(self, path, user_id, progress, skip_invalid)

    # -- embedding and indexing (also used by repair and rebuild) -----------------------------

    def embed(self, rows: list[JournalRow]) -> list[JournalRow]:
        """Give rows their vectors, stored in the journal too; return the updated rows."""
        encoder = self.encoder
        need = [i for i, r in enumerate(rows) if r.embedding is None or r.encoder != encoder.name]
        if need:
            vectors = encode_checked(encoder, [rows[i].search_text for i in need], self.batch_size)
            self.store.journal.set_vectors([rows[i].id for i in need], vectors, encoder.name,
                                           [(rows[i].text, rows[i].context) for i in need])  # fmt: skip
            for j, i in enumerate(need):
                rows[i] = rows[i].with_(embedding=vectors[j], encoder=encoder.name)
        return rows

    def index(self, rows: Sequence[JournalRow]) -> None:
        """Put embedded journal rows into the index, then mark them indexed in the journal. A user
        whose collection the index no longer had is dealt with by :mod:`~recall_core.memory.upkeep.lost`."""
        lost: dict[str, set[str]] = {}

        def missing(user_id: str) -> None:  # called as the collection is made, before another thread writes to it
            lost.setdefault(user_id, set(self.store.journal.indexed_ids(user_id)))

        written = self.store.index.write(rows, self.encoder.name, on_missing=missing)
        mark_written(self.store, written)  # a delete or forget ran meanwhile: out of the index again

        def reindex(again: Sequence[JournalRow]) -> None:
            self.store.index.write(self.embed(list(again)), self.encoder.name)

        for user_id, indexed in lost.items():
            found_missing(self.store, user_id, {r.id for r in written if r.user_id == user_id}, reindex, indexed)

    # -- internals -------------------------------------------------------------------------

    def _max_tokens(self) -> int | None:
        window = self.encoder.max_tokens
        if not window:
            return self.chunk_tokens
        if self.search_text.adds_context:  # the context must fit the encoder's window too
            window = max(16, window - CONTEXT_RESERVE)
        return min(self.chunk_tokens, window)

    def _prepare(self, turn: Turn | Mapping[str, Any]) -> Prepared:
        return prepare_turn(turn, self._max_tokens(), self.encoder.count_tokens)

    def _prepare_all(self, turns: Iterable[Turn | Mapping[str, Any]]) -> list[Prepared]:
        prepared = []
        for position, turn in enumerate(turns):
            try:
                prepared.append(self._prepare(turn))
            except ValueError as exc:
                raise ValueError(f"turn {position}: {exc} (nothing was written)") from None
        return prepared

    def _write_all(self, prepared: list[Prepared], progress: bool | Any, on_taken: OnTaken | None = None) -> list[list[str]]:
        if not (progress is None or isinstance(progress, bool) or callable(getattr(progress, "update", None))):
            raise ValueError(f"progress must be True, False or a tqdm bar, got {progress!r} (nothing was written)")
        # Big steps: Chroma indexes large batches faster per item; the encoder batches inside.
        step = max(self.batch_size * 16, 1024)
        parts = [prepared[start : start + step] for start in range(0, len(prepared), step)]
        unreachable = self._check_server_sizes(p.user_id for p in prepared)
        # Every step journaled (one transaction) before any is indexed: an unreachable index leaves
        # every turn safe, and a turn refused at journaling (a taken position) leaves none written.
        with self.store.journal.writing(_not_written(len(prepared))):
            part_ids = [self._journal_turns(part, on_taken) for part in parts]
        if unreachable is not None:
            self._index_pending([i for ids in part_ids for i in ids], unreachable=unreachable)
        bar, own_bar = _progress(progress, len(prepared))
        try:
            for number, (part, ids) in enumerate(zip(parts, part_ids, strict=True)):
                self._index_pending(ids, waiting=[i for later in part_ids[number + 1 :] for i in later])
                self._precompute_kv(ids)
                if bar is not None:
                    bar.update(len(part))
        finally:
            if own_bar:
                bar.close()
        return [p.ids for p in prepared]

    def _write(self, prepared: Sequence[Prepared]) -> None:
        unreachable = self._check_server_sizes(p.user_id for p in prepared)
        # One transaction from reading the next positions to journaling: no two turns share one.
        with self.store.journal.writing(_not_written(len(prepared))):
            ids = self._journal_turns(prepared)
        self._index_pending(ids, unreachable=unreachable)
        self._precompute_kv(ids)

    def _precompute_kv(self, ids: Sequence[str]) -> None:
        """With ``precompute_kv``: the blocks of these memories as a search returns them, in the store's
        unit (until 2026-12-07 the turn alone, a block no recall used: a reviewer)."""
        if self.kv is not None and ids:
            rows = self.store.journal.get_many(list(ids))
            found = [MemoryCandidate(r.id, 1.0, r.text, None, index_metadata(r)) for r in rows]
            self.kv.written(expand(self.store.journal, found, getattr(self.store, "unit", "turn")))

    def _next_turns(self, rows: Sequence[JournalRow]) -> list[str]:
        """With ``precompute_kv``, the turns after ``rows``, whose blocks hold their words where the
        store's unit joins a turn to the one before it (whatever the search text's window)."""
        if self.kv is None or getattr(self.store, "unit", "turn") == "turn":
            return []
        journal = self.store.journal
        return [a.id for a in (journal.next_turn(r.user_id, r.session_id, r.turn_index) for r in rows) if a is not None]

    def _journal_turns(self, prepared: Sequence[Prepared], on_taken: OnTaken | None = None) -> list[str]:
        """Journal ``prepared`` (inside the caller's transaction): :func:`~recall_core.memory.text.new_rows.journal_turns`,
        once the vectors of their users are known to fit this encoder."""
        for user_id in dict.fromkeys(p.user_id for p in prepared if p.user_id not in self._sized):
            self._check_vector_size(user_id)
        return journal_turns(self.store.journal, self.search_text, prepared, on_taken)

    def _check_vector_size(self, user_id: str) -> None:
        """Refuse, before anything is journaled, a write whose vectors the user's index would refuse."""
        dimension = self.encoder.dimension
        for name, size in self.store.journal.vector_sizes(user_id).items():
            if size != dimension:
                raise EncoderMismatchError(
                    f"dimension mismatch for user {user_id!r}: their memories were written by {name!r} with {size} "
                    f"dimensions, but this writer's encoder {self.encoder.name!r} has {dimension} dimensions; use the encoder "
                    "the memories were written with, or re-encode them with `rebuild_index(store, reencode=True)` "
                    "(`recall rebuild-index --reencode`). Nothing was written"
                )
        self._sized.add(user_id)

    def _check_server_sizes(self, users: Iterable[str]) -> MemoryUnavailableError | None:
        """On a server, refuse a write whose vectors the user's collection there would refuse (another
        client's encoder: until 2026-12-07 such a write was journaled, then refused by the index, pending
        for good; a reviewer). Before the journal's lock is taken (the look is a request), once a user
        while the server answers; a server that cannot be reached ends the look, and the write is
        journaled as any write then (the rest are looked at by the next write). Returns the error of a
        server that did not answer: the write does not wait for it a second time to index."""
        index = self.store.index
        if getattr(index, "kind", None) != "server":
            return None
        for user_id in dict.fromkeys(users):
            if user_id in self._server_sized:
                continue
            try:
                collection = index.collection(user_id, MEMORIES)
            except MemoryUnavailableError as unreachable:
                return unreachable
            if collection is not None:
                try:
                    index.check_dimension(user_id, collection, self.encoder.dimension,
                                          f"this writer's encoder {self.encoder.name!r}")  # fmt: skip
                except EncoderMismatchError as exc:
                    raise EncoderMismatchError(f"{exc}. Nothing was written") from None
            self._server_sized.add(user_id)
        return None

    def _index_pending(
        self, ids: Sequence[str], waiting: Sequence[str] = (), unreachable: MemoryUnavailableError | None = None
    ) -> None:
        """Embed and index those of ``ids`` the journal holds as pending. On an unreachable index the
        error counts these and the pending ones of ``waiting`` (later steps, journaled) as safe;
        ``unreachable``: the index did not answer just now, the error is raised without asking it again."""
        journal = self.store.journal
        pending = [r for r in journal.get_many(list(ids)) if r.state == PENDING]
        if not pending:
            return

        def kept() -> int:  # these and the pending ones of the later steps: all in the journal
            return len(pending) + sum(r.state == PENDING for r in journal.get_many(list(waiting)))

        try:
            embedded = self.embed(pending)  # encoded now, kept in the journal: repair only has to index them
            if unreachable is not None:
                raise unreachable
            self.index(embedded)
        except EncoderOutputError as exc:  # journaled, but nothing of the encoder's output was stored
            raise EncoderOutputError(
                f"{exc}. {kept()} memories are kept in the journal ({journal.path}) as pending, unsearchable: fix the "
                "encoder, then `repair` (`recall doctor --repair`) indexes them; or delete them by id"
            ) from None
        except (MemoryUnavailableError, sqlite3.Error) as exc:
            # The turns are journaled (acknowledged): what failed is the index, or storing their vectors.
            problem = str(exc) if isinstance(exc, MemoryUnavailableError) else (
                f"the journal {journal.path} could not store their vectors or state ({exc}{free_note(journal.path)})"
            )  # fmt: skip
            raise MemoryUnavailableError(
                f"{problem}. {kept()} memories are safe in the journal ({journal.path}) and will be indexed "
                "by `repair` (`recall doctor --repair`), or by the user's next write"
            ) from exc
        if not waiting:  # (a long write's later steps are pending too: its last step catches up)
            self._catch_up({r.user_id for r in pending}, set(ids))

    def _catch_up(self, users: set[str], skip: set[str]) -> None:
        """Index up to :data:`CATCH_UP` of each of these users' pending memories (an outage's, a cut
        heal's) but ``skip``, best effort, now that the index took a write: until 2026-12-06 they waited
        for `repair`, unsearchable. A failure is logged (the write itself is done) and stops it."""
        for user_id in sorted(users):
            try:
                done = self.index_pending_of(user_id, skip, CATCH_UP)
            except (MemoryUnavailableError, sqlite3.Error) as exc:  # unreachable, or the journal busy
                logger.info("pending memories of %r stay pending (%s)", user_id, exc)
                return
            except Exception as exc:  # noqa: BLE001 - refused (an encoder's output or error, the index's answer)
                logger.warning("pending memories of %r stay pending (%s); `recall doctor --repair` names the cause",
                               user_id, exc)  # fmt: skip
                return
            if done:
                logger.info("indexed %d pending memories of %r", done, user_id)

    def index_pending_of(self, user_id: str, skip: Collection[str] = (), limit: int | None = None) -> int:
        """Index ``user_id``'s pending memories (but ``skip``, at most ``limit``) with their stored vectors,
        embedding only those without one (never re-encoding another encoder's); return how many.

        The index is written outside the journal's lock (a server's heal takes its own lock, then the
        journal's: the other order deadlocked, and held SQLite's write lock across a hung request). A
        ``forget`` or ``delete`` that runs meanwhile is taken back when the rows are marked indexed
        (:meth:`Journal.mark_indexed`), and a row an ``update`` changed meanwhile gets its current copy written again."""
        journal = self.store.journal
        # (bounded: a read of every pending row cost 263 ms at 20,000 for a catch-up of 512)
        rows = [row for row in journal.pending_rows(user_id, None if limit is None else limit + len(skip))
                if row.id not in skip][:limit]  # fmt: skip
        if not rows:
            return 0
        missing = [row for row in rows if row.embedding is None]
        embedded = {row.id: row for row in self.embed(missing)} if missing else {}
        self.index([embedded.get(row.id, row) for row in rows])
        return len(rows)

    def adopt(self, user_id: str, memory_id: str) -> JournalRow:
        """A memory found in the index but not in this journal (written by another client, or a
        journal lost or restored from an older copy): journal it, and return its row."""
        record = self.store.for_user(user_id).get(memory_id)
        if record is None:
            raise KeyError(f"user {user_id!r} has no memory {memory_id!r}")
        extra = dict(record.metadata)
        if record.key is not None:
            extra["key"] = record.key
        row = JournalRow(
            id=record.id, user_id=user_id, session_id=record.session_id or DEFAULT_SESSION, role=record.role,
            text=record.text, timestamp=record.timestamp, turn_index=record.turn_index,
            chunk_index=record.chunk_index, n_chunks=record.n_chunks, extra=extra,
        )  # fmt: skip
        with self.store.journal.writing(f"memory {memory_id!r} was not copied into the journal, and nothing was changed"):
            self.store.journal.insert([row])
        return self.store.journal.get(memory_id) or row


def _not_written(turns: int) -> str:
    return "the turn of this call was not written" if turns == 1 else f"none of the {turns} turns of this call was written"


def _progress(progress: bool | Any, total: int) -> tuple[Any, bool]:
    """The bar to update, and whether this call made it (and closes it): a caller's bar stays open."""
    if progress is False or progress is None:
        return None, False
    if progress is True:
        from tqdm.auto import tqdm

        return tqdm(total=total, desc="remember", unit="turn"), True
    return progress, False

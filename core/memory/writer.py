"""`MemoryWriter`: conversation turns in, memories out (journal first, index second).

A turn is checked (role, non-empty UTF-8 text, metadata), split into chunks that fit the
encoder's window, given deterministic ids, appended to the journal, embedded in batches
(this is where the throughput comes from), optionally given LM-space keys, and indexed.

Ids are a hash of (user, session, turn index, chunk) when the caller gives the turn's
index (files), else of (user, session, content, chunk): writing the same turn twice never
duplicates it.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from .encoders import Encoder
from .journal import DELETING, PENDING, JournalRow
from .store import RESERVED_KEYS, MemoryStore, MemoryUnavailableError, check_user_id

ROLES = ("user", "assistant", "system")
DEFAULT_SESSION = "default"
#: Default chunk size in encoder tokens: short enough to retrieve precisely and to inject
#: cheaply, far inside all-MiniLM-L6-v2's 256-token window.
DEFAULT_CHUNK_TOKENS = 128
#: Encoder tokens kept free in each chunk for the context ``MemoryWriter`` puts around it.
CONTEXT_RESERVE = 72
#: Words of the turn before that a memory repeats (its end: what the turn answers).
WINDOW_WORDS = 40

_SENTENCE_END = re.compile(r"(?<=[.!?\u3002\uff01\uff1f])\s+|\n\s*")
_WORD_SPAN = re.compile(r"\S+\s*")


# -- checking input ---------------------------------------------------------------------------


def check_content(content: object) -> str:
    """Return the turn's text; raise ``ValueError`` if it is empty, whitespace or not UTF-8."""
    if isinstance(content, (bytes, bytearray, memoryview)):
        raw = bytes(content)
        try:
            content = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(
                f"content is not valid UTF-8 (byte 0x{raw[exc.start]:02x} at position {exc.start}): "
                "decode it with its real encoding first"
            ) from None
    if not isinstance(content, str):
        raise ValueError(f"content must be text (str or UTF-8 bytes), got {type(content).__name__}")
    try:
        content.encode("utf-8")
    except UnicodeEncodeError as exc:
        # Lone surrogates: what Python makes of undecodable bytes with errors="surrogateescape".
        raise ValueError(
            f"content is not valid UTF-8 text (character {content[exc.start]!r} at position {exc.start}): "
            "it was probably decoded from non-UTF-8 bytes"
        ) from None
    if not content.strip():
        raise ValueError("content is empty or only whitespace: nothing to remember")
    if "\x00" in content:
        raise ValueError("content contains NUL characters: not text")
    return content


def check_role(role: object) -> str:
    if role not in ROLES:
        raise ValueError(f"role must be one of {', '.join(map(repr, ROLES))}, got {role!r}")
    return str(role)


def check_session(session_id: object) -> str:
    if session_id is None:
        return DEFAULT_SESSION
    if isinstance(session_id, bool) or not isinstance(session_id, (str, int)) or not str(session_id).strip():
        raise ValueError(f"session_id must be a non-empty string (or None), got {session_id!r}")
    return str(session_id)


def check_metadata(metadata: Mapping[str, Any] | None) -> dict[str, Any]:
    """Extra metadata must be flat: string keys, str/int/float/bool values (``None`` is dropped)."""
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise ValueError(f"metadata must be a mapping, got {type(metadata).__name__}")
    clean: dict[str, Any] = {}
    for key, value in metadata.items():
        if not isinstance(key, str) or not key:
            raise ValueError(f"metadata keys must be non-empty strings, got {key!r}")
        if key in RESERVED_KEYS:
            raise ValueError(f"metadata key {key!r} is reserved by the memory store ({', '.join(sorted(RESERVED_KEYS))})")
        if value is None:
            continue
        if not isinstance(value, (str, int, float, bool)):
            raise ValueError(f"metadata value of {key!r} must be str, int, float or bool, got {type(value).__name__}")
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise ValueError(f"metadata value of {key!r} is not valid UTF-8 text") from None
        clean[key] = value
    return clean


def format_timestamp(timestamp: object) -> str:
    """ISO 8601 for datetimes and epoch seconds, the string itself for strings, now (UTC) for ``None``."""
    if timestamp is None:
        return datetime.now(timezone.utc).isoformat(timespec="seconds")
    if isinstance(timestamp, datetime):
        return timestamp.isoformat()
    if isinstance(timestamp, (int, float)) and not isinstance(timestamp, bool):
        return datetime.fromtimestamp(float(timestamp), tz=timezone.utc).isoformat()
    if isinstance(timestamp, str) and timestamp.strip():
        return timestamp.strip()
    raise ValueError(f"timestamp must be a datetime, epoch seconds, a string or None, got {timestamp!r}")


def day_label(timestamp: str) -> str:
    """The day of a stored timestamp: ``"2023-05-08T13:56:00"`` -> ``"8 May 2023"``;
    LoCoMo's ``"1:56 pm on 8 May, 2023"`` -> ``"8 May, 2023"``; other strings as they are."""
    try:
        moment = datetime.fromisoformat(timestamp)
    except ValueError:
        _, sep, day = timestamp.partition(" on ")
        return day.strip() if sep else timestamp.strip()
    return f"{moment.day} {moment:%B %Y}"


def _check_turn_index(turn_index: object) -> int | None:
    if turn_index is None:
        return None
    if isinstance(turn_index, bool) or not isinstance(turn_index, int) or turn_index < 0:
        raise ValueError(f"turn_index must be an int >= 0 (or None), got {turn_index!r}")
    return turn_index


# -- chunking and ids -------------------------------------------------------------------------


def chunk_text(text: str, max_tokens: int | None, count_tokens: Callable[[str], int]) -> list[str]:
    """Split ``text`` into chunks of at most ``max_tokens`` tokens; nothing is dropped.

    Sentences (and lines) are packed together while they fit; a sentence too long on its
    own is split between words, and a word too long on its own between characters. Chunks
    are stripped substrings of ``text``.
    """
    if max_tokens is None or max_tokens < 1:
        return [text.strip()]
    # Fast path: a tokenizer makes at most ~4 tokens of a character (byte fallback).
    if len(text) * 4 <= max_tokens or count_tokens(text) <= max_tokens:
        return [text.strip()]
    chunks = _pack(
        text, _sentence_spans(text), max_tokens, count_tokens,
        lambda s, e: _split_long(text, s, e, max_tokens, count_tokens),
    )  # fmt: skip
    out = [text[s:e].strip() for s, e in chunks]
    return [c for c in out if c]


def _sentence_spans(text: str) -> list[tuple[int, int]]:
    spans, pos = [], 0
    for match in _SENTENCE_END.finditer(text):
        if match.start() > pos:
            spans.append((pos, match.start()))
        pos = match.end()
    if pos < len(text):
        spans.append((pos, len(text)))
    return [(s, e) for s, e in spans if text[s:e].strip()]


def _pack(
    text: str,
    spans: Iterable[tuple[int, int]],
    max_tokens: int,
    count: Callable[[str], int],
    split_too_long: Callable[[int, int], list[tuple[int, int]]],
) -> list[tuple[int, int]]:
    """Greedily join consecutive spans into pieces of at most ``max_tokens``.

    A span that alone is longer than ``max_tokens`` is handed to ``split_too_long``.
    """
    pieces: list[tuple[int, int]] = []
    start = end = None
    used = 0
    for s, e in spans:
        n = count(text[s:e])
        if n > max_tokens:
            if start is not None:
                pieces.append((start, end))  # type: ignore[arg-type]
                start, used = None, 0
            pieces.extend(split_too_long(s, e))
            continue
        if start is not None and used + n > max_tokens:
            pieces.append((start, end))  # type: ignore[arg-type]
            start, used = None, 0
        if start is None:
            start = s
        end, used = e, used + n
    if start is not None:
        pieces.append((start, end))  # type: ignore[arg-type]
    return pieces


def _split_long(text: str, start: int, end: int, max_tokens: int, count: Callable[[str], int]) -> list[tuple[int, int]]:
    """Split one over-long sentence between words (and an over-long word between characters)."""
    words = [(match.start(), match.end()) for match in _WORD_SPAN.finditer(text, start, end)]
    pieces = _pack(text, words, max_tokens, count, lambda s, e: _split_chars(text, s, e, max_tokens, count))
    return pieces


def _split_chars(text: str, start: int, end: int, max_tokens: int, count: Callable[[str], int]) -> list[tuple[int, int]]:
    pieces = []
    for s in range(start, end, max_tokens):
        e = min(end, s + max_tokens)
        if count(text[s:e]) > max_tokens and e - s > 1:
            # Several tokens per character (byte-level tokenizers): halve until it fits.
            mid = (s + e) // 2
            pieces.extend(_split_chars(text, s, mid, max_tokens, count))
            pieces.extend(_split_chars(text, mid, e, max_tokens, count))
        else:
            pieces.append((s, e))
    return pieces


def memory_id(user_id: str, session_id: str, turn_key: str, chunk_index: int) -> str:
    """Deterministic id of one chunk of one turn (32 hex digits)."""
    payload = json.dumps([user_id, session_id, turn_key, chunk_index], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:32]


def _turn_key(content: str, turn_index: int | None) -> str:
    if turn_index is not None:
        return f"turn:{turn_index}"
    return "content:" + hashlib.sha256(content.encode("utf-8")).hexdigest()


# -- turns ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Turn:
    """One conversation turn to remember (see :meth:`MemoryWriter.add_turn` for the fields)."""

    user_id: str
    role: str
    content: str | bytes
    session_id: str | None = None
    timestamp: Any = None
    metadata: Mapping[str, Any] | None = None
    turn_index: int | None = None

    @classmethod
    def from_mapping(cls, item: Mapping[str, Any], user_id: str | None = None) -> Turn:
        """A turn from a dict (``content`` or ``text``); ``user_id`` fills a missing one and must match a present one."""
        if not isinstance(item, Mapping):
            raise ValueError(f"a turn must be an object, got {type(item).__name__}")
        known = {"user_id", "role", "content", "text", "session_id", "timestamp", "metadata", "turn_index"}
        unknown = set(item) - known
        if unknown:
            raise ValueError(f"unknown turn fields {sorted(unknown)} (known: {sorted(known)})")
        own = item.get("user_id")
        if user_id is not None and own is not None and own != user_id:
            raise ValueError(f"turn belongs to user {own!r}, but the turns are being written for {user_id!r}")
        if "content" in item and "text" in item:
            raise ValueError("a turn has both 'content' and 'text': give one")
        content = item["content"] if "content" in item else item.get("text")
        return cls(
            user_id=own if own is not None else user_id,  # type: ignore[arg-type]
            role=item.get("role"),  # type: ignore[arg-type]
            content=content,  # type: ignore[arg-type]
            session_id=item.get("session_id"), timestamp=item.get("timestamp"),
            metadata=item.get("metadata"), turn_index=item.get("turn_index"),
        )  # fmt: skip


@dataclass
class _Prepared:
    user_id: str
    role: str
    session_id: str
    timestamp: str
    extra: dict[str, Any]
    turn_index: int | None
    chunks: list[str]
    ids: list[str]


@dataclass
class IngestReport:
    """What :meth:`MemoryWriter.ingest` did."""

    path: str
    format: str
    turns: int = 0
    memories: int = 0
    users: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


class MemoryWriter:
    """Writes conversation turns into a :class:`~recall_core.memory.store.MemoryStore`.

    Args:
        store: where the memories go.
        encoder: optional; if given it becomes the store's encoder (it must not differ from
            one the store already uses). ``None`` uses the store's.
        chunk_tokens: most encoder tokens per memory; longer turns are split (never dropped).
            Capped by the encoder's window.
        lm: the language model for LM-space keys: a ``(model, tokenizer)`` pair, an object
            with ``.model`` and ``.tokenizer``, or a function ``texts -> array [n, hidden]``.
        lm_keys: also store LM-space keys (for the ``hidden`` query mode); needs ``lm``.
        batch_size: turns embedded per encoder batch.
        dated: search each memory with the day of its turn in front, ``"[8 May 2023] "``, so
            that "when" questions find it.
        window: search it with the end of the turn before (same session) on the line above, so
            that an answer ("Yes, last Tuesday") is found by the question it answers.
        speakers: begin each searched line with its speaker: ``metadata["speaker"]`` if the
            turn has one, else its role (``"User: ..."``).

    These three shape only what is *searched* (embedded and word-indexed, the journal's
    ``context``). A memory's ``text``, what a search returns and recall injects, stays the
    turn's own words: the embedded 135M model recalled 9 of 12 facts from the bare words and
    0 of 12 from the dated, labelled window (BENCHMARKS.md). The defaults are what won on the
    LoCoMo dev file with hybrid search (BENCHMARKS.md).
    """

    def __init__(
        self,
        store: MemoryStore,
        encoder: Encoder | str | Path | None = None,
        chunk_tokens: int = DEFAULT_CHUNK_TOKENS,
        lm: Any = None,
        lm_keys: bool = False,
        batch_size: int = 64,
        dated: bool = True,
        window: bool = True,
        speakers: bool = True,
    ) -> None:
        if isinstance(chunk_tokens, bool) or not isinstance(chunk_tokens, int) or chunk_tokens < 8:
            raise ValueError(f"chunk_tokens must be an int >= 8, got {chunk_tokens!r}")
        if lm_keys and lm is None:
            raise ValueError("lm_keys=True needs the language model: MemoryWriter(store, lm=(model, tokenizer), lm_keys=True)")
        self.store = store
        if encoder is not None:
            store.use_encoder(encoder)
        self.chunk_tokens = chunk_tokens
        self.lm = lm
        self.lm_keys = bool(lm_keys)
        self.batch_size = max(1, int(batch_size))
        self.dated = bool(dated)
        self.window = bool(window)
        self.speakers = bool(speakers)

    @property
    def encoder(self) -> Encoder:
        return self.store.encoder

    # -- public API ------------------------------------------------------------------------

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
                Given, it makes the id positional (re-ingesting a file never duplicates).

        Raises:
            ValueError: bad role, empty or non-UTF-8 content, bad metadata (nothing is written).
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
        return self._write_all(self._prepare_all(turns), progress)

    def _write_all(self, prepared: list[_Prepared], progress: bool | Any) -> list[list[str]]:
        bar, own_bar = _progress(progress, len(prepared))
        try:
            # Big steps: Chroma indexes large batches faster per item; the encoder batches inside.
            step = max(self.batch_size * 16, 1024)
            for start in range(0, len(prepared), step):
                part = prepared[start : start + step]
                self._write(part)
                if bar is not None:
                    bar.update(len(part))
        finally:
            if own_bar:
                bar.close()
        return [p.ids for p in prepared]

    def update(self, user_id: str, memory_id: str, text: str | bytes, metadata: Mapping[str, Any] | None = None) -> None:
        """Replace one memory's text (re-embedded, and re-keyed when this writer writes LM keys)."""
        key = self._lm_keys([check_content(text)])[0] if self.lm_keys else None
        self.store.for_user(user_id).update(memory_id, text, metadata=metadata, lm_key=key)

    def delete(self, user_id: str, memory_ids: str | Iterable[str]) -> int:
        """Delete memories of ``user_id`` by id; return how many existed."""
        return self.store.for_user(user_id).delete(memory_ids)

    def forget(self, user_id: str) -> int:
        """Delete every memory of ``user_id``, index and journal; return how many there were."""
        return self.store.for_user(user_id).forget()

    def ingest(
        self, path: str | Path, user_id: str | None = None, progress: bool = True, skip_invalid: bool = False
    ) -> IngestReport:
        """Remember the turns of a file: JSONL (one turn per line) or LoCoMo-style JSON.

        JSONL lines are objects with ``role``, ``content`` (or ``text``) and optionally
        ``user_id``, ``session_id``, ``timestamp``, ``metadata``, ``turn_index``; ``user_id``
        fills lines without one (a line naming another user is an error).

        LoCoMo JSON (a list of samples, or one sample, with ``conversation.session_N`` lists
        and ``session_N_date_time``) is one user per conversation: ``user_id`` if given (one
        conversation only), else the sample's ``sample_id``. ``speaker_a`` turns get role
        ``user``, ``speaker_b`` ``assistant``; the text is ``"Speaker: text"`` (plus the image
        caption if any); speaker, dia_id and session date are kept in metadata.

        Every turn is checked first; a bad one raises ``ValueError`` naming its line or
        dia_id and nothing is written, unless ``skip_invalid`` (then it is reported in
        ``skipped``). Ids are positional, so ingesting a file twice does not duplicate.
        """
        path = Path(path)
        if user_id is not None:
            user_id = check_user_id(user_id)
        raw = path.read_bytes()
        fmt = "jsonl" if path.suffix.lower() in (".jsonl", ".ndjson") else _sniff(raw)
        report = IngestReport(path=str(path), format=fmt)
        if fmt == "jsonl":
            items = list(_jsonl_turns(raw, user_id, report, skip_invalid))
        else:
            items = list(_locomo_turns(raw, user_id, path))
        prepared: list[_Prepared] = []
        for where, turn in items:
            try:
                prepared.append(self._prepare(turn))
            except ValueError as exc:
                if not skip_invalid:
                    raise ValueError(f"{path}: {where}: {exc} (nothing was written)") from None
                report.skipped.append(f"{where}: {exc}")
        bar = _tqdm_bar(len(prepared), f"ingest {path.name}") if progress else False
        ids = self._write_all(prepared, bar)
        report.turns = len(prepared)
        report.memories = len({i for turn_ids in ids for i in turn_ids})
        report.users = sorted({p.user_id for p in prepared})
        return report

    # -- internals -------------------------------------------------------------------------

    def _max_tokens(self) -> int | None:
        window = self.encoder.max_tokens
        if not window:
            return self.chunk_tokens
        if self.dated or self.window or self.speakers:  # the context must fit the encoder's window too
            window = max(16, window - CONTEXT_RESERVE)
        return min(self.chunk_tokens, window)

    def _prepare(self, turn: Turn | Mapping[str, Any]) -> _Prepared:
        if not isinstance(turn, Turn):
            turn = Turn.from_mapping(turn)
        user_id = check_user_id(turn.user_id)
        role = check_role(turn.role)
        content = check_content(turn.content)
        session_id = check_session(turn.session_id)
        extra = check_metadata(turn.metadata)
        turn_index = _check_turn_index(turn.turn_index)
        timestamp = format_timestamp(turn.timestamp)
        chunks = chunk_text(content, self._max_tokens(), self.encoder.count_tokens)
        key = _turn_key(content, turn_index)
        ids = [memory_id(user_id, session_id, key, i) for i in range(len(chunks))]
        return _Prepared(user_id, role, session_id, timestamp, extra, turn_index, chunks, ids)

    def _prepare_all(self, turns: Iterable[Turn | Mapping[str, Any]]) -> list[_Prepared]:
        prepared = []
        for position, turn in enumerate(turns):
            try:
                prepared.append(self._prepare(turn))
            except ValueError as exc:
                raise ValueError(f"turn {position}: {exc} (nothing was written)") from None
        return prepared

    def _write(self, prepared: Sequence[_Prepared]) -> None:
        journal = self.store.journal
        all_ids = list(dict.fromkeys(i for p in prepared for i in p.ids))
        # Tombstoned rows do not count: writing a deleted turn again brings it back.
        existing = {row.id: row for row in journal.get_many(all_ids) if row.state != DELETING}
        next_index: dict[tuple[str, str], int] = {}
        rows: list[JournalRow] = []
        seen: set[str] = set()
        # (user, session) -> (turn index, speaker, last chunk) of the latest turn of this batch
        latest: dict[tuple[str, str], tuple[int, str, str]] = {}
        for p in prepared:
            if all(i in existing for i in p.ids) or all(i in seen for i in p.ids):
                continue  # the same turn again: nothing new (pending rows are picked up below)
            turn_index = p.turn_index
            if turn_index is None:
                key = (p.user_id, p.session_id)
                if key not in next_index:
                    next_index[key] = journal.next_turn_index(*key)
                turn_index = next_index[key]
                next_index[key] += 1
            contexts = self._compose(p, turn_index, self._turn_before(p, turn_index, latest))
            latest[(p.user_id, p.session_id)] = (turn_index, self._speaker(p.role, p.extra), p.chunks[-1])
            for chunk_index, (memory_id_, text, context) in enumerate(zip(p.ids, p.chunks, contexts, strict=True)):
                if memory_id_ in existing or memory_id_ in seen:
                    continue
                seen.add(memory_id_)
                rows.append(
                    JournalRow(
                        id=memory_id_, user_id=p.user_id, session_id=p.session_id, role=p.role, text=text,
                        timestamp=p.timestamp, turn_index=turn_index, chunk_index=chunk_index,
                        n_chunks=len(p.chunks), extra=p.extra, context=None if context == text else context,
                    )  # fmt: skip
                )
        # Journal first: from here on the turns survive a crash or an unreachable index.
        journal.insert(rows)
        pending = [r for r in journal.get_many(all_ids) if r.state == PENDING]
        if not pending:
            return
        pending = self._embed(pending)
        try:
            self.store._index(pending)
        except MemoryUnavailableError as exc:
            raise MemoryUnavailableError(
                f"{exc}. {len(pending)} memories are safe in the journal ({journal.path}) and will be indexed "
                "by `repair` (`recall doctor --repair`)"
            ) from exc

    def _speaker(self, role: str, extra: Mapping[str, Any]) -> str:
        speaker = extra.get("speaker")
        return str(speaker) if isinstance(speaker, str) and speaker.strip() else role.capitalize()

    def _turn_before(
        self, p: _Prepared, turn_index: int, latest: Mapping[tuple[str, str], tuple[int, str, str]]
    ) -> tuple[str, str] | None:
        """``(speaker, words)`` of the turn before this one in its session: from this batch, else the journal."""
        if not self.window:
            return None
        in_batch = latest.get((p.user_id, p.session_id))
        if in_batch is not None and in_batch[0] < turn_index:
            return in_batch[1], in_batch[2]
        row = self.store.journal.previous_turn(p.user_id, p.session_id, turn_index)
        if row is None:
            return None
        return self._speaker(row.role, row.extra), row.text

    def _compose(self, p: _Prepared, turn_index: int, before: tuple[str, str] | None) -> list[str]:
        """What each chunk is searched by: ``[day] Speaker before: ...`` / ``Speaker: chunk``."""
        head = f"[{day_label(p.timestamp)}] " if self.dated else ""
        speaker = self._speaker(p.role, p.extra) if self.speakers else None
        texts = []
        for chunk_index, chunk in enumerate(p.chunks):
            line = f"{speaker}: {chunk}" if speaker and not chunk.startswith(f"{speaker}:") else chunk
            if before is not None and chunk_index == 0:
                words = before[1].split()
                tail = " ".join(words[-WINDOW_WORDS:])
                tail = tail if len(words) <= WINDOW_WORDS else "... " + tail
                labelled = self.speakers and not tail.startswith(f"{before[0]}:")
                line = (f"{before[0]}: {tail}" if labelled else tail) + "\n" + line
            texts.append(head + line)
        return texts

    def _embed(self, rows: list[JournalRow]) -> list[JournalRow]:
        """Give rows their vectors (and LM keys), stored in the journal too; return the updated rows."""
        encoder = self.encoder
        need = [i for i, r in enumerate(rows) if r.embedding is None or r.encoder != encoder.name]
        if need:
            vectors = encoder.encode([rows[i].search_text for i in need], batch_size=self.batch_size)
            self.store.journal.set_vectors([rows[i].id for i in need], vectors, encoder.name)
            for j, i in enumerate(need):
                rows[i] = rows[i].with_(embedding=vectors[j], encoder=encoder.name)
        if self.lm_keys:
            need = [i for i, r in enumerate(rows) if r.lm_key is None]
            if need:
                keys = self._lm_keys([rows[i].text for i in need])
                name = self._lm_name()
                self.store.journal.set_vectors([rows[i].id for i in need], None, None, keys, name)
                for j, i in enumerate(need):
                    rows[i] = rows[i].with_(lm_key=keys[j], lm_name=name)
        return rows

    def _lm_parts(self) -> tuple[Any, Any] | None:
        lm = self.lm
        if isinstance(lm, tuple) and len(lm) == 2:
            return lm
        if hasattr(lm, "model") and hasattr(lm, "tokenizer"):
            return lm.model, lm.tokenizer
        return None

    def _lm_keys(self, texts: list[str]) -> np.ndarray:
        parts = self._lm_parts()
        if parts is None:
            if not callable(self.lm):
                raise TypeError("lm must be (model, tokenizer), an object with .model/.tokenizer, or texts -> array")
            keys = np.asarray(self.lm(texts), dtype=np.float32)
        else:
            from ..hidden import lm_keys  # imported here: torch is only needed with LM keys

            keys = np.asarray(lm_keys(parts[0], parts[1], texts), dtype=np.float32)
        if keys.ndim != 2 or keys.shape[0] != len(texts):
            raise ValueError(f"LM keys must have shape [{len(texts)}, hidden], got {keys.shape}")
        return keys

    def _lm_name(self) -> str:
        parts = self._lm_parts()
        target = parts[0] if parts is not None else self.lm
        for attr in ("name_or_path", "name"):
            value = getattr(target, attr, None)
            if isinstance(value, str) and value:
                return value
        config = getattr(target, "config", None)
        return str(getattr(config, "_name_or_path", "") or type(target).__name__)


# -- file formats ----------------------------------------------------------------------------


def _sniff(raw: bytes) -> str:
    """``"jsonl"`` or ``"locomo"`` from the content of a .json file."""
    head = raw.lstrip()[:1]
    if head == b"[" or head == b"{":
        try:
            data = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            return "jsonl"
        if isinstance(data, dict) and "conversation" in data:
            return "locomo"
        if isinstance(data, list) and data and isinstance(data[0], dict) and "conversation" in data[0]:
            return "locomo"
    return "jsonl"


def _jsonl_turns(raw: bytes, user_id: str | None, report: IngestReport, skip: bool) -> Iterator[tuple[str, Turn]]:
    for number, line in enumerate(raw.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            try:
                text = line.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ValueError(f"not valid UTF-8 (byte 0x{line[exc.start]:02x} at column {exc.start + 1})") from None
            try:
                item = json.loads(text)
            except json.JSONDecodeError as exc:
                raise ValueError(f"not JSON: {exc.msg}") from None
            turn = Turn.from_mapping(item, user_id)
            if turn.user_id is None:
                raise ValueError("no user_id on the line and none given to ingest(user_id=...)")
        except ValueError as exc:
            if not skip:
                raise ValueError(f"line {number}: {exc}") from None
            report.skipped.append(f"line {number}: {exc}")
            continue
        yield f"line {number}", turn


def _locomo_turns(raw: bytes, user_id: str | None, path: Path) -> Iterator[tuple[str, Turn]]:
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not valid UTF-8 (byte at position {exc.start})") from None
    samples = [data] if isinstance(data, dict) else data
    if user_id is not None and len(samples) > 1:
        raise ValueError(
            f"{path} holds {len(samples)} conversations (one user each): leave user_id out to use each sample_id"
        )
    for number, sample in enumerate(samples):
        conversation = sample.get("conversation") if isinstance(sample, dict) else None
        if not isinstance(conversation, dict):
            raise ValueError(f"{path}: sample {number} has no 'conversation' object")
        sample_id = str(sample.get("sample_id") or f"conversation-{number}")
        owner = user_id or sample_id
        roles = {conversation.get("speaker_a"): "user", conversation.get("speaker_b"): "assistant"}
        sessions = sorted(
            (int(m.group(1)), key)
            for key in conversation
            if (m := re.fullmatch(r"session_(\d+)", key)) and isinstance(conversation[key], list)
        )
        for _, key in sessions:
            date = conversation.get(f"{key}_date_time")
            for position, item in enumerate(conversation[key]):
                speaker = item.get("speaker")
                text = item.get("text") or ""
                caption = item.get("blip_caption")
                content = f"{speaker}: {text}" if speaker else text
                if caption:
                    content += f" [shares an image: {caption}]"
                metadata = {"speaker": speaker, "dia_id": item.get("dia_id"), "session_date": date, "sample_id": sample_id}
                where = f"{sample_id} {item.get('dia_id') or f'{key}[{position}]'}"
                yield where, Turn(
                    user_id=owner, role=roles.get(speaker, "user"), content=content, session_id=key,
                    timestamp=date, metadata=metadata, turn_index=position,
                )  # fmt: skip


def _tqdm_bar(total: int, description: str) -> Any:
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=description, unit="turn")


def _progress(progress: bool | Any, total: int) -> tuple[Any, bool]:
    if progress is False or progress is None:
        return None, False
    if progress is True:
        return _tqdm_bar(total, "remember"), True
    return progress, True

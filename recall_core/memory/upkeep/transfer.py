"""Export and import of memories as JSONL: a user's memories out of one store and into another.

One JSON object a line, one memory (one chunk of one turn) an object, read from the journal
(the source of truth, so an export works on a store opened read-only and does not need the
index)::

    {"format": "recall-memory/1", "id": "…32 hex…", "user_id": "ada", "session_id": "s1",
     "role": "user", "text": "My dog is called Pluto.", "timestamp": "2026-11-17T10:00:00+00:00",
     "turn_index": 0, "chunk_index": 0, "n_chunks": 1, "metadata": {}, "key": null,
     "search_text": "…", "written_at": 1795561089.08, "updated_at": 1795561089.08}

``search_text`` is what the memory is searched by when it is more than its text (the date,
the speaker and the turn before, as the writer composed it; absent otherwise), and
``written_at`` orders the memories. Vectors are not exported: the importing store embeds the
text with its own encoder, so a file moves between stores with different encoders.

Importing keeps every field, ids included, so ``export`` then ``import`` into a fresh store
gives the same memories (ids, text, roles, timestamps, sessions, metadata, keys, order). The
whole file is checked before anything is written: a bad line is a ``ValueError`` naming the
line and the field, and nothing of the file is written. A memory whose id the store already
holds with the same text for the same user is left as it is (importing a file twice adds
nothing); an id the store holds for another user, or with another text, is refused, as is a
turn at a position (user, session, ``turn_index``) where the store holds another turn given
there (see :mod:`recall_core.memory.positions`): importing it would have been counted as
"already there" while nothing of it was kept. The same id twice in the input is refused, a
file's or the dicts'. Rows go to the journal first, in one transaction (the store is checked
inside it, so no other writer changes it in between), then to the index; if the index cannot
be reached they are safe in the journal and ``recall doctor --repair`` indexes them.
"""

from __future__ import annotations

import json
import os
import re
import warnings
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from numbers import Integral
from pathlib import Path
from typing import IO, Any

from recall_core.memory.errors import MemoryUnavailableError
from recall_core.memory.journal import DELETING, INDEXED, PENDING, Journal, JournalRow
from recall_core.memory.positions import held_turn, turn_key
from recall_core.memory.protocols import StoreParts
from recall_core.memory.records import MemoryRecord, key_memory_id, memory_id
from recall_core.memory.validation import (
    INT_MAX,
    check_content,
    check_epoch,
    check_key,
    check_metadata,
    check_role,
    check_session,
    check_user_id,
    format_timestamp,
)

#: The value of every line's ``format`` field (a later layout gets a new number).
FORMAT = "recall-memory/1"
_FIELDS = frozenset({
    "format", "id", "user_id", "session_id", "role", "text", "timestamp", "turn_index", "chunk_index", "n_chunks",
    "metadata", "key", "search_text", "written_at", "updated_at",
})  # fmt: skip
_ID = re.compile(r"[0-9a-f]{32}")
#: Rows embedded and indexed per batch on import.
_BATCH = 256
#: Memories read from a server a request, for an export.
_PAGE = 1000


@dataclass(frozen=True)
class _Line:
    """One checked memory of the input: ``where`` it is ("input line 3", "memory 2") for errors,
    ``short`` the same for another line's error ("line 3"), and the memory itself."""

    where: str
    short: str
    item: dict[str, Any]


@dataclass(frozen=True)
class ImportReport:
    """What :func:`import_jsonl` did: memories added, those already there, the users they belong to."""

    added: int
    existing: int
    users: tuple[str, ...]

    def __str__(self) -> str:
        users = ", ".join(map(repr, self.users)) or "nobody"
        return f"imported {self.added} memories ({self.existing} already there) for {users}"


# --------------------------------------------------------------------------- export
def export_records(store: StoreParts, user_id: str) -> Iterator[dict[str, Any]]:
    """``user_id``'s memories as export objects, in the order they were written (deleted ones left out).

    On a server the memories are what the server holds (until 2026-12-07 a second machine's export
    held only what it had written, often nothing, a reviewer): this client's journaled copy where it
    is the server's (with its ``search_text`` and times), the server's where another client changed
    it, none where another client deleted it; then the memories only the server holds, without
    ``search_text`` or times; and the journal's pending ones. A server that cannot be reached raises
    :class:`MemoryUnavailableError` rather than give part of them; one that holds no collection for
    the user (lost, or forgotten by another client) gives the journal's, with a warning.
    """
    rows = [row for row in store.journal.rows(user_id, (PENDING, INDEXED, DELETING))]
    held = _server_records(store, user_id) if store.kind == "server" else None
    if held is None and store.kind == "server" and any(row.state == INDEXED for row in rows):
        warnings.warn(f"the server holds no memories of user {user_id!r}: exported this client's journal "
                      "(the server lost them, or another client forgot the user)", RuntimeWarning, stacklevel=3)  # fmt: skip
    for row in rows:
        record = None if held is None else held.get(row.id)
        if row.state == DELETING or (row.state == INDEXED and held is not None and record is None):
            continue  # deleted, here or by another client
        if record is None or row.state == PENDING or _same(row, record):
            yield _journaled_item(row)
        else:
            yield _record_item(record)
    journaled = {row.id for row in rows}
    for record in (held or {}).values():
        if record.id not in journaled:
            yield _record_item(record)


def _server_records(store: StoreParts, user_id: str) -> dict[str, MemoryRecord] | None:
    """The memories the server holds for ``user_id`` in the order they were written (their own: a row of
    another user's is left out), or ``None`` when it holds no collection for them. Every id in one
    request, then their texts by id: pages by offset shift when another client deletes between them,
    and a memory nobody deleted was left out (a reviewer, 2026-12-07)."""
    listed = store.index.page(user_id, [], None, 0)  # type: ignore[arg-type]
    if listed is None:
        return None
    ids = list(listed["ids"])
    found: list[tuple[float, MemoryRecord]] = []
    for start in range(0, len(ids), _PAGE):
        got = store.index.get(user_id, ids[start : start + _PAGE], include=["documents", "metadatas"])
        if got is None:  # the collection went meanwhile (another client's forget)
            return None
        for found_id, text, meta in zip(got["ids"], got["documents"], got["metadatas"], strict=True):
            if (meta or {}).get("user_id") == user_id:
                found.append(((meta or {}).get("written_at", 0.0), MemoryRecord.from_index(found_id, text, meta)))
    return {record.id: record for _, record in sorted(found, key=_written)}


def _written(item: tuple[float, MemoryRecord]) -> tuple[float, str, int, int]:
    written, record = item
    return (float(written or 0.0), record.session_id, record.turn_index, record.chunk_index)


def _same(row: JournalRow, record: MemoryRecord) -> bool:
    """Whether the server's copy of a journaled memory is the journal's (no other client changed it)."""
    extra = dict(row.extra)
    key = extra.pop("key", None)
    return record.text == row.text and record.key == key and record.metadata == extra


def _record_item(record: MemoryRecord) -> dict[str, Any]:
    """A memory as the server holds it, as an export object (no ``search_text``, no times)."""
    return {
        "format": FORMAT, "id": record.id, "user_id": record.user_id, "session_id": record.session_id,
        "role": record.role, "text": record.text, "timestamp": record.timestamp, "turn_index": record.turn_index,
        "chunk_index": record.chunk_index, "n_chunks": record.n_chunks, "metadata": dict(record.metadata),
        "key": record.key,
    }  # fmt: skip


def _journaled_item(row: JournalRow) -> dict[str, Any]:
    """A journal row as an export object: its memory's fields, what it is searched by, its times."""
    item = _record_item(MemoryRecord.from_journal(row))
    if row.context is not None:
        item["search_text"] = row.context
    item.update(written_at=row.created_at, updated_at=row.updated_at)
    return item


#: Line breaks to ``str.splitlines()`` that JSON leaves as they are: escaped in a JSONL line.
_LINE_BREAKS = {0x85: "\\u0085", 0x2028: "\\u2028", 0x2029: "\\u2029"}


def jsonl_line(item: Any) -> str:
    """``item`` as one JSONL line: UTF-8 text as it is, but for the characters ``str.splitlines()``
    breaks a line at (until 2026-12-07 written raw, and a reader splitting lines so broke the line: a reviewer)."""
    return json.dumps(item, ensure_ascii=False).translate(_LINE_BREAKS) + "\n"


def export_jsonl(store: StoreParts, user_id: str, out: str | Path | IO[str]) -> int:
    """Write ``user_id``'s memories to ``out`` (a path or a text stream), one JSON a line; return how many.

    A path is written whole or not at all (a temporary file moved into place).
    """
    _check_file_or_stream("out", out, "write")
    if isinstance(out, (str, os.PathLike)):
        target = Path(os.fspath(out)).expanduser()
        temporary = target.with_name(f".{target.name}.partial")
        try:
            with temporary.open("w", encoding="utf-8") as stream:
                count = export_jsonl(store, user_id, stream)
            temporary.replace(target)
        finally:
            temporary.unlink(missing_ok=True)
        return count
    count = 0
    for item in export_records(store, user_id):
        out.write(jsonl_line(item))
        count += 1
    return count


# --------------------------------------------------------------------------- import
def read_jsonl(source: str | Path | IO[str]) -> list[dict[str, Any]]:
    """The objects of an export file, each checked (``ValueError`` naming the line and the field)."""
    return [line.item for line in _read_lines(source)]


def _read_lines(source: str | Path | IO[str]) -> list[_Line]:
    if isinstance(source, (str, Path)):
        path = Path(source).expanduser()
        if not path.is_file():
            raise ValueError(f"import file {str(path)!r} is not a file")
        with path.open(encoding="utf-8-sig") as stream:  # a byte-order mark (an editor's save) is not a line's
            try:
                return _read_lines(stream)
            except UnicodeDecodeError as exc:  # the file and the line (until 2026-12-07 neither: a reviewer)
                raw = path.read_bytes()
                try:  # where in the file (the error's offset is the decoder's chunk's)
                    raw.decode("utf-8")
                    first = exc.start
                except UnicodeDecodeError as whole:
                    first = whole.start
                number = raw[:first].count(b"\n") + 1
                raise ValueError(f"{str(path)!r} line {number}: not UTF-8 text ({exc.reason}); export it as "
                                 "UTF-8 first (`recall export` writes UTF-8)") from None  # fmt: skip
    name = getattr(source, "name", "input")
    lines: list[_Line] = []
    for number, text in enumerate(source, start=1):
        if not text.strip():
            continue
        where = f"{name} line {number}"
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{where}: not JSON ({exc.msg} at column {exc.colno})") from None
        lines.append(_Line(where, f"line {number}", check_item(raw, where)))
    return _unique(lines)


def _unique(lines: list[_Line]) -> list[_Line]:
    """``lines`` if no id is on two of them, else ``ValueError`` naming both: one id is one memory,
    and the second would have been dropped as "already there" (a file's and the dicts' rule)."""
    seen: dict[str, _Line] = {}
    for line in lines:
        first = seen.setdefault(line.item["id"], line)
        if first is not line:
            raise ValueError(f"{line.where}: id {line.item['id']} is already on {first.short}")
    return lines


def check_item(raw: Any, where: str = "memory") -> dict[str, Any]:
    """One export object, checked and normalised; ``ValueError`` names ``where`` and the field."""
    if not isinstance(raw, Mapping):
        raise ValueError(f"{where}: a memory must be a JSON object, got {type(raw).__name__}")
    unknown = set(raw) - _FIELDS
    if unknown:
        raise ValueError(f"{where}: unknown fields {sorted(unknown)} (known: {sorted(_FIELDS)})")
    if raw.get("format", FORMAT) != FORMAT:
        raise ValueError(f"{where}: format must be {FORMAT!r}, got {raw.get('format')!r}")
    missing = [f for f in ("id", "user_id", "role", "text", "timestamp") if raw.get(f) is None]
    if missing:
        raise ValueError(f"{where}: missing fields {missing}")
    try:
        item = _checked(raw)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None
    return item


def _checked(raw: Mapping[str, Any]) -> dict[str, Any]:
    memory_id = raw["id"]
    if not isinstance(memory_id, str) or not _ID.fullmatch(memory_id):
        raise ValueError(f"id must be 32 lowercase hex digits, got {memory_id!r}")
    user_id = check_user_id(raw["user_id"])
    key = raw.get("key")
    if key is not None:
        key = check_key(key)
        if memory_id != key_memory_id(user_id, key):
            raise ValueError(f"id {memory_id} is not the id of key {key!r} for user {user_id!r}")
    timestamp = raw["timestamp"]
    if not isinstance(timestamp, str):
        raise ValueError(f"timestamp must be a string, got {timestamp!r}")
    numbers = {}
    for field, default, low in (("turn_index", 0, 0), ("chunk_index", 0, 0), ("n_chunks", 1, 1)):
        value = raw.get(field, default)
        if isinstance(value, bool) or not isinstance(value, Integral) or not low <= value <= INT_MAX:
            raise ValueError(f"{field} must be an int from {low} to {INT_MAX}, got {value!r}")
        numbers[field] = int(value)  # a NumPy integer of a caller's dicts too
    if numbers["chunk_index"] >= numbers["n_chunks"]:
        raise ValueError(f"chunk_index must be below n_chunks ({numbers['n_chunks']}), got {numbers['chunk_index']}")
    # Finite and within the calendar: 1e300 or Infinity used to be taken, and a search then
    # crashed reading it as a date (OverflowError).
    times = {field: None if raw.get(field) is None else check_epoch(field, raw[field]) for field in ("written_at", "updated_at")}
    search_text = raw.get("search_text")
    if search_text is not None:
        try:
            search_text = check_content(search_text)
        except ValueError as exc:
            raise ValueError(str(exc).replace("content", "search_text", 1)) from None
    try:
        text = check_content(raw["text"])
    except ValueError as exc:
        raise ValueError(str(exc).replace("content", "text", 1)) from None
    metadata = check_metadata(raw.get("metadata"))
    return {
        "id": memory_id, "user_id": user_id, "session_id": check_session(raw.get("session_id")),
        "role": check_role(raw["role"]), "text": text, "timestamp": format_timestamp(timestamp),
        **numbers, "extra": {**metadata, **({"key": key} if key is not None else {})},
        "context": search_text, **times,
    }  # fmt: skip


def import_jsonl(store: StoreParts, source: str | Path | IO[str] | Iterable[Mapping[str, Any]],
                 progress: bool = False) -> ImportReport:  # fmt: skip
    """Import an export (a path, a text stream, or the objects themselves) into ``store``.

    Every object is checked before anything is written; see the module docstring.

    Raises:
        ValueError: a line is not a memory (its number and the field named); nothing is written.
        MemoryReadOnlyError: the store is open read-only.
        MemoryUnavailableError: the index cannot be reached; the memories are in the journal.
    """
    if source is None or isinstance(source, (bytes, Mapping)) or not isinstance(source, (str, os.PathLike, Iterable)):
        _check_file_or_stream("source", source, "read", "or an iterable of memories")
    if isinstance(source, (str, os.PathLike)) or hasattr(source, "read"):
        _check_file_or_stream("source", source, "read")
        source = Path(os.fspath(source)) if isinstance(source, os.PathLike) else source
        lines = _read_lines(source)  # type: ignore[arg-type]
    else:
        lines = _unique([_Line(f"memory {i}", f"memory {i}", check_item(raw, f"memory {i}")) for i, raw in enumerate(source)])
    items = [line.item for line in lines]
    writer = store.writer  # a read-only store refuses here, before anything is written
    journal = store.journal
    rows = [
        JournalRow(
            id=item["id"], user_id=item["user_id"], session_id=item["session_id"], role=item["role"],
            text=item["text"], timestamp=item["timestamp"], turn_index=item["turn_index"],
            chunk_index=item["chunk_index"], n_chunks=item["n_chunks"], extra=item["extra"], context=item["context"],
        )  # fmt: skip
        for item in items
    ]
    times = {item["id"]: (item["written_at"], item["updated_at"]) for item in items}
    with journal.transaction() as db:
        _check_against(journal, lines)
        added = journal.insert(rows)
        for memory_id in added:
            written, updated = times[memory_id]
            if written is not None:
                db.execute("UPDATE memories SET created_at=?, updated_at=? WHERE id=?",
                           (written, updated if updated is not None else written, memory_id))  # fmt: skip
    _index(writer, journal, added, progress)
    return ImportReport(len(added), len(rows) - len(added), tuple(dict.fromkeys(item["user_id"] for item in items)))


def _check_against(journal: Journal, lines: list[_Line]) -> None:
    """``ValueError`` naming the line, before anything is written, for a memory the store cannot
    take as it is: its id held for another user or with another text (the journal would keep the
    held row, and the report count it "already there"), or its turn at a position the store holds
    another turn at. Run inside the import's transaction."""
    held = {row.id: row for row in journal.get_many([line.item["id"] for line in lines]) if row.state != DELETING}
    for line in lines:
        item, row = line.item, held.get(line.item["id"])
        if row is None:
            continue
        if row.user_id != item["user_id"]:
            raise ValueError(
                f"{line.where}: id {item['id']} is held by this store for another user, so it is not a memory "
                f"of user {item['user_id']!r} (nothing was imported)"
            )
        if row.text != item["text"]:
            raise ValueError(
                f"{line.where}: id {item['id']} is held by this store with another text ({row.text[:60]!r}): "
                "delete that memory first to import this one, or leave the line out (nothing was imported)"
            )
    _check_positions(journal, lines, set(held))


def _check_positions(journal: Journal, lines: list[_Line], existing: set[str]) -> None:
    """A position (user, session, ``turn_index``) given to a turn holds that turn (as a write is
    held to it, positions.py). A line at a position the store gives to a turn must be a chunk of
    that turn (the same role and number of chunks; the same id has the same text, checked before);
    a line with a positional id gives its position, so another such line there must agree with it.
    Lines without positional ids (turns the journal numbered) may share a position within the input,
    as they may in the store that wrote it, so its export imports as it was."""
    in_store: dict[tuple[str, str, int], tuple[str, int, str] | None] = {}
    in_input: dict[tuple[str, str, int], tuple[str, int, _Line]] = {}
    for line in lines:
        item = line.item
        where = (item["user_id"], item["session_id"], item["turn_index"])
        if where not in in_store:
            turn = held_turn(journal, where)
            in_store[where] = None if turn is None else (turn[0], turn[1][0].n_chunks, " ".join(r.text for r in turn[1]))
        positional = item["id"] == memory_id(where[0], where[1], turn_key("", where[2]), item["chunk_index"])
        taken = in_store[where]
        # A line given this position (a positional id) must be a chunk of the turn held there: its
        # role and chunk count. A turn the journal numbered may share the number, as a write's may
        # (positions.py): a backup holding one, or another store's numbered turns, import as before.
        if taken is not None and positional and (item["role"], item["n_chunks"]) != taken[:2]:
            _refuse(line, where, taken[0], taken[2], "in this store")
        if positional:
            first = in_input.setdefault(where, (item["role"], item["n_chunks"], line))
            if first[:2] != (item["role"], item["n_chunks"]):
                _refuse(line, where, first[0], first[2].item["text"], f"on {first[2].short}")


def _refuse(line: _Line, where: tuple[str, str, int], role: str, words: str, origin: str) -> None:
    user_id, session_id, turn_index = where
    raise ValueError(
        f"{line.where}: turn_index {turn_index} of session {session_id!r} (user {user_id!r}) already holds "
        f"another {role} turn {origin} ({words[:60]!r}); a position holds one turn: delete that turn's "
        "memories first, or leave this line out (nothing was imported)"
    )


def _index(writer: Any, journal: Any, ids: list[str], progress: bool) -> None:
    """Embed and index the imported rows, a batch at a time."""
    bar = None
    if progress and ids:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(ids), desc="importing", unit="memory")
    try:
        for start in range(0, len(ids), _BATCH):
            pending = [r for r in journal.get_many(ids[start : start + _BATCH]) if r.state == PENDING]
            try:
                writer.index(writer.embed(pending))
            except MemoryUnavailableError as exc:
                raise MemoryUnavailableError(
                    f"{exc}. The imported memories are safe in the journal ({journal.path}) and will be "
                    "indexed by `recall doctor --repair`"
                ) from exc
            if bar is not None:
                bar.update(len(pending))
    finally:
        if bar is not None:
            bar.close()


def _check_file_or_stream(name: str, value: object, method: str, also: str = "") -> None:
    """``ValueError`` naming ``name`` unless ``value`` is a non-empty path or has ``method`` (a text
    stream): ``None`` and ``""`` failed with a bare ``TypeError`` or "has an empty name" (a reviewer)."""
    if isinstance(value, (str, os.PathLike)):
        text = str(os.fspath(value))
        named = Path(text).expanduser()
        if text.strip() and "\x00" not in text and named.name not in ("", ".", "..") and not named.is_dir():
            return
    elif value is not None and callable(getattr(value, method, None)):
        return
    raise ValueError(f"{name} must be a file path or a text stream{' ' + also if also else ''}, got {value!r}")

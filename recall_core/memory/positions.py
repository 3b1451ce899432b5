"""Where a turn sits in its session: the key its ids are made of, and one turn per given position.

A turn written with its ``turn_index`` (a file's turns, a session's messages) gets positional
ids, so that writing it again never duplicates it. The position then holds one turn: written
again, it must be the same words in the same role. Ignoring other words (the ids are taken)
would lose them while acknowledging them, and mixing chunks of both would keep neither, so
they are refused with ``ValueError`` before anything is written.
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from recall_core.memory.journal import DELETING, Journal, JournalRow
from recall_core.memory.records import memory_id


def turn_key(content: str, turn_index: int | None) -> str:
    """What a turn's ids are made of: its position when given, else its words."""
    if turn_index is not None:
        return f"turn:{turn_index}"
    return "content:" + hashlib.sha256(content.encode("utf-8")).hexdigest()


#: How many of a turn's content ids (its words' hash, then salted) are looked at for the turn itself.
SALTS_LOOKED_AT = 8


def content_ids(journal: Journal, user_id: str, session_id: str, role: str, chunks: Sequence[str],
                ids: Sequence[str], batch: dict[str, tuple[str, str]], key: str) -> list[str]:  # fmt: skip
    """The ids a turn written without a position takes: ``ids`` (its words' hash), unless a memory
    there (not deleted; or a turn earlier in the ``batch``, ``id -> (text, role)``, which this call
    adds to) holds other words or another role (an ``update`` changed it, or the other speaker said
    the same); then the next ids (salted: ``#1``, ``#2``...). Writing the same turn again writes
    nothing: where one of the first :data:`SALTS_LOOKED_AT` holds it, those are its ids, even with
    an id before them freed by a delete. Until 2026-12-07 a turn said again after its memory was
    updated was acknowledged with the updated memory's id and written nowhere (a reviewer). ``key``:
    what ``ids`` are made of (:func:`turn_key`), for the ids of another number of chunks."""

    def salted(salt: int, n: int = len(chunks)) -> list[str]:
        if salt == 0:
            return list(ids) if n == len(ids) else [memory_id(user_id, session_id, key, i) for i in range(n)]
        return [memory_id(user_id, session_id, f"{ids[0]}#{salt}", i) for i in range(n)]

    def held_at(candidates: list[list[str]]) -> dict[str, tuple[str, str]]:
        wanted = [i for candidate in candidates for i in candidate]
        held = {r.id: (r.text, r.role) for r in journal.get_many(wanted) if r.state != DELETING}
        held.update((i, batch[i]) for i in wanted if i in batch)
        return held

    def fits(candidate: list[str], held: dict[str, tuple[str, str]]) -> bool:
        return all(held.get(i, (c, role)) == (c, role) for i, c in zip(candidate, chunks, strict=True))

    looked = [salted(salt) for salt in range(SALTS_LOOKED_AT)]
    held = held_at(looked)
    # the turn itself, written already (all of it, or the chunks left of it), else the first free ids
    found = next((c for c in looked if any(i in held for i in c) and fits(c, held)), None)
    if found is None:
        whole = _rechunked(journal, looked, held, role, chunks, salted)
        if whole is not None:  # the turn itself, chunked otherwise: its ids, as many as it has
            batch.update((r.id, (r.text, role)) for r in whole)
            return [r.id for r in whole]
    found = found or next((c for c in looked if fits(c, held)), None)
    salt = SALTS_LOOKED_AT
    while found is None:
        candidate = salted(salt)
        found = candidate if fits(candidate, held_at([candidate])) else None
        salt += 1
    batch.update((i, (c, role)) for i, c in zip(found, chunks, strict=True))
    return found


def _rechunked(journal: Journal, looked: Sequence[list[str]], held: dict[str, tuple[str, str]], role: str,
               chunks: Sequence[str], salted: Callable[[int, int], list[str]]) -> list[JournalRow] | None:
    """The rows of the turn of ``role`` and ``chunks``' words written whole in the journal under other
    chunk boundaries (the chunker changed between the writes: a sentence end it learnt, a new
    encoder window), found by its first id among the ``looked`` at; ``None`` if there is none. Until
    2026-12-08 such a turn was stored a second time, under salted ids (a reviewer)."""
    for salt, candidate in enumerate(looked):
        if held.get(candidate[0], ("", ""))[1] != role:
            continue
        first = journal.get_many(candidate[:1])
        if not first:
            continue  # written in this batch: by this chunker
        n = first[0].n_chunks
        rows = [r for r in journal.get_many(salted(salt, n)) if r.state != DELETING]
        if len(rows) == n and all(r.role == role for r in rows) and same_words([r.text for r in rows], chunks):
            return rows
    return None


def held_turn(journal: Journal, where: tuple[str, str, int]) -> tuple[str, list[JournalRow]] | None:
    """``(role, chunks)`` of the turn written at ``where`` (user, session, turn index) with its
    position given (positional ids; a turn numbered by the journal may share the number), the
    chunks not deleted; ``None`` when there is none (never written, or every chunk deleted)."""
    user_id, session_id, turn_index = where
    key = turn_key("", turn_index)
    rows = [r for r in journal.turn_rows(*where) if r.id == memory_id(user_id, session_id, key, r.chunk_index)]
    return (rows[0].role, rows) if rows else None


def rechunked_at(positions: HeldPositions, where: tuple[str, str, int], role: str, chunks: Sequence[str]) -> list[str] | None:
    """The ids of the turn of ``role`` and ``chunks``' words that the journal holds whole at ``where``
    (user, session, turn index) in another number of chunks (the chunker changed between the
    writes), which are its ids; else ``None``. Until 2026-12-08 one chunk more was written as a
    memory of its own, and one fewer was acknowledged without its last id (a reviewer)."""
    held = positions.held(where)
    whole = whole_turn(held[1]) if held is not None else None
    if held is None or whole is None or len(whole) == len(chunks):
        return None
    return [r.id for r in whole] if same_turn(held, role, chunks) else None


def whole_turn(rows: Sequence[JournalRow]) -> list[JournalRow] | None:
    """Of one turn's ``rows``, those that make it whole (chunks 0 to n - 1, each saying n chunks), in
    order; ``None`` when some are deleted. A store written before 2026-12-08 may hold a stray chunk
    beside them (one chunk more, written after the chunker changed): it is not part of the turn, and
    until then it made writing the turn again fail with an ``IndexError`` (a reviewer)."""
    by_count: dict[int, dict[int, JournalRow]] = {}
    for row in rows:
        by_count.setdefault(row.n_chunks, {})[row.chunk_index] = row
    for n, found in by_count.items():
        if sorted(found) == list(range(n)):
            return [found[i] for i in range(n)]
    return None


def same_words(held: Sequence[str], chunks: Sequence[str]) -> bool:
    """Whether two chunkings of a turn hold the same text, spacing aside, where their boundaries may
    differ. Chunks are stripped substrings of the turn, cut at a space or, in CJK text and in a word
    too long for one chunk, between characters: a boundary stands for a space, or for none where it
    could have been cut between characters (:func:`_tight`). Joined with spaces, a CJK turn chunked
    otherwise compared unequal; with every space taken out, a correction that moved one ("old
    backups", "oldbackups") compared equal and was dropped (reviewers, 2026-12-08)."""
    a, b = _marked(held), _marked(chunks)
    i = j = 0
    while i < len(a) and j < len(b):
        if a[i] == b[j]:
            i, j = i + 1, j + 1
        elif a[i] == _BOUNDARY and (b[j] == " " or _tight(a, i)):
            i, j = i + 1, j + (b[j] == " ")
        elif b[j] == _BOUNDARY and (a[i] == " " or _tight(b, j)):
            i, j = i + (a[i] == " "), j + 1
        else:
            return False
    return i == len(a) and j == len(b)


#: Between two chunks in :func:`same_words` (a turn never holds NUL: the memory refuses it).
_BOUNDARY = "\x00"
#: A run without spaces this long before a boundary is a word the chunker cut between characters.
_CUT_WORD = 16


def _marked(chunks: Sequence[str]) -> str:
    """``chunks`` (empty ones left out) with their spacing made single spaces, joined by :data:`_BOUNDARY`."""
    return _BOUNDARY.join(" ".join(chunk.split()) for chunk in chunks if chunk.strip())


def _tight(marked: str, at: int) -> bool:
    """Whether the boundary at ``at`` of ``marked`` may stand for no space: the chunker cut there between
    characters (after or before a CJK character, or inside a word of :data:`_CUT_WORD` characters or
    more), not at a space. A Latin boundary always stands for a space (until 2026-12-08 "eight|nine"
    took "eightnine" for the same turn, and the correction was dropped: a reviewer)."""
    before, after = marked[at - 1] if at else " ", marked[at + 1] if at + 1 < len(marked) else " "
    if unicodedata.east_asian_width(before) in "WF" or unicodedata.east_asian_width(after) in "WF":
        return True
    word_start = max(marked.rfind(" ", 0, at), marked.rfind(_BOUNDARY, 0, at)) + 1
    return at - word_start >= _CUT_WORD


def same_turn(held: tuple[str, list[JournalRow]], role: str, chunks: Sequence[str]) -> bool:
    """Whether a turn of ``role`` and ``chunks`` is the ``held`` one: the same characters (spacing aside)
    when all of it is there; with chunks deleted, the same chunks where it has some (writing it
    again brings the deleted ones back)."""
    held_role, rows = held
    if held_role != role:
        return False
    whole = whole_turn(rows)
    if whole is not None:
        return same_words([r.text for r in whole], chunks)
    # The turn's own rows say its count (its first chunk's, else the most said): a stray chunk a store of
    # before 2026-12-08 holds beside it says another (compared alone, it let another turn in: a reviewer).
    counts = [r.n_chunks for r in rows]
    own = next((r.n_chunks for r in rows if r.chunk_index == 0), max(set(counts), key=counts.count))
    return own == len(chunks) and all(r.text == chunks[r.chunk_index] for r in rows if r.n_chunks == own)


def refuse(where: tuple[str, str, int], role: str, words: str) -> None:
    """The ``ValueError`` of a turn written at ``where``, which holds another ``role`` turn of ``words``."""
    user_id, session_id, turn_index = where
    raise ValueError(
        f"turn_index {turn_index} of session {session_id!r} (user {user_id!r}) already holds another "
        f"{role} turn ({words[:60]!r}); write it without turn_index, or delete that turn's memories first "
        "(nothing was written)"
    )


@dataclass
class HeldPositions:
    """The given positions of one write (a transaction): each holds one turn, journaled or in the write."""

    journal: Journal
    #: (user, session, turn index) -> (role, chunks) of the turn this write puts there
    claimed: dict[tuple[str, str, int], tuple[str, Sequence[str]]] = field(default_factory=dict)
    #: (user, session, turn index) -> what the journal holds there (:func:`held_turn`), read once a write
    read: dict[tuple[str, str, int], tuple[str, list[JournalRow]] | None] = field(default_factory=dict)

    def held(self, where: tuple[str, str, int]) -> tuple[str, list[JournalRow]] | None:
        """:func:`held_turn` at ``where``, read once in this write (the journal changes only at its end)."""
        if where not in self.read:
            self.read[where] = held_turn(self.journal, where)
        return self.read[where]

    def claim(self, where: tuple[str, str, int], role: str, chunks: Sequence[str]) -> None:
        """Put a turn of ``role`` and ``chunks`` at ``where`` (user, session, turn index): ``ValueError``
        when the journal or this write holds another turn there."""
        if where in self.claimed:
            held_role, held_chunks = self.claimed[where]
            if held_role != role or not same_words(held_chunks, chunks):
                refuse(where, held_role, " ".join(held_chunks))
            return
        held = self.held(where)
        if held is not None and not same_turn(held, role, chunks):
            refuse(where, held[0], " ".join(r.text for r in held[1]))
        self.claimed[where] = (role, list(chunks))

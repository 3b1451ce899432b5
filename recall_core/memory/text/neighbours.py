"""What a memory is searched by, from the turns around it in its session.

With the window on (:class:`~recall_core.memory.text.composition.SearchText`), a turn's first
chunk is searched with the words of the turn before it, so an answer ("Dutch!") is found by its
question's words. A new turn takes that turn from its own batch or the journal; an updated
memory's context is composed again, and so is the one of the turn after it, which holds its words.
"""

from __future__ import annotations

from collections.abc import Mapping

from recall_core.memory.journal import Journal, JournalRow
from recall_core.memory.text.composition import SearchText, speaker_of

#: ``(user_id, session_id) -> (turn_index, speaker, words)``: the latest turn of each session in a batch.
Latest = Mapping[tuple[str, str], tuple[int, str, str]]


def turn_before(
    journal: Journal, search_text: SearchText, user_id: str, session_id: str, turn_index: int, latest: Latest
) -> tuple[str, str] | None:
    """``(speaker, words)`` of the turn before this one in its session: from ``latest`` (this batch),
    else the journal; ``None`` when there is none or the window is off."""
    if search_text.window == "never":
        return None
    in_batch = latest.get((user_id, session_id))
    if in_batch is not None and in_batch[0] < turn_index:
        return in_batch[1], in_batch[2]
    row = journal.previous_turn(user_id, session_id, turn_index)
    if row is None:
        return None
    return speaker_of(row.role, row.extra), row.text


def context_of(journal: Journal, search_text: SearchText, row: JournalRow) -> str | None:
    """What ``row`` is searched by (``None`` when that is its text), composed as for a new turn."""
    first = row.chunk_index == 0 and "key" not in row.extra
    before = turn_before(journal, search_text, row.user_id, row.session_id, row.turn_index, {}) if first else None
    context = search_text.compose([row.text], row.timestamp, row.role, row.extra, before)[0]
    return None if context == row.text else context


def following(journal: Journal, search_text: SearchText, row: JournalRow) -> JournalRow | None:
    """The first chunk of the turn after ``row``'s in its session, which may be searched with
    ``row``'s words (the window is on): with the last chunk of its
    turn, or the chunk left last when the ones after it are deleted. Callers compose its context
    again and write it where it changed (until 2026-12-07 a chunk left last was passed over)."""
    if search_text.window == "never":  # a keyed note too: a store written before 2026-12-07 has its
        return None  # words in the turn after it (a reviewer)
    return journal.next_turn(row.user_id, row.session_id, row.turn_index)

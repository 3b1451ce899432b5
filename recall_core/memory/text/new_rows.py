"""The journal rows of new turns: their positions, their ids and what each chunk is searched by.

A turn without a given index takes the next position of its session and content ids
(:func:`~recall_core.memory.positions.content_ids`); a given position holds one turn
(:class:`~recall_core.memory.positions.HeldPositions`). Each chunk's search text is composed
with the turn before it, which may be an earlier turn of the same batch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from recall_core.memory.journal import DELETING, Journal, JournalRow
from recall_core.memory.positions import HeldPositions, content_ids, rechunked_at
from recall_core.memory.text.composition import SearchText, speaker_of
from recall_core.memory.text.neighbours import context_of, following, turn_before
from recall_core.memory.text.prepared import Prepared

#: What a write does with a turn whose given position holds another one (instead of raising).
OnTaken = Callable[[Prepared, ValueError], None]


def journal_turns(
    journal: Journal, search_text: SearchText, prepared: Sequence[Prepared], on_taken: OnTaken | None = None
) -> list[str]:
    """Give turns without an index the next positions of their sessions, compose what each chunk
    is searched by, and journal the new rows (inside the caller's transaction); return the ids
    of every chunk of ``prepared``, once each. A given position that holds another turn raises
    ``ValueError``, or with ``on_taken`` is reported to it and the turn is not written."""
    batch: dict[str, tuple[str, str]] = {}
    held = HeldPositions(journal)
    for p in prepared:
        if p.turn_index is None and "key" not in p.extra:
            p.ids = content_ids(journal, p.user_id, p.session_id, p.role, p.chunks, p.ids, batch, p.key)
        elif p.turn_index is not None:  # the turn written there before, chunked otherwise: its ids
            p.ids = rechunked_at(held, (p.user_id, p.session_id, p.turn_index), p.role, p.chunks) or p.ids
    all_ids = list(dict.fromkeys(i for p in prepared for i in p.ids))
    # Tombstoned rows do not count: writing a deleted turn again brings it back.
    existing = {row.id: row for row in journal.get_many(all_ids) if row.state != DELETING}
    next_index: dict[tuple[str, str], int] = {}
    rows: list[JournalRow] = []
    seen: set[str] = set()
    # (user, session) -> (turn index, speaker, last chunk) of the latest turn of this batch
    latest: dict[tuple[str, str], tuple[int, str, str]] = {}
    for p in prepared:
        if p.turn_index is not None:  # a given position holds one turn: another one is refused
            try:
                held.claim((p.user_id, p.session_id, p.turn_index), p.role, p.chunks)
            except ValueError as taken:
                if on_taken is None:
                    raise
                on_taken(p, taken)  # the caller keeps the position's turn and reports this one
                continue
        if all(i in existing for i in p.ids) or all(i in seen for i in p.ids):
            continue  # the same turn again: nothing new (pending rows are picked up by the caller)
        turn_index = p.turn_index
        if turn_index is None:
            key = (p.user_id, p.session_id)
            if key not in next_index:
                next_index[key] = journal.next_turn_index(*key)
            turn_index = next_index[key]
            next_index[key] += 1
        keyed = "key" in p.extra
        before = None if keyed else turn_before(journal, search_text, p.user_id, p.session_id, turn_index, latest)
        contexts = search_text.compose(p.chunks, p.timestamp, p.role, p.extra, before)
        if not keyed:
            latest[(p.user_id, p.session_id)] = (turn_index, speaker_of(p.role, p.extra), p.chunks[-1])
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
    return all_ids + _recomposed_followers(journal, search_text, rows)


def _recomposed_followers(journal: Journal, search_text: SearchText, rows: Sequence[JournalRow]) -> list[str]:
    """The turns stored right after the new ones, whose search text now holds a new turn's words:
    composed again and made pending here; the ids of those written before this batch, to index.
    Until 2026-12-07 a turn written before the one ahead of it ("Dutch!", then the question it
    answers) was never searched with it (a reviewer)."""
    new = {r.id for r in rows}
    changed: list[str] = []
    for row in {(r.user_id, r.session_id, r.turn_index): r for r in rows if "key" not in r.extra}.values():
        after = following(journal, search_text, row)
        if after is None or after.id in changed:
            continue
        context = context_of(journal, search_text, after)
        if context != after.context:
            journal.set_context(after.id, context)
            changed.append(after.id)
    return [i for i in changed if i not in new]  # (the new ones are among the caller's ids already)

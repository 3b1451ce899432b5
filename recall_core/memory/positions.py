"""Where a turn sits in its session: the key its ids are made of, and one turn per given position.

A turn written with its ``turn_index`` (a file's turns, a session's messages) gets positional
ids, so that writing it again never duplicates it. The position then holds one turn: written
again, it must be the same words in the same role. Ignoring other words (the ids are taken)
would lose them while acknowledging them, and mixing chunks of both would keep neither, so
they are refused with ``ValueError`` before anything is written.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field

from recall_core.memory.journal import DELETING, Journal, JournalRow
from recall_core.memory.records import memory_id


def turn_key(content: str, turn_index: int | None) -> str:
    """What a turn's ids are made of: its position when given, else its words."""
    if turn_index is not None:
        return f"turn:{turn_index}"
    return "content:" + hashlib.sha256(content.encode("utf-8")).hexdigest()


def journaled_words(journal: Journal, user_id: str, session_id: str, turn_index: int, chunks: int) -> str:
    """The words of the journaled turn at a position, whose first chunk says it has ``chunks`` chunks."""
    ids = [memory_id(user_id, session_id, turn_key("", turn_index), i) for i in range(chunks)]
    rows = [r for r in journal.get_many(ids) if r.state != DELETING]
    return " ".join(r.text for r in sorted(rows, key=lambda row: row.chunk_index))


def check_same_turn(where: tuple[str, str, int], held: tuple[str, str], role: str, chunks: Sequence[str]) -> None:
    """Refuse a turn of ``role`` and ``chunks`` at ``where`` (user, session, turn index) unless the
    turn ``held`` there (role, words) is the same words in the same role."""
    held_role, words = held
    if held_role == role and words.split() == " ".join(chunks).split():
        return
    user_id, session_id, turn_index = where
    raise ValueError(
        f"turn_index {turn_index} of session {session_id!r} (user {user_id!r}) already holds another "
        f"{held_role} turn ({words[:60]!r}); write it without turn_index, or delete that turn's memories first "
        "(nothing was written)"
    )


@dataclass
class HeldPositions:
    """The given positions of one write (a transaction): each holds one turn, journaled or in the write."""

    journal: Journal
    #: the first chunk's id -> (role, words) of the turn this write puts there
    claimed: dict[str, tuple[str, str]] = field(default_factory=dict)

    def claim(self, where: tuple[str, str, int], first_id: str, role: str, chunks: Sequence[str],
              journaled: JournalRow | None) -> None:  # fmt: skip
        """Put a turn of ``role`` and ``chunks`` at ``where`` (user, session, turn index), whose first
        chunk's id is ``first_id`` and journaled row ``journaled`` (``None``: not journaled): refused
        (:func:`check_same_turn`) when the journal or this write holds another turn there."""
        if journaled is not None:
            check_same_turn(where, (journaled.role, journaled_words(self.journal, *where, journaled.n_chunks)), role, chunks)
        elif first_id in self.claimed:
            check_same_turn(where, self.claimed[first_id], role, chunks)
        self.claimed.setdefault(first_id, (role, " ".join(chunks)))

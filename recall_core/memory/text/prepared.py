"""A turn prepared for writing: checked, cut into chunks that fit the encoder, its memories' ids."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from recall_core.memory.positions import turn_key
from recall_core.memory.records import Turn, memory_id
from recall_core.memory.text.chunking import chunk_text
from recall_core.memory.validation import (
    check_content,
    check_metadata,
    check_role,
    check_session,
    check_turn_index,
    check_user_id,
    format_timestamp,
)

#: A turn cut into more memories than this warns (:class:`BulkTextWarning`): a 5,000-word paste
#: became 44 memories without a word (issue 22).
BULK_CHUNKS = 8


class BulkTextWarning(UserWarning):
    """One turn became many memories: most likely a pasted document, not something said."""


@dataclass
class Prepared:
    """One turn, checked and cut into chunks, ready to be journaled."""

    user_id: str
    role: str
    session_id: str
    timestamp: str
    extra: dict[str, Any]
    turn_index: int | None
    chunks: list[str]
    ids: list[str]
    key: str = ""  # what its ids are made of (positions.turn_key); "" for a keyed memory



def prepare_turn(turn: Turn | Mapping[str, Any], max_tokens: int | None, count_tokens: Callable[[str], int]) -> Prepared:
    """``turn`` checked (a ``ValueError`` names the field) and cut into chunks of at most
    ``max_tokens`` (``count_tokens`` counts them), with its memories' ids."""
    if not isinstance(turn, Turn):
        turn = Turn.from_mapping(turn)
    user_id = check_user_id(turn.user_id)
    role = check_role(turn.role)
    content = check_content(turn.content)
    session_id = check_session(turn.session_id)
    extra = check_metadata(turn.metadata)
    turn_index = check_turn_index(turn.turn_index)
    timestamp = format_timestamp(turn.timestamp)
    chunks = chunk_text(content, max_tokens, count_tokens)
    if len(chunks) > BULK_CHUNKS:
        warnings.warn(
            f"a {role} turn of {len(content.split())} words becomes {len(chunks)} memories of user "
            f"{user_id!r}: a pasted document is searched and injected piece by piece, as if each piece "
            "were something the user said (write only the turns you want recalled)",
            BulkTextWarning, stacklevel=4,
        )  # fmt: skip
    key = turn_key(content, turn_index)
    ids = [memory_id(user_id, session_id, key, i) for i in range(len(chunks))]
    return Prepared(user_id, role, session_id, timestamp, extra, turn_index, chunks, ids, key)

"""What a ``<recall>`` searches with: the current turn's text (and the reply so far), or the hidden state.

Pure functions of the ids before the marker, so the loop hands them what it has and gets a
:class:`~recall_core.types.RecallQuery` back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from recall_core.config import RecallConfig
from recall_core.tokens import RECALL_TOKEN
from recall_core.types import RecallQuery

_ROLE_NAMES = frozenset({"system", "user", "assistant", "tool"})


@dataclass(frozen=True)
class QueryContext:
    """What the loop knows that a query needs, fixed for one call."""

    tokenizer: Any
    config: RecallConfig
    recall_id: int
    pad_id: int
    boundary_ids: frozenset[int]
    #: The last user message of a chat prompt (``None``: a plain text prompt).
    prompt_query: str | None = None
    #: The trained query head ``query_mode="hidden"`` searches with (the loop refuses that mode without one).
    query_head: Any = None


def build_query(context: QueryContext, ids: Sequence[int], reply_start: int | None, hidden_states: Any,
                text_only: bool = False) -> RecallQuery:  # fmt: skip
    """The query of a ``<recall>`` whose preceding ids are ``ids`` (the marker itself excluded);
    ``text_only``: its text, even under ``query_mode="hidden"`` (nothing will be searched).

    A chat prompt's markers search with its last user message; a ``<recall>`` in the reply
    (``reply_start`` is where the reply begins in ``ids``) searches with that message followed
    by what the answer has said so far, so a recall mid-answer asks about the turn and what the
    answer has reached; with a ``query_window``, the last tokens of that. A plain text prompt: the
    text before the marker (with a ``query_window``, its last tokens). Until 2026-12-07 a chat's
    window was taken before the marker, which by default ends the system message: every question
    searched with the system prompt's last words (a reviewer).
    """
    config = context.config
    if context.prompt_query is not None:
        reply = reply_text(context, ids[reply_start:]) if reply_start is not None else ""
        text = f"{context.prompt_query} {reply}" if reply else context.prompt_query
        if config.query_window is not None and context.tokenizer is not None:
            window = context.tokenizer.encode(text, add_special_tokens=False)[-config.query_window :]
            text = context.tokenizer.decode(window, skip_special_tokens=True).strip()
    else:
        text = turn_text(context, ids) if context.tokenizer is not None else ""
    if config.query_mode != "hidden" or context.query_head is None or text_only:
        return RecallQuery(text=text, mode="text")
    if hidden_states is None:
        raise RuntimeError("hidden query mode needs the hidden states of the <recall> forward pass")
    return RecallQuery(text=text, mode="hidden", vector=context.query_head.vector(hidden_states),
                       vector_space=context.query_head.encoder_name)


def reply_text(context: QueryContext, ids: Sequence[int]) -> str:
    """The reply's words: pads, markers (special or literal) and special tokens removed."""
    ids = [i for i in ids if i != context.pad_id and i != context.recall_id]
    return context.tokenizer.decode(ids, skip_special_tokens=True).replace(RECALL_TOKEN, "").strip()


def turn_text(context: QueryContext, ids: Sequence[int]) -> str:
    """The current turn (the text after the last turn boundary), or the last ``query_window`` tokens."""
    tokenizer, window = context.tokenizer, context.config.query_window
    ids = [i for i in ids if i != context.pad_id and i != context.recall_id]
    if window is not None:
        return tokenizer.decode(ids[-window:], skip_special_tokens=True).strip()
    end = len(ids)
    # Walk back one turn at a time: a <recall> right after "<|im_start|>assistant\n" means
    # the turn to ask about is the user's, one boundary further back.
    for start in range(len(ids) - 1, -1, -1):
        if ids[start] in context.boundary_ids:
            text = strip_role(tokenizer.decode(ids[start + 1 : end], skip_special_tokens=True))
            if text:
                return text
            end = start
    return strip_role(tokenizer.decode(ids[:end], skip_special_tokens=True))


def strip_role(text: str) -> str:
    """Drop a chat template's role header ("user\\n...") from the start of a turn's text."""
    text = text.strip()
    first_line, _, rest = text.partition("\n")
    if first_line.strip().rstrip(":").lower() in _ROLE_NAMES:
        text = rest
    return text.strip()

"""Recall in token ids, before the model runs: each ``<recall>``'s notes block spliced in after it.

Where a marker's query is known before any forward pass (a prompt's markers under
``recall_policy="auto"``, searching with text), recall needs nothing from the model: search,
then run the ids once with every notes block in place. The in-process loop does this for a
prompt's markers (one prefill instead of a forward pass before, at and after each marker:
issue 21, item 5); the served loop does it for every marker, the engine running the ids.

The sequence kept alongside holds one ``<|memory_pad|>`` per injected id, as the in-process
loop's sequence does, so traces, positions and usage read the same on every path. A marker
where nothing is injected is dropped from both.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from recall_core.config import RecallConfig
from recall_core.decoding.notes import block_ids, note_lines
from recall_core.decoding.query import QueryContext, build_query
from recall_core.decoding.select import search_memory
from recall_core.types import Memory, Recall, RecallQuery

__all__ = ["MAX_RECALLS_REACHED", "RECALL_OFF", "TokenRecalls"]

MAX_RECALLS_REACHED = "max_recalls reached"
#: Why a prompt marker recalled nothing under ``recall_policy="off"``.
RECALL_OFF = "recall off"


class TokenRecalls:
    """One generation's recalls done in ids: the attempts made so far and where each is recorded.

    Args:
        tokenizer: the model's tokenizer (the notes are written in its ids).
        memory: what is searched (``None``: every marker is dropped, as ``generate()`` would run).
        config: the recall settings (``max_recalls``, the template, ``empty_notes``...).
        context: what a query is built from (:class:`~recall_core.decoding.query.QueryContext`).
        record: called with each :class:`~recall_core.types.Recall`, in order.
    """

    def __init__(self, tokenizer: Any, memory: Memory | None, config: RecallConfig, context: QueryContext,
                 record: Callable[[Recall], None]) -> None:  # fmt: skip
        self.tokenizer, self.memory, self.config, self.context = tokenizer, memory, config, context
        self.record = record
        self.attempts = 0

    def prompt(self, prompt: Sequence[int], start: int = 0) -> tuple[list[int], list[int]]:
        """The prompt with each marker's notes in place: ``(sequence with pads, ids the model runs)``.

        Markers before ``start`` (the part a session's cache already holds) are left as they are.
        """
        sequence = list(prompt[:start])
        run = list(prompt[:start])
        for token in prompt[start:]:
            sequence.append(token)
            run.append(token)
            if token != self.context.recall_id:
                continue
            block = self.recall(sequence, reply_start=None)
            if block:
                run.extend(block)
            else:  # nothing injected: the marker is dropped
                sequence.pop()
                run.pop()
        return sequence, run

    def recall(self, sequence: list[int], reply_start: int | None) -> list[int]:
        """Search at the ``<recall>`` that ends ``sequence``; append pads for what is injected and
        return the notes block's ids (``[]``: nothing injected).

        ``reply_start`` (``None`` for a prompt's marker) is where the reply begins in ``sequence``.
        """
        in_prompt = reply_start is None
        trigger = "prompt" if in_prompt else "model"
        query, candidates, chosen, reason = RecallQuery(text=""), [], [], MAX_RECALLS_REACHED
        if self.config.recall_policy == "off":  # not even a prompt's marker recalls
            reason = RECALL_OFF
        elif self.attempts < self.config.max_recalls:
            self.attempts += 1
            query = build_query(self.context, sequence[:-1], reply_start, None)
            chosen, reason, candidates = search_memory(self.memory, query, self.config)
        considered = tuple((c.id, float(c.score)) for c in candidates)
        empty = (not chosen and trigger == "model" and self.memory is not None
                 and reason not in (MAX_RECALLS_REACHED, RECALL_OFF) and self.config.empty_notes is not None)  # fmt: skip
        position = len(sequence)
        if not chosen and not empty:
            self.record(Recall(position - (1 if in_prompt else 0), None, None, "", query.text, reason=reason,
                               candidates=considered, in_prompt=in_prompt, trigger=trigger))  # fmt: skip
            return []
        lines = note_lines(self.tokenizer, chosen, self.config) if chosen else [self.config.empty_notes]
        notes = "\n".join(lines)
        block = block_ids(self.tokenizer, notes, self.config)
        sequence.extend([self.context.pad_id] * len(block))
        score, memory_id = (float(chosen[0].score), chosen[0].id) if chosen else (None, None)
        self.record(Recall(position, score, memory_id, notes, query.text, length=len(block),
                           reason=reason if empty else None, candidates=considered, in_prompt=in_prompt,
                           memories=tuple((c.id, float(c.score)) for c in chosen), inject_mode="tokens",
                           trigger=trigger))  # fmt: skip
        return block

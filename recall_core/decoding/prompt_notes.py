"""Recall in token ids, before the model runs: each ``<recall>``'s notes block spliced in after it.

Where a marker's query is known before any forward pass (a prompt's markers under
``recall_policy="auto"``, searching with text), recall needs nothing from the model: search,
then run the ids once with every notes block in place. The in-process loop does this for a
prompt's markers (:func:`prefill_once`: one prefill instead of a forward pass before, at and
after each marker: issue 21, item 5); the served loop does it for every marker, the engine
running the ids.

The sequence kept alongside holds one ``<|memory_pad|>`` per injected id, as the in-process
loop's sequence does, so traces, positions and usage read the same on every path. A marker
where nothing is injected is dropped from both.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from recall_core.config import RecallConfig
from recall_core.decoding.budget import NO_ROOM
from recall_core.decoding.hf_compat import prefill, take_cache
from recall_core.decoding.notes import block_ids, note_lines
from recall_core.decoding.query import QueryContext, build_query
from recall_core.decoding.select import search_memory
from recall_core.types import Memory, MemoryCandidate, Recall, RecallQuery

__all__ = ["MAX_RECALLS_REACHED", "RECALL_OFF", "Search", "TokenRecalls", "prefill_once"]

MAX_RECALLS_REACHED = "max_recalls reached"
#: Why a prompt marker recalled nothing under ``recall_policy="off"``.
RECALL_OFF = "recall off"


@dataclass(frozen=True)
class Search:
    """What one ``<recall>`` found, before anything is injected."""

    query: RecallQuery
    chosen: list[MemoryCandidate]
    #: Why nothing was chosen (``None`` when something was).
    reason: str | None
    #: Every candidate the search returned, as ``(id, score)``.
    considered: tuple[tuple[str, float], ...]
    #: The model asked and the memory has nothing: it reads so (the template around
    #: ``empty_notes``) instead of going on from a bare ``<recall>`` it was never trained past.
    empty: bool


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
                 record: Callable[[Recall], None], room: Callable[[int], bool] = lambda positions: True) -> None:  # fmt: skip
        self.tokenizer, self.memory, self.config, self.context = tokenizer, memory, config, context
        self.record = record
        self.room = room
        self.attempts = 0
        self.pending = 0  # positions a prompt's notes took so far, not yet counted by the loop

    def prompt(self, prompt: Sequence[int], start: int = 0) -> tuple[list[int], list[int]]:
        """The prompt with each marker's notes in place: ``(sequence with pads, ids the model runs)``.

        Markers before ``start`` (the part a session's cache already holds) are left as they are.
        """
        sequence = list(prompt[:start])
        run = list(prompt[:start])
        self.pending = 0
        for token in prompt[start:]:
            sequence.append(token)
            run.append(token)
            if token != self.context.recall_id:
                continue
            block = self.recall(sequence, reply_start=None)
            if block:
                run.extend(block)
                self.pending += len(block)
            else:  # nothing injected: the marker is dropped
                sequence.pop()
                run.pop()
                self.pending -= 1
        return sequence, run

    def recall(self, sequence: list[int], reply_start: int | None) -> list[int]:
        """Search at the ``<recall>`` that ends ``sequence``; append pads for what is injected and
        return the notes block's ids (``[]``: nothing injected).

        ``reply_start`` (``None`` for a prompt's marker) is where the reply begins in ``sequence``.
        """
        in_prompt = reply_start is None
        trigger = "prompt" if in_prompt else "model"
        found = self.search(sequence[:-1], reply_start, trigger)
        position = len(sequence)
        if not found.chosen and not found.empty:
            self.record(Recall(position - (1 if in_prompt else 0), None, None, "", found.query.text, reason=found.reason,
                               candidates=found.considered, in_prompt=in_prompt, trigger=trigger))  # fmt: skip
            return []
        chosen = found.chosen
        lines = note_lines(self.tokenizer, chosen, self.config) if chosen else [self.config.empty_notes]
        notes = "\n".join(lines)
        block = block_ids(self.tokenizer, notes, self.config)
        if not self.room(len(block) + self.pending):  # it and the reply would pass the model's window
            self.record(Recall(position - (1 if in_prompt else 0), None, None, "", found.query.text, reason=NO_ROOM,
                               candidates=found.considered, in_prompt=in_prompt, trigger=trigger))  # fmt: skip
            return []
        sequence.extend([self.context.pad_id] * len(block))
        score, memory_id = (float(chosen[0].score), chosen[0].id) if chosen else (None, None)
        self.record(Recall(position, score, memory_id, notes, found.query.text, length=len(block),
                           reason=found.reason if found.empty else None, candidates=found.considered,
                           in_prompt=in_prompt, memories=tuple((c.id, float(c.score)) for c in chosen),
                           inject_mode="tokens", trigger=trigger))  # fmt: skip
        return block

    def search(self, before: Sequence[int], reply_start: int | None, trigger: str, hidden_states: Any = None) -> Search:
        """The search of the ``<recall>`` that follows the ids ``before``, one of ``max_recalls``.

        ``trigger`` is who wrote the marker (``"prompt"``, ``"model"``, ``"uncertainty"``);
        ``hidden_states`` are the marker's, for ``query_mode="hidden"`` (in process only).
        Nothing is searched under ``recall_policy="off"`` (not even a prompt's marker) or once
        ``max_recalls`` searches were made.
        """
        query, candidates, chosen, reason = RecallQuery(text=""), [], [], MAX_RECALLS_REACHED
        if self.config.recall_policy == "off":
            reason = RECALL_OFF
        elif self.attempts < self.config.max_recalls:
            self.attempts += 1
            # with no memory nothing is searched: the query is the trace's text (no hidden states were kept)
            query = build_query(self.context, before, reply_start, hidden_states, text_only=self.memory is None)
            chosen, reason, candidates = search_memory(self.memory, query, self.config)
        empty = (not chosen and trigger == "model" and self.memory is not None
                 and reason not in (MAX_RECALLS_REACHED, RECALL_OFF) and self.config.empty_notes is not None)  # fmt: skip
        return Search(query, chosen, reason, tuple((c.id, float(c.score)) for c in candidates), empty)


def prefill_once(model: Any, generation_config: Any, searches: TokenRecalls, prompt: torch.LongTensor, past: int,
                 model_kwargs: dict[str, Any]) -> tuple[torch.LongTensor, Any, dict[str, Any]]:  # fmt: skip
    """The in-process loop's prefill of a prompt with markers, in one forward pass: search at every
    marker first (``searches``), then run the prompt with each notes block in place (the block's own
    ids where the sequence has pads). ``past``: how many ids a cache given to ``generate()`` holds.

    The same recalls, trace and sequence as a forward pass per piece, without a forward pass per
    piece: the first token comes sooner (issue 21, item 5). Returns, as the loop's prefill does,
    the sequence so far (with pads), the outputs (the last position's logits) and the model kwargs."""
    ids, run = searches.prompt(prompt[0].tolist(), start=past)
    sequence = torch.tensor([ids], dtype=prompt.dtype, device=prompt.device)
    running = torch.tensor([run], dtype=prompt.dtype, device=prompt.device)
    model_kwargs = dict(model_kwargs)
    if model_kwargs.get("attention_mask") is not None:
        model_kwargs["attention_mask"] = model_kwargs["attention_mask"].new_ones((1, len(ids)))
    positions = model_kwargs.get("position_ids")
    if positions is not None:
        count = torch.arange(len(ids), dtype=positions.dtype, device=positions.device)
        model_kwargs["position_ids"] = count.expand(*positions.shape[:-1], len(ids))
    if past == 0:
        outputs = prefill(model, running, generation_config, model_kwargs)
    else:
        inputs = model.prepare_inputs_for_generation(
            running, next_sequence_length=len(run) - past, is_first_iteration=True, **model_kwargs
        )
        outputs = model(**inputs, return_dict=True)
    model_kwargs = take_cache(outputs, model_kwargs)
    if outputs.logits.shape[1] > 1:
        outputs.logits = outputs.logits[:, -1:]
    return sequence, outputs, model_kwargs

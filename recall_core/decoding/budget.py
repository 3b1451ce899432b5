"""Length limits that count generated tokens only: the positions recall adds are not generated.

An injected span appends one ``<|memory_pad|>`` id per memory embedding, and under
``recall_policy="uncertainty"`` the loop writes ``<recall>`` itself; neither is a token the
model generated, so ``max_new_tokens``, ``min_length`` and ``min_new_tokens`` must not count
them. Rather than editing transformers' criteria in place, the loop wraps each of them so it
sees the sequence without the positions recall added (they only look at its length).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from transformers.generation.logits_process import (
    ExponentialDecayLengthPenalty,
    ForcedBOSTokenLogitsProcessor,
    ForcedEOSTokenLogitsProcessor,
    LogitsProcessor,
    LogitsProcessorList,
    MinLengthLogitsProcessor,
    MinNewTokensLengthLogitsProcessor,
    SuppressTokensAtBeginLogitsProcessor,
)
from transformers.generation.stopping_criteria import (
    MaxLengthCriteria,
    StoppingCriteria,
    StoppingCriteriaList,
)

#: Why a recall injected nothing: its notes, with all the reply may still generate, would pass the
#: positions the model was trained on (GPT-2 raised an ``IndexError`` mid-reply until 2026-12-07;
#: rotary models ran past their window without a word; a reviewer).
NO_ROOM = "no room in the model's context window"


def trained_positions(config: Any) -> int | None:
    """How many positions a model's ``config`` says it was trained on (``None``: it does not say)."""
    for name in ("max_position_embeddings", "n_positions", "max_sequence_length"):
        value = getattr(config, name, None)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def room_for(model: Any, generation_config: Any, added: AddedPositions, positions: int) -> bool:
    """Whether ``positions`` more (notes) fit: the longest sequence the call can make (its
    ``max_length``: prompt and generated tokens, which recall's positions come on top of) stays
    within the model's trained positions. A model or a call that names no bound has room."""
    window, longest = trained_positions(model.config), getattr(generation_config, "max_length", None)
    return window is None or longest is None or longest + added.count + positions <= window


@dataclass
class AddedPositions:
    """How many positions of the sequence recall added so far: pads and the loop's own markers,
    less the prompt markers that were dropped (transformers measured the prompt with them)."""

    count: int = 0


class GeneratedLengthCriteria(StoppingCriteria):
    """A length criterion (``MaxLengthCriteria``) applied to the sequence without recall's positions."""

    def __init__(self, inner: StoppingCriteria, added: AddedPositions) -> None:
        self.inner = inner
        self.added = added

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor | None, **kwargs: Any) -> torch.BoolTensor:
        return self.inner(_without(input_ids, self.added), scores, **kwargs)


class GeneratedLengthProcessor(LogitsProcessor):
    """A minimum-length processor applied to the sequence without recall's positions."""

    def __init__(self, inner: LogitsProcessor, added: AddedPositions) -> None:
        self.inner = inner
        self.added = added

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        return self.inner(_without(input_ids, self.added), scores)


#: Processors that act at a length of the sequence: they see it without recall's positions. Until
#: 2026-12-07 only the minimum lengths did, and after notes were injected ``forced_eos_token_id``
#: never forced its token and ``begin_suppress_tokens`` no longer suppressed the first (a reviewer).
_LENGTH_PROCESSORS = (MinLengthLogitsProcessor, MinNewTokensLengthLogitsProcessor, ForcedEOSTokenLogitsProcessor,
                      ForcedBOSTokenLogitsProcessor, SuppressTokensAtBeginLogitsProcessor, ExponentialDecayLengthPenalty)


def count_generated_only(
    stopping_criteria: StoppingCriteriaList, logits_processor: LogitsProcessorList, added: AddedPositions
) -> tuple[StoppingCriteriaList, LogitsProcessorList]:
    """New lists in which every length limit counts generated tokens only; the others are the same objects."""
    criteria = StoppingCriteriaList(
        GeneratedLengthCriteria(c, added) if isinstance(c, MaxLengthCriteria) else c for c in stopping_criteria
    )
    processors = LogitsProcessorList(
        GeneratedLengthProcessor(p, added) if isinstance(p, _LENGTH_PROCESSORS) else p
        for p in logits_processor
    )
    return criteria, processors


def _without(input_ids: torch.LongTensor, added: AddedPositions) -> torch.LongTensor:
    # These limits read only the sequence's length: dropping (or, for dropped markers, repeating)
    # that many leading ids gives them the length they must see.
    if added.count > 0:
        return input_ids[:, added.count :]
    if added.count < 0:
        return torch.cat([input_ids[:, :1].expand(-1, -added.count), input_ids], dim=-1)
    return input_ids

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
    LogitsProcessor,
    LogitsProcessorList,
    MinLengthLogitsProcessor,
    MinNewTokensLengthLogitsProcessor,
)
from transformers.generation.stopping_criteria import (
    MaxLengthCriteria,
    StoppingCriteria,
    StoppingCriteriaList,
)


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


def count_generated_only(
    stopping_criteria: StoppingCriteriaList, logits_processor: LogitsProcessorList, added: AddedPositions
) -> tuple[StoppingCriteriaList, LogitsProcessorList]:
    """New lists in which every length limit counts generated tokens only; the others are the same objects."""
    criteria = StoppingCriteriaList(
        GeneratedLengthCriteria(c, added) if isinstance(c, MaxLengthCriteria) else c for c in stopping_criteria
    )
    processors = LogitsProcessorList(
        GeneratedLengthProcessor(p, added)
        if isinstance(p, MinLengthLogitsProcessor | MinNewTokensLengthLogitsProcessor)
        else p
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

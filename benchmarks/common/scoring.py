"""Scoring a given continuation: the log-probability a causal LM gives each of its ids after a prompt."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch


@torch.no_grad()
def continuation_log_probs(model: Any, heads: Sequence[Sequence[int]], tail: Sequence[int], pad_id: int = 0) -> list[list[float]]:
    """Per head (a prompt's ids), the log-probability of each id of ``tail`` after it, all heads in
    one right-padded batch (``pad_id`` fills the rows; the attention mask leaves it out)."""
    if not tail:
        return [[] for _ in heads]
    width = max(len(h) for h in heads) + len(tail)
    ids = torch.full((len(heads), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(heads), width), dtype=torch.long)
    for row, head in enumerate(heads):
        ids[row, : len(head) + len(tail)] = torch.tensor([*head, *tail])
        mask[row, : len(head) + len(tail)] = 1
    log_p = model(input_ids=ids, attention_mask=mask).logits.float().log_softmax(-1)
    targets = torch.tensor(list(tail))
    out = []
    for row, head in enumerate(heads):
        steps = torch.arange(len(head) - 1, len(head) - 1 + len(tail))  # each step predicts the next id
        out.append(log_p[row, steps, targets].tolist())
    return out

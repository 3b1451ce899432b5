"""Logits processors that make a tiny random model write what a test needs, where it needs it."""

from __future__ import annotations

import torch
from transformers import LogitsProcessor


class ForceAt(LogitsProcessor):
    """Forces ``token_ids`` (in order) at the steps where the sequence has ``length`` ids."""

    def __init__(self, length: int, token_ids: list[int]) -> None:
        self.length, self.token_ids = length, token_ids
        self.base = None

    def __call__(self, input_ids, scores):
        if self.base is None:
            self.base = input_ids.shape[1]
        step = input_ids.shape[1] - self.base - self.length
        if 0 <= step < len(self.token_ids):
            forced = torch.full_like(scores, -float("inf"))
            forced[:, self.token_ids[step]] = 0.0
            return forced
        return scores

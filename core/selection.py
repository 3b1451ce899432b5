"""Choosing one memory among the search candidates (seed 001).

The first ``top_k`` candidates in the memory's own order (best first: a hybrid memory
ranks by cosine plus word score, so its order need not follow ``score``), then a
temperature + top-p draw over their scores; temperature 0 takes the first. Candidates
below ``min_score`` (a cosine) are never chosen.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from .config import RecallConfig
from .types import MemoryCandidate

NO_MEMORY = "no memory"
BELOW_MIN_SCORE = "below min_score"


def choose_candidate(
    candidates: Sequence[MemoryCandidate],
    config: RecallConfig,
    generator: torch.Generator | None = None,
) -> tuple[MemoryCandidate | None, str | None]:
    """Return ``(chosen, None)`` or ``(None, reason)`` when nothing may be injected.

    The draw uses torch's global RNG (or ``generator``), so ``torch.manual_seed`` /
    ``transformers.set_seed`` make a sampled recall reproducible together with the text.
    """
    if not candidates:
        return None, NO_MEMORY
    eligible = [c for c in candidates[: config.top_k] if c.score >= config.min_score]
    if not eligible:
        return None, BELOW_MIN_SCORE
    if config.temperature == 0 or len(eligible) == 1:
        return eligible[0], None
    scores = torch.tensor([c.score for c in eligible], dtype=torch.float64)
    probs = torch.softmax(scores / config.temperature, dim=0)
    if config.top_p < 1.0:
        # Keep the smallest best-first prefix whose mass reaches top_p (always at least one).
        keep = (probs.cumsum(0) - probs) < config.top_p
        probs = torch.where(keep, probs, torch.zeros_like(probs))
        probs = probs / probs.sum()
    index = int(torch.multinomial(probs, 1, generator=generator).item())
    return eligible[index], None

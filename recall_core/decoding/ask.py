"""``recall_policy="ask"``: the model decides at the start of its reply, and reads the notes where ``"auto"`` puts them.

A recall-tuned model decides well whether a question needs its memory (its own ``<recall>`` as
the first token of the reply), but reads the notes worse after that ``<recall>``, in its own
reply, than in the system message where ``"auto"`` puts them (docs/benchmarks/heldout.md). This
policy takes the decision and the reading each from where they work:

1. the prompt is rendered as ``"model"`` renders it (no marker) and run once: the probability
   of ``<recall>`` as the reply's first token is the decision (asked: at least
   ``recall_threshold``, and ``<recall>`` the most likely token);
2. asked: the call runs as ``"auto"`` (the notes where ``recall_position`` says); the ids
   before the marker, which both renderings share, are not computed again;
3. not asked: the call runs as ``"model"`` with no recall at all (``max_recalls=0``) from the
   cache of step 1, so a prompt that needs no memory costs one prefill, as before.

A served backend takes the decision from a one-token request (:mod:`recall_core.serving.generator`);
the engine's prefix cache then holds the prompt for the call. A :class:`~recall_core.RecallSession`
decides on its cache the same way; when asked, the notes go at the start of the new user message
(the system message is cached already), as its ``"auto"`` turns after the first put them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch

from recall_core.config import RecallConfig
from recall_core.decoding.hf_compat import CACHE_KEY, last_logit_only
from recall_core.decoding.triggers import below_threshold
from recall_core.kv.cache import crop_cache


@dataclass(frozen=True)
class Decision:
    """What the first pass said: ``<recall>``'s probability there and whether that is a recall."""

    probability: float
    asked: bool

    @classmethod
    def of(cls, first: int | None, log_p: float | None, recall_id: int, threshold: float) -> Decision:
        """From the reply's most likely first token and ``<recall>``'s log-probability there
        (``None``: unknown, as an engine reports only its top candidates): asked when ``<recall>``
        comes first with at least ``threshold``."""
        known = -math.inf if log_p is None else log_p
        return cls(math.exp(known), first == recall_id and not below_threshold(known, threshold))

    def config(self, config: RecallConfig) -> RecallConfig:
        """The config the call runs under: ``"auto"`` when asked, else ``"model"`` without recalls."""
        if self.asked:
            return config.replace(recall_policy="auto")
        return config.replace(recall_policy="model", max_recalls=0)


def decide(log_probs: torch.Tensor, recall_id: int, threshold: float) -> Decision:
    """The decision from one step's log-probabilities (``[vocab]``): ``<recall>`` first and at least ``threshold``."""
    return Decision.of(int(log_probs.argmax()), float(log_probs[recall_id]), recall_id, threshold)


def decide_logits(logits: torch.Tensor, recall_id: int, pad_id: int, threshold: float) -> Decision:
    """The decision from the logits of the reply's first step (``[vocab]``).

    Pads are never a reply's first token, so they are left out of the distribution, as the
    loop masks them.
    """
    logits = logits.float().clone()
    logits[pad_id] = -float("inf")
    return decide(torch.log_softmax(logits, dim=-1), recall_id, threshold)


@torch.no_grad()
def first_pass(model: Any, ids: torch.LongTensor, recall_id: int, pad_id: int, threshold: float) -> tuple[Decision, Any]:
    """Run ``ids`` (``[1, L]``, the prompt as ``"model"`` renders it) and decide.

    Returns the decision (:func:`decide_logits`) and a ``DynamicCache`` of the first ``L - 1``
    ids (the last one is run again by the generation that follows, which needs its logits).
    """
    from transformers import DynamicCache

    cache = DynamicCache(config=model.config)
    out = model(input_ids=ids, use_cache=True, **{CACHE_KEY: cache}, **last_logit_only(model))
    decision = decide_logits(out.logits[0, -1], recall_id, pad_id, threshold)
    crop_cache(cache, ids.shape[1] - 1)
    return decision, cache


def shared_cache(cache: Any, first: torch.LongTensor, then: torch.LongTensor) -> Any | None:
    """``cache`` (of ``first``'s ids) cut to the ids ``then`` starts with too, or ``None`` if there are none.

    At least the last id of ``then`` is left to run (the generation needs its logits).
    """
    a, b = first[0].tolist(), then[0].tolist()
    shared = 0
    limit = min(len(a) - 1, len(b) - 1)
    while shared < limit and a[shared] == b[shared]:
        shared += 1
    if shared == 0:
        return None
    crop_cache(cache, shared)
    return cache

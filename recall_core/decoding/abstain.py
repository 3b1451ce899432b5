"""Answering from the notes rather than giving up on a hunch: ``RecallConfig.abstain_threshold``.

The recall-tuned model learned to reply ``"I don't know."`` when no note holds the answer. On
conversations it was not tuned on it also says so with the answer in front of it, and then it
does so *weakly*: the opening ``"I"`` is the most likely first token, but with a small share of
the probability, the rest spread over answers drawn from the notes. So, at the first token the
model decides after notes were injected (the reply's start under ``"auto"``, the token after its
own ``<recall>`` under ``"model"``), the abstention's opening token is masked when the model gives
it less than ``abstain_threshold``: the reply then opens with the most likely other token
(greedy) or a sample without it. A confident ``"I don't know."`` stands, and with no notes (no
memory, nothing found, ``empty_notes``) nothing is masked, so a call without notes is still
token for token ``generate()``'s.

This is the mask ``recall_threshold`` applies to ``<recall>``, applied to the abstention: one
token, one step, the same probability (after the logits processors). The default 0.5 asks the
abstention to be more likely than everything else together. A served backend checks the same
token as it streams (:mod:`recall_core.serving.loop`). What it gains and costs (LoCoMo, the
held-out families): docs/benchmarks/heldout.md.
"""

from __future__ import annotations

from typing import Any

#: What the recall tuning teaches the model to reply when no note holds the answer
#: (``recall_core.training.family_data.UNKNOWN_REPLY`` is the same text).
ABSTENTION = "I don't know."


def abstention_opening(tokenizer: Any) -> int | None:
    """The id the abstention opens with in ``tokenizer`` (``None``: no tokenizer, or no ids)."""
    ids = abstention_ids(tokenizer)
    return ids[0] if ids else None


def abstention_ids(tokenizer: Any) -> tuple[int, ...]:
    """The ids of the whole abstention in ``tokenizer`` (empty: no tokenizer)."""
    if tokenizer is None:
        return ()
    return tuple(int(i) for i in tokenizer.encode(ABSTENTION, add_special_tokens=False))

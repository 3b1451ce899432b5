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


class GiveAt(LogitsProcessor):
    """``token`` given probability ``p`` at the given reply steps (pads of injected notes not
    counted; the other tokens keep their order). ``steps=None``: at every step."""

    def __init__(self, token: int, p: float, pad_id: int, steps: tuple[int, ...] | None = (0,)) -> None:
        self.token, self.p, self.pad_id, self.steps, self.start = token, p, pad_id, steps, None

    def __call__(self, input_ids, scores):
        if self.start is None:
            self.start = input_ids.shape[1]
        step = int((input_ids[0, self.start :] != self.pad_id).sum())
        if self.steps is None or step in self.steps:
            scores = scores.clone()
            others = torch.cat([scores[0, : self.token], scores[0, self.token + 1 :]])
            scores[:, self.token] = torch.logsumexp(others, 0) + torch.logit(torch.tensor(self.p))
        return scores


def greedy_steps(*tokens: int) -> torch.Tensor:
    """Logits (``[n, 16]``) whose greedy token at each step is ``tokens[i]`` once ``<recall>`` (id 0)
    and pads (id 1) are masked: what :func:`recall_core.decoding.ask.reads_abstention` reads."""
    logits = torch.zeros(len(tokens), 16)
    for i, token in enumerate(tokens):
        logits[i, token] = 5.0
        logits[i, 0] = logits[i, 1] = 9.0
    return logits


def scripted_run(*reply: int):
    """A ``run`` for :func:`recall_core.decoding.ask.reads_abstention` that answers each id it is run
    on with the next of ``reply``'s (the first is the reply's first token, read from its own
    logits); returns it and the list of what it was run on."""
    ran: list[list[int]] = []

    def run(ids: list[int]) -> torch.Tensor:
        ran.append(ids)
        return greedy_steps(reply[len(ran)])

    return run, ran


def writing(generator, monkeypatch, reply: str) -> int:
    """Make ``generator`` write ``reply`` (then its end token) at every ``generate`` and ``stream``,
    under whatever adapter calls it; return how many ids that is."""
    ids = generator.tokenizer(reply, add_special_tokens=False).input_ids + [generator.tokenizer.eos_token_id]
    for method in ("generate", "stream"):
        original = getattr(generator, method)

        def forced(*args, _original=original, **kwargs):
            kwargs["logits_processor"] = [ForceAt(0, ids)]
            return _original(*args, **kwargs)

        monkeypatch.setattr(generator, method, forced)
    return len(ids)

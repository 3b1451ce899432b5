"""The uncertainty trigger of ``recall_policy="uncertainty"``: when the loop writes ``<recall>`` itself.

An untrained baseline for any model, after FLARE (Jiang et al., 2023: retrieve when a token
of the upcoming sentence is unlikely) and DRAGIN (Su et al., 2024: retrieve when a content
token is uncertain). Before a token is sampled, the loop measures the entropy of the
next-token distribution (after the logits processors, so what is actually sampled from); when
it exceeds ``RecallConfig.uncertainty_threshold`` and the most likely token is a content token,
``<recall>`` goes there instead and the token is sampled from the logits after the memory.
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass
from typing import Any

import torch

from recall_core.config import NO_MODEL_RECALL_POLICIES, RecallConfig
from recall_core.kv.cache import can_drop_last
from recall_core.structured.constrained import token_texts

#: Per tokenizer: its size when computed, and which ids are content tokens. Weak keys.
_CONTENT_IDS: weakref.WeakKeyDictionary[Any, tuple[int, torch.Tensor]] = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class Inserted:
    """A ``<recall>`` the loop wrote before an uncertain token: its entropy, and the logits it
    replaced (to go on with if nothing is injected and the marker is taken back)."""

    entropy: float
    logits: torch.Tensor


class UncertaintyTrigger:
    """Decides, step by step, whether a recall goes before the next token.

    Args:
        tokenizer: the model's tokenizer (its content tokens are found once).
        threshold: entropy in nats above which it fires.
    """

    def __init__(self, tokenizer: Any, threshold: float) -> None:
        self.content = content_ids(tokenizer)
        self.threshold = threshold
        self.retracted_at = -1  # a length where a recall was taken back: not again on the same logits

    def entropy(self, scores: torch.FloatTensor, length: int) -> float | None:
        """The entropy of ``scores`` (``[1, vocab]``) when it fires before position ``length``, else ``None``.

        Only before a content token: recalling before punctuation or the end of the reply
        helps nothing, and a flat distribution over spellings of one word is not uncertainty
        about a fact.
        """
        if length == self.retracted_at:
            return None
        top = int(scores[0].argmax())
        if top >= len(self.content) or not self.content[top]:
            return None
        entropy = float(torch.special.entr(torch.softmax(scores[0], dim=-1)).sum())
        return entropy if entropy > self.threshold else None

    def inserts(self, scores: torch.FloatTensor, length: int, logits: torch.Tensor, cache: Any) -> Inserted | None:
        """The ``<recall>`` to write before position ``length`` when :meth:`entropy` fires and ``cache``
        can take the marker back should nothing be injected (not a sliding-window layer past its
        window that does not record its past: the loop makes its own cache record it); else ``None``.
        ``logits``: the step's, to go on with then."""
        entropy = self.entropy(scores, length)
        if entropy is None or not can_drop_last(cache, added=1):
            return None
        return Inserted(entropy, logits)


def content_ids(tokenizer: Any) -> torch.Tensor:
    """A bool per token id: its text has a letter or a digit and it is not a special token (once per tokenizer)."""
    cached = _CONTENT_IDS.get(tokenizer)
    if cached is not None and cached[0] == len(tokenizer):
        return cached[1]
    special = set(tokenizer.all_special_ids)
    special |= {i for i, token in getattr(tokenizer, "added_tokens_decoder", {}).items() if token.special}
    texts = token_texts(tokenizer)
    content = torch.tensor([i not in special and any(c.isalnum() for c in text) for i, text in enumerate(texts)])
    _CONTENT_IDS[tokenizer] = (len(tokenizer), content)
    return content


def below_threshold(log_p: float, threshold: float) -> bool:
    """Whether a ``<recall>`` the model gave log-probability ``log_p`` falls short of
    ``RecallConfig.recall_threshold`` (a threshold of 0 lets every one through). The one test
    behind the in-process loop's mask, the served loop's take-back and ``"ask"``'s decision
    (and the same for the abstention's opening and ``abstain_threshold``)."""
    return threshold > 0 and log_p < math.log(threshold)


def recall_ruled_out(config: RecallConfig, memory: object, attempts: int) -> bool:
    """Whether the model's own ``<recall>`` is masked whatever its probability: there is no memory to
    search (the tuned model, left at a bare ``<recall>``, ended its reply or went on as the user),
    ``max_recalls`` searches were made (``attempts``), or the policy does not let the model ask.
    The one rule behind the in-process loop's mask and the served loop's ``logit_bias``."""
    return memory is None or attempts >= config.max_recalls or config.recall_policy in NO_MODEL_RECALL_POLICIES


def token_below_threshold(scores: torch.Tensor, token: int, threshold: float) -> bool:
    """Whether ``token``'s probability under ``scores`` (one step's ``[vocab]``) is below ``threshold``."""
    if threshold <= 0:  # no softmax to compute
        return False
    return below_threshold(float(scores[token] - torch.logsumexp(scores, dim=-1)), threshold)


class ModelRecallGate:
    """Whether the model's own ``<recall>`` is masked at a step, for one reply
    (``RecallConfig.recall_threshold``; under ``"auto"`` before notes, ``auto_recall_threshold``).

    Below the threshold it is masked at that step. A ``<recall>`` that was the most likely token
    and fell short is the model's wish for its memory, declined: it stays masked for the rest of
    the reply. Judged again at every step, the same wish came back a few tokens later on prompts
    that need no memory ("Say something nice." → "Good day." and then a recall that passed), each
    step one more chance to pass (held-out families: 9 of 64 general prompts recalled, 3 with the
    gate; docs/benchmarks/heldout.md).
    """

    def __init__(self, recall_id: int, config: RecallConfig, states: bool = False) -> None:
        self.recall_id, self.config = recall_id, config
        self.states = states  # the user's message asks nothing (RecallConfig.own_recall_on_statements)
        self.declined = False

    def masks(self, scores: torch.Tensor, notes_found: bool) -> bool:
        """Whether ``<recall>`` is masked at this step (``scores``: the step's processed ``[vocab]``;
        ``notes_found``: a recall of this reply injected notes, :meth:`RecallConfig.own_recall_threshold`)."""
        if self.declined:
            return True
        if not token_below_threshold(scores, self.recall_id, self.config.own_recall_threshold(notes_found, self.states)):
            return False
        self.declined = int(scores.argmax()) == self.recall_id
        return True

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

With ``abstain_contrast`` (off by default) the token taken instead of a masked opening is the one
the notes raise most over the sequence without them (:func:`contrasted`, context-aware decoding,
Shi et al. 2023), not the next most likely one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import torch

from recall_core.types import Recall

#: What the recall tuning teaches the model to reply when no note holds the answer
#: (``recall_core.training.family_data.UNKNOWN_REPLY`` is the same text).
ABSTENTION = "I don't know."

#: The longest sentence, in words, a reply may say before :data:`ABSTENTION` and still give up
#: ("Of course. I'm sorry for any misunderstanding. I don't know."): courtesy openers and
#: apologies, not an answer, which opens with a longer sentence nearly always.
OPENER_WORDS = 6

#: The most ids :func:`gives_up` is read on, greedily, by ``ask_on_abstention``: two or three
#: openers and the abstention after them fit.
GIVES_UP_TOKENS = 24

#: How chat models open a reply that refuses or cannot help (``RecallConfig.ask_on_refusal``): the
#: apologies and disclaimers of the refusal-prefix list Zou et al. (2023, arXiv:2307.15043) test
#: replies against, and "I'm not sure", the abstention's hedge. Each counts as a word or words
#: ("Sorry" and not "Sorrowful"), and where :data:`ABSTENTION` would count: at the reply's start, or
#: after openers with ``ask_after_openers``.
REFUSALS = ("I'm sorry", "I am sorry", "Sorry", "I apologize", "I apologise", "My apologies", "Unfortunately",
            "As an AI", "As a language model", "I'm not sure", "I am not sure")  # fmt: skip

#: The most ids a reply's start is read on, greedily, for :data:`REFUSALS` and :data:`ABSTENTION`
#: when openers are not read: every one of them fits, in the tokenizers of the shipped models, with
#: the id after it that says the word ended.
REFUSAL_TOKENS = 8

#: A sentence or clause: ended by ``.``, ``!``, ``?`` or ``,`` and a space or the text's end, or by a line's end.
_OPENER = re.compile(r"[^.!?,\n]*(?:[.!?,]+(?=\s|$)|(?=\n))")


def gives_up(text: str, *, openers: bool = True, refusals: bool = False) -> bool | None:
    """Whether a reply that begins with ``text`` gives up before it says much:
    :data:`ABSTENTION` opens it, or (``openers``) opens a sentence after sentences or clauses (a comma
    ends one too) of at most :data:`OPENER_WORDS` words each ("Sure! I don't know.", "Of course. I'm
    sorry for any misunderstanding. I don't know."). So a short answer followed by the abstention
    ("You have a dog. I don't know.") counts too. With ``refusals`` an opening of :data:`REFUSALS`
    ("I'm sorry for any confusion, but ...", "Unfortunately, I don't have ...") counts where the
    abstention would. A typeset apostrophe (’) reads as ``'``. ``None``: ``text`` is too short to
    tell (it may still become either).

    Without its memory, the recall-tuned default often says the abstention after a courtesy
    opener rather than at the start: under the held-out families' personas, 6 of the 7 memory
    questions ``"ask"`` did not recall on were "Of course. I don't know." or "Sure! I don't
    know." (docs/benchmarks/heldout.md), and questions written to probe it got "One moment.  I
    don't know." and "Of course.  I'm sorry for any misunderstanding.  I don't know".
    """
    text = text.lstrip().replace("\u2019", "'")  # "I’m sorry", "I don’t know." as typeset
    while True:
        verdict = _opens_giving_up(text, refusals)
        if verdict is not False or not openers:
            return verdict
        opener = _OPENER.match(text)
        if opener is None:  # this sentence has not ended yet
            return None if len(text.split()) <= OPENER_WORDS else False
        if len(opener.group().split()) > OPENER_WORDS:
            return False
        text = text[opener.end():].lstrip()


def _opens_giving_up(text: str, refusals: bool) -> bool | None:
    verdicts = [_opens_with(text, ABSTENTION, whole_word=False)]
    if refusals:
        verdicts += [_opens_with(text, refusal, whole_word=True) for refusal in REFUSALS]
    if True in verdicts:
        return True
    return None if None in verdicts else False


def _opens_with(text: str, opening: str, whole_word: bool) -> bool | None:
    """``True``: ``text`` opens with ``opening`` (followed by a letter or digit, with ``whole_word``,
    it does not); ``None``: it may still (a prefix of it, or all of it with nothing after yet)."""
    if not text.startswith(opening):
        return None if opening.startswith(text) else False
    if not whole_word:
        return True
    rest = text[len(opening):]
    if not rest:
        return None  # "Sorry" may yet be "Sorrowful"
    return not rest[0].isalnum()


def abstention_opening(tokenizer: Any) -> int | None:
    """The id the abstention opens with in ``tokenizer`` (``None``: no tokenizer, or no ids)."""
    ids = abstention_ids(tokenizer)
    return ids[0] if ids else None


def abstention_ids(tokenizer: Any) -> tuple[int, ...]:
    """The ids of the whole abstention in ``tokenizer`` (empty: no tokenizer)."""
    if tokenizer is None:
        return ()
    return tuple(int(i) for i in tokenizer.encode(ABSTENTION, add_special_tokens=False))


def logits_without_notes(model: Any, ids: torch.LongTensor, skip: Sequence[int]) -> torch.Tensor:
    """The model's next-token logits (``[1, V]``, float32) after ``ids`` (``[1, L]``) with the ids in
    ``skip`` (the notes' pads, ``<recall>`` markers) left out: the sequence as it would run had
    nothing been injected. Run from scratch, on no cache."""
    keep = ids[:, ~torch.isin(ids[0], torch.tensor(list(skip), device=ids.device))]
    with torch.no_grad():
        return model(input_ids=keep, use_cache=False).logits[:, -1].float()


def contrasted(scores: torch.Tensor, without: torch.Tensor, weight: float) -> torch.Tensor:
    """``(1 + weight) log p(. | notes) - weight log p(. | no notes)``: context-aware decoding's
    score (Shi et al. 2023), over ``scores`` (``[1, V]``, with the notes; masked ids stay masked)."""
    with_notes = torch.log_softmax(scores, dim=-1)
    return (1 + weight) * with_notes - weight * torch.log_softmax(without.to(scores.dtype), dim=-1)


class NotesShown:
    """What one reply's recalls have injected, for the checks that follow it (both decode loops).

    ``found``: some recall of this reply injected notes; the model's own ``<recall>`` then needs
    ``recall_threshold`` (:meth:`~recall_core.config.RecallConfig.own_recall_threshold`).
    ``fresh``: notes were injected and no token has been decided since; the next token is the
    one the abstention check reads (:func:`take_fresh`).
    """

    def __init__(self) -> None:
        self.found = False
        self.fresh = False

    def record(self, recall: Recall) -> None:
        """Note one recall of the reply, in order (an empty one changes nothing)."""
        if recall.memory_id is not None:
            self.found = self.fresh = True

    def take_fresh(self) -> bool:
        """Whether notes were injected since the last token was decided; a token is being decided now."""
        fresh, self.fresh = self.fresh, False
        return fresh

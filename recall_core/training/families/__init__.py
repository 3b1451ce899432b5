"""Independent families of generated conversations, for training and for held-out evaluation.

Each family is its own generator, written apart from the others, with its own fact kinds,
sentence shapes and question phrasings; no sentence template is shared between families
(a test checks it). A model tuned on some families is measured on the others
(leave-one-family-out): that held-out figure is the one that counts.

* ``templated``: the original generator (:mod:`recall_core.training.conversations`): short
  fact statements, near-miss distractors, a few updated facts.
* ``passing``: facts said in passing inside long, chatty turns.
* ``people``: many people around the user, each with attributes (near misses everywhere).
* ``changes``: facts that change several times.
* ``dates``: dates and times: appointments, deadlines, birthdays, reschedulings.
* ``paraphrase``: questions that share few words with the sentence that stated the fact.
* ``interview``: facts given as short answers to the assistant's questions.
* ``circle``: news about the user's named friends, asked in the third person by name.
* ``duo``: two named friends tell each other their own news (no assistant); asked later by name,
  a near miss is the other friend's news.

Every family also asks questions whose answer was never said (``kind="unanswerable"``).
"""

from __future__ import annotations

from types import ModuleType

from recall_core.training.families import (
    changes,
    circle,
    dates,
    duo,
    interview,
    paraphrase,
    passing,
    people,
    templated,
)
from recall_core.training.families.base import Question, Turn, User, score

FAMILIES: dict[str, ModuleType] = {
    module.NAME: module for module in (templated, passing, people, changes, dates, paraphrase, interview, circle, duo)
}

__all__ = ["FAMILIES", "Question", "Turn", "User", "generate", "score"]


def generate(family: str, seed: int, users: int = 5) -> list[User]:
    """``users`` conversations of ``family``, deterministic for ``seed``."""
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {', '.join(map(repr, FAMILIES))}, got {family!r}")
    return FAMILIES[family].generate(seed, users=users)

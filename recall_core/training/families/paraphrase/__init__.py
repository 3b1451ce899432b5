"""Paraphrase family: a fact is stated one way and asked about in quite different words.

The user mentions things in passing, idiomatically ("our little one, Hana, started
kindergarten", "I spend most Saturdays restoring old motorbikes"), and the later question uses
other words for the same thing ("what's my daughter called?", "what do I get up to on my days
off?"). Near-miss distractors about other people deliberately reuse the question's own words
("my sister's daughter Priya ..."), so plain keyword overlap points to the wrong turn.
Some facts change later (new job, a move, a new car); the earlier value is then stale.

Standard library only; deterministic for a seed.

The parts: ``facts`` (the records a topic is written with, shared pools), ``specs/`` (the topics
by theme), ``chat`` (greetings, small talk, question wrappers), ``text`` (template rendering) and
``generator`` (one user's sessions and questions); ``generate`` is here, with the family's name.
"""

from __future__ import annotations

import random

from recall_core.training.families.base import User
from recall_core.training.families.paraphrase.chat import FILLER_POOLS, SMALL_TALK
from recall_core.training.families.paraphrase.generator import MEMORY_PER_USER, UNANSWERABLE_PER_USER, _user
from recall_core.training.families.paraphrase.specs import SPECS
from recall_core.training.families.paraphrase.text import _fields as _fields
from recall_core.training.families.paraphrase.text import _render as _render

NAME = "paraphrase"
DESCRIPTION = (
    "Facts said idiomatically in passing, asked later in different words; distractors about "
    "other people share the question's keywords."
)

__all__ = [
    "DESCRIPTION", "FILLER_POOLS", "MEMORY_PER_USER", "NAME", "SMALL_TALK", "SPECS", "UNANSWERABLE_PER_USER",
    "generate",
]


def generate(seed: int, users: int = 5) -> list[User]:
    """``users`` users, each with 3 to 5 sessions and 20 questions (16 memory, 4 unanswerable)."""
    master = random.Random(seed)
    out = []
    for n in range(users):
        rng = random.Random(master.getrandbits(64))
        out.append(_user(rng, f"{NAME}-{seed}-{n:02d}"))
    return out

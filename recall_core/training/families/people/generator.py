"""People-family users: a cast, its conversation and its questions, deterministic for a seed."""

from __future__ import annotations

import random

from recall_core.training.families.base import User
from recall_core.training.families.people.cast import _cast
from recall_core.training.families.people.conversation import _conversation
from recall_core.training.families.people.questions import _questions
from recall_core.training.families.people.vocab import RELATIONS


def _one_user(rng: random.Random, user_id: str) -> User:
    taken = [r.label for r in RELATIONS] + [a for r in RELATIONS for a in r.aliases]
    cast = _cast(rng, taken)
    turns, stmts = _conversation(rng, user_id, cast, taken)
    questions = _questions(rng, user_id, cast, stmts)
    return User(user_id=user_id, turns=turns, questions=questions)


def generate(seed: int, users: int = 5) -> list[User]:
    """``users`` users, each with 3 to 5 sessions and 20 questions (16 memory, 4 unanswerable)."""
    master = random.Random(seed)
    out = []
    for n in range(users):
        user_seed = master.randrange(2**63)
        # a rare dead end (vocabulary or facts short) is retried with the next derived seed
        for attempt in range(20):
            try:
                out.append(_one_user(random.Random(user_seed + attempt), f"people-{seed}-{n:02d}"))
                break
            except RuntimeError:
                continue
        else:
            raise RuntimeError("could not build a user")
    return out

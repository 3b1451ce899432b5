"""The original generator (:mod:`recall_core.training.conversations`) as a family.

Its users state short facts ("My dog is called Biscuit."), see near-miss distractors and update
a few facts in the last session; each fact is asked once. It has no unanswerable questions of
its own: those are asked about the slots a user never stated.
"""

from __future__ import annotations

import random

from recall_core.training import conversations as conv
from recall_core.training.families.base import Question, Turn, User

NAME = "templated"
DESCRIPTION = "short fact statements, near-miss distractors, a few updated facts (the original generator)"


def generate(seed: int, users: int = 5) -> list[User]:
    """``users`` conversations of the original generator for ``seed``, with two unanswerable questions each."""
    rng = random.Random(f"templated/{seed}")
    return [_convert(user, rng) for user in conv.generate(seed, users=users)]


def _aliases(value: str) -> tuple[str, ...]:
    if value in conv.WORKPLACES:
        return (conv.WORKPLACES[value],)
    words = value.split()
    if len(words) > 1 and words[0].lower() in conv.COLOURS:  # a car is named by its make and model
        return (" ".join(words[1:]),)
    date = conv._DATE.match(value)
    if date:
        day, month = date.groups()
        return (f"{day} {month}", f"{month} {day}", f"{day}th of {month}", f"{month} {day}th")
    return (value,)


def _convert(user: conv.User, rng: random.Random) -> User:
    values: dict[tuple[int, int], tuple[str, ...]] = {}
    for question in user.questions:
        stated = [question.answer, *([question.stale] if question.stale else [])]
        for turn in user.turns:
            if turn.fact == question.slot:
                values[(turn.session, turn.index)] = tuple(v for v in stated if v in turn.content)
    turns = [
        Turn(t.role, t.content, t.session, t.date, t.index, (t.fact,) if t.fact else (), values.get((t.session, t.index), ()))
        for t in user.turns
    ]
    questions = [
        Question(key=q.key, user_id=q.user_id, fact=q.slot, text=q.text, answers=_aliases(q.answer),
                 stale=_aliases(q.stale) if q.stale else (), evidence=(q.evidence,))
        for q in user.questions
    ]  # fmt: skip
    asked = {q.slot for q in user.questions}
    never = [s for s in conv.SLOTS if s.name not in asked]
    for slot in rng.sample(never, min(2, len(never))):
        questions.append(Question(key=f"{user.user_id}#never-{slot.name}", user_id=user.user_id, fact=slot.name,
                                  text=rng.choice(slot.questions), kind="unanswerable"))  # fmt: skip
    return User(user.user_id, turns, questions)

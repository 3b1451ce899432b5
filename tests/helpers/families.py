"""Sentence shapes of the conversation families: what the template-independence tests compare."""

from __future__ import annotations

import re
from collections.abc import Iterable

from recall_core.training.families import base, generate

#: The seeds whose conversations the shapes are taken from.
SEEDS = range(6)


def masked(text: str, values: tuple[str, ...]) -> str:
    """``text`` lower-cased, one space between words, each of its inserted ``values`` as ``{}``."""
    for value in sorted(set(values), key=len, reverse=True):
        if value:
            text = re.sub(re.escape(value), "{}", text, flags=re.I)
    return re.sub(r"\s+", " ", text.strip().lower())


def user_shapes(users: Iterable[base.User]) -> set[tuple[str, str]]:
    """The users' fact sentences and questions with their inserted values masked."""
    shapes = set()
    for user in users:
        shapes |= {("fact", masked(t.content, t.values)) for t in user.turns if t.facts and t.role == "user"}
        shapes |= {("question", masked(q.text, q.values)) for q in user.questions}
    return shapes


def family_shapes(family: str) -> set[tuple[str, str]]:
    """:func:`user_shapes` of a generated family over :data:`SEEDS`."""
    return set().union(*(user_shapes(generate(family, seed)) for seed in SEEDS))

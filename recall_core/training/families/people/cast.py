"""The cast of one user: 6 to 8 people, each with a relation, mostly a name, and attributes that
never repeat another person's.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from recall_core.training.families.base import normal
from recall_core.training.families.people.vocab import (
    CHANGEABLE,
    FEMALE,
    KIND_WEIGHT,
    MALE,
    NICKS,
    PET_NAMES,
    POOLS,
    RELATIONS,
    Rel,
)

# ------------------------------------------------------------------------------------------------
# the cast


@dataclass
class Person:
    rel: Rel
    gender: str
    name: str
    nick: str | None
    named: bool
    attrs: dict = field(default_factory=dict)  # kind -> current Val
    old: dict = field(default_factory=dict)  # kind -> earlier Val, for changed facts
    petname: str = ""
    day: str = ""

    @property
    def key(self) -> str:
        return self.rel.key

    def fact(self, kind: str) -> str:
        return f"{self.rel.key}.{kind}"

    def name_forms(self) -> tuple[str, ...]:
        return (self.name, self.nick) if self.nick else (self.name,)


def _compatible(a: str, b: str) -> bool:
    na, nb = normal(a), normal(b)
    return na not in nb and nb not in na


def _take(rng: random.Random, items, forms_of, taken: list[str]):
    pool = list(items)
    rng.shuffle(pool)
    for item in pool:
        forms = forms_of(item)
        if all(_compatible(f, t) for f in forms for t in taken):
            taken.extend(forms)
            return item
    raise RuntimeError("vocabulary exhausted")


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _cast(rng: random.Random, taken: list[str]) -> list[Person]:
    size = rng.randint(6, 8)
    rels = rng.sample(RELATIONS, size)
    unnamed = set(rng.sample(range(size), rng.choice([0, 1, 1, 2])))
    people = []
    for i, rel in enumerate(rels):
        gender = rel.gender if rel.gender != "x" else rng.choice("mf")
        name = _take(rng, FEMALE if gender == "f" else MALE, lambda n: (n, *((NICKS[n],) if n in NICKS else ())), taken)
        people.append(Person(rel, gender, name, NICKS.get(name), i not in unnamed))
    for p in people:
        allowed = list(p.rel.kinds)
        n_kinds = rng.choice([2, 2, 3, 3, 3])
        kinds: list[str] = []
        while len(kinds) < n_kinds:
            left = [k for k in allowed if k not in kinds]
            kinds.append(rng.choices(left, [KIND_WEIGHT[k] for k in left])[0])
        for k in kinds:
            p.attrs[k] = _take(rng, POOLS[k], lambda v: v.forms, taken)
            if k == "pet":
                p.petname = _take(rng, PET_NAMES, lambda n: (n,), taken)
            if k == "birthday":
                p.day = _ordinal(rng.randint(1, 28))
    # changes: 2 or 3 facts get a newer value; the first one becomes the old value
    options = [(p, k) for p in people for k in p.attrs if k in CHANGEABLE]
    rng.shuffle(options)
    for p, k in options[: rng.choice([2, 3, 3])]:
        p.old[k] = p.attrs[k]
        p.attrs[k] = _take(rng, POOLS[k], lambda v: v.forms, taken)
    return people

"""What the fact kinds, the unanswerable questions and the generator share.

Template filling (the text and the values inserted), the per-user registry that keeps values
distinct, the context a maker draws values through, and the ``Kind`` record of one fact kind.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable
from dataclasses import dataclass, field

from recall_core.training.families.base import normal
from recall_core.training.families.passing.pools import FEMALE, MALE, MONTHS, _date_aliases

# -- helpers ----------------------------------------------------------------------------------------

_FMT = string.Formatter()


def fill(template: str, slots: dict[str, str]) -> tuple[str, list[str]]:
    """Format ``template``; return the text and the value strings inserted (slots not starting with _)."""
    out: list[str] = []
    values: list[str] = []
    for literal, name, _spec, _conv in _FMT.parse(template):
        out.append(literal)
        if name is None:
            continue
        v = slots[name]
        out.append(v)
        if not name.startswith("_") and v and v not in values:
            values.append(v)
    return "".join(out), values


def _tidy(text: str) -> str:
    while "  " in text:
        text = text.replace("  ", " ")
    return text.strip()


def _words(text: str) -> int:
    return len(text.split())


def _aliases(item) -> tuple[str, ...]:
    return item if isinstance(item, tuple) else (item,)


def _lower_first(q: str) -> str:
    first = q.split(" ", 1)[0]
    if first in ("What", "What's", "Where", "Where's", "Which", "When", "When's", "Who", "Who's",
                 "How", "Do", "Did", "Is", "Am"):
        return q[0].lower() + q[1:]
    return q


class Registry:
    """Values already used for one user; keeps every value (and alias) distinct as whole words."""

    def __init__(self) -> None:
        self.taken: list[str] = []

    def clashes(self, value: str) -> bool:
        n = normal(value)
        return any(n in t or t in n for t in self.taken)

    def add(self, *values: str) -> None:
        for v in values:
            self.taken.append(normal(v))

    def pick(self, rng: random.Random, pool):
        free = [p for p in pool if not any(self.clashes(a) for a in _aliases(p))]
        if not free:
            raise RuntimeError("value pool exhausted")
        choice = rng.choice(free)
        self.add(*_aliases(choice))
        return choice


@dataclass
class Ctx:
    rng: random.Random
    reg: Registry
    chosen: dict = field(default_factory=dict)  # kind key -> slots of the current value

    def name(self, gender: str) -> str:
        pool = MALE if gender == "m" else FEMALE
        return self.reg.pick(self.rng, pool)

    def anyone(self) -> tuple[str, str]:
        g = self.rng.choice(("m", "f"))
        return self.name(g), g

    def date(self) -> tuple[str, tuple[str, ...]]:
        while True:
            day = self.rng.randint(1, 28)
            month = self.rng.choice(MONTHS)
            aliases = _date_aliases(day, month)
            if not any(self.reg.clashes(a) for a in aliases):
                self.reg.add(*aliases)
                return self.rng.choice(aliases), aliases


def _pron(g: str) -> dict[str, str]:
    if g == "m":
        return {"_he": "he", "_He": "He", "_him": "him", "_his": "his"}
    return {"_he": "she", "_He": "She", "_him": "her", "_his": "her"}


def _article(word: str) -> str:
    return "an" if word[0].lower() in "aeiou" else "a"


# -- fact kinds -------------------------------------------------------------------------------------
# A body is (user template, assistant template, condition on slots or None). Templates may use
# {_near} where a near-miss remark about someone else can go, and {_ack} (assistant) for an
# optional acknowledgement of the aside.


@dataclass
class Kind:
    key: str
    make: Callable[[Ctx], dict]
    bodies: list
    q: list[str]
    c: list[str]
    n: list[str]
    acks: list[str] = field(default_factory=list)
    near: list[str] = field(default_factory=list)
    near_make: Callable[[Ctx, dict], dict] | None = None
    change: list = field(default_factory=list)
    change_make: Callable[[Ctx, dict], dict] | None = None
    group: str = ""

"""Mechanics shared by the families of news told over sessions (``circle``, ``duo``).

Only the mechanics live here: the order in which news and its changes are told, the draw of a
value, the ways a reply may name it. Every sentence stays in its own family (no template is
shared: ``tests/unit/families/test_all_families.py``).
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Sequence
from typing import Any, Protocol, TypeVar

_ARTICLE = re.compile(r"^(a|an|the|two|a pair of) ", re.I)
_DAY_MONTH = re.compile(r"^(\d{1,2}) ([A-Z][a-z]+)$")

Teller = TypeVar("Teller")


class NewsKind(Protocol):
    """A kind of news as a family defines it: a value pool, how it is told, how a change is told."""

    values: tuple[str, ...]
    tell: tuple[str, ...]
    change: tuple[str, ...]


def aliases(value: str) -> tuple[str, ...]:
    """Ways a reply may name ``value``: without its article ("greyhound"), a date month first ("June 12")."""
    out = [value]
    if _ARTICLE.match(value):
        out.append(_ARTICLE.sub("", value))
    date = _DAY_MONTH.match(value)
    if date:
        day, month = date.groups()
        suffix = "th" if 11 <= int(day) <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(int(day) % 10, "th")
        out += [f"{month} {day}", f"{day}{suffix} {month}", f"{month} {day}{suffix}", f"{day}{suffix} of {month}"]
    return tuple(out)


def told_in_order(news: Sequence[tuple[Teller, Any]], changed: Iterable[int], per: int) -> list[tuple[Teller, Any, bool]]:
    """``(teller, kind, a change)`` in the order told: the news as given, and for each index in
    ``changed`` its change, ``per`` places (about a session) after the news it changes."""
    order = [(teller, kind, False) for teller, kind in news]
    for i in sorted(changed):
        teller, kind = news[i]
        at = order.index((teller, kind, False))
        order.insert(min(len(order), at + per), (teller, kind, True))
    return order


def next_value(kind: NewsKind, told: list[str], changed: bool, rng: random.Random) -> tuple[str, str]:
    """``(value, template)`` for news of ``kind`` whose earlier values are ``told`` (appended to):
    a change draws a value not told before and a change template, else any value and a telling one."""
    if changed:
        value = rng.choice([v for v in kind.values if v not in told])
        template = rng.choice(kind.change)
    else:
        value = rng.choice(kind.values)
        template = rng.choice(kind.tell)
    told.append(value)
    return value, template

"""The building blocks of one user: turns under construction, facts, pronouns, and the allocator
that keeps a user's names and dates apart.
"""

from __future__ import annotations

import datetime as _dt
import random

from recall_core.training.families.dates.formats import MINUTES, fill
from recall_core.training.families.dates.pools import FEMALE, MALE, PARTNER_F, PARTNER_M, REL_F, REL_M, REL_N

# -- building blocks ---------------------------------------------------------------------------------


class _T:
    """A turn under construction (session and index are set when the sessions are assembled)."""

    def __init__(self, role: str, content: str, values, facts=()):
        self.role = role
        self.content = content
        self.values = tuple(values)
        self.facts = tuple(facts)
        self.session = 0
        self.index = 0


def _pair(user_tpl, asst_tpl, slots, facts=()):
    u, uv = fill(user_tpl, slots)
    a, av = fill(asst_tpl, slots)
    return [_T("user", u, uv, facts), _T("assistant", a, av)]


class _Fact:
    def __init__(self, fid: str, kind: str, slots: dict, on_words=(), year_known=False):
        self.fid = fid
        self.kind = kind
        self.slots = slots
        self.on_words = tuple(on_words)
        self.year_known = year_known
        self.dates: list = []  # [(date, _T)]
        self.times: list = []  # [((h, m), _T)]
        self.year: int | None = None
        self.year_turn: _T | None = None
        self.session = 1
        self.move_session = 0  # 0: never rescheduled

    @property
    def date(self):
        return self.dates[-1][0]

    @property
    def time(self):
        return self.times[-1][0] if self.times else None


def _pronouns(gender: str) -> dict:
    if gender == "f":
        return {"_she": "she", "_She": "She", "_her": "her", "_hers": "hers"}
    return {"_she": "he", "_She": "He", "_her": "him", "_hers": "his"}


def _possessive_pronouns(gender: str) -> dict:
    """For templates where {_her} is a possessive ("has her recital")."""
    return {"_she": "she" if gender == "f" else "he", "_She": "She" if gender == "f" else "He",
            "_her": "her" if gender == "f" else "his"}


class _Alloc:
    """Hands out values that are unique for one user."""

    def __init__(self, rng: random.Random, first: _dt.date, last: _dt.date):
        self.rng = rng
        self.first, self.last = first, last
        self.days: list = []  # (month, day) used
        self.times: list = []  # (h12, minute) used
        self.years: list = []
        self.names: list = []
        self.rels: list = []
        self.window = [last + _dt.timedelta(days=k) for k in range(6, 101)]

    def _free(self, d):
        return (d.month, d.day) not in self.days and not (d.month == 2 and d.day == 29)

    def _take(self, d):
        self.days.append((d.month, d.day))
        return d

    def future(self, month: int | None = None, near: _dt.date | None = None,
               weekday_only: bool = False) -> _dt.date:
        pool = [d for d in self.window if self._free(d) and not (weekday_only and d.weekday() == 6)]
        if near is not None:
            close = [d for d in pool if 3 <= abs((d - near).days) <= 21]
            pool = close or pool
        if month is not None:
            same = [d for d in pool if d.month == month]
            pool = same or pool
        return self._take(self.rng.choice(pool))

    def any_day(self, month: int | None = None) -> _dt.date:
        while True:
            m = month or self.rng.randint(1, 12)
            d = _dt.date(2023, m, self.rng.randint(1, 28 if m == 2 else (30 if m in (4, 6, 9, 11) else 31)))
            if self._free(d):
                return self._take(d)

    def past(self) -> _dt.date:
        while True:
            y = self.rng.randint(2010, 2022)
            if y in self.years:
                continue
            d = _dt.date(y, self.rng.randint(1, 12), self.rng.randint(1, 28))
            if self._free(d):
                self.years.append(y)
                return self._take(d)

    def time(self, lo: int, hi: int) -> tuple[int, int]:
        while True:
            t = (self.rng.randint(lo, hi), self.rng.choice(MINUTES))
            key = (t[0] % 12, t[1])
            if key not in self.times:
                self.times.append(key)
                return t

    def person(self, rels, gender: str | None = None):
        rels = [r for r in rels if r not in self.rels] or [r for r in REL_N if r not in self.rels]
        rel = self.rng.choice(rels)
        if rel in REL_F or rel in PARTNER_F and rel != "partner":
            g = "f"
        elif rel in REL_M or rel in PARTNER_M and rel != "partner":
            g = "m"
        else:
            g = gender or self.rng.choice("fm")
        pool = [n for n in (FEMALE if g == "f" else MALE) if n not in self.names]
        name = self.rng.choice(pool)
        self.names.append(name)
        self.rels.append(rel)
        return name, rel, g

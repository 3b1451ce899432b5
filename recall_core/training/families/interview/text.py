"""Template filling: the slots a template uses, the value forms put in them, articles and capitals."""

from __future__ import annotations

import random
import re
import string

from recall_core.training.families.interview.values import Val

# -- helpers --------------------------------------------------------------------------------------

_FORMATTER = string.Formatter()
_BASE_SLOT = {"v": "v", "V": "v", "a_v": "v", "A_v": "v", "f": "f", "F": "f",
              "old": "old", "Old": "old", "a_old": "old", "A_old": "old",
              "sp": "sp", "rel": "rel", "appt": "appt", "day": "day"}


def _slots_of(tpl: str) -> list[str]:
    return [f for _, f, _, _ in _FORMATTER.parse(tpl) if f]


def _bases(tpl: str) -> set[str]:
    return {_BASE_SLOT[s] for s in _slots_of(tpl)}


def _cap(s: str) -> str:
    return s[:1].upper() + s[1:]


def _article(word: str) -> str:
    w = word.lower()
    if w.startswith(("uk", "uni", "eu")):
        return "a"
    return "an" if w[:1] in "aeiou" else "a"


def _normal(text: str) -> str:
    return " " + re.sub(r"[^a-z0-9]+", " ", text.lower()).strip() + " "


def _fill(tpl: str, slots: dict[str, str]) -> tuple[str, tuple[str, ...]]:
    """Format ``tpl`` and return the text with the value strings it inserted (deduplicated)."""
    text = tpl.format(**slots)
    values: list[str] = []
    for name in _slots_of(tpl):
        raw = slots[name]
        if name in ("a_v", "A_v", "a_old", "A_old"):
            raw = raw.split(" ", 1)[1]  # the value without its article
        if raw not in values:
            values.append(raw)
    return text, tuple(values)


def _value_slots(val: Val, rng: random.Random, prefix: str = "v") -> dict[str, str]:
    form = rng.choice(val.forms)
    a = f"{_article(form)} {form}"
    if prefix == "v":
        out = {"v": form, "V": _cap(form), "a_v": a, "A_v": _cap(a)}
        if val.field:
            out.update(f=val.field, F=_cap(val.field))
        return out
    return {"old": form, "Old": _cap(form), "a_old": a, "A_old": _cap(a)}


def _usable(templates, have: set[str]) -> list:
    """Templates (or tuples whose first item is the template) whose slots are all available."""
    out = []
    for t in templates:
        first = t[0] if isinstance(t, tuple) else t
        if _bases(first) <= have:
            out.append(t)
    return out


def _ql(q: str) -> str:
    return q if q.startswith(("I ", "I'")) else q[:1].lower() + q[1:]

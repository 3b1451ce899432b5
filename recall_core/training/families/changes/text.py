"""Template rendering: slots filled with values (with articles where asked) and first letters lowered."""

from __future__ import annotations

import re

# -- rendering ------------------------------------------------------------------------------------

_SLOT = re.compile(r"\{(?:(an|An):)?(\w+)\}")


def _article(text: str) -> str:
    w = text.split()[0]
    low = w.lower()
    if low.startswith(("one", "uni", "use", "eu", "ux")):
        return "a"
    if w[0].isupper() and len(w) > 1 and (w[:2].isupper() or any(c.isdigit() for c in w)):
        return "an" if w[0] in "AEFHILMNORSX" else "a"
    return "an" if low[0] in "aeiou" else "a"


def _render(tpl: str, fill: dict) -> tuple[str, list[str], list[tuple]]:
    """Fill ``tpl``; ``fill`` maps a slot to (text, [(value string, mention or None), ...])."""
    out: list[str] = []
    values: list[str] = []
    mentions: list[tuple] = []
    pos = 0
    for m in _SLOT.finditer(tpl):
        out.append(tpl[pos:m.start()])
        art, name = m.group(1), m.group(2)
        cap = name == "Who"
        text, parts = fill["who" if cap else name]
        if cap:
            text = text[0].upper() + text[1:]
        if art:
            a = _article(text)
            out.append((a.capitalize() if art == "An" else a) + " ")
        out.append(text)
        for value, mention in parts:
            values.append(value)
            if mention is not None:
                mentions.append(mention)
        pos = m.end()
    out.append(tpl[pos:])
    text = "".join(out)
    return text[0].upper() + text[1:] if tpl.startswith("{") else text, values, mentions


def _lower_first(text: str) -> str:
    first = text.split()[0]
    if first == "I" or first.startswith("I'") or first.isupper():
        return text
    return text[0].lower() + text[1:]

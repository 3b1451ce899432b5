"""Template rendering: a placeholder's variants (capitalised, with an article) and the text a
template gives with the value strings it inserted.
"""

from __future__ import annotations

from string import Formatter

# -- rendering -----------------------------------------------------------------------------------


def _article(x: str) -> str:
    return "an" if x[:1].lower() in "aeiou" else "a"


def _cap(x: str) -> str:
    return x[:1].upper() + x[1:]


def _fields(key: str, value: str) -> dict[str, tuple[str, str]]:
    """Placeholder ``key`` and its variants, each as (text put in, value string recorded)."""
    return {
        key: (value, value),
        key.upper() if len(key) == 1 else _cap(key): (_cap(value), _cap(value)),
        f"a_{key}": (f"{_article(value)} {value}", value),
        f"A_{key}": (f"{_cap(_article(value))} {value}", value),
    }


def _render(template: str, fields: dict[str, tuple[str, str]]) -> tuple[str, tuple[str, ...]]:
    used = [name for _, name, _, _ in Formatter().parse(template) if name]
    text = template.format(**{name: fields[name][0] for name in used})
    values: list[str] = []
    for name in used:
        value = fields[name][1]
        if value not in values:
            values.append(value)
    return text, tuple(values)

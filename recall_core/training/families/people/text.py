"""Text pieces that carry value strings, and the template filling that records which values a
sentence holds.
"""

from __future__ import annotations

import string

# ------------------------------------------------------------------------------------------------
# text pieces that carry value strings


class S:
    """A piece of text plus the value strings inserted in it."""

    __slots__ = ("text", "values")

    def __init__(self, text: str, values: tuple[str, ...] = ()) -> None:
        self.text = text
        self.values = tuple(values)


def _v(text: str) -> S:
    return S(text, (text,))


def _cap(x):
    if isinstance(x, S):
        return S(x.text[:1].upper() + x.text[1:], x.values)
    return x[:1].upper() + x[1:]


_FMT = string.Formatter()


def _fill(template: str, slots: dict) -> tuple[str, list[str]]:
    """Fill ``template``; ``{Foo}`` is the capitalised ``foo``. Returns the text and its values."""
    out: list[str] = []
    values: list[str] = []
    for literal, name, _spec, _conv in _FMT.parse(template):
        out.append(literal)
        if name is None:
            continue
        if name in slots:
            piece = slots[name]
        else:
            piece = _cap(slots[name[:1].lower() + name[1:]])
        if isinstance(piece, S):
            out.append(piece.text)
            values.extend(piece.values)
        else:
            out.append(piece)
    return "".join(out), values

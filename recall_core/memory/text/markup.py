"""A chat assistant's markdown, read as plain text: what a note shows the model.

Chat assistants write their replies in markdown (``**Rent:** £650``, ``## Day 2``, ``[the
form](https://...)``), and a memory keeps a reply as it was written. The recall-tuned model
was trained on notes of plain sentences; to it the marks are noise that also spends the note's
token budget (``RecallConfig.max_memory_tokens``). :func:`plain_text` takes off the marks
that only format (emphasis, headings, rules, code ticks, a link's address) and keeps every word,
list item and line break, so what the reply says is left as it was.
"""

from __future__ import annotations

import re

#: ``**bold**`` between words' edges (its words stay, and never run into the next: ``**a**b`` is
#: left; ``__`` is left alone, as Python's ``__init__`` is not bold).
_STRONG = re.compile(r"(?<!\w)\*\*(?=\S)(.+?)(?<=\S)\*\*(?!\w)", re.DOTALL)
#: ``***strong emphasis***``, taken off whole: read as ``**`` around ``*very``, it left "*very *"
#: (until 2026-12-07: a reviewer).
_STRONG_EMPHASIS = re.compile(r"(?<![\w*])\*\*\*(?=[^\s*])(.+?)(?<=[^\s*])\*\*\*(?![\w*])", re.DOTALL)
#: Emphasis inside strong, or strong inside emphasis, closed together: ``**a *b***``, ``*a **b***``
#: (a lone "*" was left: "a *b *"; a reviewer, 2026-12-07); within one line, as emphasis is.
_CLOSED_TOGETHER = re.compile(
    r"(?<![\w*])(\*\*?)(?=[^\s*])([^*\n]*?[^\s*])[ \t]+(\*\*?)(?=[^\s*])([^*\n]+?)(?<=[^\s*])\*\*\*(?![\w*])"
)
#: ``*emphasis*`` between spaces or punctuation, not ``2*3*4`` or a list's ``* item``.
_EMPHASIS = re.compile(r"(?<![\w*])\*(?=[^\s*])([^*\n]+?)(?<=[^\s*])\*(?![\w*])")
#: A heading's ``#`` marks at the start of a line.
_HEADING = re.compile(r"^[ \t]*#{1,6}[ \t]+", re.MULTILINE)
#: A rule: a line of three or more ``-``, ``*`` or ``_`` alone.
_RULE = re.compile(r"^[ \t]*([-*_])(?:[ \t]*\1){2,}[ \t]*$\n?", re.MULTILINE)
#: ``[text](address)``: the text stays.
_LINK = re.compile(r"\[([^\]\n]+)\]\((?:[^()\s]|\([^()\s]*\))+\)")
#: A run of code ticks (``` ``` ``` fences and inline `` ` ``); it goes unless it sits between two
#: words' letters (:func:`_untick`), where taking it off would join them.
_TICKS = re.compile(r"`+")
_WORD_CHAR = re.compile(r"\w")
#: Three or more line breaks (with blanks between): one empty line is enough.
_BLANK_LINES = re.compile(r"\n[ \t]*(?:\n[ \t]*)+\n")


def plain_text(text: str) -> str:
    """``text`` without markdown's formatting marks; words, list items and line breaks stay.

    >>> plain_text("**Fixed costs:**\\n- Rent: £650\\n\\n\\n## Day 2\\nSee [the form](https://x.ie/f).")
    'Fixed costs:\\n- Rent: £650\\n\\nDay 2\\nSee the form.'
    """
    text = _LINK.sub(r"\1", text)
    text = _STRONG_EMPHASIS.sub(r"\1", text)
    text = _CLOSED_TOGETHER.sub(_closed_together, text)
    while (stripped := _STRONG.sub(_unstrong, text)) != text:  # nested runs ("****word**") leave a pair each pass
        text = stripped
    text = _EMPHASIS.sub(r"\1", text)
    text = _RULE.sub("", text)
    text = _HEADING.sub("", text)
    text = _TICKS.sub(_untick, text)
    return _BLANK_LINES.sub("\n\n", text).strip()


def _unstrong(match: re.Match[str]) -> str:
    """A strong run's words without its marks, and a space where the next run's marks touch them
    ("**a****b**" is "a b": both runs' marks went, and the words ran together, hypothesis found)."""
    inner, after = match.group(1), match.string[match.end() : match.end() + 1]
    return f"{inner} " if after == "*" and _WORD_CHAR.match(inner[-1]) else inner


def _untick(match: re.Match[str]) -> str:
    """A run of ticks taken off, or kept where a word's letter is on both sides ("a`b", "a``b")."""
    text, start, end = match.string, match.start(), match.end()
    inside = start > 0 and end < len(text) and _WORD_CHAR.match(text[start - 1]) and _WORD_CHAR.match(text[end])
    return match.group() if inside else ""


def _closed_together(match: re.Match[str]) -> str:
    """``**a *b***`` and ``*a **b***`` without their marks; the others (``**a **b***``) as they were."""
    outer, first, inner, second = match.groups()
    if {outer, inner} != {"*", "**"}:
        return match.group()
    return f"{first}{match.string[match.end(2) : match.start(3)]}{second}"


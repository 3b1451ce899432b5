"""A chat assistant's markdown read as plain text (recall_core/memory/text/markup.py): marks off, every word kept."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recall_core.memory.text.markup import plain_text


@pytest.mark.parametrize(
    "text, expected",
    [
        ("**Rent:** £650", "Rent: £650"),
        ("- **Total fixed:** £700\n- Buffer: £40", "- Total fixed: £700\n- Buffer: £40"),
        ("## Day 2\nTime Out Market", "Day 2\nTime Out Market"),
        ("Book the *early* slot.", "Book the early slot."),
        ("See [the form](https://example.ie/form_(a)) today.", "See the form today."),
        ("Run `pip install x` first.", "Run pip install x first."),
        ("```\nmake test\n```", "make test"),
        ("word``word and a`b", "word``word and a`b"),  # between two words' letters: taking it off would join them
        ("Intro\n\n---\n\nNext part", "Intro\n\nNext part"),
        ("One\n\n\n\nTwo", "One\n\nTwo"),
        # not formatting: arithmetic, a list's star, Python's dunder names, a lone asterisk
        ("2*3*4 is 24", "2*3*4 is 24"),
        ("* first item\n* second item", "* first item\n* second item"),
        ("edit __init__.py", "edit __init__.py"),
        ("Prices* may vary", "Prices* may vary"),
        ("******word**", "word"),  # nested runs: a pair went each pass (hypothesis found it, 2026-12-07)
        ("**word****word**", "word word"),  # two runs touching: their words ran together (hypothesis, 2026-12-07)
        ("***very*** important, ***a*** and **b**", "very important, a and b"),  # "*very *" (a reviewer, 2026-12-07)
        ("**Note: *really*** and *a **b***", "Note: really and a b"),  # closed together: "*really *" (a reviewer)
        ("- *item one\n- item two", "- *item one\n- item two"),  # a list's lone star: no pair across lines
        ("I'm a barista at Grindhouse in Salford.", "I'm a barista at Grindhouse in Salford."),
    ],
)
def test_formatting_marks_go_and_words_stay(text: str, expected: str):
    assert plain_text(text) == expected


@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=200))
def test_every_word_is_kept_property(text: str):
    """Only marks and blank lines go: the words (letters and digits runs) are the same, in order."""
    words = re.compile(r"[^\W_]+")
    link_free = not re.search(r"\]\(", text)  # a link's address is dropped on purpose
    if link_free:
        assert words.findall(plain_text(text)) == words.findall(text)


@given(st.lists(st.sampled_from(["**", "*", "#", "## ", "- ", "`", "\n", "\n\n\n", " ", "word", "Rent:", "£650", "---"]), max_size=30))
def test_markdown_like_text_keeps_its_words_and_loses_its_pairs_of_marks_property(parts: list[str]):
    text = "".join(parts)
    once = plain_text(text)
    assert re.findall(r"[^\W_]+", once) == re.findall(r"[^\W_]+", text)
    # a run of ticks at a word's edge goes; "a`b" and "a``b" are one word each
    assert re.search(r"(?<![\w`])`|`(?![\w`])", once) is None
    assert re.search(r"(?<![\w*])\*\*(word|Rent:)\*\*(?![\w*])", once) is None  # a pair between edges goes

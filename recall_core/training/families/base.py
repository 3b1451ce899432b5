"""What every conversation family produces, and how an answer to one of its questions is scored.

A *family* is an independent generator of multi-session conversations between one user and an
assistant, followed by questions asked later in a fresh session. Families are written apart
from each other so that no sentence template is shared: a model tuned on some families is
measured on the others (leave-one-family-out).

A family module exposes:

* ``NAME``: a short identifier (``"passing"``, ``"people"``, ...);
* ``DESCRIPTION``: one line saying what the family tests;
* ``generate(seed: int, users: int = 5) -> list[User]``: deterministic for ``seed``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache

#: Roles a turn may have.
ROLES = ("user", "assistant")
#: Question kinds: the answer was said in the conversation, or it never was.
KINDS = ("memory", "unanswerable")


@dataclass(frozen=True)
class Turn:
    """One turn of a conversation.

    ``facts`` names the fact ids this turn states (any version, current or old); ``values`` lists
    every value string inserted into ``content`` by the generator (names, places, dates, numbers...),
    so that a test can mask them and compare sentence shapes across families.
    """

    role: str
    content: str
    session: int  # 1-based
    date: str  # ISO 8601, minutes: "2024-03-05T09:12"
    index: int  # 0-based position inside its session
    facts: tuple[str, ...] = ()
    values: tuple[str, ...] = ()
    # Who said it, when the conversation is between named people rather than a user and an
    # assistant (the memory keeps it as the turn's speaker, and the notes show it).
    speaker: str = ""


@dataclass(frozen=True)
class Question:
    """A question asked after the conversation, in a fresh session.

    ``answers`` are the acceptable ways to name the current value (any one counts; aliases such
    as "14 March" / "March 14" go here). ``stale`` are the ways to name earlier values of the same
    fact, when it changed. ``evidence`` are the (session, index) of the turns that state the
    current value. An ``"unanswerable"`` question has no ``answers`` and no ``evidence``: the
    right reply says it does not know. ``values`` lists the value strings inserted into ``text``.
    ``decoys`` are values the conversation gives for something else that the question could be
    mistaken for (another person's news, asked of this one): a near miss, never the answer.
    """

    key: str
    user_id: str
    fact: str
    text: str
    kind: str = "memory"
    answers: tuple[str, ...] = ()
    stale: tuple[str, ...] = ()
    evidence: tuple[tuple[int, int], ...] = ()
    values: tuple[str, ...] = ()
    decoys: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")
        if self.kind == "memory" and not (self.answers and self.evidence):
            raise ValueError(f"a memory question needs answers and evidence: {self.key}")
        if self.kind == "unanswerable" and (self.answers or self.evidence):
            raise ValueError(f"an unanswerable question has no answers or evidence: {self.key}")


@dataclass
class User:
    """One user's conversation and the questions about it."""

    user_id: str
    turns: list[Turn] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)
    # System messages a caller asking about this conversation would write (empty: any caller's).
    systems: tuple[str, ...] = ()


# -- scoring -------------------------------------------------------------------------------------

# What a reply that does not know says, in the words of the tuned model ("I don't know.") and of a
# plain chat model reading retrieved context (the peers): until 2026-12-06 "The context does not
# mention ...", "not mentioned", "I don't have information ...", "I don't have access ...", "cannot
# determine ..." and "not able to answer" were not read as not knowing, which undercounted the
# peers' right answers to questions never answered, and their "I don't know." with the answer.
_UNKNOWN = re.compile(
    r"\b(i (do not|don't|dont) know|i'm not sure|i am not sure|not sure|no information|"
    r"(didn't|did not|haven't|have not|never|doesn't|does not|don't|do not) (mention|mentioned|tell|told|say|said|"
    r"share|shared|specify|specified|state|stated)|"
    r"not (mentioned|specified|stated|provided)|"
    r"(don't|do not) have (that|this|any|enough|the)? ?(information|info|details|access|record)|"
    r"no (note|notes|record|records|mention|details)|"
    r"(can't|cannot|can not|couldn't|could not|unable to|not able to) (find|tell|recall|determine|answer|say|know)|"
    r"unknown)\b",
    re.I,
)


# Letters with no accent to strip in Unicode (NFKD leaves them whole), read as their usual Latin
# spelling so that "Łódź" and "Lodz", "Snæfellsnes" and "Snaefellsnes" are one word.
_LATIN = str.maketrans({"ł": "l", "ø": "o", "đ": "d", "ð": "d", "þ": "th", "æ": "ae", "œ": "oe", "ı": "i",
                        "ħ": "h", "ŧ": "t", "ə": "e", "ŋ": "ng"})  # fmt: skip
# Scripts written without spaces between words (Thai, Chinese, Japanese; Korean, whose particles
# join the word before them): each character, with its vowel and tone marks, is a word of its own,
# so that a value matches the characters it is written with inside a longer run of them.
_UNSPACED = re.compile(
    r"([\u0e01-\u0e30\u0e32\u0e33\u0e3f-\u0e46\u0e4f-\u0e5b\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff"
    r"\uf900-\ufaff\uac00-\ud7a3][\u0e31\u0e34-\u0e3a\u0e47-\u0e4e]*)"
)
# Marks that are spelling, not the word: any accent on a Latin or Greek letter, Cyrillic stress
# marks, Arabic short vowels and Hebrew points (written in some texts, left out in most).
_CYRILLIC_STRESS = ("\u0300", "\u0301")
_OPTIONAL_MARKS = re.compile(r"[\u0591-\u05c7\u064b-\u065f\u0670]")
# Fractions, superscripts and subscripts are a break, as before other scripts were read: "3½" is
# not "31 2", and "m²" is "m".
_BREAKS = ("<fraction>", "<super>", "<sub>")


def normal(text: str) -> str:
    """Case, accents and punctuation dropped, one space between words, padded with spaces.

    ASCII text reads as it always has: lower case, runs of anything but a-z and 0-9 as one space.
    Other text keeps the letters, marks and digits of every script (digits as 0-9): "Gdańsk" reads
    "gdansk", "Łódź" "lodz", "Київ" "київ". Accents are dropped from Latin and Greek letters, stress
    marks from Cyrillic, short vowels from Arabic and points from Hebrew; a script written without
    spaces (Thai, Chinese, Japanese, and Korean) is read a character at a time.
    """
    if text.isascii():
        return " " + re.sub(r"[^a-z0-9]+", " ", text.lower()).strip() + " "
    return _normal_unicode(text)


@lru_cache(maxsize=8192)  # a turn is read once per value of every question asked of it
def _normal_unicode(text: str) -> str:
    text = "".join(" " if unicodedata.decomposition(c).startswith(_BREAKS) else c for c in text)
    kept: list[str] = []
    base = " "  # the letter the next mark sits on
    for char in unicodedata.normalize("NFKD", unicodedata.normalize("NFKD", text).casefold()):
        kind = unicodedata.category(char)[0]
        if kind == "M":
            if base < "\u0400" or (base < "\u0530" and char in _CYRILLIC_STRESS) or _OPTIONAL_MARKS.match(char):
                continue
            kept.append(char)
        elif kind == "L":
            base = char
            kept.append(char)
        elif kind == "N":
            digit = unicodedata.digit(char, None)
            kept.append(char if digit is None else str(digit))
        else:
            kept.append(" ")
    words = _UNSPACED.sub(r" \1 ", unicodedata.normalize("NFC", "".join(kept)).translate(_LATIN))
    return " " + " ".join(words.split()) + " "


def names(answer: str, value: str) -> bool:
    """Whether ``answer`` names ``value`` as whole words (case and punctuation ignored)."""
    return normal(value) in normal(answer)


def names_any(answer: str, values: Iterable[str]) -> bool:
    """Whether ``answer`` names one of ``values`` (:func:`names`)."""
    return any(names(answer, value) for value in values)


def abstains(answer: str) -> bool:
    """Whether ``answer`` says it does not know."""
    return bool(_UNKNOWN.search(answer))


def score(question: Question, answer: str) -> dict[str, bool]:
    """``correct``, ``stale`` (an earlier value and not the current one) and ``abstained``.

    An unanswerable question is answered correctly by saying it does not know, and by nothing else.
    """
    abstained = abstains(answer)
    if question.kind == "unanswerable":
        return {"correct": abstained, "stale": False, "abstained": abstained}
    correct = names_any(answer, question.answers)
    stale = not correct and names_any(answer, question.stale)
    return {"correct": correct, "stale": stale, "abstained": abstained and not correct}

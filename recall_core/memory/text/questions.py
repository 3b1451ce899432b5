"""What a chat message states, its questions left out: what a live chat writes to memory by default.

A user's question ("What is my dog called?") holds no fact. Written to memory, it comes back
as a note at the next question like it, in the place of the turn that holds the answer, and
the model reads it as something to go on: it says the question back ("Out of curiosity, what
do you play?") or answers from the question's words. Over seven conversation families asked
twice, with the first round's exchanges written back (``python -m benchmarks.hygiene``,
docs/benchmarks/hygiene.md), the notes held the answer for 25 of 114 questions with the
questions written and 54 without, and the right "I don't know."s to questions never answered
went from 7 to 19 of 26, for one fact fewer (17 against 18).

The test is punctuation, and errs towards writing:

* a message with no question mark is written as it is ("Yes.", "Thanks!", a pasted text);
* otherwise each sentence that ends with ``?`` loses its last clause (the question) and keeps
  what comes before it after a comma, semicolon or colon ("I'm moving to Lyon next week,
  any tips?" keeps "I'm moving to Lyon next week."); sentences that do not ask are kept;
* what is left is written when one of its sentences has more than three words: greetings and
  fillers around a question ("Hi again.", "Quick question:") are not facts.

:func:`asks` tells a message that asks something from one that only states ("I started a new job
today."), for the decoding loop (``RecallConfig.own_recall_on_statements``). People leave the
question mark out ("which gym am i at now"), so a question word anywhere counts as asking too;
the test errs towards asking, which keeps the loop as it was.
"""

from __future__ import annotations

import re

__all__ = ["asks", "only_asks", "turn_to_write", "without_questions"]

_SENTENCE = re.compile(r"[^.!?\n]+[.!?]*")
_CLAUSE_END = re.compile(r"(?<=[,;:])\s+")
_WORD = re.compile(r"\w+")
#: A statement this short, next to a question, is a greeting or a filler, not a fact.
FILLER_WORDS = 3
_LOWER_WORD = re.compile(r"[a-z']+")
#: Words that ask, with or without a question mark: the wh-words (and their contractions and chat
#: spellings) and the requests to say back what was said ("remind me", "tell me").
QUESTION_WORDS = frozenset({
    "what", "whats", "what's", "wat", "where", "wheres", "where's", "when", "whens", "when's", "who", "whos", "who's",
    "whom", "whose", "which", "why", "how", "hows", "how's", "remind", "tell", "recall", "remember",
})  # fmt: skip


def without_questions(text: str) -> str:
    """``text`` with its questions left out (see the module docstring); ``""`` when nothing is stated.

    A message without a question mark is returned as it is.
    """
    if "?" not in text:
        return text
    kept: list[str] = []
    for match in _SENTENCE.finditer(text):
        sentence = match.group().strip()
        if sentence.endswith("?"):
            sentence = " ".join(_CLAUSE_END.split(sentence)[:-1]).rstrip(",;: ")
            if sentence:
                sentence += "."
        if len(_WORD.findall(sentence)) > FILLER_WORDS:
            kept.append(sentence)
    return " ".join(kept)


def asks(text: str) -> bool:
    """Does ``text`` ask something: a question mark, or a question word anywhere (see :data:`QUESTION_WORDS`)?"""
    return "?" in text or any(word in QUESTION_WORDS for word in _LOWER_WORD.findall(text.lower()))


def only_asks(text: str) -> bool:
    """Does ``text`` ask something and state nothing but greetings and fillers?"""
    return "?" in text and not without_questions(text)


def turn_to_write(role: str, text: str, questions: bool) -> str:
    """What a chat turn writes to memory: a user's text without its questions unless ``questions``
    (the adapters' ``write_questions``), any other role's as it is."""
    return text if questions or role != "user" else without_questions(text)

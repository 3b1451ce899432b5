"""The newest version wins: a search candidate that a newer one updates, for this question, gives way to it.

Why: on the held-out families the recall-tuned 135M model read the older of two notes about
the same thing (the optician at 4pm on the 7th; moved to the 21st at 2:30), wherever the newer
one sat and whatever its date said, and training on the notes' order did not teach it to
compare dates (docs/benchmarks/heldout.md). Deciding at write time which earlier turn a new
one updates was measured and rejected: by similarity, at most 37% of the marks were right
(``benchmarks/supersede.py``). At search time the question says what the notes are about, so
the test can be narrow:

a newer candidate ``B`` updates an older candidate ``A`` for question ``Q`` when
  - ``B`` is strictly newer (timestamps, else when each was written) and, where both name a
    speaker, the same speaker said both;
  - both name a day or a time (:data:`TEMPORAL`). Without this condition the rule lost as many
    answers as it gained on the families: a person's name was the shared subject, and "my gran
    moved to Swansea" replaced her car;
  - one sentence of ``B`` says that something changed (:data:`CHANGE_WORDS`: "moved",
    "instead", "no longer", "now"...; or a phrase of :mod:`~recall_core.decoding.change_phrases`,
    listed apart from every conversation here: "put off until", "not ... after all") and names
    a word of ``Q`` that ``A`` names too. Only the words of ``Q``'s asking clauses count
    (:func:`asked_words`; all of ``Q``'s where those name nothing but a time), and words of time
    ("day", "21st") never do. Without a change said of the same subject, two dated notes are
    two events (LoCoMo asks when each happened), not two versions.

A chosen ``A`` is then swapped for ``B`` (the newest such, following chains), and its place is
not filled with another candidate. Nothing is written: the memory keeps every turn, and a
question that ``B`` does not answer still finds ``A``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

from recall_core.decoding.change_phrases import CHANGE_PHRASES
from recall_core.memory.text.chunking import sentences
from recall_core.memory.text.lexical import query_words
from recall_core.types import MemoryCandidate

#: Words by which a turn says that something it states replaces what was said before: plain
#: English for an update (not drawn from any one conversation family's sentences).
CHANGE_WORDS = re.compile(
    # "new", and "New" opening a sentence, but not the "New" of a name ("a hotel in New York")
    r"\b(now|instead|any ?more|no longer|(?-i:new)|(?-i:New|NEW)(?!(?-i: [A-Z]))|"
    r"(?:^|(?<=[.!?:] )|(?<=\n))(?-i:New)(?! (?-i:York|Zealand|Delhi|Jersey|Orleans|Mexico|Hampshire|England|"
    r"Brunswick|Haven|South Wales|Year))|"
    r"moved?|moving|changed?|changing|switch(?:ed)?|"
    r"re-?scheduled?|postponed?|pushed (?:back|forward)|brought forward|bumped|delayed|updated?|"
    r"actually|cancell?ed|replaced|retimed|turns out|from now on)\b",
    re.IGNORECASE,
)


#: A day or a time of day: month and weekday names, ordinal days, clock times, ISO dates.
#: "May" counts only capitalised (the verb is common).
TEMPORAL = re.compile(
    r"\b(?:(?i:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|june?|july?|aug(?:ust)?|sept?(?:ember)?|"
    r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|"
    r"(?:mon|tues|wednes|thurs|fri|satur|sun)day|noon|midday|midnight|tomorrow|tonight|"
    r"\d{1,2}(?:st|nd|rd|th)|\d{1,2}[:.]\d{2}|\d{1,2} ?[ap]\.?m\.?|half past)|May|\d{4}-\d{2}-\d{2})\b"
)


#: Words for spans of time: a question's "day" or "time" says what it asks, not what about.
TIME_WORDS = frozenset(
    "time times day days date dates week weeks weekend month months year years morning afternoon evening night "
    "today tonight tomorrow yesterday hour hours minute minutes clock".split()
)


#: A clause that asks: it ends in "?", after the sentence or the colon that opens it.
_ASKED = re.compile(r"[^.!?:;\n]*\?")


def names_time(text: str) -> bool:
    """Whether ``text`` names a day or a time of day (:data:`TEMPORAL`)."""
    return TEMPORAL.search(text) is not None


def asked_words(question: str) -> set[str]:
    """The words of ``question``'s asking clauses ("Okay, quick one: what do I collect?" -> collect),
    or of all of it when no clause ends in "?": the small talk around a question is not its subject.

    An asking clause with no word but words of time ("I need time off for the periodontist.
    Which date was it?") points back at the sentence before it, so then all of the question's
    words count: a subject-less clause would leave the rule nothing to compare.
    """
    asked = set(query_words(" ".join(_ASKED.findall(question))))
    if any(not _about_time(word) for word in asked):
        return asked
    return set(query_words(question))


@lru_cache(maxsize=4096)
def says_change(text: str) -> bool:
    """Whether ``text`` says that something changed: one of :data:`CHANGE_WORDS`, or of the phrases of
    change (:data:`~recall_core.decoding.change_phrases.CHANGE_PHRASES`: "put off until", "fell
    through", "not ... after all"). Cached: the rule asks it of the same notes for every pair."""
    if CHANGE_WORDS.search(text) is not None:
        return True
    return CHANGE_PHRASES.search(text.translate(_APOSTROPHES)) is not None


#: Typographic apostrophes read as the straight one the phrases are written with.
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'"})


#: A test of whether ``newer`` updates ``older`` for a question's words, given when each was said
#: (:func:`updates`' signature).
UpdateTest = Callable[[MemoryCandidate, MemoryCandidate, set[str], Callable[[MemoryCandidate], Any]], bool]


def updates(newer: MemoryCandidate, older: MemoryCandidate, question: set[str], when: Callable[[MemoryCandidate], Any]) -> bool:
    """Whether ``newer`` updates ``older`` for a question of words ``question`` (the module's test)."""
    if not may_update(newer, older, when):
        return False
    subject = subject_words(question, older.text)
    return any(subject & set(query_words(sentence)) for sentence in sentences(newer.text) if says_change(sentence))


def may_update(newer: MemoryCandidate, older: MemoryCandidate, when: Callable[[MemoryCandidate], Any]) -> bool:
    """The conditions of :func:`updates` before the subject: ``newer`` said strictly after ``older``
    by the same speaker, both naming a day or a time, and ``newer`` saying a change somewhere."""
    return (later_by_same_speaker(newer, older, when) and names_time(newer.text) and names_time(older.text)
            and says_change(newer.text))  # fmt: skip


def subject_words(question: set[str], text: str) -> set[str]:
    """What ``text`` and a question of words ``question`` are both about: the question's words in
    ``text``, less days and times (a day the question names is not a subject: "What was on
    December 21st?" is not about the 21st of January)."""
    return {w for w in question & set(query_words(text)) if not _about_time(w)}


def later_by_same_speaker(newer: MemoryCandidate, older: MemoryCandidate, when: Callable[[MemoryCandidate], Any]) -> bool:
    """Whether ``newer`` was said strictly after ``older`` (``when``) and, where both name a speaker,
    by the same one: what any newer version of a note must be."""
    if when(newer) <= when(older):
        return False
    speakers = (_speaker(newer), _speaker(older))
    return not (all(speakers) and speakers[0] != speakers[1])


def newest_versions(
    chosen: Sequence[MemoryCandidate],
    candidates: Sequence[MemoryCandidate],
    question: str | None,
    when: Callable[[MemoryCandidate], Any],
    rule: UpdateTest | None = None,
) -> list[MemoryCandidate]:
    """``chosen`` in its order, each one that one of ``candidates`` updates swapped for the newest such.

    ``when`` gives a candidate's moment (comparable); ``question`` ``None`` or without words
    leaves the list as it is. ``rule`` says whether a candidate updates another, as :func:`updates`
    does (the default; ``benchmarks/supersede_rules.py`` measures looser ones). A swapped-in
    candidate may appear twice (it was chosen as well, or it updates two chosen ones): the caller
    keeps the first. The place of an older version is not filled with another candidate: a note on
    something else would only distract.
    """
    test = rule or updates
    words = asked_words(question or "")
    if not words or len(candidates) < 2:
        return list(chosen)
    out = []
    for candidate in chosen:
        current = candidate
        while True:  # follow a chain of updates to the newest one (each step strictly newer: it ends)
            newer = [c for c in candidates if test(c, current, words, when)]
            if not newer:
                break
            current = max(newer, key=when)
        out.append(current)
    return out


def _about_time(word: str) -> bool:
    return word.isdigit() or word in TIME_WORDS or TEMPORAL.fullmatch(word) is not None


def _speaker(candidate: MemoryCandidate) -> str:
    """Who said ``candidate`` (its ``speaker`` metadata), lower-cased; ``""`` when unknown. Not the
    ``role``: a unit of the role ``"assistant"`` often holds the user's turn it answers ("User: ...
    Assistant: ..."), and on the hand-written families reading the role lost a note that held the
    answer (an update said by the user inside an assistant's unit; docs/benchmarks/heldout.md, 2026-12-07)."""
    meta = candidate.metadata or {}
    return str(meta.get("speaker") or "").strip().lower()

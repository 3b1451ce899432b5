"""A chosen note's names are searched for a newer turn that replaces it: ``RecallConfig.follow_updates``.

Why: :mod:`~recall_core.decoding.supersede` swaps a chosen note for a newer version only when
the newer one is among the search's candidates. An update often shares no word with the question
that needs it: asked "What am I driving at the minute?", a search finds "My Skoda Octavia has
started making a horrible squealing noise..." (it says "car"), and not "I traded in my Skoda
Octavia at the weekend and drove home in a Volvo V70", which says neither "car" nor "drive". What
the update does share is with the *note*: the name of the thing it replaces. So the note's names
are searched for too:

for each chosen note ``A`` where people (not the assistant) name something (:func:`~recall_core.decoding.names.names`:
capitalised words that do not open a sentence or a clause, less the question's own names and
people said with how they are related, "my cousin Matteo": those are what a note is about, not
a value), the memory is searched with ``A``'s sentences that say those names; a found turn ``B``
replaces ``A`` when

  - ``B`` is strictly newer and, where both name a speaker, the same speaker said both;
  - one sentence of what people said in ``B`` (not the assistant's reply) says that something changed
    (:func:`~recall_core.decoding.supersede.says_change`: "traded in", "instead", "cancelled",
    "no longer"...), says one of ``A``'s names, and says a name that ``A`` does not (the new
    value: "Volvo"). A change that brings no new name ("Anna moved her party to June") is not a
    new version of what ``A`` says of Anna;
  - every sentence of ``A`` that names a value (a name, a day or a time) names one that such a
    sentence of ``B`` says. A note that says two things ("My boss's flat in Osaka has a view. Thiago bought a Land Rover
    Defender.") is not replaced by news of one of them ("Thiago got rid of the Land Rover
    Defender and bought a Fiat Panda."): the question may be about the other.

The newest such ``B`` takes ``A``'s place (following a chain: ``B``'s own names are searched
next). Nothing is written or deleted: the memory keeps every turn, and another question still
finds ``A``. It costs one more search per chosen note that names something.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from recall_core.decoding.names import LABEL, names, relations
from recall_core.decoding.supersede import later_by_same_speaker, names_time, says_change
from recall_core.memory.text.chunking import sentences
from recall_core.memory.text.composition import speaker_of
from recall_core.types import MemoryCandidate

#: How a unit labels the assistant's lines (:func:`~recall_core.memory.text.composition.speaker_of`).
ASSISTANT = speaker_of("assistant", {}).lower()
#: How deep a search by a note's names reads (at least; ``top_k`` when larger): the note's own turn
#: and the units that hold it come first.
FOLLOW_K = 8
#: Most searches one chosen note may cause while its chain of newer versions is followed.
MAX_FOLLOWS = 3


def replaces(newer: MemoryCandidate, older: MemoryCandidate, anchors: set[str],
             when: Callable[[MemoryCandidate], Any]) -> bool:  # fmt: skip
    """Whether ``newer`` replaces ``older``, whose names (less the question's) are ``anchors``."""
    if newer.id == older.id or not later_by_same_speaker(newer, older, when):
        return False
    older_names = names(older.text)
    changed: set[str] = set()  # the anchors that a sentence of change says, with a new name
    for sentence in sentences(own_words(newer)):
        said = names(sentence)
        if said & anchors and said - older_names and says_change(sentence):
            changed |= said & anchors
    if not changed:
        return False
    # every sentence of the older note that names a value (a name, a day or a time) names one the
    # newer one changes: a note that also says something else ("my boss's flat in Osaka", then
    # Thiago's car; a new start date, then who minds the dog) keeps its place
    stated = [s for s in sentences(own_words(older)) if names(s) & anchors or names_time(s)]
    return all(names(s) & changed for s in stated)


def follow_updates(
    chosen: Sequence[MemoryCandidate],
    question: str | None,
    search: Callable[[str], Sequence[MemoryCandidate]],
    when: Callable[[MemoryCandidate], Any],
) -> list[MemoryCandidate]:
    """``chosen`` in its order, each note that a newer turn found by its names replaces swapped for
    the newest such (see the module docstring). ``search`` takes a text and returns candidates
    (``[]`` on a memory error); a swapped-in turn may repeat one chosen already: the caller keeps
    the first."""
    asked = names(question or "")
    out = []
    for candidate in chosen:
        current = candidate
        for _ in range(MAX_FOLLOWS):
            anchors = values_named(current) - asked
            if not anchors:
                break
            query = " ".join(s for s in sentences(own_words(current)) if names(s) & anchors)
            newer = [c for c in search(query) if replaces(c, current, anchors, when)]
            if not newer:
                break
            current = max(newer, key=when)
        out.append(current)
    return out


def values_named(candidate: MemoryCandidate) -> set[str]:
    """The names in what people said in ``candidate`` (:func:`own_words`), less people said with how they are
    related ("my cousin Matteo"): a person is what a note is about, the values are what changes."""
    text = own_words(candidate)
    return {name for name in names(text) if not relations(text, name)}


def own_words(candidate: MemoryCandidate) -> str:
    """What people said in ``candidate``: its lines less the assistant's. A unit holds the turn
    around the one found ("User: ..." then "Assistant: ..."), and the assistant only says back
    what it was told ("From Detectorists to Frasier, good taste!"): its words neither anchor a
    search nor say a change. A text without labels is its turn's: nothing when that is a reply."""
    meta = candidate.metadata or {}
    label = None if meta.get("role") == "assistant" and not meta.get("speaker") else "own"
    kept = []
    for line in candidate.text.splitlines():
        match = LABEL.match(line)
        if match:
            label = match.group(1).lower()
        if label is not None and label != ASSISTANT:
            kept.append(line)
    return "\n".join(kept)

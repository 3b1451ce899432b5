"""changes: personal facts that change several times across sessions.

Each user talks to the assistant over 3 to 5 dated sessions. Six or seven facts about the user
move through 2 to 4 values: a move to another city, a new job, a new partner, a new car, phone or
laptop, a new diet, workout, team project, rent, favourite show, language or coffee order. Some
changes are announced and happen ("we're moving to X" ... "got the keys in X"), some are announced
and then cancelled ("X fell through, we're staying in Y"), some happen without warning and some are
reversed ("back to being vegetarian"). Three facts, drawn from hometown, pet, birthday, allergy and
instrument, never change and serve as controls. Near-miss distractors state the same kind of fact about a
sister, a flatmate, a neighbour, mum...

Every user gets 20 questions (``QUESTIONS_PER_USER``): 16 about the current value of a fact
(``stale`` lists every earlier or abandoned value) and 4 (``UNANSWERABLE_PER_USER``) about a
plausible fact that was never stated, usually next to a distractor.

``aliases(surface)`` returns the acceptable ways to name the value that ``surface`` (one of a
turn's ``values``) names; tests use it to check stale values against earlier turns.

The parts: ``values`` (the value pools and :func:`aliases`), ``kinds/`` (the changing facts by
topic), ``controls`` (facts that never change), ``near_misses`` (the same facts about someone
else), ``chat`` (help requests, greetings, question wrappers), ``text`` (template rendering) and
``generator`` (one user's sessions and questions). The tables ``_K``, ``_C`` and ``_O`` are
re-exported here for the family's tests.
"""

from __future__ import annotations

from recall_core.training.families.changes.controls import _C as _C
from recall_core.training.families.changes.generator import (
    MAX_SESSIONS,
    MIN_SESSIONS,
    QUESTIONS_PER_USER,
    UNANSWERABLE_PER_USER,
    generate,
)
from recall_core.training.families.changes.kinds import _K as _K
from recall_core.training.families.changes.kinds import CHANGING_KINDS
from recall_core.training.families.changes.near_misses import _O as _O
from recall_core.training.families.changes.values import aliases

NAME = "changes"
DESCRIPTION = (
    "Facts about the user (home, job, partner, car, phone, diet, workout, project, rent, show...) "
    "change, get planned, cancelled or reversed across sessions; questions ask the current value."
)

__all__ = [
    "CHANGING_KINDS", "DESCRIPTION", "MAX_SESSIONS", "MIN_SESSIONS", "NAME", "QUESTIONS_PER_USER",
    "UNANSWERABLE_PER_USER", "aliases", "generate",
]

"""people: the user's relatives, friends, colleagues and neighbours, each with a name and attributes.

Every user has a cast of 6 to 8 people, each known by a relation ("my aunt", "my boss") and, for
most of them, a first name. People carry attributes of the same few kinds (job, city, pet, hobby,
birthday month, car, what they study), so facts are near misses of each other: the aunt's job is
never the cousin's job. Some people are introduced by name in one turn and described by name only
in a later session; a few attributes change (a move, a new job, a new car), leaving stale values.
Strangers' relatives (the hairdresser's uncle...) add near-miss distractors.

Sizes: ``generate(seed, users)`` returns ``users`` users; each has 3 to 5 sessions and exactly
20 questions, 16 "memory" and 4 "unanswerable".

Fact ids: ``"<relation>.<kind>"``, e.g. ``"brother_in_law.job"``, ``"aunt.name"``; distractors
about strangers use ``"other<k>.<kind>"`` and are never asked about.

The parts: ``text`` (value-carrying text pieces, template filling), ``vocab`` (values, names,
relations), ``sentences`` (what is said about the cast), ``chat`` (small talk, greetings),
``cast`` (one user's people), ``conversation`` (the sessions and turns), ``questions`` and
``generator``. The sentence tables are re-exported here: the family's tests check them.
"""

from __future__ import annotations

from recall_core.training.families.people.chat import CLOSE, GREET, GREET_PREFIX, HELP, SMALL
from recall_core.training.families.people.generator import generate
from recall_core.training.families.people.questions import (
    ASK,
    MEMORY_PER_USER,
    QUESTIONS_PER_USER,
    UNANSWERABLE_PER_USER,
    WRAP_DIRECT,
    WRAP_INDIRECT,
)
from recall_core.training.families.people.sentences import (
    ACK,
    ACK_CHANGE,
    CHANGE,
    DISTRACT,
    INTRO,
    INTRO_NICK,
    JOINERS,
    MERGED_PREFIX,
    STATE,
)
from recall_core.training.families.people.vocab import FEMALE, MALE, NICKS, PET_NAMES, POOLS

NAME = "people"
DESCRIPTION = (
    "A crowd of relatives, friends and colleagues with overlapping attribute kinds (job, city, pet, "
    "hobby, birthday, car, studies); ask one person's attribute by relation or by name, or a relation's name."
)

__all__ = [
    "ACK", "ACK_CHANGE", "ASK", "CHANGE", "CLOSE", "DESCRIPTION", "DISTRACT", "FEMALE", "GREET", "GREET_PREFIX",
    "HELP", "INTRO", "INTRO_NICK", "JOINERS", "MALE", "MEMORY_PER_USER", "MERGED_PREFIX", "NAME", "NICKS",
    "PET_NAMES", "POOLS", "QUESTIONS_PER_USER", "SMALL", "STATE", "UNANSWERABLE_PER_USER", "WRAP_DIRECT",
    "WRAP_INDIRECT", "generate",
]

"""circle: news about the user's friends, told in the third person and asked by the friend's name.

Every user tells the assistant, over 3 or 4 dated sessions, what 4 or 5 named friends are up to
(a trip, a course, a new pet, a job, a wedding date, a race, a book, a move, a present). A kind
of news belongs to one friend only, so asking one friend about another's news is a near miss
whose right reply is "I don't know."; two pieces of news change later (a moved wedding, a swapped
trip), leaving stale values. Questions name the friend and never say "my": "What class is Ines
taking?". Memories of other people's lives asked in the third person are what a model that only
learned "my ..." questions does not recall for.

Sizes: ``generate(seed, users)`` returns ``users`` users with up to 12 memory and 4 unanswerable
questions each.
"""

from __future__ import annotations

from recall_core.training.families.circle.events import ACKS, KINDS, NAMES, WRAP
from recall_core.training.families.circle.generator import MEMORY_PER_USER, UNANSWERABLE_PER_USER, generate

NAME = "circle"
DESCRIPTION = "News about the user's named friends, asked later in the third person by name; near misses are another friend's news."

__all__ = ["ACKS", "DESCRIPTION", "KINDS", "MEMORY_PER_USER", "NAME", "NAMES", "UNANSWERABLE_PER_USER", "WRAP",
           "generate"]

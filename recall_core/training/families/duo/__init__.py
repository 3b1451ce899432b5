"""duo: two named friends chat with each other; each tells their own news in the first person.

There is no assistant: the conversation is between two people (written to memory as the
speakers ``A`` and ``B``, with their names as the notes' speakers), and the questions are asked
later by a third party, by name: "What did Priya adopt?". Each kind of news belongs to one of the
two, so asking one about the other's news is a near miss whose right reply is "I don't know."
(``Question.decoys`` holds the other's value): the note says "Tomas: I adopted a greyhound", and
nothing says Priya did. A model that takes a note as support without checking *who* said it
answers "A greyhound." to the question about Priya. Some news changes later (a swapped plan),
leaving stale values.

Sizes: ``generate(seed, users)`` returns ``users`` users with up to 10 memory and 8 unanswerable
questions each.
"""

from __future__ import annotations

from recall_core.training.families.duo.deeds import KINDS, NAMES, SYSTEMS
from recall_core.training.families.duo.generator import MEMORY_PER_USER, UNANSWERABLE_PER_USER, generate

NAME = "duo"
DESCRIPTION = "Two named friends tell each other their own news; asked later by name, a near miss is the other one's news."

__all__ = ["DESCRIPTION", "KINDS", "MEMORY_PER_USER", "NAME", "NAMES", "SYSTEMS", "UNANSWERABLE_PER_USER",
           "generate"]

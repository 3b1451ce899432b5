"""Facts said in passing: one personal detail tucked into a long, chatty user message.

Each fact-bearing user turn is 60-200 words of ordinary chat (a request for help, a rant, a
story) with ONE personal fact mentioned as an aside; some also carry a near-miss detail about
someone else (a neighbour's dog, a colleague's allergy). The assistant answers the main request
and mostly ignores the aside. A few facts change in a later session (a move, a new job, a new
car, a new sport, a different holiday). Questions come later, in a fresh session: about 80%
ask for something that was said, about 20% ask for something plausible that never was, usually
next to a distractor (the neighbour's cat was named, the user's cat never was).

The parts: ``pools`` (the values), ``common`` (template filling, the per-user registry, the
``Kind`` record), ``kinds/`` (the fact kinds by topic), ``unanswerable`` (questions never
answered, with their distractors), ``filler`` (greetings, small talk, question wrappers) and
``generator`` (one user's sessions and questions).
"""

from __future__ import annotations

from recall_core.training.families.passing.generator import generate

NAME = "passing"
DESCRIPTION = "personal facts mentioned as asides inside long chatty requests, with near-miss details about other people"

__all__ = ["DESCRIPTION", "NAME", "generate"]

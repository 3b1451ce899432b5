"""Interview family: facts the user gives as short answers to the assistant's own questions.

The assistant keeps asking things ("What did you end up calling her?", "Which city are you flying
to?") and the user answers tersely ("Pickle. The kids voted.", "Tallinn, for a week"), so most facts
can only be understood from the assistant's question together with the user's reply. Mixed in:
facts the user states outright, near-miss facts about other people (the sister's kitten, the
flatmate's job), values that change in a later session, questions the user declines to answer
("I'd rather not say"), small talk and requests for help.

Sizes: ``generate(seed, users=5)`` returns ``users`` users; each has 3 to 5 dated sessions and
``QUESTIONS_PER_USER`` (20) questions, ``UNANSWERABLE_PER_USER`` (4) of them unanswerable.

Fact ids: ``<kind>`` for the user's own fact, ``<kind>:<relation>`` for the same kind of fact
about someone else (``job:flatmate``), ``declined:<topic>`` for a question the user declined.

The parts: ``values`` (the value pools), ``kind`` (the ``Kind`` record), ``kinds/`` (the fact
kinds by topic), ``declines`` (questions the user declines), ``chat`` (small talk, greetings,
question wrappers), ``text`` (template filling) and ``generator`` (one user's sessions and
questions).
"""

from __future__ import annotations

from recall_core.training.families.interview.generator import (
    MEMORY_PER_USER,
    QUESTIONS_PER_USER,
    UNANSWERABLE_PER_USER,
    generate,
)

NAME = "interview"
DESCRIPTION = (
    "Facts given as terse answers to the assistant's own questions (only the question makes the "
    "answer meaningful), with declined questions, near-miss facts about others and later changes."
)

__all__ = ["DESCRIPTION", "MEMORY_PER_USER", "NAME", "QUESTIONS_PER_USER", "UNANSWERABLE_PER_USER", "generate"]

"""Family "dates": when things happen.

Each user mentions appointments, flights, birthdays, deadlines, other people's events and
past milestones, always as absolute dates (day + month, sometimes a year or a weekday) and
clock times. Some of them are rescheduled in a later session (the old date or time becomes
stale). Around them: other people's dates in the same month (near misses), things mentioned
without any date (so a question about them is unanswerable), small talk and requests for help.

Standard library only, deterministic for a seed.

The parts: ``formats`` (how dates and times are written, their aliases, template filling),
``pools`` (people, places, appointments, events), ``chat`` (greetings, small talk),
``statements`` (what the user says about dates), ``questions``, ``blocks`` (turns, facts and the
per-user allocator) and ``generator`` (one user's sessions and questions).
"""

from __future__ import annotations

from recall_core.training.families.dates.formats import date_aliases, time_aliases
from recall_core.training.families.dates.generator import generate

NAME = "dates"
DESCRIPTION = (
    "Appointments, flights, birthdays, deadlines, events and past milestones given as absolute "
    "dates and clock times, some rescheduled, with other people's dates as near misses."
)

__all__ = ["DESCRIPTION", "NAME", "date_aliases", "generate", "time_aliases"]

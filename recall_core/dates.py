"""Reading the timestamps memories carry: the day to show, and a moment to order by."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime

#: Formats tried after ISO 8601 (LoCoMo writes "1:56 pm on 8 May, 2023"), with and without a time,
#: full and abbreviated month names ("Sept" read as "Sep"). Numeric day/month orders other than
#: year first ("09/08/2023") are left out: which is the month is the writer's convention.
_DAYS = ("%d %B, %Y", "%d %B %Y", "%B %d, %Y", "%B %d %Y", "%d %b, %Y", "%d %b %Y", "%b %d, %Y", "%b %d %Y",
         "%Y/%m/%d", "%Y.%m.%d")  # fmt: skip
_TIMES = ("", " %H:%M", " %H:%M:%S", " %I:%M %p", ", %H:%M", ", %I:%M %p")
_FORMATS = ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y", *(day + time for day in _DAYS for time in _TIMES))
#: A weekday before the date ("Friday, September 8, 2023"), which strptime would need spelled out.
_WEEKDAY = re.compile(r"^(?:mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)[a-z]*\.?,?\s+", re.IGNORECASE)
#: The zones RFC 2822 names (an offset, or UT/GMT and the US zones): the only ones its parser reads.
_RFC_ZONE = re.compile(r"(?:[+-]\d{4}|\b(?:UTC?|GMT|Z|[ECMPA][SD]T))$", re.IGNORECASE)
#: A zone name after an ISO time ("2023-09-08 14:00:00 UTC"), which ``fromisoformat`` does not read.
_UTC = re.compile(r"\s*(?:UTC|GMT|Z)$", re.IGNORECASE)


def parse_moment(timestamp: object) -> datetime | None:
    """The moment a stored timestamp names (timezone-aware, UTC when it says none), or ``None``.

    ISO 8601, LoCoMo's "1:56 pm on 8 May, 2023", RFC 2822 (e-mail headers), and dates written out
    ("Sep 8, 2023", "8 September 2023 14:00", "Friday, September 8, 2023", "2023/09/08"). Until
    2026-12-07 only ISO and four written forms were read: a turn dated "Sep 8, 2023" was ordered by
    when it was written, after every dated turn, and an update's older value came first (a reviewer).
    """
    if not isinstance(timestamp, str) or not timestamp.strip():
        return None
    text = timestamp.strip()
    moment = _iso(text) or _iso(_UTC.sub("+00:00", text)) or _written(_WEEKDAY.sub("", text)) or _rfc2822(text)
    if moment is None:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)


def _iso(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return None


def _rfc2822(text: str) -> datetime | None:
    # only with a zone it knows: email.utils takes "7:00 pm" or "CEST" for an unknown zone and gives the
    # clock time as UTC, 12 hours or 2 off (a reviewer, 2026-12-07)
    if not _RFC_ZONE.search(text):
        return None
    try:
        return parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None


def _written(text: str) -> datetime | None:
    text = re.sub(r"\bSept\b", "Sep", text, flags=re.IGNORECASE)
    for fmt in _FORMATS:
        try:
            return datetime.strptime(text, fmt)
        except ValueError:
            continue
    return None


def day_label(timestamp: str) -> str:
    """The day of a stored timestamp: ``"2023-05-08T13:56:00"`` -> ``"8 May 2023"``;
    LoCoMo's ``"1:56 pm on 8 May, 2023"`` -> ``"8 May, 2023"``; other strings as they are."""
    try:
        moment = datetime.fromisoformat(timestamp)
    except ValueError:
        _, sep, day = timestamp.partition(" on ")
        return day.strip() if sep else timestamp.strip()
    return f"{moment.day} {moment:%B %Y}"

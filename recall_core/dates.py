"""Reading the timestamps memories carry: the day to show, and a moment to order by."""

from __future__ import annotations

from datetime import datetime, timezone

#: Formats tried after ISO 8601 (LoCoMo writes "1:56 pm on 8 May, 2023").
_FORMATS = ("%I:%M %p on %d %B, %Y", "%d %B, %Y", "%d %B %Y", "%B %d, %Y")


def parse_moment(timestamp: object) -> datetime | None:
    """The moment a stored timestamp names (timezone-aware, UTC when it says none), or ``None``."""
    if not isinstance(timestamp, str) or not timestamp.strip():
        return None
    text = timestamp.strip()
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        moment = None
        for fmt in _FORMATS:
            try:
                moment = datetime.strptime(text, fmt)
                break
            except ValueError:
                continue
    if moment is None:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)


def day_label(timestamp: str) -> str:
    """The day of a stored timestamp: ``"2023-05-08T13:56:00"`` -> ``"8 May 2023"``;
    LoCoMo's ``"1:56 pm on 8 May, 2023"`` -> ``"8 May, 2023"``; other strings as they are."""
    try:
        moment = datetime.fromisoformat(timestamp)
    except ValueError:
        _, sep, day = timestamp.partition(" on ")
        return day.strip() if sep else timestamp.strip()
    return f"{moment.day} {moment:%B %Y}"

"""Checking what callers give the memory: user ids, turns, metadata, timestamps.

Every check raises ``ValueError`` naming the field and what is allowed, before anything is
written, so a bad turn never leaves half a write behind. The rules are the same for every
text field (user id, session id, key, metadata keys and string values, content): valid UTF-8
(no lone surrogates), no NUL, and, where the field names something, at least one visible
character (whitespace and zero-width characters alone are blank). Metadata is held to what
the index (Chroma) can store and give back unchanged: a value the index would refuse or
alter is refused here, so a row never sits in the journal that the index cannot take.

User ids are normalised to Unicode NFC: the same name typed as NFC or NFD ("é" as one code
point, or "e" + a combining accent) is one user (see ``check_user_id``).
"""

from __future__ import annotations

import math
import numbers
import unicodedata
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime, timezone
from typing import Any

ROLES = ("user", "assistant", "system")
DEFAULT_SESSION = "default"
#: Keys the store writes in each memory's metadata; user metadata may not use them.
RESERVED_KEYS = frozenset(
    {"user_id", "role", "session_id", "timestamp", "turn_index", "chunk_index", "n_chunks", "written_at", "key"}
)
#: Metadata key prefixes Chroma keeps for itself: ``$`` and ``#`` keys are refused by its
#: validator (an ``InvalidArgumentError``, not a ``ValueError``), ``chroma:`` keys are dropped
#: silently (``chroma:document`` is refused).
INDEX_KEY_PREFIXES = ("$", "#", "chroma:")
#: Integers the index stores exactly (64-bit signed); a larger one comes back as a float.
INT_MIN, INT_MAX = -(2**63), 2**63 - 1
#: The highest ``turn_index`` a write may give: room is left above it for the turns written after
#: it without one (one past the highest; at ``INT_MAX`` every later write failed with SQLite's
#: ``OverflowError`` until 2026-12-07, a reviewer found).
TURN_INDEX_MAX = 2**62
#: Unicode categories that show nothing on their own: a field made only of these is blank.
_INVISIBLE = frozenset({"Zs", "Zl", "Zp", "Cc", "Cf"})


def _utf8(text: str, field: str) -> str:
    """``text`` if it encodes as UTF-8 (no lone surrogates) and has no NUL, else ``ValueError`` naming ``field``."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        # Lone surrogates: what Python makes of undecodable bytes with errors="surrogateescape".
        raise ValueError(
            f"{field} is not valid UTF-8 text (character {text[exc.start]!r} at position {exc.start}): "
            "it was probably decoded from non-UTF-8 bytes"
        ) from None
    if "\x00" in text:
        raise ValueError(f"{field} contains NUL characters (position {text.index(chr(0))}): not text")
    return text


def is_blank(text: str) -> bool:
    """Whether ``text`` has no visible character (only whitespace, controls or zero-width characters)."""
    return all(char.isspace() or unicodedata.category(char) in _INVISIBLE for char in text)


def _name(value: object, field: str, what: str = "a non-empty string") -> str:
    """A text field that names something: a str with a visible character, valid UTF-8, no NUL."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{field} must be {what}, got {value!r}")
    _utf8(value, field)
    if is_blank(value):
        raise ValueError(f"{field} must be {what}, got only whitespace or zero-width characters: {value!r}")
    return value


def check_user_id(user_id: object) -> str:
    """The user id in its one spelling (Unicode NFC); ``ValueError`` if it is not a usable id.

    A usable id is a non-empty string (or UTF-8 bytes) with a visible character, valid UTF-8,
    without NUL. NFC makes the two ways of typing an accented name one user; nothing else is
    changed (case and surrounding spaces are kept: ``"Ana"`` and ``"ana"`` are two users).
    """
    if isinstance(user_id, bytes):
        try:
            user_id = user_id.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"user_id is not valid UTF-8: {exc}") from None
    return unicodedata.normalize("NFC", _name(user_id, "user_id"))


def check_content(content: object) -> str:
    """Return the turn's text; raise ``ValueError`` if it is empty, blank, not UTF-8 or has NUL."""
    if isinstance(content, (bytes, bytearray, memoryview)):
        raw = bytes(content)
        try:
            content = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(
                f"content is not valid UTF-8 (byte 0x{raw[exc.start]:02x} at position {exc.start}): "
                "decode it with its real encoding first"
            ) from None
    if not isinstance(content, str):
        raise ValueError(f"content must be text (str or UTF-8 bytes), got {type(content).__name__}")
    _utf8(content, "content")
    if not content.strip():
        raise ValueError("content is empty or only whitespace: nothing to remember")
    if is_blank(content):
        raise ValueError("content has only whitespace or zero-width characters: nothing to remember")
    return content


def check_role(role: object) -> str:
    if role not in ROLES:
        raise ValueError(f"role must be one of {', '.join(map(repr, ROLES))}, got {role!r}")
    return str(role)


def check_count(name: str, value: object, low: int) -> int:
    """``value`` as an int if it is an integer (not a bool; a NumPy one too) of at least ``low``,
    else ``ValueError`` naming ``name``. (Until 2026-12-07 ``np.int64(3)`` was refused: a reviewer.)"""
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < low:
        raise ValueError(f"{name} must be an int >= {low}, got {value!r}")
    return int(value)


def check_flag(name: str, value: object) -> bool:
    """``value`` if it is a bool, else ``ValueError`` naming ``name`` ("no" or "false" would read as True)."""
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return value


def role_names(roles: object, name: str, allowed: Sequence[str], shapes: tuple[str, str]) -> tuple[str, ...]:
    """``roles`` as a non-empty tuple of ``allowed`` names (one may be given bare, as ``"user"``), else
    ``ValueError``: "``name`` must be ``shapes[0]``/``shapes[1]`` ..." (not a sequence / empty or an
    unknown name), followed by the allowed names. Shared by a store's ``roles`` and ``write_roles``."""
    if isinstance(roles, str):
        roles = (roles,)
    listed = ", ".join(map(repr, allowed))
    try:
        out = tuple(roles)  # type: ignore[arg-type]
    except TypeError:
        raise ValueError(f"{name} must be {shapes[0]} {listed}, got {roles!r}") from None
    if not out or any(role not in allowed for role in out):
        raise ValueError(f"{name} must be {shapes[1]} {listed}, got {roles!r}")
    return out


def check_write_roles(roles: object) -> tuple[str, ...]:
    """``write_roles`` as a non-empty tuple of roles (:data:`ROLES`; one role may be given bare, as
    ``"user"``, the way a store's ``roles`` is), else ``ValueError`` naming them."""
    shapes = ("a role or a sequence of roles from", "a non-empty sequence of roles from")
    return role_names(roles, "write_roles", ROLES, shapes)


def check_session(session_id: object) -> str:
    """The session id as a string (an int is accepted and written as its digits); default ``"default"``."""
    if session_id is None:
        return DEFAULT_SESSION
    if isinstance(session_id, int) and not isinstance(session_id, bool):
        return str(session_id)
    return _name(session_id, "session_id", "a non-empty string (or None)")


def check_metadata(metadata: Mapping[str, Any] | None) -> dict[str, Any]:
    """Extra metadata must be flat and storable by the index as it is.

    Keys: non-empty strings, not reserved by the store (``RESERVED_KEYS``) nor by Chroma
    (starting with ``$``, ``#`` or ``chroma:``). Values: str, bool, int within 64 bits,
    finite float (``None`` is dropped).
    """
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise ValueError(f"metadata must be a mapping, got {type(metadata).__name__}")
    clean: dict[str, Any] = {}
    for key, value in metadata.items():
        if not isinstance(key, str) or not key:
            raise ValueError(f"metadata keys must be non-empty strings, got {key!r}")
        _utf8(key, f"metadata key {key!r}")
        if key in RESERVED_KEYS:
            raise ValueError(f"metadata key {key!r} is reserved by the memory store ({', '.join(sorted(RESERVED_KEYS))})")
        if key.startswith(INDEX_KEY_PREFIXES):
            raise ValueError(
                f"metadata key {key!r} starts with {', '.join(map(repr, INDEX_KEY_PREFIXES))}, which the index keeps for itself"
            )
        if value is None:
            continue
        clean[key] = check_metadata_value(key, value)
    return clean


def check_metadata_value(key: str, value: object) -> str | int | float | bool:
    """One metadata value, as the index stores it exactly; ``ValueError`` naming ``key`` otherwise."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        if not INT_MIN <= value <= INT_MAX:
            raise ValueError(
                f"metadata value of {key!r} is an int outside 64 bits ({INT_MIN} to {INT_MAX}): "
                "the index would store it as a float; give it as a string"
            )
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"metadata value of {key!r} must be a finite number, got {value!r}")
        return float(value)
    if isinstance(value, str):
        return _utf8(value, f"metadata value of {key!r}")
    raise ValueError(f"metadata value of {key!r} must be str, int, float or bool, got {type(value).__name__}")


def storable_metadata(extra: Mapping[str, Any]) -> dict[str, Any]:
    """The part of a journal row's extra metadata the index can hold, as the index would give it back.

    New rows pass :func:`check_metadata`, so this changes nothing for them. Rows an older
    recall accepted may carry keys Chroma refuses (``$x``, ``#x``, ``chroma:document``: one of
    them used to block every repair) or values it cannot keep (NaN, infinities, ints beyond
    64 bits): those are left out of the index (the journal keeps them), so such a memory is
    still searchable and ``doctor`` compares like with like.
    """
    kept: dict[str, Any] = {}
    for key, value in extra.items():
        if value is None or not isinstance(key, str) or not key or key.startswith(INDEX_KEY_PREFIXES):
            continue
        if isinstance(value, float) and not math.isfinite(value):
            continue
        if isinstance(value, int) and not isinstance(value, bool) and not INT_MIN <= value <= INT_MAX:
            continue  # Chroma would keep a float of it, not even exactly that float
        try:
            key.encode("utf-8")
            if isinstance(value, str):
                value.encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates: not text the index can store
            continue
        kept[key] = value
    return kept


#: Timestamps must fall within what ``datetime`` represents (years 1 to 9999).
_EPOCH_MIN = datetime(1, 1, 2, tzinfo=timezone.utc).timestamp()
_EPOCH_MAX = datetime(9999, 12, 30, tzinfo=timezone.utc).timestamp()


def check_epoch(field: str, value: object) -> float:
    """``value`` as epoch seconds if it is a finite number within years 1 to 9999 (what ``datetime``
    represents, so reading it back as a date never overflows), else ``ValueError`` naming ``field``."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not (isinstance(value, int) or math.isfinite(value))
        or not _EPOCH_MIN <= value <= _EPOCH_MAX
    ):
        raise ValueError(
            f"{field} in epoch seconds must be a finite number from {_EPOCH_MIN:.0f} to {_EPOCH_MAX:.0f} "
            f"(years 1 to 9999), got {value!r}"
        )
    return float(value)


def format_timestamp(timestamp: object) -> str:
    """ISO 8601 for datetimes and epoch seconds, the string itself for strings, now for ``None``.

    Now and epoch seconds are written in the machine's own time zone, with its offset: a note shows
    the day of its timestamp, and until 2026-12-07 they were written in UTC, so a turn said on the
    evening of 6 December in Honolulu showed as "[7 December 2026]" (a reviewer). The moment is the
    same either way (memories are ordered by it). A naive datetime is local time, as Python reads it
    (``datetime.timestamp()``), and is written with the machine's offset: until 2026-12-07 it was
    written as it was and read as UTC, so beside "now" on a machine east of UTC an older turn sorted
    as the newer one (a reviewer)."""
    if timestamp is None:
        return datetime.now(timezone.utc).astimezone().isoformat(timespec="seconds")
    if isinstance(timestamp, datetime):
        if timestamp.tzinfo is None:
            try:
                timestamp = timestamp.astimezone()
            except (ValueError, OverflowError):  # year 1 or 9999 moved past the calendar's end: kept as given
                pass
        return timestamp.isoformat()
    if isinstance(timestamp, (int, float)) and not isinstance(timestamp, bool):
        return datetime.fromtimestamp(check_epoch("timestamp", timestamp), tz=timezone.utc).astimezone().isoformat()
    if isinstance(timestamp, str) and timestamp.strip():
        return _name(timestamp, "timestamp").strip()
    raise ValueError(f"timestamp must be a datetime, epoch seconds, a string or None, got {timestamp!r}")


def check_turn_index(turn_index: object) -> int | None:
    if turn_index is None:
        return None
    if isinstance(turn_index, bool) or not isinstance(turn_index, numbers.Integral) or not 0 <= turn_index <= TURN_INDEX_MAX:
        raise ValueError(f"turn_index must be an int from 0 to {TURN_INDEX_MAX} (2**62, or None), got {turn_index!r}")
    return int(turn_index)  # a NumPy integer too (until 2026-12-07 refused: a reviewer)


def check_key(key: object) -> str:
    """A caller-chosen memory key (``UserMemory.put``): a non-empty UTF-8 string with a visible character."""
    return _name(key, "key")


def check_where(where: object) -> Mapping[str, Any] | None:
    """A metadata filter (Chroma's syntax, ``{"session_id": "s1"}``): ``None`` or a mapping, else ``ValueError``."""
    if where is not None and not isinstance(where, Mapping):
        raise ValueError(f"where must be None or a mapping (Chroma's filter syntax), got {type(where).__name__}")
    return where


def check_id(memory_id: object) -> str:
    """One memory id (a string), else ``ValueError`` naming ``memory_id`` (not the index's own error)."""
    if not isinstance(memory_id, str):
        raise ValueError(f"memory_id must be a memory id (a string), got {type(memory_id).__name__}")
    return memory_id


def check_ids(memory_ids: object) -> list[str]:
    """A memory id or an iterable of them, as a list of strings, else ``ValueError``."""
    if isinstance(memory_ids, str):
        return [memory_ids]
    if memory_ids is None or isinstance(memory_ids, Mapping) or not isinstance(memory_ids, Iterable):
        raise ValueError(f"memory_ids must be an id or a list of ids, got {type(memory_ids).__name__}")
    ids = list(memory_ids)
    bad = [i for i in ids if not isinstance(i, str)]
    if bad:
        raise ValueError(f"memory_ids must be strings, got {bad[0]!r}")
    return ids


@contextmanager
def chroma_filter_errors(where: Mapping[str, Any] | None) -> Iterator[None]:
    """Chroma's refusal of a ``where`` filter (its ``InvalidArgumentError``) as a ``ValueError`` naming ``where``."""
    try:
        yield
    except Exception as error:
        from chromadb.errors import InvalidArgumentError

        if where and isinstance(error, InvalidArgumentError) and "where" in str(error).lower():
            raise ValueError(f"where is not a filter Chroma takes: {error}") from None
        raise

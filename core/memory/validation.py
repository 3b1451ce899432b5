"""Checking what callers give the memory: user ids, turns, metadata, timestamps.

Every check raises ``ValueError`` naming the field and what is allowed, before anything is
written, so a bad turn never leaves half a write behind.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

ROLES = ("user", "assistant", "system")
DEFAULT_SESSION = "default"
#: Keys the store writes in each memory's metadata; user metadata may not use them.
RESERVED_KEYS = frozenset(
    {"user_id", "role", "session_id", "timestamp", "turn_index", "chunk_index", "n_chunks", "written_at", "key"}
)


def check_user_id(user_id: object) -> str:
    """Return ``user_id`` if it is a usable id (a non-empty string), else raise ``ValueError``."""
    if isinstance(user_id, bytes):
        try:
            user_id = user_id.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"user_id is not valid UTF-8: {exc}") from None
    if not isinstance(user_id, str) or not user_id.strip():
        raise ValueError(f"user_id must be a non-empty string, got {user_id!r}")
    try:
        user_id.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(f"user_id is not valid UTF-8 text: {exc}") from None
    return user_id


def check_content(content: object) -> str:
    """Return the turn's text; raise ``ValueError`` if it is empty, whitespace or not UTF-8."""
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
    try:
        content.encode("utf-8")
    except UnicodeEncodeError as exc:
        # Lone surrogates: what Python makes of undecodable bytes with errors="surrogateescape".
        raise ValueError(
            f"content is not valid UTF-8 text (character {content[exc.start]!r} at position {exc.start}): "
            "it was probably decoded from non-UTF-8 bytes"
        ) from None
    if not content.strip():
        raise ValueError("content is empty or only whitespace: nothing to remember")
    if "\x00" in content:
        raise ValueError("content contains NUL characters: not text")
    return content


def check_role(role: object) -> str:
    if role not in ROLES:
        raise ValueError(f"role must be one of {', '.join(map(repr, ROLES))}, got {role!r}")
    return str(role)


def check_session(session_id: object) -> str:
    if session_id is None:
        return DEFAULT_SESSION
    if isinstance(session_id, bool) or not isinstance(session_id, (str, int)) or not str(session_id).strip():
        raise ValueError(f"session_id must be a non-empty string (or None), got {session_id!r}")
    return str(session_id)


def check_metadata(metadata: Mapping[str, Any] | None) -> dict[str, Any]:
    """Extra metadata must be flat: string keys, str/int/float/bool values (``None`` is dropped)."""
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise ValueError(f"metadata must be a mapping, got {type(metadata).__name__}")
    clean: dict[str, Any] = {}
    for key, value in metadata.items():
        if not isinstance(key, str) or not key:
            raise ValueError(f"metadata keys must be non-empty strings, got {key!r}")
        if key in RESERVED_KEYS:
            raise ValueError(f"metadata key {key!r} is reserved by the memory store ({', '.join(sorted(RESERVED_KEYS))})")
        if value is None:
            continue
        if not isinstance(value, (str, int, float, bool)):
            raise ValueError(f"metadata value of {key!r} must be str, int, float or bool, got {type(value).__name__}")
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise ValueError(f"metadata value of {key!r} is not valid UTF-8 text") from None
        clean[key] = value
    return clean


def format_timestamp(timestamp: object) -> str:
    """ISO 8601 for datetimes and epoch seconds, the string itself for strings, now (UTC) for ``None``."""
    if timestamp is None:
        return datetime.now(timezone.utc).isoformat(timespec="seconds")
    if isinstance(timestamp, datetime):
        return timestamp.isoformat()
    if isinstance(timestamp, (int, float)) and not isinstance(timestamp, bool):
        return datetime.fromtimestamp(float(timestamp), tz=timezone.utc).isoformat()
    if isinstance(timestamp, str) and timestamp.strip():
        return timestamp.strip()
    raise ValueError(f"timestamp must be a datetime, epoch seconds, a string or None, got {timestamp!r}")


def check_turn_index(turn_index: object) -> int | None:
    if turn_index is None:
        return None
    if isinstance(turn_index, bool) or not isinstance(turn_index, int) or turn_index < 0:
        raise ValueError(f"turn_index must be an int >= 0 (or None), got {turn_index!r}")
    return turn_index


def check_key(key: object) -> str:
    """A caller-chosen memory key (``UserMemory.put``): a non-empty UTF-8 string."""
    if not isinstance(key, str) or not key.strip():
        raise ValueError(f"key must be a non-empty string, got {key!r}")
    try:
        key.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("key is not valid UTF-8 text") from None
    return key

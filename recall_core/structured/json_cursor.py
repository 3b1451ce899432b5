"""Where a JSON text being written stands, followed a token's text at a time.

:class:`JsonCursor` is what the constrained processor needs to close a reply at the end of its
budget (the open string and brackets) and to keep only the required keys then (the keys and
string values written in each open object). It does not check the JSON: the grammar does.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

#: Where a reply stands: per open object or array, its opener, the keys written in it, and whether
#: the last key's value is still to start.
Path = tuple[tuple[str, tuple[str, ...], bool], ...]
#: Per open object or array, the string values written so far for its keys (``(key, value)`` pairs).
Values = tuple[tuple[tuple[str, str], ...], ...]


@dataclass
class _Frame:
    opener: str  # "{" or "["
    keys: list[str] = field(default_factory=list)
    key_next: bool = False  # after "{" or ",": the next string is a key
    pending: bool = False  # the last key is written, its value not started
    values: dict[str, str] = field(default_factory=dict)


class JsonCursor:
    """Follows JSON text: whether it ends inside a string, the brackets open, and in each open
    object the keys written and their string values (a call's ``"name"``, say)."""

    def __init__(self) -> None:
        self.in_string = self.escaped = False
        self.depth = 0
        self.string_depth = 0  # brackets opened inside the string being written (a value holding code, say)
        #: The last text followed ends inside a character (a byte token the next ones complete).
        self.partial = False
        self._frames: list[_Frame] = []
        self._key: list[str] | None = None  # the characters of the key being written
        self._value: list[str] | None = None  # of the string value being written in an object

    @property
    def in_key(self) -> bool:
        """Is the text inside an object's key?"""
        return self._key is not None

    @property
    def key_so_far(self) -> str | None:
        """The raw characters of the key being written (``None`` outside a key)."""
        return "".join(self._key) if self._key is not None else None

    @property
    def in_object(self) -> bool:
        """Is the innermost open value an object?"""
        return bool(self._frames) and self._frames[-1].opener == "{"

    @property
    def key_next(self) -> bool:
        """Is the next string of the innermost open object a key?"""
        return bool(self._frames) and self._frames[-1].key_next

    def path(self) -> Path:
        """The open objects with the keys written in each, and the open arrays."""
        return tuple((f.opener, tuple(f.keys), f.pending) for f in self._frames)

    def values(self) -> Values:
        """The string values written so far in each open object (none in arrays)."""
        return tuple(tuple(f.values.items()) for f in self._frames)

    def follow(self, text: str) -> None:
        """Move past ``text`` (one token's)."""
        self.partial = text.endswith("\ufffd")
        for char in text:
            if self.escaped:
                self.escaped = False
                self._append(char)
            elif self.in_string:
                self.escaped = char == "\\"
                self.in_string = char != '"'
                if self._key is not None:
                    self._written_key(char)
                    continue
                if self._value is not None:
                    self._written_value(char)
                if char in "{[":
                    self.string_depth += 1
                elif char in "}]":
                    self.string_depth = max(0, self.string_depth - 1)
            elif char == '"':
                self._open_string()
            elif char in "{[":
                self.depth += 1
                if self._frames:
                    self._frames[-1].pending = False
                self._frames.append(_Frame(char, key_next=char == "{"))
            elif char in "}]":
                self.depth = max(0, self.depth - 1)
                if self._frames:
                    self._frames.pop()
            elif char == "," and self.in_object:
                self._frames[-1].key_next = True
            elif self._frames and not char.isspace() and char != ":":
                self._frames[-1].pending = False  # a number, true, false or null

    def _open_string(self) -> None:
        self.in_string, self.string_depth = True, 0
        if not self._frames:
            return
        frame = self._frames[-1]
        if frame.key_next:
            frame.key_next, self._key = False, []
            return
        frame.pending = False
        if frame.opener == "{" and frame.keys:
            self._value = []

    def _append(self, char: str) -> None:
        if self._key is not None:
            self._key.append(char)
        elif self._value is not None:
            self._value.append(char)

    def _written_key(self, char: str) -> None:
        if self.in_string:
            self._key.append(char)  # type: ignore[union-attr]
            return
        key, self._key = _decoded(self._key or ()), None
        self._frames[-1].keys.append(key)
        self._frames[-1].pending = True

    def _written_value(self, char: str) -> None:
        if self.in_string:
            self._value.append(char)  # type: ignore[union-attr]
            return
        value, self._value = _decoded(self._value or ()), None
        frame = self._frames[-1]
        frame.values[frame.keys[-1]] = value


def _decoded(chars: list[str] | tuple[str, ...]) -> str:
    raw = "".join(chars)
    try:
        return json.loads(f'"{raw}"')
    except ValueError:
        return raw

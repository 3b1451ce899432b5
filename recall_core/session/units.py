"""What a session's cache stands for: its units and parts, and the text they render.

A session's cache is cut into **units**, one per message (the reply being awaited is a
pending unit), and each unit into **parts**:

* ``text``: ids the chat template's text was tokenized into (``text`` is that text);
* ``reply``: ids the model generated (``text`` is their decoding, special tokens kept);
* ``extra``: ids the template never shows: a ``<recall>`` marker and the
  ``<|memory_pad|>`` ids of the memory injected there (``text`` is empty).

Concatenating the parts' texts gives the template's text of the cached conversation, so
the next call's rendering can be compared with it character by character; the ``extra``
parts stay in the cache (recalls injected in earlier turns are kept like any other
tokens) without getting in the way of the comparison. :func:`matching_units` makes that
comparison; :func:`message_ends` finds where each message's unit ends in a rendering.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from recall_core.prompt import chat_token_ids, render_chat_text

TEXT, REPLY, EXTRA = "text", "reply", "extra"


@dataclass
class Part:
    """A run of cache ids of one kind (see the module docstring)."""

    kind: str
    ids: list[int]
    text: str = ""


@dataclass
class Message:
    """A message of the conversation held by a unit, its index in the conversation, and whether
    it is in long-term memory."""

    message: dict[str, Any]
    written: bool = False
    index: int = -1

    @property
    def key(self) -> bytes:
        """What tells this message apart in a session's written log: its index and every field."""
        return digest({"index": self.index, "message": self.message})

    @property
    def role(self) -> str:
        return str(self.message.get("role", ""))

    @property
    def content(self) -> str:
        return str(self.message.get("content", ""))


@dataclass
class Unit:
    """One message's stretch of the cache (or, pending, the reply the session generated).

    Attributes:
        index: the message's index in the conversation.
        messages: the message (empty while pending: the reply is confirmed, with the text
            the caller sends back, by the next call).
        parts: its ids, in cache order.
        pending: the reply of the last call, not yet sent back by the caller.
        written: (pending) already written to long-term memory by the caller.
    """

    index: int
    messages: list[Message] = field(default_factory=list)
    parts: list[Part] = field(default_factory=list)
    pending: bool = False
    written: bool = False

    @property
    def length(self) -> int:
        return sum(len(p.ids) for p in self.parts)

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.parts)

    @property
    def ids(self) -> list[int]:
        return [i for p in self.parts for i in p.ids]

    @property
    def starts_exchange(self) -> bool:
        """Does a user message begin here (an exchange is a user turn and what answers it)?"""
        return bool(self.messages) and self.messages[0].role == "user"


def digest(message: Mapping[str, Any]) -> bytes:
    """A short fingerprint of a message (every field, in a stable order)."""
    blob = json.dumps(dict(message), sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.blake2b(blob.encode("utf-8"), digest_size=16).digest()


def common_prefix(a: Sequence[Any], b: Sequence[Any]) -> int:
    """Length of the longest common prefix of two sequences (strings: by halving, at C speed)."""
    if isinstance(a, str) and isinstance(b, str):
        if a.startswith(b):
            return len(b)
        if b.startswith(a):
            return len(a)
        low, high = 0, min(len(a), len(b))
        while low < high:  # a[:low] == b[:low] holds; find the largest such low
            middle = (low + high + 1) // 2
            if a[:middle] == b[:middle]:
                low = middle
            else:
                high = middle - 1
        return low
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


@dataclass
class Tokens:
    """Ids of a text, and the text offset where each starts."""

    ids: list[int]
    starts: list[int]

    def __add__(self, other: Tokens) -> Tokens:
        return Tokens(self.ids + other.ids, self.starts + other.starts)


def tokenize(
    tokenizer: Any, text: str, offset: int = 0, spans: Sequence[tuple[int, int]] = (), keep: Sequence[str] = ()
) -> Tokens:
    """``text`` as the chat template's ids are made (no special tokens added), offsets + ``offset``.

    ``spans`` (offsets in the same frame, ``offset`` at ``text``'s start) are the messages'
    contents, tokenized as text: control tokens typed there are plain pieces, except ``keep``
    (:func:`recall_core.prompt.chat_token_ids`, as the generator tokenizes a chat).
    Each id's offset is clamped so that offsets never go back: an id's text is taken as
    running from its offset to the next id's (tokenizers that trim spaces from offsets
    leave the space to the id before).
    """
    if not text:
        return Tokens([], [])
    if not getattr(tokenizer, "is_fast", False):
        raise ValueError("sessions need a fast (Rust) tokenizer: they align ids with text through offsets")
    local = [(a - offset, b - offset) for a, b in spans]
    ids, found = chat_token_ids(tokenizer, text, local, keep=keep, offsets=True)
    starts, last = [], 0
    for start in found:
        last = max(last, start)
        starts.append(offset + last)
    if starts:
        starts[0] = offset  # the first id's text begins where the text does
    return Tokens(ids, starts)


def tile(tokens: Tokens, begin: int, end: int, text: str) -> list[str]:
    """The text of each id of ``tokens`` (all inside ``[begin, end)`` of ``text``): offset to next offset."""
    bounds = [max(begin, s) for s in tokens.starts] + [end]
    return [text[bounds[i] : bounds[i + 1]] for i in range(len(tokens.ids))]


# --------------------------------------------------------------------------- matching
def matching_units(units: list[Unit], text: str) -> tuple[list[Unit], int]:
    """The cached units (and the part of the pending reply) whose text ``text`` starts with.

    A memory span (an ``extra`` part) stays when the new text goes on after it; a confirmed
    message that only partly matches is dropped whole. Returns the units and their text's length.
    """
    agree = common_prefix(text, "".join(u.text for u in units))
    kept: list[Unit] = []
    offset = 0
    for unit in units:
        if unit.messages and not unit.parts:  # a message the cache lost (:func:`lost_units`): prefilled from here
            break
        parts: list[Part] = []
        for part in unit.parts:
            end = offset + len(part.text)
            if end > agree or (part.kind == EXTRA and not part.text and offset >= len(text)):
                break
            parts.append(part)
            offset = end
        else:
            kept.append(unit)
            continue
        if unit.pending and parts:
            kept.append(replace(unit, parts=parts))
        else:
            offset -= sum(len(p.text) for p in parts)
        break
    return kept, offset


def lost_units(before: Sequence[Unit], held: Sequence[Unit], evicted: Collection[int]) -> list[Unit]:
    """After a call is rolled back: the units the session held when it began (``before``) whose ids
    the cache no longer holds (it keeps ``held``: the plan prefilled the rest again) and whose
    messages were not evicted (``evicted``: their indices), as units with no ids, the pending reply
    last. They keep the conversation whole: the next call prefills them again, or evicts them
    (:func:`matching_units` stops at the first one)."""
    end = max((u.index + len(u.messages) for u in held if not u.pending), default=0)
    replied = bool(held) and held[-1].pending
    lost: list[Unit] = []
    for unit in before:
        if unit.pending and not replied and unit.index not in evicted:
            lost.append(Unit(unit.index, pending=True, written=unit.written))
        elif not unit.pending and unit.index >= end and not any(m.index in evicted for m in unit.messages):
            lost.append(Unit(unit.index, list(unit.messages)))
    return lost


def last_text_part(units: list[Unit]) -> Part | None:
    """The last part that stands for text (not a marker or memory span), if any."""
    for unit in reversed(units):
        for part in reversed(unit.parts):
            if part.kind != EXTRA:
                return part
    return None


def drop_last_text_part(units: list[Unit]) -> tuple[list[Unit], int]:
    """Drop the last text part and what follows it (a confirmed message goes whole); return units and text length."""
    if units:
        unit = units[-1]
        if unit.pending:
            while unit.parts and unit.parts[-1].kind == EXTRA:
                unit.parts.pop()
            if unit.parts:
                unit.parts.pop()
        if not unit.pending or not unit.parts:
            units.pop()
    return units, sum(len(u.text) for u in units)


def message_ends(tokenizer: Any, messages: Sequence[Mapping[str, Any]], held: int, text: str, generate: bool,
                 tools: Sequence[Mapping[str, Any]] | None = None) -> list[tuple[int, int]]:  # fmt: skip
    """``(position, where its unit ends in text)`` for each message from ``held`` on.

    A message's unit runs from the end of the previous message's words to the end of its
    own: the template's header and the words (the closing after them goes with the next
    unit). Found with one rendering in which each message's content ends with a sentinel;
    a template that changes the sentinels or anything else gets one unit for all the
    messages from ``held`` on.
    """
    if held >= len(messages):
        return []
    marks = [f"\u2063{i}\u2063" for i in range(len(messages))]
    marked = [{**m, "content": str(m.get("content", "")) + mark} for m, mark in zip(messages, marks, strict=True)]
    rendered = render_chat_text(tokenizer, marked, add_generation_prompt=generate, tools=tools)
    ends, pieces, cursor, length = [], [], 0, 0
    for mark in marks:
        at = rendered.find(mark, cursor)
        if at < 0:
            break
        pieces.append(rendered[cursor:at])
        length += at - cursor
        ends.append(length)
        cursor = at + len(mark)
    if len(ends) == len(marks) and "".join(pieces) + rendered[cursor:] == text:
        return [(position, ends[position]) for position in range(held, len(messages))]
    return [(len(messages) - 1, len(text))]

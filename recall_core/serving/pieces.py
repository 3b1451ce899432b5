"""The bytes each id adds to a reply, as llama.cpp's server writes them: to find the ids its stream leaves out.

Why: llama.cpp's server sends no event for a token that leaves the reply's text in the middle of
a UTF-8 character (an emoji, a CJK character, an accented letter split over byte-level ids). The
next event's ``content`` holds the completed text, its ``tokens`` only its own id, and its
``tokens_predicted`` how many ids the engine has made so far (the last event, none). The ids in
between are found here: by tokenizing the completed text with the served model's tokenizer and
taking the ids that end with the event's own (the model's split, where it is the tokenizer's);
else by splitting the left-out bytes into as many of the vocabulary's pieces as ids are missing
(the text exact and the count right, where the model split the characters otherwise).

Only byte-level BPE vocabularies are written as GGUF by :mod:`recall_core.serving.gguf_export`;
a special (control) token adds nothing to the text, as llama.cpp renders it.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Sequence
from typing import Any

__all__ = ["Pieces"]


@functools.lru_cache(maxsize=1)
def _byte_of_char() -> dict[str, int]:
    """GPT-2's byte-level alphabet, reversed: the character each byte is written as, to the byte."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), 256))
    chars, extra = {}, 0
    for byte in range(256):
        if byte in printable:
            chars[chr(byte)] = byte
        else:
            chars[chr(256 + extra)] = byte
            extra += 1
    return chars


_MADE: dict[int, Pieces] = {}  # by the tokenizer's id(); each holds its tokenizer, so the id stays its own
_LOCK = threading.Lock()


class Pieces:
    """Each id's bytes in a reply's text (llama.cpp's ``token_to_piece`` without special tokens).

    Args:
        tokenizer: the served model's Hugging Face tokenizer (byte-level BPE, as the GGUF's).
    """

    @classmethod
    def of_tokenizer(cls, tokenizer: Any) -> Pieces:
        """The tokenizer's :class:`Pieces`, made once per tokenizer (a 49k vocabulary takes ~0.3 s),
        so that generators made per request do not pay for it each time."""
        with _LOCK:
            made = _MADE.get(id(tokenizer))
            if made is None or made.tokenizer is not tokenizer:
                if len(_MADE) >= 8:  # a few served models per process; the oldest goes
                    _MADE.pop(next(iter(_MADE)))
                made = _MADE[id(tokenizer)] = cls(tokenizer)
            return made

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        chars = _byte_of_char()
        special = set(getattr(tokenizer, "all_special_ids", []) or [])
        for i, added in (getattr(tokenizer, "added_tokens_decoder", None) or {}).items():
            if getattr(added, "special", False):
                special.add(int(i))
        self.bytes: dict[int, bytes] = {}
        for token, i in tokenizer.get_vocab().items():
            if i in special:
                self.bytes[i] = b""  # a control token: llama.cpp writes no text for it
            elif all(c in chars for c in token):
                self.bytes[i] = bytes(chars[c] for c in token)
            else:
                self.bytes[i] = token.encode("utf-8")
        self.ids = {piece: i for i, piece in sorted(self.bytes.items(), reverse=True) if piece}
        self.longest = max(map(len, self.ids), default=1)

    def of(self, ids: Sequence[int]) -> bytes:
        """The text ``ids`` add, in bytes (an id outside the vocabulary adds nothing)."""
        return b"".join(self.bytes.get(int(i), b"") for i in ids)

    def missing(self, count: int, own: int, completed: bytes, lost: bytes | None) -> list[int]:
        """The ``count`` ids the engine made before ``own`` and did not send.

        ``completed`` is the text the event with ``own`` sent (the characters it completed);
        ``lost`` the bytes those ids must add (``None``: not known, a stop string cut the text).
        The tokenizer's ids of the completed text that end with ``own``, where their bytes are
        ``lost``; else ``lost`` split into ``count`` of the vocabulary's pieces; else (the bytes
        not known) the tokenizer's ids before ``own``, as many as it has up to ``count``.
        """
        text = completed.decode("utf-8", errors="replace")
        ids = list(self.tokenizer(text, add_special_tokens=False).input_ids)
        if ids and ids[-1] == own and len(ids) > count:
            found = ids[-count - 1 : -1]
            if lost is None or self.of(found) == lost:
                return found
        if lost is None:
            return (ids[:-1] if ids and ids[-1] == own else ids)[-count:]
        split = self.split(lost, count)
        return split if split is not None else []

    def split(self, data: bytes, count: int) -> list[int] | None:
        """``data`` as exactly ``count`` pieces of the vocabulary, longest pieces first (``None``: none)."""

        @functools.cache
        def rest(start: int, left: int) -> tuple[int, ...] | None:
            if start == len(data) or left == 0:
                return () if start == len(data) and left == 0 else None
            if len(data) - start < left:  # every piece is at least a byte
                return None
            for end in range(min(len(data), start + self.longest), start, -1):
                piece = self.ids.get(data[start:end])
                if piece is not None:
                    tail = rest(end, left - 1)
                    if tail is not None:
                        return (piece, *tail)
            return None

        found = rest(0, count)
        return list(found) if found is not None else None

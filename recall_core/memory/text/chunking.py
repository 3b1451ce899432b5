"""Splitting a long turn into chunks that fit the encoder's window; nothing is ever dropped.

A chunk is bounded twice: by the encoder's own tokens, and by characters. The second bound
is there because a tokenizer's count can be far too low: a WordPiece tokenizer (the MiniLM
encoder's) makes one unknown token of any word over 100 characters, so a 2 MB turn without
spaces counted as a single token and became one memory, too big to inject and with a vector
that meant nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

#: The marks that end a sentence before a space: ``.!?``, the Arabic question mark "؟", the Urdu full
#: stop "۔", the Devanagari danda "।" and "॥", the Ethiopic "።" and the Armenian "։" (until 2026-12-07
#: an Urdu "I moved to Lahore۔ Where can I eat؟" was one question, and nothing was written: a reviewer).
FULL_STOPS = ".!?\u061f\u06d4\u0964\u0965\u1362\u0589"
#: After :data:`FULL_STOPS` and a space; after CJK "。！？", which no space follows (until 2026-12-07 a space was
#: asked there too, and a Chinese paragraph was one "sentence", cut between characters mid-fact:
#: "我丈夫" | "是医生", a reviewer); at a line break.
_SENTENCE_END = re.compile(rf"(?<=[{FULL_STOPS}])\s+|(?<=[\u3002\uff01\uff1f])\s*|\n\s*")
_WORD_SPAN = re.compile(r"\S+\s*")
#: Default character bound of a chunk, per token of ``max_tokens``: far above what real text
#: takes (English averages 4 to 5 characters per encoder token), so it only cuts what the
#: tokenizer under-counts.
CHARS_PER_TOKEN = 8


def chunk_text(
    text: str, max_tokens: int | None, count_tokens: Callable[[str], int], max_chars: int | None = None
) -> list[str]:
    """Split ``text`` into chunks of at most ``max_tokens`` tokens and ``max_chars`` characters;
    nothing is dropped.

    Sentences (and lines) are packed together while they fit; a sentence too long on its
    own is split between words, and a word too long on its own between characters. Chunks
    are stripped substrings of ``text``. ``max_chars`` defaults to ``max_tokens * CHARS_PER_TOKEN``.
    """
    if max_tokens is None or max_tokens < 1:
        if max_chars is None or len(text) <= max_chars:
            return [text.strip()]
        max_tokens = max(1, max_chars // CHARS_PER_TOKEN)
    if max_chars is None:
        max_chars = max_tokens * CHARS_PER_TOKEN
    max_chars = max(1, int(max_chars))

    def cost(piece: str) -> int:
        # Tokens, but never fewer than the characters allow: a chunk within max_tokens is
        # then within max_chars as well.
        by_chars = -(-len(piece) * max_tokens // max_chars)
        return by_chars if by_chars > max_tokens else max(by_chars, count_tokens(piece))

    # Fast path: a tokenizer makes at most ~4 tokens of a character (byte fallback).
    if len(text) <= max_chars and (len(text) * 4 <= max_tokens or cost(text) <= max_tokens):
        return [text.strip()]
    chunks = _pack(
        text, _sentence_spans(text), max_tokens, max_chars, cost,
        lambda s, e: _split_long(text, s, e, max_tokens, max_chars, cost),
    )  # fmt: skip
    out = [text[s:e].strip() for s, e in chunks]
    return [c for c in out if c]


def sentences(text: str) -> list[str]:
    """``text``'s sentences (split after ., !, ? and their CJK forms, and at line breaks), none empty."""
    return [text[s:e] for s, e in _sentence_spans(text)]


def _sentence_spans(text: str) -> list[tuple[int, int]]:
    spans, pos = [], 0
    for match in _SENTENCE_END.finditer(text):
        if match.start() > pos:
            spans.append((pos, match.start()))
        pos = match.end()
    if pos < len(text):
        spans.append((pos, len(text)))
    return [(s, e) for s, e in spans if text[s:e].strip()]


def _pack(
    text: str,
    spans: Iterable[tuple[int, int]],
    max_tokens: int,
    max_chars: int,
    count: Callable[[str], int],
    split_too_long: Callable[[int, int], list[tuple[int, int]]],
) -> list[tuple[int, int]]:
    """Greedily join consecutive spans into pieces of at most ``max_tokens`` and ``max_chars``.

    A span that alone is longer than ``max_tokens`` is handed to ``split_too_long``.
    """
    pieces: list[tuple[int, int]] = []
    start = end = None
    used = 0
    for s, e in spans:
        n = count(text[s:e])
        if n > max_tokens:
            if start is not None:
                pieces.append((start, end))  # type: ignore[arg-type]
                start, used = None, 0
            pieces.extend(split_too_long(s, e))
            continue
        if start is not None and (used + n > max_tokens or e - start > max_chars):
            pieces.append((start, end))  # type: ignore[arg-type]
            start, used = None, 0
        if start is None:
            start = s
        end, used = e, used + n
    if start is not None:
        pieces.append((start, end))  # type: ignore[arg-type]
    return pieces


def _split_long(
    text: str, start: int, end: int, max_tokens: int, max_chars: int, count: Callable[[str], int]
) -> list[tuple[int, int]]:
    """Split one over-long sentence between words (and an over-long word between characters)."""
    words = [(match.start(), match.end()) for match in _WORD_SPAN.finditer(text, start, end)]
    return _pack(
        text, words, max_tokens, max_chars, count, lambda s, e: _split_chars(text, s, e, max_tokens, max_chars, count)
    )


def _split_chars(
    text: str, start: int, end: int, max_tokens: int, max_chars: int, count: Callable[[str], int]
) -> list[tuple[int, int]]:
    pieces = []
    for s in range(start, end, max_chars):
        e = min(end, s + max_chars)
        if count(text[s:e]) > max_tokens and e - s > 1:
            # More tokens than characters allow (byte-level tokenizers, dense strings): halve until it fits.
            mid = (s + e) // 2
            pieces.extend(_split_chars(text, s, mid, max_tokens, max_chars, count))
            pieces.extend(_split_chars(text, mid, e, max_tokens, max_chars, count))
        else:
            pieces.append((s, e))
    return pieces

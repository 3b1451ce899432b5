"""Splitting a long turn into chunks that fit the encoder's window; nothing is ever dropped."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

_SENTENCE_END = re.compile(r"(?<=[.!?\u3002\uff01\uff1f])\s+|\n\s*")
_WORD_SPAN = re.compile(r"\S+\s*")


def chunk_text(text: str, max_tokens: int | None, count_tokens: Callable[[str], int]) -> list[str]:
    """Split ``text`` into chunks of at most ``max_tokens`` tokens; nothing is dropped.

    Sentences (and lines) are packed together while they fit; a sentence too long on its
    own is split between words, and a word too long on its own between characters. Chunks
    are stripped substrings of ``text``.
    """
    if max_tokens is None or max_tokens < 1:
        return [text.strip()]
    # Fast path: a tokenizer makes at most ~4 tokens of a character (byte fallback).
    if len(text) * 4 <= max_tokens or count_tokens(text) <= max_tokens:
        return [text.strip()]
    chunks = _pack(
        text, _sentence_spans(text), max_tokens, count_tokens,
        lambda s, e: _split_long(text, s, e, max_tokens, count_tokens),
    )  # fmt: skip
    out = [text[s:e].strip() for s, e in chunks]
    return [c for c in out if c]


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
    count: Callable[[str], int],
    split_too_long: Callable[[int, int], list[tuple[int, int]]],
) -> list[tuple[int, int]]:
    """Greedily join consecutive spans into pieces of at most ``max_tokens``.

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
        if start is not None and used + n > max_tokens:
            pieces.append((start, end))  # type: ignore[arg-type]
            start, used = None, 0
        if start is None:
            start = s
        end, used = e, used + n
    if start is not None:
        pieces.append((start, end))  # type: ignore[arg-type]
    return pieces


def _split_long(text: str, start: int, end: int, max_tokens: int, count: Callable[[str], int]) -> list[tuple[int, int]]:
    """Split one over-long sentence between words (and an over-long word between characters)."""
    words = [(match.start(), match.end()) for match in _WORD_SPAN.finditer(text, start, end)]
    pieces = _pack(text, words, max_tokens, count, lambda s, e: _split_chars(text, s, e, max_tokens, count))
    return pieces


def _split_chars(text: str, start: int, end: int, max_tokens: int, count: Callable[[str], int]) -> list[tuple[int, int]]:
    pieces = []
    for s in range(start, end, max_tokens):
        e = min(end, s + max_tokens)
        if count(text[s:e]) > max_tokens and e - s > 1:
            # Several tokens per character (byte-level tokenizers): halve until it fits.
            mid = (s + e) // 2
            pieces.extend(_split_chars(text, s, mid, max_tokens, count))
            pieces.extend(_split_chars(text, mid, e, max_tokens, count))
        else:
            pieces.append((s, e))
    return pieces

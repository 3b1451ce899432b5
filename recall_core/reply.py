"""Finishing generated text the same way whether it arrives whole or in streamed pieces."""

from __future__ import annotations

from collections.abc import Sequence

from recall_core.tokens import RECALL_TOKEN


class TextFinisher:
    """Cuts the text at the first stop string and drops literal ``<recall>`` markers.

    Feed it pieces; it returns what is safe to show now, holding back any tail that could
    still grow into a stop string or a marker. ``finish()`` returns the rest. Joining every
    returned piece gives the same text as ``finish_text(whole)``, so streaming and
    non-streaming outputs are identical.
    """

    def __init__(self, stop: Sequence[str] = ()) -> None:
        self.stop = [s for s in stop if s]
        self.patterns = [*self.stop, RECALL_TOKEN]
        self.buffer = ""
        self.stopped = False

    def feed(self, piece: str) -> str:
        if self.stopped:
            return ""
        self.buffer += piece
        return self._drain(final=False)

    def finish(self) -> str:
        if self.stopped:
            return ""
        return self._drain(final=True)

    def _drain(self, final: bool) -> str:
        out = []
        while True:
            hit = _first_match(self.buffer, self.patterns)
            if hit is None:
                break
            start, pattern = hit
            out.append(self.buffer[:start])
            self.buffer = self.buffer[start + len(pattern) :]
            if pattern in self.stop:
                self.stopped = True
                self.buffer = ""
                return "".join(out)
        keep = 0 if final else _partial_tail(self.buffer, self.patterns)
        cut = len(self.buffer) - keep
        out.append(self.buffer[:cut])
        self.buffer = self.buffer[cut:]
        return "".join(out)


def finish_text(text: str, stop: Sequence[str] = ()) -> tuple[str, bool]:
    """Return ``(text cut at the first stop string without markers, whether a stop string was hit)``."""
    finisher = TextFinisher(stop)
    out = finisher.feed(text) + finisher.finish()
    return out, finisher.stopped


def _first_match(text: str, patterns: Sequence[str]) -> tuple[int, str] | None:
    best: tuple[int, str] | None = None
    for pattern in patterns:
        index = text.find(pattern)
        if index != -1 and (best is None or index < best[0]):
            best = (index, pattern)
    return best


def _partial_tail(text: str, patterns: Sequence[str]) -> int:
    """Length of the longest suffix of ``text`` that is a proper prefix of some pattern."""
    longest = 0
    for pattern in patterns:
        for size in range(min(len(pattern) - 1, len(text)), longest, -1):
            if text.endswith(pattern[:size]):
                longest = size
                break
    return longest

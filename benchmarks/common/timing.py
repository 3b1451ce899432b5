"""Timing the benchmarks share: wall and CPU time of a call, the first token of a generation,
and a drained stream of text."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterator
from typing import Any


class Clock:
    """Wall and CPU time of a block. On a shared machine the CPU time of this process is
    the less disturbed of the two: waiting for a core another process holds is not counted."""

    def __enter__(self) -> Clock:
        self.wall, self.cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall = time.perf_counter() - self.wall
        self.cpu = time.process_time() - self.cpu


def timed(fn: Callable[[], Any]) -> Clock:
    """Run ``fn()`` once; its :class:`Clock` (``.wall`` and ``.cpu`` seconds)."""
    with Clock() as clock:
        fn()
    return clock


def median_ms(fn: Callable[[], Any], repeats: int) -> float:
    """Median wall milliseconds of ``fn()`` over ``repeats`` runs."""
    return statistics.median(timed(fn).wall * 1000 for _ in range(repeats))


class FirstToken:
    """A streamer that notes when the first generated token arrives (the first ``put`` is the
    prompt): the wall clock, and the process's CPU time (less sensitive to other jobs)."""

    def __init__(self) -> None:
        self.prompt_seen = False
        self.first: float | None = None
        self.first_cpu: float | None = None

    def put(self, value: Any) -> None:
        if not self.prompt_seen:
            self.prompt_seen = True
        elif self.first is None:
            self.first, self.first_cpu = time.perf_counter(), time.process_time()

    def end(self) -> None:
        return None


def timed_stream(pieces: Iterator[str]) -> tuple[str, float | None, float]:
    """Drain a stream of text pieces: ``(text, seconds to the first non-empty piece, seconds in all)``."""
    started = time.perf_counter()
    first: float | None = None
    parts = []
    for piece in pieces:
        if piece and first is None:
            first = time.perf_counter() - started
        parts.append(piece)
    return "".join(parts), first, time.perf_counter() - started

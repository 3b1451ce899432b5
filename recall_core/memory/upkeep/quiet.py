"""The index's files held still while they are checked: this process's Chroma calls against a check.

``doctor`` closes the process's Chroma client and reads the HNSW files and the Chroma database
(health.py, segments.py, probe.py). A writer thread of the same process reopened the client at
once, and Chroma rewrote the files while they were read: a file caught mid-write was judged
damaged, and its user blocked for the life of the store (a reviewer, 2026-12-08: 4 of 40 live
users). Every Chroma call of :class:`~recall_core.memory.index.ChromaIndex` now holds a
:class:`Quiet` shared, and the check holds it alone: calls wait (their turns are journaled
already) while the files are read, and a check waits for the calls under way.

Calls are never kept from one another, and a thread inside a call may call again (nested
calls, the check's own thread). A check waits while calls run, so calls that never stop
could keep it waiting; they come and go in practice, and a check is rare.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class Quiet:
    """Shared holds (Chroma calls) and one exclusive hold (a check of the index's files)."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._calls = 0  # shared holds under way, of other threads than the exclusive holder
        self._holder: threading.Thread | None = None  # the thread holding it alone
        self._depth = threading.local()  # this thread's nested shared holds

    @contextmanager
    def call(self) -> Iterator[None]:
        """Hold it shared for one call (waits while a check holds it alone, unless this thread does)."""
        depth = getattr(self._depth, "n", 0)
        counted = depth == 0 and self._holder is not threading.current_thread()
        if counted:
            with self._changed:
                while self._holder is not None:
                    self._changed.wait()
                self._calls += 1
        self._depth.n = depth + 1
        try:
            yield
        finally:
            self._depth.n = depth
            if counted:
                with self._changed:
                    self._calls -= 1
                    self._changed.notify_all()

    @contextmanager
    def alone(self) -> Iterator[None]:
        """Hold it alone: once every call under way has ended, none starts until this ends.
        A thread inside a call cannot (it would wait for itself): ``RuntimeError``."""
        if getattr(self._depth, "n", 0):
            raise RuntimeError("the index's files cannot be checked from inside an index call")
        with self._changed:
            while self._holder is not None or self._calls:
                self._changed.wait()
            self._holder = threading.current_thread()
        try:
            yield
        finally:
            with self._changed:
                self._holder = None
                self._changed.notify_all()

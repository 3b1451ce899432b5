"""`SessionPool`: the sessions an adapter keeps, one per (user, thread), bounded in count and bytes."""

from __future__ import annotations

import threading
import warnings
from collections import OrderedDict
from collections.abc import Callable, Hashable

from recall_core.session.session import RecallSession
from recall_core.session.writes import WrittenLog, caller_level
from recall_core.settings import int_at_least

#: How many keys' written logs a pool keeps after their sessions are dropped or closed (the least
#: recently used key's goes first). A log holds a key per message written, at most 4,096 (about
#: half a megabyte), so at most about 140 MB for logs full to the brim; usually far less.
KEPT_LOGS = 256


class SessionPool:
    """Least-recently-used :class:`RecallSession` s, at most ``max_sessions`` of them and ``max_bytes`` of cache.

    ``get(key)`` returns the session for a key (made by ``factory(key)`` the first time) and
    marks it used. After a call, :meth:`trim` drops the least recently used sessions until
    both bounds hold again; a session in use by another call is never dropped (it is
    dropped later, once free). A dropped session only loses its cache: the next call on that
    key starts a new session, which prefills the conversation it is given. What the dropped
    session wrote to long-term memory is not written again: the pool keeps each key's
    :attr:`RecallSession.written_log` and hands it to the key's next session, for the last
    :data:`KEPT_LOGS` keys used (those of live sessions always). Before 2026-12-06 the new
    session evicted and wrote every old message again.

    A ``max_bytes`` below one session's cache drops even the only session after each call
    (nothing is reused): the pool warns once, naming both sizes.

    Example::

        pool = SessionPool(lambda key: RecallSession(generator), max_sessions=8, max_bytes=2 << 30)
        result = pool.run(("ada", "thread-1"), lambda session: session.reply(messages))
    """

    def __init__(
        self,
        factory: Callable[[Hashable], RecallSession],
        max_sessions: int = 16,
        max_bytes: int | None = None,
    ) -> None:
        if not callable(factory):
            raise ValueError(f"factory must be a callable that makes a RecallSession for a key, got {factory!r}")
        int_at_least("max_sessions", max_sessions, 1)
        if max_bytes is not None:
            int_at_least("max_bytes", max_bytes, 1)
        self.factory = factory
        self.max_sessions = max_sessions
        self.max_bytes = max_bytes
        self._sessions: OrderedDict[Hashable, RecallSession] = OrderedDict()
        self._logs: OrderedDict[Hashable, WrittenLog] = OrderedDict()  # each key's, live or dropped
        self._busy: dict[Hashable, int] = {}
        self._lock = threading.Lock()
        self._warned_bytes = False

    def __len__(self) -> int:
        return len(self._sessions)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._sessions

    def keys(self) -> list[Hashable]:
        """The keys held, least recently used first."""
        with self._lock:
            return list(self._sessions)

    @property
    def nbytes(self) -> int:
        """Bytes held by every session's cache."""
        with self._lock:
            sessions = list(self._sessions.values())
        return sum(s.cache_bytes for s in sessions)

    def get(self, key: Hashable) -> RecallSession:
        """The session for ``key`` (made on first use), marked most recently used."""
        with self._lock:
            session = self._sessions.get(key)
            if session is None:
                session = self._sessions[key] = self.factory(key)
                log = self._logs.get(key)
                if log is not None:  # what the key's dropped session wrote is not written again
                    session.written_log = log
                self._logs[key] = session.written_log
            self._sessions.move_to_end(key)
            self._logs.move_to_end(key)
            if len(self._logs) > KEPT_LOGS:  # the least recently used dropped keys' logs go
                for old in [k for k in self._logs if k not in self._sessions][: len(self._logs) - KEPT_LOGS]:
                    del self._logs[old]
            return session

    def run(self, key: Hashable, call: Callable[[RecallSession], object]) -> object:
        """``call(session)`` on the key's session, kept from being dropped meanwhile; then :meth:`trim`."""
        with self._lock:
            self._busy[key] = self._busy.get(key, 0) + 1
        try:
            return call(self.get(key))
        finally:
            with self._lock:
                self._busy[key] -= 1
                if not self._busy[key]:
                    del self._busy[key]
            self.trim()

    def hold(self, key: Hashable) -> RecallSession:
        """The key's session, kept from being dropped until :meth:`release` (for streams)."""
        with self._lock:
            self._busy[key] = self._busy.get(key, 0) + 1
        return self.get(key)

    def release(self, key: Hashable) -> None:
        """End a :meth:`hold`; then :meth:`trim`."""
        with self._lock:
            if key in self._busy:
                self._busy[key] -= 1
                if not self._busy[key]:
                    del self._busy[key]
        self.trim()

    def trim(self) -> list[Hashable]:
        """Drop least recently used free sessions until both bounds hold; return the keys dropped."""
        dropped: list[tuple[Hashable, RecallSession]] = []
        too_small = None
        with self._lock:
            for key in list(self._sessions):
                over_count = len(self._sessions) > self.max_sessions
                over_bytes = self.max_bytes is not None and self._bytes() > self.max_bytes
                if not (over_count or over_bytes):
                    break
                if key in self._busy:
                    continue
                session = self._sessions.pop(key)
                self._logs[key] = session.written_log  # kept for the key's next session (closing starts a new one)
                if over_bytes and not over_count and not self._sessions and not self._warned_bytes:
                    too_small = session.cache_bytes  # the only session, alone past max_bytes
                    self._warned_bytes = True
                dropped.append((key, session))
        if too_small is not None:
            warnings.warn(f"SessionPool max_bytes ({self.max_bytes}) is smaller than one session's cache ({too_small} "
                          "bytes): every session is dropped after its call and nothing is reused; raise max_bytes",
                          RuntimeWarning, stacklevel=caller_level())  # fmt: skip
        for _, session in dropped:  # outside the pool's lock: closing waits for a call still on it
            session.close()
        return [key for key, _ in dropped]

    def close(self, key: Hashable) -> bool:
        """Free the key's session; ``False`` when there was none."""
        with self._lock:
            session = self._sessions.pop(key, None)
            if session is not None:
                self._logs[key] = session.written_log
        if session is None:
            return False
        session.close()
        return True

    def clear(self) -> None:
        """Free every session."""
        with self._lock:
            for key, session in self._sessions.items():
                self._logs[key] = session.written_log
            sessions, self._sessions = list(self._sessions.values()), OrderedDict()
        for session in sessions:
            session.close()

    def _bytes(self) -> int:
        return sum(s.cache_bytes for s in self._sessions.values())

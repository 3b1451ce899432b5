"""`SessionPool`: the sessions an adapter keeps, one per (user, thread), bounded in count and bytes."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable

from recall_core.session.session import RecallSession


class SessionPool:
    """Least-recently-used :class:`RecallSession` s, at most ``max_sessions`` of them and ``max_bytes`` of cache.

    ``get(key)`` returns the session for a key (made by ``factory(key)`` the first time) and
    marks it used. After a call, :meth:`trim` drops the least recently used sessions until
    both bounds hold again; a session in use by another call is never dropped (it is
    dropped later, once free). A dropped session only loses its cache: the next call on that
    key starts a new session, which prefills the conversation it is given.

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
        if max_sessions < 1:
            raise ValueError(f"max_sessions must be an int >= 1, got {max_sessions!r}")
        if max_bytes is not None and max_bytes < 1:
            raise ValueError(f"max_bytes must be None or an int >= 1, got {max_bytes!r}")
        self.factory = factory
        self.max_sessions = max_sessions
        self.max_bytes = max_bytes
        self._sessions: OrderedDict[Hashable, RecallSession] = OrderedDict()
        self._busy: dict[Hashable, int] = {}
        self._lock = threading.Lock()

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
            self._sessions.move_to_end(key)
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
        with self._lock:
            for key in list(self._sessions):
                over_count = len(self._sessions) > self.max_sessions
                over_bytes = self.max_bytes is not None and self._bytes() > self.max_bytes
                if not (over_count or over_bytes):
                    break
                if key in self._busy:
                    continue
                dropped.append((key, self._sessions.pop(key)))
        for _, session in dropped:  # outside the pool's lock: closing waits for a call still on it
            session.close()
        return [key for key, _ in dropped]

    def close(self, key: Hashable) -> bool:
        """Free the key's session; ``False`` when there was none."""
        with self._lock:
            session = self._sessions.pop(key, None)
        if session is None:
            return False
        session.close()
        return True

    def clear(self) -> None:
        """Free every session."""
        with self._lock:
            sessions, self._sessions = list(self._sessions.values()), OrderedDict()
        for session in sessions:
            session.close()

    def _bytes(self) -> int:
        return sum(s.cache_bytes for s in self._sessions.values())

"""The journal: an SQLite log of every accepted memory, the source of truth.

Chroma's index can be lost or left corrupt (its HNSW files can be half-written by a kill
mid-flush), so every memory is written here first and indexed second. Each row has a
``state``:

* ``pending``: written here, not (yet) in the index (the server was down, the process died);
* ``indexed``: in the index with this text and vector;
* ``deleting``: deleted by the user, not yet removed from the index (a tombstone, so that a
  failed delete or ``forget`` is finished by ``repair`` instead of being resurrected).

Tombstones also hide their memories from every read at once (:class:`Visibility`), and a
``forget`` leaves a mark on its user until the index has dropped them, so "forget me" holds
from the moment ``forget`` is called, whether or not the index could be reached.

Rows keep their vectors, so the index can be rebuilt exactly, without re-encoding, as long
as the encoder has not changed.

The file uses WAL mode: readers do not block the writer, and a crash loses at most the
transaction in flight.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from recall_core.memory.errors import JournalDamagedError, journal_damaged_hint
from recall_core.memory.text.lexical import (
    FTS_BACKFILL,
    FTS_SCHEMA,
    SCRATCH_SCHEMA,
    WordScores,
    prepare_connection,
    word_scores,
)

PENDING = "pending"
INDEXED = "indexed"
DELETING = "deleting"

#: 2 added the FTS5 word index (lexical.py) and ``context`` (the text that is searched, when it
#: is more than ``text``); 3 the marks of unfinished forgets and renamed users, and user ids in
#: Unicode NFC (validation.py); 4 dropped the LM-space keys of the retired hidden query without
#: a query head (an upgraded journal keeps their two columns, emptied). An older journal is
#: upgraded when opened.
_SCHEMA_VERSION = 4

_SCHEMA = """
CREATE TABLE IF NOT EXISTS memories (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    id          TEXT NOT NULL UNIQUE,
    user_id     TEXT NOT NULL,
    session_id  TEXT NOT NULL,
    role        TEXT NOT NULL,
    text        TEXT NOT NULL,
    timestamp   TEXT NOT NULL,
    turn_index  INTEGER NOT NULL,
    chunk_index INTEGER NOT NULL,
    n_chunks    INTEGER NOT NULL,
    extra       TEXT NOT NULL DEFAULT '{}',
    embedding   BLOB,
    encoder     TEXT,
    state       TEXT NOT NULL DEFAULT 'pending',
    created_at  REAL NOT NULL,
    updated_at  REAL NOT NULL,
    context     TEXT
);
CREATE INDEX IF NOT EXISTS memories_user_state ON memories(user_id, state);
CREATE INDEX IF NOT EXISTS memories_user_session ON memories(user_id, session_id, turn_index);
-- A user whose forget() has not reached the index yet: reads show only what was written after.
CREATE TABLE IF NOT EXISTS forgotten_users (user_id TEXT PRIMARY KEY, at REAL NOT NULL);
-- A user id rewritten to NFC (schema 3): its old collections are still to drop from the index.
CREATE TABLE IF NOT EXISTS renamed_users (old_id TEXT PRIMARY KEY, new_id TEXT NOT NULL);
"""

_COLUMNS = (
    "id, user_id, session_id, role, text, timestamp, turn_index, chunk_index, n_chunks, extra, "
    "embedding, encoder, state, created_at, updated_at, context"
)


@dataclass(frozen=True)
class JournalRow:
    """One memory (one chunk of one turn) as the journal keeps it."""

    id: str
    user_id: str
    session_id: str
    role: str
    text: str
    timestamp: str
    turn_index: int
    chunk_index: int
    n_chunks: int
    extra: dict[str, Any] = field(default_factory=dict)
    embedding: np.ndarray | None = None
    encoder: str | None = None
    state: str = PENDING
    created_at: float = 0.0
    updated_at: float = 0.0
    #: What is embedded and word-indexed when it is more than ``text`` (the writer adds the date,
    #: the speaker and the turn before); ``text`` is what a search returns and recall injects.
    context: str | None = None

    @property
    def search_text(self) -> str:
        return self.context if self.context is not None else self.text

    def with_(self, **changes: Any) -> JournalRow:
        return replace(self, **changes)


@dataclass(frozen=True)
class Visibility:
    """Which of one user's index rows a read may return, by the journal.

    Never a tombstoned memory (deleted, its removal from the index not finished yet). While a
    ``forget`` of the user has not reached the index, only the memories live in this journal
    (written after the forget); everything else in the user's collections is on its way out.
    """

    deleted: frozenset[str] = frozenset()
    #: During an unfinished forget: the only ids a read may return; ``None`` otherwise.
    only: frozenset[str] | None = None

    @property
    def everything(self) -> bool:
        """Whether nothing is hidden (the common case: reads need not filter)."""
        return not self.deleted and self.only is None

    def allows(self, memory_id: str) -> bool:
        if self.only is not None:
            return memory_id in self.only
        return memory_id not in self.deleted


EVERYTHING = Visibility()


def _blob(vector: np.ndarray | None) -> bytes | None:
    return None if vector is None else np.asarray(vector, dtype=np.float32).tobytes()


def _vector(blob: bytes | None) -> np.ndarray | None:
    return None if blob is None else np.frombuffer(blob, dtype=np.float32).copy()


def _split_sql(script: str) -> list[str]:
    """The statements of ``script``; a trigger body's inner ``;`` stays with its ``END``."""
    statements, current = [], ""
    for part in script.split(";"):
        current += part + ";"
        if sqlite3.complete_statement(current):
            if current.strip(" \n;"):
                statements.append(current.strip())
            current = ""
    return statements


def _row(values: Sequence[Any]) -> JournalRow:
    (id_, user, session, role, text, ts, turn, chunk, n_chunks, extra, emb, enc, state, c, u, context) = values
    return JournalRow(
        id=id_, user_id=user, session_id=session, role=role, text=text, timestamp=ts,
        turn_index=turn, chunk_index=chunk, n_chunks=n_chunks, extra=json.loads(extra),
        embedding=_vector(emb), encoder=enc, state=state, created_at=c, updated_at=u, context=context,
    )  # fmt: skip


#: Seconds a connection waits for another process's lock before giving up.
_BUSY_TIMEOUT = 30.0


def _enter_wal(db: sqlite3.Connection, timeout: float) -> None:
    """Put ``db`` in WAL mode, waiting up to ``timeout`` seconds for other processes.

    Switching a fresh file to WAL needs its exclusive lock, and SQLite answers "database is
    locked" at once, without its busy handler, when another process opening the same fresh file
    holds a lock: several writers or a server's workers starting together would fail at random.
    So the switch is retried, with a growing pause, until ``timeout``.
    """
    deadline = time.monotonic() + timeout
    pause = 0.005
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)
        pause = min(2 * pause, 0.2)


class Journal:
    """SQLite journal of memories (WAL mode), safe to share between threads and processes.

    Args:
        path: the database file (created with its folder if missing).
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # One connection shared by the threads of a process, serialised by a lock: SQLite
        # allows one writer at a time anyway, and this keeps transactions whole.
        self._lock = threading.RLock()
        self._depth = 0  # nesting of open transactions (under the lock)
        self._db = sqlite3.connect(str(self.path), timeout=_BUSY_TIMEOUT, check_same_thread=False, isolation_level=None)
        try:
            self._set_up()
        except sqlite3.DatabaseError as error:
            self._db.close()
            if isinstance(error, sqlite3.OperationalError):  # locked, read-only, I/O: not the file's damage
                raise
            raise JournalDamagedError(journal_damaged_hint(self.path, f"{type(error).__name__}: {error}")) from error

    def _set_up(self) -> None:
        """WAL mode, the schema and its upgrades, the scratch tables."""
        _enter_wal(self._db, _BUSY_TIMEOUT)
        # NORMAL in WAL mode: a power cut can lose the last transactions but never corrupts.
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("PRAGMA foreign_keys=ON")
        with self._transaction():
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    self._db.execute(statement)
            version = self._db.execute("PRAGMA user_version").fetchone()[0]
            if version > _SCHEMA_VERSION:
                raise RuntimeError(
                    f"the journal {self.path} has schema version {version}, newer than this recall "
                    f"understands ({_SCHEMA_VERSION}): upgrade recall"
                )
            if version == 1:
                self._db.execute("ALTER TABLE memories ADD COLUMN context TEXT")
            if version < 2:
                fresh = self._db.execute("SELECT 1 FROM sqlite_master WHERE name='memories_fts'").fetchone() is None
                for statement in _split_sql(FTS_SCHEMA):
                    self._db.execute(statement)
                if fresh:
                    self._db.execute(FTS_BACKFILL)
            if version < 3:
                self._normalise_user_ids()
            if version < 4:
                self._drop_lm_keys()
            if version < _SCHEMA_VERSION:
                self._db.execute(f"PRAGMA user_version={_SCHEMA_VERSION}")
        prepare_connection(self._db, _split_sql(SCRATCH_SCHEMA))

    class _Tx:
        """One write transaction; nested ones join the outermost (one BEGIN, one COMMIT)."""

        def __init__(self, journal: Journal) -> None:
            self.journal = journal

        def __enter__(self) -> sqlite3.Connection:
            journal = self.journal
            journal._lock.acquire()
            if journal._depth == 0:
                try:
                    # IMMEDIATE takes the write lock now, so two processes never interleave a
                    # read-modify-write (waiting up to the connection's timeout for the other).
                    journal._db.execute("BEGIN IMMEDIATE")
                except BaseException:
                    journal._lock.release()
                    raise
            journal._depth += 1
            return journal._db

        def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
            journal = self.journal
            try:
                journal._depth -= 1
                if journal._depth == 0:
                    try:
                        if not exc_type:
                            journal._db.execute("COMMIT")
                    finally:  # SQLite may have rolled back itself; a refused COMMIT (a full disk) may not
                        if journal._db.in_transaction:
                            journal._db.execute("ROLLBACK")
            finally:
                journal._lock.release()

    def damage(self) -> str | None:
        """What SQLite's ``quick_check`` finds wrong with the file (a few lines), else ``None``."""
        try:
            with self._lock:
                rows = [str(r[0]) for r in self._db.execute("PRAGMA quick_check(5)").fetchall()]
        except sqlite3.DatabaseError as error:
            return f"{type(error).__name__}: {error}"
        return None if rows == ["ok"] else "; ".join(rows)

    def _transaction(self) -> Journal._Tx:
        return Journal._Tx(self)

    def transaction(self) -> Journal._Tx:
        """A write transaction (``with journal.transaction(): ...``) that holds SQLite's write lock
        from its first statement, so what is read inside it (the next turn position) is still true
        when it commits, whatever other processes sharing the file do. Calls inside it join it."""
        return Journal._Tx(self)

    def _normalise_user_ids(self) -> None:
        """Schema 3: rewrite user ids to NFC (inside the upgrade's transaction).

        The rows of a renamed user become ``pending`` (the index files them under the user's
        old collection name, a hash of the old spelling) and the rename is recorded, so that
        the store can drop the old collections and index the rows under the new name. Two
        spellings of one name become one user.
        """
        db = self._db
        for (old,) in db.execute("SELECT DISTINCT user_id FROM memories").fetchall():
            new = unicodedata.normalize("NFC", old)
            if new == old:
                continue
            db.execute(
                "UPDATE memories_fts SET owner = 'u' || hex(?) WHERE rowid IN (SELECT seq FROM memories WHERE user_id=?)",
                (new, old),
            )
            db.execute(
                "UPDATE memories SET user_id=?, state=CASE WHEN state=? THEN state ELSE ? END WHERE user_id=?",
                (new, DELETING, PENDING, old),
            )
            db.execute("INSERT OR REPLACE INTO renamed_users (old_id, new_id) VALUES (?, ?)", (old, new))
            db.execute("UPDATE OR REPLACE forgotten_users SET user_id=? WHERE user_id=?", (new, old))

    def _drop_lm_keys(self) -> None:
        """Schema 4: empty the LM-key columns an older journal has (inside the upgrade's transaction)."""
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(memories)")}
        if "lm_key" in columns:
            self._db.execute("UPDATE memories SET lm_key=NULL, lm_name=NULL WHERE lm_key IS NOT NULL OR lm_name IS NOT NULL")

    def close(self) -> None:
        """Close the database (checkpointing the WAL into the main file)."""
        with self._lock:
            try:
                self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.Error:
                pass
            self._db.close()

    # -- writing ---------------------------------------------------------------------------

    def insert(self, rows: Iterable[JournalRow]) -> list[str]:
        """Write new rows as ``pending``; return the ids that were actually new.

        A row whose id exists is left as it is (re-writing a turn does not duplicate it),
        unless it is a tombstone (``deleting``): then the turn is being written again and
        the row comes back to life with the new content.
        """
        now = time.time()
        new: list[str] = []
        with self._transaction() as db:
            for row in rows:
                existing = db.execute("SELECT state FROM memories WHERE id=?", (row.id,)).fetchone()
                if existing is not None and existing[0] != DELETING:
                    continue
                if existing is not None:
                    db.execute("DELETE FROM memories WHERE id=?", (row.id,))
                db.execute(
                    f"INSERT INTO memories ({_COLUMNS}) VALUES ({', '.join('?' * 16)})",
                    (
                        row.id, row.user_id, row.session_id, row.role, row.text, row.timestamp,
                        row.turn_index, row.chunk_index, row.n_chunks, json.dumps(row.extra, sort_keys=True),
                        _blob(row.embedding), row.encoder, PENDING, now, now, row.context,
                    ),
                )  # fmt: skip
                new.append(row.id)
        return new

    def update_text(self, memory_id: str, text: str, extra: dict[str, Any] | None = None, context: str | None = None) -> None:
        """Change a memory's text (and extra metadata, and what it is searched by: ``context``, ``None``
        for the text itself); it becomes ``pending`` with no vectors."""
        with self._transaction() as db:
            sets = "text=?, context=?, embedding=NULL, encoder=NULL, state=?, updated_at=?"
            params: list[Any] = [text, context, PENDING, time.time()]
            if extra is not None:
                sets += ", extra=?"
                params.append(json.dumps(extra, sort_keys=True))
            cur = db.execute(f"UPDATE memories SET {sets} WHERE id=? AND state!=?", (*params, memory_id, DELETING))
            if cur.rowcount == 0:
                raise KeyError(memory_id)

    def set_context(self, memory_id: str, context: str | None) -> None:
        """Change what a memory is searched by (its text unchanged): it becomes ``pending`` with no embedding."""
        with self._transaction() as db:
            db.execute(
                "UPDATE memories SET context=?, embedding=NULL, encoder=NULL, state=?, updated_at=? WHERE id=? AND state!=?",
                (context, PENDING, time.time(), memory_id, DELETING),
            )

    def set_vectors(self, ids: Sequence[str], embeddings: np.ndarray, encoder: str) -> None:
        """Store the vectors ``encoder`` computed for ``ids``."""
        with self._transaction() as db:
            db.executemany(
                "UPDATE memories SET embedding=?, encoder=? WHERE id=?",
                [(_blob(embeddings[i]), encoder, memory_id) for i, memory_id in enumerate(ids)],
            )

    def mark(self, ids: Sequence[str], state: str) -> None:
        """Set the state of rows (``pending`` -> ``indexed`` after a successful index write)."""
        with self._transaction() as db:
            db.executemany(
                "UPDATE memories SET state=? WHERE id=? AND state!=?",
                [(state, memory_id, DELETING) for memory_id in ids],
            )

    def mark_deleting(self, user_id: str, ids: Sequence[str]) -> list[str]:
        """Tombstone a user's rows before they are deleted from the index; return the ids found.

        Only rows of ``user_id`` are touched: an id of another user is ignored.
        """
        with self._transaction() as db:
            found = [
                m for m in ids
                if db.execute("SELECT 1 FROM memories WHERE id=? AND user_id=?", (m, user_id)).fetchone()
            ]  # fmt: skip
            db.executemany("UPDATE memories SET state=? WHERE id=?", [(DELETING, m) for m in found])
        return found

    def mark_user_deleting(self, user_id: str) -> int:
        """Tombstone every row of a user and mark the user forgotten (``forget``); return how many
        live rows there were. Until :meth:`purge_user`, reads of the user show only rows written
        after this (:meth:`visibility`)."""
        with self._transaction() as db:
            live = db.execute(
                "SELECT COUNT(*) FROM memories WHERE user_id=? AND state!=?", (user_id, DELETING)
            ).fetchone()[0]
            db.execute("UPDATE memories SET state=? WHERE user_id=?", (DELETING, user_id))
            db.execute("INSERT OR REPLACE INTO forgotten_users (user_id, at) VALUES (?, ?)", (user_id, time.time()))
        return int(live)

    def purge(self, ids: Sequence[str]) -> None:
        """Remove tombstoned rows for good, once the index no longer has them."""
        with self._transaction() as db:
            db.executemany("DELETE FROM memories WHERE id=? AND state=?", [(m, DELETING) for m in ids])

    def purge_user(self, user_id: str) -> None:
        """Remove every tombstoned row of a user and the user's forget mark (after ``forget``
        emptied the index)."""
        with self._transaction() as db:
            db.execute("DELETE FROM memories WHERE user_id=? AND state=?", (user_id, DELETING))
            db.execute("DELETE FROM forgotten_users WHERE user_id=?", (user_id,))

    def renamed_users(self) -> list[tuple[str, str]]:
        """``(old id, new id)`` of users renamed to NFC whose old collections are still in the index."""
        with self._lock:
            return [(old, new) for old, new in self._db.execute("SELECT old_id, new_id FROM renamed_users ORDER BY old_id")]

    def clear_renamed(self, old_id: str) -> None:
        """Forget a rename once the old collections are gone from the index."""
        with self._transaction() as db:
            db.execute("DELETE FROM renamed_users WHERE old_id=?", (old_id,))

    # -- reading ---------------------------------------------------------------------------

    def get(self, memory_id: str) -> JournalRow | None:
        with self._lock:
            values = self._db.execute(f"SELECT {_COLUMNS} FROM memories WHERE id=?", (memory_id,)).fetchone()
        return None if values is None else _row(values)

    def get_many(self, ids: Sequence[str]) -> list[JournalRow]:
        """Rows for ``ids`` (those that exist), in the order of ``ids``."""
        found: dict[str, JournalRow] = {}
        with self._lock:
            for start in range(0, len(ids), 500):
                part = list(ids[start : start + 500])
                query = f"SELECT {_COLUMNS} FROM memories WHERE id IN ({', '.join('?' * len(part))})"
                for values in self._db.execute(query, part):
                    row = _row(values)
                    found[row.id] = row
        return [found[m] for m in ids if m in found]

    def rows(self, user_id: str, states: Sequence[str] = (PENDING, INDEXED)) -> Iterator[JournalRow]:
        """A user's rows in the given states, in the order they were written."""
        marks = ", ".join("?" * len(states))
        with self._lock:
            fetched = self._db.execute(
                f"SELECT {_COLUMNS} FROM memories WHERE user_id=? AND state IN ({marks}) ORDER BY seq",
                (user_id, *states),
            ).fetchall()
        for values in fetched:
            yield _row(values)

    def previous_turn(self, user_id: str, session_id: str, turn_index: int) -> JournalRow | None:
        """The last chunk of the latest turn before ``turn_index`` in a session (not deleted), or ``None``."""
        with self._lock:
            values = self._db.execute(
                f"""SELECT {_COLUMNS} FROM memories WHERE user_id=? AND session_id=? AND turn_index<? AND state!=?
                    ORDER BY turn_index DESC, chunk_index DESC LIMIT 1""",
                (user_id, session_id, turn_index, DELETING),
            ).fetchone()
        return None if values is None else _row(values)

    def next_turn(self, user_id: str, session_id: str, turn_index: int) -> JournalRow | None:
        """The first chunk of the earliest turn after ``turn_index`` in a session (not deleted), or ``None``."""
        with self._lock:
            values = self._db.execute(
                f"""SELECT {_COLUMNS} FROM memories WHERE user_id=? AND session_id=? AND turn_index>? AND state!=?
                    ORDER BY turn_index, chunk_index LIMIT 1""",
                (user_id, session_id, turn_index, DELETING),
            ).fetchone()
        return None if values is None else _row(values)

    def turn_rows(self, user_id: str, session_id: str, turn_index: int) -> list[JournalRow]:
        """Every chunk (not deleted) at a turn position of a session, in chunk order."""
        with self._lock:
            rows = self._db.execute(
                f"""SELECT {_COLUMNS} FROM memories WHERE user_id=? AND session_id=? AND turn_index=? AND state!=?
                    ORDER BY chunk_index""",
                (user_id, session_id, turn_index, DELETING),
            ).fetchall()
        return [_row(values) for values in rows]

    def search_text(self, user_id: str, text: str, k: int, states: Sequence[str] = (INDEXED,)) -> list[tuple[str, float]]:
        """BM25 word search in ``user_id``'s rows: ``(memory id, score)``, best first (see lexical.py)."""
        return self.search_words(user_id, text, k, states).ranked

    def search_words(self, user_id: str, text: str, k: int, states: Sequence[str] = (INDEXED,)) -> WordScores:
        """:meth:`search_text`'s ranking with the query's weight, the scale the hybrid search reads it on."""
        with self._lock:
            return word_scores(self._db, user_id, text, k, states)

    def visibility(self, user_id: str) -> Visibility:
        """What reads of ``user_id``'s index rows may return (see :class:`Visibility`)."""
        with self._lock:
            deleted = frozenset(
                m for (m,) in self._db.execute(
                    "SELECT id FROM memories WHERE user_id=? AND state=?", (user_id, DELETING)
                )
            )  # fmt: skip
            forgotten = self._db.execute("SELECT 1 FROM forgotten_users WHERE user_id=?", (user_id,)).fetchone()
            if forgotten is None:
                return Visibility(deleted) if deleted else EVERYTHING
            live = frozenset(
                m for (m,) in self._db.execute(
                    "SELECT id FROM memories WHERE user_id=? AND state!=?", (user_id, DELETING)
                )
            )  # fmt: skip
        return Visibility(deleted, only=live)

    def forgetting(self, user_id: str) -> bool:
        """Whether a ``forget`` of ``user_id`` has not reached the index yet."""
        with self._lock:
            return self._db.execute("SELECT 1 FROM forgotten_users WHERE user_id=?", (user_id,)).fetchone() is not None

    def users(self) -> list[str]:
        """Every user id that has rows (in any state)."""
        with self._lock:
            return [u for (u,) in self._db.execute("SELECT DISTINCT user_id FROM memories ORDER BY user_id")]

    def encoders(self) -> list[str]:
        """The names of the encoders that computed the journaled vectors, most used first."""
        with self._lock:
            return [name for (name,) in self._db.execute(
                "SELECT encoder FROM memories WHERE encoder IS NOT NULL GROUP BY encoder ORDER BY COUNT(*) DESC"
            )]  # fmt: skip

    def count(self, user_id: str | None = None, state: str | None = None) -> int:
        where, params = [], []
        if user_id is not None:
            where.append("user_id=?")
            params.append(user_id)
        if state is not None:
            where.append("state=?")
            params.append(state)
        sql = "SELECT COUNT(*) FROM memories" + (" WHERE " + " AND ".join(where) if where else "")
        with self._lock:
            return int(self._db.execute(sql, params).fetchone()[0])

    def indexed_counts(self) -> dict[str, int]:
        """user id -> how many of their rows are indexed."""
        with self._lock:
            return {
                user: int(n) for user, n in self._db.execute(
                    "SELECT user_id, COUNT(*) FROM memories WHERE state=? GROUP BY user_id", (INDEXED,)
                )
            }  # fmt: skip

    def next_turn_index(self, user_id: str, session_id: str) -> int:
        """One past the highest turn index written in this session (0 for a new session)."""
        with self._lock:
            value = self._db.execute(
                "SELECT MAX(turn_index) FROM memories WHERE user_id=? AND session_id=?", (user_id, session_id)
            ).fetchone()[0]
        return 0 if value is None else int(value) + 1

    def __repr__(self) -> str:
        return f"Journal({str(self.path)!r})"


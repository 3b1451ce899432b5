"""`Journal`: the operations on the journal's SQLite file (see :mod:`recall_core.memory.journal`)."""

from __future__ import annotations

import functools
import inspect
import json
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from recall_core.memory.errors import (
    JournalDamagedError,
    JournalWriteError,
    MemoryStoreError,
    journal_damaged_hint,
    journal_write_hint,
)
from recall_core.memory.journal.rows import (
    COLUMNS,
    EVERYTHING,
    JournalRow,
    Visibility,
    row_from,
    same_metadata,
    to_blob,
)
from recall_core.memory.journal.schema import (
    BUSY_TIMEOUT,
    DELETING,
    INDEXED,
    PENDING,
    create_or_upgrade,
    enter_wal,
    split_sql,
)
from recall_core.memory.text.lexical import (
    SCRATCH_SCHEMA,
    WordScores,
    prepare_connection,
    word_scores,
)
from recall_core.memory.validation import INT_MAX


def _reads(method: Any) -> Any:
    """A read of the journal: where SQLite cannot read the file (garbled pages: a plain
    ``DatabaseError``, "database disk image is malformed") it raises :class:`JournalDamagedError`
    naming the file and the way out, as a write does. Until 2026-12-07 reads raised SQLite's own
    error, at a store's open and in ``recall doctor`` too (a reviewer)."""
    if inspect.isgeneratorfunction(method):

        @functools.wraps(method)
        def rows(self: Journal, *args: Any, **kwargs: Any) -> Iterator[Any]:
            with self._damage_named():
                yield from method(self, *args, **kwargs)

        return rows

    @functools.wraps(method)
    def read(self: Journal, *args: Any, **kwargs: Any) -> Any:
        with self._damage_named():
            return method(self, *args, **kwargs)

    return read


class _Closed:
    """A closed journal's connection: every use raises :class:`MemoryStoreError`."""

    in_transaction = False

    def __getattr__(self, name: str) -> Any:
        raise MemoryStoreError("this MemoryStore is closed")


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
        self._db = sqlite3.connect(str(self.path), timeout=BUSY_TIMEOUT, check_same_thread=False, isolation_level=None)
        try:
            self._set_up()
        except sqlite3.DatabaseError as error:
            self._db.close()
            if isinstance(error, sqlite3.OperationalError):  # locked, read-only, I/O: not the file's damage
                raise
            raise JournalDamagedError(journal_damaged_hint(self.path, f"{type(error).__name__}: {error}")) from error

    def _set_up(self) -> None:
        """WAL mode, the schema and its upgrades, the scratch tables."""
        enter_wal(self._db, BUSY_TIMEOUT)
        # NORMAL in WAL mode: a power cut can lose the last transactions but never corrupts.
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("PRAGMA foreign_keys=ON")
        # Deleted rows' bytes are overwritten, not left in free pages: a forgotten user's words must
        # not stay in the file (the Chroma database is vacuumed instead: not this connection's).
        self._db.execute("PRAGMA secure_delete=ON")
        with self._transaction():
            create_or_upgrade(self._db, self.path)
            self.scrub_words(if_due=True)  # a process killed before its close left deleted rows' words
        prepare_connection(self._db, split_sql(SCRATCH_SCHEMA))

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

    @contextmanager
    def _damage_named(self) -> Iterator[None]:
        """SQLite's "cannot read this file" (a plain ``DatabaseError``) as :class:`JournalDamagedError`."""
        try:
            yield
        except sqlite3.DatabaseError as exc:
            if type(exc) is not sqlite3.DatabaseError:  # locked, a constraint, a misuse: not the file's state
                raise
            raise JournalDamagedError(journal_damaged_hint(self.path, f"{type(exc).__name__}: {exc}")) from exc

    @contextmanager
    def writing(self, undone: str) -> Iterator[None]:
        """:meth:`transaction`, with SQLite's refusal to write it (a full disk, a lock held past the
        timeout) as a :class:`JournalWriteError` saying what was ``undone`` ("the turn ... was not
        written"), and a file it cannot read as a :class:`JournalDamagedError` saying the way out."""
        try:
            with self._damage_named(), self.transaction():
                yield
        except sqlite3.OperationalError as exc:
            raise JournalWriteError(journal_write_hint(self.path, exc, undone)) from exc

    def transaction(self) -> Journal._Tx:
        """A write transaction (``with journal.transaction(): ...``) that holds SQLite's write lock
        from its first statement, so what is read inside it (the next turn position) is still true
        when it commits, whatever other processes sharing the file do. Calls inside it join it."""
        return Journal._Tx(self)

    def close(self) -> None:
        """Close the database (merging the word index if rows were deleted or rewritten since it was
        last merged, and checkpointing the WAL into the main file). A call of another thread that
        reaches the journal after it raises :class:`MemoryStoreError` ("closed"), not SQLite's
        "Cannot operate on a closed database" (a reviewer, 2026-12-07). Safe to call twice."""
        with self._lock:
            if isinstance(self._db, _Closed):
                return
            try:
                self.scrub_words(if_due=True)  # the mark stays if it fails: the next opening or close merges
            except sqlite3.Error:
                pass
            try:
                self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.Error:
                pass
            self._db.close()
            self._db = _Closed()  # type: ignore[assignment]

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
                # each row a microsecond after the one before it: two sessions dated the same day, written in
                # one call, are ordered as written (until 2026-12-07 the call's rows tied, and a turn's place
                # in its own session decided: a reviewer)
                _insert(db, row, PENDING, now + len(new) * 1e-6)
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

    def set_vectors(self, ids: Sequence[str], embeddings: np.ndarray, encoder: str,
                    made_from: Sequence[tuple[str, str | None]] | None = None) -> None:
        """Store the vectors ``encoder`` computed for ``ids``; with ``made_from`` (each row's text and
        context as encoded), only where the row still holds them: a vector is never stored for a
        text an ``update`` changed while it was computed."""
        with self._transaction() as db:
            if made_from is None:
                db.executemany("UPDATE memories SET embedding=?, encoder=? WHERE id=?",
                               [(to_blob(embeddings[i]), encoder, memory_id) for i, memory_id in enumerate(ids)])  # fmt: skip
                return
            db.executemany(
                "UPDATE memories SET embedding=?, encoder=? WHERE id=? AND text=? AND context IS ?",
                [(to_blob(embeddings[i]), encoder, memory_id, *made_from[i]) for i, memory_id in enumerate(ids)],
            )

    def mark(self, ids: Sequence[str], state: str) -> None:
        """Set the state of rows (``pending`` -> ``indexed`` after a successful index write)."""
        with self._transaction() as db:
            db.executemany(
                "UPDATE memories SET state=? WHERE id=? AND state!=?",
                [(state, memory_id, DELETING) for memory_id in ids],
            )

    def mark_indexed(self, rows: Sequence[JournalRow]) -> tuple[list[JournalRow], list[JournalRow]]:
        """Mark rows just written to the index ``indexed``; return ``(gone, changed)``.

        ``gone``: those a ``delete`` or ``forget`` removed meanwhile (their journal rows tombstoned
        or purged while they were embedded and written), each a tombstone now: hidden from every
        read until the caller deletes it from the index again, and finished by ``repair`` if that
        fails, never adopted back. ``changed``: those whose text or metadata an ``update`` (or a new
        write under the same id) changed meanwhile, left pending: the write just made may have put an
        older copy over the current one in the index, and the caller writes the current one again.

        Until 2026-12-07 a forget that ran while a write embedded the user's new turn was undone:
        the turn reached the index after the forget emptied it, and ``repair`` adopted it for good;
        and a changed row was only left pending, the older copy kept in the index (a reviewer); a change of
        metadata alone was not seen at all, and the index kept the older metadata for good."""
        gone: list[JournalRow] = []
        changed: list[JournalRow] = []
        with self._transaction() as db:
            for row in rows:
                found = db.execute("SELECT state, text, context, extra FROM memories WHERE id=?", (row.id,)).fetchone()
                if found is None:
                    _insert(db, row.with_(embedding=None), DELETING, time.time())
                if found is None or found[0] == DELETING:
                    gone.append(row)
                elif (found[1], found[2]) != (row.text, row.context) or not same_metadata(json.loads(found[3]), row.extra):
                    db.execute("UPDATE memories SET state=? WHERE id=?", (PENDING, row.id))
                    changed.append(row)
                else:
                    db.execute("UPDATE memories SET state=? WHERE id=?", (INDEXED, row.id))
        return gone, changed

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

    def scrub_words(self, if_due: bool = False) -> None:
        """Merge the word index (FTS5) into one segment, so that the words of purged or rewritten rows
        leave it: FTS5 keeps a deleted row's terms in its segments until they are merged (a forgotten
        user's words stayed in the file, a reviewer found, 2026-12-07). Costs a rewrite of the word
        index: ``forget`` runs it at once; after a delete or update, the close does (``if_due``:
        only when the ``words_due`` mark says a row was deleted or rewritten since the last merge)."""
        if if_due:  # looked at outside a transaction: a close waits for no other process when none is due
            with self._lock:
                if self._db.execute("SELECT 1 FROM words_due").fetchone() is None:
                    return
        with self._transaction() as db:
            db.execute("INSERT INTO memories_fts(memories_fts) VALUES('optimize')")
            db.execute("DELETE FROM words_due")

    @_reads
    def renamed_users(self) -> list[tuple[str, str]]:
        """``(old id, new id)`` of users renamed to NFC whose old collections are still in the index."""
        with self._lock:
            return [(old, new) for old, new in self._db.execute("SELECT old_id, new_id FROM renamed_users ORDER BY old_id")]

    def clear_renamed(self, old_id: str) -> None:
        """Forget a rename once the old collections are gone from the index."""
        with self._transaction() as db:
            db.execute("DELETE FROM renamed_users WHERE old_id=?", (old_id,))

    def set_index_mark(self, key: str, mark: str, vouched: bool) -> None:
        """Record the mark a Chroma server held when this journal last wrote to it (upkeep/marks.py);
        ``vouched``: every memory the journal holds as indexed there was indexed under this mark."""
        with self._transaction() as db:
            db.execute(
                "INSERT OR REPLACE INTO index_marks (location, mark, vouched, at) VALUES (?, ?, ?, ?)",
                (key, mark, int(vouched), time.time()),
            )

    @_reads
    def index_mark(self, key: str) -> tuple[str | None, bool]:
        """The mark recorded for the server ``key`` (``None``: none) and whether it is vouched."""
        with self._lock:
            found = self._db.execute("SELECT mark, vouched FROM index_marks WHERE location=?", (key,)).fetchone()
        return (None, False) if found is None else (str(found[0]), bool(found[1]))

    def mark_all_pending(self) -> int:
        """Make every indexed row pending (its index lost it); return how many."""
        with self._transaction() as db:
            return db.execute("UPDATE memories SET state=? WHERE state=?", (PENDING, INDEXED)).rowcount

    # -- reading ---------------------------------------------------------------------------

    @_reads
    def get(self, memory_id: str) -> JournalRow | None:
        with self._lock:
            values = self._db.execute(f"SELECT {COLUMNS} FROM memories WHERE id=?", (memory_id,)).fetchone()
        return None if values is None else row_from(values)

    @_reads
    def get_many(self, ids: Sequence[str]) -> list[JournalRow]:
        """Rows for ``ids`` (those that exist), in the order of ``ids``."""
        found: dict[str, JournalRow] = {}
        with self._lock:
            for start in range(0, len(ids), 500):
                part = list(ids[start : start + 500])
                query = f"SELECT {COLUMNS} FROM memories WHERE id IN ({', '.join('?' * len(part))})"
                for values in self._db.execute(query, part):
                    row = row_from(values)
                    found[row.id] = row
        return [found[m] for m in ids if m in found]

    @_reads
    def rows(self, user_id: str, states: Sequence[str] = (PENDING, INDEXED)) -> Iterator[JournalRow]:
        """A user's rows in the given states, in the order they were written."""
        marks = ", ".join("?" * len(states))
        with self._lock:
            fetched = self._db.execute(
                f"SELECT {COLUMNS} FROM memories WHERE user_id=? AND state IN ({marks}) ORDER BY seq",
                (user_id, *states),
            ).fetchall()
        for values in fetched:
            yield row_from(values)

    @_reads
    def written_order(self, user_id: str) -> dict[str, int]:
        """Each of ``user_id``'s memories' place in the order the journal wrote them."""
        with self._lock:
            return dict(self._db.execute("SELECT id, seq FROM memories WHERE user_id=?", (user_id,)).fetchall())

    @_reads
    def indexed_ids(self, user_id: str) -> list[str]:
        """The ids of ``user_id``'s memories the journal holds as indexed (no row read whole)."""
        with self._lock:
            return [m for (m,) in self._db.execute("SELECT id FROM memories WHERE user_id=? AND state=? ORDER BY seq",
                                                   (user_id, INDEXED))]  # fmt: skip

    @_reads
    def pending_rows(self, user_id: str, limit: int | None = None, encoder: str | None = None) -> list[JournalRow]:
        """Up to ``limit`` (``None``: all) of a user's pending rows, in the order they were written; with
        ``encoder``, only those holding that encoder's vector (indexed without encoding). One bounded
        read: a user with many pending rows costs the caller ``limit`` rows, not all of them."""
        sql, params = f"SELECT {COLUMNS} FROM memories WHERE user_id=? AND state=?", [user_id, PENDING]
        if encoder is not None:
            sql += " AND embedding IS NOT NULL AND encoder=?"
            params.append(encoder)
        params.append(-1 if limit is None else limit)  # SQLite: a negative LIMIT is none
        with self._lock:
            fetched = self._db.execute(sql + " ORDER BY seq LIMIT ?", params).fetchall()
        return [row_from(values) for values in fetched]

    @_reads
    def previous_turn(self, user_id: str, session_id: str, turn_index: int) -> JournalRow | None:
        """The last chunk of the latest turn before ``turn_index`` in a session (not deleted, not a
        keyed note: :meth:`~recall_core.memory.MemoryWriter.put`'s are no part of the dialogue, and
        until 2026-12-07 the turn after one was searched with its words), or ``None``."""
        with self._lock:
            values = self._db.execute(
                f"""SELECT {COLUMNS} FROM memories WHERE user_id=? AND session_id=? AND turn_index<? AND state!=?
                    AND json_extract(extra, '$.key') IS NULL
                    ORDER BY turn_index DESC, chunk_index DESC LIMIT 1""",
                (user_id, session_id, turn_index, DELETING),
            ).fetchone()
        return None if values is None else row_from(values)

    @_reads
    def next_turn(self, user_id: str, session_id: str, turn_index: int) -> JournalRow | None:
        """The first chunk of the earliest turn after ``turn_index`` in a session (not deleted, not a
        keyed note), or ``None``."""
        with self._lock:
            values = self._db.execute(
                f"""SELECT {COLUMNS} FROM memories WHERE user_id=? AND session_id=? AND turn_index>? AND state!=?
                    AND json_extract(extra, '$.key') IS NULL
                    ORDER BY turn_index, chunk_index LIMIT 1""",
                (user_id, session_id, turn_index, DELETING),
            ).fetchone()
        return None if values is None else row_from(values)

    @_reads
    def turn_rows(self, user_id: str, session_id: str, turn_index: int) -> list[JournalRow]:
        """Every chunk (not deleted) at a turn position of a session, in chunk order."""
        with self._lock:
            rows = self._db.execute(
                f"""SELECT {COLUMNS} FROM memories WHERE user_id=? AND session_id=? AND turn_index=? AND state!=?
                    ORDER BY chunk_index""",
                (user_id, session_id, turn_index, DELETING),
            ).fetchall()
        return [row_from(values) for values in rows]

    def search_text(self, user_id: str, text: str, k: int, states: Sequence[str] = (INDEXED,)) -> list[tuple[str, float]]:
        """BM25 word search in ``user_id``'s rows: ``(memory id, score)``, best first (see lexical.py)."""
        return self.search_words(user_id, text, k, states).ranked

    @_reads
    def search_words(self, user_id: str, text: str, k: int, states: Sequence[str] = (INDEXED,)) -> WordScores:
        """:meth:`search_text`'s ranking with the query's weight, the scale the hybrid search reads it on."""
        with self._lock:
            return word_scores(self._db, user_id, text, k, states)

    @_reads
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

    @_reads
    def forgetting(self, user_id: str) -> bool:
        """Whether a ``forget`` of ``user_id`` has not reached the index yet."""
        with self._lock:
            return self._db.execute("SELECT 1 FROM forgotten_users WHERE user_id=?", (user_id,)).fetchone() is not None

    @_reads
    def users(self) -> list[str]:
        """Every user id that has rows (in any state)."""
        with self._lock:
            return [u for (u,) in self._db.execute("SELECT DISTINCT user_id FROM memories ORDER BY user_id")]

    @_reads
    def encoders(self) -> list[str]:
        """The names of the encoders that computed the journaled vectors, most used first."""
        with self._lock:
            return [name for (name,) in self._db.execute(
                "SELECT encoder FROM memories WHERE encoder IS NOT NULL GROUP BY encoder ORDER BY COUNT(*) DESC"
            )]  # fmt: skip

    @_reads
    def vector_sizes(self, user_id: str) -> dict[str, int]:
        """encoder name -> the length of the vectors it gave ``user_id``'s indexed memories."""
        with self._lock:
            return {name: int(size) // 4 for name, size in self._db.execute(
                "SELECT encoder, length(embedding) FROM memories WHERE user_id=? AND state=? AND embedding IS NOT NULL "
                "GROUP BY encoder", (user_id, INDEXED),
            )}  # fmt: skip

    @_reads
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

    @_reads
    def indexed_counts(self) -> dict[str, int]:
        """user id -> how many of their rows are indexed."""
        with self._lock:
            return {
                user: int(n) for user, n in self._db.execute(
                    "SELECT user_id, COUNT(*) FROM memories WHERE state=? GROUP BY user_id", (INDEXED,)
                )
            }  # fmt: skip

    @_reads
    def next_turn_index(self, user_id: str, session_id: str) -> int:
        """One past the highest turn index written in this session (0 for a new session); at most
        2**63 - 1, which a store imported from before 2026-12-07 may already hold (the turns after it
        then share that position, in the order they were written)."""
        with self._lock:
            value = self._db.execute(
                "SELECT MAX(turn_index) FROM memories WHERE user_id=? AND session_id=?", (user_id, session_id)
            ).fetchone()[0]
        return 0 if value is None else min(int(value) + 1, INT_MAX)

    def __repr__(self) -> str:
        return f"Journal({str(self.path)!r})"


def _insert(db: sqlite3.Connection, row: JournalRow, state: str, now: float) -> None:
    """Write one row in ``state`` (its id must not be in the journal)."""
    db.execute(
        f"INSERT INTO memories ({COLUMNS}) VALUES ({', '.join('?' * 16)})",
        (
            row.id, row.user_id, row.session_id, row.role, row.text, row.timestamp,
            row.turn_index, row.chunk_index, row.n_chunks, json.dumps(row.extra, sort_keys=True),
            to_blob(row.embedding), row.encoder, state, now, now, row.context,
        ),
    )  # fmt: skip

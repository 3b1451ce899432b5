"""The journal's SQLite file: its schema, the upgrades of older files, and opening it in WAL mode.

The rows and what they mean are described in :mod:`recall_core.memory.journal`.
"""

from __future__ import annotations

import sqlite3
import time
import unicodedata
from pathlib import Path

from recall_core.memory.text.lexical import FTS_BACKFILL, FTS_SCHEMA

PENDING = "pending"
INDEXED = "indexed"
DELETING = "deleting"

#: 2 added the FTS5 word index (lexical.py) and ``context`` (the text that is searched, when it
#: is more than ``text``); 3 the marks of unfinished forgets and renamed users, and user ids in
#: Unicode NFC (validation.py); 4 dropped the LM-space keys of the retired hidden query without
#: a query head (an upgraded journal keeps their two columns, emptied). An older journal is
#: upgraded when opened.
SCHEMA_VERSION = 4

SCHEMA = """
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
-- The mark each Chroma server this journal wrote to held when last seen (upkeep/marks.py): a
-- server whose mark changed lost its data. vouched: every memory indexed there was indexed
-- under this mark. A table made if missing needs no schema version: an older recall opens the file.
CREATE TABLE IF NOT EXISTS index_marks (
    location TEXT PRIMARY KEY, mark TEXT NOT NULL, vouched INTEGER NOT NULL, at REAL NOT NULL
);
"""

#: Whether the word index (FTS5) may still hold words of rows deleted or rewritten since it was last
#: merged (FTS5 keeps them in its segments until they merge): set by these triggers, whatever deleted
#: or rewrote the row, and cleared by ``Journal.scrub_words``, which a journal's close runs (and its
#: next opening, after a process killed before its close). Until 2026-12-07 only ``forget`` merged
#: them, and a deleted memory's words stayed in the file. A table and triggers made if missing need
#: no schema version: an older recall opens the file, and its deletes set the mark too.
WORDS_DUE_SCHEMA = """
CREATE TABLE IF NOT EXISTS words_due (one INTEGER PRIMARY KEY CHECK (one = 1));
CREATE TRIGGER IF NOT EXISTS words_due_delete AFTER DELETE ON memories BEGIN
    INSERT OR IGNORE INTO words_due VALUES (1);
END;
CREATE TRIGGER IF NOT EXISTS words_due_update AFTER UPDATE OF text, context ON memories BEGIN
    INSERT OR IGNORE INTO words_due VALUES (1);
END;
"""


def split_sql(script: str) -> list[str]:
    """The statements of ``script``; a trigger body's inner ``;`` stays with its ``END``."""
    statements, current = [], ""
    for part in script.split(";"):
        current += part + ";"
        if sqlite3.complete_statement(current):
            if current.strip(" \n;"):
                statements.append(current.strip())
            current = ""
    return statements


#: Seconds a connection waits for another process's lock before giving up.
BUSY_TIMEOUT = 30.0


def enter_wal(db: sqlite3.Connection, timeout: float) -> None:
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

def create_or_upgrade(db: sqlite3.Connection, path: Path) -> None:
    """Create the tables a file lacks and upgrade an older file (inside the caller's transaction)."""
    for statement in SCHEMA.split(";"):
        if statement.strip():
            db.execute(statement)
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        raise RuntimeError(
            f"the journal {path} has schema version {version}, newer than this recall "
            f"understands ({SCHEMA_VERSION}): upgrade recall"
        )
    if version == 1:
        db.execute("ALTER TABLE memories ADD COLUMN context TEXT")
    if version < 2:
        fresh = db.execute("SELECT 1 FROM sqlite_master WHERE name='memories_fts'").fetchone() is None
        for statement in split_sql(FTS_SCHEMA):
            db.execute(statement)
        if fresh:
            db.execute(FTS_BACKFILL)
    for statement in split_sql(WORDS_DUE_SCHEMA):
        db.execute(statement)
    if version < 3:
        _normalise_user_ids(db)
    if version < 4:
        _drop_lm_keys(db)
    if version < SCHEMA_VERSION:
        db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")


def _normalise_user_ids(db: sqlite3.Connection) -> None:
    """Schema 3: rewrite user ids to NFC (inside the upgrade's transaction).

    The rows of a renamed user become ``pending`` (the index files them under the user's
    old collection name, a hash of the old spelling) and the rename is recorded, so that
    the store can drop the old collections and index the rows under the new name. Two
    spellings of one name become one user.
    """
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

def _drop_lm_keys(db: sqlite3.Connection) -> None:
    """Schema 4: empty the LM-key columns an older journal has (inside the upgrade's transaction)."""
    columns = {row[1] for row in db.execute("PRAGMA table_info(memories)")}
    if "lm_key" in columns:
        db.execute("UPDATE memories SET lm_key=NULL, lm_name=NULL WHERE lm_key IS NOT NULL OR lm_name IS NOT NULL")

"""A damaged ``chroma.sqlite3`` is reported by ``doctor`` with its fix, never raised; the fix works.

The probe's fault: 64 KB of noise written at 1 MiB into a real store's Chroma database made
``doctor(store)`` raise (``database disk image is malformed``, or a read error from Chroma).
"""

from __future__ import annotations

import os
import random
import warnings

from recall_core.cli import main
from recall_core.memory import (
    HashEncoder,
    MemoryIndexWarning,
    MemoryStore,
    MemoryWriter,
    doctor,
    rebuild_index,
)

USERS, TURNS = 4, 300


def _damaged_store(path):
    """A real store of 1,200 memories whose ``chroma.sqlite3`` has 64 KB of noise at 1 MiB."""
    with MemoryStore.local(path, encoder=HashEncoder(64)) as store:
        MemoryWriter(store).add_turns(
            [{"user_id": f"u{u}", "role": "user", "content": f"Fact {i} of user {u}: " + "words " * 20}
             for u in range(USERS) for i in range(TURNS)], progress=False,
        )  # fmt: skip
    database = path / "chroma" / "chroma.sqlite3"
    assert database.stat().st_size > (1 << 20) + (64 << 10)
    with open(database, "r+b") as file:
        file.seek(1 << 20)
        file.write(random.Random(0).randbytes(64 << 10))
        file.flush()
        os.fsync(file.fileno())


def test_doctor_reports_a_damaged_database_with_its_fix_and_the_fix_works(tmp_path):
    path = tmp_path / "memory"
    _damaged_store(path)
    with MemoryStore.local(path, encoder=HashEncoder(64)) as store:
        report = doctor(store)  # reports, does not raise
        assert not report.ok
        assert "chroma.sqlite3" in report.damaged and "damaged" in report.damaged["chroma.sqlite3"]
        assert len(report.users) == USERS and all(u.damaged and u.journal == TURNS for u in report.users)
        summary = report.summary()
        assert "DAMAGED" in summary and "recall rebuild-index --fresh" in summary, summary
        # the fix it names: the index rebuilt from the journal, every memory back
        rebuild_index(store, fresh=True, progress=False)
        after = doctor(store)
        assert after.ok and after.totals()["index"] == USERS * TURNS
        assert store.for_user("u3").search("Fact 7 of user 3", k=1)  # searched again


def test_recall_doctor_exits_non_zero_on_a_damaged_database(tmp_path, capsys):
    path = tmp_path / "memory"
    _damaged_store(path)
    assert main(["doctor", "--no-probe", "--store", str(path), "--encoder", "hash-64"]) == 1
    out = capsys.readouterr().out
    assert "DAMAGED: chroma.sqlite3" in out and "rebuild-index --fresh" in out


def _leave_a_hot_journal(database) -> None:
    """A process killed (-9) inside a write transaction on ``database``: its rollback journal stays."""
    import signal
    import subprocess
    import sys

    script = (
        "import sqlite3, sys, time\n"
        f"db = sqlite3.connect({str(database)!r}, isolation_level=None)\n"
        "db.execute('PRAGMA cache_size=1')\n"  # pages spill to the file mid-transaction, as a big write's do
        "db.execute('BEGIN IMMEDIATE'); db.execute('CREATE TABLE killed (x)')\n"
        "for i in range(2000): db.execute('INSERT INTO killed VALUES (?)', (i,))\n"
        "print('inside', flush=True); time.sleep(60)\n"
    )
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "inside"
    child.send_signal(signal.SIGKILL)
    child.wait()


def test_a_writer_killed_inside_a_chroma_transaction_is_not_reported_as_damage(tmp_path):
    """SQLite undoes a hot rollback journal at the next read-write open; the checks' read-only
    connections could not, and reported the whole index damaged ("attempt to write a readonly database")."""
    with MemoryStore.local(tmp_path, encoder=HashEncoder(32)) as store:
        writer = MemoryWriter(store)
        for i in range(20):
            writer.add_turn("ada", "user", f"fact number {i}")
    database = tmp_path / "chroma" / "chroma.sqlite3"
    _leave_a_hot_journal(database)
    assert (tmp_path / "chroma" / "chroma.sqlite3-journal").stat().st_size > 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", MemoryIndexWarning)  # "chroma.sqlite3 cannot be read" was one
        store = MemoryStore.local(tmp_path, encoder=HashEncoder(32))
    with store:
        assert store.open_check.checked and store.open_check.ok
        report = doctor(store)
        assert report.ok and not report.damaged, report.summary()
        assert store.for_user("ada").count() == 20


def test_repair_rebuilds_a_wholly_damaged_index_from_the_journal(tmp_path, capsys):
    """`recall doctor --repair` stopped with an error (rc 2) on a damaged ``chroma.sqlite3``, though
    the docs said it fixes all of it (until 2026-12-07: a reviewer)."""
    from recall_core.memory import repair

    path = tmp_path / "memory"
    _damaged_store(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MemoryIndexWarning)
        with MemoryStore.local(path, encoder=HashEncoder(64)) as store:
            repair(store)
            assert doctor(store).ok and store.for_user("u1").search("Fact 9 of user 1", k=1)
    _damaged_store(tmp_path / "again")
    assert main(["doctor", "--repair", "--no-probe", "--store", str(tmp_path / "again"), "--encoder", "hash-64"]) == 0
    assert main(["doctor", "--no-probe", "--store", str(tmp_path / "again"), "--encoder", "hash-64"]) == 0

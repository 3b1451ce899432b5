"""A damaged ``chroma.sqlite3`` is reported by ``doctor`` with its fix, never raised; the fix works.

The probe's fault: 64 KB of noise written at 1 MiB into a real store's Chroma database made
``doctor(store)`` raise (``database disk image is malformed``, or a read error from Chroma).
"""

from __future__ import annotations

import os
import random

from recall_core.cli import main
from recall_core.memory import HashEncoder, MemoryStore, MemoryWriter, doctor, rebuild_index

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

"""doctor / repair / rebuild_index, and an unreachable server: the journal keeps every turn."""

from __future__ import annotations

import os
import random
import shutil
import sqlite3
import warnings
from pathlib import Path

import pytest

from recall_core.memory import (
    EncoderMismatchError,
    HashEncoder,
    JournalDamagedError,
    MemoryIndexWarning,
    MemoryStore,
    MemoryUnavailableError,
    MemoryWriter,
    doctor,
    rebuild_index,
    repair,
)
from recall_core.memory.chroma_server import free_port
from recall_core.memory.index import MEMORIES
from recall_core.types import RecallQuery
from tests.helpers.memories import RAW_TEXT

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def test_doctor_finds_and_repair_fixes_every_kind_of_drift(tmp_path: Path) -> None:
    store = MemoryStore.local(tmp_path, encoder=HashEncoder(32))
    writer = MemoryWriter(store, **RAW_TEXT)
    ids = [writer.add_turn("u", "user", f"fact number {i} about {w}")[0] for i, w in enumerate("abcdef")]
    assert doctor(store).ok
    collection = store.index.collection("u", MEMORIES)
    collection.delete(ids=[ids[0]])  # missing
    collection.update(ids=[ids[1]], documents=["tampered text"], embeddings=[[0.2] * 32])  # mismatched text
    collection.update(ids=[ids[2]], metadatas=[{"role": "assistant"}])  # mismatched metadata
    collection.add(ids=["stray"], embeddings=[[0.1] * 32], documents=["stray"], metadatas=[{"user_id": "u"}])  # extra
    report = doctor(store)
    user = report.users[0]
    assert (user.missing, sorted(user.mismatched), user.extra) == ([ids[0]], sorted(ids[1:3]), ["stray"])
    assert not report.ok and "missing from the index" in report.summary()
    fixed = repair(store, report, prune_extra=True)
    assert (fixed.indexed, fixed.pruned, fixed.adopted) == (3, 1, 0)
    assert doctor(store, check_vectors=True).ok
    assert store.for_user("u").get(ids[1]).text == "fact number 1 about b"
    store.close()


def test_a_journal_with_lm_keys_is_upgraded_and_its_keys_emptied(tmp_path: Path) -> None:
    """A schema-3 journal kept each memory's LM-space key in two columns; opening it upgrades it
    to schema 4, which empties them (nothing reads them now) and leaves every memory as it was."""
    with MemoryStore.local(tmp_path, encoder=HashEncoder(32)) as store:
        memory_id = MemoryWriter(store, **RAW_TEXT).add_turn("u", "user", "remember the milk")[0]
    db = sqlite3.connect(tmp_path / "journal.sqlite3")
    db.executescript(
        "ALTER TABLE memories ADD COLUMN lm_key BLOB; ALTER TABLE memories ADD COLUMN lm_name TEXT;"
        "UPDATE memories SET lm_key=x'0000803f', lm_name='an-old-model'; PRAGMA user_version=3;"
    )
    db.close()
    with MemoryStore.local(tmp_path, encoder=HashEncoder(32)) as store:
        assert store.for_user("u").search(RecallQuery("milk"), 1)[0].id == memory_id
        assert doctor(store).ok
    db = sqlite3.connect(tmp_path / "journal.sqlite3")
    assert db.execute("PRAGMA user_version").fetchone()[0] == 4
    assert db.execute("SELECT lm_key, lm_name FROM memories").fetchall() == [(None, None)]
    db.close()


def test_repair_reencodes_rows_without_vectors(tmp_path: Path) -> None:
    store = MemoryStore.local(tmp_path, encoder=HashEncoder(32))
    MemoryWriter(store, **RAW_TEXT).add_turn("u", "user", "remember the milk")
    store.index.drop_user("u")  # the index lost it
    store.journal._db.execute("UPDATE memories SET embedding=NULL, encoder=NULL, state='pending'")
    result = repair(store)
    assert (result.indexed, result.reencoded) == (1, 1)
    assert store.for_user("u").search(RecallQuery("milk"), 1)[0].text == "remember the milk"
    assert rebuild_index(store, reencode=True, progress=False).reencoded == 1
    store.close()


def test_index_only_user_is_pruned_only_when_asked(tmp_path: Path) -> None:
    store = MemoryStore.local(tmp_path, encoder=HashEncoder(32))
    MemoryWriter(store, **RAW_TEXT).add_turn("ghost", "user", "boo")
    store.journal._db.execute("DELETE FROM memories")  # the journal never heard of it
    report = doctor(store)
    assert [u.user_id for u in report.users] == ["ghost"] and report.users[0].extra
    assert "Do not rebuild the index" in report.summary()
    repair(store, report, prune_extra=True)
    assert doctor(store).ok and store.for_user("ghost").count() == 0
    store.close()


@pytest.mark.parametrize("loss", ["deleted", "emptied"])
def test_a_lost_journal_warns_at_open_and_repair_writes_the_index_back_into_it(tmp_path: Path, loss: str) -> None:
    """The index alone holds the acknowledged turns: repair must keep them, never prune them."""
    with MemoryStore.local(tmp_path, encoder=HashEncoder(32)) as store:
        writer = MemoryWriter(store, **RAW_TEXT)
        ids = [writer.add_turn("ada", "user", f"fact number {i}", session_id="s1", turn_index=i)[0] for i in range(5)]
        before = {r.id: (r.text, r.session_id, r.turn_index, r.role) for r in store.for_user("ada").all()}
        written = {row.id: row.created_at for row in store.journal.rows("ada")}
    journal = tmp_path / "journal.sqlite3"
    journal.unlink() if loss == "deleted" else journal.write_bytes(b"")
    for sidecar in tmp_path.glob("journal.sqlite3-*"):
        sidecar.unlink()
    with pytest.warns(MemoryIndexWarning, match="holds no memories, but the index .* holds 5 memories of 1 users"):
        store = MemoryStore.local(tmp_path, encoder=HashEncoder(32))
    with store:
        fixed = repair(store)
        assert (fixed.adopted, fixed.pruned) == (5, 0)
        assert doctor(store).ok and store.journal.count("ada") == 5
        assert {r.id: (r.text, r.session_id, r.turn_index, r.role) for r in store.for_user("ada").all()} == before
        # each keeps when it was first written (the order of notes and of reads follows it)
        assert {row.id: row.created_at for row in store.journal.rows("ada")} == pytest.approx(written, abs=1e-3)
        assert store.for_user("ada").search(RecallQuery("fact number 3"), 5)[0].id in ids
    with warnings.catch_warnings():
        warnings.simplefilter("error", MemoryIndexWarning)
        MemoryStore.local(tmp_path, encoder=HashEncoder(32)).close()  # whole again: no warning


def test_unreachable_server(tmp_path: Path) -> None:
    """Nothing listens on the port: writes journal and raise, searches raise, repair indexes later."""
    port = free_port()
    store = MemoryStore.server(port=port, encoder=HashEncoder(32), journal_path=tmp_path / "j.sqlite3", timeout=2)
    writer = MemoryWriter(store, **RAW_TEXT)
    with pytest.raises(MemoryUnavailableError, match="safe in the journal") as error:
        writer.add_turn("u", "user", "written while the server is down")
    assert "unreachable" in str(error.value)
    rows = list(store.journal.rows("u"))
    assert [(r.text, r.state) for r in rows] == [("written while the server is down", "pending")]
    assert rows[0].embedding is not None  # encoded already: repair only has to index it
    with pytest.raises(MemoryUnavailableError):
        store.for_user("u").search(RecallQuery("server"), 3)
    with pytest.raises(MemoryUnavailableError):
        doctor(store)
    store.close()


def test_a_garbled_journal_fails_doctor_and_repair_and_a_write_says_the_real_error(tmp_path: Path) -> None:
    """Noise in the middle of the journal: doctor said OK, and a write raised 'cannot rollback - no
    transaction is active', hiding SQLite's own error. The index still holds every memory."""
    with MemoryStore.local(tmp_path, encoder=HashEncoder(32)) as store:
        writer = MemoryWriter(store, **RAW_TEXT)
        for i in range(50):
            writer.add_turn("ada", "user", f"fact number {i} about topic {i * 7}")
    path = tmp_path / "journal.sqlite3"
    with path.open("r+b") as file:
        file.seek(path.stat().st_size // 2)
        file.write(bytes(range(256)) * 16)
    with MemoryStore.local(tmp_path, encoder=HashEncoder(32)) as store:
        report = doctor(store)
        assert not report.ok and "journal.sqlite3 is damaged" in report.summary() and "move the file aside" in report.summary()
        with pytest.raises(JournalDamagedError, match="doctor --repair"):
            repair(store, report)
        with pytest.raises(JournalDamagedError, match="move the file aside") as error:  # SQLite's own error in it
            MemoryWriter(store, **RAW_TEXT).add_turn("ada", "user", "one more fact")
        assert "rollback" not in str(error.value) and isinstance(error.value.__cause__, sqlite3.DatabaseError)
    path.rename(tmp_path / "journal.damaged")  # the way out the message gives: a new journal adopts the index
    with pytest.warns(MemoryIndexWarning, match="holds 50 memories"):
        store = MemoryStore.local(tmp_path, encoder=HashEncoder(32))
    with store:
        assert repair(store).adopted == 50 and doctor(store).ok


def test_reads_of_a_garbled_journal_name_it_and_the_way_out(tmp_path: Path) -> None:
    """Noise over other pages: the open (its index check), a search's word half and the reads raised
    SQLite's own ``DatabaseError`` until 2026-12-07 (a reviewer); each names the file and the way out."""
    clean = tmp_path / "clean"
    with MemoryStore.local(clean, encoder=HashEncoder(32)) as store:
        MemoryWriter(store, **RAW_TEXT).add_turns(
            [{"user_id": "ana", "role": "user", "content": f"fact {i} mango{i} " + "filler words here " * 20}
             for i in range(400)])  # fmt: skip
    size = (clean / "journal.sqlite3").stat().st_size
    failures = []
    for trial in range(4):
        damaged = tmp_path / f"damaged{trial}"
        shutil.copytree(clean, damaged)
        with (damaged / "journal.sqlite3").open("r+b") as file:
            file.seek(size // 2 + trial * 65536)
            file.write(random.Random(trial).randbytes(8192))
        try:
            with MemoryStore.local(damaged, encoder=HashEncoder(32)) as store:
                memory = store.for_user("ana")
                memory.count()
                memory.all()
                memory.search(RecallQuery("mango7 filler"), 3)
        except JournalDamagedError as error:
            assert "move the file aside" in str(error)
            failures.append(trial)
    assert failures  # at least one of the places is read (all four, at the time of writing)


def test_a_journal_that_is_not_sqlite_is_named_at_open(tmp_path: Path) -> None:
    with MemoryStore.local(tmp_path, encoder=HashEncoder(32)) as store:
        MemoryWriter(store, **RAW_TEXT).add_turn("ada", "user", "remember the milk")
    path = tmp_path / "journal.sqlite3"
    path.write_bytes(b"not a database" * 100)
    for sidecar in tmp_path.glob("journal.sqlite3-*"):
        sidecar.unlink()
    with pytest.raises(JournalDamagedError, match="journal.sqlite3 is damaged .*file is not a database"):
        MemoryStore.local(tmp_path, encoder=HashEncoder(32))


def test_a_fresh_rebuild_of_a_journal_with_no_memory_gives_an_empty_index(tmp_path: Path) -> None:
    # Chroma made no folder for the empty new index, and the swap failed with a bare OSError after the
    # old folder was moved aside (until 2026-12-07, a reviewer).
    path = tmp_path / "mem"
    with MemoryStore.local(path, encoder=HashEncoder(16)) as store:
        report = rebuild_index(store, fresh=True, progress=False)
        assert report.indexed == 0 and not report.failed
    assert not (path / "chroma.old").exists() and not (path / "chroma.rebuild").exists()
    with MemoryStore.local(path, encoder=HashEncoder(16)) as store:
        MemoryWriter(store, **RAW_TEXT).add_turn("u", "user", "written after the rebuild")
        assert [c.text for c in store.for_user("u").search(RecallQuery("rebuild"), 1)] == ["written after the rebuild"]
        assert doctor(store).ok


@pytest.mark.parametrize("fresh", [False, True])
def test_a_rebuild_with_another_encoder_needs_reencode(tmp_path: Path, fresh: bool) -> None:
    # `recall rebuild-index --encoder hash-64` (a typo) on a hash-16 store re-encoded every memory with
    # hash-64, and later commands refused the store's own encoder (until 2026-12-07, a reviewer).
    path = tmp_path / "mem"
    with MemoryStore.local(path, encoder=HashEncoder(16)) as store:
        MemoryWriter(store, **RAW_TEXT).add_turn("u", "user", "my cat is called Tom")
    with MemoryStore.local(path, encoder=HashEncoder(64)) as store:
        with pytest.raises(EncoderMismatchError, match="'hash-16', not by this store's encoder 'hash-64'.*reencode"):
            rebuild_index(store, fresh=fresh, progress=False)
        assert store.journal.encoders() == ["hash-16"]
        report = rebuild_index(store, reencode=True, fresh=fresh, progress=False)
        assert report.reencoded == 1 and store.journal.encoders() == ["hash-64"]

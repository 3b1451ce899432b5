"""Fault injection: the memory is killed, corrupted, interrupted, poisoned and raced for real.

What must hold (README, "What the memory guarantees"): an acknowledged turn is never lost; a
damaged or lost index is reported with the command that heals it, never as a crash or as
"no memory"; "forget" holds from the moment it is called; a rebuild never leaves a user worse
off; concurrent writers never share a turn position. Each test injects one fault: a SIGKILL
of a writer, bytes over an HNSW file, a deleted index, a crash inside ``forget``, a row an
older recall let in. Four writer processes on one ``chroma run`` server are in
tests/integration/test_memory_server.py.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import sqlite3
import threading
import time
import warnings
from pathlib import Path

import pytest

from recall_core.cli import main
from recall_core.memory import (
    EncoderOutputError,
    HashEncoder,
    JournalWriteError,
    MemoryIndexWarning,
    MemoryStore,
    MemoryUnavailableError,
    MemoryWriter,
    doctor,
    rebuild_index,
    repair,
)
from recall_core.memory.index import collection_name
from recall_core.memory.journal import PENDING, Journal, JournalRow
from recall_core.memory.journal.schema import enter_wal
from recall_core.memory.upkeep.probe import probe_collections
from tests.helpers.memories import RAW_TEXT
from tests.helpers.processes import child, run_child

DIM = 32


def open_store(path: Path) -> MemoryStore:
    return MemoryStore.local(path, encoder=HashEncoder(DIM))


def texts(memory) -> list[str]:
    return sorted(record.text for record in memory.all())


def top(candidates) -> list[tuple[str, float]]:
    """Ids and cosines (to 4 places: an index rebuilt in Chroma's log or its graph differs in the 7th)."""
    return [(c.id, round(c.score, 4)) for c in candidates]


# -- a writer killed mid-batch --------------------------------------------------------------


def test_sigkill_of_a_writer_mid_batch_loses_no_acknowledged_turn(tmp_path: Path) -> None:
    writer = child(tmp_path, """
        store = MemoryStore.local(sys.argv[1], encoder=HashEncoder(32))
        writer = MemoryWriter(store, **RAW_TEXT)
        for batch in range(10_000):
            writer.add_turns([{"user_id": "u", "role": "user", "content": f"batch {batch} turn {i} about kites"}
                              for i in range(25)])
            print(batch, flush=True)  # acknowledged: add_turns returned
    """, str(tmp_path / "mem"))
    acknowledged = -1
    while acknowledged < 3:
        line = writer.stdout.readline()
        assert line, writer.stderr.read()[-2000:]
        acknowledged = int(line)
    os.kill(writer.pid, signal.SIGKILL)  # in the middle of the next batch, or between two
    writer.wait(timeout=30)
    acknowledged = max([acknowledged, *(int(line) for line in writer.stdout.read().split())])

    store = open_store(tmp_path / "mem")  # the dead writer's lock is free again
    promised = {f"batch {b} turn {i} about kites" for b in range(acknowledged + 1) for i in range(25)}
    journaled = {row.text for row in store.journal.rows("u")}
    assert promised <= journaled
    repair(store)
    assert doctor(store).ok
    assert promised <= set(texts(store.for_user("u")))
    assert store.for_user("u").search("batch 0 turn 7 about kites", 1)[0].text == "batch 0 turn 7 about kites"
    store.close()


# -- processes opening one fresh journal at once -------------------------------------------


def test_a_fresh_journal_waits_for_another_process_lock_instead_of_failing(tmp_path: Path) -> None:
    """Switching a fresh file to WAL fails at once, without SQLite's busy handler, while another
    connection holds its write lock: the journal must wait for it, within its timeout."""
    path = tmp_path / "journal.sqlite3"
    other = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
    other.execute("CREATE TABLE held (x)")
    other.execute("BEGIN IMMEDIATE")
    releases = threading.Timer(0.3, other.execute, ("COMMIT",))
    releases.start()
    started = time.monotonic()
    journal = Journal(path)
    assert time.monotonic() - started >= 0.25  # it waited for the lock, then opened
    assert journal._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    journal.close()
    releases.join()
    other.close()


def test_a_lock_held_past_the_timeout_still_fails_loudly(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    other = sqlite3.connect(str(path), isolation_level=None)
    other.execute("CREATE TABLE held (x)")
    other.execute("BEGIN IMMEDIATE")
    db = sqlite3.connect(str(path), isolation_level=None, timeout=0.1)
    started = time.monotonic()
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        enter_wal(db, 0.2)
    assert 0.15 <= time.monotonic() - started < 5  # it retried until the timeout, then gave up
    db.close()
    other.execute("ROLLBACK")
    other.close()


def test_writers_starting_together_on_a_fresh_journal_all_open_and_lose_nothing(tmp_path: Path) -> None:
    """Several processes (a server's workers, writers started by one script) open the same new
    journal in the same instant and each writes a turn: none fails, none is lost."""
    path = tmp_path / "journal.sqlite3"
    start = time.time() + 2.0  # children take about 0.6 s to import the memory
    writers = [child(tmp_path, """
        from recall_core.memory.journal import PENDING, Journal, JournalRow
        while time.time() < float(sys.argv[2]):
            pass
        journal = Journal(sys.argv[1])
        n = sys.argv[3]
        journal.insert([JournalRow(id=f"turn-{n}", user_id="u", session_id="s", role="user",
                                   text=f"writer {n} keeps bees", timestamp="", turn_index=int(n),
                                   chunk_index=0, n_chunks=1)])
        print("acknowledged", flush=True)
    """, str(path), str(start), str(n)) for n in range(8)]
    outputs = [writer.communicate(timeout=120) for writer in writers]
    assert [writer.returncode for writer in writers] == [0] * 8, [err[-500:] for _, err in outputs]
    journal = Journal(path)
    assert sorted(row.text for row in journal.rows("u")) == sorted(f"writer {n} keeps bees" for n in range(8))
    journal.close()


# -- a lost index ---------------------------------------------------------------------------


@pytest.mark.parametrize("loss", ["folder deleted", "chroma.sqlite3 truncated"])
def test_a_lost_index_is_reported_not_answered_as_no_memory(tmp_path: Path, loss: str) -> None:
    with open_store(tmp_path / "mem") as store:
        writer = MemoryWriter(store, **RAW_TEXT)
        writer.add_turns([{"user_id": "ada", "role": "user", "content": f"fact {i} about lighthouses"} for i in range(40)])
        expected = top(store.for_user("ada").search("fact 7 about lighthouses", 3))
    chroma = tmp_path / "mem" / "chroma"
    if loss == "folder deleted":
        shutil.rmtree(chroma)
    else:
        os.truncate(chroma / "chroma.sqlite3", (chroma / "chroma.sqlite3").stat().st_size // 2)
    with pytest.warns(MemoryIndexWarning, match="recall doctor --repair|recall rebuild-index --fresh"):
        store = open_store(tmp_path / "mem")
    memory = store.for_user("ada")
    with pytest.raises(MemoryUnavailableError, match="recall doctor --repair|rebuild-index --fresh"):
        memory.search("fact 7 about lighthouses", 3)
    assert not doctor(store).ok
    rebuild_index(store, fresh=True, progress=False)
    assert top(memory.search("fact 7 about lighthouses", 3)) == expected
    assert doctor(store).ok
    store.close()
    with warnings.catch_warnings():
        warnings.simplefilter("error", MemoryIndexWarning)
        open_store(tmp_path / "mem").close()  # healed: no warning at the next open


# -- a damaged HNSW file --------------------------------------------------------------------


def _big_store(path: Path) -> tuple[list, list]:
    """``big`` has 1,001 memories, enough for Chroma to persist an HNSW graph; ``small`` has 3."""
    with open_store(path) as store:
        writer = MemoryWriter(store, **RAW_TEXT)
        writer.add_turns([{"user_id": "big", "role": "user", "content": f"note {i} on topic {i % 17}"} for i in range(1001)])
        writer.add_turns([{"user_id": "small", "role": "user", "content": f"small note {i}"} for i in range(3)])
        return (
            top(store.for_user("big").search("note 5 on topic 5", 3)),
            top(store.for_user("small").search("small note 1", 2)),
        )


def _segment(path: Path, user_id: str) -> Path:
    """The HNSW folder of a user's memories (Chroma's own tables say which)."""
    db = sqlite3.connect(f"file:{path / 'chroma' / 'chroma.sqlite3'}?mode=ro", uri=True)
    (folder,) = db.execute(
        "SELECT s.id FROM segments s JOIN collections c ON c.id = s.collection WHERE s.scope = 'VECTOR' AND c.name = ?",
        (collection_name(user_id),),
    ).fetchone()
    db.close()
    return path / "chroma" / folder


def _damage(level0: Path, damage: str) -> None:
    size = level0.stat().st_size
    if damage == "garbled":
        level0.write_bytes(os.urandom(size))
    elif damage in ("zeroed", "nan"):  # what a crash leaves: a block of zeros (or NaN) mid-file
        with level0.open("r+b") as file:
            file.seek(size // 4)
            file.write(bytes(size // 4) if damage == "zeroed" else b"\x00\x00\xc0\x7f" * (size // 16))
    else:
        os.truncate(level0, size // 2)


def test_one_element_zeroed_whole_is_damage(tmp_path: Path) -> None:
    """Its label is 0, which Chroma never gives (a third reviewer: it passed the check of 710d480)."""
    from recall_core.memory.upkeep.segments import _HEADER, HEADER, LEVEL0, check_segment

    path = tmp_path / "mem"
    _big_store(path)
    segment = _segment(path, "big")
    element = _HEADER.unpack_from((segment / HEADER).read_bytes())[4]
    assert check_segment(segment) is None
    with (segment / LEVEL0).open("r+b") as file:
        file.seek(500 * element)
        file.write(bytes(element))
    assert "label" in (check_segment(segment) or "")


def test_a_zero_vector_the_writer_took_is_no_damage(tmp_path: Path) -> None:
    """An encoder may give the zero vector (a bag of words with no known word): the first check of
    vectors called such a healthy graph garbled and refused its user (a second reviewer)."""

    class ZeroForOk(HashEncoder):
        def encode(self, texts, batch_size=64):
            vectors = super().encode(texts, batch_size)
            vectors[[i for i, text in enumerate(texts) if text.strip() == "ok"]] = 0
            return vectors

    encoder = ZeroForOk(DIM, name="zero-for-ok")
    with MemoryStore.local(tmp_path, encoder=encoder) as store:
        writer = MemoryWriter(store, **RAW_TEXT)
        writer.add_turn("ana", "user", "ok")
        writer.add_turns([{"user_id": "ana", "role": "user", "content": f"note {i} on topic {i % 17}"} for i in range(1001)])
    with MemoryStore.local(tmp_path, encoder=encoder) as store:
        assert doctor(store, probe=False).ok
        assert store.for_user("ana").search("note 5 on topic 5", 2)


def test_chroma_crashes_on_a_garbled_graph_and_the_probe_survives_it(tmp_path: Path) -> None:
    """Why the checks exist: the first search of a garbled graph kills the process that runs it."""
    path = tmp_path / "mem"
    _big_store(path)
    _damage(_segment(path, "big") / "data_level0.bin", "garbled")
    found = probe_collections(path / "chroma")
    assert "crashed the process (SIGSEGV)" in found[collection_name("big")]
    assert collection_name("small") not in found  # the probe went on after the crash


@pytest.mark.parametrize("damage", ["garbled", "truncated", "zeroed", "nan"])
def test_a_damaged_hnsw_file_fences_off_its_user_and_never_crashes(tmp_path: Path, damage: str, capsys) -> None:
    """A block of zeros or NaN over the vectors passed the checks and gave wrong results without a
    word until 2026-12-07 (a reviewer: 6 of 20 queries' top 3 as before, `recall doctor` OK)."""
    path = tmp_path / "mem"
    big_expected, small_expected = _big_store(path)
    _damage(_segment(path, "big") / "data_level0.bin", damage)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        store = open_store(path)
    # Before the checks: a SIGSEGV here (garbled), or wrong neighbours without a word (truncated).
    with pytest.raises(MemoryUnavailableError, match="user 'big'.*damaged.*recall rebuild-index --fresh"):
        store.for_user("big").search("note 5 on topic 5", 3)
    assert [str(w.message) for w in caught if w.category is MemoryIndexWarning and "damaged" in str(w.message)]
    assert top(store.for_user("small").search("small note 1", 2)) == small_expected
    report = doctor(store)
    assert not report.ok and [u.user_id for u in report.users if u.damaged] == ["big"]
    assert "DAMAGED: user 'big'" in report.summary() and "rebuild-index --fresh" in report.summary()
    store.close()

    # `recall doctor` (file check + a child probe) says what is wrong and what to run; exit 1, not 139.
    with pytest.warns(MemoryIndexWarning):
        assert main(["doctor", "--store", str(path), "--encoder", f"hash-{DIM}"]) == 1
    out = capsys.readouterr().out
    assert "DAMAGED: user 'big'" in out and "recall rebuild-index --fresh" in out

    with pytest.warns(MemoryIndexWarning):
        store = open_store(path)
    rebuild_index(store, fresh=True, progress=False)
    assert top(store.for_user("big").search("note 5 on topic 5", 3)) == big_expected
    assert doctor(store, probe=True).ok
    store.close()


def test_doctor_repair_rebuilds_only_the_damaged_user(tmp_path: Path) -> None:
    path = tmp_path / "mem"
    big_expected, small_expected = _big_store(path)
    _damage(_segment(path, "big") / "data_level0.bin", "garbled")
    with pytest.warns(MemoryIndexWarning):
        store = open_store(path)
    result = repair(store)
    assert (result.indexed, result.failed) == (1001, {})
    assert top(store.for_user("big").search("note 5 on topic 5", 3)) == big_expected
    assert top(store.for_user("small").search("small note 1", 2)) == small_expected
    assert doctor(store).ok
    store.close()


# -- an interrupted forget, a delete while the index is down --------------------------------


def test_forget_holds_at_once_after_a_crash_between_tombstones_and_index(tmp_path: Path) -> None:
    path = tmp_path / "mem"
    with open_store(path) as store:
        writer = MemoryWriter(store, **RAW_TEXT)
        forgotten = writer.add_turn("eve", "user", "my bank PIN is 4321")
        writer.add_turn("eve", "user", "I live in Porto")
        writer.add_turn("ann", "user", "my PIN is my own")
    crash = child(tmp_path, """
        from recall_core.memory.index import ChromaIndex
        ChromaIndex.drop_user = lambda self, user_id: os.kill(os.getpid(), signal.SIGKILL)
        store = MemoryStore.local(sys.argv[1], encoder=HashEncoder(32))
        store.for_user("eve").forget()
    """, str(path))
    assert crash.wait(timeout=120) == -signal.SIGKILL, crash.stderr.read()[-2000:]

    store = open_store(path)
    eve = store.for_user("eve")
    assert store.index.count("eve") == 2  # the index still holds both...
    assert eve.count() == 0 and eve.get(forgotten[0]) is None  # ...and no read shows them
    assert eve.search("what is my PIN", 3) == [] and eve.list() == [] and eve.all() == []
    assert eve.get_many(forgotten) == []
    kept = eve.add("I moved to Lisbon")  # written after the forget: visible, the rest still hidden
    assert [r.text for r in eve.all()] == ["I moved to Lisbon"] and eve.count() == 1
    assert [c.id for c in eve.search("PIN Porto Lisbon", 5)] == kept
    assert texts(store.for_user("ann")) == ["my PIN is my own"]
    repair(store)
    assert doctor(store).ok and store.index.count("eve") == 1
    store.close()


@pytest.mark.parametrize("handle", ["stale", "none"])
def test_a_collection_lost_behind_the_store_is_indexed_again_at_the_next_write(tmp_path: Path, handle: str) -> None:
    """The index loses a user's collection (a Chroma server that restarted empty; here, deleted
    behind the store's back): the next write of that user makes a new one, and must index the
    journal's memories of theirs again, not leave searches finding only the newest turn. "stale":
    the store still holds the lost collection's handle; "none": a new store finds no collection."""
    store = open_store(tmp_path / "mem")
    writer = MemoryWriter(store, **RAW_TEXT)
    writer.add_turns([{"user_id": "ada", "role": "user", "content": f"fact {i} about lighthouses"} for i in range(10)])
    writer.add_turn("bob", "user", "bob keeps bees")
    expected = top(store.for_user("ada").search("fact 7 about lighthouses", 3))
    store.index.client().delete_collection(collection_name("ada"))
    if handle == "none":
        store.close()
        store = open_store(tmp_path / "mem")
        writer = MemoryWriter(store, **RAW_TEXT)
    with pytest.warns(MemoryIndexWarning, match="no collection for user 'ada'.*indexing their 10 memories again"):
        writer.add_turn("ada", "user", "fact 10 about lighthouses")
    memory = store.for_user("ada")
    assert memory.count() == 11 and store.index.count("ada") == 11
    assert top(memory.search("fact 7 about lighthouses", 3)) == expected
    assert doctor(store).ok
    with warnings.catch_warnings():
        warnings.simplefilter("error", MemoryIndexWarning)
        writer.add_turn("bob", "user", "bob sells honey")  # bob's collection was never lost: no warning
        writer.add_turn("ada", "user", "fact 11 about lighthouses")  # healed: said once
    assert store.index.count("bob") == 2 and store.index.count("ada") == 12
    store.close()


def test_a_forget_during_the_re_indexing_of_a_lost_collection_waits_and_is_not_undone(tmp_path: Path) -> None:
    """The re-indexing of a lost collection holds the journal's write lock: a forget from another
    thread that starts while it runs waits for it, then forgets everything, the re-indexed
    memories too. (Without the lock the forget ran in between, and its memories came back.)"""
    store = open_store(tmp_path / "mem")
    writer = MemoryWriter(store, **RAW_TEXT)
    writer.add_turns([{"user_id": "ada", "role": "user", "content": f"ada secret {i}"} for i in range(5)])
    store.index.client().delete_collection(collection_name("ada"))
    forgetter = threading.Thread(target=lambda: store.for_user("ada").forget())
    embed, calls = writer.embed, []

    def embed_then_forget(rows):  # the second call is the re-indexing's, after it read the journal
        calls.append(len(rows))
        if len(calls) == 2:
            forgetter.start()
            time.sleep(0.5)  # the forget has reached the journal's lock by now
        return embed(rows)

    writer.embed = embed_then_forget  # type: ignore[method-assign]
    with pytest.warns(MemoryIndexWarning, match="indexing their 5 memories again"):
        writer.add_turn("ada", "user", "ada secret 5")
    forgetter.join(timeout=60)
    assert calls == [1, 5] and not forgetter.is_alive()
    assert store.journal.count("ada") == 0 and store.index.count("ada") == 0
    assert store.for_user("ada").search("ada secret", 10) == [] and doctor(store).ok
    store.close()


def test_a_refused_commit_leaves_no_transaction_open(tmp_path: Path) -> None:
    """SQLite can refuse a COMMIT (a full disk) and leave the transaction open; the journal rolls it
    back, so the call's rows are not there and the next write of the same journal works."""
    journal = Journal(tmp_path / "journal.sqlite3")
    connection = journal._db

    class RefusingCommit:
        def __getattr__(self, name: str):
            return getattr(connection, name)

        def execute(self, sql: str, *args):
            if sql == "COMMIT":
                raise sqlite3.OperationalError("database or disk is full (injected)")
            return connection.execute(sql, *args)

    def row(n: int) -> JournalRow:
        return JournalRow(id=f"turn-{n}", user_id="u", session_id="s", role="user", text=f"turn {n}",
                          timestamp="2026-12-06T10:00:00", turn_index=n, chunk_index=0, n_chunks=1)  # fmt: skip

    journal._db = RefusingCommit()  # type: ignore[assignment]
    with pytest.raises(sqlite3.OperationalError, match="injected"):
        journal.insert([row(0)])
    journal._db = connection
    assert not connection.in_transaction
    journal.insert([row(1)])
    assert [r.id for r in journal.rows("u")] == ["turn-1"]
    journal.close()


def test_a_full_disk_refuses_a_turn_cleanly_or_keeps_it_and_the_store_goes_on_once_there_is_room(tmp_path: Path) -> None:
    """A full disk, made real in a child by a file-size limit (RLIMIT_FSIZE, SIGXFSZ ignored: a write
    that would grow a file fails as on a full disk). Before, SQLite's "database or disk is full"
    reached the caller raw, the same for a turn not written and for one already journaled.
    Now: refused at the journal, ``JournalWriteError`` says the turn was not written; refused
    after it (its vector), ``MemoryUnavailableError`` counts it safe. Once the limit is lifted the
    same store writes again, and ``repair`` leaves every acknowledged turn once and the refused
    one absent."""
    result = run_child(tmp_path, """
        import resource, sqlite3
        from pathlib import Path
        from recall_core.memory import JournalWriteError, MemoryUnavailableError, doctor, repair
        from recall_core.memory.journal import Journal
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        store = MemoryStore.local(sys.argv[1], encoder=HashEncoder(32))
        writer = MemoryWriter(store, **RAW_TEXT)
        for i in range(5):
            writer.add_turn("u", "user", f"turn {i}")
        hard = resource.getrlimit(resource.RLIMIT_FSIZE)[1]

        def full() -> None:  # no file of the store may grow from here on
            biggest = max(f.stat().st_size for f in Path(sys.argv[1]).rglob("*") if f.is_file())
            resource.setrlimit(resource.RLIMIT_FSIZE, (biggest, hard))

        def outcome(text: str) -> str:
            try:
                writer.add_turn("u", "user", text)
                return "written"
            except JournalWriteError as error:
                return "refused: " + str(error)
            except MemoryUnavailableError as error:
                return "safe: " + str(error)
            except sqlite3.Error as error:
                return "raw: " + repr(error)
            finally:
                resource.setrlimit(resource.RLIMIT_FSIZE, (hard, hard))

        full()
        print(outcome("refused at the journal"))
        set_vectors = Journal.set_vectors
        Journal.set_vectors = lambda self, *a: (full(), set_vectors(self, *a))[1]
        print(outcome("journaled, its vector refused"))
        Journal.set_vectors = set_vectors
        print(outcome("after the disk was freed"))
        repair(store)
        print("ok" if doctor(store).ok else doctor(store).summary())
        print(sorted(row.text for row in store.journal.rows("u")))
        print(store.for_user("u").count())
    """, str(tmp_path / "mem"))
    assert result.returncode == 0, result.stderr[-3000:]
    refused, safe, freed, ok, journaled, count = result.stdout.strip().splitlines()
    assert refused.startswith("refused: ") and "journal.sqlite3 could not be written" in refused, refused
    assert "the turn of this call was not written" in refused and "free on its disk" in refused, refused
    assert safe.startswith("safe: ") and "1 memories are safe in the journal" in safe, safe
    assert (freed, ok) == ("written", "ok")
    expected = sorted([f"turn {i}" for i in range(5)] + ["journaled, its vector refused", "after the disk was freed"])
    assert journaled == repr(expected) and count == "7"


def test_a_write_bigger_than_one_step_while_the_index_is_down_journals_every_turn(tmp_path: Path) -> None:
    """The writer indexes 1,024 turns at a time; every step is journaled before any is indexed, so
    an unreachable index leaves all of the call's turns safe, and the error counts all of them."""
    store = open_store(tmp_path / "mem")
    writer = MemoryWriter(store, **RAW_TEXT)

    def down(*args: object, **kwargs: object) -> None:
        raise MemoryUnavailableError("the index is down (injected)")

    write = store.index.write
    store.index.write = down  # type: ignore[method-assign]
    turns = [{"user_id": "u", "role": "user", "content": f"fact number {i} about kites"} for i in range(1500)]
    with pytest.raises(MemoryUnavailableError, match="1500 memories are safe in the journal"):
        writer.add_turns(turns)
    assert store.journal.count("u") == 1500
    store.index.write = write  # type: ignore[method-assign]
    repair(store)
    assert doctor(store).ok and store.index.count("u") == 1500
    store.close()


# -- a row an older recall let in -----------------------------------------------------------


def test_a_poisoned_metadata_key_blocks_neither_writes_nor_recovery(tmp_path: Path) -> None:
    store = open_store(tmp_path / "mem")
    writer = MemoryWriter(store, **RAW_TEXT)
    for key in ("$x", "#x", "chroma:document", "chroma:x"):
        with pytest.raises(ValueError, match=re.escape(f"metadata key '{key}'")):
            writer.add_turn("aaron", "user", "hello", metadata={key: 1})
    for user in ("aaron", "bob", "zed"):
        writer.add_turns([{"user_id": user, "role": "user", "content": f"{user} fact {i}"} for i in range(5)])
    # What an older recall wrote: the row is journaled, Chroma refuses it, it stays pending.
    vector = HashEncoder(DIM).encode(["aaron says hello"])[0]
    store.journal.insert([JournalRow(
        id="poisoned", user_id="aaron", session_id="default", role="user", text="aaron says hello",
        timestamp="2024-01-01T00:00:00+00:00", turn_index=99, chunk_index=0, n_chunks=1,
        extra={"$x": 1, "#y": 2, "chroma:document": "z", "nan": float("nan"), "big": 2**70, "fine": "kept"},
        embedding=vector, encoder=f"hash-{DIM}",
    )])  # fmt: skip
    before = {user: texts(store.for_user(user)) for user in ("aaron", "bob", "zed")}

    result = rebuild_index(store, fresh=True, progress=False)
    assert result.failed == {} and result.indexed == 16
    assert texts(store.for_user("aaron")) == sorted([*before["aaron"], "aaron says hello"])
    assert {user: texts(store.for_user(user)) for user in ("bob", "zed")} == {u: before[u] for u in ("bob", "zed")}
    record = store.for_user("aaron").get("poisoned")
    assert record.metadata == {"fine": "kept"}  # what the index can hold of it (the journal keeps all)
    assert doctor(store).ok  # and not "mismatched" forever
    assert rebuild_index(store, progress=False).failed == {}
    assert repair(store).failed == {}
    store.close()


def test_a_rebuild_that_fails_for_one_user_leaves_that_user_as_before(tmp_path: Path) -> None:
    store = open_store(tmp_path / "mem")
    writer = MemoryWriter(store, **RAW_TEXT)
    for user in ("aaron", "bob", "zed"):
        writer.add_turns([{"user_id": user, "role": "user", "content": f"{user} fact {i}"} for i in range(4)])
    before = {user: texts(store.for_user(user)) for user in ("aaron", "bob", "zed")}
    write = store.index.write

    def refuse_bob(rows, *args, **kwargs):
        if rows and rows[0].user_id == "bob":
            raise RuntimeError("injected failure while rebuilding bob")
        return write(rows, *args, **kwargs)

    store.index.write = refuse_bob  # type: ignore[method-assign]
    result = rebuild_index(store, progress=False)
    store.index.write = write  # type: ignore[method-assign]
    assert list(result.failed) == ["bob"] and "injected failure" in result.failed["bob"]
    assert result.users == 2
    assert {user: texts(store.for_user(user)) for user in ("aaron", "bob", "zed")} == before
    assert doctor(store).ok  # no staging collection left behind
    store.close()


@pytest.mark.parametrize("action", ["delete", "forget"])
def test_a_journal_that_cannot_drop_tombstones_warns_and_the_delete_still_holds(tmp_path: Path, monkeypatch, action) -> None:
    """A delete's or forget's last step drops the journal's tombstones after the index dropped the
    rows. On a full disk SQLite refuses it; until 2026-12-06 its raw ``OperationalError`` reached
    the caller, as if nothing had been deleted. Now it warns: the memories are hidden and gone
    from the index, and ``repair`` drops the tombstones once there is room."""
    with MemoryStore.local(tmp_path / "mem", encoder=HashEncoder(DIM)) as store:
        writer = MemoryWriter(store, **RAW_TEXT)
        ids = [i for n in range(3) for i in writer.add_turn("u", "user", f"secret {n}")]
        writer.add_turn("v", "user", "v stays")

        def full(*args, **kwargs):
            raise sqlite3.OperationalError("database or disk is full")

        monkeypatch.setattr(Journal, "purge" if action == "delete" else "purge_user", full)
        with pytest.warns(RuntimeWarning, match="could not drop their tombstones .*disk is full.*recall doctor --repair"):
            done = writer.delete("u", ids[:2]) if action == "delete" else writer.forget("u")
        assert done == (2 if action == "delete" else 3)
        left = ["secret 2"] if action == "delete" else []
        assert [c.text for c in store.for_user("u").search("secret", 5)] == left
        assert doctor(store).totals()["deleting"] == (2 if action == "delete" else 3)
        monkeypatch.undo()
        repair(store)
        report = doctor(store)
        assert report.ok and store.journal.count("u") == len(left) and store.for_user("v").count() == 1


def test_an_update_of_a_memory_the_journal_lacks_on_a_full_disk_is_a_journal_write_error(tmp_path: Path, monkeypatch) -> None:
    """``update`` of a memory only the index holds (another client's, or a journal restored from an
    older copy) first copies it into the journal. SQLite refusing that copy reached the caller as
    its raw ``OperationalError``; now it is ``JournalWriteError`` saying nothing was changed."""
    with MemoryStore.local(tmp_path / "mem", encoder=HashEncoder(DIM)) as store:
        writer = MemoryWriter(store, **RAW_TEXT)
        (memory_id,) = writer.add_turn("u", "user", "I live in Porto.")
        with store.journal.transaction() as db:  # the index alone holds it now
            db.execute("DELETE FROM memories WHERE id=?", (memory_id,))

        def full(*args, **kwargs):
            raise sqlite3.OperationalError("database or disk is full")

        monkeypatch.setattr(Journal, "insert", full)
        with pytest.raises(JournalWriteError, match="was not copied into the journal, and nothing was changed"):
            writer.update("u", memory_id, "I live in Lisbon.")
        monkeypatch.undo()
        assert [c.text for c in store.for_user("u").search("live", 1)] == ["I live in Porto."]
        writer.update("u", memory_id, "I live in Lisbon.")
        assert [c.text for c in store.for_user("u").search("live", 1)] == ["I live in Lisbon."]


def test_a_user_s_next_write_indexes_the_turns_an_outage_left_pending(tmp_path: Path, monkeypatch) -> None:
    """A turn written while the index was unreachable is journaled (acknowledged) and pending. Until
    2026-12-06 it stayed out of every search until `repair`; now the user's next write indexes it."""
    with MemoryStore.local(tmp_path / "mem", encoder=HashEncoder(DIM)) as store:
        writer = MemoryWriter(store, **RAW_TEXT)
        writer.add_turn("u", "user", "before the outage")
        write = store.index.write

        def down(*args, **kwargs):
            raise MemoryUnavailableError("the index is down")

        monkeypatch.setattr(store.index, "write", down)
        with pytest.raises(MemoryUnavailableError, match="or by the user's next write"):
            writer.add_turn("u", "user", "said during the outage")
        monkeypatch.setattr(store.index, "write", write)
        assert store.journal.count("u", "pending") == 1  # (no search here: a search catches up too, test_memory_catch_up.py)
        writer.add_turn("v", "user", "another user's write")  # catches up its own user only
        assert doctor(store).totals()["pending"] == 1
        writer.add_turn("u", "user", "after the outage")
        assert sorted(r.text for r in store.for_user("u").all()) == [
            "after the outage", "before the outage", "said during the outage"]
        assert doctor(store).ok


class _FaultyEncoder(HashEncoder):
    """A custom encoder that breaks on some texts: NaN for "poison", a row short for "short"."""

    broken = True

    def encode(self, texts, batch_size=64):
        vectors = super().encode(texts, batch_size)
        if self.broken and any("poison" in t for t in texts):
            vectors[[i for i, t in enumerate(texts) if "poison" in t]] = float("nan")
        if self.broken and any("short" in t for t in texts):
            vectors = vectors[:-1]
        return vectors


@pytest.mark.parametrize("text", ["a poison pill", "a short one"])
def test_an_encoder_s_bad_output_is_never_indexed_and_the_user_s_memory_goes_on(tmp_path: Path, text: str) -> None:
    """Until 2026-12-06 one NaN vector from a custom encoder reached Chroma, and every later search
    and write of that user raised Chroma's InvalidArgumentError, after a reopen too; a short
    output raised an IndexError. Now nothing of it is stored: the turn waits as pending, named."""
    encoder = _FaultyEncoder(DIM, name="faulty")
    with MemoryStore.local(tmp_path / "mem", encoder=encoder) as store:
        memory = store.for_user("u")
        memory.add("I like green tea.")
        with pytest.raises(EncoderOutputError, match=r"'faulty'.*kept in the journal .* as pending"):
            memory.add(text)
        assert [c.text for c in memory.search("green tea", 5)] == ["I like green tea."]
        memory.add("I also like coffee.")  # its catch-up meets the bad text again, and goes on
        assert sorted(c.text for c in memory.search("like", 5)) == ["I also like coffee.", "I like green tea."]
        with pytest.raises(EncoderOutputError, match="'faulty'"):
            memory.search(text, 5)  # a query the encoder fails on is not sent to the index
        assert doctor(store).totals()["pending"] == 1
        encoder.broken = False
        repair(store)
        assert doctor(store).ok and text in [c.text for c in memory.search(text, 5)]


class _SlowEncoder(HashEncoder):
    """Fails while ``fail``; calls ``during`` (once) while it encodes a text holding "secret"."""

    during = None
    fail = False

    def encode(self, texts, batch_size=64):
        if self.fail:
            raise RuntimeError("the encoder's service is down")
        if self.during is not None and any("secret" in t for t in texts):
            during, self.during = self.during, None
            during()
        return super().encode(texts, batch_size)


@pytest.mark.parametrize("removal", ["forget", "delete"])
def test_a_forget_during_a_write_s_catch_up_is_not_undone(tmp_path: Path, removal: str) -> None:
    """A forget or delete that runs while a write's catch-up embeds the user's pending memory: the
    memory does not come back (2026-12-06: the catch-up held the journal's lock, and the forget
    waited; since 2026-12-07 it does not hold it across the index write, which deadlocked against a
    server's heal, and marking the rows indexed takes the removed one back out)."""
    encoder = _SlowEncoder(DIM, name="slow")
    with MemoryStore.local(tmp_path / "mem", encoder=encoder) as store:
        memory = store.for_user("u")
        memory.add("an ordinary note")
        encoder.fail = True
        with pytest.raises(RuntimeError):
            memory.add("my secret bank pin is 4711")  # journaled, pending, without a vector
        encoder.fail = False
        assert [r.text for r in store.journal.rows("u", (PENDING,))] == ["my secret bank pin is 4711"]
        removed: list[int] = []
        secret = [r.id for r in store.journal.rows("u") if "secret" in r.text]

        def remove() -> None:
            removed.append(store.for_user("u").forget() if removal == "forget" else store.for_user("u").delete(secret))

        other = threading.Thread(target=remove)
        encoder.during = other.start  # while the catch-up embeds the pending secret
        memory.add("a later note")
        other.join(30)
        assert removed and removed[0] >= 1
        assert store.for_user("u").get(secret[0]) is None
        assert "my secret bank pin is 4711" not in [c.text for c in store.for_user("u").search("bank pin", 5)]
        assert store.index.count("u") == store.for_user("u").count()

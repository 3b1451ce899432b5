"""What a ``forget`` leaves in a local store's files: nothing of the user, once the store is closed.

Chroma 1.x deletes a collection from its database but keeps the collection's HNSW folder
(``chroma/<segment uuid>/``: the vectors, and in ``data_level0.bin``'s unused part whatever the
process's heap held; CI once found a forgotten turn's words there). A vector is derived from the
user's words (embedding inversion recovers text from it), so the folder must go with the user;
so must the words FTS5 keeps in the journal's word index until its segments merge.

The folders and Chroma's free pages go at the store's close (or its next opening), when no Chroma
client of the process has the files open: a VACUUM beside another thread's write corrupted
``chroma.sqlite3`` (this process's Chroma holds it through another copy of SQLite, whose locks
Python's sqlite3 cannot see), and a folder listed beside another thread's first write of a new
user was taken for a deleted one.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from recall_core.memory import HashEncoder, MemoryStore, doctor, repair
from recall_core.memory.backends import SCRUB_MARK

DIM = 32
ADA = ["ada's note: my password is hunter2", "I was diagnosed with leukaemia", "my lover is called Zebediah"]
ADA_WORDS = [b"hunter2", b"leukaemia", b"zebediah", b"Zebediah", b"diagnosed"]


def _segment_folders(path: Path) -> set[str]:
    return {p.name for p in (path / "chroma").iterdir() if p.is_dir()}


def _add(store: MemoryStore, user_id: str, texts: list[str]) -> None:
    store.writer.add_turns([{"user_id": user_id, "role": "user", "content": text} for text in texts])


def _files_holding(path: Path, needles: list[bytes]) -> list[str]:
    return [str(f.relative_to(path)) for f in path.rglob("*") if f.is_file() and any(n in f.read_bytes() for n in needles)]


def test_forget_leaves_no_folder_and_no_word_of_the_user_once_closed(tmp_path: Path) -> None:
    encoder, path = HashEncoder(DIM), tmp_path / "mem"
    with MemoryStore.local(path, encoder=encoder) as store:
        _add(store, "ada", ADA + [f"ada's filler note {i}" for i in range(30)])
        _add(store, "bo", [f"bo's note {i}" for i in range(30)])
        before = _segment_folders(path)
        assert len(before) == 2
        assert store.for_user("ada").forget() == 33
        assert (path / SCRUB_MARK).exists()  # the folder and the free pages wait for the close
        assert store.for_user("bo").search("bo's note 3", 1)[0].text == "bo's note 3"
    after = _segment_folders(path)
    assert len(after) == 1 and after < before  # bo's folder stays
    assert _files_holding(path, ADA_WORDS) == []  # single words: FTS5 keeps terms, not phrases
    assert not (path / SCRUB_MARK).exists()
    with MemoryStore.local(path, encoder=encoder) as store:
        assert store.for_user("bo").count() == 30 and store.for_user("ada").count() == 0
        assert store.for_user("bo").search("note", 3) and doctor(store).ok


def test_a_user_written_again_after_a_forget_is_searched_from_the_new_folder(tmp_path: Path) -> None:
    encoder, path = HashEncoder(DIM), tmp_path / "mem"
    with MemoryStore.local(path, encoder=encoder) as store:
        _add(store, "ada", [f"old note {i}" for i in range(20)])
        store.for_user("ada").forget()
        store.for_user("ada").add("my cat is called Tom")
        assert [c.text for c in store.for_user("ada").search("my cat is called Tom", 5)] == ["my cat is called Tom"]
    with MemoryStore.local(path, encoder=encoder) as store:
        assert store.for_user("ada").count() == 1 and doctor(store).ok
        assert [c.text for c in store.for_user("ada").search("my cat is called Tom", 5)] == ["my cat is called Tom"]


def test_forgets_beside_another_thread_s_writes_leave_the_index_whole(tmp_path: Path) -> None:
    """A forget's VACUUM ran while another thread wrote through Chroma: `database disk image is
    malformed`, and the store did not open again (a reviewer's script, 3 runs of 3)."""
    encoder, path = HashEncoder(DIM), tmp_path / "mem"
    errors: list[str] = []
    with MemoryStore.local(path, encoder=encoder) as store:
        def writes() -> None:
            try:
                for n in range(40):
                    _add(store, f"new{n}", [f"fact {i}" for i in range(3)])
            except Exception as exc:  # noqa: BLE001 - the test reports it
                errors.append(repr(exc))

        writer = threading.Thread(target=writes)
        writer.start()
        for _ in range(15):
            _add(store, "tmp", [f"tmp {i}" for i in range(3)])
            store.for_user("tmp").forget()
        writer.join(120)
        assert errors == []
    database = sqlite3.connect(path / "chroma" / "chroma.sqlite3")
    assert database.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    database.close()
    with MemoryStore.local(path, encoder=encoder) as store:
        assert [store.for_user(f"new{n}").count() for n in range(40)] == [3] * 40
        assert store.for_user("tmp").count() == 0 and doctor(store).ok


def test_repair_has_the_folders_an_earlier_release_s_forget_left_removed(tmp_path: Path) -> None:
    """A store forgotten in before 2026-12-07 still holds the folder: `repair` has it removed at the
    close (and only folders no collection uses: the database decides)."""
    encoder, path = HashEncoder(DIM), tmp_path / "mem"
    with MemoryStore.local(path, encoder=encoder) as store:
        _add(store, "ada", [f"note {i}" for i in range(20)])
        store.for_user("bo").add("bo's note")
        kept = _segment_folders(path)
    left = path / "chroma" / "6f1c2a3e-0d4b-4e9a-9c1f-2b7d8e9f0a1b"  # what an old forget left
    left.mkdir()
    (left / "data_level0.bin").write_bytes(b"a forgotten user's vectors")
    (path / "chroma" / "not-a-segment").mkdir()  # not named like a segment: never touched
    with MemoryStore.local(path, encoder=encoder) as store:
        repair(store)
    assert _segment_folders(path) == kept | {"not-a-segment"}
    with MemoryStore.local(path, encoder=encoder) as store:
        assert store.for_user("ada").count() == 20 and store.for_user("bo").count() == 1


def test_a_process_killed_before_its_close_has_the_scrub_done_at_the_next_opening(tmp_path: Path) -> None:
    encoder, path = HashEncoder(DIM), tmp_path / "mem"
    with MemoryStore.local(path, encoder=encoder) as store:
        store.for_user("bo").add("bo's note")
        kept = _segment_folders(path)
    left = path / "chroma" / "6f1c2a3e-0d4b-4e9a-9c1f-2b7d8e9f0a1b"
    left.mkdir()
    (path / SCRUB_MARK).touch()  # what a forget in a process killed before its close leaves
    with MemoryStore.local(path, encoder=encoder) as store:
        assert _segment_folders(path) == kept and not (path / SCRUB_MARK).exists()
        assert store.for_user("bo").count() == 1


def test_the_folders_are_kept_when_chroma_s_database_cannot_be_read(tmp_path: Path, monkeypatch) -> None:
    """No folder is called unused unless the database says so: an unreadable one removes nothing,
    warns, and leaves the mark for the next close or opening."""
    from recall_core.memory import backends
    from recall_core.memory.upkeep import segments

    encoder, path = HashEncoder(DIM), tmp_path / "mem"
    with MemoryStore.local(path, encoder=encoder) as store:
        _add(store, "ada", [f"note {i}" for i in range(20)])
        kept = _segment_folders(path)
    left = path / "chroma" / "6f1c2a3e-0d4b-4e9a-9c1f-2b7d8e9f0a1b"
    left.mkdir()
    (path / SCRUB_MARK).touch()

    def unreadable(_path):
        raise sqlite3.DatabaseError("file is not a database")

    monkeypatch.setattr(segments, "settle_hot_journal", unreadable)
    with pytest.warns(RuntimeWarning, match="next close or opening"):
        backends.scrub_if_due(path)
    assert _segment_folders(path) == kept | {left.name} and (path / SCRUB_MARK).exists()

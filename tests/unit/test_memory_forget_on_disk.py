"""What a ``forget`` leaves in a local store's files: nothing of the user.

Chroma 1.x deletes a collection from its database but keeps the collection's HNSW folder
(``chroma/<segment uuid>/``: the vectors, and in ``data_level0.bin``'s unused part whatever the
process's heap held; CI once found a forgotten turn's words there). A vector is derived from the
user's words (embedding inversion recovers text from it), so the folder must go with the user.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from recall_core.memory import HashEncoder, MemoryStore, doctor, repair

DIM = 32


def _segment_folders(path: Path) -> set[str]:
    return {p.name for p in (path / "chroma").iterdir() if p.is_dir()}


def _add(store: MemoryStore, user_id: str, texts: list[str]) -> None:
    store.writer.add_turns([{"user_id": user_id, "role": "user", "content": text} for text in texts])


def _files_holding(path: Path, needles: list[bytes]) -> list[str]:
    return [str(f.relative_to(path)) for f in path.rglob("*") if f.is_file() and any(n in f.read_bytes() for n in needles)]


def test_forget_removes_the_user_s_segment_folder_and_keeps_the_others(tmp_path: Path) -> None:
    encoder, path = HashEncoder(DIM), tmp_path / "mem"
    ada = [f"ada's note {i}: my bank pin is 47{i:02d}" for i in range(30)]
    with MemoryStore.local(path, encoder=encoder) as store:
        _add(store, "ada", ada)
        _add(store, "bo", [f"bo's note {i}" for i in range(30)])
        before = _segment_folders(path)
        assert len(before) == 2
        assert store.for_user("ada").forget() == 30
        after = _segment_folders(path)
        assert len(after) == 1 and after < before  # bo's folder stays
        assert store.for_user("bo").search("bo's note 3", 1)[0].text == "bo's note 3"
    assert _files_holding(path, [b"bank pin is 47"]) == []
    with MemoryStore.local(path, encoder=encoder) as store:
        assert store.for_user("bo").count() == 30 and store.for_user("ada").count() == 0
        assert doctor(store).ok


def test_a_user_written_again_after_a_forget_is_searched_from_the_new_folder(tmp_path: Path) -> None:
    encoder, path = HashEncoder(DIM), tmp_path / "mem"
    with MemoryStore.local(path, encoder=encoder) as store:
        _add(store, "ada", [f"old note {i}" for i in range(20)])
        store.for_user("ada").forget()
        store.for_user("ada").add("my cat is called Tom")
        assert [c.text for c in store.for_user("ada").search("my cat is called Tom", 5)] == ["my cat is called Tom"]
    with MemoryStore.local(path, encoder=encoder) as store:
        assert store.for_user("ada").count() == 1 and doctor(store).ok


def test_repair_removes_the_folders_an_earlier_release_s_forget_left(tmp_path: Path) -> None:
    """A store forgotten in before 2026-12-07 still holds the folder: `repair` removes it (and
    only folders no collection uses: the database decides)."""
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
        assert store.for_user("ada").count() == 20 and store.for_user("bo").count() == 1


def test_the_folders_are_kept_when_chroma_s_database_cannot_be_read(tmp_path: Path, monkeypatch) -> None:
    """No folder is called unused unless the database says so: an unreadable one removes nothing
    (a warning names what finishes it)."""
    import pytest

    from recall_core.memory import backends
    from recall_core.memory.upkeep import segments

    encoder, path = HashEncoder(DIM), tmp_path / "mem"
    with MemoryStore.local(path, encoder=encoder) as store:
        _add(store, "ada", [f"note {i}" for i in range(20)])
        kept = _segment_folders(path)

        def unreadable(_path):
            raise sqlite3.DatabaseError("file is not a database")

        monkeypatch.setattr(segments, "settle_hot_journal", unreadable)
        with pytest.warns(RuntimeWarning, match="recall doctor --repair"):
            backends.scrub_deleted(path, vacuum=False)
        assert _segment_folders(path) == kept

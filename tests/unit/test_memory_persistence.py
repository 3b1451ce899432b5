"""Write, close, reopen in a fresh process (spawned interpreter) and check everything again."""

from __future__ import annotations

from pathlib import Path

from recall_core.memory import HashEncoder, MemoryStore
from tests.helpers.stores import snapshot, snapshot_in_child, write_all


def test_persistence_local_in_another_process(tmp_path: Path) -> None:
    store = MemoryStore.local(tmp_path / "mem", encoder=HashEncoder(32))
    write_all(store)
    expected = snapshot(store)
    assert expected["users"]["alice"]["count"] == 3 and expected["users"]["bob"]["count"] == 2
    store.close()
    assert snapshot_in_child(tmp_path, {"kind": "local", "path": str(tmp_path / "mem")}) == expected
    # And back here, in a new store object, after the child let go of the lock.
    with MemoryStore.local(tmp_path / "mem", encoder=HashEncoder(32)) as again:
        assert snapshot(again) == expected

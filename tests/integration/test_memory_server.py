"""The memory on a real ``chroma run`` server: read back by another process, written by four
processes at once, through an outage, with a proxy's headers. Each test starts its own server.

The backend-independent suite runs on a server too: tests/property/test_memory_suite.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recall_core.memory import HashEncoder, MemoryStore, MemoryUnavailableError, MemoryWriter, doctor, repair
from recall_core.memory.chroma_server import ChromaServer
from recall_core.types import RecallQuery
from tests.helpers.memories import RAW_TEXT
from tests.helpers.processes import child
from tests.helpers.stores import snapshot, snapshot_in_child, write_all

DIM = 32


@pytest.mark.server
def test_persistence_server_in_another_process(tmp_path: Path) -> None:
    with ChromaServer(tmp_path / "server-data") as server:
        store = MemoryStore.server(port=server.port, encoder=HashEncoder(32), journal_path=tmp_path / "j.sqlite3")
        write_all(store)
        expected = snapshot(store)
        store.close()
        spec = {"kind": "server", "port": server.port, "journal": str(tmp_path / "j.sqlite3")}
        assert snapshot_in_child(tmp_path, spec) == expected


@pytest.mark.server
def test_concurrent_writers_on_a_server_never_share_a_turn_position(tmp_path: Path) -> None:
    turns, writers = 40, 4
    with ChromaServer(tmp_path / "server-data") as server:
        go = tmp_path / "go"
        spec = json.dumps({"port": server.port, "journal": str(tmp_path / "journal.sqlite3"), "go": str(go)})
        children = [child(tmp_path, f"""
            import json
            spec = json.loads(sys.argv[1])
            store = MemoryStore.server(port=spec["port"], encoder=HashEncoder(32), journal_path=spec["journal"])
            writer = MemoryWriter(store, **RAW_TEXT)
            print("ready", flush=True)
            while not os.path.exists(spec["go"]):
                time.sleep(0.01)
            for i in range({turns}):
                writer.add_turn("u", "user", f"writer {{sys.argv[2]}} turn {{i}}", session_id="s")
            store.close()
        """, spec, str(n)) for n in range(writers)]
        for process in children:
            assert process.stdout.readline().strip() == "ready", process.stderr.read()[-2000:]
        go.touch()
        for process in children:
            assert process.wait(timeout=300) == 0, process.stderr.read()[-2000:]
        store = MemoryStore.server(port=server.port, encoder=HashEncoder(DIM), journal_path=tmp_path / "journal.sqlite3")
        positions = sorted(row.turn_index for row in store.journal.rows("u"))
        assert positions == list(range(turns * writers))
        assert store.for_user("u").count() == turns * writers
        store.close()


@pytest.mark.server
def test_server_going_down_and_coming_back(tmp_path: Path) -> None:
    with ChromaServer(tmp_path / "server-data") as server:
        store = MemoryStore.server(port=server.port, encoder=HashEncoder(32), journal_path=tmp_path / "j.sqlite3", timeout=5)
        writer = MemoryWriter(store, **RAW_TEXT)
        kept = writer.add_turn("u", "user", "indexed before the outage")
        doomed = writer.add_turn("u", "user", "to be deleted during the outage")
        writer.add_turn("v", "user", "user v says goodbye")
        server.stop()

        with pytest.raises(MemoryUnavailableError):
            writer.add_turn("u", "user", "written during the outage")
        with pytest.raises(MemoryUnavailableError):
            store.for_user("u").search(RecallQuery("outage"), 3)
        with pytest.raises(MemoryUnavailableError):
            store.for_user("u").delete(doomed)
        with pytest.raises(MemoryUnavailableError):
            store.for_user("v").forget()

        server.start()  # back on the same port and data
        report = doctor(store)
        totals = report.totals()
        assert (totals["pending"], totals["deleting"]) == (1, 2)
        repair(store, report)
        assert doctor(store).ok
        memory = store.for_user("u")
        assert sorted(r.text for r in memory.all()) == ["indexed before the outage", "written during the outage"]
        assert memory.get(kept[0]) is not None and memory.get(doomed[0]) is None
        assert store.for_user("v").count() == 0  # the interrupted forget was finished, not undone
        store.close()


@pytest.mark.server
def test_server_headers_are_sent(tmp_path: Path) -> None:
    """Headers (a proxy's token) travel with every request; the 1.x server itself ignores them."""
    with ChromaServer(tmp_path / "data") as server:
        store = MemoryStore.server(
            port=server.port, headers={"Authorization": "Bearer secret"}, encoder=HashEncoder(8),
            journal_path=tmp_path / "j.sqlite3",
        )  # fmt: skip
        MemoryWriter(store, **RAW_TEXT).add_turn("u", "user", "with a token")
        client = store.index.client()
        assert client._server._session.headers["Authorization"] == "Bearer secret"
        assert store.for_user("u").count() == 1
        store.close()

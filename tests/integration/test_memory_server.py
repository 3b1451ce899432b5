"""The memory on a real ``chroma run`` server: read back by another process, written by four
processes at once, through an outage, through a restart that lost its data, with a proxy's headers. Each test starts its own server.

The backend-independent suite runs on a server too: tests/property/test_memory_suite.py.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from recall_core.memory import (
    HashEncoder,
    MemoryIndexWarning,
    MemoryStore,
    MemoryUnavailableError,
    MemoryWriter,
    doctor,
    repair,
)
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
def test_a_server_that_restarts_empty_gets_every_client_s_memories_back(tmp_path: Path) -> None:
    """A server without persistence (its data folder lost) restarts empty. Two clients, each with
    its own journal, wrote memories of one user before. The first to write again makes the
    collection anew and indexes its journal's memories again; the other's searches warn that
    they see only part of theirs, and its next write indexes the rest again. Nothing is lost."""
    with ChromaServer(tmp_path / "server-data") as server:
        stores = [MemoryStore.server(port=server.port, encoder=HashEncoder(DIM), journal_path=tmp_path / f"{name}.sqlite3",
                                     timeout=5) for name in ("a", "b")]  # fmt: skip
        writers = [MemoryWriter(store, **RAW_TEXT) for store in stores]
        for n, writer in enumerate(writers):
            writer.add_turns([{"user_id": "u", "role": "user", "content": f"client {n} fact {i}"} for i in range(5 - 2 * n)])
        assert stores[0].for_user("u").count() == 8
        server.stop()
        shutil.rmtree(tmp_path / "server-data")
        server.start()

        with pytest.warns(MemoryIndexWarning, match="indexing their 3 memories again"):
            writers[1].add_turn("u", "user", "client 1 after the restart")
        with pytest.warns(MemoryIndexWarning, match="holds 4 memories of user 'u', the journal 5"):
            partial = stores[0].for_user("u").search(RecallQuery("client 0 fact 2"), 10)
        assert sorted(c.text for c in partial) == ["client 1 after the restart", "client 1 fact 0", "client 1 fact 1", "client 1 fact 2"]
        with pytest.warns(MemoryIndexWarning, match="indexing their 5 memories again"):
            writers[0].add_turn("u", "user", "client 0 after the restart")
        found = stores[0].for_user("u").search(RecallQuery("client 0 fact 2"), 10)
        assert len(found) == 10 and found[0].text == "client 0 fact 2"
        for store in stores:  # each journal's memories are all in the index (the other's are extra there)
            assert [user.missing for user in doctor(store).users] == [[]]
        for store in stores:
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

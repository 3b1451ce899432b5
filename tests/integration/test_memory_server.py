"""The memory on a real ``chroma run`` server: read back by another process, written by four
processes at once, through an outage, through a restart that lost its data, beside another client's
forget, with a proxy's headers. Each test starts its own server.

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


def _clients(port: int, tmp_path: Path, names: tuple[str, ...] = ("a", "b")) -> tuple[list, list]:
    stores = [MemoryStore.server(port=port, encoder=HashEncoder(DIM), journal_path=tmp_path / f"{name}.sqlite3",
                                 timeout=5) for name in names]  # fmt: skip
    return stores, [MemoryWriter(store, **RAW_TEXT) for store in stores]


@pytest.mark.server
def test_a_server_that_restarts_empty_is_named_at_the_next_write_and_repair_brings_everything_back(
    tmp_path: Path,
) -> None:
    """A server without persistence (its data folder lost) restarts empty. Two clients, each with
    its own journal, wrote memories of one user before. The first write after the restart makes
    the collection anew; before, it did so without a word, and searches found only the new turn.
    Now it warns, naming the repair (a server's client cannot tell a lost server from another
    client's forget, so it does not index its journal again by itself). Each client's repair
    brings its memories back."""
    with ChromaServer(tmp_path / "server-data") as server:
        stores, writers = _clients(server.port, tmp_path)
        for n, writer in enumerate(writers):
            writer.add_turns([{"user_id": "u", "role": "user", "content": f"client {n} fact {i}"} for i in range(5 - 2 * n)])
        server.stop()
        shutil.rmtree(tmp_path / "server-data")
        server.start()

        with pytest.warns(MemoryIndexWarning, match="no collection for user 'u', though this client's journal holds 3"):
            writers[1].add_turn("u", "user", "client 1 after the restart")
        assert stores[0].for_user("u").count() == 1
        for store in stores:
            repair(store)
        found = stores[0].for_user("u").search(RecallQuery("client 0 fact 2"), 20)
        assert len(found) == 9 and found[0].text == "client 0 fact 2"
        for store in stores:  # each journal's memories are all in the index (the other's are extra there)
            assert [user.missing for user in doctor(store).users] == [[]]
            store.close()


@pytest.mark.server
def test_another_client_s_forget_is_not_undone_by_a_write_that_finds_the_collection_gone(tmp_path: Path) -> None:
    """Client a forgets user v, whose memories client b wrote. b's next write of v finds no
    collection, as after a server's restart: it warns, and does not index its old memories of v
    again (that would bring back what the user asked to forget)."""
    with ChromaServer(tmp_path / "server-data") as server:
        stores, writers = _clients(server.port, tmp_path)
        writers[1].add_turns([{"user_id": "v", "role": "user", "content": f"v secret {i}"} for i in range(3)])
        stores[0].for_user("v").forget()
        with pytest.warns(MemoryIndexWarning, match="or another client forgot the user"):
            writers[1].add_turn("v", "user", "v says hello again")
        assert [c.text for c in stores[0].for_user("v").search(RecallQuery("v secret"), 10)] == ["v says hello again"]
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

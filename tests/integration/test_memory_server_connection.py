"""A Chroma server and its clients: a server that hangs after its heartbeat, bad connection
arguments, a database the server lost, another client's encoder, another client's export. Each
test starts its own server (or a stand-in that answers only the heartbeat)."""

from __future__ import annotations

import http.server
import shutil
import threading
import time
from pathlib import Path

import pytest

from recall_core.memory import (
    EncoderMismatchError,
    HashEncoder,
    MemoryIndexWarning,
    MemoryStore,
    MemoryUnavailableError,
    MemoryWriter,
)
from recall_core.memory.chroma_server import ChromaServer
from recall_core.processes import free_port
from recall_core.types import RecallQuery
from tests.helpers.memories import RAW_TEXT


class _HeartbeatOnly(http.server.BaseHTTPRequestHandler):
    """Answers the heartbeat, then hangs on every other request (a proxy whose upstream froze)."""

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        if self.path.startswith("/api/v2/heartbeat"):
            body = b'{"nanosecond heartbeat": 1}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        else:
            time.sleep(120)

    do_POST = do_GET

    def log_message(self, *args: object) -> None:
        pass


@pytest.mark.server
def test_a_server_that_hangs_after_its_heartbeat_fails_the_write_instead_of_hanging_it(tmp_path: Path) -> None:
    # Chroma's client asked for the identity, tenant and database with no timeout while it was being
    # built: the write hung for good, and every later call of the process waited behind it.
    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), _HeartbeatOnly)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        store = MemoryStore.server(port=server.server_address[1], encoder=HashEncoder(8),
                                   journal_path=tmp_path / "j.sqlite3", timeout=1)  # fmt: skip
        outcome: list[BaseException | None] = []

        def write() -> None:
            try:
                MemoryWriter(store, **RAW_TEXT).add_turn("u", "user", "kept in the journal")
                outcome.append(None)
            except BaseException as exc:  # noqa: BLE001 - handed to the test
                outcome.append(exc)

        thread = threading.Thread(target=write, daemon=True)
        thread.start()
        thread.join(60)  # not a timing check: without the timeout it never ends
        assert outcome, "the write hung on a server that answered only its heartbeat"
        assert isinstance(outcome[0], MemoryUnavailableError) and "unreachable" in str(outcome[0])
        assert [r.text for r in store.journal.rows("u")] == ["kept in the journal"]
    finally:
        server.shutdown()


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"headers": {"Authorization": None}}, "headers"),
        ({"headers": {"X-Token": 5}}, "headers"),
        ({"headers": "Bearer x"}, "headers"),
        ({"ssl": "no"}, "ssl"),
        ({"tenant": 5}, "tenant"),
        ({"tenant": " "}, "tenant"),
        ({"database": ""}, "database"),
        ({"database": "a/b"}, "database"),
        # the header and name rules the server (or httpx) holds them to, found only at the first write
        # until 2026-12-07, the day the check came (a reviewer)
        ({"headers": {"X-Token": "tökén"}}, "headers"),
        ({"headers": {"X-Token": "a\nb"}}, "headers"),
        ({"headers": {"Bad Name": "x"}}, "headers"),
        ({"database": "db"}, "database"),
        ({"database": "my db"}, "database"),
        ({"database": "x?y"}, "database"),
        ({"database": "a..b"}, "database"),  # Chroma's other rules (a reviewer, the same day)
        ({"database": "192.168.1.1"}, "database"),  # ("2024.12.07.01", Chroma takes it: not refused)
        ({"headers": {"X-Token": " abc"}}, "headers"),
        ({"headers": {"Content-Length": "3"}}, "headers"),
        ({"host": "http://127.0.0.1"}, "host"),
    ],
)
def test_bad_connection_arguments_are_refused_before_anything_is_written(tmp_path: Path, kwargs, field) -> None:
    # Until 2026-12-07 each showed at the first write, after the turn was journaled, as a raw TypeError
    # or a Chroma error (or as a server that could not be reached, for a repair that never works).
    with pytest.raises(ValueError, match=f"^{field}[ :]"):
        MemoryStore.server(port=1, encoder=HashEncoder(8), journal_path=tmp_path / "j.sqlite3", **kwargs)
    assert not (tmp_path / "j.sqlite3").exists()


@pytest.mark.server
def test_another_client_s_encoder_size_is_refused_before_the_turn_is_journaled(tmp_path: Path) -> None:
    with ChromaServer(tmp_path / "data") as server:
        first = MemoryStore.server(port=server.port, encoder=HashEncoder(16), journal_path=tmp_path / "a.sqlite3")
        MemoryWriter(first, **RAW_TEXT).add_turn("u", "user", "written with 16 dimensions")
        second = MemoryStore.server(port=server.port, encoder=HashEncoder(8), journal_path=tmp_path / "b.sqlite3")
        with pytest.raises(EncoderMismatchError, match="Nothing was written"):
            MemoryWriter(second, **RAW_TEXT).add_turn("u", "user", "written with 8 dimensions")
        # (until 2026-12-07 it was journaled, then refused by the index: pending for good)
        assert list(second.journal.rows("u")) == []
        MemoryWriter(second, **RAW_TEXT).add_turn("w", "user", "another user is fine")
        first.close()
        second.close()


@pytest.mark.server
def test_a_database_the_server_lost_is_named_and_the_journal_heals_once_it_is_made_again(tmp_path: Path) -> None:
    import chromadb
    from chromadb.config import Settings

    def make_namespace(port: int) -> None:
        admin = chromadb.AdminClient(Settings(chroma_api_impl="chromadb.api.fastapi.FastAPI",
                                              chroma_server_host="127.0.0.1", chroma_server_http_port=port))  # fmt: skip
        admin.create_tenant("acme")
        admin.create_database("mem", tenant="acme")

    server = ChromaServer(tmp_path / "data").start()
    try:
        make_namespace(server.port)
        store = MemoryStore.server(port=server.port, encoder=HashEncoder(8), journal_path=tmp_path / "j.sqlite3",
                                   tenant="acme", database="mem")  # fmt: skip
        writer = MemoryWriter(store, **RAW_TEXT)
        writer.add_turn("u", "user", "my cat is called Tom")
        server.stop()
        shutil.rmtree(tmp_path / "data")
        server.start()
        # (until 2026-12-07 Chroma's raw InvalidArgumentError, on a write already journaled)
        with pytest.raises(MemoryUnavailableError, match="lost this store's tenant or database"):
            writer.add_turn("u", "user", "my dog is called Rex")
        make_namespace(server.port)
        found = {c.text for c in store.for_user("u").search(RecallQuery("called"), 3)}
        assert found == {"my cat is called Tom", "my dog is called Rex"}
        store.close()
    finally:
        server.stop()


@pytest.mark.server
def test_a_second_client_exports_what_the_first_wrote(tmp_path: Path) -> None:
    # The export read this client's journal only: a backup taken from a second machine (or after
    # RECALL_HOME was cleared) came out empty with exit 0 (until 2026-12-07, a reviewer).
    with ChromaServer(tmp_path / "data") as server:
        first = MemoryStore.server(port=server.port, encoder=HashEncoder(8), journal_path=tmp_path / "a.sqlite3")
        MemoryWriter(first, **RAW_TEXT).add_turns([
            {"user_id": "ada", "role": "user", "content": "My cat is called Tom.", "session_id": "s1"},
            {"user_id": "ada", "role": "assistant", "content": "Noted.", "session_id": "s1"},
        ])  # fmt: skip
        second = MemoryStore.server(port=server.port, encoder=HashEncoder(8), journal_path=tmp_path / "b.sqlite3")
        MemoryWriter(second, **RAW_TEXT).add_turn("ada", "user", "I live in Porto.", session_id="s2")
        exported = second.for_user("ada").export()
        assert [item["text"] for item in exported] == ["I live in Porto.", "My cat is called Tom.", "Noted."]
        with MemoryStore.local(tmp_path / "copy", encoder=HashEncoder(8)) as copy:
            copy.import_memories(exported, progress=False)
            assert sorted(r.text for r in copy.for_user("ada").all()) == sorted(i["text"] for i in exported)
        first.for_user("ada").delete([exported[1]["id"]])  # another client's delete: not exported any more
        assert [item["text"] for item in second.for_user("ada").export()] == ["I live in Porto.", "Noted."]
        # another client's change of a memory this client wrote: the server's copy, as a read gives it
        # (until 2026-12-07, the day the server's memories came into the export, the journal's older copy)
        MemoryWriter(second, **RAW_TEXT).put("ada", "city", "Ada lives in Porto.")
        MemoryWriter(first, **RAW_TEXT).put("ada", "city", "Ada lives in Lisbon now.")
        keyed = [item["text"] for item in second.for_user("ada").export() if item["key"] == "city"]
        assert keyed == ["Ada lives in Lisbon now."] == [second.for_user("ada").get_by_key("city").text]
        import chromadb

        from recall_core.memory.index import collection_name

        chromadb.HttpClient(host="127.0.0.1", port=server.port).delete_collection(collection_name("ada"))
        with pytest.warns(RuntimeWarning, match="the server holds no memories of user 'ada'"):
            kept = second.for_user("ada").export()  # the journal's, said (it raised until the same day)
        assert [item["text"] for item in kept] == ["I live in Porto.", "Ada lives in Porto."]
        server.stop()
        with pytest.raises(MemoryUnavailableError):  # rather than part of the memories
            second.for_user("ada").export()
        first.close()
        second.close()


@pytest.mark.server
def test_the_encoder_size_look_holds_no_journal_lock_and_waits_for_an_answer(tmp_path: Path, monkeypatch) -> None:
    # The look is a request: until 2026-12-07 (the day it came) it ran inside the journal's write
    # transaction, so a hung server held every other writer of the journal, and a look the server did
    # not answer counted as done, so that writer never looked again (a reviewer).
    import sqlite3

    with ChromaServer(tmp_path / "data") as server:
        first = MemoryStore.server(port=server.port, encoder=HashEncoder(16), journal_path=tmp_path / "a.sqlite3")
        MemoryWriter(first, **RAW_TEXT).add_turn("u", "user", "written with 16 dimensions")
        second = MemoryStore.server(port=server.port, encoder=HashEncoder(8), journal_path=tmp_path / "b.sqlite3",
                                    timeout=2)  # fmt: skip
        writer = MemoryWriter(second, **RAW_TEXT)
        looked = second.index.collection

        def look_unlocked(*args, **kwargs):
            other = sqlite3.connect(tmp_path / "b.sqlite3", timeout=0)
            try:
                other.execute("BEGIN IMMEDIATE")  # "database is locked" if the look held the write lock
                other.rollback()
            finally:
                other.close()
            return looked(*args, **kwargs)

        monkeypatch.setattr(second.index, "collection", look_unlocked)
        server.stop()
        asked: list[int] = []
        monkeypatch.setattr(writer, "index", lambda rows: asked.append(len(rows)))
        with pytest.raises(MemoryUnavailableError):  # no answer: journaled, as any write while it is down
            writer.add_turn("u", "user", "while the server was down")
        assert asked == []  # and not asked a second time to index it (a second timeout's wait, the same day)
        monkeypatch.undo()
        monkeypatch.setattr(second.index, "collection", look_unlocked)
        server.start()
        with pytest.raises(EncoderMismatchError, match="Nothing was written"):
            writer.add_turn("u", "user", "after it came back")
        assert [r.text for r in second.journal.rows("u")] == ["while the server was down"]
        first.close()
        second.close()


@pytest.mark.server
def test_an_export_read_while_another_client_deletes_leaves_out_only_what_was_deleted(tmp_path: Path, monkeypatch) -> None:
    # Pages by offset shifted under another client's delete: a memory nobody deleted was left out
    # (2026-12-07, the day the server's memories came into the export; a reviewer).
    from recall_core.memory.upkeep import transfer

    monkeypatch.setattr(transfer, "_PAGE", 2)
    with ChromaServer(tmp_path / "data") as server:
        first = MemoryStore.server(port=server.port, encoder=HashEncoder(8), journal_path=tmp_path / "a.sqlite3")
        ids = [i for turn in MemoryWriter(first, **RAW_TEXT).add_turns(
            [{"user_id": "ada", "role": "user", "content": f"memory {n}"} for n in range(6)]) for i in turn]  # fmt: skip
        second = MemoryStore.server(port=server.port, encoder=HashEncoder(8), journal_path=tmp_path / "b.sqlite3")
        deleted: list[str] = []

        def then_deleted(read):  # another client's delete just after the export's first read of the server
            def reading(*args, **kwargs):
                answer = read(*args, **kwargs)
                if not deleted:
                    deleted.append(ids[0])
                    second.for_user("ada").delete(ids[0])
                return answer

            return reading

        monkeypatch.setattr(first.index, "get", then_deleted(first.index.get))
        monkeypatch.setattr(first.index, "page", then_deleted(first.index.page))
        assert [item["text"] for item in first.for_user("ada").export()] == [f"memory {n}" for n in range(1, 6)]
        first.close()
        second.close()


@pytest.mark.server
def test_a_heal_counts_the_pending_memories_it_indexes_too(tmp_path: Path, monkeypatch) -> None:
    # The warning (and its progress bar's total) counted the indexed memories only, though the heal
    # indexes the pending ones as well (until 2026-12-07, a reviewer).
    server = ChromaServer(tmp_path / "data").start()
    try:
        store = MemoryStore.server(port=server.port, encoder=HashEncoder(8), journal_path=tmp_path / "j.sqlite3")
        writer = MemoryWriter(store, **RAW_TEXT)
        writer.add_turns([{"user_id": "u", "role": "user", "content": f"indexed {n}"} for n in range(3)])
        write = store.index.write
        monkeypatch.setattr(store.index, "write", lambda *a, **k: (_ for _ in ()).throw(MemoryUnavailableError("down")))
        with pytest.raises(MemoryUnavailableError):
            writer.add_turns([{"user_id": "u", "role": "user", "content": f"pending {n}"} for n in range(2)])
        monkeypatch.setattr(store.index, "write", write)
        server.stop()
        shutil.rmtree(tmp_path / "data")
        server.start()
        with pytest.warns(MemoryIndexWarning, match="3 memories of 1 user again, and 2 pending ones"):
            found = store.for_user("u").search(RecallQuery("indexed pending"), 5)
        assert len(found) == 5
        store.close()
    finally:
        server.stop()


@pytest.mark.parametrize("kwargs", [{"database": "2024.12.07.01"}, {"database": "v1.2.3.4"},
                                    {"headers": {"Host": "memory.example", "Connection": "close", "x": "Bearer a b"}}])
def test_names_and_headers_chroma_and_httpx_take_are_taken(tmp_path: Path, kwargs) -> None:
    # four dotted numbers that are no address, and a Host a proxy routes by, were refused (the same day)
    MemoryStore.server(port=1, encoder=HashEncoder(8), journal_path=tmp_path / "j.sqlite3", **kwargs).close()


@pytest.mark.server
def test_an_update_of_a_memory_only_the_hung_server_holds_waits_one_timeout(tmp_path: Path, monkeypatch) -> None:
    # The size look found the server down, then the update asked it again for the memory (a second
    # timeout's wait; the same day, a reviewer): it raises at once, nothing changed.
    with ChromaServer(tmp_path / "data") as server:
        first = MemoryStore.server(port=server.port, encoder=HashEncoder(8), journal_path=tmp_path / "a.sqlite3")
        [memory_id] = MemoryWriter(first, **RAW_TEXT).add_turn("u", "user", "written by the first client")
        second = MemoryStore.server(port=server.port, encoder=HashEncoder(8), journal_path=tmp_path / "b.sqlite3",
                                    timeout=2)  # fmt: skip
        writer = MemoryWriter(second, **RAW_TEXT)
        server.stop()
        monkeypatch.setattr(writer, "adopt", lambda *args: pytest.fail("asked the server again"))
        with pytest.raises(MemoryUnavailableError, match="Nothing was changed"):
            writer.update("u", memory_id, "changed while the server was down")
        first.close()
        second.close()

"""Write, close, reopen in a fresh process (spawned interpreter) and check everything again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from recall_core.memory import HashEncoder, MemoryStore, MemoryWriter
from recall_core.memory.chroma_server import ChromaServer
from recall_core.types import RecallQuery
from tests.helpers.memories import RAW_TEXT

os.environ.setdefault("HF_HUB_OFFLINE", "1")

TURNS = [
    ("alice", "user", "My sister Ana lives in Porto and teaches piano.", "s1"),
    ("alice", "assistant", "Noted: Ana, Porto, piano teacher.", "s1"),
    ("alice", "user", "I am allergic to peanuts.", "s2"),
    ("bob", "user", "My dog is called Biscuit.", "s1"),
    ("bob", "user", "I work night shifts at the harbour.", None),
]
QUERIES = ["where does Ana live", "peanuts allergy", "dog name", "night shifts"]

CHILD = textwrap.dedent(
    """
    import json, sys
    from recall_core.memory import HashEncoder, MemoryStore, doctor
    from recall_core.types import RecallQuery
    spec = json.load(open(sys.argv[1]))
    if spec["kind"] == "local":
        store = MemoryStore.local(spec["path"], encoder=HashEncoder(32))
    else:
        store = MemoryStore.server(port=spec["port"], encoder=HashEncoder(32), journal_path=spec["journal"])
    out = {"users": {}, "doctor_ok": doctor(store).ok}
    for user in ("alice", "bob"):
        memory = store.for_user(user)
        out["users"][user] = {
            "count": memory.count(),
            "records": [[r.id, r.text, r.role, r.session_id, r.turn_index, r.timestamp] for r in memory.all()],
            "search": {q: [[c.id, round(c.score, 5)] for c in memory.search(RecallQuery(q), 3)] for q in spec["queries"]},
        }
    store.close()
    json.dump(out, open(sys.argv[2], "w"))
    """
)


def snapshot(store: MemoryStore) -> dict:
    out: dict = {"users": {}, "doctor_ok": True}
    for user in ("alice", "bob"):
        memory = store.for_user(user)
        out["users"][user] = {
            "count": memory.count(),
            "records": [[r.id, r.text, r.role, r.session_id, r.turn_index, r.timestamp] for r in memory.all()],
            "search": {q: [[c.id, round(c.score, 5)] for c in memory.search(RecallQuery(q), 3)] for q in QUERIES},
        }
    return out


def run_child(tmp_path: Path, spec: dict) -> dict:
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    (tmp_path / "spec.json").write_text(json.dumps({**spec, "queries": QUERIES}))
    result = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "spec.json"), str(tmp_path / "out.json")],
        capture_output=True, text=True, timeout=120, env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads((tmp_path / "out.json").read_text())


def write_all(store: MemoryStore) -> None:
    writer = MemoryWriter(store, **RAW_TEXT)
    for user, role, content, session in TURNS:
        writer.add_turn(user, role, content, session_id=session)


def test_persistence_local_in_another_process(tmp_path: Path) -> None:
    store = MemoryStore.local(tmp_path / "mem", encoder=HashEncoder(32))
    write_all(store)
    expected = snapshot(store)
    assert expected["users"]["alice"]["count"] == 3 and expected["users"]["bob"]["count"] == 2
    store.close()
    assert run_child(tmp_path, {"kind": "local", "path": str(tmp_path / "mem")}) == expected
    # And back here, in a new store object, after the child let go of the lock.
    with MemoryStore.local(tmp_path / "mem", encoder=HashEncoder(32)) as again:
        assert snapshot(again) == expected


@pytest.mark.server
def test_persistence_server_in_another_process(tmp_path: Path) -> None:
    with ChromaServer(tmp_path / "server-data") as server:
        store = MemoryStore.server(port=server.port, encoder=HashEncoder(32), journal_path=tmp_path / "j.sqlite3")
        write_all(store)
        expected = snapshot(store)
        store.close()
        spec = {"kind": "server", "port": server.port, "journal": str(tmp_path / "j.sqlite3")}
        assert run_child(tmp_path, spec) == expected

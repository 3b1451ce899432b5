"""Two users' turns written to a store and read back whole (records and searches), to compare
what this store object, a new one, or another process sees."""

from __future__ import annotations

import json
from pathlib import Path

from recall_core.memory import MemoryStore, MemoryWriter
from recall_core.types import RecallQuery
from tests.helpers.memories import RAW_TEXT
from tests.helpers.processes import run_child

TURNS = [
    ("alice", "user", "My sister Ana lives in Porto and teaches piano.", "s1"),
    ("alice", "assistant", "Noted: Ana, Porto, piano teacher.", "s1"),
    ("alice", "user", "I am allergic to peanuts.", "s2"),
    ("bob", "user", "My dog is called Biscuit.", "s1"),
    ("bob", "user", "I work night shifts at the harbour.", None),
]
QUERIES = ["where does Ana live", "peanuts allergy", "dog name", "night shifts"]

#: The child's half of :func:`snapshot_in_child`: open the store its spec names, read it back.
READ_BACK = """
    import json
    from recall_core.memory import doctor
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


def write_all(store: MemoryStore) -> None:
    writer = MemoryWriter(store, **RAW_TEXT)
    for user, role, content, session in TURNS:
        writer.add_turn(user, role, content, session_id=session)


def snapshot(store: MemoryStore) -> dict:
    """Each user's count, records and top-3 searches, as :data:`READ_BACK` writes them."""
    out: dict = {"users": {}, "doctor_ok": True}
    for user in ("alice", "bob"):
        memory = store.for_user(user)
        out["users"][user] = {
            "count": memory.count(),
            "records": [[r.id, r.text, r.role, r.session_id, r.turn_index, r.timestamp] for r in memory.all()],
            "search": {q: [[c.id, round(c.score, 5)] for c in memory.search(RecallQuery(q), 3)] for q in QUERIES},
        }
    return out


def snapshot_in_child(tmp_path: Path, spec: dict) -> dict:
    """:func:`snapshot` of the store ``spec`` names, taken by a fresh Python process."""
    (tmp_path / "spec.json").write_text(json.dumps({**spec, "queries": QUERIES}))
    done = run_child(tmp_path, READ_BACK, str(tmp_path / "spec.json"), str(tmp_path / "out.json"))
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads((tmp_path / "out.json").read_text())

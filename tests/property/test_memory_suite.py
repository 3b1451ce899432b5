"""The memory suite, run on the embedded store and on a real `chroma run` server.

A hypothesis state machine over add/update/delete/forget checked against a dict model
(counts, texts, metadata, no duplicates, top-k against numpy brute force), user isolation
as a property, and the journal's rebuild giving identical search results. The inputs come
from strategies.py, the checks the machine calls from invariants.py.
"""

from __future__ import annotations

import os
import shutil
import uuid

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from recall_core.memory import (
    HashEncoder,
    MemoryIndexWarning,
    MemoryStore,
    MemoryUnavailableError,
    MemoryWriter,
    doctor,
    rebuild_index,
    repair,
)
from recall_core.memory.chroma_server import ChromaServer
from recall_core.memory.index import collection_name
from recall_core.types import Memory, MemoryCandidate, RecallQuery
from tests.helpers.memories import RAW_TEXT
from tests.property.invariants import assert_same_top_k, assert_store_matches_model, brute_force
from tests.property.strategies import WORDS, roles, sessions, texts

os.environ.setdefault("HF_HUB_OFFLINE", "1")

DIM = 32
BACKENDS = ["local", pytest.param("server", marks=pytest.mark.server)]


@pytest.fixture(params=BACKENDS)
def make_store(request: pytest.FixtureRequest, tmp_path):
    """A factory of fresh stores on the backend under test (closed at the end)."""
    opened: list[MemoryStore] = []

    def make(encoder: HashEncoder | None = None) -> MemoryStore:
        n = len(opened)
        encoder = encoder or HashEncoder(DIM)
        if request.param == "local":
            store = MemoryStore.local(tmp_path / f"store{n}", encoder=encoder, retrieval="vector", unit="turn")
        else:
            server = request.getfixturevalue("chroma_server")
            store = MemoryStore.server(
                port=server.port, encoder=encoder, journal_path=tmp_path / f"journal{n}.sqlite3", retrieval="vector",
                unit="turn",
            )
        opened.append(store)
        return store

    yield make
    for store in opened:
        store.close()


def top(candidates: list[MemoryCandidate]) -> tuple:
    """Scores in order, and every hit above the last score: members tied at the cut-off may
    come out of a rebuilt HNSW graph in another order, which is not a difference."""
    scores = [round(c.score, 5) for c in candidates]
    above = sorted(
        (c.id, c.text, tuple(sorted(c.metadata.items()))) for c in candidates if round(c.score, 5) > scores[-1]
    )
    return scores, above


class MemoryMachine(RuleBasedStateMachine):
    """Random add/update/delete/forget/search against a dict model of what each user has."""

    def __init__(self, store: MemoryStore) -> None:
        super().__init__()
        self.store = store
        self.writer = MemoryWriter(store, **RAW_TEXT)
        store.writer = self.writer  # updates compose what is searched as this writer's adds do
        prefix = uuid.uuid4().hex[:8]  # fresh users per example: the server is shared
        self.users = [f"{prefix}-{name}" for name in ("ann", "bob", "cy")]
        # user -> id -> (text, role, session, turn_index)
        self.model: dict[str, dict[str, tuple[str, str, str, int]]] = {u: {} for u in self.users}
        self.positional: set[str] = set()  # ids written at a given turn_index

    def _next_turn(self, user: str, session: str) -> int:
        indices = [t for (_, _, s, t) in self.model[user].values() if s == session]
        return max(indices) + 1 if indices else 0

    @initialize()
    def start(self) -> None:
        for user in self.users:
            assert self.store.for_user(user).count() == 0

    @rule(user=st.integers(0, 2), role=roles, content=texts, session=sessions)
    def add(self, user: int, role: str, content: str, session: str | None) -> None:
        name = self.users[user]
        session_id = session or "default"
        expected_turn = self._next_turn(name, session_id)
        ids = self.writer.add_turn(name, role, content, session_id=session)
        assert len(ids) == 1
        if ids[0] not in self.model[name]:
            self.model[name][ids[0]] = (content, role, session_id, expected_turn)

    @rule(user=st.integers(0, 2), role=roles, content=texts, session=sessions, turn_index=st.integers(0, 3))
    def add_at(self, user: int, role: str, content: str, session: str | None, turn_index: int) -> None:
        """A turn written at a given position: the same turn there again writes nothing, another
        one is refused and nothing is written (positions.py)."""
        name = self.users[user]
        session_id = session or "default"
        held = [(i, t, r) for i, (t, r, s, n) in self.model[name].items()
                if s == session_id and n == turn_index and i in self.positional]  # fmt: skip
        if held and (held[0][2] != role or held[0][1].split() != content.split()):
            with pytest.raises(ValueError, match=f"turn_index {turn_index} of session .* already holds another"):
                self.writer.add_turn(name, role, content, session_id=session, turn_index=turn_index)
            return
        ids = self.writer.add_turn(name, role, content, session_id=session, turn_index=turn_index)
        assert len(ids) == 1
        if held:
            assert ids == [held[0][0]]
        else:
            self.model[name][ids[0]] = (content, role, session_id, turn_index)
            self.positional.add(ids[0])

    def _has_memories(self) -> bool:
        return any(self.model.values())

    @precondition(_has_memories)
    @rule(data=st.data(), content=texts)
    def update(self, data: st.DataObject, content: str) -> None:
        user, memory_id = data.draw(st.sampled_from(sorted((u, i) for u in self.users for i in self.model[u])))
        self.store.for_user(user).update(memory_id, content)
        _, role, session, turn = self.model[user][memory_id]
        self.model[user][memory_id] = (content, role, session, turn)

    @precondition(_has_memories)
    @rule(data=st.data())
    def delete(self, data: st.DataObject) -> None:
        user, memory_id = data.draw(st.sampled_from(sorted((u, i) for u in self.users for i in self.model[u])))
        other = next(u for u in self.users if u != user)
        assert self.store.for_user(other).delete(memory_id) == 0  # another user's id: untouched
        assert self.store.for_user(user).delete(memory_id) == 1
        del self.model[user][memory_id]

    @rule(user=st.integers(0, 2))
    def forget(self, user: int) -> None:
        name = self.users[user]
        self.store.for_user(name).forget()
        self.model[name].clear()

    @rule(user=st.integers(0, 2), query=texts, k=st.integers(1, 6))
    def search(self, user: int, query: str, k: int) -> None:
        name = self.users[user]
        items = {i: t for i, (t, _, _, _) in self.model[name].items()}
        got = self.store.for_user(name).search(RecallQuery(query), k)
        assert_same_top_k(got, brute_force(self.store.encoder, query, items, k), items)
        for candidate in got:
            assert candidate.metadata["user_id"] == name

    @invariant()
    def matches_model(self) -> None:
        assert_store_matches_model(self.store, self.model)

    def teardown(self) -> None:
        report = doctor(self.store, users=self.users)
        assert report.ok, report.summary()


@pytest.mark.parametrize("make_store", BACKENDS, indirect=True)
def test_state_machine_against_dict_model(make_store) -> None:
    store = make_store()
    run_state_machine_as_test(
        lambda: MemoryMachine(store),
        settings=settings(max_examples=20, stateful_step_count=12, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow]),
    )  # fmt: skip


@pytest.mark.parametrize("make_store", BACKENDS, indirect=True)
def test_user_isolation_property(make_store) -> None:
    store = make_store()
    writer = MemoryWriter(store, **RAW_TEXT)

    @settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(turns=st.lists(st.tuples(st.integers(0, 2), texts), min_size=1, max_size=10), query=texts)
    def check(turns: list[tuple[int, str]], query: str) -> None:
        prefix = uuid.uuid4().hex[:8]
        users = [f"{prefix}-{i}" for i in range(3)]
        owned: dict[str, set[str]] = {u: set() for u in users}
        for user, content in turns:
            owned[users[user]].update(writer.add_turn(users[user], "user", content))
        for user in users:
            memory = store.for_user(user)
            for retrieval in ("vector", "hybrid"):  # the word index is shared by all users: checked too
                found = memory.search(RecallQuery(query), k=50, retrieval=retrieval)
                assert {c.id for c in found} == owned[user]  # all of A's, none of B's
                assert all(c.metadata["user_id"] == user for c in found)
                words = store.journal.search_text(user, query, 50)
                assert {memory_id for memory_id, _ in words} <= owned[user]
            for other in users:
                if other == user:
                    continue
                for memory_id in owned[other]:
                    assert memory.get(memory_id) is None
            assert memory.count() == len(owned[user])

    check()


@pytest.mark.parametrize("make_store", BACKENDS, indirect=True)
def test_round_trip(make_store) -> None:
    store = make_store()
    writer = MemoryWriter(store, **RAW_TEXT)
    user = f"rt-{uuid.uuid4().hex[:6]}"
    ids = writer.add_turn(
        user, "assistant", "The meeting moved to Friday at noon.", session_id="work", timestamp=1_700_000_000,
        metadata={"topic": "calendar", "priority": 2},
    )  # fmt: skip
    memory = store.for_user(user)
    assert isinstance(memory, Memory)
    record = memory.get(ids[0])
    assert record is not None
    assert (record.text, record.role, record.session_id, record.turn_index) == (
        "The meeting moved to Friday at noon.", "assistant", "work", 0,
    )  # fmt: skip
    assert record.timestamp.startswith("2023-11-14T22:13:20")
    assert record.metadata == {"topic": "calendar", "priority": 2}
    best = memory.search(RecallQuery("meeting friday noon"), k=1)[0]
    assert best.id == ids[0] and best.score > 0.5
    assert best.embedding is not None and len(best.embedding) == DIM
    assert memory.search(RecallQuery("meeting"), k=3, where={"session_id": "other"}) == []


@pytest.mark.parametrize("make_store", BACKENDS, indirect=True)
def test_search_finds_an_outlier_among_near_duplicates(make_store) -> None:
    """HNSW alone is approximate: with Chroma's default settings this planted memory was missed
    for 3-5 of 10 insertion orders (the query is far from every filler, and the beam stays
    among them). Collections this small are searched exactly, so it is found every time."""
    encoder = HashEncoder(384)
    store = make_store(encoder)
    common = "note the user mentioned an item while talking about the weather today again"
    planted = "my dog is called Biscuit and she loves the beach"
    items = {f"f{i}": f"{common} item{i}" for i in range(1000)} | {"planted": planted}
    writer = MemoryWriter(store, **RAW_TEXT)
    for attempt in range(4):
        user = f"dup-{attempt}-{uuid.uuid4().hex[:6]}"
        order = np.random.default_rng(attempt).permutation(list(items))
        ids = writer.add_turns([{"user_id": user, "role": "user", "content": items[key]} for key in order])
        by_id = {memory_ids[0]: items[key] for key, memory_ids in zip(order, ids, strict=True)}
        found = store.for_user(user).search(RecallQuery("what is my dog called"), k=4)
        assert found[0].text == planted, f"insertion order {attempt}: got {found[0].text!r} ({found[0].score:.2f})"
        assert_same_top_k(found, brute_force(encoder, "what is my dog called", by_id, 4), by_id)


@pytest.mark.parametrize("make_store", BACKENDS, indirect=True)
def test_lm_key_collections_of_an_earlier_release_are_reported_and_deleted(make_store) -> None:
    """Releases before the query head kept LM-space keys in ``recall-k-*`` collections. Nothing
    reads them now: a delete or a forget takes a user's keys with their memories, doctor reports
    what is left as obsolete and repair deletes it."""
    store = make_store()
    writer = MemoryWriter(store, **RAW_TEXT)
    kept, forgotten = f"keys-{uuid.uuid4().hex[:6]}", f"gone-{uuid.uuid4().hex[:6]}"
    ids = {u: [i for (i,) in writer.add_turns([{"user_id": u, "role": "user", "content": t} for t in ("alpha", "beta")])]
           for u in (kept, forgotten)}  # fmt: skip
    client = store.index.client()
    for user in (kept, forgotten):  # what an earlier release wrote beside the memories
        old = client.create_collection(
            name=collection_name(user, "k"), embedding_function=None,
            metadata={"recall": 1, "kind": "lm_keys", "user_id": user, "lm": "an-old-model", "dim": 4},
        )  # fmt: skip
        old.add(ids=ids[user], embeddings=[[0.1, 0.2, 0.3, 0.4]] * 2)
    store.index.reset()  # no handle cached from before: as a store opened on that index
    client = store.index.client()

    assert store.for_user(kept).delete(ids[kept][0]) == 1
    assert client.get_collection(collection_name(kept, "k")).get()["ids"] == [ids[kept][1]]
    store.for_user(forgotten).forget()
    names = {c.name for c in store.index.collections()}
    assert collection_name(forgotten, "k") not in names and collection_name(kept, "k") in names

    report = doctor(store, users=[kept])
    assert report.obsolete_collections == [collection_name(kept, "k")] and not report.ok
    assert report.users[0].ok and "1 obsolete LM-key collection(s)" in report.summary()
    assert repair(store, report).obsolete == 1
    assert collection_name(kept, "k") not in {c.name for c in store.index.collections()}
    assert doctor(store, users=[kept]).ok
    assert [c.id for c in store.for_user(kept).search("beta", 2)] == [ids[kept][1]]


def test_journal_recovery_local(tmp_path) -> None:
    """Delete the Chroma folder, rebuild from the journal: identical search results."""
    store = MemoryStore.local(tmp_path / "mem", encoder=HashEncoder(DIM))
    writer = MemoryWriter(store, **RAW_TEXT)
    rng = np.random.default_rng(1)
    users = ["u1", "u2"]
    for i in range(60):
        writer.add_turn(users[i % 2], "user", " ".join(rng.choice(WORDS, size=5)), session_id=f"s{i % 3}")
    queries = [" ".join(rng.choice(WORDS, size=3)) for _ in range(10)]

    def snapshot(s: MemoryStore) -> list:
        out = []
        for user in users:
            memory = s.for_user(user)
            out.append([r for r in memory.all()])
            for q in queries:
                out.append(top(memory.search(RecallQuery(q), 5)))
        return out

    before = snapshot(store)
    store.close()
    shutil.rmtree(tmp_path / "mem" / "chroma")
    with pytest.warns(MemoryIndexWarning, match="lost 60 memories of 2 users"):
        store = MemoryStore.local(tmp_path / "mem", encoder=HashEncoder(DIM))
    with pytest.raises(MemoryUnavailableError, match="recall doctor --repair"):
        store.for_user("u1").count()  # not 0, as for a new user: the journal says they had 30
    report = doctor(store)
    assert not report.ok and report.totals()["missing"] == 60
    result = rebuild_index(store, progress=False)
    assert result.indexed == 60 and result.reencoded == 0  # vectors came from the journal
    assert snapshot(store) == before
    assert doctor(store, check_vectors=True).ok
    store.close()


def test_rebuild_fresh_after_corrupt_index(tmp_path) -> None:
    store = MemoryStore.local(tmp_path / "mem", encoder=HashEncoder(DIM))
    MemoryWriter(store, **RAW_TEXT).add_turns([{"user_id": "u", "role": "user", "content": f"{w} fact"} for w in WORDS])
    expected = [(c.id, c.score) for c in store.for_user("u").search("apple fact", 1)]
    store.close()
    # Garbage over Chroma's own database: the kind of damage a kill mid-flush can leave.
    (tmp_path / "mem" / "chroma" / "chroma.sqlite3").write_bytes(b"not a database" * 100)
    with pytest.warns(MemoryIndexWarning, match="damaged .*recall rebuild-index --fresh"):
        store = MemoryStore.local(tmp_path / "mem", encoder=HashEncoder(DIM))
    with pytest.raises(Exception):  # noqa: B017 - whatever Chroma raises on a broken folder
        store.for_user("u").search("apple fact", 3)
    rebuild_index(store, fresh=True, progress=False)
    assert [(c.id, c.score) for c in store.for_user("u").search("apple fact", 1)] == expected
    assert store.for_user("u").count() == len(WORDS)
    store.close()


@pytest.mark.server
def test_journal_recovery_server(tmp_path) -> None:
    """A server that lost its data folder is rebuilt from the client's journal."""
    data = tmp_path / "server-data"
    with ChromaServer(data) as server:
        store = MemoryStore.server(port=server.port, encoder=HashEncoder(DIM), journal_path=tmp_path / "j.sqlite3")
        MemoryWriter(store, **RAW_TEXT).add_turns(
            [{"user_id": "srv", "role": "user", "content": f"{w} {v}"} for w in WORDS[:8] for v in WORDS[8:12]]
        )
        expected = top(store.for_user("srv").search("apple moon", 5))
        port = server.port
        store.close()
    shutil.rmtree(data)
    with ChromaServer(data, port=port):
        store = MemoryStore.server(port=port, encoder=HashEncoder(DIM), journal_path=tmp_path / "j.sqlite3")
        # The server's mark changed: the client indexes its journal again when it connects,
        # where until 2026-12-06 it raised "has none of the 32 memories" until a rebuild.
        with pytest.warns(MemoryIndexWarning, match="lost its data .* 32 memories of 1 user again"):
            assert store.for_user("srv").count() == 32
        assert top(store.for_user("srv").search("apple moon", 5)) == expected
        rebuild_index(store, progress=False)
        assert top(store.for_user("srv").search("apple moon", 5)) == expected
        assert doctor(store).ok
        store.close()

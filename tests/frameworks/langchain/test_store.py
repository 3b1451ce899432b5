"""`RecallStore`: LangGraph's ``BaseStore`` over a recall ``MemoryStore``, embedded and on a server.

The installed ``langgraph`` ships no store conformance suite (its wheel holds no tests), so
the reference is LangGraph's own ``InMemoryStore``: the same operations go to both stores
and must give the same items (namespaces, keys, values, filters, paging, namespaces
listing). Semantic search is checked against the memory's own ranking, and the point of the
adapter is checked end to end: what an agent stores is what ``<recall>`` injects, per user.
"""

from __future__ import annotations

import asyncio
import uuid

import pytest
from langgraph.store.base import InvalidNamespaceError
from langgraph.store.memory import InMemoryStore

from langchain_recall import RecallStore
from recall_core import RecallGenerator
from recall_core.memory import HashEncoder, MemoryStore
from tests.helpers.tiny import tiny_model

BACKENDS = ["local", pytest.param("server", marks=pytest.mark.server)]


@pytest.fixture(params=BACKENDS)
def memory_store(request: pytest.FixtureRequest, tmp_path):
    if request.param == "local":
        store = MemoryStore.local(tmp_path / "memory", encoder=HashEncoder(64))
    else:
        server = request.getfixturevalue("chroma_server")
        store = MemoryStore.server(port=server.port, encoder=HashEncoder(64), journal_path=tmp_path / "journal.sqlite3")
    yield store
    store.close()


@pytest.fixture
def users() -> tuple[str, str]:
    """Fresh user ids (the server's collections outlive one test)."""
    tag = uuid.uuid4().hex[:8]
    return f"ada-{tag}", f"bob-{tag}"


ITEMS = [
    ("memories", "home", {"text": "I live in Lisbon", "kind": "fact", "year": 2020}),
    ("memories", "dog", {"text": "My dog is called Biscuit", "kind": "pet", "year": 2022}),
    ("prefs", "colour", {"content": "My favourite colour is green", "kind": "fact", "year": 2024}),
    ("prefs", "note", {"nested": {"level": 2}, "kind": "note"}),
]


def _fill(store, ada: str, bob: str) -> None:
    for area, key, value in ITEMS:
        store.put((ada, area), key, value)
    store.put((bob, "memories"), "home", {"text": "I live in Porto", "kind": "fact", "year": 2021})


def _plain(items):
    return sorted((tuple(i.namespace), i.key, repr(i.value)) for i in items)


def test_same_answers_as_langgraphs_in_memory_store(memory_store, users):
    ada, bob = users
    ours, reference = RecallStore(memory_store), InMemoryStore()
    for store in (ours, reference):
        _fill(store, ada, bob)
        store.put((ada, "memories"), "dog", {"text": "My dog is called Pepper", "kind": "pet", "year": 2023})  # replace
        store.delete((ada, "prefs"), "note")
        store.delete((ada, "prefs"), "never-there")
    for namespace, key in [((ada, "memories"), "home"), ((ada, "memories"), "dog"), ((ada, "prefs"), "note"),
                           ((bob, "memories"), "home"), ((bob, "memories"), "dog")]:  # fmt: skip
        got, want = ours.get(namespace, key), reference.get(namespace, key)
        assert (got is None) == (want is None), (namespace, key)
        if want is not None:
            assert (tuple(got.namespace), got.key, got.value) == (tuple(want.namespace), want.key, want.value)
    for prefix, filter_ in [((ada,), None), ((ada, "memories"), None), ((ada,), {"kind": "fact"}),
                            ((ada,), {"year": {"$gte": 2023}}), ((ada,), {"year": {"$lt": 2023, "$ne": 2020}}),
                            ((bob,), {"kind": "pet"})]:  # fmt: skip
        assert _plain(ours.search(prefix, filter=filter_, limit=10)) == _plain(reference.search(prefix, filter=filter_, limit=10))
    assert len(ours.search((ada,), limit=1, offset=1)) == 1
    assert ours.list_namespaces(prefix=(ada,)) == reference.list_namespaces(prefix=(ada,))
    assert ours.list_namespaces(suffix=("memories",), max_depth=1) == sorted({(ada,), (bob,)})
    assert reference.list_namespaces(suffix=("memories",), max_depth=1) == sorted({(ada,), (bob,)})


def test_created_at_kept_and_updated_at_moves(memory_store, users):
    store = RecallStore(memory_store)
    ada, _ = users
    store.put((ada, "m"), "k", {"text": "one"})
    first = store.get((ada, "m"), "k")
    store.put((ada, "m"), "k", {"text": "two"})
    second = store.get((ada, "m"), "k")
    assert second.created_at == first.created_at and second.updated_at >= first.updated_at
    assert second.value == {"text": "two"}


def test_semantic_search_ranks_like_the_memory_and_respects_users(memory_store, users):
    ada, bob = users
    store = RecallStore(memory_store)
    _fill(store, ada, bob)
    hits = store.search((ada,), query="where do I live Lisbon", limit=2)
    assert hits[0].key == "home" and hits[0].value["text"] == "I live in Lisbon"
    assert hits[0].score is not None and hits[0].score >= hits[1].score
    assert all(hit.namespace[0] == ada for hit in hits)
    assert [hit.value["text"] for hit in store.search((bob,), query="where do I live", limit=5)] == ["I live in Porto"]
    # index=False keeps an item out of search, but get still finds it
    store.put((ada, "memories"), "secret", {"text": "I live in Lisbon too"}, index=False)
    assert "secret" not in [hit.key for hit in store.search((ada,), query="I live in Lisbon", limit=10)]
    assert store.get((ada, "memories"), "secret") is not None


def test_what_an_agent_stores_is_what_recall_injects(memory_store, users):
    ada, bob = users
    RecallStore(memory_store).put((ada, "memories"), "home", {"text": "I live in Lisbon by the river"})
    memory = memory_store.for_user(ada)
    assert [c.text for c in memory.search("Where do I live?", 1)] == ["I live in Lisbon by the river"]
    assert memory_store.for_user(bob).search("Where do I live?", 1) == []
    model, tokenizer = tiny_model("llama")
    result = RecallGenerator(model, tokenizer).generate(
        [{"role": "user", "content": "Where do I live?"}], memory=memory, max_new_tokens=2
    )
    (recall,) = [r for r in result.recalls if r.memory_id]
    assert recall.text.endswith("I live in Lisbon by the river")  # one note, with its date


def test_user_position_and_text_fields(memory_store, users):
    ada, _ = users
    store = RecallStore(memory_store, user_position=1, text_fields=("summary",))
    store.put(("memories", ada), "k", {"summary": "Ada plays the cello", "text": "not this"})
    assert [c.text for c in memory_store.for_user(ada).search("cello", 1)] == ["Ada plays the cello"]
    store.put(("memories", ada), "j", {"a": 1, "b": "two"}, index=["b"])
    assert memory_store.for_user(ada).get_by_key('["memories", "' + ada + '", "j"]').text == "two"
    assert store.search(("memories",), limit=10)  # a prefix before the user part spans users


def test_batch_and_async(memory_store, users):
    ada, _ = users
    store = RecallStore(memory_store)

    async def run():
        await store.aput((ada, "m"), "a", {"text": "alpha"})
        await store.aput((ada, "m"), "b", {"text": "beta"})
        got = await store.aget((ada, "m"), "a")
        found = await store.asearch((ada,), query="beta", limit=1)
        names = await store.alist_namespaces(prefix=(ada,))
        await store.adelete((ada, "m"), "a")
        return got, found, names, await store.aget((ada, "m"), "a")

    got, found, names, gone = asyncio.run(run())
    assert got.value == {"text": "alpha"} and found[0].key == "b" and names == [(ada, "m")] and gone is None


def test_bad_input(memory_store, users):
    ada, _ = users
    store = RecallStore(memory_store, user_position=1)
    with pytest.raises(InvalidNamespaceError, match="no user id at position 1"):
        store.put(("memories",), "k", {"text": "x"})
    with pytest.raises(InvalidNamespaceError):
        RecallStore(memory_store).get((), "k")
    with pytest.raises(ValueError, match="value must be a dict"):
        RecallStore(memory_store).put((ada,), "k", ["not", "a", "dict"])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="user_position must be"):
        RecallStore(memory_store, user_position=-1)
    with pytest.raises(TypeError, match="MemoryStore"):
        RecallStore(object())  # type: ignore[arg-type]
    assert RecallStore(memory_store).get((ada, "m"), "missing") is None

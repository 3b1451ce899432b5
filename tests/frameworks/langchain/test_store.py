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
    ours, reference = RecallStore(memory_store, user_position=0), InMemoryStore()
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
    store = RecallStore(memory_store, user_position=0)
    ada, _ = users
    store.put((ada, "m"), "k", {"text": "one"})
    first = store.get((ada, "m"), "k")
    store.put((ada, "m"), "k", {"text": "two"})
    second = store.get((ada, "m"), "k")
    assert second.created_at == first.created_at and second.updated_at >= first.updated_at
    assert second.value == {"text": "two"}


def test_semantic_search_ranks_like_the_memory_and_respects_users(memory_store, users):
    ada, bob = users
    store = RecallStore(memory_store, user_position=0)
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


def test_a_search_finds_what_its_namespace_or_filter_keeps_past_the_first_pool(memory_store, users):
    """Only the first 4 * (offset + limit) + 16 best were read, then the namespace and the filter
    applied: items past them were never found (until 2026-12-07, a reviewer)."""
    ada, _ = users
    ours, reference = RecallStore(memory_store, user_position=0), InMemoryStore()
    for store in (ours, reference):
        for i in range(60):
            store.put((ada, "notes"), f"n{i}", {"text": f"my dog is called Rex number {i}", "kind": "note"})
        store.put((ada, "prefs"), "p1", {"text": "favourite colour green", "kind": "pref"})
        store.put((ada, "notes"), "n-pref", {"text": "I prefer tea", "kind": "pref"})
    for store in (ours, reference):
        assert [i.key for i in store.search((ada, "prefs"), query="what is my dog called", limit=5)] == ["p1"]
        found = store.search((ada,), query="what is my dog called", filter={"kind": "pref"}, limit=5)
        assert sorted(i.key for i in found) == ["n-pref", "p1"]


def test_what_an_agent_stores_is_what_recall_injects(memory_store, users):
    ada, bob = users
    RecallStore(memory_store, user_position=0).put((ada, "memories"), "home", {"text": "I live in Lisbon by the river"})
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
    store = RecallStore(memory_store, user_position=0)

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
        RecallStore(memory_store, user_position=0).get((), "k")
    with pytest.raises(ValueError, match="value must be a dict"):
        RecallStore(memory_store, user_position=0).put((ada,), "k", ["not", "a", "dict"])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="user_position must be"):
        RecallStore(memory_store, user_position=-1)
    with pytest.raises(TypeError, match="MemoryStore"):
        RecallStore(object())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="text_fields must be a sequence of field paths"):
        RecallStore(memory_store, user_position=0, text_fields="text")  # was read as the fields t, e, x, t
    assert RecallStore(memory_store, user_position=0, text_fields=iter(["text"])).text_fields == ("text",)
    with pytest.raises(ValueError, match=r"ttl_config\['default_ttl'\] must be a finite number of minutes"):
        RecallStore(memory_store, user_position=0, ttl_config={"default_ttl": float("inf")})  # every put failed
    assert RecallStore(memory_store, user_position=0).get((ada, "m"), "missing") is None


def test_filters_and_keys_like_in_memory_store(memory_store, users):
    """Issue 23, item 5: operators, nested and list filters, odd keys: InMemoryStore's answers or a clear error."""
    ada, _ = users
    ours, reference = RecallStore(memory_store, user_position=0), InMemoryStore()
    values = {
        "a": {"text": "one", "score": 1, "tags": ["x", "y"], "meta": {"level": 2, "lang": "en"}},
        "b": {"text": "two", "score": 2, "tags": ["x"], "meta": {"level": 3}},
        "c": {"text": "three", "score": "3", "meta": "flat"},
        "": {"text": "the empty key", "score": 4},
        "k\x00": {"text": "a key with NUL", "score": 5},
    }
    for store in (ours, reference):
        for key, value in values.items():
            store.put((ada, "m"), key, value)
    for key, value in values.items():  # "" and "k\x00" are keys like any other, as in InMemoryStore
        got, want = ours.get((ada, "m"), key), reference.get((ada, "m"), key)
        assert (got.key, got.value) == (want.key, want.value) == (key, value)
    assert _plain(ours.search((ada,), limit=10)) == _plain(reference.search((ada,), limit=10))
    for filter_ in [{"score": {"$gt": 1}}, {"score": {"$lte": "2"}}, {"score": 4}, {"meta": {"level": 2}},
                    {"meta": {"level": {"$gte": 3}}}, {"tags": ["x"]}, {"tags": ["x", "y"]}, {"meta": "flat"},
                    {"score": {"$ne": 2, "$gte": 2}}, {"meta.level": 2}]:  # fmt: skip
        assert _plain(ours.search((ada,), filter=filter_, limit=10)) == _plain(
            reference.search((ada,), filter=filter_, limit=10)
        ), filter_
    for filter_ in [{"score": {"$in": [1, 2]}}, {"score": {"$gt": 1, "other": 2}}, {"meta": {"level": {"$nin": [1]}}}]:
        with pytest.raises(ValueError, match="Unsupported operator"):
            reference.search((ada,), filter=filter_)
        with pytest.raises(ValueError, match=r"operator '\$\w+' is not supported|operator 'other'") as error:
            ours.search((ada,), filter=filter_)
        assert "lg_" not in str(error.value)
    with pytest.raises(ValueError, match=r"\$gt compares numbers"):
        ours.search((ada,), filter={"score": {"$gt": "high"}})
    ours.delete((ada, "m"), "k\x00")
    ours.delete((ada, "m"), "")
    assert ours.get((ada, "m"), "k\x00") is None and ours.get((ada, "m"), "") is None
    assert ours.get((ada, "m"), "a") is not None


def test_a_store_needs_an_explicit_user_mapping(memory_store):
    """Issue 23, item 6: no default user position that can join ("users", "alice") and ("users", "bob")."""
    with pytest.raises(ValueError, match="user_position= .*user_id="):
        RecallStore(memory_store)
    with pytest.raises(ValueError, match="not both"):
        RecallStore(memory_store, user_position=0, user_id="ada")
    with pytest.raises(ValueError, match="user_id must be"):
        RecallStore(memory_store, user_id=" ")


def test_langgraph_style_namespaces_keep_users_apart(memory_store, users):
    """("users", alice) and ("users", bob): two memory users; alice's search and recall never see bob's."""
    alice, bob = users
    store = RecallStore(memory_store, user_position=1)
    store.put(("users", alice), "home", {"text": "I live in Lisbon by the river"})
    store.put(("users", bob), "home", {"text": "I live in Porto by the sea"})
    assert "users" not in memory_store.users()
    assert [hit.value["text"] for hit in store.search(("users", alice), query="where do I live", limit=10)] == [
        "I live in Lisbon by the river"
    ]
    assert [hit.value["text"] for hit in store.search(("users", bob), limit=10)] == ["I live in Porto by the sea"]
    assert {hit.namespace for hit in store.search(("users",), limit=10)} == {("users", alice), ("users", bob)}
    assert [c.text for c in memory_store.for_user(alice).search("Where do I live?", 5)] == [
        "I live in Lisbon by the river"
    ]
    model, tokenizer = tiny_model("llama")
    result = RecallGenerator(model, tokenizer).generate(
        [{"role": "user", "content": "Where do I live?"}], memory=memory_store.for_user(alice), max_new_tokens=2
    )
    (recall,) = [r for r in result.recalls if r.memory_id]
    assert recall.text.endswith("I live in Lisbon by the river") and "Porto" not in recall.text
    # one user for every namespace: a store handed to one person's agent
    own = RecallStore(memory_store, user_id=alice)
    own.put(("notes",), "pet", {"text": "My cat is Miso"})
    assert memory_store.for_user(alice).get_by_key('["notes", "pet"]').text == "My cat is Miso"
    assert [hit.key for hit in own.search(("notes",), limit=10)] == ["pet"]
    assert memory_store.for_user(bob).get_by_key('["notes", "pet"]') is None

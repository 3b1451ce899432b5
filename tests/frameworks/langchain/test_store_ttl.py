"""`RecallStore` items with a time to live (LangGraph's ``ttl`` / ``refresh_ttl`` / ``TTLConfig``):
an expired item is never returned, and leaves the memory on its user's next write or when a
store is made (issue 22, item 10). A fake clock stands in for ``time.time``."""

from __future__ import annotations

import pytest

import langchain_recall.stores as stores_module
from langchain_recall import RecallStore
from recall_core.memory import HashEncoder, MemoryStore


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def time(self) -> float:
        return self.now

    def minutes(self, n: float) -> None:
        self.now += 60 * n


@pytest.fixture
def clock(monkeypatch) -> Clock:
    clock = Clock()
    monkeypatch.setattr(stores_module, "time", clock)
    return clock


@pytest.fixture
def memory_store(tmp_path):
    store = MemoryStore.local(tmp_path / "memory", encoder=HashEncoder(64))
    yield store
    store.close()


def _keys(memory_store: MemoryStore, user: str) -> list[str]:
    return [r.metadata["lg_key"] for r in memory_store.for_user(user).list()]


def test_an_expired_item_is_never_returned_and_leaves_on_the_next_write(memory_store, clock):
    store = RecallStore(memory_store, user_position=0)
    assert store.supports_ttl
    store.put(("ada", "notes"), "short", {"text": "The gate code is 1234."}, ttl=5)
    store.put(("ada", "notes"), "kept", {"text": "My dog is called Pluto."})
    clock.minutes(4)
    assert store.get(("ada", "notes"), "short", refresh_ttl=False).value == {"text": "The gate code is 1234."}
    clock.minutes(2)
    assert store.get(("ada", "notes"), "short") is None
    assert [i.key for i in store.search(("ada",), query="gate code")] == ["kept"]
    assert [i.key for i in store.search(("ada",))] == ["kept"]
    assert _keys(memory_store, "ada") == ["short", "kept"]  # still in the memory until a write of ada's
    store.put(("ada", "notes"), "other", {"text": "I live in Lisbon."})
    assert _keys(memory_store, "ada") == ["kept", "other"]  # swept: no longer recalled either
    store.put(("ada", "gone"), "x", {"text": "x"}, ttl=1)
    clock.minutes(2)
    assert store.list_namespaces() == [("ada", "notes")]


def test_reading_refreshes_the_expiry(memory_store, clock):
    store = RecallStore(memory_store, user_position=0)
    store.put(("ada",), "k", {"text": "Pluto is a beagle."}, ttl=10)
    clock.minutes(8)
    assert store.get(("ada",), "k") is not None  # refreshed: 10 more minutes from now
    clock.minutes(8)
    assert [i.key for i in store.search(("ada",), query="beagle")] == ["k"]  # refreshed again
    clock.minutes(8)
    assert store.get(("ada",), "k", refresh_ttl=False) is not None
    clock.minutes(3)
    assert store.get(("ada",), "k") is None


def test_default_ttl_refresh_off_and_the_sweep_when_a_store_is_made(memory_store, clock):
    store = RecallStore(memory_store, user_position=0, ttl_config={"default_ttl": 1, "refresh_on_read": False})
    store.put(("ada",), "a", {"text": "one"})
    store.put(("bob",), "b", {"text": "two"}, ttl=None)  # None: no expiry
    clock.minutes(0.5)
    assert store.get(("ada",), "a") is not None  # read, not refreshed
    clock.minutes(0.6)
    assert store.get(("ada",), "a") is None
    assert _keys(memory_store, "ada") == ["a"]
    again = RecallStore(memory_store, user_position=0)  # made: every user's expired items swept
    assert _keys(memory_store, "ada") == [] and _keys(memory_store, "bob") == ["b"]
    assert again.get(("bob",), "b").value == {"text": "two"}


def test_bad_ttl_is_a_value_error(memory_store, clock):
    store = RecallStore(memory_store, user_position=0)
    for bad in (0, -1, "5", float("inf")):
        with pytest.raises(ValueError, match="ttl must be minutes > 0"):
            store.put(("ada",), "k", {"text": "x"}, ttl=bad)
    assert _keys(memory_store, "ada") == []
    with pytest.raises(ValueError, match="default_ttl"):
        RecallStore(memory_store, user_position=0, ttl_config={"default_ttl": 0})


@pytest.mark.parametrize("other", ["put", "delete"])
def test_a_get_s_refresh_never_undoes_a_put_or_delete_made_meanwhile(memory_store, monkeypatch, other) -> None:
    """A get read the item, another thread put a new value (or deleted it), and the get's refresh wrote
    the value it had read back over it (or raised KeyError): until 2026-12-07 (a reviewer, 5 of 10
    runs of a parallel read and put). LangGraph runs parallel branches in threads."""
    import threading
    import time as real_time

    store = RecallStore(memory_store, user_position=1)
    namespace = ("memories", "ada")
    store.put(namespace, "prefs", {"text": "old"}, ttl=60)
    read, go = threading.Event(), threading.Event()
    real = stores_module._refresh

    def paused(memory, record):
        read.set()
        go.wait(10)
        return real(memory, record)

    monkeypatch.setattr(stores_module, "_refresh", paused)
    got: list = []
    reader = threading.Thread(target=lambda: got.append(store.get(namespace, "prefs")))
    reader.start()
    assert read.wait(10)
    change = {"put": lambda: store.put(namespace, "prefs", {"text": "new"}, ttl=60),
              "delete": lambda: store.delete(namespace, "prefs")}[other]  # fmt: skip
    writer = threading.Thread(target=change)
    writer.start()
    real_time.sleep(0.3)  # the change made now, where nothing holds it back
    go.set()
    reader.join(30)
    writer.join(30)
    assert got and got[0].value == {"text": "old"}  # what the get read, refreshed before the change
    after = store.get(namespace, "prefs", refresh_ttl=False)
    assert (after.value if after else None) == ({"text": "new"} if other == "put" else None)


def test_the_expiry_sweep_keeps_an_item_put_again_after_it_listed_it(memory_store, monkeypatch) -> None:
    """A put of another item sweeps its user's expired items: it listed "code" as expired, another
    thread put a new value for "code" (no ttl), and the sweep deleted it by its id (until 2026-12-07:
    a reviewer)."""
    import threading
    import time as real_time

    store = RecallStore(memory_store, user_position=0)
    namespace = ("ada", "notes")
    store.put(namespace, "code", {"text": "The gate code is 1234."}, ttl=0.001)
    real_time.sleep(0.2)  # expired
    memory_class = type(memory_store.for_user("ada"))
    real_list = memory_class.list
    listed, put_done = threading.Event(), threading.Event()

    def paused_list(self, *args, **kwargs):
        found = real_list(self, *args, **kwargs)
        if threading.current_thread().name == "sweeper":
            listed.set()
            put_done.wait(10)
        return found

    monkeypatch.setattr(memory_class, "list", paused_list)
    sweeper = threading.Thread(target=lambda: store.put(namespace, "other", {"text": "I live in Lisbon."}),
                               name="sweeper")  # fmt: skip
    sweeper.start()
    assert listed.wait(10)
    store.put(namespace, "code", {"text": "The gate code is now 9876."})
    put_done.set()
    sweeper.join(30)
    assert store.get(namespace, "code").value == {"text": "The gate code is now 9876."}

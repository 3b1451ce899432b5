"""A ``forget`` or ``delete`` that runs while a write embeds and indexes the very memories it removes.

A write journals its turn, then embeds and indexes it outside the journal's lock (a write must not
block the others while the encoder runs). Until 2026-12-07 a forget or delete in that gap was
undone: the turn reached the index after the forget had emptied it, every read showed it, and
`repair` adopted it for good (``doctor`` saw a memory "in the index but not in the journal").
The removal runs here inside the encoder's call, so the interleaving is the same on every run.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from recall_core.memory import HashEncoder, MemoryStore, MemoryUnavailableError, doctor, repair

DIM = 32
SECRET = "my secret bank pin is 4711"


class _EncoderWithAGap(HashEncoder):
    """Calls ``during`` (once) while it encodes a text holding "secret": the write's gap."""

    during: Callable[[], None] | None = None

    only_alone = False

    def encode(self, texts, batch_size=64):
        alone = not any("later" in t for t in texts)
        if self.during is not None and any("secret" in t for t in texts) and (alone or not self.only_alone):
            during, self.during = self.during, None
            during()
        return super().encode(texts, batch_size)


def _gone_for_good(store: MemoryStore, memory_id: str) -> None:
    memory = store.for_user("u")
    assert memory.get(memory_id) is None
    assert SECRET not in [c.text for c in memory.search("bank pin", 5)]
    assert SECRET not in [r.text for r in memory.list()]
    assert store.index.count("u") == memory.count()
    report = doctor(store)
    if not report.ok:
        repair(store, report)
    assert store.for_user("u").get(memory_id) is None, "repair adopted a removed memory back"
    assert doctor(store).ok


def test_a_forget_while_a_write_embeds_the_user_s_turn_is_not_undone(tmp_path: Path) -> None:
    encoder = _EncoderWithAGap(DIM, name="gap")
    with MemoryStore.local(tmp_path / "mem", encoder=encoder) as store:
        store.for_user("u").add("an ordinary note")
        forgotten: list[int] = []
        encoder.during = lambda: forgotten.append(store.for_user("u").forget())
        [memory_id] = store.writer.add_turn("u", "user", SECRET)
        assert forgotten == [2]  # the ordinary note and the turn being written, as the caller was told
        _gone_for_good(store, memory_id)
        store.for_user("u").add("a later note")  # the user goes on: only what came after the forget
        assert [r.text for r in store.for_user("u").list()] == ["a later note"]


def test_a_delete_while_an_update_embeds_the_memory_is_not_undone(tmp_path: Path) -> None:
    encoder = _EncoderWithAGap(DIM, name="gap")
    with MemoryStore.local(tmp_path / "mem", encoder=encoder) as store:
        memory = store.for_user("u")
        [memory_id] = memory.add("an ordinary note")
        memory.add("another note")
        deleted: list[int] = []
        encoder.during = lambda: deleted.append(store.for_user("u").delete(memory_id))
        store.writer.update("u", memory_id, SECRET)
        assert deleted == [1]
        _gone_for_good(store, memory_id)
        assert [r.text for r in store.for_user("u").list()] == ["another note"]


def test_a_removal_the_index_could_not_finish_stays_hidden_and_repair_deletes_it(tmp_path: Path, monkeypatch) -> None:
    """The write's own delete of the memory fails (the index unreachable at that moment): the memory
    is a tombstone in the journal, hidden from every read, and `repair` deletes it, not adopts it."""
    encoder = _EncoderWithAGap(DIM, name="gap")
    with MemoryStore.local(tmp_path / "mem", encoder=encoder) as store:
        store.for_user("u").add("an ordinary note")
        real_delete = store.index.delete

        def forget_then_lose_the_index() -> None:
            store.for_user("u").forget()

            def unreachable(user_id, ids):
                raise MemoryUnavailableError("the index went away")

            monkeypatch.setattr(store.index, "delete", unreachable)

        encoder.during = forget_then_lose_the_index
        [memory_id] = store.writer.add_turn("u", "user", SECRET)
        monkeypatch.setattr(store.index, "delete", real_delete)
        memory = store.for_user("u")
        assert memory.get(memory_id) is None
        assert SECRET not in [c.text for c in memory.search("bank pin", 5)]
        assert store.index.count("u") == 1  # still in the index, behind its tombstone
        report = doctor(store)
        assert not report.ok
        repair(store, report)
        assert store.index.count("u") == 0 and store.for_user("u").get(memory_id) is None
        assert doctor(store).ok


@pytest.mark.parametrize("removal", ["forget", "delete"])
def test_a_write_with_no_removal_in_its_gap_is_indexed_as_before(tmp_path: Path, removal: str) -> None:
    """The check that takes removed memories back leaves every other write alone (and a removal
    before the write, of other memories, removes only those)."""
    encoder = _EncoderWithAGap(DIM, name="gap")
    with MemoryStore.local(tmp_path / "mem", encoder=encoder) as store:
        memory = store.for_user("u")
        [old] = memory.add("an ordinary note")
        memory.forget() if removal == "forget" else memory.delete(old)
        [memory_id] = store.writer.add_turn("u", "user", SECRET)
        assert store.for_user("u").get(memory_id) is not None
        assert SECRET in [c.text for c in store.for_user("u").search("bank pin", 5)]
        assert doctor(store).ok


def _pending(store: MemoryStore, encoder: _EncoderWithAGap, text: str) -> str:
    """Write ``text`` while the encoder is down: journaled (acknowledged), pending, without a vector."""
    encoder.fail = True
    with pytest.raises(RuntimeError):
        store.for_user("u").add(text)
    encoder.fail = False
    return next(r.id for r in store.journal.rows("u") if r.text == text)


class _FailingEncoder(_EncoderWithAGap):
    fail = False

    def encode(self, texts, batch_size=64):
        if self.fail:
            raise RuntimeError("the encoder's service is down")
        return super().encode(texts, batch_size)


def test_a_write_s_catch_up_writes_the_index_outside_the_journal_s_lock(tmp_path: Path) -> None:
    """A server's heal takes its own lock, then the journal's; the catch-up of a write held the
    journal's lock across its index write, which takes the heal's: a reviewer's two threads
    deadlocked for good (2026-12-07). Here another thread must get the journal during that write."""
    import threading

    encoder = _FailingEncoder(DIM, name="gap")
    with MemoryStore.local(tmp_path / "mem", encoder=encoder) as store:
        _pending(store, encoder, SECRET)
        write, free = store.index.write, []

        def watched(rows, *args, **kwargs):
            if any(r.text == SECRET for r in rows):
                other = threading.Thread(target=lambda: free.append(store.journal.count("someone")))
                other.start()
                other.join(5)
            return write(rows, *args, **kwargs)

        store.index.write = watched
        store.for_user("u").add("a later note")
        assert free == [0], "the journal's lock was held across the catch-up's index write"
        assert store.journal.count("u", "pending") == 0


def test_an_update_while_a_catch_up_encodes_keeps_the_new_text_and_its_own_vector(tmp_path: Path) -> None:
    """The catch-up encoded the old text; an update changed it meanwhile. The old text's vector is
    never stored for the new text (it was, and the next catch-up indexed the new text with it), and
    the row is left pending when the index may hold the older text."""
    encoder = _FailingEncoder(DIM, name="gap")
    with MemoryStore.local(tmp_path / "mem", encoder=encoder) as store:
        memory_id = _pending(store, encoder, SECRET)
        encoder.during = lambda: store.for_user("u").update(memory_id, "my bank pin changed to 1234")
        store.for_user("u").add("a later note")  # its catch-up encodes the secret
        row = store.journal.get(memory_id)
        assert row.text == "my bank pin changed to 1234"
        assert row.embedding is None or np.allclose(row.embedding, encoder.encode([row.search_text])[0])
        repair(store, doctor(store))
        assert store.for_user("u").search("bank pin changed", 1)[0].text == "my bank pin changed to 1234"
        assert doctor(store).ok


def test_a_forget_racing_a_write_leaves_no_collection_and_no_words_on_disk(tmp_path: Path) -> None:
    """A reviewer found the take-back of a forgotten turn left an empty collection naming the user
    and the turn's words in the index's free pages, which a plain forget removes."""
    encoder = _EncoderWithAGap(DIM, name="gap")
    path = tmp_path / "mem"
    with MemoryStore.local(path, encoder=encoder) as store:
        store.for_user("u").add("an ordinary note")
        encoder.during = lambda: store.for_user("u").forget()
        store.writer.add_turn("u", "user", SECRET)
        assert store.index.count("u") == 0
    held = [f for f in path.rglob("*") if f.is_file() and b"bank pin is 4711" in f.read_bytes()]
    assert held == []


def _removal_during_an_index_write(monkeypatch, removal: Callable[[], int]) -> list[int]:
    """Run ``removal`` in another thread while any index (a staging one too) writes the secret."""
    import threading

    from recall_core.memory.index import ChromaIndex

    real, done = ChromaIndex.write, []

    def write(self, rows, *args, **kwargs):
        if not done and any(r.text == SECRET for r in rows):
            other = threading.Thread(target=lambda: done.append(removal()))
            other.start()
            other.join(10)
        return real(self, rows, *args, **kwargs)

    monkeypatch.setattr(ChromaIndex, "write", write)
    return done


@pytest.mark.parametrize("upkeep", ["repair", "rebuild", "rebuild fresh"])
def test_a_forget_during_repair_or_rebuild_is_not_undone(tmp_path: Path, monkeypatch, upkeep: str) -> None:
    """`repair` and `rebuild_index` also write the index outside the journal's lock, and marked what
    they wrote indexed without looking: a forget meanwhile was undone (the user told "forgot 2", the
    turn listed again, and the next `repair` adopted it for good; found 2026-12-07)."""
    from recall_core.memory import rebuild_index

    encoder = _FailingEncoder(DIM, name="gap")
    with MemoryStore.local(tmp_path / "mem", encoder=encoder) as store:
        store.for_user("u").add("an ordinary note")
        memory_id = _pending(store, encoder, SECRET)  # what repair indexes
        store.for_user("w").add("another user's note")
        forgotten = _removal_during_an_index_write(monkeypatch, lambda: store.for_user("u").forget())
        if upkeep == "repair":
            repair(store)
        else:
            rebuild_index(store, fresh=upkeep == "rebuild fresh", progress=False)
        monkeypatch.undo()
        assert forgotten == [2]
        _gone_for_good(store, memory_id)
        assert [r.text for r in store.for_user("w").list()] == ["another user's note"]


def test_a_heal_that_ended_just_before_the_check_is_not_blamed_on_another_client(tmp_path: Path) -> None:
    """A search found no collection; before it compared the server's mark, another thread's heal
    ended and indexed the user again: the mark unchanged, it raised "another client forgot the
    user" though the memories were back (a reviewer paused a thread there, 2026-12-07)."""
    from recall_core.memory.index import MARK_KEPT, MEMORIES
    from recall_core.memory.search import check_not_lost

    with MemoryStore.local(tmp_path / "mem", encoder=HashEncoder(DIM)) as store:
        store.for_user("u").add("an ordinary note")
        index = store.index
        index.check_server = lambda: MARK_KEPT  # the heal is over: the mark is the server's again
        assert index.collection("u", MEMORIES) is not None  # and the collection is back
        assert check_not_lost(store.journal, "u", index) is True  # look again, no error
        index.drop_user("u")  # truly gone, with the mark kept: another client's forget
        with pytest.raises(MemoryUnavailableError, match="kept its data"):
            check_not_lost(store.journal, "u", index)
        index.check_server = None


def test_a_server_s_not_on_disk_yet_is_retried_once(tmp_path: Path) -> None:
    """A Chroma server answers a read of a collection whose first segment it has not written yet with
    "Nothing found on disk" (chroma-core/chroma#4212): the load test's reader met it once beside writers."""
    from chromadb.errors import InternalError

    from recall_core.memory.backends import Backend
    from recall_core.memory.index import NOT_ON_DISK_YET, ChromaIndex

    calls: list[int] = []

    def flaky(times: int):
        def fn():
            calls.append(1)
            if len(calls) <= times:
                raise InternalError(f"Error executing plan: Internal error: {NOT_ON_DISK_YET}")
            return "answer"
        return fn

    server = ChromaIndex(Backend("server", "http://127.0.0.1:1", lambda: None))
    assert server.call(flaky(1)) == "answer" and len(calls) == 2
    calls.clear()
    with pytest.raises(MemoryUnavailableError, match="Nothing found on disk"):
        server.call(flaky(2))  # once only
    calls.clear()
    local = ChromaIndex(Backend("local", str(tmp_path), lambda: None))
    with pytest.raises(MemoryUnavailableError, match="Nothing found on disk"):
        local.call(flaky(1))  # a local index's files are this process's: no such race to wait out
    assert len(calls) == 1


@pytest.mark.parametrize(("before", "after"), [("old", "bank"), (1, True)])
def test_a_metadata_change_while_a_catch_up_encodes_reaches_the_index(tmp_path: Path, before, after) -> None:
    """An update that changes only a memory's metadata (same text) while a catch-up encodes it:
    the catch-up's index write carries the older metadata. The row was marked indexed all the same
    (only text and context were compared, a reviewer suspected, 2026-12-07), so the index kept the
    older metadata for good; it must be written again with the current one. ``1`` and ``True``, equal
    in Python, differ for Chroma's ``where``."""
    encoder = _FailingEncoder(DIM, name="gap")
    with MemoryStore.local(tmp_path / "mem", encoder=encoder) as store:
        encoder.fail = True
        with pytest.raises(RuntimeError):
            store.for_user("u").add(SECRET, metadata={"topic": before})
        encoder.fail = False
        memory_id = next(r.id for r in store.journal.rows("u") if r.text == SECRET)
        encoder.during = lambda: store.for_user("u").update(memory_id, SECRET, metadata={"topic": after})
        encoder.only_alone = True  # not while the later note (searched with the turn before) is encoded
        store.for_user("u").add("a later note")  # its catch-up encodes the secret
        assert store.journal.get(memory_id).extra == {"topic": after}
        [found] = [c for c in store.for_user("u").search("bank pin", 5) if c.id == memory_id]
        assert found.metadata.get("topic") == after and type(found.metadata["topic"]) is type(after), found.metadata
        assert [c.id for c in store.for_user("u").search("bank pin", 5, where={"topic": after})] == [memory_id]
        assert store.journal.count("u", "pending") == 0
        assert doctor(store).ok


def test_a_new_user_s_first_writes_at_once_warn_of_no_lost_collection(tmp_path: Path, monkeypatch) -> None:
    """Both threads found no collection, and the second, given the first's by get-or-create, warned
    "deleted behind the store's back?" and indexed the other's rows again; or the first, reacting to
    the collection it made, counted the second's row indexed meanwhile (until 2026-12-07: a reviewer,
    16 of 20 runs)."""
    import threading
    import warnings

    import recall_core.memory.index as index_module
    from recall_core.memory import MemoryIndexWarning

    both_looked = threading.Barrier(2)
    real = index_module.ChromaIndex._lookup

    def lookup(self, name):
        found = real(self, name)
        if found is None:
            try:  # both lookups before either makes it (where one thread at a time looks, the wait times out)
                both_looked.wait(1)
            except threading.BrokenBarrierError:
                pass
        return found

    monkeypatch.setattr(index_module.ChromaIndex, "_lookup", lookup)
    with MemoryStore.local(tmp_path / "mem", encoder=HashEncoder(16)) as store:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            threads = [threading.Thread(target=store.writer.add_turn, args=("carol", "user", f"first fact {n}"))
                       for n in range(2)]  # fmt: skip
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(30)
        assert [str(w.message) for w in caught if issubclass(w.category, MemoryIndexWarning)] == []
        assert store.for_user("carol").count() == 2


@pytest.mark.parametrize("call", ["search", "write"])
def test_a_call_the_store_s_close_overtakes_raises_memory_store_error(tmp_path: Path, monkeypatch, call) -> None:
    """A call that passed the closed check when another thread closed the store raised SQLite's
    "Cannot operate on a closed database" or Chroma's AttributeError (until 2026-12-07: a reviewer)."""
    import threading

    import recall_core.memory.user as user_module
    from recall_core.memory import MemoryStoreError, MemoryWriter

    started, closed, raised = threading.Event(), threading.Event(), []
    store = MemoryStore.local(tmp_path / "mem", encoder=HashEncoder(16))
    store.for_user("u").add("a first note")
    target = (user_module, "search") if call == "search" else (MemoryWriter, "_prepare_all")
    real = getattr(*target)

    def overtaken(*args, **kwargs):
        started.set()
        closed.wait(10)
        return real(*args, **kwargs)

    monkeypatch.setattr(*target, overtaken)

    def run() -> None:
        try:
            if call == "search":
                store.for_user("u").search("first note", 2)
            else:
                store.for_user("u").add("a second note")
        except Exception as error:  # noqa: BLE001 - what the caller sees is the point
            raised.append(error)

    thread = threading.Thread(target=run)
    thread.start()
    assert started.wait(10)
    store.close()
    closed.set()
    thread.join(10)
    assert len(raised) == 1 and type(raised[0]) is MemoryStoreError, raised
    with MemoryStore.local(tmp_path / "mem", encoder=HashEncoder(16)) as again:
        assert again.for_user("u").count() == 1 and doctor(again).ok


def test_a_call_that_another_thread_s_reopening_of_the_index_cuts_short_is_memory_unavailable(tmp_path: Path) -> None:
    """`doctor` and `repair` close and reopen the index's client (its file checks); a call of another
    thread then in Chroma raised its AttributeError ('RustBindingsAPI' object has no attribute
    'bindings': 16 of a reviewer's 15 doctor and repair runs beside a writer; until 2026-12-07)."""
    with MemoryStore.local(tmp_path / "mem", encoder=HashEncoder(16)) as store:
        store.for_user("u").add("a first note")

        def cut_short() -> None:
            store.index.reset()  # as _check_local_files does, in another thread, during the call
            raise AttributeError("'RustBindingsAPI' object has no attribute 'bindings'")

        with pytest.raises(MemoryUnavailableError, match="was reopened during the call"):
            store.index.call(cut_short)
        assert store.for_user("u").count() == 1 and doctor(store).ok


def test_a_collection_looked_up_as_another_thread_reopens_the_index_is_not_kept(tmp_path: Path) -> None:
    """A handle of a client closed between its lookup and its caching (a doctor or repair in another
    thread) was kept: every later call for its user failed with Chroma's AttributeError, for good
    (a reviewer, 2026-12-08: 3 of 3 searches after doctor returned)."""
    with MemoryStore.local(tmp_path / "mem", encoder=HashEncoder(16)) as store:
        store.for_user("u").add("a first note")
        store.index.forget_all_cached()
        lookup = store.index._lookup

        def reopened_meanwhile(name: str):
            found = lookup(name)
            store.index.reset()  # as doctor's file check does, in another thread
            return found

        store.index._lookup = reopened_meanwhile  # type: ignore[method-assign]
        store.index.collection("u", "m")
        store.index._lookup = lookup  # type: ignore[method-assign]
        assert store.for_user("u").search("note", 1) and store.for_user("u").add("a later note")
        assert store.for_user("u").count() == 2 and doctor(store).ok


def test_doctor_checks_the_files_while_no_index_call_of_another_thread_runs(tmp_path: Path, monkeypatch) -> None:
    """doctor closes the client and reads the index's files; writer threads of the same process reopened
    it and Chroma rewrote the files meanwhile: a file caught mid-write was judged damaged and its user
    blocked for the life of the store (a reviewer, 2026-12-08: 4 of 40 live users). Calls now wait."""
    import threading
    import time

    import recall_core.memory.upkeep.maintenance as maintenance

    with MemoryStore.local(tmp_path / "mem", encoder=HashEncoder(16)) as store:
        store.for_user("u0").add("a first note")
        seen: list[int] = []
        running = [0]  # Chroma calls under way
        check, call = maintenance.check_index_files, store.index.call

        def counted(fn, *args, **kwargs):
            def run(*inner, **named):
                running[0] += 1
                try:
                    return fn(*inner, **named)
                finally:
                    running[0] -= 1

            return call(run, *args, **kwargs)

        def slow_check(folder):
            for _ in range(10):  # the writers run meanwhile: no Chroma call of theirs may be under way
                seen.append(running[0])
                time.sleep(0.03)
            return check(folder)

        monkeypatch.setattr(store.index, "call", counted)

        monkeypatch.setattr(maintenance, "check_index_files", slow_check)
        stop = threading.Event()
        written: list[str] = []

        def write(n: int) -> None:
            i = 0
            while not stop.is_set():
                written.extend(store.for_user(f"u{n}-{i % 3}").add(f"writer {n} note {i} about owls"))
                i += 1

        writers = [threading.Thread(target=write, args=(n,)) for n in range(2)]
        for thread in writers:
            thread.start()
        time.sleep(0.2)
        report = doctor(store)
        stop.set()
        for thread in writers:
            thread.join(30)
        assert seen and not any(seen) and not report.damaged and written
        assert doctor(store).ok


@pytest.mark.parametrize("then", ["finished", "written again"])
def test_repair_checks_an_overtaken_report_against_the_journal(tmp_path: Path, monkeypatch, then: str) -> None:
    """doctor saw the tombstone of a delete in flight in another thread; the delete then finished (and
    the user wrote the same words again, under the same id). repair with that report dropped the
    user's whole collection, or deleted the written-again turn from the index (a reviewer, 2026-12-08)."""
    import threading

    from recall_core.memory.index import ChromaIndex

    with MemoryStore.local(tmp_path / "mem", encoder=HashEncoder(16)) as store:
        [kept] = store.for_user("u").add("u keeps bees")
        [gone] = store.for_user("u").add("my locker code is 2961")
        delete, paused, go = ChromaIndex.delete, threading.Event(), threading.Event()

        def held(self, user_id, ids):
            if threading.current_thread().name == "deleter":
                paused.set()
                go.wait(20)
            return delete(self, user_id, ids)

        monkeypatch.setattr(ChromaIndex, "delete", held)
        deleter = threading.Thread(name="deleter", target=lambda: store.for_user("u").delete(gone))
        deleter.start()
        assert paused.wait(10)
        report = doctor(store)
        go.set()
        deleter.join(20)
        assert [user.deleting for user in report.users] == [[gone]]
        wanted = {kept}
        if then == "written again":
            assert store.for_user("u").add("my locker code is 2961") == [gone]
            wanted.add(gone)
        repair(store, report)
        assert {r.id for r in store.for_user("u").list()} == wanted
        assert {c.id for c in store.for_user("u").search("bees locker code", 3)} == wanted
        assert doctor(store).ok


def test_repair_prunes_no_memory_written_since_doctor_read_the_journal(tmp_path: Path, monkeypatch) -> None:
    """A turn written between doctor's read of the journal and its read of the index is reported as
    extra; repair(prune_extra=True) deleted it from the index, which the journal says is indexed."""
    import recall_core.memory.upkeep.maintenance as maintenance

    with MemoryStore.local(tmp_path / "mem", encoder=HashEncoder(16)) as store:
        store.for_user("u").add("u keeps bees")
        records, written = maintenance._index_records, []

        def late(store_, user_id, with_vectors):
            if not written:  # a write of another thread, after the journal was read
                written.extend(store.for_user("u").add("a turn written meanwhile"))
            return records(store_, user_id, with_vectors)

        monkeypatch.setattr(maintenance, "_index_records", late)
        report = doctor(store)
        monkeypatch.setattr(maintenance, "_index_records", records)
        assert [user.extra for user in report.users] == [written]
        repair(store, report, prune_extra=True)
        assert [c.id for c in store.for_user("u").search("written meanwhile", 1)] == written and doctor(store).ok


@pytest.mark.parametrize("fresh", [False, True])
@pytest.mark.parametrize("who", ["bob", "newcomer"])
def test_a_turn_written_while_a_rebuild_fills_the_new_index_is_in_it(tmp_path: Path, monkeypatch, fresh: bool, who: str) -> None:
    """A turn acknowledged in another thread while rebuild_index (or repair of a damaged user) filled
    the new collections went to the old ones, and was lost from the index with the swap: not searched,
    or with ``fresh`` a new user's every read raised "index lost" (a reviewer, 2026-12-08)."""
    import threading

    from recall_core.memory import rebuild_index
    from recall_core.memory.index import ChromaIndex

    with MemoryStore.local(tmp_path / "mem", encoder=HashEncoder(16)) as store:
        store.for_user("ann").add("ann keeps bees")
        store.for_user("bob").add("bob sails boats")
        write, done = ChromaIndex.write, []

        def meanwhile(self, rows, *args, **kwargs):
            filling = self is not store.index or kwargs.get("staging")
            if not done and filling and any(r.user_id == "bob" for r in rows):
                thread = threading.Thread(target=lambda: done.append(store.for_user(who).add(f"{who} writes of zebras")))
                thread.start()
                thread.join(20)
            return write(self, rows, *args, **kwargs)

        monkeypatch.setattr(ChromaIndex, "write", meanwhile)
        rebuild_index(store, fresh=fresh, progress=False)
        monkeypatch.setattr(ChromaIndex, "write", write)
        [[written]] = done
        assert [c.id for c in store.for_user(who).search("zebras", 1)] == [written]
        assert doctor(store).ok


def test_doctor_s_reset_cannot_fall_between_a_new_user_s_lookup_and_its_collection_made(tmp_path: Path) -> None:
    """A new user's first write looks the collection up, then makes it, on one client: doctor's reset in
    between left the second call on a closed client, a raw AttributeError on a journaled turn (a
    reviewer, 2026-12-08). The reset now waits for the write."""
    import threading

    with MemoryStore.local(tmp_path / "mem", encoder=HashEncoder(16)) as store:
        store.for_user("ann").add("ann keeps bees")
        lookup, resets = store.index._lookup, []

        def reset_meanwhile(name: str):
            found = lookup(name)
            if not resets:  # as doctor's check of the files does, in another thread
                def check() -> None:
                    with store.index.quiet.alone():
                        store.index.reset()
                        resets.append(1)

                thread = threading.Thread(target=check)
                thread.start()
                thread.join(0.5)  # it waits for this write's calls
            return found

        store.index._lookup = reset_meanwhile  # type: ignore[method-assign]
        [written] = store.for_user("newcomer").add("newcomer writes of zebras")
        store.index._lookup = lookup  # type: ignore[method-assign]
        assert [c.id for c in store.for_user("newcomer").search("zebras", 1)] == [written] and doctor(store).ok


def test_doctor_and_repair_run_one_at_a_time(tmp_path: Path, monkeypatch) -> None:
    """One doctor's reset of the client staled the handles another doctor (or repair) read through, and
    that doctor reported the whole index damaged (a reviewer, 2026-12-08: 4 of 101 rounds)."""
    import threading

    import recall_core.memory.upkeep.maintenance as maintenance

    with MemoryStore.local(tmp_path / "mem", encoder=HashEncoder(16)) as store:
        store.for_user("ann").add("ann keeps bees")
        check, inside, go, order = maintenance.check_index_files, threading.Event(), threading.Event(), []

        def held(folder):
            if not inside.is_set():
                inside.set()
                go.wait(10)
            order.append("check")
            return check(folder)

        monkeypatch.setattr(maintenance, "check_index_files", held)
        first = threading.Thread(target=lambda: order.append(doctor(store).ok))
        first.start()
        assert inside.wait(10)
        second = threading.Thread(target=lambda: order.append(repair(store).users))
        second.start()
        second.join(0.5)
        assert second.is_alive()  # waits for the first doctor
        go.set()
        first.join(10)
        second.join(10)
        assert order == ["check", True, "check", 0]

"""The one write path: an updated memory is searched like a new one; keyed memories (put/get/list)."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

from recall_core.memory import HashEncoder, MemoryStore, MemoryWriter
from recall_core.memory.records import key_memory_id
from tests.helpers.memories import RAW_TEXT


@pytest.fixture
def store(tmp_path: Path):
    with MemoryStore.local(tmp_path / "mem", encoder=HashEncoder(64)) as s:
        yield s


def _conversation(store: MemoryStore, user: str, first: str) -> list[str]:
    writer = store.writer
    ids = writer.add_turn(user, "user", first, session_id="s1", timestamp="2024-03-02T10:00:00")
    ids += writer.add_turn(user, "assistant", "What a lovely name!", session_id="s1", timestamp="2024-03-02T10:01:00")
    return ids


def test_an_updated_memory_is_searched_like_a_new_one(store: MemoryStore) -> None:
    """Update used to embed the bare text, skipping date, speaker and the turn before."""
    old_ids = _conversation(store, "old", "Is Rex a good name for my dog?")
    new_ids = _conversation(store, "new", "Is Biscuit a good name for my dog?")
    store.for_user("old").update(old_ids[0], "Is Biscuit a good name for my dog?")

    updated, fresh = store.journal.get(old_ids[0]), store.journal.get(new_ids[0])
    assert updated.search_text == fresh.search_text == "[2 March 2024] User: Is Biscuit a good name for my dog?"
    np.testing.assert_allclose(updated.embedding, fresh.embedding)
    # The reply is searched with the end of the turn before it: with the new words now.
    reply, fresh_reply = store.journal.get(old_ids[1]), store.journal.get(new_ids[1])
    assert "Biscuit" in reply.search_text and "Rex" not in reply.search_text
    assert reply.search_text == fresh_reply.search_text
    np.testing.assert_allclose(reply.embedding, fresh_reply.embedding)
    # Both are indexed with those vectors, so the index ranks them as it ranks new memories.
    found = store.for_user("old").search("Rex", k=2, retrieval="lexical")
    assert found == []
    assert {c.id for c in store.for_user("old").search("Biscuit", k=2, retrieval="lexical")} == set(old_ids)
    assert store.for_user("old").get(old_ids[0]).text == "Is Biscuit a good name for my dog?"


def test_a_deleted_turn_s_words_leave_the_turn_after_it(store: MemoryStore) -> None:
    """The reply was still searched (and exported) with a deleted turn's words until 2026-12-07 (a reviewer)."""
    for user in ("ana", "bob"):
        store.writer.add_turn(user, "user", "Do you know my dog's name?", session_id="s1", timestamp="2024-03-02T09:59:00")
    ids = _conversation(store, "ana", "Can you remember that my bank PIN is zebraquartz?")
    memory = store.for_user("ana")
    assert memory.delete(ids[0]) == 1
    # the reply is searched as if the deleted turn had never been written
    fresh = store.writer.add_turn("bob", "assistant", "What a lovely name!", session_id="s1",
                                  timestamp="2024-03-02T10:01:00")[0]  # fmt: skip
    reply, expected = store.journal.get(ids[1]), store.journal.get(fresh)
    assert reply.search_text == expected.search_text and "dog's name" in reply.search_text
    assert reply.state == expected.state
    np.testing.assert_allclose(reply.embedding, expected.embedding)
    assert memory.search("zebraquartz", k=3, retrieval="lexical") == []
    assert not any("zebraquartz" in str(entry) for entry in memory.export())


def test_a_keyed_note_is_no_turn_before_and_a_chunk_left_last_is_followed(store: MemoryStore) -> None:
    """A second reviewer: the turn after a keyed note was searched with the note's words (kept after
    its delete), and deleting the chunk left last of a turn left its words in the next turn."""
    writer = store.writer
    writer.add_turn("ana", "user", "Hello there?", session_id="s")
    key = writer.put("ana", "pin", "My bank PIN is zebraquartz?", session_id="s")
    reply = writer.add_turn("ana", "assistant", "Noted.", session_id="s")[0]
    assert "zebraquartz" not in store.journal.get(reply).search_text
    assert "Hello there?" in store.journal.get(reply).search_text
    assert store.for_user("ana").delete(key) == 1
    store.writer = chunked = MemoryWriter(store, chunk_tokens=8, window="always")
    words = " ".join(f"word{i}" for i in range(24))
    ids = chunked.add_turn("bo", "user", words, session_id="s")
    after = chunked.add_turn("bo", "assistant", "Noted.", session_id="s")[0]
    memory = store.for_user("bo")
    for deleted in reversed(ids[1:]):  # the last chunk, then the one left last
        last_word = store.journal.get(deleted).text.split()[-1]
        memory.delete(deleted)
        assert last_word not in store.journal.get(after).search_text
        assert memory.search(last_word, k=3, retrieval="lexical") == []
    assert store.journal.get(ids[0]).text.split()[-1] in store.journal.get(after).search_text


def test_a_keyed_note_s_words_a_store_from_before_holds_in_the_next_turn_go_with_its_delete(store: MemoryStore) -> None:
    """A store written before 2026-12-07 searched the turn after a keyed note with its words: its
    delete (or update) composes that turn again (a second reviewer)."""
    writer = store.writer
    key = writer.put("ana", "pin", "My bank PIN is zebraquartz?", session_id="s")
    reply = writer.add_turn("ana", "assistant", "Noted.", session_id="s")[0]
    old = "[2 March 2024] User: My bank PIN is zebraquartz?\nAssistant: Noted."
    store.journal.set_context(reply, old)  # as the code before wrote it
    assert store.for_user("ana").delete(key) == 1
    assert "zebraquartz" not in store.journal.get(reply).search_text


def test_a_delete_is_done_when_the_turn_after_it_cannot_be_indexed_again(store: MemoryStore, monkeypatch) -> None:
    """The turn after a deleted one is indexed again with its new context, best effort: until
    2026-12-07 an encoder down made the done delete raise (a second reviewer)."""
    ids = _conversation(store, "ana", "Can you remember that my bank PIN is zebraquartz?")

    def down(texts):
        raise ConnectionError("embedding service unreachable")

    monkeypatch.setattr(store.writer.encoder, "encode", down)
    assert store.for_user("ana").delete(ids[0]) == 1
    reply = store.journal.get(ids[1])
    assert store.journal.get(ids[0]) is None and reply.state == "pending" and "zebraquartz" not in reply.search_text


def test_a_turn_said_again_after_its_memory_was_updated_is_written(store: MemoryStore) -> None:
    """Its words' id held the updated text: until 2026-12-07 the turn was acknowledged with that id
    and written nowhere (a reviewer). The same words by the other speaker are a memory of their own."""
    memory, writer = store.for_user("ana"), store.writer
    [first] = writer.add_turn("ana", "user", "My dog is called Rex.", session_id="s1")
    memory.update(first, "My dog is called Max.")
    [again] = writer.add_turn("ana", "user", "My dog is called Rex.", session_id="s1")
    assert again != first and memory.get(again).text == "My dog is called Rex."
    assert writer.add_turn("ana", "user", "My dog is called Rex.", session_id="s1") == [again]  # written once
    [echo] = writer.add_turn("ana", "assistant", "My dog is called Rex.", session_id="s1")
    assert echo not in (first, again) and memory.get(echo).role == "assistant"
    both = writer.add_turns([{"user_id": "bo", "role": role, "content": "Yes.", "session_id": "s"}
                             for role in ("user", "assistant", "user")])  # fmt: skip
    assert both[0] == both[2] != both[1] and [m.role for m in store.for_user("bo").all()] == ["user", "assistant"]
    assert sorted(m.text for m in memory.all()) == ["My dog is called Max.", *["My dog is called Rex."] * 2]
    # an id freed by a delete before the turn's own is no reason to write it again (a second reviewer)
    memory.delete(first)
    assert writer.add_turn("ana", "user", "My dog is called Rex.", session_id="s1") == [again]
    store.for_user("bo").delete(both[0])
    assert writer.add_turn("bo", "assistant", "Yes.", session_id="s") == both[1]
    assert sorted(m.text for m in memory.all()) == ["My dog is called Rex."] * 2
    assert [m.role for m in store.for_user("bo").all()] == ["assistant"]


def test_a_bare_writer_updates_bare(tmp_path: Path) -> None:
    with MemoryStore.local(tmp_path / "m", encoder=HashEncoder(64)) as store:
        store.writer = MemoryWriter(store, **RAW_TEXT)
        (memory_id,) = store.writer.add_turn("u", "user", "first words")
        store.for_user("u").update(memory_id, "second words")
        row = store.journal.get(memory_id)
        assert row.context is None and row.search_text == "second words"
        np.testing.assert_allclose(row.embedding, store.encoder.encode(["second words"])[0])


def test_store_writer_must_belong_to_the_store(store: MemoryStore, tmp_path: Path) -> None:
    with MemoryStore.local(tmp_path / "other", encoder=HashEncoder(64)) as other:
        with pytest.raises(ValueError, match="store.writer"):
            store.writer = MemoryWriter(other)
    with pytest.raises(ValueError, match="store.writer"):
        store.writer = "not a writer"  # type: ignore[assignment]


def test_put_get_list_and_delete_by_key(store: MemoryStore) -> None:
    ann, bob = store.for_user("ann"), store.for_user("bob")
    first = ann.put("prefs/food", "Ann is vegetarian.", metadata={"namespace": "prefs"})
    assert first == key_memory_id("ann", "prefs/food")
    ann.put("prefs/drink", "Ann drinks green tea.", metadata={"namespace": "prefs"})
    ann.add("Hello there")
    bob.put("prefs/food", "Bob eats everything.")

    record = ann.get_by_key("prefs/food")
    assert record is not None and record.key == "prefs/food" and record.text == "Ann is vegetarian."
    assert record.metadata == {"namespace": "prefs"}  # the key is not user metadata
    assert bob.get_by_key("prefs/food").text == "Bob eats everything."  # same key, other user: other memory
    assert ann.get_by_key("missing") is None

    # Putting again replaces, keeping the id; putting the same again writes nothing.
    assert ann.put("prefs/food", "Ann is vegan.", metadata={"namespace": "prefs"}) == first
    assert ann.get(first).text == "Ann is vegan."
    before = store.journal.get(first).updated_at
    ann.put("prefs/food", "Ann is vegan.", metadata={"namespace": "prefs"})
    assert store.journal.get(first).updated_at == before

    assert [r.key for r in ann.list(where={"namespace": "prefs"})] == ["prefs/food", "prefs/drink"]
    assert [r.text for r in ann.list(limit=1, offset=1)] == ["Ann drinks green tea."]
    assert len(ann.list()) == 3
    got = ann.get_many([first, "nope", key_memory_id("bob", "prefs/food")])
    assert [r.id for r in got] == [first]  # another user's id is not this user's memory

    found = ann.search("vegan", k=1)[0]
    assert found.id == first and found.metadata["key"] == "prefs/food"
    assert ann.delete_key("prefs/food") is True
    assert ann.delete_key("prefs/food") is False
    assert ann.get_by_key("prefs/food") is None and bob.get_by_key("prefs/food") is not None


def test_put_rejects_bad_keys_and_reserved_metadata(store: MemoryStore) -> None:
    memory = store.for_user("u")
    for key in ("", "   ", None, 3):
        with pytest.raises(ValueError, match="key"):
            memory.put(key, "text")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="reserved"):
        memory.put("k", "text", metadata={"key": "other"})
    with pytest.raises(ValueError, match="limit"):
        memory.list(limit=-1)
    with pytest.raises(ValueError, match="offset"):
        memory.list(offset=-1)
    assert store.journal.count("u") == 0


def test_a_keyed_memory_is_searched_without_the_turn_before(store: MemoryStore) -> None:
    memory = store.for_user("u")
    memory.add("Something said before.", timestamp="2024-03-02T10:00:00")
    memory_id = memory.put("note", "A note.", timestamp="2024-03-02T11:00:00")
    assert store.journal.get(memory_id).search_text == "[2 March 2024] User: A note."
    memory.update(memory_id, "A new note.")
    assert store.journal.get(memory_id).search_text == "[2 March 2024] User: A new note."
    assert memory.get(memory_id).key == "note"


def test_a_caller_s_progress_bar_is_updated_and_left_open(store: MemoryStore) -> None:
    """``add_turns(progress=bar)`` updates the caller's tqdm bar; until 2026-12-06 it also closed
    it, so a caller writing in batches under one bar lost it after the first batch."""
    from tqdm import tqdm

    writer = MemoryWriter(store, **RAW_TEXT)
    with tqdm(total=4, disable=False, file=io.StringIO()) as bar:
        for batch in range(2):
            writer.add_turns([{"user_id": "u", "role": "user", "content": f"batch {batch} turn {i}"} for i in range(2)],
                             progress=bar)  # fmt: skip
            assert not bar.disable and bar.n == 2 * (batch + 1)  # tqdm's close() sets disable
    assert store.for_user("u").count() == 4


def test_doctor_finds_a_keyed_memory_the_same_in_the_index_and_the_journal(store: MemoryStore) -> None:
    """A found record holds a put()'s key apart from its metadata, and doctor compared the metadata
    alone: every keyed memory was reported "different in the index", and repair rewrote it for nothing."""
    from recall_core.memory import doctor

    store.writer.put("ada", "dog", "Biscuit")
    store.writer.add_turn("ada", "user", "I live in Porto.")
    report = doctor(store)
    assert report.ok and report.totals()["mismatched"] == 0, report.summary()


@pytest.mark.parametrize("turns", [None, 5, "I like tea.", {"user_id": "u", "role": "user", "content": "I like tea."}])
def test_add_turns_refuses_what_is_not_a_list_of_turns_naming_it(store: MemoryStore, turns) -> None:
    """Until 2026-12-06 None and 5 raised a bare TypeError, and one turn's dict was read as its keys
    ("turn 0: a turn must be an object, got str")."""
    writer = MemoryWriter(store, **RAW_TEXT)
    with pytest.raises(ValueError, match=r"turns must be an iterable of turns .*add_turn writes one turn"):
        writer.add_turns(turns)
    assert store.journal.count() == 0


def test_a_bad_progress_is_refused_before_anything_is_written(store: MemoryStore) -> None:
    """Until 2026-12-06 ``progress="yes"`` raised AttributeError after the turn was journaled and
    indexed, so a caller believed a written turn failed."""
    writer = MemoryWriter(store, **RAW_TEXT)
    with pytest.raises(ValueError, match="progress must be True, False or a tqdm bar, got 'yes'"):
        writer.add_turns([{"user_id": "u", "role": "user", "content": "I like tea."}], progress="yes")
    assert store.journal.count() == 0


def test_an_update_that_removes_a_metadata_key_removes_it_from_the_index(store: MemoryStore) -> None:
    """Chroma's upsert merges metadata: until 2026-12-07 a key an update dropped stayed in the
    index, returned by search and ``get`` and matched by ``where``, while the journal had none."""
    memory = store.for_user("u")
    [memory_id] = memory.add("my bank pin is 1", metadata={"topic": "bank", "tag": "x"})
    memory.update(memory_id, "my bank pin is 1", metadata={"topic": "money"})
    assert memory.get(memory_id).metadata == {"topic": "money"}
    [found] = memory.search("bank pin", 1)
    assert "tag" not in found.metadata and found.metadata["topic"] == "money"
    assert memory.search("bank pin", 1, where={"tag": "x"}) == []
    memory.update(memory_id, "my bank pin is 2", metadata={})
    assert memory.get(memory_id).metadata == {}
    assert memory.search("bank pin", 1, where={"topic": "money"}) == []
    kept = memory.put("pin", "my pin is 3", metadata={"kind": "secret"})
    memory.put("pin", "my pin is 3", metadata={})  # a keyed memory put again without the key
    assert "kind" not in memory.get(kept).metadata


def test_a_memory_written_again_over_a_failed_delete_keeps_none_of_the_old_keys(store: MemoryStore) -> None:
    """A delete whose index step failed leaves the old record in the index (a tombstone in the
    journal); the same key put again was a "first write" there, and Chroma merged the old keys into
    it: ``get`` and ``where`` showed them, and ``repair`` could not clear what ``doctor`` found (a
    reviewer, 2026-12-07)."""
    from recall_core.memory import MemoryUnavailableError, doctor

    memory = store.for_user("u")
    kept = memory.put("pin", "my pin is 3", metadata={"kind": "secret", "tag": "x"})
    delete = store.index.delete

    def down(*args, **kwargs):
        raise MemoryUnavailableError("the index is down")

    store.index.delete = down
    with pytest.raises(MemoryUnavailableError):
        memory.delete_key("pin")
    store.index.delete = delete
    memory.put("pin", "my pin is 3", metadata={})
    assert memory.get(kept).metadata == {}
    assert memory.search("pin", 1, where={"kind": "secret"}) == []
    assert doctor(store).ok


def test_a_put_with_a_value_of_another_type_replaces_it(store: MemoryStore) -> None:
    """``1`` and ``True`` are equal in Python, not in Chroma's ``where``: a put that changed one into
    the other was taken for the same again and wrote nothing. ``-0.0``, which the index keeps as
    ``0.0``, is not a difference ``doctor`` reports."""
    from recall_core.memory import doctor

    memory = store.for_user("u")
    kept = memory.put("flag", "the flag note", metadata={"on": 1, "zero": -0.0})
    memory.put("flag", "the flag note", metadata={"on": True, "zero": -0.0})
    assert memory.get(kept).metadata["on"] is True
    assert [r.id for r in memory.list(where={"on": True})] == [kept]
    assert doctor(store).ok



@pytest.mark.skipif(not hasattr(__import__("time"), "tzset"), reason="time.tzset: POSIX only")
def test_a_turn_written_without_a_time_is_dated_on_the_user_s_own_day(store: MemoryStore, monkeypatch) -> None:
    """A turn written now (the adapters give no time) or at epoch seconds carries the machine's own
    zone: until 2026-12-07 it was written in UTC, and a turn said on the evening of 6 December in
    Honolulu showed as "[7 December 2026]" (a reviewer)."""
    import time
    from datetime import datetime

    from recall_core.memory.validation import format_timestamp

    monkeypatch.setenv("TZ", "Pacific/Honolulu")
    time.tzset()
    try:
        evening = datetime(2026, 12, 6, 22, 11).astimezone()  # 08:11 UTC on the 7th
        assert format_timestamp(evening.timestamp()) == "2026-12-06T22:11:00-10:00"
        (memory_id,) = store.writer.add_turn("ada", "user", "I parked on level 3, bay 42.", session_id="s1")
        written = store.journal.get(memory_id)
        assert written.timestamp.endswith("-10:00")
        assert written.search_text.startswith(f"[{datetime.now().astimezone().day} ")
    finally:
        monkeypatch.undo()
        time.tzset()


def test_a_turn_written_before_the_question_it_answers_is_searched_with_it(store: MemoryStore) -> None:
    """Written first, "Dutch!" was never searched with the question written after it (turn 0), though
    written in order it was (until 2026-12-07: a reviewer); nor when the question came in a later call."""
    writer = MemoryWriter(store, window="always", dated=False)
    question = {"user_id": "u", "role": "assistant", "content": "Which language do you speak at home?",
                "session_id": "s", "turn_index": 0}  # fmt: skip
    answer = {"user_id": "u", "role": "user", "content": "Dutch!", "session_id": "s", "turn_index": 1}
    writer.add_turns([answer, question])
    writer.add_turns([{**answer, "session_id": "t"}])
    writer.add_turns([{**question, "session_id": "t"}])
    rows = {(r.session_id, r.turn_index): r for r in store.journal.rows("u")}
    for session in ("s", "t"):
        assert "Which language do you speak at home?" in rows[(session, 1)].search_text
    found = store.for_user("u").search("which language at home", 4, retrieval="lexical", where={"role": "user"})
    assert sorted(c.metadata["session_id"] for c in found) == ["s", "t"]

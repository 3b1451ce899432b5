"""One rule for every field: refused with a ``ValueError`` that names it, before anything is written.

Values the index would refuse or change (NaN, infinities, ints beyond 64 bits, keys Chroma
keeps for itself) are refused, so no row can sit in the journal that the index cannot hold;
text fields share the UTF-8 / NUL / blank rules; user ids are compared in Unicode NFC.
"""

from __future__ import annotations

import os
import sqlite3
import unicodedata
from datetime import datetime, timezone
from pathlib import Path

import pytest

from recall_core.memory import HashEncoder, MemoryStore, MemoryWriter, doctor
from recall_core.memory.index import collection_name
from recall_core.memory.journal import JournalRow
from tests.helpers.memories import RAW_TEXT

os.environ.setdefault("HF_HUB_OFFLINE", "1")

NFC = unicodedata.normalize("NFC", "José")
NFD = unicodedata.normalize("NFD", "José")


@pytest.fixture
def store(tmp_path: Path):
    with MemoryStore.local(tmp_path / "mem", encoder=HashEncoder(32)) as s:
        yield s


def nothing_written(store: MemoryStore) -> bool:
    return store.journal.count() == 0


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (float("nan"), "metadata value of 'v' must be a finite number"),
        (float("inf"), "metadata value of 'v' must be a finite number"),
        (-float("inf"), "metadata value of 'v' must be a finite number"),
        (2**70, "metadata value of 'v' is an int outside 64 bits"),
        (2**63, "metadata value of 'v' is an int outside 64 bits"),
        (-(2**63) - 1, "metadata value of 'v' is an int outside 64 bits"),
        ("a\x00b", "metadata value of 'v' contains NUL"),
        ("bad \udce9", "metadata value of 'v' is not valid UTF-8"),
    ],
)
def test_metadata_values_the_index_cannot_keep_are_refused(store: MemoryStore, value, message) -> None:
    """NaN, inf and 2**70 used to be accepted and then vanish (or turn into floats) in the
    index, leaving doctor reporting "mismatched" forever."""
    with pytest.raises(ValueError, match=message):
        MemoryWriter(store, **RAW_TEXT).add_turn("u", "user", "hello", metadata={"v": value})
    assert nothing_written(store)


def test_metadata_values_at_the_limits_are_kept_exactly(store: MemoryStore) -> None:
    meta = {"top": 2**63 - 1, "bottom": -(2**63), "tiny": 5e-324, "huge": 1e308, "flag": True, "empty": ""}
    memory_id = MemoryWriter(store, **RAW_TEXT).add_turn("u", "user", "limits", metadata=meta)[0]
    assert store.for_user("u").get(memory_id).metadata == meta
    assert doctor(store).ok


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"timestamp": float("inf")}, "timestamp"),
        ({"timestamp": 1e20}, "timestamp"),
        ({"timestamp": float("nan")}, "timestamp"),
        ({"timestamp": -1e15}, "timestamp"),
        ({"timestamp": 10**30}, "timestamp"),
        ({"timestamp": "2024\x00-01-01"}, "timestamp"),
        ({"turn_index": 2**70}, "turn_index"),
        ({"turn_index": 2**63}, "turn_index"),
        ({"turn_index": 2**63 - 1}, "turn_index"),  # every later write then failed (until 2026-12-07)
        ({"turn_index": 2**62 + 1}, "turn_index"),
        ({"session_id": "bad \udce9"}, "session_id"),
        ({"session_id": "s\x00"}, "session_id"),
        ({"session_id": "\u200b\u200d"}, "session_id"),
        ({"metadata": {"k\x00": 1}}, "metadata key"),
        ({"metadata": {"bad \udce9": 1}}, "metadata key"),
    ],
)
def test_every_bad_field_is_a_value_error_naming_it(store: MemoryStore, kwargs, field) -> None:
    """These raised OverflowError, or a ValueError that did not say which field."""
    with pytest.raises(ValueError, match=field) as error:
        MemoryWriter(store, **RAW_TEXT).add_turn("u", "user", "hello", **kwargs)
    assert type(error.value) is ValueError
    assert nothing_written(store)


def test_turns_after_the_last_position_are_written(store: MemoryStore) -> None:
    """At the highest ``turn_index`` the store takes, the turns after it (numbered by the journal)
    are still written; so are those after a 2**63 - 1 an older store holds (until 2026-12-07 each
    raised SQLite's ``OverflowError``, a reviewer)."""
    writer = MemoryWriter(store, **RAW_TEXT)
    writer.add_turn("u", "user", "at the last position", session_id="s", turn_index=2**62)
    writer.add_turn("u", "user", "after it", session_id="s")
    assert store.journal.next_turn_index("u", "s") == 2**62 + 2
    store.journal._db.execute("UPDATE memories SET turn_index=? WHERE text=?", (2**63 - 1, "after it"))
    for text in ("one more", "and another"):
        writer.add_turn("u", "user", text, session_id="s")
    assert store.for_user("u").count() == 4


def test_timestamps_within_the_calendar_are_accepted(store: MemoryStore) -> None:
    writer = MemoryWriter(store, **RAW_TEXT)
    for stamp in (0, -86_400 * 365 * 100, 253_402_000_000, 1.5e9):
        writer.add_turn("u", "user", f"at {stamp}", timestamp=stamp)
    assert store.for_user("u").count() == 4
    assert store.for_user("u").all()[0].timestamp == datetime.fromtimestamp(0, tz=timezone.utc).isoformat()


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda s: s.for_user("ada\x00"), "user_id"),
        (lambda s: s.for_user("\u200b\u2060"), "user_id"),
        (lambda s: s.for_user("\ufeff"), "user_id"),
        (lambda s: MemoryWriter(s).add_turn("u", "user", "\u200b\u200c\u200d\ufeff"), "content"),
        (lambda s: MemoryWriter(s).add_turn("u", "user", " \u2060\u200b\n"), "content"),
        (lambda s: s.for_user("u").put("\u200b", "text"), "key"),
        (lambda s: s.for_user("u").put("k\x00", "text"), "key"),
    ],
)
def test_text_fields_share_one_rule(store: MemoryStore, call, field) -> None:
    """NUL was refused in content only; content of zero-width characters was accepted."""
    with pytest.raises(ValueError, match=field):
        call(store)
    assert nothing_written(store)


def test_user_ids_are_one_user_in_nfc_and_nfd(store: MemoryStore) -> None:
    """A user id "José" typed as one code point or as "e" + a combining accent is one user."""
    assert NFC != NFD
    writer = MemoryWriter(store, **RAW_TEXT)
    writer.add_turn(NFD, "user", "my dog is called Biscuit")
    writer.add_turn(NFC, "user", "I live in Porto")
    for spelling in (NFC, NFD, NFD.encode()):
        memory = store.for_user(spelling)
        assert memory.user_id == NFC and memory.count() == 2
        assert memory.search("dog", 1)[0].text == "my dog is called Biscuit"
    assert store.users() == [NFC]
    # Case and spaces are not folded: those are other users.
    assert store.for_user("josé").count() == 0 and store.for_user(" José").count() == 0
    assert store.for_user(NFD).forget() == 2 and store.for_user(NFC).count() == 0


def test_a_store_written_with_a_non_nfc_id_keeps_working(tmp_path: Path) -> None:
    """A journal and an index written before ids were normalised (schema 2): the rows move to the
    NFC id and its collection when the store opens; the old collection is dropped."""
    path = tmp_path / "mem"
    encoder = HashEncoder(32)
    with MemoryStore.local(path, encoder=encoder) as store:
        writer = MemoryWriter(store, **RAW_TEXT)
        writer.add_turn("bob", "user", "bob's own memory")
        # What the old writer did for an NFD id: journal and index under that exact spelling.
        rows = [
            JournalRow(
                id=f"old-{i}", user_id=NFD, session_id="s", role="user", text=text, timestamp="2024-01-01",
                turn_index=i, chunk_index=0, n_chunks=1, embedding=encoder.encode([text])[0], encoder=encoder.name,
            )  # fmt: skip
            for i, text in enumerate(["José likes green tea", "José works at the harbour"])
        ]
        store.journal.insert(rows)
        writer.index(store.journal.get_many([r.id for r in rows]))
        assert store.index.collection(NFD, "m") is not None
    db = sqlite3.connect(path / "journal.sqlite3")
    db.execute("PRAGMA user_version=2")
    db.execute("DROP TABLE renamed_users")
    db.commit()
    db.close()

    with MemoryStore.local(path, encoder=encoder) as store:
        assert sorted(store.users()) == sorted(["bob", NFC])
        memory = store.for_user(NFD)
        assert sorted(r.id for r in memory.all()) == ["old-0", "old-1"]  # the ids they had
        assert memory.search("green tea", 1)[0].id == "old-0"
        assert store.index.collection(NFD, "m") is None  # the old spelling's collection is gone
        assert collection_name(NFC) != collection_name(NFD)
        assert doctor(store).ok
        assert store.journal.renamed_users() == []


@pytest.mark.parametrize(
    ("settings", "message"),
    [({"port": 70000}, r"port must be an int in \[1, 65535\], got 70000"), ({"port": "80a"}, "port must be an int"),
     ({"port": True}, "port must be an int"), ({"host": ""}, "host must be a non-empty string"),
     ({"timeout": -5}, "timeout must be a finite number of seconds > 0"),
     ({"timeout": float("inf")}, "timeout must be a finite number")],
)  # fmt: skip
def test_a_server_store_refuses_an_impossible_address_at_once(tmp_path, settings, message):
    """These were taken: each write then said "unreachable, safe in the journal, run repair", which
    could never work (and ``timeout=-5`` raised a bare ValueError after journaling the turn)."""
    with pytest.raises(ValueError, match=message):
        MemoryStore.server(journal_path=tmp_path / "j.sqlite3", encoder=HashEncoder(8), **settings)
    assert not (tmp_path / "j.sqlite3").exists()
    with MemoryStore.server(port="8000", journal_path=tmp_path / "k.sqlite3", encoder=HashEncoder(8)) as store:
        assert store.location.endswith(":8000")  # its digits, from an environment variable, still do


@pytest.mark.parametrize(
    ("settings", "message"),
    [({"batch_size": 0}, "batch_size must be an int >= 1, got 0"), ({"batch_size": 2.7}, "batch_size must be an int"),
     ({"batch_size": None}, "batch_size must be an int"), ({"dated": "no"}, "dated must be True or False, got 'no'"),
     ({"speakers": "false"}, "speakers must be True or False")],
)  # fmt: skip
def test_a_writer_refuses_settings_it_used_to_coerce(tmp_path, settings, message):
    """``batch_size`` 0 or 2.7 was clamped or cut, and ``dated="no"`` read as True, silently."""
    with MemoryStore.local(tmp_path / "m", encoder=HashEncoder(8)) as store:
        with pytest.raises(ValueError, match=message):
            MemoryWriter(store, **settings)


@pytest.mark.parametrize(("call", "message"), [
    (lambda m: m.search(None), "query must be a string or a RecallQuery"),
    (lambda m: m.search(5), "query must be a string or a RecallQuery"),
    (lambda m: m.search("tea", where="x"), "where must be None or a mapping"),
    (lambda m: m.search("tea", where={"$bad": 1}), "where is not a filter Chroma takes"),
    (lambda m: m.list(where={"$bad": 1}), "where is not a filter Chroma takes"),
    (lambda m: m.delete(5), "memory_ids must be an id or a list of ids"),
    (lambda m: m.delete(None), "memory_ids must be an id or a list of ids"),
    (lambda m: m.delete(["a", 5]), "memory_ids must be strings"),
    (lambda m: m.update(m.list()[0].id, "x", metadata=[1]), "metadata must be a mapping"),
    # these gave Chroma's "Expected ID to be a str", or a TypeError (get_many(None))
    (lambda m: m.get(None), "memory_id must be a memory id"),
    (lambda m: m.get(5), "memory_id must be a memory id .*got int"),
    (lambda m: m.update(None, "x"), "memory_id must be a memory id"),
    (lambda m: m.get_many(None), "memory_ids must be an id or a list of ids"),
    (lambda m: m.get_many([5]), "memory_ids must be strings, got 5"),
])  # fmt: skip
def test_bad_arguments_to_a_users_memory_name_the_argument_and_lose_nothing(store: MemoryStore, call, message) -> None:
    memory = store.for_user("ada")
    memory.add("I like tea.")
    with pytest.raises(ValueError, match=message):
        call(memory)
    assert [r.text for r in memory.all()] == ["I like tea."]


def test_get_many_takes_one_id_as_delete_does(store: MemoryStore) -> None:
    """A plain string was read as its characters, and ``get_many(memory_id)`` found nothing."""
    [memory_id] = store.for_user("ada").add("I like tea.")
    assert [r.text for r in store.for_user("ada").get_many(memory_id)] == ["I like tea."]


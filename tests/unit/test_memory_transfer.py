"""Export and import of a user's memories (JSONL): a round trip keeps everything; a bad file
writes nothing; an index down keeps the imported memories in the journal (issue 22, item 10)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from recall_core.memory import HashEncoder, MemoryReadOnlyError, MemoryStore, MemoryUnavailableError, repair
from recall_core.memory.upkeep.transfer import FORMAT


def _fill(store: MemoryStore) -> None:
    ada = store.for_user("ada")
    ada.add("I adopted a beagle called Zorblax.", session_id="s1", timestamp="2026-11-01T10:00:00+00:00",
            metadata={"mood": "glad", "rank": 3})  # fmt: skip
    ada.add("Lovely name!", role="assistant", session_id="s1", timestamp="2026-11-01T10:00:05+00:00")
    ada.add("I work at the lighthouse on Berlenga. " * 60, session_id="s2")  # chunked: several memories
    ada.put("pin", "My PIN is 4321.", metadata={"source": "form"})
    gone = ada.add("Delete me.", session_id="s3")
    ada.delete(gone)
    store.for_user("bob").add("Bob's own fact.")


def test_export_then_import_into_a_fresh_store_gives_the_same_memories(tmp_path: Path) -> None:
    with MemoryStore.local(tmp_path / "a", encoder=HashEncoder(32)) as store:
        _fill(store)
        ada = store.for_user("ada")
        exported = ada.export()
        records = ada.list()
        found = [(c.id, c.text) for c in ada.search("what is my dog called?", k=3)]
        assert ada.export_jsonl(tmp_path / "ada.jsonl") == len(exported)
    assert len(exported) >= 5 and all(item["format"] == FORMAT for item in exported)
    assert "Delete me." not in {item["text"] for item in exported}
    assert {item["user_id"] for item in exported} == {"ada"}
    assert [json.loads(line) for line in (tmp_path / "ada.jsonl").read_text().splitlines()] == exported

    with MemoryStore.local(tmp_path / "b", encoder=HashEncoder(32)) as fresh:
        report = fresh.import_memories(tmp_path / "ada.jsonl")
        assert (report.added, report.existing, report.users) == (len(exported), 0, ("ada",))
        ada = fresh.for_user("ada")
        assert ada.export() == exported  # ids, text, roles, timestamps, sessions, metadata, keys, order
        assert ada.list() == records
        assert ada.get_by_key("pin").text == "My PIN is 4321."
        assert [(c.id, c.text) for c in ada.search("what is my dog called?", k=3)] == found
        assert fresh.users() == ["ada"]
        again = fresh.import_memories(tmp_path / "ada.jsonl")  # twice: nothing added
        assert (again.added, again.existing) == (0, len(exported))
        assert len(ada.export()) == len(exported)
    with MemoryStore.local(tmp_path / "b", encoder=HashEncoder(32)) as reopened:  # journal and index agree
        assert reopened.for_user("ada").count() == len(exported)


def test_the_dicts_import_as_well_and_a_stream_too(tmp_path: Path) -> None:
    with MemoryStore.local(tmp_path / "a", encoder=HashEncoder(32)) as store:
        _fill(store)
        exported = store.for_user("bob").export()
        stream = io.StringIO()
        store.for_user("ada").export_jsonl(stream)
    with MemoryStore.local(tmp_path / "b", encoder=HashEncoder(32)) as fresh:
        assert fresh.import_memories(exported).added == 1
        stream.seek(0)
        assert fresh.import_memories(stream).users == ("ada",)
        assert sorted(fresh.users()) == ["ada", "bob"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda item: item.update(role="robot"), "line 2: role must be one of"),
        (lambda item: item.update(id="xyz"), "line 2: id must be 32 lowercase hex digits"),
        (lambda item: item.update(text="   "), "line 2: text is empty"),
        (lambda item: item.update(turn_index=-1), "line 2: turn_index must be an int from 0"),
        (lambda item: item.update(colour="red"), r"line 2: unknown fields \['colour'\]"),
        (lambda item: item.update(format="recall-memory/9"), "line 2: format must be"),
        (lambda item: item.update(metadata={"user_id": "eve"}), "line 2: .*user_id"),
        (lambda item: item.pop("user_id"), r"line 2: missing fields \['user_id'\]"),
        (lambda item: item.update(key="other"), "line 2: id .* is not the id of key 'other'"),
    ],
)
def test_a_bad_line_names_line_and_field_and_nothing_is_written(tmp_path: Path, change, message) -> None:
    with MemoryStore.local(tmp_path / "a", encoder=HashEncoder(32)) as store:
        _fill(store)
        items = store.for_user("ada").export()
    pin = next(i for i, item in enumerate(items) if item["key"] == "pin")
    items.insert(1, items.pop(pin))  # the keyed memory on line 2
    change(items[1])
    path = tmp_path / "bad.jsonl"
    path.write_text("".join(json.dumps(item) + "\n" for item in items))
    with MemoryStore.local(tmp_path / "b", encoder=HashEncoder(32)) as fresh:
        with pytest.raises(ValueError, match=message):
            fresh.import_memories(path)
        assert fresh.users() == [] and fresh.journal.count() == 0


def test_not_json_and_duplicate_ids_are_refused(tmp_path: Path) -> None:
    with MemoryStore.local(tmp_path / "a", encoder=HashEncoder(32)) as store:
        _fill(store)
        line = json.dumps(store.for_user("bob").export()[0])
        (tmp_path / "twice.jsonl").write_text(f"{line}\n\n{line}\n")
        (tmp_path / "broken.jsonl").write_text(line + "\n{not json\n")
        with pytest.raises(ValueError, match="line 3: id .* is already on line 1"):
            store.import_memories(tmp_path / "twice.jsonl")
        with pytest.raises(ValueError, match="broken.jsonl line 2: not JSON"):
            store.import_memories(tmp_path / "broken.jsonl")
        with pytest.raises(ValueError, match="is not a file"):
            store.import_memories(tmp_path / "missing.jsonl")


def test_an_index_down_keeps_the_imported_memories_for_repair(tmp_path: Path, monkeypatch) -> None:
    with MemoryStore.local(tmp_path / "a", encoder=HashEncoder(32)) as store:
        _fill(store)
        exported = store.for_user("ada").export()
    with MemoryStore.local(tmp_path / "b", encoder=HashEncoder(32)) as fresh:
        def down(*args, **kwargs):
            raise MemoryUnavailableError("the index is down")

        monkeypatch.setattr(fresh.index, "write", down)
        with pytest.raises(MemoryUnavailableError, match="safe in the journal"):
            fresh.import_memories(exported)
        assert fresh.for_user("ada").pending() == len(exported)
        monkeypatch.undo()
        repair(fresh)
        assert fresh.for_user("ada").export() == exported
        assert fresh.for_user("ada").count() == len(exported)


def test_a_read_only_store_exports_and_refuses_an_import(tmp_path: Path) -> None:
    with MemoryStore.local(tmp_path / "a", encoder=HashEncoder(32)) as store:
        _fill(store)
        exported = store.for_user("ada").export()
    with MemoryStore.local(tmp_path / "a", encoder=HashEncoder(32), read_only=True) as store:
        assert store.for_user("ada").export() == exported
        with pytest.raises(MemoryReadOnlyError):
            store.import_memories(exported)

"""A store opened without an encoder uses the one its journal records: never another one silently.

The probe's fault: ``recall rebuild-index --fresh`` without ``--encoder`` on a store written with
``encoder="hash"`` re-encoded every memory with MiniLM (1 min 39 s for 3,200).
"""

from __future__ import annotations

import pytest

from recall_core.cli import main
from recall_core.memory import EncoderMismatchError, HashEncoder, MemoryStore, MemoryWriter, doctor

TEXTS = [f"Fact number {i}: my dog Biscuit likes the park." for i in range(20)]


def _written(path, encoder):
    with MemoryStore.local(path, encoder=encoder) as store:
        MemoryWriter(store).add_turns([{"user_id": "ada", "role": "user", "content": t} for t in TEXTS], progress=False)


def test_rebuild_index_fresh_without_encoder_keeps_the_store_s_encoder(tmp_path, capsys):
    path = tmp_path / "memory"
    _written(path, HashEncoder(32))
    assert main(["rebuild-index", "--fresh", "--store", str(path)]) == 0
    out = capsys.readouterr().out
    assert "reencoded=0" in out, out  # the journaled hash vectors were reused, nothing was embedded again
    with MemoryStore.local(path) as store:  # no encoder given: the recorded one
        assert store.encoder.name == "hash-32"
        report = doctor(store, check_vectors=True)
        assert report.ok and report.totals()["index"] == len(TEXTS)
        assert store.for_user("ada").search("Fact number 3", k=1)  # queries embedded by the same encoder


def test_memories_of_several_encoders_are_refused_with_how_to_choose(tmp_path):
    path = tmp_path / "memory"
    _written(path, HashEncoder(32))
    with MemoryStore.local(path, encoder=HashEncoder(32)) as store:
        rows = list(store.journal.rows("ada"))[:5]
        store.journal.set_vectors([r.id for r in rows], HashEncoder(32, name="other").encode([r.text for r in rows]), "other")
    with MemoryStore.local(path) as store:
        with pytest.raises(ValueError, match=r"several encoders \('hash-32', 'other'\).*--encoder"):
            _ = store.encoder
    assert main(["rebuild-index", "--store", str(path)]) == 2  # the command line says so too, and stops
    with MemoryStore.local(path, encoder="hash-32") as store:  # chosen: used
        assert store.encoder.name == "hash-32"


def test_a_write_with_an_encoder_of_another_size_is_refused_before_anything_is_journaled(tmp_path):
    """`recall remember --encoder hash-32` on a store written with another encoder's size was
    refused by the index after the turn was journaled with the new encoder's vector: the turn was
    kept as pending, the store then held "several encoders" and every search and repair failed.
    Now the write is refused first: nothing is written, and the store goes on as before."""
    path = tmp_path / "memory"
    _written(path, HashEncoder(32))
    with MemoryStore.local(path, encoder=HashEncoder(16)) as store:
        with pytest.raises(EncoderMismatchError, match="'hash-32' with 32 dimensions.*Nothing was written"):
            MemoryWriter(store).add_turn("ada", "user", "I named my beagle Zorblax.")
        with pytest.raises(ValueError, match="dimension mismatch"):  # a ValueError, as bad input is
            MemoryWriter(store).add_turns([{"user_id": "ada", "role": "user", "content": "Another one."}])
        assert store.journal.count("ada") == len(TEXTS) and store.journal.encoders() == ["hash-32"]
        MemoryWriter(store).add_turn("bob", "user", "Bob is new here.")  # another user's first memory is written
    with MemoryStore.local(path) as store:
        assert doctor(store).ok and store.for_user("ada").count() == len(TEXTS)


def test_update_and_put_with_an_encoder_of_another_size_are_refused_before_anything_is_journaled(tmp_path):
    """``update()`` and ``put()`` of an existing key went past the check: the new text and its vector
    were journaled as pending, and the store then held two encoders."""
    path = tmp_path / "memory"
    with MemoryStore.local(path, encoder=HashEncoder(32)) as store:
        writer = MemoryWriter(store)
        (first,) = writer.add_turn("ada", "user", TEXTS[0])
        writer.put("ada", "dog", "Biscuit")
    with MemoryStore.local(path, encoder=HashEncoder(16)) as store:
        with pytest.raises(EncoderMismatchError, match="Nothing was written"):
            MemoryWriter(store).update("ada", first, "I named my beagle Zorblax.")
        with pytest.raises(EncoderMismatchError, match="Nothing was written"):
            MemoryWriter(store).put("ada", "dog", "Zorblax")
        assert store.journal.encoders() == ["hash-32"] and store.journal.count("ada", "pending") == 0
        assert store.journal.get(first).text == TEXTS[0]

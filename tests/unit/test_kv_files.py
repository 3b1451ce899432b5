"""Block files on disk (``KVMemories(disk=...)``) can be trusted: a damaged or foreign file is never used.

A file is checked on read against the digest of its tensors and the key it was written for; one
that fails is removed, counted in the recall's trace (``kv_discarded``), computed again and
written in its place.
"""

from __future__ import annotations

import json
import struct

import pytest
import torch

from recall_core import RECALL_TOKEN, RecallConfig, recall_generate
from recall_core.kv.blocks import plan_block
from recall_core.kv.memories import KVMemories, fetch_blocks
from tests.helpers.memories import FixedMemory
from tests.helpers.tiny import tiny_model

FACTS = ("The user's dog is called Biscuit.", "I live in Lisbon and I work as a nurse.")
CONFIG = RecallConfig(inject_mode="kv", max_recalls=1)



@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    """A RECALL_HOME of the test's own: a cache with a folder lists it there."""
    monkeypatch.setenv("RECALL_HOME", str(tmp_path / "home"))

def _generate(model, tokenizer, cache):
    trace: list = []
    ids = tokenizer("My dog is called" + RECALL_TOKEN, return_tensors="pt").input_ids
    out = model.generate(
        ids, custom_generate=recall_generate, memory=FixedMemory(*FACTS), recall_config=CONFIG,
        recall_tokenizer=tokenizer, recall_trace=trace, recall_kv_memories=cache, do_sample=False, max_new_tokens=4,
    )  # fmt: skip
    (recall,) = trace
    return out, recall


def _files(folder):
    return sorted(folder.glob("*/*.safetensors"), key=lambda f: f.stat().st_size)


def _garble_tensors(path):
    """Overwrite every tensor byte with 0x7f (float32 3.39e38), keeping the safetensors header intact."""
    raw = bytearray(path.read_bytes())
    start = 8 + struct.unpack("<Q", raw[:8])[0]
    raw[start:] = b"\x7f" * (len(raw) - start)
    path.write_bytes(bytes(raw))


def test_a_block_file_with_garbled_tensors_is_a_miss_removed_and_recomputed(tmp_path):
    model, tokenizer = tiny_model("llama")
    folder = tmp_path / "kv"
    expected, _ = _generate(model, tokenizer, KVMemories(disk=folder))
    largest = _files(folder)[-1]
    _garble_tensors(largest)
    header = json.loads(largest.read_bytes()[8 : 8 + struct.unpack("<Q", largest.read_bytes()[:8])[0]])
    assert "key" in header["__metadata__"]  # the header is intact: only the tensors are damaged

    cache = KVMemories(disk=folder)  # another process, the same folder
    again, recall = _generate(model, tokenizer, cache)
    assert torch.equal(again, expected)  # computed again: the same answer as with a sound file
    assert recall.kv_reused < recall.length - recall.kv_recomputed  # the damaged block was not reused
    assert recall.kv_discarded == 1 and cache.stats()["discarded"] == 1  # and the trace says so
    # the file was written again, whole: a third process reads every block from disk
    later = KVMemories(disk=folder)
    _, third = _generate(model, tokenizer, later)
    assert third.kv_discarded == 0 and third.kv_reused == third.length - third.kv_recomputed
    assert later.stats()["misses"] == 0


def test_a_foreign_file_at_a_block_s_path_is_replaced(tmp_path):
    model, tokenizer = tiny_model("llama")
    folder = tmp_path / "kv"
    plan = plan_block(tokenizer, list(FixedMemory(*FACTS).search(None, 2)), CONFIG)
    fetch_blocks(model, tokenizer, plan, CONFIG, KVMemories(disk=folder))
    files = _files(folder)
    # a valid safetensors file, but another block's (or put there by hand)
    files[-1].write_bytes(files[0].read_bytes())
    cache = KVMemories(disk=folder)
    fetched = fetch_blocks(model, tokenizer, plan, CONFIG, cache)
    assert not all(fetched.found)
    # replaced by the block itself, not skipped: the next process finds every block on disk
    assert all(fetch_blocks(model, tokenizer, plan, CONFIG, KVMemories(disk=folder)).found)
    assert len(fetched.discarded) == 1 and "foreign" in fetched.discarded[0]


def test_a_file_without_a_digest_is_a_miss(tmp_path):
    """Files written before digests existed (or by hand, with the right key) are not trusted."""
    from safetensors import safe_open
    from safetensors.torch import save_file

    model, tokenizer = tiny_model("llama")
    folder = tmp_path / "kv"
    plan = plan_block(tokenizer, list(FixedMemory(*FACTS).search(None, 2)), CONFIG)
    fetch_blocks(model, tokenizer, plan, CONFIG, KVMemories(disk=folder))
    path = _files(folder)[-1]
    with safe_open(str(path), framework="pt") as file:
        meta = file.metadata()
        tensors = {name: file.get_tensor(name).fill_(1.0) for name in file.keys()}
    meta.pop("sha256", None)
    save_file(tensors, str(path), metadata=meta)
    fetched = fetch_blocks(model, tokenizer, plan, CONFIG, KVMemories(disk=folder))
    assert fetched.discarded and "digest" in fetched.discarded[0]
    assert all(fetch_blocks(model, tokenizer, plan, CONFIG, KVMemories(disk=folder)).found)


def test_files_another_process_deletes_are_misses_and_failed_writes_leave_nothing(tmp_path, monkeypatch):
    """A reviewer (2026-12-07): a block file deleted by another process between its read and its
    touch raised ``FileNotFoundError`` out of the recall, and a write that failed (a full disk) left
    its partial ``.tmp`` file, never counted nor trimmed."""
    import os

    import recall_core.kv.memories as memories

    model, tokenizer = tiny_model("llama")
    folder = tmp_path / "kv"
    plan = plan_block(tokenizer, list(FixedMemory(*FACTS).search(None, 2)), CONFIG)
    fetch_blocks(model, tokenizer, plan, CONFIG, KVMemories(disk=folder))
    touched = os.utime

    def deleted_first(path, *args, **kwargs):
        os.unlink(path)  # another process's trim or forget, just after this one read the file
        return touched(path, *args, **kwargs)

    monkeypatch.setattr(memories.os, "utime", deleted_first)
    fetched = fetch_blocks(model, tokenizer, plan, CONFIG, KVMemories(disk=folder))
    assert all(fetched.found) and not fetched.discarded  # what was read is whole
    monkeypatch.setattr(memories.os, "utime", touched)
    assert _files(folder) == []

    from safetensors import torch as safetensors_torch

    saved = safetensors_torch.save_file

    from safetensors import SafetensorError

    for error in (OSError(28, "No space left on device"), SafetensorError("I/O error: File too large (os error 27)")):

        def full_disk(tensors, path, metadata=None, error=error):  # safetensors raises its own error (r8)
            saved(tensors, path, metadata=metadata)
            raise error

        monkeypatch.setattr(safetensors_torch, "save_file", full_disk)
        cache = KVMemories(disk=folder)
        assert not any(fetch_blocks(model, tokenizer, plan, CONFIG, cache).found)
        assert list(folder.rglob("*.tmp")) == [] and cache.stats()["disk_bytes"] == 0


def test_a_killed_writer_s_partial_file_goes_at_the_next_process_s_first_count(tmp_path):
    import os
    import time

    model, tokenizer = tiny_model("llama")
    folder = tmp_path / "kv"
    plan = plan_block(tokenizer, list(FixedMemory(*FACTS).search(None, 2)), CONFIG)
    fetch_blocks(model, tokenizer, plan, CONFIG, KVMemories(disk=folder))
    ours = _files(folder)[0].with_suffix(".123.456.tmp")
    theirs = ours.parent / ".tmpLt0hsl"  # what safetensors writes first, killed mid-write (a second reviewer)
    old = time.time() - 3600
    for partial in (ours, theirs):
        partial.write_bytes(b"half a block")
        os.utime(partial, (old, old))
    KVMemories(disk=folder).stats()
    assert not ours.exists() and not theirs.exists()


def test_an_edit_off_the_fingerprint_s_sample_changes_it():
    """Only every step-th weight was hashed: an edit off the sample (one embedding row, a slice of a
    projection) kept the fingerprint, and blocks computed before it were served (a reviewer)."""
    from recall_core.kv.blocks import model_fingerprint

    model, _ = tiny_model("llama")
    before = model_fingerprint(model)
    with torch.no_grad():
        model.model.layers[0].self_attn.k_proj.weight[:, 1::2] += 0.5  # every value the sample skips
    assert model_fingerprint(model) != before


@pytest.mark.parametrize("disk", [1, "", "file", "inside a file"])
def test_a_disk_that_is_no_folder_is_refused_naming_it(tmp_path, disk):
    """``disk=1`` raised a ``TypeError`` that did not name it; a file's path (or one inside a file)
    was taken, and every write then failed without a word (reviewers)."""
    if disk in ("file", "inside a file"):
        (tmp_path / "a file").write_text("not a folder")
        disk = tmp_path / "a file" / ("sub" if disk == "inside a file" else "")
    with pytest.raises(ValueError, match="disk must be"):
        KVMemories(disk=disk)

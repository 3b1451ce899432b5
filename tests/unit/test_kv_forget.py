"""Forget, delete and update remove every derived copy of a memory, whichever object issues them.

KV blocks (``inject_mode="kv"``) are written by the engine, in process and under
``$RECALL_HOME/kv_memories`` or a folder of one's own; the memory package imports no engine module.
They meet in :mod:`recall_core.paths`: a cache registers itself (and its folder, listed under
``$RECALL_HOME``), a block file is named by tags of its memories, and the writer removes them on
forget, delete and update: in a process that holds the cache, and in one that never made it.
"""

from __future__ import annotations

import pytest
import torch

from recall_core import RecallConfig
from recall_core.kv.memories import KVMemories, KVPrecompute
from recall_core.memory import HashEncoder, MemoryStore, MemoryWriter
from recall_core.memory.records import index_metadata
from recall_core.paths import derived_tag
from recall_core.types import MemoryCandidate
from tests.helpers.processes import run_child
from tests.helpers.tiny import tiny_model

CONFIG = RecallConfig(inject_mode="kv", memories=1, min_score=-1.0, max_recalls=1)
ADA = [f"Ada's secret number {i} is {1000 + i}, and my dog is called Biscuit." for i in range(4)]


@pytest.fixture
def home(tmp_path, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.setenv("RECALL_HOME", str(home))
    return home


def _blocks_of(model, tokenizer, store, user_id, cache):
    """Compute (as a recall does) the blocks of every memory of ``user_id`` into ``cache``."""
    rows = list(store.journal.rows(user_id))
    KVPrecompute(model, tokenizer, CONFIG, cache).memories([MemoryCandidate(r.id, 1.0, r.text, None, index_metadata(r)) for r in rows])
    return [r.id for r in rows]


def _note_tensors(folder, ids):
    """The tensors of the block files that hold any of ``ids`` (read back from disk)."""
    from safetensors.torch import load_file

    tags = {derived_tag(i) for i in ids}
    found = [p for p in folder.rglob("*.safetensors") if not tags.isdisjoint(p.name.split("-")[:-1])]
    return [t for p in found for t in load_file(p).values()]


def _residue(root, ids, tensors):
    """Every file under ``root`` whose name or bytes hold one of ``ids`` (or its tag), or the bytes of one of ``tensors``."""
    needles = [i.encode() for i in ids] + [derived_tag(i).encode() for i in ids]
    needles += [t.contiguous().view(torch.uint8).numpy().tobytes() for t in tensors]  # a whole tensor of a block
    hits = []
    for path in root.rglob("*"):
        if path.is_file():
            data = path.name.encode() + b"\n" + path.read_bytes()
            if any(n in data for n in needles):
                hits.append(str(path.relative_to(root)))
    return hits


def test_forget_in_a_fresh_process_leaves_nothing_of_the_user_under_recall_home(home, tmp_path):
    """The issue's test: blocks on disk (the default folder and one of one's own), a forget from a process
    that never made a KVMemories, then every file under RECALL_HOME (and that folder) scanned."""
    model, tokenizer = tiny_model("llama", positions=1024)
    own = tmp_path / "elsewhere"
    with MemoryStore.local(home / "memory", encoder=HashEncoder(64)) as store:
        writer = MemoryWriter(store)  # no precompute_kv
        writer.add_turns([{"user_id": "ada", "role": "user", "content": text} for text in ADA])
        writer.add_turn("bo", "user", "Bo's cat is called Pepper.")
        for cache in (KVMemories(disk=True), KVMemories(disk=own)):
            ada = _blocks_of(model, tokenizer, store, "ada", cache)
            bo = _blocks_of(model, tokenizer, store, "bo", cache)
    tensors = _note_tensors(home / "kv_memories", ada) + _note_tensors(own, ada)
    assert len(tensors) == 2 * len(ada) * 2 * 2  # per folder, per memory: 2 layers of keys and values
    assert _residue(home / "kv_memories", ada, tensors) and _residue(own, ada, tensors)

    done = run_child(tmp_path, f"""
        import sys
        with MemoryStore.local({str(home / "memory")!r}, encoder=HashEncoder(64)) as store:
            print(store.for_user("ada").forget())
            assert "recall_core.kv" not in " ".join(sys.modules)  # a process without the engine
    """)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(len(ada))]
    assert _residue(home, ada, tensors) == [] and _residue(own, ada, tensors) == []
    assert _note_tensors(home / "kv_memories", bo) and _note_tensors(own, bo)  # another user's blocks stay


@pytest.mark.parametrize("how", ["update", "delete", "forget"])
def test_a_writer_without_precompute_drops_the_blocks_on_disk_and_in_process(home, tmp_path, how):
    model, tokenizer = tiny_model("llama", positions=1024)
    cache = KVMemories(disk=tmp_path / "kv")  # the generator's cache, in this process
    with MemoryStore.local(home / "memory", encoder=HashEncoder(64)) as store:
        writer = MemoryWriter(store)
        writer.add_turns([{"user_id": "ada", "role": "user", "content": text} for text in ADA[:2]])
        writer.add_turn("bo", "user", "Bo's cat is called Pepper.")
        ada = _blocks_of(model, tokenizer, store, "ada", cache)
        _blocks_of(model, tokenizer, store, "bo", cache)
        tensors = _note_tensors(tmp_path / "kv", ada[:1])
        assert cache.stats()["memories"] == 3
        if how == "update":
            writer.update("ada", ada[0], "My dog is called Rex now.")
            gone = ada[:1]
        elif how == "delete":
            store.for_user("ada").delete(ada[0])
            gone = ada[:1]
        else:
            store.for_user("ada").forget()
            gone = ada
        assert cache.stats()["memories"] == 3 - len(gone)  # the in-process blocks went
        assert _residue(tmp_path / "kv", gone, tensors) == []  # and their files
        assert len(_note_tensors(tmp_path / "kv", ada)) == 4 * (len(ada) - len(gone))


def test_repair_finishes_an_interrupted_forget_s_blocks_too(home, tmp_path):
    """A forget killed after its tombstones (before anything else): ``repair`` removes the blocks' files as well."""
    from recall_core.memory import repair

    model, tokenizer = tiny_model("llama", positions=1024)
    with MemoryStore.local(home / "memory", encoder=HashEncoder(64)) as store:
        MemoryWriter(store).add_turns([{"user_id": "ada", "role": "user", "content": text} for text in ADA[:2]])
        ada = _blocks_of(model, tokenizer, store, "ada", KVMemories(disk=True))
        tensors = _note_tensors(home / "kv_memories", ada)
        store.journal.mark_user_deleting("ada")  # what a forget killed right after its first step leaves
    assert _residue(home / "kv_memories", ada, tensors)
    done = run_child(tmp_path, f"""
        from recall_core.memory import repair
        with MemoryStore.local({str(home / "memory")!r}, encoder=HashEncoder(64)) as store:
            print(repair(store).removed)
    """)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert _residue(home / "kv_memories", ada, tensors) == []
    with MemoryStore.local(home / "memory", encoder=HashEncoder(64)) as store:
        assert store.for_user("ada").count() == 0 and repair(store).removed == 0


def test_a_folder_listed_before_it_is_made_stays_listed_for_a_forget(home, tmp_path):
    """A cache's folder is made at its first write: until 2026-12-07 a registration in another
    process rewrote the list without the folders not made yet, and a forget left their files (a
    reviewer: the user's PIN note stayed on disk)."""
    from recall_core.paths import _listed_folders, drop_derived, register_derived

    class Cache:
        def drop(self, memory_ids):
            pass

    first, second = tmp_path / "first", tmp_path / "second"
    caches = [Cache(), Cache()]
    register_derived(caches[0], first)  # not made yet
    second.mkdir()
    register_derived(caches[1], second)
    assert _listed_folders(made_only=False) == [str(first.resolve()), str(second.resolve())]
    (first / "model").mkdir(parents=True)
    block = first / "model" / f"{derived_tag('m1')}-rest.safetensors"
    block.write_bytes(b"a block of m1")
    assert drop_derived(["m1"]) == 1 and not block.exists()

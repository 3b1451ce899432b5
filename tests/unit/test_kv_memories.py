"""Memory blocks for ``inject_mode="kv"``: the pieces of a block, their KV, and the cache that keeps them."""

from __future__ import annotations

import pytest
import torch
from transformers import DynamicCache

from recall_core import RecallConfig
from recall_core.decoding.hf_compat import cache_kwarg
from recall_core.decoding.notes import memory_token_ids
from recall_core.kv.blocks import (
    compute_blocks,
    model_fingerprint,
    plan_block,
    prefix_ids,
    recompute_offsets,
    system_header_ids,
)
from recall_core.kv.cache import Rotary
from recall_core.kv.memories import BlockKey, KVMemories, KVPrecompute, block_keys, fetch_blocks
from recall_core.types import MemoryCandidate
from tests.helpers.tiny import tiny_model

DAY = "2024-05-01T10:00:00+00:00"
MEMORIES = [
    MemoryCandidate("a", 0.9, "My dog is called Biscuit.", None, {"timestamp": DAY, "role": "user"}),
    MemoryCandidate("b", 0.8, "I live in Lisbon and I work as a nurse.", None, {"timestamp": DAY, "role": "user"}),
    MemoryCandidate("c", 0.7, "User: my cat is Pepper.\nAssistant: Noted!", None,
                    {"timestamp": DAY, "role": "user", "covers": "c,c2"}),
]  # fmt: skip



@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    """A RECALL_HOME of the test's own: a cache with a folder lists it there."""
    monkeypatch.setenv("RECALL_HOME", str(tmp_path / "home"))

@pytest.fixture(params=["llama", "qwen2"])
def rope_model(request):
    return tiny_model(request.param)


def _prefill(model, ids, positions=None):
    cache = DynamicCache(config=model.config)
    with torch.no_grad():
        model(input_ids=torch.tensor([list(ids)]), use_cache=True, **cache_kwarg(cache),
              position_ids=None if positions is None else positions[None])  # fmt: skip
    return cache


# ---------------------------------------------------------------------- the plan
@pytest.mark.parametrize("count", [1, 2, 3])
def test_the_pieces_add_up_to_exactly_the_ids_tokens_mode_injects(count):
    _, tokenizer = tiny_model("llama")
    config = RecallConfig()
    plan = plan_block(tokenizer, MEMORIES[:count], config)
    assert list(plan.ids) == memory_token_ids(tokenizer, MEMORIES[:count], config)
    assert sum((p.ids for p in plan.pieces), ()) == plan.ids
    assert [p.start for p in plan.pieces] == [0, *[p.end for p in plan.pieces[:-1]]]
    assert plan.pieces[0].leading and not any(p.leading for p in plan.pieces[1:])
    # header, notes with the line breaks between them, footer: each note its own piece, owned by its memory
    owned = [p.owners for p in plan.pieces if p.owners]
    assert owned == [("a",), ("b",), ("c", "c2")][:count]
    assert len(plan.pieces) == 2 * count + 1


def test_pieces_that_tokenize_together_are_merged():
    """A template glued to the notes ("Notes:[1 May...") may tokenize across the boundary: the
    pieces then merge until they add up to the block's own ids."""
    _, tokenizer = tiny_model("llama")
    for template in ("Notes{text}!", "Remember:{text}", "{text}"):
        config = RecallConfig(template=template, note_template="{text}")
        memories = [MemoryCandidate("a", 1, "dog"), MemoryCandidate("b", 1, "cat")]
        plan = plan_block(tokenizer, memories, config)
        assert list(plan.ids) == memory_token_ids(tokenizer, memories, config)
        assert sum((p.ids for p in plan.pieces), ()) == plan.ids
        assert {o for p in plan.pieces for o in p.owners} == {"a", "b"}
    once = RecallConfig(template="{text} and again {text}")
    plan = plan_block(tokenizer, MEMORIES[:1], once)
    assert len(plan.pieces) == 1 and list(plan.ids) == memory_token_ids(tokenizer, MEMORIES[:1], once)


def test_recompute_offsets():
    _, tokenizer = tiny_model("llama")
    plan = plan_block(tokenizer, MEMORIES[:2], RecallConfig())
    last = len(plan.ids) - 1
    assert recompute_offsets(plan, 0) == [last]
    two = recompute_offsets(plan, 2)
    assert last in two and all(p.start in two for p in plan.pieces)
    assert len(two) <= 2 * len(plan.pieces) + 1
    assert recompute_offsets(plan, "all") == list(range(last + 1)) == recompute_offsets(plan, 10_000)


def test_prefixes():
    _, tokenizer = tiny_model("llama")
    header = system_header_ids(tokenizer)
    assert tokenizer.decode(header) == "<|im_start|>system\n"  # the chat template's system header
    shared = RecallConfig()
    assert prefix_ids(tokenizer, shared, leading=True) == header
    note_prefix = prefix_ids(tokenizer, shared, leading=False)
    assert note_prefix[: len(header)] == header
    instruction = shared.block_text("\0").split("\0")[0]  # the block's text before the notes, as rendered
    assert instruction.endswith("Notes, newest first:\n")
    assert tokenizer.decode(note_prefix[len(header) :]) == instruction
    assert prefix_ids(tokenizer, RecallConfig(kv_prefix="none"), leading=False) == ()
    tokenizer.chat_template = None
    assert system_header_ids(tokenizer) == header  # remembered per tokenizer


# ---------------------------------------------------------------------- the KV of a piece
@pytest.mark.parametrize("prefix_kind", ["none", "shared"])
@pytest.mark.parametrize("landing", [40, 300])
def test_a_block_moved_to_its_positions_equals_the_block_computed_there(rope_model, prefix_kind, landing):
    """Computed once after its prefix, re-rotated to where it lands: equal, layer by layer, to the
    same prefix and piece computed with the piece at those positions (RoPE is relative)."""
    model, tokenizer = rope_model
    config = RecallConfig(kv_prefix=prefix_kind)
    piece = plan_block(tokenizer, MEMORIES[:1], config).pieces[1]
    prefix = prefix_ids(tokenizer, config, piece.leading)
    (block,) = compute_blocks(model, prefix, [piece.ids])
    m, n = len(prefix), len(piece.ids)
    assert block.offset == m and block.length == n
    there = _prefill(model, prefix + piece.ids, torch.arange(landing - m, landing + n))
    rotary = Rotary.of(model)
    for layer, expected in enumerate(there.layers):
        moved = rotary.rerotate(block.keys[layer], torch.arange(m, m + n), torch.arange(landing, landing + n))
        torch.testing.assert_close(moved, expected.keys[0, :, m:], atol=2e-5, rtol=1e-4)
        torch.testing.assert_close(block.values[layer], expected.values[0, :, m:], atol=2e-5, rtol=1e-4)


def test_pieces_computed_together_equal_pieces_computed_alone(rope_model):
    model, tokenizer = rope_model
    config = RecallConfig()
    plan = plan_block(tokenizer, MEMORIES, config)
    pieces = [p.ids for p in plan.pieces[1:]]
    prefix = prefix_ids(tokenizer, config, False)
    together = compute_blocks(model, prefix, pieces)
    for ids, block in zip(pieces, together, strict=True):
        (alone,) = compute_blocks(model, prefix, [ids])
        for a, b in zip((*alone.keys, *alone.values), (*block.keys, *block.values), strict=True):
            torch.testing.assert_close(a, b, atol=2e-5, rtol=1e-4)


# ---------------------------------------------------------------------- the cache
def test_fingerprints_name_the_weights_not_the_object():
    model, _ = tiny_model("llama", seed=0)
    same, _ = tiny_model("llama", seed=0)
    other, _ = tiny_model("llama", seed=1)
    qwen, _ = tiny_model("qwen2", seed=0)
    assert model_fingerprint(model) == model_fingerprint(same)
    assert len({model_fingerprint(m) for m in (model, other, qwen)}) == 3
    before = model_fingerprint(model)
    with torch.no_grad():
        model.lm_head.weight.mul_(1.5)  # changed in place: the fingerprint follows
    assert model_fingerprint(model) != before
    for layer in (same.model.layers[1].mlp.down_proj, same.model.layers[0].self_attn.v_proj):
        before = model_fingerprint(same)  # any layer, not five sampled parameters (until 2026-12-07, a reviewer)
        with torch.no_grad():
            layer.weight.mul_(3.0)
        assert model_fingerprint(same) != before
    assert model_fingerprint(model.to(torch.bfloat16)) != model_fingerprint(same)
    # a layer offloaded to disk by a device_map is on the meta device here: named, not read (a third review)
    layer = other.model.layers[1].mlp.down_proj
    layer.weight = torch.nn.Parameter(torch.empty_like(layer.weight, device="meta"))
    assert model_fingerprint(other)


def test_a_block_is_never_served_to_another_model():
    model, tokenizer = tiny_model("llama", seed=0)
    other, _ = tiny_model("llama", seed=1)
    cache, config = KVMemories(), RecallConfig()
    plan = plan_block(tokenizer, MEMORIES[:1], config)
    first = fetch_blocks(model, tokenizer, plan, config, cache)
    assert not any(first.found) and first.computed == len(plan.pieces)
    assert all(fetch_blocks(model, tokenizer, plan, config, cache).found)
    for_other = fetch_blocks(other, tokenizer, plan, config, cache)
    assert not any(for_other.found)
    assert not torch.allclose(for_other.blocks[1].keys[0], first.blocks[1].keys[0])


def test_an_edited_memory_is_never_served_its_old_block():
    model, tokenizer = tiny_model("llama")
    cache, config = KVMemories(), RecallConfig()
    fetch_blocks(model, tokenizer, plan_block(tokenizer, MEMORIES[:1], config), config, cache)
    edited = MemoryCandidate("a", 0.9, "My dog is called Rex.", None, MEMORIES[0].metadata)
    found = fetch_blocks(model, tokenizer, plan_block(tokenizer, [edited], config), config, cache).found
    assert found == (True, False, True)  # the template's pieces are shared; the note is new
    redated = MemoryCandidate("a", 0.9, MEMORIES[0].text, None, {**MEMORIES[0].metadata, "timestamp": "2025-01-01"})
    assert fetch_blocks(model, tokenizer, plan_block(tokenizer, [redated], config), config, cache).found[1] is False
    other_config = RecallConfig(note_template="{text}")
    assert fetch_blocks(model, tokenizer, plan_block(tokenizer, MEMORIES[:1], other_config), other_config,
                        cache).found[1] is False  # fmt: skip
    no_prefix = RecallConfig(kv_prefix="none")
    assert not any(fetch_blocks(model, tokenizer, plan_block(tokenizer, MEMORIES[:1], no_prefix), no_prefix, cache).found)


def test_drop_forgets_a_memory_s_blocks_and_stats_report_bytes_per_memory():
    model, tokenizer = tiny_model("llama")
    cache, config = KVMemories(), RecallConfig()
    fetch_blocks(model, tokenizer, plan_block(tokenizer, MEMORIES, config), config, cache)
    stats = cache.stats()
    assert stats["memories"] == 4  # a, b, c and c2 (c's text covers c2)
    assert stats["bytes"] == cache.nbytes > 0 and 0 < stats["bytes_per_memory"] < stats["bytes"]
    assert cache.drop("c2") == 1 and cache.drop(["a", "zzz"]) == 1
    found = fetch_blocks(model, tokenizer, plan_block(tokenizer, MEMORIES, config), config, cache).found
    notes = [i for i, p in enumerate(plan_block(tokenizer, MEMORIES, config).pieces) if p.owners]
    assert [found[i] for i in notes] == [False, True, False]


def test_the_cache_is_bounded_in_bytes():
    model, tokenizer = tiny_model("llama")
    config = RecallConfig()
    plan = plan_block(tokenizer, MEMORIES, config)
    blocks = fetch_blocks(model, tokenizer, plan, config, KVMemories()).blocks
    small = KVMemories(max_bytes=blocks[1].nbytes + blocks[2].nbytes)
    keys = block_keys(model, tokenizer, plan, config)
    for (key, _), block in zip(keys, blocks, strict=True):
        small.put(key, block)
        assert small.nbytes <= small.max_bytes
    assert 1 <= small.stats()["blocks"] < len({key.digest for key, _ in keys}) - 1  # the oldest went
    assert small.get(keys[-1][0]) is not None and small.get(keys[0][0]) is None
    with pytest.raises(ValueError, match="max_bytes must be an int >= 0"):
        KVMemories(max_bytes=-1)
    with pytest.raises(ValueError, match="max_disk_bytes must be an int >= 0"):
        KVMemories(max_disk_bytes=1.5)


def test_blocks_on_disk_survive_the_process_and_are_safe_to_delete(tmp_path):
    model, tokenizer = tiny_model("llama")
    config = RecallConfig()
    plan = plan_block(tokenizer, MEMORIES[:2], config)
    first = KVMemories(disk=tmp_path / "kv")
    computed = fetch_blocks(model, tokenizer, plan, config, first).blocks
    files = sorted((tmp_path / "kv").glob("*/*.safetensors"))
    unique = {key.digest for key, _ in block_keys(model, tokenizer, plan, config)}  # the line breaks: one block
    assert len(files) == len(unique) == len(plan.pieces) - 1
    assert first.stats()["disk_bytes"] == sum(f.stat().st_size for f in files)
    later = KVMemories(disk=tmp_path / "kv")  # another process, the same folder
    fetched = fetch_blocks(model, tokenizer, plan, config, later)
    assert all(fetched.found)
    for a, b in zip(computed, fetched.blocks, strict=True):
        assert a.offset == b.offset and all(torch.equal(x, y) for x, y in zip(a.keys + a.values, b.keys + b.values, strict=True))
    # a damaged file is a miss (and goes); a deleted folder is a miss
    note = next(f for f in files if f.stat().st_size == max(f.stat().st_size for f in files))
    note.write_bytes(b"not a safetensors file")
    again = KVMemories(disk=tmp_path / "kv")
    assert not all(fetch_blocks(model, tokenizer, plan, config, again).found)
    import shutil

    shutil.rmtree(tmp_path / "kv")
    assert not any(fetch_blocks(model, tokenizer, plan, config, KVMemories(disk=tmp_path / "kv")).found)
    # dropping a memory deletes its files too (the folder was filled again just above)
    assert KVMemories(disk=tmp_path / "kv").drop("a") == 1
    found = fetch_blocks(model, tokenizer, plan, config, KVMemories(disk=tmp_path / "kv")).found
    assert [f for f, p in zip(found, plan.pieces, strict=True) if p.owners] == [False, True]


def test_the_disk_is_bounded(tmp_path):
    model, tokenizer = tiny_model("llama")
    config = RecallConfig()
    plan = plan_block(tokenizer, MEMORIES, config)
    blocks = fetch_blocks(model, tokenizer, plan, config, KVMemories()).blocks
    bound = sum(b.nbytes for b in blocks) // 2
    disk = KVMemories(disk=tmp_path, max_disk_bytes=bound)
    for (key, _), block in zip(block_keys(model, tokenizer, plan, config), blocks, strict=True):
        disk.put(key, block)
    total = sum(f.stat().st_size for f in tmp_path.glob("*/*.safetensors"))
    assert 0 < total <= bound and disk.stats()["disk_bytes"] == total


def test_a_key_names_model_prefix_owners_and_content():
    key = BlockKey("m", "p", ("a",), "c")
    assert len({key.digest, BlockKey("m2", "p", ("a",), "c").digest, BlockKey("m", "p2", ("a",), "c").digest,
                BlockKey("m", "p", ("b",), "c").digest, BlockKey("m", "p", ("a",), "c2").digest}) == 5  # fmt: skip


def test_precompute_takes_a_generator_or_a_pair():
    from recall_core import RecallGenerator

    model, tokenizer = tiny_model("llama")
    config = RecallConfig(kv_prefix="none")
    made = KVPrecompute.of(RecallGenerator(model, tokenizer, config=config))
    assert made.model is model and made.config is config
    assert KVPrecompute.of((model, tokenizer)).config == RecallConfig()
    with pytest.raises(ValueError, match="KVPrecompute.of takes"):
        KVPrecompute.of("model")
    cache = KVMemories()
    assert KVPrecompute(model, tokenizer, config, cache).memories(MEMORIES) == 2 + 3  # header, footer, 3 notes
    assert KVPrecompute(model, tokenizer, config, cache).memories(MEMORIES) == 0

"""``inject_mode="kv"`` in the decode loop: exact where it must be, every loop invariant, the fallback."""

from __future__ import annotations

import pytest
import torch
from transformers import DynamicCache

from recall_core import RECALL_TOKEN, RecallConfig, RecallGenerator, recall_generate
from recall_core.decoding.hf_compat import cache_kwarg, cache_of
from recall_core.decoding.notes import block_ids, memory_token_ids
from recall_core.kv.blocks import plan_block, recompute_offsets
from recall_core.kv.cache import Rotary, cache_length
from recall_core.kv.inject import _placed, _run_at_once, _run_in_order, _runs
from recall_core.kv.memories import KVMemories, fetch_blocks
from tests.helpers.memories import FixedMemory, ListMemory
from tests.helpers.tiny import tiny_model

PROMPT = "My dog is called"
FACTS = ("The user's dog is called Biscuit.", "I live in Lisbon and I work as a nurse.")


@pytest.fixture(params=["llama", "qwen2"])
def rope_model(request):
    return tiny_model(request.param)


def _generate(model, tokenizer, config, memory, kv=None, trace=None, prompt=PROMPT + RECALL_TOKEN, **kwargs):
    ids = tokenizer(prompt, return_tensors="pt").input_ids
    return model.generate(
        ids, custom_generate=recall_generate, memory=memory, recall_config=config, recall_tokenizer=tokenizer,
        recall_trace=trace, recall_kv_memories=kv, do_sample=False, **kwargs,
    )  # fmt: skip


# ---------------------------------------------------------------------- equal to tokens mode
@pytest.mark.parametrize("recompute", ["all", 10_000])
def test_recomputing_everything_is_tokens_mode_token_for_token(rope_model, recompute):
    """``"all"`` runs tokens mode's very forward pass; a count past every piece's length runs the
    kv path (blocks fetched, spliced and all recomputed): both continue exactly as tokens mode."""
    model, tokenizer = rope_model
    tokens_trace, kv_trace = [], []
    memory = FixedMemory(*FACTS)
    options = {"max_new_tokens": 10, "min_new_tokens": 10, "output_logits": True, "return_dict_in_generate": True}
    expected = _generate(model, tokenizer, RecallConfig(max_recalls=1), memory, trace=tokens_trace, **options)
    config = RecallConfig(max_recalls=1, inject_mode="kv", kv_recompute=recompute)
    got = _generate(model, tokenizer, config, memory, kv=KVMemories(), trace=kv_trace, **options)
    assert torch.equal(got.sequences, expected.sequences)
    for a, b in zip(got.logits, expected.logits, strict=True):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-5)
    (recall,) = kv_trace
    assert recall.inject_mode == "kv" and recall.kv_recomputed == recall.length == tokens_trace[0].length
    assert tokens_trace[0].inject_mode == "tokens" and tokens_trace[0].kv_recomputed == 0


def _context_and_truth(model, tokenizer, config):
    """A context cache, the block's ids, and what tokens mode computes for the block after it."""
    context = tokenizer(PROMPT + RECALL_TOKEN, return_tensors="pt").input_ids
    plan = plan_block(tokenizer, list(FACTS), config)
    ids = torch.tensor([plan.ids])
    truth = DynamicCache(config=model.config)
    with torch.no_grad():
        model(input_ids=context, **cache_kwarg(truth), use_cache=True)
        logits = model(input_ids=ids, **cache_kwarg(truth), use_cache=True).logits[:, -1]

    def fresh():
        cache = DynamicCache(config=model.config)
        with torch.no_grad():
            model(input_ids=context, **cache_kwarg(cache), use_cache=True)
        return cache

    return context.shape[1], plan, ids, truth, logits, fresh


@pytest.mark.parametrize("attention", ["sdpa", "eager"])
def test_the_recompute_pass_is_exact_given_in_context_blocks(rope_model, attention):
    """Splice the keys and values tokens mode computed for the block, recompute any tokens: the
    logits and the cache are tokens mode's. This checks the masks and the bookkeeping of both
    recompute passes (one masked pass, and one pass per run) independently of block quality."""
    model, tokenizer = rope_model
    model.set_attn_implementation(attention)
    c, plan, ids, truth, logits, fresh = _context_and_truth(model, tokenizer, RecallConfig())
    n = ids.shape[1]
    keys = [layer.keys[..., c:, :] for layer in truth.layers]
    values = [layer.values[..., c:, :] for layer in truth.layers]
    positions = torch.arange(c, c + n)
    for recompute in ([n - 1], [0, 1, 5, 9, n - 1], recompute_offsets(plan, 2), list(range(n))):
        for run in ("at_once", "in_order"):
            cache = fresh()
            with torch.no_grad():
                if run == "at_once":
                    out = _run_at_once(model, cache, ids, keys, values, positions, None, c, recompute, {})
                else:
                    out = _run_in_order(model, cache, ids, keys, values, positions, None, c, _runs(recompute), {})
            torch.testing.assert_close(out.logits[:, -1], logits, atol=2e-5, rtol=1e-4)
            assert cache_length(cache_of(out)) == c + n
            for got, expected in zip(cache_of(out).layers, truth.layers, strict=True):
                torch.testing.assert_close(got.keys, expected.keys, atol=2e-5, rtol=1e-4)
                torch.testing.assert_close(got.values, expected.values, atol=2e-5, rtol=1e-4)


def test_blocks_are_placed_by_the_model_s_own_rotation(rope_model):
    """The splice rotates each key once by the difference of angles: the same keys as
    :meth:`Rotary.rerotate` (two float64 steps), to float32 rounding."""
    model, tokenizer = rope_model
    config = RecallConfig()
    plan = plan_block(tokenizer, list(FACTS), config)
    blocks = fetch_blocks(model, tokenizer, plan, config, KVMemories()).blocks
    landing = torch.arange(100, 100 + len(plan.ids))
    keys, values = _placed(blocks, landing, Rotary.of(model))
    old = torch.cat([torch.arange(b.offset, b.offset + b.length) for b in blocks])
    for layer in range(len(keys)):
        stacked = torch.cat([b.keys[layer] for b in blocks], dim=-2)
        torch.testing.assert_close(keys[layer][0], Rotary.of(model).rerotate(stacked, old, landing), atol=1e-5, rtol=1e-5)
        assert torch.equal(values[layer][0], torch.cat([b.values[layer] for b in blocks], dim=-2))


# ---------------------------------------------------------------------- invariants
@pytest.mark.parametrize("prefix, recompute", [("shared", 2), ("none", 0), ("shared", 0), ("none", 3)])
@pytest.mark.parametrize("shift", [0, 7])
def test_kv_mode_keeps_every_loop_invariant(rope_model, prefix, recompute, shift):
    model, tokenizer = rope_model
    config = RecallConfig(inject_mode="kv", kv_prefix=prefix, kv_recompute=recompute, max_recalls=1)
    store = KVMemories()
    generator = RecallGenerator(model, tokenizer, memory=FixedMemory(*FACTS), config=config)
    ids = tokenizer(PROMPT + RECALL_TOKEN, return_tensors="pt").input_ids
    positions = torch.arange(ids.shape[1])[None] + shift if shift else None  # ids that do not start at 0
    result = generator.generate_ids(ids, position_ids=positions, max_new_tokens=6, min_new_tokens=6,
                                    return_dict_in_generate=True, recall_kv_memories=store)  # fmt: skip
    (recall,) = result.recalls
    sequences, cache = result.sequences, cache_of(result.output)
    assert recall.inject_mode == "kv" and recall.kv_fallback is None and recall.reason is None
    assert recall.length == len(block_ids(tokenizer, recall.text, config))
    assert sequences.shape[1] == ids.shape[1] + recall.length + 6
    assert cache_length(cache) == sequences.shape[1] - 1  # every id but the last sampled one has run, pads included
    pad, start = model.config.memory_pad_token_id, recall.position
    assert sequences[0, start : start + recall.length].tolist() == [pad] * recall.length
    assert result.usage.generated_tokens == 6 and result.usage.injected_tokens == recall.length
    # the spliced keys and values are the stored blocks, moved to the positions the block lands on
    candidates = {c.id: c for c in generator.memory.candidates}
    chosen = [candidates[memory_id] for memory_id, _ in recall.memories]  # in the order the notes were written
    plan = plan_block(tokenizer, chosen, config)
    assert plan.ids == tuple(memory_token_ids(tokenizer, chosen, config))
    recomputed = recompute_offsets(plan, recompute)
    assert recall.kv_recomputed == len(recomputed) and recall.kv_reused == 0  # a fresh cache: computed now
    fetched = fetch_blocks(model, tokenizer, plan, config, store)
    assert all(fetched.found)
    landing = torch.arange(start, start + recall.length) + shift
    keys, values = _placed(fetched.blocks, landing, Rotary.of(model))
    spliced = [i for i in range(recall.length) if i not in recomputed]
    at = [start + i for i in spliced]
    for layer, k, v in zip(cache.layers, keys, values, strict=True):
        assert torch.equal(layer.keys[..., at, :], k[..., spliced, :])
        assert torch.equal(layer.values[..., at, :], v[..., spliced, :])
    # the recomputed tokens were computed in context: past the first layer they differ from the stored block
    last = recomputed[-1]
    assert not torch.allclose(cache.layers[-1].values[..., start + last, :], values[-1][..., last, :])


def test_a_second_recall_of_the_same_memories_reuses_their_blocks(rope_model):
    model, tokenizer = rope_model
    store, config = KVMemories(), RecallConfig(inject_mode="kv", max_recalls=1)
    first, second = [], []
    _generate(model, tokenizer, config, FixedMemory(*FACTS), kv=store, trace=first, max_new_tokens=2)
    _generate(model, tokenizer, config, FixedMemory(*FACTS), kv=store, trace=second, max_new_tokens=2,
              prompt="Where do I live?" + RECALL_TOKEN)  # fmt: skip
    assert first[0].kv_reused == 0
    assert second[0].kv_reused == second[0].length - second[0].kv_recomputed > 0
    assert store.hits >= 3


def test_nothing_recalled_is_plain_generate(rope_model):
    model, tokenizer = rope_model
    ids = tokenizer(PROMPT, return_tensors="pt").input_ids
    # a random model may write <recall> itself: kept from it on both sides
    spent = [model.config.recall_token_id, model.config.memory_pad_token_id]
    plain = model.generate(ids, max_new_tokens=8, do_sample=False, suppress_tokens=spent)
    config = RecallConfig(inject_mode="kv")
    got = _generate(model, tokenizer, config, FixedMemory(*FACTS), kv=KVMemories(), prompt=PROMPT, max_new_tokens=8,
                    suppress_tokens=spent)  # fmt: skip
    assert torch.equal(got, plain)


def test_a_model_without_rotary_positions_falls_back_to_tokens_and_says_so():
    model, tokenizer = tiny_model("gpt2")
    tokens_trace, kv_trace = [], []
    options = {"max_new_tokens": 6, "min_new_tokens": 6}
    expected = _generate(model, tokenizer, RecallConfig(max_recalls=1), FixedMemory(*FACTS), trace=tokens_trace, **options)
    config = RecallConfig(max_recalls=1, inject_mode="kv")
    got = _generate(model, tokenizer, config, FixedMemory(*FACTS), kv=KVMemories(), trace=kv_trace, **options)
    assert torch.equal(got, expected)
    (recall,) = kv_trace
    assert recall.inject_mode == "tokens" and recall.injected
    assert recall.kv_fallback.startswith("GPT2LMHeadModel has no rotary position embedding")


def test_chat_prompts_and_sampling_work_in_kv_mode(rope_model):
    model, tokenizer = rope_model
    config = RecallConfig(inject_mode="kv", memories=2)
    generator = RecallGenerator(model, tokenizer, memory=FixedMemory(*FACTS), config=config)
    torch.manual_seed(0)
    result = generator.generate([{"role": "user", "content": "What is my dog called?"}], max_new_tokens=5,
                                temperature=0.7, recall_kv_memories=KVMemories())  # fmt: skip
    assert result.recalls[0].inject_mode == "kv" and result.usage.generated_tokens <= 5


@pytest.mark.parametrize(
    "field, value, match",
    [
        ("kv_prefix", "both", "kv_prefix must be one of 'shared', 'none'"),
        ("kv_recompute", -1, "kv_recompute must be an int >= 0 or 'all', got -1"),
        ("kv_recompute", "some", "kv_recompute must be an int >= 0 or 'all'"),
        ("kv_recompute", True, "kv_recompute must be an int >= 0 or 'all'"),
        ("kv_recompute", 1.5, "kv_recompute must be an int >= 0 or 'all'"),
        ("inject_mode", "kvv", "inject_mode must be one of 'tokens', 'kv'"),
    ],
)
def test_bad_kv_settings_name_the_field(field, value, match):
    with pytest.raises(ValueError, match=match):
        RecallConfig(**{field: value})


def test_a_bounded_session_recalls_in_kv_mode_turn_after_turn():
    """A session's cache, kept between turns and evicted from, takes a kv block at every turn; the
    bounded cache stays within its bound plus what the reply injected."""
    from recall_core import RecallSession

    model, tokenizer = tiny_model("llama", positions=2048)
    config = RecallConfig(inject_mode="kv", memories=1, max_recalls=1)
    generator = RecallGenerator(model, tokenizer, memory=FixedMemory(*FACTS), config=config)
    session = RecallSession(generator, max_cache_tokens=400)
    messages = [{"role": "user", "content": "Hello there, how are you today?"}]
    evicted = 0
    for turn in range(4):
        result = session.reply(messages, max_new_tokens=6, recall_kv_memories=KVMemories())
        recall = next(r for r in result.recalls if r.in_prompt)
        assert recall.inject_mode == "kv" and recall.kv_fallback is None
        assert result.session.cache_tokens <= 400 + recall.length + 6
        evicted += result.session.evicted_messages
        messages += [{"role": "assistant", "content": result.text}, {"role": "user", "content": f"And then {turn}?"}]
    assert evicted > 0  # earlier turns (and their injected blocks) left the bounded cache


@pytest.mark.parametrize("memory", [None, "nothing-found", "found"])
def test_a_marker_that_opens_the_prompt_is_the_prompts_in_kv_mode(memory):
    """Run in pieces (``inject_mode="kv"``), a marker at the prompt's first token had no logits
    before it and was taken for one the model wrote until 2026-12-07: it stayed in the reply's
    ids, and where nothing was found "(nothing found)" notes were injected (a reviewer)."""
    model, tokenizer = tiny_model("llama")
    generator = RecallGenerator(model, tokenizer)
    store = {None: None, "nothing-found": ListMemory({"a": "zzz qqq"}), "found": FixedMemory(*FACTS)}[memory]
    results = [generator.generate(RECALL_TOKEN + "Where do I live?", memory=store, max_new_tokens=6,
                                  config=RecallConfig(inject_mode=mode)) for mode in ("tokens", "kv")]  # fmt: skip
    assert [(r.trigger, r.in_prompt, r.injected) for r in results[1].recalls] == [
        (r.trigger, r.in_prompt, r.injected) for r in results[0].recalls
    ]
    assert results[1].recalls[0].trigger == "prompt"
    if memory != "found":
        assert torch.equal(results[1].sequences, results[0].sequences)
        plain = generator.generate("Where do I live?", max_new_tokens=6)
        assert torch.equal(results[1].sequences, plain.sequences)

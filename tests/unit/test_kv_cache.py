"""KV-cache arithmetic: re-rotated keys equal a fresh prefill at the new positions; spans cut out exactly."""

from __future__ import annotations

import pytest
import torch
from transformers import DynamicCache

from recall_core.decoding.hf_compat import cache_kwarg
from recall_core.kv.cache import (
    CacheEditError,
    NoRotaryEmbeddingError,
    Rotary,
    cache_layers,
    cache_length,
    cache_nbytes,
    can_drop_last,
    crop_cache,
    croppable_to,
    drop_last,
    drop_span,
    evict_span,
    keep_every_position,
    rerotate_span,
    rotary_of,
    session_cache,
)
from tests.helpers.tiny import tiny_model, tiny_tokenizer

TEXT = "My dog is called Biscuit and my cat is called Pepper. I live in Lisbon."


def _prefill(model, ids, positions=None):
    cache = DynamicCache(config=model.config)
    with torch.no_grad():
        model(input_ids=ids, **cache_kwarg(cache), position_ids=positions, use_cache=True)
    return cache


@pytest.fixture(params=["llama", "qwen2"])
def rope_model(request):
    return tiny_model(request.param)


def test_rotary_is_read_from_the_model(rope_model):
    model, _ = rope_model
    rotary = Rotary.of(model)
    assert torch.equal(rotary.inv_freq, model.model.rotary_emb.inv_freq.float())
    assert rotary.rotary_dim == model.config.hidden_size // model.config.num_attention_heads
    assert rotary.rope_type == "default"


@pytest.mark.parametrize("family", ["phi", "stablelm"])
def test_a_model_that_rotates_part_of_each_head_is_re_rotated_exactly(family):
    """Phi and StableLM rotate the first channels of each head only: their attention gives the RoPE
    function those channels alone, a whole head's probe failed, and they were refused for eviction and
    the kv mode (until 2026-12-07: a reviewer). After evicting a span, the first layer's keys (which
    read no other token) equal a fresh prefill's without it."""
    import transformers

    config_class, model_class = {"phi": (transformers.PhiConfig, transformers.PhiForCausalLM),
                                 "stablelm": (transformers.StableLmConfig, transformers.StableLmForCausalLM)}[family]  # fmt: skip
    torch.manual_seed(0)
    model = model_class(config_class(vocab_size=300, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                     num_attention_heads=4, num_key_value_heads=2, partial_rotary_factor=0.5)).eval()  # fmt: skip
    rotary = Rotary.of(model)
    assert rotary.rotary_dim == 8 and rotary.sliced  # of 16 channels, sliced by the attention: kv mode falls back
    ids = torch.randint(5, 290, (1, 40), generator=torch.Generator().manual_seed(1))
    evicted = _prefill(model, ids)
    evict_span(evicted, 4, 15, rotary)
    fresh = _prefill(model, torch.cat([ids[:, :4], ids[:, 15:]], dim=1))
    torch.testing.assert_close(evicted.layers[0].keys, fresh.layers[0].keys, atol=2e-5, rtol=1e-4)
    assert not torch.allclose(evicted.layers[0].keys[..., 4:, :8], _prefill(model, ids).layers[0].keys[..., 15:, :8])


def test_a_model_whose_rope_function_takes_whole_heads_is_not_sliced():
    """GPT-NeoX rotates a quarter of each head inside its RoPE function, which takes whole heads: kv mode
    spliced it exactly, and the first fix for Phi took it away (a reviewer, 2026-12-07)."""
    import transformers

    torch.manual_seed(0)
    model = transformers.GPTNeoXForCausalLM(transformers.GPTNeoXConfig(
        vocab_size=300, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
        rotary_pct=0.25)).eval()  # fmt: skip
    rotary = Rotary.of(model)
    assert rotary.rotary_dim == 4 and not rotary.sliced
    from recall_core.kv.inject import _rotary

    assert isinstance(_rotary(model), Rotary)  # kv mode splices it


@pytest.mark.parametrize("shift", [17, 250, -3])
def test_rerotated_keys_equal_a_fresh_prefill_at_the_new_positions(rope_model, shift):
    """Every layer's keys: a forward at positions p moved to p + shift equals a forward at p + shift.

    Deeper layers depend on positions only through relative distances (RoPE), which a common
    shift keeps, so the whole cache moves exactly.
    """
    model, tokenizer = rope_model
    ids = tokenizer(TEXT, return_tensors="pt").input_ids
    n = ids.shape[1]
    base = torch.arange(3, 3 + n)
    computed = _prefill(model, ids, base[None])
    fresh = _prefill(model, ids, (base + shift)[None])
    rotary = Rotary.of(model)
    for layer, expected in zip(computed.layers, fresh.layers, strict=True):
        moved = rotary.rerotate(layer.keys, base, base + shift)
        assert moved.dtype == layer.keys.dtype and moved.shape == layer.keys.shape
        torch.testing.assert_close(moved, expected.keys, atol=2e-5, rtol=1e-4)
        torch.testing.assert_close(layer.values, expected.values, atol=2e-5, rtol=1e-4)


def test_rerotation_per_position_and_back(rope_model):
    model, tokenizer = rope_model
    ids = tokenizer(TEXT, return_tensors="pt").input_ids
    n = ids.shape[1]
    rotary = Rotary.of(model)
    keys = _prefill(model, ids).layers[0].keys
    scattered = torch.randint(0, 400, (n,))
    there = rotary.rerotate(keys, torch.arange(n), scattered)
    # Layer-0 keys depend on the token and its own position only: compare with a prefill at those positions.
    fresh = _prefill(model, ids, scattered[None]).layers[0].keys
    torch.testing.assert_close(there, fresh, atol=2e-5, rtol=1e-4)
    back = rotary.rerotate(there, scattered, torch.arange(n))
    torch.testing.assert_close(back, keys, atol=2e-5, rtol=1e-4)
    assert torch.equal(rotary.rerotate(keys, 5, 5), keys)


def test_rerotation_checks_its_arguments(rope_model):
    model, _ = rope_model
    rotary = Rotary.of(model)
    keys = torch.zeros(1, 2, 4, rotary.rotary_dim)
    with pytest.raises(ValueError, match="old_positions has 3 positions for 4 keys"):
        rotary.rerotate(keys, [0, 1, 2], [0, 1, 2, 3])
    with pytest.raises(ValueError, match="fewer than rotary_dim"):
        rotary.rerotate(torch.zeros(1, 1, 4, 2), 0, 1)


def test_gpt2_has_no_rotary_embedding_and_says_so():
    model, _ = tiny_model("gpt2")
    with pytest.raises(NoRotaryEmbeddingError, match="GPT2LMHeadModel has no rotary position embedding"):
        Rotary.of(model)
    assert rotary_of(model) is None
    assert isinstance(NoRotaryEmbeddingError("x"), ValueError)


def test_length_dependent_rope_is_refused():
    model, _ = tiny_model("llama")
    model.model.rotary_emb.rope_type = "dynamic"
    with pytest.raises(NoRotaryEmbeddingError, match="rope_type='dynamic'"):
        Rotary.of(model)


def test_interleaved_layouts_are_refused(monkeypatch):
    """A model whose RoPE pairs channels differently is caught by the probe, not re-rotated wrongly."""
    import transformers.models.llama.modeling_llama as llama

    model, _ = tiny_model("llama")

    def interleaved(q, k, cos, sin, unsqueeze_dim=1):
        cos = cos[..., : cos.shape[-1] // 2].repeat_interleave(2, dim=-1).unsqueeze(unsqueeze_dim)
        sin = sin[..., : sin.shape[-1] // 2].repeat_interleave(2, dim=-1).unsqueeze(unsqueeze_dim)

        def pairs(x):
            return torch.stack((-x[..., 1::2], x[..., ::2]), dim=-1).flatten(-2)

        return q * cos + pairs(q) * sin, k * cos + pairs(k) * sin

    monkeypatch.setattr(llama, "apply_rotary_pos_emb", interleaved)
    with pytest.raises(NoRotaryEmbeddingError, match="differently"):
        Rotary.of(model)


# ---------------------------------------------------------------------- cache edits
def test_drop_and_crop_cut_exactly(rope_model):
    model, tokenizer = rope_model
    ids = tokenizer(TEXT, return_tensors="pt").input_ids
    cache = _prefill(model, ids)
    n = cache_length(cache)
    before = [(layer.keys.clone(), layer.values.clone()) for layer in cache.layers]
    drop_span(cache, 2, 5)
    assert cache_length(cache) == n - 3
    for (keys, values), layer in zip(before, cache.layers, strict=True):
        assert torch.equal(layer.keys, torch.cat([keys[..., :2, :], keys[..., 5:, :]], dim=-2))
        assert torch.equal(layer.values, torch.cat([values[..., :2, :], values[..., 5:, :]], dim=-2))
    crop_cache(cache, 4)
    assert cache_length(cache) == 4
    assert cache_nbytes(cache) == sum(2 * layer.keys.nelement() * layer.keys.element_size() for layer in cache.layers)
    with pytest.raises(ValueError, match=r"span \[3, 9\) must lie within the cache's 4 positions"):
        drop_span(cache, 3, 9)
    with pytest.raises(ValueError, match=r"length must be in \[0, 4\]"):
        crop_cache(cache, 5)


def test_evict_span_closes_the_gap(rope_model):
    """After evicting a span with re-rotation, the later keys sit where a prefill of the kept ids puts them."""
    model, tokenizer = rope_model
    ids = tokenizer(TEXT, return_tensors="pt").input_ids
    n = ids.shape[1]
    cache = _prefill(model, ids)
    evict_span(cache, 3, 9, Rotary.of(model))
    kept = torch.cat([ids[:, :3], ids[:, 9:]], dim=-1)
    fresh = _prefill(model, kept)
    assert cache_length(cache) == n - 6
    # Layer 0 depends on tokens and positions only: equal to a fresh prefill of the kept ids.
    torch.testing.assert_close(cache.layers[0].keys, fresh.layers[0].keys, atol=2e-5, rtol=1e-4)
    torch.testing.assert_close(cache.layers[0].values, fresh.layers[0].values, atol=2e-5, rtol=1e-4)


def test_evict_span_without_rotary_keeps_positions(rope_model):
    model, tokenizer = rope_model
    ids = tokenizer(TEXT, return_tensors="pt").input_ids
    cache = _prefill(model, ids)
    keys = cache.layers[0].keys.clone()
    evict_span(cache, 3, 9)
    assert torch.equal(cache.layers[0].keys, torch.cat([keys[..., :3, :], keys[..., 9:, :]], dim=-2))


def test_rerotate_span_in_place(rope_model):
    model, tokenizer = rope_model
    ids = tokenizer(TEXT, return_tensors="pt").input_ids
    n = ids.shape[1]
    cache = _prefill(model, ids)
    rerotate_span(cache, Rotary.of(model), 0, torch.arange(n), torch.arange(n) + 40)
    fresh = _prefill(model, ids, (torch.arange(n) + 40)[None])
    for layer, expected in zip(cache.layers, fresh.layers, strict=True):
        torch.testing.assert_close(layer.keys, expected.keys, atol=2e-5, rtol=1e-4)
    with pytest.raises(ValueError, match="one position per key"):
        rerotate_span(cache, Rotary.of(model), 0, 3, 4)


def test_only_dynamic_layers_are_edited():
    """Until 2026-12-06 a DynamicSlidingWindowLayer was refused here too (it is edited now, as far as it
    holds what the edit needs: the sliding-window tests below)."""
    from transformers.cache_utils import StaticLayer

    cache = DynamicCache()
    cache.layers = [StaticLayer(max_cache_len=8)]
    with pytest.raises(ValueError, match="StaticLayer: only DynamicLayer and DynamicSlidingWindowLayer"):
        cache_layers(cache)
    with pytest.raises(ValueError, match="expected a transformers DynamicCache"):
        cache_layers(object())


# ---------------------------------------------------------------------- sliding-window layers
def _mistral(window: int):
    from transformers import MistralConfig, MistralForCausalLM

    tokenizer = tiny_tokenizer()
    torch.manual_seed(0)
    config = MistralConfig(vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                           num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512,
                           sliding_window=window)  # fmt: skip
    return MistralForCausalLM(config).eval(), tokenizer


def _run(model, cache, ids):
    with torch.no_grad():
        return model(input_ids=ids, **cache_kwarg(cache), use_cache=True).logits


def test_a_sliding_window_layer_is_cropped_while_it_holds_what_the_next_position_needs():
    model, tokenizer = _mistral(window=8)
    ids = tokenizer(TEXT, return_tensors="pt").input_ids
    n = ids.shape[1]
    assert n > 12
    short = DynamicCache(config=model.config)  # transformers' own: within the window it holds everything
    _run(model, short, ids[:, :6])
    crop_cache(short, 4)
    assert cache_length(short) == 4 and short.layers[0].keys.shape[-2] == 4
    torch.testing.assert_close(_run(model, short, ids[:, 4:6]), _run(model, DynamicCache(config=model.config), ids[:, :6])[:, 4:])
    past = DynamicCache(config=model.config)  # past the window it forgot its first positions
    _run(model, past, ids)
    assert croppable_to(past) == n and past.layers[0].keys.shape[-2] == 7
    with pytest.raises(CacheEditError, match=f"cannot be cut back to {n - 1} positions"):
        crop_cache(past, n - 1)
    with pytest.raises(CacheEditError, match="no longer holds positions 0 to"):
        drop_span(past, 0, 2)
    assert cache_length(past) == n  # nothing changed


def test_a_session_cache_edits_sliding_window_layers_exactly_past_the_window():
    model, tokenizer = _mistral(window=8)
    ids = tokenizer(TEXT, return_tensors="pt").input_ids
    n = ids.shape[1]
    expected = _run(model, DynamicCache(config=model.config), ids)
    cache = session_cache(model)
    _run(model, cache, ids)
    assert croppable_to(cache) == 0 and cache.layers[0].keys.shape[-2] == n  # every position kept
    crop_cache(cache, 5)  # back inside the window, then past it again: the logits as in one pass
    torch.testing.assert_close(_run(model, cache, ids[:, 5:]), expected[:, 5:], atol=1e-5, rtol=1e-4)
    drop_span(cache, 1, 3)
    assert cache_length(cache) == n - 2 and cache.layers[1].keys.shape[-2] == n - 2


def test_can_drop_last_says_whether_the_last_position_can_be_taken_back_now_or_after_the_next():
    """What the loop asks before it takes a marker back (``added=0``) or writes one it may take back
    (``added=1``). transformers' ``is_croppable`` says yes for every sliding-window layer; until
    2026-12-06 the loop trusted it, and ``drop_last`` past the window ended in transformers' RuntimeError."""
    model, tokenizer = _mistral(window=8)
    ids = tokenizer(TEXT, return_tensors="pt").input_ids
    n = ids.shape[1]
    cache = DynamicCache(config=model.config)
    assert not can_drop_last(cache)  # nothing to take back
    for length in range(1, 10):  # grown one position at a time: the prediction is what then holds
        before = can_drop_last(cache, added=1)
        _run(model, cache, ids[:, length - 1 : length])
        assert can_drop_last(cache) == before == (length <= 7), length  # 7: the layer's sliding_window - 1
    assert cache.is_croppable  # transformers' word, which the layer cannot keep
    with pytest.raises(CacheEditError, match="cannot be cut back to 8 positions"):
        drop_last(cache)
    assert cache_length(cache) == 9  # nothing changed
    kept = DynamicCache(config=model.config)
    assert keep_every_position(kept) and not keep_every_position(cache)  # an empty cache only
    _run(model, kept, ids)
    assert can_drop_last(kept) and can_drop_last(kept, added=1)
    drop_last(kept)
    assert cache_length(kept) == n - 1
    full = _prefill(tiny_model("llama")[0], ids)
    assert not keep_every_position(full) and can_drop_last(full) and can_drop_last(full, added=1)

"""``generate()``'s conventions under recall: sliding-window caches, the options recall refuses,
and where each step's scores belong in ``sequences``."""

from __future__ import annotations

import pytest
import torch
from transformers import DynamicCache, GenerationConfig, LogitsProcessorList

from recall_core import RECALL_TOKEN, RecallConfig, RecallGenerator, recall_generate
from recall_core.decoding.hf_compat import cache_kwarg
from recall_core.settings import generation_options
from recall_core.tokens import add_recall_tokens
from tests.helpers.logits import ForceAt
from tests.helpers.memories import FixedMemory, ListMemory
from tests.helpers.tiny import tiny_model, tiny_tokenizer

FACT = "The user's dog is called Biscuit."
CHAT = [{"role": "user", "content": "Remember that my favourite colour is green. What is my name?"}]
WINDOW = 6  # prompts run well past it


def sliding(kind: str):
    """A tiny random model whose attention (all of it, or its first layer) reads a window of 6 positions."""
    import transformers as T

    tokenizer = tiny_tokenizer()
    common = dict(vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512)  # fmt: skip
    torch.manual_seed(0)
    if kind == "mistral":
        model = T.MistralForCausalLM(T.MistralConfig(**common, sliding_window=WINDOW))
    elif kind == "gemma2":
        model = T.Gemma2ForCausalLM(T.Gemma2Config(**common, head_dim=16, sliding_window=WINDOW))
    else:
        config = T.Gemma3TextConfig(**common, head_dim=16, sliding_window=WINDOW,
                                    layer_types=["sliding_attention", "full_attention"])  # fmt: skip
        model = T.Gemma3ForCausalLM(config)
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.eval()
    add_recall_tokens(model, tokenizer)
    return model, tokenizer


def _spent(model):
    return [model.config.memory_pad_token_id, model.config.recall_token_id]


def _recall(model, tokenizer, input_ids, memory=None, config=None, trace=None, **kwargs):
    return model.generate(input_ids, custom_generate=recall_generate, memory=memory, recall_config=config or RecallConfig(),
                          recall_tokenizer=tokenizer, recall_trace=trace, **kwargs)  # fmt: skip


def _marked(tokenizer, recall_id):
    head = tokenizer("My dog is called Biscuit and my cat is called Pepper.", return_tensors="pt").input_ids
    tail = tokenizer(" I live in Lisbon. Where do I live?", add_special_tokens=False, return_tensors="pt").input_ids
    return torch.cat([head, torch.tensor([[recall_id]]), tail], -1), torch.cat([head, tail], -1)


# ---------------------------------------------------------------------- sliding-window caches
@pytest.mark.parametrize("kind", ["mistral", "gemma2", "gemma3"])
def test_kv_mode_on_a_sliding_window_model_runs_as_tokens_when_a_prompt_marker_finds_nothing(kind):
    """Until 2026-12-06 this raised transformers' RuntimeError ("`crop` was called, but ... the sliding
    window size was already reached"): kv mode ran the prompt in pieces and took the marker back."""
    model, tokenizer = sliding(kind)
    gen = RecallGenerator(model, tokenizer, memory=None)
    rid = model.config.recall_token_id
    config = RecallConfig(inject_mode="kv")
    marked = gen.encode(CHAT, config=config)
    plain = marked[:, marked[0] != rid]
    assert plain.shape[1] > 4 * WINDOW
    for sampling, seed in (({"do_sample": False}, 0), ({"do_sample": True, "top_k": 20}, 4)):
        torch.manual_seed(seed)
        expected = model.generate(plain, suppress_tokens=_spent(model), max_new_tokens=12, **sampling)
        torch.manual_seed(seed)
        result = gen.generate(CHAT, memory=ListMemory({}), config=config, max_new_tokens=12, **sampling)
        assert torch.equal(result.sequences, expected)
        assert [(r.in_prompt, r.injected) for r in result.recalls] == [(True, False)]


def test_a_sliding_window_kv_call_runs_its_prompt_once_and_says_why_it_fell_back():
    model, tokenizer = sliding("mistral")
    marked, _ = _marked(tokenizer, model.config.recall_token_id)
    calls = []
    hook = model.register_forward_pre_hook(lambda module, args, kwargs: calls.append(1), with_kwargs=True)
    trace = []
    try:
        out = _recall(model, tokenizer, marked, FixedMemory(FACT), RecallConfig(inject_mode="kv"), trace,
                      max_new_tokens=3, do_sample=False)  # fmt: skip
    finally:
        hook.remove()
    assert len(calls) == 3  # the prompt with its notes in one pass, then one per new token
    (recall,) = trace
    assert recall.injected and recall.inject_mode == "tokens"
    assert "DynamicSlidingWindowLayer" in recall.kv_fallback
    assert out.shape[1] == marked.shape[1] + recall.length + 3


@pytest.mark.parametrize("kind", ["mistral", "gemma3"])
def test_uncertainty_on_a_sliding_window_model_takes_back_a_marker_that_finds_nothing(kind):
    """Until 2026-12-06 the loop's own marker, taken back past the window, raised a RuntimeError.
    The loop's cache now records its sliding-window past, so it is taken back exactly."""
    model, tokenizer = sliding(kind)
    ids = tokenizer("My dog is called Biscuit and my cat is called Pepper. I live in", return_tensors="pt").input_ids
    assert ids.shape[1] > 2 * WINDOW
    config = RecallConfig(recall_policy="uncertainty", uncertainty_threshold=0.1, min_score=0.9)
    for sampling, seed in (({"do_sample": False}, 0), ({"do_sample": True, "top_k": 20}, 3)):
        trace = []
        torch.manual_seed(seed)
        got = _recall(model, tokenizer, ids, ListMemory({"a": "zzz qqq"}), config, trace, max_new_tokens=12,
                      suppress_tokens=_spent(model), **sampling)  # fmt: skip
        torch.manual_seed(seed)
        expected = model.generate(ids, suppress_tokens=_spent(model), max_new_tokens=12, **sampling)
        assert torch.equal(got, expected)
        assert trace and all(r.trigger == "uncertainty" and not r.injected for r in trace)


def test_a_prompt_run_in_pieces_on_a_sliding_window_model_drops_a_marker_that_finds_nothing():
    """A caller's mask with a zero runs the prompt in pieces, marker by marker: the marker that
    found nothing is taken back past the window as well."""
    model, tokenizer = sliding("mistral")
    marked, plain = _marked(tokenizer, model.config.recall_token_id)
    pad = torch.tensor([[tokenizer.pad_token_id]])
    marked, plain = torch.cat([pad, marked], -1), torch.cat([pad, plain], -1)
    marked_mask, plain_mask = torch.ones_like(marked), torch.ones_like(plain)
    marked_mask[0, 0] = plain_mask[0, 0] = 0
    trace = []
    got = _recall(model, tokenizer, marked, None, None, trace, attention_mask=marked_mask, max_new_tokens=10,
                  do_sample=False)  # fmt: skip
    expected = model.generate(plain, attention_mask=plain_mask, suppress_tokens=_spent(model), max_new_tokens=10,
                              do_sample=False)  # fmt: skip
    assert torch.equal(got, expected)
    assert [(r.in_prompt, r.reason) for r in trace] == [(True, "no memory")]


def test_a_hidden_query_on_a_sliding_window_model_drops_a_marker_that_finds_nothing():
    """``query_mode="hidden"`` needs the marker's hidden state, so its prompt runs in pieces too."""
    from recall_core.memory import HashEncoder
    from recall_core.training.head import HeadRecipe, train_query_head

    model, tokenizer = sliding("mistral")
    texts = ["My dog is called Biscuit.", "I live in Lisbon.", "What is my name?", "Where do I live?"]
    head = train_query_head(model, tokenizer, HashEncoder(16), texts, recipe=HeadRecipe(epochs=2, batch_size=4))
    marked, plain = _marked(tokenizer, model.config.recall_token_id)
    trace, memory = [], ListMemory({})
    got = model.generate(marked, custom_generate=recall_generate, memory=memory,
                         recall_config=RecallConfig(query_mode="hidden"), recall_tokenizer=tokenizer,
                         recall_query_head=head, recall_trace=trace, max_new_tokens=10, do_sample=False)  # fmt: skip
    expected = model.generate(plain, suppress_tokens=_spent(model), max_new_tokens=10, do_sample=False)
    assert torch.equal(got, expected)
    assert [(r.in_prompt, r.injected) for r in trace] == [(True, False)]
    assert [q.mode for q in memory.queries] == ["hidden"]


def test_a_callers_cache_that_forgot_its_window_keeps_a_marker_it_cannot_take_back(monkeypatch):
    """A cache given to ``generate()`` is the caller's: recall does not make it record its past. Past its
    window it cannot take a marker back, and the marker stays where it is (no error)."""
    from recall_core.decoding.loop import _RecallLoop

    model, tokenizer = sliding("mistral")
    marked, _ = _marked(tokenizer, model.config.recall_token_id)
    at = int((marked[0] == model.config.recall_token_id).nonzero()[0])
    cache = DynamicCache(config=model.config)
    with torch.no_grad():
        model(input_ids=marked[:, : at - 2], **cache_kwarg(cache), use_cache=True)
    monkeypatch.setattr(_RecallLoop, "_searches_before_running", lambda self, model_kwargs: False)  # in pieces
    trace = []
    got = _recall(model, tokenizer, marked, None, None, trace, max_new_tokens=4, do_sample=False, **cache_kwarg(cache))
    assert got.shape[1] == marked.shape[1] + 4 and int(got[0, at]) == model.config.recall_token_id
    assert [(r.in_prompt, r.reason) for r in trace] == [(True, "no memory")]


# ---------------------------------------------------------------------- what recall refuses
@pytest.fixture(scope="module")
def tiny_gen():
    model, tokenizer = tiny_model("llama")
    return RecallGenerator(model, tokenizer, memory=FixedMemory(FACT), generation_defaults={"max_new_tokens": 6})


def test_use_cache_false_is_refused_by_name(tiny_gen):
    """It gave other tokens than ``generate()`` until 2026-12-06: recall decodes on the cache."""
    model, tokenizer = tiny_gen.model, tiny_gen.tokenizer
    with pytest.raises(ValueError, match="use_cache must be True with recall"):
        tiny_gen.generate("My dog is called", use_cache=False)
    with pytest.raises(ValueError, match="use_cache must be True with recall"):
        tiny_gen.generate("My dog is called", generation_config=GenerationConfig(use_cache=False))
    with pytest.raises(ValueError, match="use_cache must be True with recall"):
        _recall(model, tokenizer, tokenizer("My dog is called", return_tensors="pt").input_ids, use_cache=False,
                max_new_tokens=3)  # fmt: skip


@pytest.mark.parametrize("implementation", ["static", "offloaded_static", "sliding_window", "hybrid"])
def test_a_cache_of_fixed_size_is_refused_by_name(tiny_gen, implementation):
    """transformers sizes it for the prompt and max_new_tokens: the first notes injected ran past its
    end, an IndexError mid-reply until 2026-12-07 (a reviewer). A growing cache is taken."""
    chat = [{"role": "user", "content": "Where do I live?"}]
    message = f"cache_implementation must be unset, 'dynamic', 'offloaded' or 'quantized' with recall .* got '{implementation}'"
    with pytest.raises(ValueError, match=message):
        tiny_gen.generate(chat, memory=FixedMemory(FACT), cache_implementation=implementation, max_new_tokens=4)
    with pytest.raises(ValueError, match=message):
        tiny_gen.generate(chat, memory=FixedMemory(FACT), max_new_tokens=4,
                          generation_config=GenerationConfig(cache_implementation=implementation))  # fmt: skip
    result = tiny_gen.generate(chat, memory=FixedMemory(FACT), cache_implementation="dynamic", max_new_tokens=4)
    assert result.recalls and result.recalls[0].injected


def test_inputs_embeds_is_refused_by_name(tiny_gen):
    """A prompt given as embeddings never had its notes injected, though the trace said so."""
    model, tokenizer = tiny_gen.model, tiny_gen.tokenizer
    ids = tiny_gen.encode([{"role": "user", "content": "What is my dog called?"}])
    embeds = model.get_input_embeddings()(ids)
    with pytest.raises(ValueError, match="inputs_embeds must be unset with recall .* got a Tensor"):
        tiny_gen.generate([{"role": "user", "content": "What is my dog called?"}], inputs_embeds=embeds)
    with pytest.raises(ValueError, match="inputs_embeds must be unset with recall"):
        _recall(model, tokenizer, ids, FixedMemory(FACT), inputs_embeds=embeds, max_new_tokens=3)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"penalty_alpha": 0.6, "top_k": 4}, "penalty_alpha"),
        ({"dola_layers": "high"}, "dola_layers"),
        ({"assistant_model": "helper"}, "assistant_model"),
        ({"prompt_lookup_num_tokens": 3}, "prompt_lookup_num_tokens"),
        ({"token_healing": True, "tokenizer": "tok"}, "token_healing"),
    ],
    ids=["contrastive", "dola", "assistant", "prompt-lookup", "token-healing"],
)
def test_other_decoding_methods_are_refused_by_the_argument_that_asks_for_them(tiny_gen, kwargs, name):
    """Until 2026-12-06 they were taken and silently ignored (greedy or sampling ran instead), or,
    for token healing, failed with a message asking for the tokenizer that was given."""
    helper = {"helper": tiny_gen.model, "tok": tiny_gen.tokenizer}
    kwargs = {key: helper.get(value, value) if isinstance(value, str) else value for key, value in kwargs.items()}
    with pytest.raises(ValueError, match=f"^{name} must be"):
        tiny_gen.generate("My dog is called", **kwargs)
    with pytest.raises(ValueError, match=f"^{name} must be"):
        generation_options(kwargs)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [({"penalty_alpha": 0.6, "top_k": 4}, "penalty_alpha"), ({"dola_layers": "high"}, "dola_layers"),
     ({"prompt_lookup_num_tokens": 3}, "prompt_lookup_num_tokens")],
)  # fmt: skip
def test_the_loop_refuses_other_decoding_methods_by_name(tiny, kwargs, name):
    """``recall_generate`` used directly: what transformers hands it is checked as well."""
    model, tokenizer = tiny
    ids = tokenizer("My dog is called", return_tensors="pt").input_ids
    with pytest.raises(ValueError, match=f"^{name} must be"):
        _recall(model, tokenizer, ids, do_sample=False, max_new_tokens=3, **kwargs)


def test_constrained_beam_search_is_refused_by_the_option_that_asks_for_it(tiny):
    """A review of the first version found it refused as "constrained_beam_search", naming no option."""
    model, tokenizer = tiny
    ids = tokenizer("My dog is called", return_tensors="pt").input_ids
    with pytest.raises(ValueError, match="^force_words_ids must be unset with recall .*generation_config"):
        _recall(model, tokenizer, ids, force_words_ids=[[5]], max_new_tokens=3)


def test_a_model_saved_with_use_cache_false_generates_through_recall():
    """A checkpoint saved after gradient-checkpointed training says ``use_cache=False``: the first
    version refused every call of such a model; the generator decodes on the cache unless the call
    itself says otherwise."""
    model, tokenizer = tiny_model("llama")
    model.generation_config.use_cache = False
    gen = RecallGenerator(model, tokenizer, memory=FixedMemory(FACT), generation_defaults={"max_new_tokens": 4})
    assert gen.generate("My dog is called").usage.generated_tokens == 4
    with pytest.raises(ValueError, match="use_cache must be True with recall"):
        gen.generate("My dog is called", use_cache=False)


@pytest.mark.parametrize("policy", ["auto", "ask", "model"])
@pytest.mark.parametrize("kind", ["mistral", "gemma3"])
def test_a_memory_question_past_a_sliding_window_is_answered(kind, policy):
    """The first pass that decides whether to recall (decoding/ask.py) ran the prompt on a cache that
    forgot its sliding-window past, then cropped it: CacheEditError on every chat past the window
    with a memory (a reviewer's finding, older than this session's fixes)."""
    model, tokenizer = sliding(kind)
    gen = RecallGenerator(model, tokenizer, generation_defaults={"max_new_tokens": 6})
    chat = [{"role": "user", "content": "What is my dog called?"}]
    assert gen.encode(chat).shape[1] > 4 * WINDOW
    result = gen.generate(chat, memory=FixedMemory(FACT), config=RecallConfig(recall_policy=policy))
    assert result.usage.generated_tokens > 0


def test_a_cache_the_caller_gives_is_left_as_it_is():
    """docs/how-it-works.md: the first version made a caller's empty cache record its sliding past
    (696 positions kept where transformers' layer keeps 5), for as long as the caller kept it."""
    model, tokenizer = sliding("gemma3")
    ids = tokenizer("My dog is called Biscuit and my cat is called Pepper. I live in", return_tensors="pt").input_ids
    cache = DynamicCache(config=model.config)
    config = RecallConfig(recall_policy="uncertainty", uncertainty_threshold=0.1, min_score=0.9)
    _recall(model, tokenizer, ids, ListMemory({"a": "zzz qqq"}), config, max_new_tokens=8, cache=cache,
            suppress_tokens=_spent(model))  # fmt: skip
    assert not any(getattr(layer, "record_past", False) for layer in cache.layers)


# ---------------------------------------------------------------------- scores and sequences
def test_step_positions_line_each_score_up_with_its_token_after_a_reply_recall(tiny):
    """After a recall in the reply ``sequences`` holds the notes' pads, which have no score:
    ``step_positions`` says which token of ``sequences`` each score entry chose."""
    model, tokenizer = tiny
    ids = tokenizer("Where do I live?", return_tensors="pt").input_ids
    rid, pad = model.config.recall_token_id, model.config.memory_pad_token_id
    out = _recall(model, tokenizer, ids, FixedMemory(FACT), RecallConfig(recall_policy="model"), max_new_tokens=8,
                  do_sample=False, return_dict_in_generate=True, output_scores=True, output_logits=True,
                  logits_processor=LogitsProcessorList([ForceAt(2, [rid])]))  # fmt: skip
    (recall,) = out.recalls
    assert recall.injected and not recall.in_prompt
    positions = out.step_positions
    assert len(positions) == len(out.scores) == len(out.logits) == 8
    chosen = out.sequences[0, positions]
    assert pad not in chosen.tolist() and int(chosen[2]) == rid
    assert out.sequences.shape[1] == out.generated_start + 8 + recall.length
    for step, score in enumerate(out.scores):  # greedy: each step's token is its scores' argmax
        assert int(score[0].argmax()) == int(chosen[step])
    aligned = model.compute_transition_scores(out.sequences[:, positions], out.scores, normalize_logits=True)
    assert torch.isfinite(aligned).all()
    misaligned = model.compute_transition_scores(out.sequences, out.scores, normalize_logits=True)
    assert not torch.isfinite(misaligned).all()  # what a caller got before: scores paired with pads


def test_without_a_reply_recall_the_step_positions_are_the_generated_tokens(tiny):
    model, tokenizer = tiny
    ids = tokenizer("Where do I live?" + RECALL_TOKEN, return_tensors="pt").input_ids
    out = _recall(model, tokenizer, ids, FixedMemory(FACT), max_new_tokens=5, do_sample=False,
                  return_dict_in_generate=True)  # fmt: skip
    assert out.recalls[0].in_prompt and out.recalls[0].injected
    assert out.step_positions == list(range(out.generated_start, out.sequences.shape[1]))


def test_bad_stop_strings_in_the_defaults_fail_when_the_generator_is_made(tiny):
    """``generation_defaults={"stop_strings": [""]}`` passed the constructor and failed at the first
    call, and ``stop=5`` raised a TypeError that named nothing (a reviewer, 2026-12-07)."""
    model, tokenizer = tiny
    for bad in ([""], [None], 5, (s for s in ["###"]), b"###"):  # an iterator would be used up by the check
        with pytest.raises(ValueError, match="stop strings must be"):
            RecallGenerator(model, tokenizer, generation_defaults={"stop_strings": bad})
    with pytest.raises(ValueError, match="stop strings must be a string or a list of non-empty strings, got 5"):
        RecallGenerator(model, tokenizer).generate("My dog is called", stop=5, max_new_tokens=2)
    assert RecallGenerator(model, tokenizer).generate("My dog is called", stop={"zzz"}, max_new_tokens=2).text  # a set, as before


def test_a_recall_that_would_pass_the_model_s_window_injects_nothing_and_says_why():
    """The notes do not count in max_new_tokens: a recall could take the sequence past the positions
    the model was trained on, though prompt and max_new_tokens fit (GPT-2: an IndexError mid-reply;
    rotary models ran past their window without a word; a reviewer, 2026-12-07)."""
    from transformers import LogitsProcessorList

    from recall_core.decoding.budget import NO_ROOM
    from tests.helpers.logits import GiveAt

    model, tokenizer = tiny_model("gpt2", positions=200)
    gen = RecallGenerator(model, tokenizer)
    memory = FixedMemory("The user's dog is called Biscuit.")
    asks = LogitsProcessorList([GiveAt(model.config.recall_token_id, 0.999, model.config.memory_pad_token_id, steps=(10,))])
    result = gen.generate("Where do I live?", memory=memory, max_new_tokens=60, logits_processor=asks)
    assert result.usage.generated_tokens == 60 and result.usage.injected_tokens == 0
    assert [r.reason for r in result.recalls] == [NO_ROOM]
    marked = gen.generate("Where do I live?" + RECALL_TOKEN, memory=memory, max_new_tokens=60)  # a prompt's marker
    assert marked.usage.injected_tokens == 0 and [r.reason for r in marked.recalls] == [NO_ROOM]
    fits = gen.generate("Where do I live?" + RECALL_TOKEN, memory=memory, max_new_tokens=10)
    assert fits.recalls[0].injected and fits.usage.injected_tokens > 0


def test_processors_that_act_at_a_length_count_generated_tokens_only(tiny):
    """After a prompt's notes were injected, ``forced_eos_token_id`` never forced its token and
    ``begin_suppress_tokens`` no longer kept the first token out: both saw the notes' positions as
    generated (a reviewer, 2026-12-07)."""
    model, tokenizer = tiny
    gen = RecallGenerator(model, tokenizer)
    memory, prompt = FixedMemory(FACT), "Where do I live?" + RECALL_TOKEN
    forced = gen.generate(prompt, memory=memory, max_new_tokens=12, forced_eos_token_id=7, eos_token_id=7)
    assert forced.usage.injected_tokens > 0 and forced.sequences[0, -1].item() == 7 and forced.finish_reason == "stop"
    first = gen.generate(prompt, memory=memory, max_new_tokens=1).sequences[0, -1].item()
    again = gen.generate(prompt, memory=memory, max_new_tokens=1, begin_suppress_tokens=[first])
    assert again.usage.injected_tokens > 0 and again.sequences[0, -1].item() != first

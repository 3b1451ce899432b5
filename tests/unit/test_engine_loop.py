"""The decode loop against plain generate(): parity, injection equivalence, invariants."""

from __future__ import annotations

import pytest
import torch
from transformers import LogitsProcessor, LogitsProcessorList

from recall_core import RECALL_TOKEN, RecallConfig, recall_generate
from recall_core.decoding.hf_compat import cache_of
from recall_core.decoding.notes import memory_token_ids
from tests.helpers.logits import ForceAt
from tests.helpers.memories import FixedMemory, ListMemory

PROMPT = "My dog is called"
FACT = "The user's dog is called Biscuit."


def _ids(tokenizer, text):
    return tokenizer(text, return_tensors="pt").input_ids


def _written(model, input_ids, **kwargs):
    """Plain generate() on the same tokens written in the prompt, with recall spent: under
    ``max_recalls=1`` the loop keeps the model from another ``<recall>`` (a random model may write one)."""
    spent = [model.config.memory_pad_token_id, model.config.recall_token_id]
    return model.generate(input_ids, suppress_tokens=spent, **kwargs)


def _recall(model, tokenizer, input_ids, memory=None, config=None, trace=None, **kwargs):
    return model.generate(
        input_ids,
        custom_generate=recall_generate,
        memory=memory,
        recall_config=config or RecallConfig(),
        recall_tokenizer=tokenizer,
        recall_trace=trace,
        **kwargs,
    )


class Boost(LogitsProcessor):
    def __init__(self, token_id: int, amount: float = 1e4) -> None:
        self.token_id, self.amount = token_id, amount

    def __call__(self, input_ids, scores):
        scores[:, self.token_id] += self.amount
        return scores


# ---------------------------------------------------------------------- parity
@pytest.mark.parametrize(
    "sampling",
    [
        {"do_sample": False},
        {"do_sample": True, "temperature": 0.8, "top_k": 20, "top_p": 0.9},
        {"do_sample": True, "temperature": 1.3, "min_p": 0.05},
        {"do_sample": False, "repetition_penalty": 1.4},
        {"do_sample": True, "temperature": 0.7, "repetition_penalty": 1.2, "no_repeat_ngram_size": 2},
    ],
    ids=["greedy", "topk-topp", "min-p", "repetition-penalty", "sample-penalty-ngram"],
)
def test_no_recall_is_token_identical_to_generate(any_tiny, sampling):
    """Without a memory the model may not write ``<recall>`` (nothing to search): the tokens are
    ``generate()``'s with it suppressed, which a random model may otherwise write."""
    model, tokenizer = any_tiny
    input_ids = _ids(tokenizer, PROMPT)
    for seed in (0, 1, 2):
        torch.manual_seed(seed)
        expected = _written(model, input_ids, max_new_tokens=24, **sampling)
        torch.manual_seed(seed)
        got = _recall(model, tokenizer, input_ids, max_new_tokens=24, **sampling)
        assert torch.equal(got, expected)


def test_parity_holds_with_a_memory_attached_but_no_recall(tiny):
    model, tokenizer = tiny
    input_ids = _ids(tokenizer, PROMPT)
    expected = model.generate(input_ids, max_new_tokens=20, do_sample=False)
    memory = FixedMemory(FACT)
    got = _recall(model, tokenizer, input_ids, memory=memory, max_new_tokens=20, do_sample=False)
    assert torch.equal(got, expected)
    assert memory.queries == []


def test_scores_match_generate_with_return_dict(tiny):
    model, tokenizer = tiny
    input_ids = _ids(tokenizer, PROMPT)
    kwargs = {"max_new_tokens": 8, "do_sample": False, "return_dict_in_generate": True, "output_scores": True}
    expected = _written(model, input_ids, **kwargs)  # no memory: <recall> suppressed as well as pads
    got = _recall(model, tokenizer, input_ids, **kwargs)
    assert torch.equal(got.sequences, expected.sequences)
    assert all(torch.allclose(a, b) for a, b in zip(got.scores, expected.scores, strict=True))
    assert got.recalls == []


# ---------------------------------------------------------------------- injection equivalence
def test_injection_equals_memory_tokens_written_in_the_prompt(any_tiny):
    model, tokenizer = any_tiny
    config = RecallConfig(max_recalls=1)  # a random model may write a literal <recall> later
    prompt = _ids(tokenizer, "Where do I live?" + RECALL_TOKEN)
    memory_ids = torch.tensor([memory_token_ids(tokenizer, FACT, config)])
    trace = []
    got = _recall(model, tokenizer, prompt, FixedMemory(FACT), config, trace, max_new_tokens=12, do_sample=False)
    written = _written(model, torch.cat([prompt, memory_ids], dim=-1), max_new_tokens=12, do_sample=False)
    span = prompt.shape[1] + memory_ids.shape[1]
    assert got.shape == written.shape
    assert torch.equal(got[0, span:], written[0, span:])
    pad_id = model.config.memory_pad_token_id
    assert got[0, prompt.shape[1] : span].tolist() == [pad_id] * memory_ids.shape[1]
    assert trace[0].position == prompt.shape[1] and trace[0].length == memory_ids.shape[1]


def test_injection_in_the_middle_of_the_prompt(any_tiny):
    model, tokenizer = any_tiny
    config = RecallConfig(max_recalls=1)  # a random model may write a literal <recall> later
    head = _ids(tokenizer, "Where do I live?" + RECALL_TOKEN)
    tail = tokenizer(" Tell me.", add_special_tokens=False, return_tensors="pt").input_ids
    memory_ids = torch.tensor([memory_token_ids(tokenizer, FACT, config)])
    got = _recall(model, tokenizer, torch.cat([head, tail], -1), FixedMemory(FACT), config, max_new_tokens=10, do_sample=False)
    written = _written(model, torch.cat([head, memory_ids, tail], -1), max_new_tokens=10, do_sample=False)
    assert torch.equal(got[0, -10:], written[0, -10:])


def test_generated_recall_injects_and_equals_written_continuation(tiny):
    model, tokenizer = tiny
    config = RecallConfig(max_recalls=1)  # a random model may write a literal <recall> later
    recall_id = model.config.recall_token_id
    prompt = _ids(tokenizer, PROMPT)
    trace = []
    force = LogitsProcessorList([ForceAt(3, [recall_id])])
    got = _recall(model, tokenizer, prompt, FixedMemory(FACT), config, trace, max_new_tokens=12, do_sample=False,
                  logits_processor=force)
    assert len(trace) == 1 and trace[0].injected
    start = trace[0].position  # right after the generated <recall>
    assert got[0, start - 1].item() == recall_id
    memory_ids = torch.tensor([memory_token_ids(tokenizer, FACT, config)])
    written_prompt = torch.cat([got[:, :start], memory_ids], -1)
    remaining = 12 - (start - prompt.shape[1])
    written = _written(model, written_prompt, max_new_tokens=remaining, do_sample=False)
    assert torch.equal(got[0, start + memory_ids.shape[1] :], written[0, written_prompt.shape[1] :])


def test_literal_recall_text_written_by_the_model_triggers(tiny):
    model, tokenizer = tiny
    literal = tokenizer(RECALL_TOKEN, add_special_tokens=False, split_special_tokens=True).input_ids
    assert model.config.recall_token_id not in literal
    trace = []
    _recall(model, tokenizer, _ids(tokenizer, PROMPT), FixedMemory(FACT), None, trace, max_new_tokens=12,
            do_sample=False, logits_processor=LogitsProcessorList([ForceAt(2, literal)]))
    assert len(trace) == 1 and trace[0].injected


# ---------------------------------------------------------------------- invariants
def test_cache_positions_and_mask_grow_with_injection(tiny):
    model, tokenizer = tiny
    seen_positions = []
    hook = model.model.register_forward_pre_hook(
        lambda module, args, kwargs: seen_positions.extend(kwargs["position_ids"][0].tolist()), with_kwargs=True
    )
    try:
        out = _recall(model, tokenizer, _ids(tokenizer, "Where do I live?" + RECALL_TOKEN), FixedMemory(FACT),
                      max_new_tokens=10, do_sample=False, return_dict_in_generate=True,
                      logits_processor=LogitsProcessorList([ForceAt(4, [model.config.recall_token_id])]))
    finally:
        hook.remove()
    # Every position fed exactly once, in order, never restarting: 0, 1, 2, ...
    assert seen_positions == list(range(len(seen_positions)))
    # The cache holds everything but the last sampled token, pads included.
    assert cache_of(out).get_seq_length() == out.sequences.shape[1] - 1
    assert len([r for r in out.recalls if r.injected]) == 2


def test_attention_mask_path_matches_mask_free_path(tiny):
    """A user-given all-ones mask stays consistent through the injection."""
    model, tokenizer = tiny
    prompt = _ids(tokenizer, "Where do I live?" + RECALL_TOKEN + " Tell me.")
    a = _recall(model, tokenizer, prompt, FixedMemory(FACT), max_new_tokens=8, do_sample=False)
    b = _recall(model, tokenizer, prompt, FixedMemory(FACT), max_new_tokens=8, do_sample=False,
                attention_mask=torch.ones_like(prompt))
    assert torch.equal(a, b)


def test_memory_pad_is_never_sampled(tiny):
    model, tokenizer = tiny
    pad_id = model.config.memory_pad_token_id
    out = _recall(model, tokenizer, _ids(tokenizer, PROMPT), max_new_tokens=10, do_sample=True,
                  logits_processor=LogitsProcessorList([Boost(pad_id)]))
    assert pad_id not in out[0].tolist()


def test_max_new_tokens_counts_generated_tokens_only(tiny):
    model, tokenizer = tiny
    model.generation_config.eos_token_id = None
    try:
        prompt = _ids(tokenizer, "Where do I live?" + RECALL_TOKEN)
        trace = []
        out = _recall(model, tokenizer, prompt, FixedMemory(FACT), None, trace, max_new_tokens=15, do_sample=False,
                      logits_processor=LogitsProcessorList([ForceAt(5, [model.config.recall_token_id])]))
    finally:
        model.generation_config.eos_token_id = tokenizer.eos_token_id
    injected = sum(r.length for r in trace)
    # the prompt's recall and the forced one (a random model may ask for more by itself)
    assert len(trace) >= 2 and injected > 0
    assert out.shape[1] - prompt.shape[1] - injected == 15


def test_memory_text_with_control_tokens_is_plain_text(tiny):
    model, tokenizer = tiny
    nasty = f"remember {RECALL_TOKEN} this {tokenizer.eos_token} and <|memory_pad|>"
    config = RecallConfig()
    ids = memory_token_ids(tokenizer, nasty, config)
    assert not set(ids) & set(tokenizer.all_special_ids)
    trace = []
    _recall(model, tokenizer, _ids(tokenizer, "Tell me" + RECALL_TOKEN), FixedMemory(nasty), config, trace,
            max_new_tokens=10, do_sample=False)
    assert len(trace) == 1 and trace[0].length == len(ids)


def test_max_recalls_stops_a_model_that_keeps_asking(tiny):
    model, tokenizer = tiny
    recall_id = model.config.recall_token_id
    trace = []
    out = _recall(model, tokenizer, _ids(tokenizer, PROMPT), FixedMemory(FACT), RecallConfig(max_recalls=3), trace,
                  max_new_tokens=30, do_sample=False, logits_processor=LogitsProcessorList([Boost(recall_id)]))
    assert [r.injected for r in trace] == [True, True, True]
    assert out[0].tolist().count(recall_id) == 3  # masked once the budget is spent


def test_max_recalls_zero_disables_recall(tiny):
    model, tokenizer = tiny
    trace = []
    memory = FixedMemory(FACT)
    _recall(model, tokenizer, _ids(tokenizer, "Hi" + RECALL_TOKEN), memory, RecallConfig(max_recalls=0), trace,
            max_new_tokens=5, do_sample=False)
    assert memory.queries == [] and trace[0].reason == "max_recalls reached"


def test_query_is_the_current_turn(tiny):
    model, tokenizer = tiny
    memory = FixedMemory(FACT)
    messages = [{"role": "user", "content": "I like tea."}, {"role": "assistant", "content": "Noted."},
                {"role": "user", "content": "What is my dog called?" + RECALL_TOKEN}]
    ids = torch.tensor([tokenizer.apply_chat_template(messages, add_generation_prompt=True, return_dict=False)])
    _recall(model, tokenizer, ids, memory, max_new_tokens=3, do_sample=False)
    assert memory.queries[0].text == "What is my dog called?"
    memory.queries.clear()
    _recall(model, tokenizer, ids, memory, RecallConfig(query_window=4), max_new_tokens=3, do_sample=False)
    assert len(tokenizer(memory.queries[0].text, add_special_tokens=False).input_ids) <= 5


def test_hidden_query_mode_without_a_query_head_says_how_to_get_one(tiny):
    model, tokenizer = tiny
    memory = FixedMemory(FACT)
    with pytest.raises(ValueError, match="query_mode='hidden' needs a query head.*recall train-head"):
        _recall(model, tokenizer, _ids(tokenizer, "Hi" + RECALL_TOKEN), memory, RecallConfig(query_mode="hidden"),
                max_new_tokens=3, do_sample=False)
    assert memory.queries == []  # refused before anything was searched
    # Without a memory there is nothing to search: the mode is not in the way of plain decoding.
    _recall(model, tokenizer, _ids(tokenizer, "Hi" + RECALL_TOKEN), None, RecallConfig(query_mode="hidden"),
            max_new_tokens=3, do_sample=False)


def test_the_retired_vector_mode_is_refused_by_name():
    # One embedding per memory answered no question in its benchmark; it is no longer offered.
    with pytest.raises(ValueError, match="inject_mode must be one of 'tokens', 'kv', got 'vector'"):
        RecallConfig(inject_mode="vector")


def test_min_score_blocks_weak_memories(tiny):
    model, tokenizer = tiny
    memory = ListMemory({"a": "completely unrelated words"})
    trace = []
    _recall(model, tokenizer, _ids(tokenizer, "Where do I live?" + RECALL_TOKEN), memory, RecallConfig(min_score=0.5),
            trace, max_new_tokens=3, do_sample=False)
    assert trace[0].reason == "below min_score" and not trace[0].injected


def test_memory_errors_warn_or_raise(tiny):
    model, tokenizer = tiny
    broken = ListMemory({}, fail=ConnectionError("server down"))
    prompt = _ids(tokenizer, "Hi" + RECALL_TOKEN)
    # nothing injected: the marker is dropped and generation is that of the unmarked prompt
    expected = model.generate(_ids(tokenizer, "Hi"), max_new_tokens=5, do_sample=False)
    trace = []
    with pytest.warns(RuntimeWarning, match="server down"):
        got = _recall(model, tokenizer, prompt, broken, None, trace, max_new_tokens=5, do_sample=False)
    assert torch.equal(got, expected)
    assert "server down" in trace[0].reason
    with pytest.raises(ConnectionError):
        _recall(model, tokenizer, prompt, broken, RecallConfig(on_memory_error="raise"), max_new_tokens=5)


@pytest.mark.parametrize("memory", [None, ListMemory({"a": "zzz qqq"})], ids=["no-memory", "below-min-score"])
def test_nothing_injected_runs_as_if_the_marker_were_absent(any_tiny, memory):
    model, tokenizer = any_tiny
    marked = _ids(tokenizer, "Where do I live?" + RECALL_TOKEN + " Tell me." + RECALL_TOKEN)
    plain = _ids(tokenizer, "Where do I live? Tell me.")
    trace = []
    got = _recall(model, tokenizer, marked, memory, RecallConfig(min_score=0.5), trace, max_new_tokens=10,
                  do_sample=False)
    assert torch.equal(got, model.generate(plain, max_new_tokens=10, do_sample=False))
    assert [r.injected for r in trace] == [False, False] and all(r.in_prompt for r in trace)


def test_one_marker_injected_one_dropped(tiny):
    model, tokenizer = tiny
    config = RecallConfig()
    head = _ids(tokenizer, "Where do I live?" + RECALL_TOKEN)
    tail = tokenizer(" Tell me.", add_special_tokens=False, return_tensors="pt").input_ids
    marked = torch.cat([head, tail, torch.tensor([[model.config.recall_token_id]])], -1)
    memory_ids = torch.tensor([memory_token_ids(tokenizer, FACT, config)])
    trace = []
    got = _recall(model, tokenizer, marked, FixedMemory(FACT), RecallConfig(max_recalls=1), trace,
                  max_new_tokens=8, do_sample=False)
    written = model.generate(torch.cat([head, memory_ids, tail], -1), max_new_tokens=8, do_sample=False)
    span = head.shape[1] + memory_ids.shape[1]
    assert got.shape == written.shape and torch.equal(got[0, span:], written[0, span:])
    assert [r.reason for r in trace] == [None, "max_recalls reached"]


def test_batches_are_refused_with_a_clear_error(tiny):
    model, tokenizer = tiny
    ids = _ids(tokenizer, PROMPT).repeat(2, 1)
    with pytest.raises(ValueError, match="one sequence at a time"):
        _recall(model, tokenizer, ids, max_new_tokens=3)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_parity_on_cuda(tiny):
    model, tokenizer = tiny
    model = model.to("cuda")
    ids = _ids(tokenizer, PROMPT).to("cuda")
    assert torch.equal(_recall(model, tokenizer, ids, max_new_tokens=10), model.generate(ids, max_new_tokens=10))


# ---------------------------------------------------------------------- one prefill (issue 21, item 5)
def _forward_calls(model):
    """A list that gets one entry (the number of ids run) per forward pass of ``model``."""
    calls: list[int] = []

    def count(module, args, kwargs):
        ids = kwargs.get("input_ids")
        embeds = kwargs.get("inputs_embeds")
        calls.append(int(ids.shape[1]) if ids is not None else int(embeds.shape[1]))

    return calls, model.register_forward_pre_hook(count, with_kwargs=True)


def _marked_prompt(tokenizer, recall_id):
    head = _ids(tokenizer, "Where do I live?" + RECALL_TOKEN)
    tail = tokenizer(" Tell me where.", add_special_tokens=False, return_tensors="pt").input_ids
    return torch.cat([head, tail, torch.tensor([[recall_id]]), tail], -1)


def test_the_prompt_runs_in_one_forward_pass_with_its_notes_in_place(tiny):
    model, tokenizer = tiny
    marked = _marked_prompt(tokenizer, model.config.recall_token_id)
    calls, hook = _forward_calls(model)
    try:
        got = _recall(model, tokenizer, marked, ListMemory({"a": "I live in Lyon.", "b": "zzz"}),
                      RecallConfig(max_recalls=1, min_score=0.05), max_new_tokens=4, do_sample=False)  # fmt: skip
    finally:
        hook.remove()
    # one marker injected, the other dropped (max_recalls): the prompt is one pass, then one per new token
    assert calls[0] == got.shape[1] - 4 and len(calls) == 4


@pytest.mark.parametrize("memory", [FixedMemory(FACT, "I live in Lyon."), ListMemory({"a": "zzz"}), None],
                         ids=["injected", "below-min-score", "no-memory"])  # fmt: skip
def test_one_prefill_matches_the_prefill_in_pieces(any_tiny, memory, monkeypatch):
    """The same sequence, trace and scores as running the prompt piece by piece around each marker."""
    from recall_core.decoding.loop import _RecallLoop

    model, tokenizer = any_tiny
    marked = _marked_prompt(tokenizer, model.config.recall_token_id)
    config = RecallConfig(max_recalls=2, min_score=0.5)

    def run():
        trace = []
        out = _recall(model, tokenizer, marked, memory, config, trace, max_new_tokens=8, do_sample=False,
                      return_dict_in_generate=True, output_scores=True)  # fmt: skip
        return out, trace

    once, once_trace = run()
    monkeypatch.setattr(_RecallLoop, "_searches_before_running", lambda self, model_kwargs: False)
    pieces, pieces_trace = run()
    assert torch.equal(once.sequences, pieces.sequences)
    assert once.generated_start == pieces.generated_start
    assert once_trace == pieces_trace
    for a, b in zip(once.scores, pieces.scores, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4)

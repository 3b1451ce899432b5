"""RecallGenerator: results, streaming, stop strings, chat prompts and bad input."""

from __future__ import annotations

import pytest
import torch

from recall_core import RECALL_TOKEN, RecallConfig, RecallGenerator
from recall_core.decoding.select import choose_candidate
from recall_core.generator import TokenTextStreamer
from recall_core.reply import finish_text
from recall_core.types import MemoryCandidate
from tests.helpers.memories import FixedMemory

FACT = "The user's dog is called Biscuit."
CHAT = [{"role": "user", "content": "What is my dog called?"}]


@pytest.fixture
def gen(tiny):
    model, tokenizer = tiny
    return RecallGenerator(model, tokenizer, memory=FixedMemory(FACT), generation_defaults={"max_new_tokens": 16})


def test_result_has_new_text_sequences_trace_and_usage(gen):
    result = gen.generate(CHAT)
    prompt_ids = gen.encode(CHAT)
    assert torch.equal(result.sequences[0, : prompt_ids.shape[1] - 0][: 5], prompt_ids[0, :5])
    assert result.recalls and result.recalls[0].injected and result.recalls[0].query == "What is my dog called?"
    usage = result.usage
    assert usage.prompt_tokens == prompt_ids.shape[1]
    assert usage.prompt_tokens + usage.injected_tokens + usage.generated_tokens == result.sequences.shape[1]
    assert usage.injected_tokens == result.recalls[0].length
    assert RECALL_TOKEN not in result.text and "<|memory_pad|>" not in result.text


def test_usage_counts_the_prompt_that_ran_without_a_marker_that_was_dropped(gen):
    """With nothing to inject, the chat prompt's <recall> is dropped, not run; usage counted it (until
    2026-12-07: a reviewer). Where notes were injected the marker ran, and counts."""
    marked = gen.encode(CHAT)
    for memory, marker_ran in ((None, False), (FixedMemory(FACT), True)):
        result = gen.generate(CHAT, memory=memory)
        usage = result.usage
        assert usage.prompt_tokens == marked.shape[1] - (not marker_ran)
        assert usage.prompt_tokens + usage.injected_tokens + usage.generated_tokens == result.sequences.shape[1]


def test_the_counts_add_up_to_the_sequence_when_the_loop_writes_its_own_markers(gen):
    """Under "uncertainty" a <recall> the loop wrote and kept was in no count: prompt + injected +
    generated fell short of the sequence by one per such marker (until 2026-12-07: a reviewer)."""
    config = RecallConfig(recall_policy="uncertainty", uncertainty_threshold=0.1, max_recalls=3)
    result = gen.generate(CHAT, config=config, max_new_tokens=24)
    kept = [r for r in result.recalls if r.trigger == "uncertainty" and r.injected]
    assert kept
    usage = result.usage
    assert usage.injected_tokens == sum(r.length for r in result.recalls) + len(kept)
    assert usage.prompt_tokens + usage.injected_tokens + usage.generated_tokens == result.sequences.shape[1]


def test_recall_policy_auto_and_explicit(gen):
    assert gen.generate(CHAT).recalls
    explicit = RecallConfig(recall_policy="explicit")
    assert gen.generate(CHAT, config=explicit).recalls == []
    marked = [{"role": "user", "content": "What is my dog called?" + RECALL_TOKEN}]
    assert gen.generate(marked, config=explicit).recalls


def test_string_prompts_are_used_as_is(gen):
    assert gen.generate("Hello there").recalls == []
    assert gen.generate("Hello there" + RECALL_TOKEN).recalls


def test_no_memory_answers_and_says_so(gen):
    result = gen.generate(CHAT, memory=None)
    assert result.recalls[0].reason == "no memory" and result.usage.injected_tokens == 0


@pytest.mark.parametrize("sampling", [{"do_sample": False}, {"do_sample": True, "temperature": 0.9, "top_k": 30}])
def test_stream_joins_to_generate_text(gen, sampling):
    torch.manual_seed(7)
    expected = gen.generate(CHAT, max_new_tokens=24, **sampling)
    torch.manual_seed(7)
    stream = gen.stream(CHAT, max_new_tokens=24, **sampling)
    assert "".join(stream) == expected.text
    assert stream.result is not None and torch.equal(stream.result.sequences, expected.sequences)


def test_stream_pieces_come_token_by_token(tiny):
    _, tokenizer = tiny
    text = "My dog is called Biscuit.\nMy cat is called Pepper."
    ids = tokenizer(text, add_special_tokens=False).input_ids
    streamer = TokenTextStreamer(tokenizer, skip_special_tokens=True)
    pieces = []
    streamer.on_finalized_text = lambda piece, stream_end=False: pieces.append(piece)
    for token in ids:
        streamer.put(torch.tensor([token]))
    assert len([p for p in pieces if p]) == len(ids)  # one piece per token, not per word
    assert "".join(pieces) == text


def test_closing_a_stream_stops_generation(gen):
    stream = gen.stream("Hello there", max_new_tokens=200, min_new_tokens=200)
    for _ in stream:
        break  # leaving the loop closes the stream
    assert stream.result is not None and stream.result.usage.generated_tokens < 200


def test_return_dict_in_generate_keeps_the_full_output(gen):
    result = gen.generate(CHAT, return_dict_in_generate=True, output_scores=True, max_new_tokens=5)
    assert result.output is not None and len(result.output.scores) == result.usage.generated_tokens
    assert torch.equal(result.output.sequences, result.sequences) and result.output.recalls == result.recalls


def test_stop_strings_cut_text_in_generate_and_stream(gen):
    full = gen.generate(CHAT, max_new_tokens=24).text
    assert len(full) > 4
    stop = full[2:4]
    cut = gen.generate(CHAT, max_new_tokens=24, stop=[stop])
    assert cut.text == full[: full.index(stop)]
    assert "".join(gen.stream(CHAT, max_new_tokens=24, stop=[stop])) == cut.text
    assert cut.usage.generated_tokens < 24 or cut.finish_reason == "stop"


def test_finish_reason_length(gen):
    gen.model.generation_config.eos_token_id = None
    try:
        result = gen.generate("Hi", max_new_tokens=5)
    finally:
        gen.model.generation_config.eos_token_id = gen.tokenizer.eos_token_id
    assert result.finish_reason == "length" and result.usage.generated_tokens == 5


def test_generate_batch_is_row_by_row(gen):
    prompts = ["Hello there", CHAT]
    batch = gen.generate_batch(prompts, max_new_tokens=6)
    singles = [gen.generate(p, max_new_tokens=6) for p in prompts]
    assert [r.text for r in batch] == [r.text for r in singles]



def test_generate_batch_refuses_one_prompt_or_one_conversation(gen):
    """A string ran one prompt per character ("H", "e", ...), until 2026-12-07 (a reviewer)."""
    for one in ("Hello", [{"role": "user", "content": "Hello"}]):
        with pytest.raises(ValueError, match=r"for one prompt or one conversation .*use generate\(\)"):
            gen.generate_batch(one)

def test_on_recall_callback(gen):
    seen = []
    gen.generate(CHAT, on_recall=seen.append)
    assert len(seen) == 1 and seen[0].memory_id == "m0"


# ---------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    ("prompt", "kwargs", "message"),
    [
        ("", {}, "prompt is empty"),
        ("   ", {}, "prompt is empty"),
        ([], {}, "messages is empty"),
        ("hi", {"top_p": 0.0}, r"top_p must be in \(0, 1\]"),
        ("hi", {"top_p": 1.5}, r"top_p must be in \(0, 1\]"),
        ("hi", {"temperature": -0.1}, "temperature must be >= 0"),
        ("hi", {"max_new_tokens": 0}, "max_new_tokens must be"),
        ("hi", {"num_beams": 2}, "num_beams must be 1"),
        ("hi", {"stop": [""]}, "stop strings must be non-empty"),
    ],
)
def test_bad_input_raises_value_error_naming_it(gen, prompt, kwargs, message):
    with pytest.raises(ValueError, match=message):
        gen.generate(prompt, **kwargs)


def test_bad_ids_positions_masks_and_caches_are_refused_naming_them(gen):
    """They failed deep in torch (IndexError, AttributeError, a size mismatch), or a wrong-length mask or
    positions were taken as all ones and 0..L-1 (until 2026-12-07: a reviewer)."""
    from transformers import DynamicCache

    from recall_core import RecallSession
    from recall_core.decoding.hf_compat import cache_kwarg

    ids = gen.encode("My dog is called Biscuit." + RECALL_TOKEN)
    length = ids.shape[1]
    bad = [
        ({"input_ids": ids[0]}, r"input_ids must be an integer tensor of shape \[1, L\]"),
        ({"input_ids": ids.float()}, "input_ids must be an integer tensor"),
        ({"input_ids": torch.tensor([[5, 10**6]])}, "input_ids must be ids in 0-"),
        ({"position_ids": torch.arange(length - 2)[None]}, r"position_ids must be an integer tensor of input_ids' shape"),
        ({"position_ids": torch.arange(length)}, "position_ids must be an integer tensor"),
        ({"position_ids": torch.arange(length)[None].float()}, "position_ids must be an integer tensor"),
        ({"position_ids": torch.arange(length)[None] - 100}, "position_ids must be >= 0"),
        ({"attention_mask": torch.ones(1, 2, dtype=torch.long)}, "attention_mask must be a tensor of input_ids' shape"),
        ({"attention_mask": torch.full((1, length), 2)}, "attention_mask must hold only 0s and 1s"),
        ({"past_key_values": []}, "past_key_values must be a transformers Cache"),
        ({"past_key_values": ((torch.zeros(1, 2, 3, 16),) * 2,) * 2}, "past_key_values must be a transformers Cache"),
    ]
    for given, message in bad:
        arguments = {"input_ids": ids, **given}
        with pytest.raises(ValueError, match=message):
            gen.generate_ids(arguments.pop("input_ids"), **arguments)
    two_rows = DynamicCache(config=gen.model.config)
    with torch.no_grad():
        gen.model(input_ids=ids[:, :3].repeat(2, 1), use_cache=True, **cache_kwarg(two_rows))
    with pytest.raises(ValueError, match="past_key_values must hold one row"):
        gen.generate_ids(ids, past_key_values=two_rows)
    for owned in ("past_key_values", "position_ids", "attention_mask"):
        with pytest.raises(ValueError, match=f"RecallSession.reply takes no {owned}"):
            RecallSession(gen).reply(CHAT, **{owned: None})
    assert gen.generate_ids(ids, position_ids=torch.arange(length)[None], attention_mask=torch.ones_like(ids)).text
    assert gen.generate_ids(ids, attention_mask=torch.ones(ids.shape)).text  # a float mask, as transformers takes


def test_prompt_longer_than_context_is_refused(gen):
    too_long = "dog " * (gen.context_window + 10)
    with pytest.raises(ValueError, match="context window of 512"):
        gen.generate(too_long)


def test_unknown_generation_kwarg_is_refused(gen):
    with pytest.raises(ValueError, match="not_a_real_argument"):
        gen.generate("hi", not_a_real_argument=3)


def test_bad_recall_config_values():
    with pytest.raises(ValueError, match="inject_mode must be one of 'tokens', 'kv'"):
        RecallConfig(inject_mode="telepathy")
    with pytest.raises(ValueError, match=r"top_p must be in \(0, 1\]"):
        RecallConfig(top_p=0)
    with pytest.raises(ValueError, match="temperature must be >= 0"):
        RecallConfig(temperature=-1)
    with pytest.raises(ValueError, match="template must be a string containing"):
        RecallConfig(template="no slot")


def test_chat_roles_the_template_rejects_are_named(tiny):
    model, tokenizer = tiny
    tokenizer.chat_template = (
        "{% for m in messages %}{% if m['role'] not in ['user', 'assistant', 'system'] %}"
        "{{ raise_exception('unknown role ' + m['role']) }}{% endif %}{{ m['content'] }}{% endfor %}"
    )
    gen = RecallGenerator(model, tokenizer)
    messages = [{"role": "user", "content": "hi"}, {"role": "robot", "content": "beep"}]
    with pytest.raises(ValueError, match=r"message 1 \(role 'robot'\)"):
        gen.generate(messages)
    with pytest.raises(ValueError, match=r"message 0 \('user'\) has no 'content' string"):
        gen.generate([{"role": "user"}])


# ---------------------------------------------------------------------- selection
def _cands(*scores):
    return [MemoryCandidate(id=f"m{i}", score=s, text=f"t{i}") for i, s in enumerate(scores)]


def test_choose_greedy_sampled_top_p_and_min_score():
    assert choose_candidate(_cands(0.9, 0.8), RecallConfig())[0].id == "m0"
    assert choose_candidate([], RecallConfig()) == (None, "no memory")
    assert choose_candidate(_cands(0.1), RecallConfig(min_score=0.5)) == (None, "below min_score")
    gen = torch.Generator().manual_seed(0)
    config = RecallConfig(temperature=0.1)
    picks = [choose_candidate(_cands(0.9, 0.85, 0.3), config, gen)[0].id for _ in range(400)]
    # softmax([.9,.85,.3]/.1): about 62% / 38% / 0.2%
    assert 0.5 < picks.count("m0") / 400 < 0.75 and picks.count("m2") < 8
    narrow = RecallConfig(temperature=0.1, top_p=0.5)
    assert {choose_candidate(_cands(0.9, 0.85, 0.3), narrow, gen)[0].id for _ in range(100)} == {"m0"}
    assert choose_candidate(_cands(0.9, 0.85, 0.3), RecallConfig(top_k=1, temperature=5.0), gen)[0].id == "m0"


# ---------------------------------------------------------------------- text finishing
def test_finish_text_examples():
    assert finish_text("Paris.<recall> Yes STOP more", ["STOP"]) == ("Paris. Yes ", True)
    assert finish_text("no stop here", ["STOP"]) == ("no stop here", False)


def test_a_config_that_is_not_a_recall_config_is_refused_by_name(tiny):
    """A dict was taken and failed deep inside the first call (an AttributeError)."""
    model, tokenizer = tiny
    with pytest.raises(TypeError, match="config must be a recall_core.RecallConfig \\(or None\\), got dict"):
        RecallGenerator(model, tokenizer, config={"recall_policy": "off"})
    generator = RecallGenerator(model, tokenizer)
    with pytest.raises(TypeError, match="config must be a recall_core.RecallConfig"):
        generator.generate("hi", config={"recall_policy": "off"})

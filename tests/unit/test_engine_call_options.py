"""A call's generation options as transformers reads them: a ``GenerationConfig`` over the
generator's defaults, ``max_length``, stop strings from every source (streams too), why decoding
ended (``finish_reason``), and prompts that are not one conversation."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from transformers import GenerationConfig

from recall_core import RecallConfig, RecallGenerator
from recall_core.settings import call_options
from tests.helpers.memories import FixedMemory

FACT = "The user's dog is called Biscuit."
CHAT = [{"role": "user", "content": "What is my dog called?"}]


@pytest.fixture
def gen(tiny):
    model, tokenizer = tiny
    return RecallGenerator(model, tokenizer, memory=FixedMemory(FACT))  # the defaults: 256 new tokens, greedy


# --------------------------------------------------------------------------- the rules
def test_what_a_callers_config_sets_overrules_the_defaults_and_the_rest_stay():
    defaults = {"max_new_tokens": 256, "do_sample": False}
    config = GenerationConfig(max_new_tokens=5)
    assert call_options(defaults, {"generation_config": config}) == {"do_sample": False, "generation_config": config}
    sampled = GenerationConfig(do_sample=True, top_k=0)
    assert call_options(defaults, {"generation_config": sampled}) == {"max_new_tokens": 256, "generation_config": sampled}
    # a keyword still wins over its own config, as in transformers
    assert call_options(defaults, {"generation_config": config, "max_new_tokens": 3})["max_new_tokens"] == 3


def test_max_length_drops_the_default_max_new_tokens_but_not_one_the_call_gives():
    defaults = {"max_new_tokens": 256, "do_sample": False}
    assert call_options(defaults, {"max_length": 40}) == {"do_sample": False, "max_length": 40}
    assert call_options(defaults, {"generation_config": GenerationConfig(max_length=40)}).get("max_new_tokens") is None
    assert call_options(defaults, {"max_length": 40, "max_tokens": 4})["max_new_tokens"] == 4


@pytest.mark.parametrize(("config", "message"), [(GenerationConfig(temperature=-1.0, do_sample=True), "temperature must be"),
                                                 (GenerationConfig(top_p=1.5, do_sample=True), "top_p must be"),
                                                 (GenerationConfig(num_beams=2), "num_beams must be 1")])  # fmt: skip
def test_a_callers_config_is_checked_as_keywords_are(config, message):
    with pytest.raises(ValueError, match=message):
        call_options({}, {"generation_config": config})


def test_a_configs_stop_strings_move_to_recalls_own_and_the_callers_config_is_left_alone():
    config = GenerationConfig(stop_strings=["xyz"], max_new_tokens=4)
    options = call_options({}, {"generation_config": config, "stop_strings": "abc"})
    assert options["stop_strings"] == ["abc", "xyz"] and options["generation_config"].stop_strings is None
    assert config.stop_strings == ["xyz"]
    with pytest.raises(ValueError, match="max_length must be an int >= 1"):
        call_options({}, {"max_length": 0})


def test_numpy_numbers_are_taken_as_the_python_numbers_they_hold():
    """transformers takes ``max_new_tokens=np.int64(5)``; recall refused it until 2026-12-07 (a reviewer)."""
    options = call_options({}, {"max_tokens": np.int64(5), "temperature": np.float32(0.5), "top_k": np.int32(3)})
    assert options == {"max_new_tokens": 5, "temperature": 0.5, "top_k": 3, "do_sample": True}
    assert [type(options[name]) for name in ("max_new_tokens", "temperature", "top_k")] == [int, float, int]
    with pytest.raises(ValueError, match="max_new_tokens must be an int >= 1"):
        call_options({}, {"max_new_tokens": np.int64(0)})
    with pytest.raises(ValueError, match="max_new_tokens must be an int >= 1"):
        call_options({}, {"max_new_tokens": np.float64(5.0)})


# --------------------------------------------------------------------------- the engine
def test_a_generation_config_decides_the_length_and_the_sampling(gen):
    result = gen.generate(CHAT, generation_config=GenerationConfig(max_new_tokens=5))
    assert (result.usage.generated_tokens, result.finish_reason) == (5, "length")  # not the default 256
    texts = set()
    for seed in range(4):
        torch.manual_seed(seed)
        texts.add(gen.generate(CHAT, generation_config=GenerationConfig(do_sample=True, top_k=0, max_new_tokens=8)).text)
    assert len(texts) > 1  # sampled, not the default's greedy decoding


def test_max_length_bounds_the_whole_sequence_and_is_reported_as_length(gen):
    prompt = gen.encode(CHAT).shape[1]
    result = gen.generate(CHAT, max_length=prompt + 5)
    assert result.usage.generated_tokens <= 5 and result.finish_reason == "length"


def test_stop_strings_in_a_config_cut_the_text_as_stop_does(gen):
    full = gen.generate(CHAT, max_new_tokens=12).text
    stop = full[3:6]
    assert stop and full.find(stop) > 0
    cut = gen.generate(CHAT, generation_config=GenerationConfig(max_new_tokens=12, stop_strings=[stop]))
    assert cut.text == gen.generate(CHAT, max_new_tokens=12, stop=stop).text == full[: full.find(stop)]


def test_a_stream_cuts_the_defaults_stop_strings_as_generate_does(tiny):
    model, tokenizer = tiny
    plain = RecallGenerator(model, tokenizer, memory=FixedMemory(FACT), generation_defaults={"max_new_tokens": 12})
    full = plain.generate(CHAT).text
    stop = full[3:6]
    gen = RecallGenerator(model, tokenizer, memory=FixedMemory(FACT),
                          generation_defaults={"max_new_tokens": 12, "stop_strings": [stop]})  # fmt: skip
    stream = gen.stream(CHAT)
    assert "".join(stream) == stream.result.text == gen.generate(CHAT).text == full[: full.find(stop)]
    assert "".join(gen.stream(CHAT, stopping_criteria=None)) == full[: full.find(stop)]  # None: no criteria, as in generate


def test_finish_reason_reads_the_calls_own_eos_and_its_time_bound(gen):
    first = gen.generate(CHAT, max_new_tokens=1).sequences[0, -1].item()
    assert gen.generate(CHAT, max_new_tokens=1).finish_reason == "length"
    assert gen.generate(CHAT, max_new_tokens=1, eos_token_id=first).finish_reason == "stop"
    timed = gen.generate(CHAT, max_new_tokens=200, max_time=1e-4)
    assert timed.usage.generated_tokens < 200 and timed.finish_reason == "time"


# --------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(("prompt", "message"), [([CHAT, CHAT], "list of 2 prompts"), (["Hi", "Yo"], "list of 2 prompts"),
                                                 (torch.tensor([[1, 2]]), "got a Tensor"), (42, "got a int"),
                                                 ([], "messages is empty")])  # fmt: skip
def test_a_prompt_that_is_not_one_conversation_is_a_value_error(gen, prompt, message):
    with pytest.raises(ValueError, match=message):
        gen.generate(prompt)


def test_misspelled_defaults_and_a_bool_query_window_fail_at_once(tiny):
    model, tokenizer = tiny
    with pytest.raises(ValueError, match="'max_new_token'"):
        RecallGenerator(model, tokenizer, generation_defaults={"max_new_token": 5})
    with pytest.raises(ValueError, match="query_window must be None or an int >= 1"):
        RecallConfig(query_window=True)


def test_a_config_that_asks_for_sampling_samples_on_a_model_that_samples_by_default(tiny):
    """A field of the caller's config counts where it differs from a fresh ``GenerationConfig``
    (docs/configuration.md), also where the model's own config says the same: from 2026-12-06 to
    2026-12-07 a field equal to the model's did not count, and ``GenerationConfig(do_sample=True)``
    (or the model's own config passed back) was greedy on a model that samples by default, as
    Qwen2.5 and Llama 3 ship (a reviewer)."""
    model, tokenizer = tiny
    was = (model.generation_config.do_sample, model.generation_config.top_k)
    model.generation_config.do_sample, model.generation_config.top_k = True, 5  # a model that samples by default
    try:
        gen = RecallGenerator(model, tokenizer, memory=FixedMemory(FACT),
                              generation_defaults={"max_new_tokens": 6, "do_sample": False})  # greedy, as by default
        for config in (GenerationConfig(do_sample=True, top_k=5), copy.deepcopy(model.generation_config)):
            replies = set()
            for seed in range(4):
                torch.manual_seed(seed)
                got = gen.generate(CHAT, generation_config=config)
                torch.manual_seed(seed)
                assert got.text == gen.generate(CHAT, do_sample=True, top_k=5).text and got.usage.generated_tokens <= 6
                replies.add(got.text)
            assert len(replies) > 1, replies  # sampled, not greedy
    finally:
        model.generation_config.do_sample, model.generation_config.top_k = was


def test_a_callers_config_reaches_generate_with_no_generation_keyword_beside_it(gen, monkeypatch):
    """transformers 5 deprecates a ``generation_config`` passed beside generation keywords, and every
    call that gave one warned about keywords the caller never passed (recall's own ``use_cache``,
    ``return_dict_in_generate`` and the defaults' ``do_sample``; a reviewer, 2026-12-07): they go
    into a copy of the config, and the caller's config is left as it was."""
    seen: list[dict] = []
    generate = gen.model.generate

    def spy(*args, **kwargs):
        seen.append(kwargs)
        return generate(*args, **kwargs)

    monkeypatch.setattr(gen.model, "generate", spy)
    config = GenerationConfig(max_new_tokens=5)
    result = gen.generate(CHAT, generation_config=config, top_k=3)
    assert result.usage.generated_tokens <= 5 and result.finish_reason == "length"
    (kwargs,) = seen
    assert not {name for name in kwargs if hasattr(GenerationConfig(), name)}, sorted(kwargs)
    sent = kwargs["generation_config"]
    assert (sent.max_new_tokens, sent.top_k, sent.do_sample, sent.use_cache, sent.return_dict_in_generate) == \
        (5, 3, False, True, True)  # fmt: skip
    assert config.top_k is None and config.return_dict_in_generate is not True  # the caller's own is untouched

"""Generation settings read in one place (recall_core.settings), by the engine and the adapters alike."""

from __future__ import annotations

import asyncio
import threading

import pytest
import torch

from recall_core import RecallGenerator
from recall_core.settings import check_option_names, generation_options, option_value, stop_strings
from tests.helpers.memories import FixedMemory

FACT = "The user's dog is called Biscuit."


@pytest.fixture
def gen(tiny):
    model, tokenizer = tiny
    return RecallGenerator(model, tokenizer, memory=FixedMemory(FACT), generation_defaults={"max_new_tokens": 8})


# --------------------------------------------------------------------------- the rules
def test_aliases_become_generate_options():
    assert generation_options({"max_tokens": 5, "timeout": 2}) == {"max_new_tokens": 5, "max_time": 2.0}
    assert generation_options({"max_tokens": 5, "max_new_tokens": 5}) == {"max_new_tokens": 5}
    with pytest.raises(ValueError, match="max_new_tokens or max_tokens, not both"):
        generation_options({"max_new_tokens": 5, "max_tokens": 6})
    assert option_value({"max_tokens": 3}, "max_new_tokens") == 3
    assert option_value({}, "max_new_tokens", 7) == 7


def test_temperature_zero_is_greedy_and_above_zero_samples():
    assert generation_options({"temperature": 0}) == {"do_sample": False}
    assert generation_options({"temperature": 0, "do_sample": True}) == {"do_sample": False}
    assert generation_options({"temperature": 0.7}) == {"temperature": 0.7, "do_sample": True}
    assert generation_options({"temperature": 0.7, "do_sample": False}) == {"temperature": 0.7, "do_sample": False}
    assert generation_options({"temperature": None}) == {"temperature": None}


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"temperature": -0.1}, "temperature must be >= 0"),
        ({"temperature": "hot"}, "temperature must be >= 0"),
        ({"temperature": 1e-320}, r"temperature must be >= 0 \(0: greedy; otherwise finite and at least 1e-4\)"),
        ({"temperature": float("inf")}, "temperature must be >= 0 .*finite"),
        ({"top_p": 0.0}, r"top_p must be in \(0, 1\]"),
        ({"min_p": 1.5}, r"min_p must be in \[0, 1\]"),
        ({"top_k": 2.5}, "top_k must be an int >= 0"),
        ({"top_k": -1}, "top_k must be an int >= 0"),
        ({"repetition_penalty": 0}, "repetition_penalty must be > 0"),
        ({"max_new_tokens": 0}, "max_new_tokens must be an int >= 1"),
        ({"max_tokens": True}, "max_tokens must be an int >= 1"),  # named as written
        ({"timeout": 0}, "timeout must be a number of seconds > 0"),
        ({"max_time": -1}, "max_time must be a number of seconds > 0"),
        ({"num_beams": 3}, "num_beams must be 1"),
        ({"num_return_sequences": 2}, "num_return_sequences must be 1"),
    ],
)
def test_bad_values_name_the_setting_and_its_range(given, message):
    with pytest.raises(ValueError, match=message):
        generation_options(given)


def test_stop_strings_from_stop_and_stop_strings():
    assert stop_strings(["a"], "b") == ["a", "b"]
    assert stop_strings("x", None) == ["x"]
    assert stop_strings(None, None) == []
    with pytest.raises(ValueError, match="stop strings must be non-empty strings"):
        stop_strings(["ok", ""])
    with pytest.raises(ValueError, match="stop strings must be non-empty strings"):
        stop_strings([3])


def test_unknown_names_are_refused_with_what_is_accepted():
    check_option_names("X", ["max_tokens", "timeout", "top_p", "user_id"], ["user_id"])
    with pytest.raises(TypeError, match="X got unexpected keyword argument.*'tempreature'"):
        check_option_names("X", ["tempreature"], ["user_id"])


# --------------------------------------------------------------------------- the engine reads them too
def test_engine_takes_the_aliases(gen):
    assert gen.generate("Hello there", max_tokens=3).usage.generated_tokens == 3
    timed = gen.generate("Hello there", timeout=30, max_tokens=2)
    assert timed.usage.generated_tokens == 2


def test_engine_temperature_alone_samples_and_zero_is_greedy(gen):
    greedy = gen.generate("Hello there", max_new_tokens=12)
    assert gen.generate("Hello there", max_new_tokens=12, temperature=0).sequences.equal(greedy.sequences)
    torch.manual_seed(3)
    sampled = gen.generate("Hello there", max_new_tokens=12, temperature=5.0)
    torch.manual_seed(3)
    explicit = gen.generate("Hello there", max_new_tokens=12, temperature=5.0, do_sample=True)
    assert torch.equal(sampled.sequences, explicit.sequences)
    assert not torch.equal(sampled.sequences, greedy.sequences)


def test_bad_defaults_fail_at_init(tiny):
    model, tokenizer = tiny
    with pytest.raises(ValueError, match="top_p must be"):
        RecallGenerator(model, tokenizer, generation_defaults={"top_p": 2})


def test_a_stream_with_bad_stop_strings_fails_before_it_starts(gen):
    with pytest.raises(ValueError, match="stop strings must be non-empty"):
        gen.stream("Hello", stop=[""])
    with pytest.raises(TypeError, match="makes its own streamer"):
        gen.stream("Hello", streamer=object())


# --------------------------------------------------------------------------- async streams
def test_an_async_stream_runs_in_one_thread_and_joins_to_generate(gen, monkeypatch):
    expected = gen.generate("Hello there", max_new_tokens=12)
    started: list[str] = []
    start = threading.Thread.start

    def counting_start(self):
        started.append(self.name)
        return start(self)

    monkeypatch.setattr(threading.Thread, "start", counting_start)

    async def consume():
        stream = gen.astream("Hello there", max_new_tokens=12)
        return [piece async for piece in stream], stream.result

    pieces, result = asyncio.run(consume())
    assert started == ["recall-stream"]
    assert "".join(pieces) == expected.text and torch.equal(result.sequences, expected.sequences)


def test_leaving_an_async_stream_early_stops_the_generation(gen):
    async def first_piece():
        stream = gen.astream("Hello there", max_new_tokens=200, min_new_tokens=200)
        async for _ in stream:
            break
        for _ in range(500):  # the worker stops at its next token
            if stream.result is not None:
                break
            await asyncio.sleep(0.01)
        return stream.result

    result = asyncio.run(first_piece())
    assert result is not None and result.usage.generated_tokens < 200


def test_an_async_stream_raises_the_workers_error(gen):
    class Broken:
        def search(self, query, k):
            raise KeyError("boom")

    async def consume():
        return [p async for p in gen.astream("Hi<recall>", memory=Broken(), config=gen.config.replace(on_memory_error="raise"))]

    with pytest.raises(KeyError, match="boom"):
        asyncio.run(consume())


def test_a_greedy_call_drops_the_defaults_sampling_options_and_transformers_says_nothing(tiny, caplog):
    """``temperature=0`` over defaults that sample kept the defaults' ``top_p``, and transformers warned
    that options the caller never gave were ignored (until 2026-12-07: a reviewer)."""
    import logging

    from recall_core.settings import call_options

    defaults = {"max_new_tokens": 4, "temperature": 0.7, "top_p": 0.9, "top_k": 20}
    assert call_options(defaults, {"temperature": 0}) == {"max_new_tokens": 4, "do_sample": False}
    assert call_options(defaults, {}) == {"max_new_tokens": 4, "temperature": 0.7, "top_p": 0.9, "top_k": 20,
                                          "do_sample": True}  # fmt: skip
    model, tokenizer = tiny
    generator = RecallGenerator(model, tokenizer, generation_defaults=defaults)
    with caplog.at_level(logging.WARNING, logger="transformers"):
        generator.generate("Hello", temperature=0)
    assert not [r for r in caplog.records if "not valid" in r.getMessage()], caplog.text


def test_a_greedy_config_drops_the_defaults_sampling_options_too():
    """``generation_config=GenerationConfig(do_sample=False)`` kept them, and transformers warned (a review)."""
    from transformers import GenerationConfig

    from recall_core.settings import call_options

    defaults = {"max_new_tokens": 4, "temperature": 0.7, "top_p": 0.9, "top_h": 0.5}
    options = call_options(defaults, {"generation_config": GenerationConfig(do_sample=False, max_new_tokens=4)})
    assert set(options) == {"generation_config"}
    assert "top_h" not in call_options(defaults, {"temperature": 0})

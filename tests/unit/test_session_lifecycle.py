"""RecallSession over its lifetime: a cache past its bound after a reply, sliding-window models,
messages written to memory once across fresh starts, failed calls and pool drops, append."""

from __future__ import annotations

import warnings
from collections import Counter

import pytest
import torch
from transformers import (
    Gemma3ForCausalLM,
    Gemma3TextConfig,
    LogitsProcessor,
    LogitsProcessorList,
    MistralConfig,
    MistralForCausalLM,
)

from recall_core import RecallConfig, RecallGenerator, RecallSession
from recall_core.session.pool import SessionPool
from recall_core.session.units import Message
from recall_core.tokens import add_recall_tokens
from tests.helpers.chats import SYSTEM, USER_TURNS
from tests.helpers.logits import ForceAt
from tests.helpers.memories import FixedMemory, ListMemory
from tests.helpers.tiny import tiny_model, tiny_tokenizer

LONG_FACT = " ".join(["My dog is called Biscuit and my cat is called Pepper."] * 12)


def _gen(kind="llama", **defaults) -> RecallGenerator:
    model, tokenizer = tiny_model(kind)
    return RecallGenerator(model, tokenizer, generation_defaults={"max_new_tokens": 10, **defaults})


def _recorder() -> tuple[list[dict], object]:
    written: list[dict] = []
    return written, lambda turns: written.extend(turns) or [f"m{len(written)}"]


def _chat(session: RecallSession, turns: int, start: list[dict] | None = None, **kwargs) -> list[dict]:
    """``turns`` calls the way a chat backend makes them; the conversation after them."""
    messages = list(start or [SYSTEM])
    for i in range(turns):
        messages.append({"role": "user", "content": f"{USER_TURNS[i % len(USER_TURNS)]} (turn {i})"})
        result = session.reply(list(messages), **kwargs)
        messages.append({"role": "assistant", "content": result.text})
    return messages


# ---------------------------------------------------------------------- a memory past the bound
def test_a_reply_whose_memory_overflows_the_bound_is_returned_and_the_next_turn_evicts_it():
    """The bound is checked before a reply; the memory injected during it is not reserved. An
    exchange that alone ends past the bound used to raise after the reply was committed (the
    text lost, every later call raising the same)."""
    config = RecallConfig(recall_position="assistant_start", max_recalls=1, ask_on_statements=False, max_memory_tokens=256)
    model, tokenizer = tiny_model("llama")
    gen = RecallGenerator(model, tokenizer, config=config, generation_defaults={"max_new_tokens": 10})
    written, writer = _recorder()
    session = RecallSession(gen, max_cache_tokens=120, memory=FixedMemory(LONG_FACT), writer=writer)
    messages = [SYSTEM, {"role": "user", "content": "Where do I live?"}]
    with pytest.warns(RuntimeWarning, match=r"took the session's cache to \d+ positions, past max_cache_tokens \(120\)"):
        result = session.reply(messages)
    assert result.recalls and result.recalls[0].injected and result.session.cache_tokens == session.cache_tokens
    assert session.turns == 1 and session.cache_tokens > 120  # past the bound until the next turn
    messages += [{"role": "assistant", "content": result.text}, {"role": "user", "content": "Thanks."}]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # said once per session
        after = session.reply(messages, memory=None)
    assert after.session.evicted_messages == 2 and session.cache_tokens <= 120
    assert [m["content"] for m in written] == ["Where do I live?", result.text]


# ---------------------------------------------------------------------- sliding-window models
def _sliding(kind: str, window: int = 16) -> RecallGenerator:
    """A tiny model whose DynamicCache has sliding-window layers (all of them, or Gemma 3's mix)."""
    tokenizer = tiny_tokenizer()
    torch.manual_seed(0)
    shared = dict(vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512, sliding_window=window)  # fmt: skip
    if kind == "mistral":
        model = MistralForCausalLM(MistralConfig(**shared))
    else:
        model = Gemma3ForCausalLM(Gemma3TextConfig(**shared, head_dim=16,
                                                   layer_types=["sliding_attention", "full_attention"]))  # fmt: skip
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.eval()
    add_recall_tokens(model, tokenizer)
    return RecallGenerator(model, tokenizer, generation_defaults={"max_new_tokens": 8})


@pytest.mark.parametrize("kind", ["mistral", "gemma3"])
def test_a_sliding_window_model_regenerates_and_edits_past_its_window(kind):
    """Regenerate, edit and a reply that does not re-tokenize as generated cut the cache back; on
    sliding-window layers that raised, and every later call raised the same."""
    gen = _sliding(kind)
    session = RecallSession(gen)
    messages = [SYSTEM]
    for turn in range(3):
        messages.append({"role": "user", "content": USER_TURNS[turn]})
        expected = gen.generate(messages)
        for _ in range(2):  # the turn, then the same turn again (regenerate)
            result = session.reply(messages)
            assert torch.equal(result.sequences, expected.sequences) and not result.session.fresh_prefill
        messages.append({"role": "assistant", "content": result.text})
    assert session.cache_tokens > 16  # past the window
    edited = messages[:-2] + [{"role": "user", "content": USER_TURNS[4]}]
    result = session.reply(edited)
    assert torch.equal(result.sequences, gen.generate(edited).sequences) and result.session.reused_tokens > 16
    ids = gen.tokenizer("Noted.", add_special_tokens=False).input_ids + [gen.tokenizer.eos_token_id]
    said = session.reply(edited + [{"role": "assistant", "content": result.text}, {"role": "user", "content": "Hi"}],
                         logits_processor=LogitsProcessorList([ForceAt(0, ids)]))  # fmt: skip
    changed = edited + [{"role": "assistant", "content": result.text}, {"role": "user", "content": "Hi"},
                        {"role": "assistant", "content": "Noted"}, {"role": "user", "content": "Bye"}]  # fmt: skip
    assert said.text == "Noted."
    assert torch.equal(session.reply(changed).sequences, gen.generate(changed).sequences)


@pytest.mark.parametrize("policy", ["ask", "model"])
def test_a_sliding_window_model_decides_on_its_cache_under_ask_and_model(policy):
    gen = _sliding("mistral")
    session = RecallSession(gen, memory=FixedMemory("The user's dog is called Biscuit."),
                            recall_config=RecallConfig(recall_policy=policy))  # fmt: skip
    messages = [SYSTEM]
    for turn in range(3):
        messages.append({"role": "user", "content": USER_TURNS[turn]})
        result = session.reply(messages)
        assert turn == 0 or result.session.reused_tokens > 16
        messages.append({"role": "assistant", "content": result.text})


def test_a_sliding_window_layer_that_forgot_positions_starts_afresh_and_says_why():
    """A layer that keeps only its window (as transformers' own cache does) cannot be cut back:
    the call starts afresh, with that reason, instead of raising."""
    gen = _sliding("mistral")
    session = RecallSession(gen)
    messages = _chat(session, 3)
    for layer in session._cache.layers:
        layer.crop(0)  # transformers' way back to the window: the older positions are gone
    result = session.reply(messages[:-1])  # a regenerate
    assert result.session.fresh_prefill
    assert "sliding-window layers can no longer be cut back to position" in result.session.reason
    assert torch.equal(result.sequences, gen.generate(messages[:-1]).sequences)


def test_a_bounded_sliding_window_session_evicts():
    gen = _sliding("mistral")
    written, writer = _recorder()
    session = RecallSession(gen, max_cache_tokens=150, writer=writer)
    _chat(session, 8)
    assert session.evicted_messages > 0 and session.cache_tokens <= 150 and len(written) == session.evicted_messages


# ---------------------------------------------------------------------- each message written once
def _twice(written: list[dict]) -> list[tuple[str, str]]:
    counts = Counter((m["role"], m["content"]) for m in written)
    return [message for message, count in counts.items() if count > 1]


def test_a_fresh_start_after_an_edit_writes_nothing_again():
    gen = _gen("llama")
    written, writer = _recorder()
    session = RecallSession(gen, max_cache_tokens=150, writer=writer)
    messages = _chat(session, 10)
    before = len(written)
    assert session.evicted_messages == before > 0
    edited = [{"role": "system", "content": "You are very kind."}, *messages[1:], {"role": "user", "content": "Hi again"}]
    result = session.reply(edited)
    assert result.session.fresh_prefill and result.session.evicted_messages > 0
    assert len(written) == before and result.session.memory_written == () and not _twice(written)


def test_a_pool_hands_what_a_dropped_session_wrote_to_the_keys_next_session():
    gen = _gen("llama")
    written, writer = _recorder()
    pool = SessionPool(lambda key: RecallSession(gen, max_cache_tokens=150, writer=writer), max_sessions=1)
    messages = [SYSTEM]
    for i in range(10):
        messages.append({"role": "user", "content": f"{USER_TURNS[i % len(USER_TURNS)]} (turn {i})"})
        result = pool.run("ada", lambda s: s.reply(list(messages)))
        messages.append({"role": "assistant", "content": result.text})
    before = len(written)
    assert before > 0
    pool.run("bob", lambda s: s.reply([SYSTEM, {"role": "user", "content": "Hi"}]))  # drops ada's session
    assert pool.keys() == ["bob"]
    messages.append({"role": "user", "content": "And now?"})
    result = pool.run("ada", lambda s: s.reply(list(messages)))
    assert result.session.evicted_messages > 0 and len(written) == before and not _twice(written)


def test_a_failed_first_call_retried_writes_nothing_again_and_says_why_truly():
    class Boom(LogitsProcessor):
        def __call__(self, input_ids, scores):
            raise RuntimeError("CUDA out of memory (simulated)")

    gen = _gen("llama")
    written, writer = _recorder()
    session = RecallSession(gen, max_cache_tokens=200, writer=writer)
    history = [SYSTEM]
    for i in range(40):
        history += [{"role": "user", "content": f"Note {i}."}, {"role": "assistant", "content": f"Noted {i}."}]
    history.append({"role": "user", "content": USER_TURNS[5]})
    with pytest.raises(RuntimeError, match="simulated"):
        session.reply(history, logits_processor=LogitsProcessorList([Boom()]))
    before = len(written)
    assert before > 60 and session.cache_tokens == 0 and session.evicted_messages == 0  # as before the call
    result = session.reply(history)
    assert len(written) == before and not _twice(written)
    assert not result.session.fresh_prefill and "did not fit in the cache" in result.session.reason
    assert result.session.evicted_messages == before and torch.equal(result.sequences, session.reply(history).sequences)


def test_a_message_repeated_later_in_the_conversation_is_written_again_but_not_after_a_reset():
    """The written log tells messages apart by their place too: "Noted." twice is two memories. A
    reset starts a new conversation, and a new log (a pool keeps the old one for the key)."""
    gen = _gen("llama")
    written, writer = _recorder()
    session = RecallSession(gen, max_cache_tokens=150, writer=writer)
    session.append([SYSTEM])
    for _ in range(12):
        session.append({"role": "user", "content": "I fed the cat."})
        session.append({"role": "assistant", "content": "Noted."})
    assert session.evicted_messages == len(written) >= 6 and len(session.written_log) == len(written)
    session.reset()
    assert len(session.written_log) == 0


# ---------------------------------------------------------------------- append, pools, bad input
def test_append_with_a_list_is_the_whole_conversation_and_a_list_sharing_nothing_warns():
    gen = _gen("llama", max_new_tokens=8)
    session = RecallSession(gen)
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi!"}]
    result = session.reply(messages)
    session.reply("My dog is Biscuit.")
    held = len(session.messages)
    added = session.append({"role": "user", "content": "Here is a document: ..."})  # docs/sessions.md's example
    assert added.session.reused_tokens > 0 and len(session.messages) == held + 1 and not added.session.fresh_prefill
    with pytest.warns(RuntimeWarning, match=r"shares no message with the session's conversation of \d+ message\(s\)"):
        session.append([{"role": "user", "content": "Another document."}])
    assert result.text is not None and len(session.messages) == 2  # replaced: the list was the conversation
    # Begun without a system message of the caller's: the one the renderer adds is not shared by the
    # caller's list (until 2026-12-07 it counted as shared, and the conversation went without a word)
    session = RecallSession(gen)
    session.reply("Hi!")
    assert session.messages[0]["role"] == "system"
    with pytest.warns(RuntimeWarning, match="shares no message"):
        session.append([{"role": "user", "content": "Another document."}])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # a list that goes on from the conversation: no warning
        session.append([*session.messages[1:], {"role": "user", "content": "And one more."}])


def test_a_pool_whose_max_bytes_is_below_one_cache_warns_once_naming_both_sizes():
    gen = _gen("llama", max_new_tokens=6)
    pool = SessionPool(lambda key: RecallSession(gen), max_sessions=16, max_bytes=20_000)
    messages = [SYSTEM]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for turn in range(3):
            messages.append({"role": "user", "content": USER_TURNS[turn]})
            result = pool.run("ada", lambda s: s.reply(list(messages)))
            messages.append({"role": "assistant", "content": result.text})
    said = [str(w.message) for w in caught if "max_bytes" in str(w.message)]
    assert len(said) == 1 and said[0].startswith("SessionPool max_bytes (20000) is smaller than one session's cache (")


@pytest.mark.parametrize(
    ("arguments", "message"),
    [({"max_sessions": "3"}, "max_sessions must be an int >= 1, got '3'"),
     ({"max_sessions": 2.5}, "max_sessions must be an int >= 1, got 2.5"),
     ({"max_sessions": True}, "max_sessions must be an int >= 1, got True"),
     ({"max_sessions": 0}, "max_sessions must be an int >= 1, got 0"),
     ({"max_bytes": 0.5}, "max_bytes must be an int >= 1, got 0.5"),
     ({"max_bytes": "1GB"}, "max_bytes must be an int >= 1, got '1GB'")],
)  # fmt: skip
def test_a_pools_bounds_are_checked_with_the_fields_range(arguments, message):
    with pytest.raises(ValueError, match=message):
        SessionPool(lambda key: None, **arguments)


@pytest.mark.parametrize("roles", [["User"], "nonsense", ("user", "bot")])
def test_mark_written_refuses_unknown_roles_naming_the_allowed_ones(roles):
    gen = _gen("llama", max_new_tokens=4)
    session = RecallSession(gen)
    session.reply([SYSTEM, {"role": "user", "content": "Hi"}])
    with pytest.raises(ValueError, match="mark_written's roles must be .* from 'user', 'assistant', 'system', got"):
        session.mark_written(roles)
    session.mark_written(())  # nothing written (an adapter whose write stopped early)
    session.mark_written("user")
    assert Message({"role": "user", "content": "Hi"}, index=1).key in session.written_log


def test_kv_injection_on_a_sliding_window_model_falls_back_to_tokens():
    """Review of the first fix: once the cache edits took sliding-window layers, ``inject_mode="kv"``
    took them too and crashed (a mask sized for every position against a layer that reads its
    window). kv injection is for full-attention layers; these fall back to tokens, as before."""
    generator = _sliding("mistral")
    config = RecallConfig(recall_position="assistant_start", max_recalls=1, ask_on_statements=False, inject_mode="kv")
    messages = [SYSTEM, {"role": "user", "content": "Where do I live? What is my name?"}]
    memory = FixedMemory("My dog is called Biscuit and my cat is called Pepper. I live in Lisbon.")
    result = generator.generate(messages, memory=memory, config=config, max_new_tokens=8)
    assert result.recalls[0].inject_mode == "tokens" and "full-attention layers only" in result.recalls[0].kv_fallback
    reply = RecallSession(generator, memory=memory, recall_config=config).reply(messages, max_new_tokens=8)
    assert reply.recalls[0].inject_mode == "tokens"


def test_a_dropped_marker_keeps_a_sliding_window_layers_recorded_past():
    """Review of the first fix: a marker that finds nothing was dropped with transformers' crop,
    which cut a session's recorded sliding-window past back to the window, and the next turn
    started afresh. recall's own crop keeps it."""
    generator = _sliding("mistral")
    config = RecallConfig(recall_policy="uncertainty", uncertainty_threshold=0.01, max_recalls=2, min_score=0.99)
    session = RecallSession(generator, memory=ListMemory({"a": "zebra quantum"}), recall_config=config)
    messages = [SYSTEM]
    for turn in range(3):
        messages.append({"role": "user", "content": USER_TURNS[turn]})
        reply = session.reply(messages)
        assert any(r.memory_id is None for r in reply.recalls) and not reply.session.fresh_prefill, reply.session.reason
        assert all(layer.keys.shape[-2] == layer.cumulative_length for layer in session._cache.layers)
        messages.append({"role": "assistant", "content": reply.text})


def test_a_rotary_embedding_per_layer_type_is_named_as_the_reason_eviction_is_refused():
    """Gemma 3 keeps one RoPE buffer per layer type: it was refused with "has no rotary position
    embedding (RoPE)", which is untrue and sent users to the wrong fix."""
    from recall_core.kv.cache import NoRotaryEmbeddingError, Rotary

    with pytest.raises(NoRotaryEmbeddingError, match=r"one rotary embedding per layer type \(full_attention, "
                                                     r"sliding_attention\)"):  # fmt: skip
        Rotary.of(_sliding("gemma3").model)


def test_an_eviction_write_interrupted_by_ctrl_c_is_written_at_the_next_eviction():
    """A ``KeyboardInterrupt`` while the memory encodes an evicted message: the message and the ones
    after it wait, as after any failed write (until 2026-12-07 they were counted evicted, cut from
    the cache and never written; a reviewer)."""
    model, tokenizer = tiny_model("llama")
    gen = RecallGenerator(model, tokenizer, generation_defaults={"max_new_tokens": 6})
    written: list[str] = []
    interrupt = {"armed": False}

    def writer(messages):
        if interrupt["armed"]:
            interrupt["armed"] = False
            raise KeyboardInterrupt
        written.extend(m["content"] for m in messages)
        return ["id"]

    session = RecallSession(gen, max_cache_tokens=80, writer=writer, write_roles=("user",))
    messages = [{"role": "system", "content": "You are kind."}]
    said = [f"My cat is called Pepper {i}." for i in range(7)]
    interrupted = 0
    for turn, text in enumerate(said):
        messages.append({"role": "user", "content": text})
        interrupt["armed"] = session.evicted_messages == 0 and turn >= 2
        try:
            result = session.reply(messages)
        except KeyboardInterrupt:
            interrupted += 1
            result = session.reply(messages)  # the user asks again
        messages.append({"role": "assistant", "content": result.text})
    held = {m["content"] for m in session.messages}
    evicted = [text for text in said if text not in held]
    assert interrupted == 1 and evicted and written == evicted


def test_a_bounded_session_takes_a_max_length_given_in_a_config():
    """docs/configuration.md: a max_length the call sets, keyword or config, drops the default
    max_new_tokens; a bounded session refused the config's until 2026-12-07 (a second review)."""
    from transformers import GenerationConfig

    model, tokenizer = tiny_model("llama")
    gen = RecallGenerator(model, tokenizer, generation_defaults={"do_sample": False})
    session = RecallSession(gen, max_cache_tokens=400)
    result = session.reply([{"role": "user", "content": "Hello there"}], generation_config=GenerationConfig(max_length=60))
    assert result.finish_reason == "length" and result.usage.prompt_tokens + result.usage.generated_tokens <= 60


def test_a_growing_cache_implementation_asked_in_a_session_is_taken():
    """``cache_implementation="dynamic"`` (which recall accepts) beside the cache a session passes made
    transformers refuse the pair, "Passing both", by keyword and in a config (a second review, 2026-12-07)."""
    from transformers import GenerationConfig

    model, tokenizer = tiny_model("llama")
    gen = RecallGenerator(model, tokenizer, generation_defaults={"max_new_tokens": 4})
    chat = [{"role": "user", "content": "Where do I live?"}]
    expected = gen.generate(chat)
    assert RecallSession(gen).reply(chat, cache_implementation="dynamic").text == expected.text
    config = GenerationConfig(cache_implementation="dynamic", max_new_tokens=4)
    assert RecallSession(gen).reply(chat, generation_config=config).text == expected.text
    assert config.cache_implementation == "dynamic"  # the caller's own config is left as it was

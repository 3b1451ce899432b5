"""RecallSession: parity with generate(), what is reused, fallbacks, bounded caches, threads and faults."""

from __future__ import annotations

import inspect
import threading
import time
import warnings

import pytest
import torch
from transformers import DynamicCache, LogitsProcessorList

from recall_core import RecallConfig, RecallGenerator, RecallSession, SessionConfig
from recall_core.decoding.hf_compat import cache_kwarg
from recall_core.decoding.notes import memory_token_ids
from recall_core.kv.cache import NoRotaryEmbeddingError
from recall_core.prompt import decorate
from tests.helpers.chats import SYSTEM, USER_TURNS
from tests.helpers.logits import ForceAt
from tests.helpers.memories import FixedMemory, ListMemory
from tests.helpers.tiny import tiny_model

FACT = "The user's dog is called Biscuit."


def _saying(tokenizer, text: str) -> LogitsProcessorList:
    ids = tokenizer(text, add_special_tokens=False).input_ids + [tokenizer.eos_token_id]
    return LogitsProcessorList([ForceAt(0, ids)])


def _gen(kind="llama", **defaults) -> RecallGenerator:
    model, tokenizer = tiny_model(kind)
    return RecallGenerator(model, tokenizer, generation_defaults={"max_new_tokens": 10, **defaults})


def _chat(session: RecallSession, turns: int, **kwargs):
    """Run ``turns`` turns the way a chat backend does (the whole conversation each call); yield each result."""
    messages = [SYSTEM]
    for i in range(turns):
        messages.append({"role": "user", "content": USER_TURNS[i % len(USER_TURNS)]})
        result = session.reply(list(messages), **kwargs)
        yield list(messages), result
        messages.append({"role": "assistant", "content": result.text})


# ---------------------------------------------------------------------- parity
@pytest.mark.parametrize("kind", ["llama", "qwen2", "gpt2"])
@pytest.mark.parametrize(
    "sampling",
    [{"do_sample": False}, {"do_sample": True, "temperature": 0.9, "top_k": 30}, {"repetition_penalty": 1.3}],
    ids=["greedy", "sampling", "repetition-penalty"],
)
def test_every_reply_is_token_identical_to_a_fresh_generate(kind, sampling):
    gen = _gen(kind)
    session = RecallSession(gen)
    messages = [SYSTEM]
    for turn in range(5):
        messages.append({"role": "user", "content": USER_TURNS[turn]})
        torch.manual_seed(turn)
        expected = gen.generate(messages, **sampling)
        torch.manual_seed(turn)
        got = session.reply(messages, **sampling)
        assert torch.equal(got.sequences, expected.sequences)
        assert got.text == expected.text and got.usage.prompt_tokens == expected.usage.prompt_tokens
        assert (got.session.reused_tokens > 0) == (turn > 0) and got.session.reason is None
        torch.manual_seed(turn)
        again = session.reply(messages, **sampling)  # the same turn again (a regenerate): the prompt is reused
        assert torch.equal(again.sequences, expected.sequences) and again.session.reused_tokens > 0
        messages.append({"role": "assistant", "content": got.text})


@pytest.mark.parametrize("kind", ["llama", "gpt2"])
def test_replies_that_end_with_end_of_sequence_stay_in_the_conversation(kind):
    """A reply that ended with end-of-sequence (how a real model ends) is whole in the cache: the
    call that confirmed it dropped its message until 2026-12-07, and from the third turn on the
    session answered another conversation than ``generate()`` (a reviewer)."""
    gen = _gen(kind)
    session = RecallSession(gen)
    messages = [SYSTEM]
    for turn, reply in enumerate(["Noted.", "Biscuit.", "Lisbon.", "Green."]):
        messages.append({"role": "user", "content": USER_TURNS[turn]})
        expected = gen.generate(messages, logits_processor=_saying(gen.tokenizer, reply))
        got = session.reply(messages, logits_processor=_saying(gen.tokenizer, reply))
        assert got.finish_reason == "stop" and got.session.reason is None
        assert torch.equal(got.sequences, expected.sequences)
        messages.append({"role": "assistant", "content": got.text})
        assert [m["role"] for m in session.messages] == [m["role"] for m in messages]


def test_evicted_replies_that_ended_with_end_of_sequence_are_written():
    gen = _gen()
    written: list[tuple[str, str]] = []

    def writer(messages):
        written.extend((m["role"], m["content"]) for m in messages)
        return [str(len(written))]

    session = RecallSession(gen, max_cache_tokens=90, writer=writer)
    messages = [SYSTEM]
    replies = ["Noted.", "Biscuit.", "Pepper.", "Lisbon.", "Green.", "Yes."]
    for turn, reply in enumerate(replies):
        messages.append({"role": "user", "content": f"My cat is called Pepper {turn}."})
        result = session.reply(messages, logits_processor=_saying(gen.tokenizer, reply))
        messages.append({"role": "assistant", "content": result.text})
    assert session.evicted_messages >= 8
    said = [content for role, content in written if role == "assistant"]
    assert said == replies[: len(said)] and len(said) == session.evicted_messages // 2


def test_the_chat_flow_prefills_only_the_new_message(tiny):
    model, tokenizer = tiny
    gen = RecallGenerator(model, tokenizer, generation_defaults={"max_new_tokens": 20})
    session = RecallSession(gen)
    say = "Noted, my friend."
    messages = [SYSTEM, {"role": "user", "content": USER_TURNS[0]}]
    first = session.reply(messages, logits_processor=_saying(tokenizer, say))
    assert first.text == say and first.session.reused_tokens == 0
    cached = session.cache_tokens
    messages += [{"role": "assistant", "content": say}, {"role": "user", "content": USER_TURNS[1]}]
    second = session.reply(messages, logits_processor=_saying(tokenizer, say))
    # Everything cached is reused; what is prefilled is the reply's end, the new user turn and the header.
    assert second.session.reused_tokens == cached
    new_text = "<|im_end|>\n<|im_start|>user\n" + USER_TURNS[1] + "<|im_end|>\n<|im_start|>assistant\n"
    assert second.session.prefilled_tokens == len(tokenizer(new_text, add_special_tokens=False).input_ids) + 1
    # no memory: the prompt's <recall> is dropped, and the prompt that stays is counted without it
    assert second.usage.cached_tokens == cached and second.usage.prompt_tokens == len(gen.encode(messages)[0]) - 1
    assert torch.equal(second.sequences, gen.generate(messages, logits_processor=_saying(tokenizer, say)).sequences)


def test_new_messages_alone_continue_the_session(tiny):
    model, tokenizer = tiny
    gen = RecallGenerator(model, tokenizer, generation_defaults={"max_new_tokens": 8})
    whole, alone = RecallSession(gen), RecallSession(gen)
    messages = [SYSTEM, {"role": "user", "content": USER_TURNS[0]}]
    a, b = whole.reply(messages), alone.reply(messages)
    messages += [{"role": "assistant", "content": a.text}, {"role": "user", "content": USER_TURNS[1]}]
    c, d = whole.reply(messages), alone.reply(USER_TURNS[1])  # a string is a new user message
    assert torch.equal(c.sequences, d.sequences) and b.text == a.text
    assert alone.messages == decorate(messages, gen.config) + [{"role": "assistant", "content": d.text}]
    e = alone.reply({"role": "user", "content": USER_TURNS[2]})
    assert e.session.reused_tokens > 0 and e.session.reason is None


# ---------------------------------------------------------------------- recalls stay in the cache
@pytest.mark.parametrize("position", ["assistant_start", "user_end"])
def test_a_memory_injected_in_an_earlier_turn_stays_in_the_cache(tiny, position):
    """Turn 2 reuses turn 1's cache, memory span included, and replies as if that memory were written there."""
    model, tokenizer = tiny
    config = RecallConfig(recall_position=position, max_recalls=1, ask_on_statements=False)  # "auto" before news too
    gen = RecallGenerator(model, tokenizer, memory=FixedMemory(FACT), config=config,
                          generation_defaults={"max_new_tokens": 10})  # fmt: skip
    session = RecallSession(gen)
    say = "Noted."
    messages = [SYSTEM, {"role": "user", "content": USER_TURNS[0]}]
    first = session.reply(messages, logits_processor=_saying(tokenizer, say))
    (recall,) = first.recalls
    assert recall.injected
    cached = session.cache_tokens
    messages += [{"role": "assistant", "content": say}, {"role": "user", "content": USER_TURNS[1]}]
    second = session.reply(messages)
    assert second.session.reused_tokens == cached and second.session.reason is None
    assert second.recalls[0].injected and second.recalls[0].position > cached
    # The same reply from a fresh run where turn 1's memory is written as the tokens it was injected as.
    sequence = second.sequences[0].tolist()
    prompt = sequence[: second.recalls[0].position]
    pads = memory_token_ids(tokenizer, FACT, config)
    assert prompt[recall.position : recall.position + recall.length] == [session.pad_id] * recall.length
    prompt[recall.position : recall.position + recall.length] = pads
    cache = DynamicCache(config=model.config)  # turn 1's marker is a plain token here, as in the session
    with torch.no_grad():
        model(input_ids=torch.tensor([prompt[:-2]]), use_cache=True, **cache_kwarg(cache))
    expected = gen.generate_ids(torch.tensor([prompt]), past_key_values=cache)
    assert expected.recalls[0].injected and expected.text == second.text


# ---------------------------------------------------------------------- fallbacks
def test_an_edited_history_is_prefilled_again_and_reported(tiny):
    model, tokenizer = tiny
    gen = RecallGenerator(model, tokenizer, generation_defaults={"max_new_tokens": 6})
    session = RecallSession(gen)
    messages = [m for m, _ in _chat(session, 3)][-1]
    edited = [SYSTEM, {"role": "user", "content": "My cat is called Pepper."}, *messages[2:]]
    result = session.reply(edited)
    assert "from message 1 on" in result.session.reason and not result.session.fresh_prefill
    assert 0 < result.session.reused_tokens < len(gen.encode([SYSTEM])[0])  # the system message only
    assert torch.equal(result.sequences, gen.generate(edited).sequences)
    other = [{"role": "system", "content": "Be terse."}, *edited[1:]]
    rebuilt = session.reply(other)
    assert rebuilt.session.fresh_prefill and rebuilt.session.reused_tokens == 0 and "message 0" in rebuilt.session.reason
    assert torch.equal(rebuilt.sequences, gen.generate(other).sequences)
    edited = other
    # The next call extends the edited conversation: reused again.
    follow = edited + [{"role": "assistant", "content": result.text}, {"role": "user", "content": "Hi"}]
    again = session.reply(follow)
    assert again.session.reused_tokens > 0 and not again.session.fresh_prefill


def test_a_bounded_session_cuts_back_to_the_first_different_message(tiny):
    model, tokenizer = tiny
    gen = RecallGenerator(model, tokenizer, generation_defaults={"max_new_tokens": 6})
    session = RecallSession(gen, max_cache_tokens=500)  # units per message, nothing evicted
    messages = [m for m, _ in _chat(session, 3)][-1]
    edited = messages[:3] + [{"role": "user", "content": "Something else entirely."}]
    result = session.reply(edited)
    assert not result.session.fresh_prefill and "from message 3 on" in result.session.reason
    assert result.session.reused_tokens > 0
    assert torch.equal(result.sequences, gen.generate(edited).sequences)


def test_a_template_that_rewrites_earlier_turns_is_reported(tiny):
    model, tokenizer = tiny
    # Numbers every message with the conversation's length: each call renders earlier turns differently.
    tokenizer.chat_template = (
        "{% for m in messages %}{{ '<|im_start|>' + m['role'] + ' ' + (messages|length|string) + '\n' "
        "+ m['content'] + '<|im_end|>\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
    )
    gen = RecallGenerator(model, tokenizer, generation_defaults={"max_new_tokens": 6})
    session = RecallSession(gen)
    results = [r for _, r in _chat(session, 2)]
    assert results[1].session.fresh_prefill and results[1].session.reason
    messages = [SYSTEM, {"role": "user", "content": USER_TURNS[0]}, {"role": "assistant", "content": results[0].text},
                {"role": "user", "content": USER_TURNS[1]}]  # fmt: skip
    assert torch.equal(results[1].sequences, gen.generate(messages).sequences)


# ---------------------------------------------------------------------- a bounded cache
def test_the_cache_stays_bounded_and_evicted_turns_are_written():
    gen = _gen("llama")
    written: list[dict] = []
    session = RecallSession(gen, max_cache_tokens=150, writer=lambda turns: written.extend(turns) or [f"m{len(written)}"])
    evicted = 0
    for _, result in _chat(session, 10):
        report = result.session
        assert report.cache_tokens <= 150 and report.cache_tokens == session.cache_tokens
        evicted += report.evicted_messages
        assert (report.memory_written != ()) == (report.evicted_messages > 0)
    assert evicted >= 4 and session.evicted_messages == evicted
    assert [m["content"] for m in written if m["role"] == "user"][:2] == USER_TURNS[:2]
    assert len(written) == evicted  # each once
    assert session.messages[0] == decorate([SYSTEM], gen.config)[0]  # the sink


def test_positions_after_eviction_close_the_gap():
    """Layer-0 keys depend on a token and its position only: after evictions the cache holds the
    kept ids at positions 0..n-1, as if they had been prefilled alone."""
    gen = _gen("llama")
    session = RecallSession(gen, max_cache_tokens=150)
    list(_chat(session, 8))
    assert session.evicted_messages > 0
    ids = torch.tensor([session._cache_ids()])
    fresh = DynamicCache(config=gen.model.config)
    with torch.no_grad():
        gen.model(input_ids=ids, **cache_kwarg(fresh), position_ids=torch.arange(ids.shape[1])[None], use_cache=True)
    torch.testing.assert_close(session._cache.layers[0].keys, fresh.layers[0].keys, atol=2e-5, rtol=1e-4)


def test_with_nothing_evicted_a_bounded_session_keeps_parity():
    gen = _gen("qwen2")
    session = RecallSession(gen, max_cache_tokens=400)
    for messages, result in _chat(session, 4):
        assert result.session.evicted_messages == 0
        assert torch.equal(result.sequences, gen.generate(messages).sequences)


def test_written_turns_are_not_written_again():
    gen = _gen("llama")
    written: list[dict] = []
    session = RecallSession(gen, max_cache_tokens=150, writer=lambda turns: written.extend(turns) or ["x"])
    for _, _result in _chat(session, 10):
        session.mark_written(("user", "assistant"))  # an adapter that writes every exchange says so
    assert session.evicted_messages > 0 and written == []


def test_too_small_a_cache_names_both_numbers():
    gen = _gen("llama")
    session = RecallSession(gen, max_cache_tokens=40)
    with pytest.raises(ValueError, match=r"max_cache_tokens \(40\) is smaller than the sinks plus one turn \(\d+"):
        session.reply([SYSTEM, {"role": "user", "content": USER_TURNS[1] * 3}])
    assert session.cache_tokens == 0 and session.turns == 0  # nothing half done
    bounded = RecallSession(gen, max_cache_tokens=200)
    chat = list(_chat(bounded, 2))
    before, messages = bounded.cache_tokens, bounded.messages
    with pytest.raises(ValueError, match=r"max_cache_tokens \(200\) is smaller"):
        bounded.reply(chat[-1][0] + [{"role": "assistant", "content": chat[-1][1].text},
                                     {"role": "user", "content": "zqxj vwk " * 40}])  # fmt: skip
    assert bounded.cache_tokens == before and bounded.messages == messages  # the cache as it was
    with pytest.raises(ValueError, match=r"max_cache_tokens \(4\) must be larger than sink_tokens \(4\)"):
        SessionConfig(max_cache_tokens=4, sink_tokens=4)
    with pytest.raises(ValueError, match="max_sessions must be an int >= 1, got 0"):  # was taken, then failed in the pool
        SessionConfig(max_sessions=0)
    with pytest.raises(ValueError, match=r"max_cache_tokens \(9000\) must be at most the model's context window \(512\)"):
        RecallSession(gen, max_cache_tokens=9000)
    with pytest.raises(TypeError, match="unexpected keyword argument.*positions"):
        RecallSession(gen, positions="keep")  # retired: positions past the trained window broke the model
    with pytest.raises(TypeError, match="unexpected keyword argument"):
        RecallSession(gen, max_tokens=3)


def test_gpt2_refuses_eviction_clearly_but_chats_unbounded():
    gen = _gen("gpt2")
    with pytest.raises(NoRotaryEmbeddingError, match="GPT2LMHeadModel has no rotary position embedding"):
        RecallSession(gen, max_cache_tokens=200)
    session = RecallSession(gen)
    assert session.reply([SYSTEM, {"role": "user", "content": "Hi"}]).session.cache_tokens > 0


def test_an_unbounded_session_stops_at_the_context_window():
    gen = _gen("llama", max_new_tokens=4)
    session = RecallSession(gen)
    long = {"role": "user", "content": " ".join(USER_TURNS) * 20}
    with pytest.raises(ValueError, match="longer: give the session max_cache_tokens"):
        session.reply([SYSTEM, long])
    assert session.cache_tokens == 0


# ---------------------------------------------------------------------- threads, faults, streams
def test_calls_on_one_session_are_serialized():
    gen = _gen("llama", max_new_tokens=4)
    session = RecallSession(gen)
    inside, overlaps = [], []
    original = gen.generate_ids

    def watched(*args, **kwargs):
        if inside:
            overlaps.append(True)
        inside.append(True)
        time.sleep(0.05)
        try:
            return original(*args, **kwargs)
        finally:
            inside.pop()

    gen.generate_ids = watched
    conversations = [[SYSTEM, {"role": "user", "content": text}] for text in USER_TURNS[:4]]
    results: list = []
    threads = [threading.Thread(target=lambda m=m: results.append(session.reply(m))) for m in conversations]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not overlaps and len(results) == 4
    for result in results:  # each reply is still the one a fresh generate gives
        messages = next(m for m in conversations if m[1]["content"] in gen.tokenizer.decode(result.sequences[0]))
        assert torch.equal(result.sequences, gen.generate(messages).sequences)


def test_a_failed_call_leaves_the_session_usable():
    gen = _gen("llama")
    session = RecallSession(gen, max_cache_tokens=300)
    chat = list(_chat(session, 2))
    before = session.cache_tokens
    broken = RecallConfig(on_memory_error="raise", max_recalls=1, max_memory_tokens=16)
    messages = chat[-1][0] + [{"role": "assistant", "content": chat[-1][1].text},
                              {"role": "user", "content": "Where do I live?"}]  # a question: its memory is searched
    with pytest.raises(RuntimeError, match="down"):
        session.reply(messages, memory=ListMemory({}, fail=RuntimeError("down")), config=broken)
    assert session.cache_tokens <= before
    result = session.reply(messages)
    assert torch.equal(result.sequences, gen.generate(messages).sequences)


def test_a_failing_memory_write_is_reported_and_retried():
    gen = _gen("llama")
    calls: list[list[tuple[str, str]]] = []

    def flaky(turns):
        calls.append(list(turns))
        if len(calls) == 1:
            raise OSError("disk full")
        return [f"m{i}" for i in range(len(turns))]

    session = RecallSession(gen, max_cache_tokens=150, writer=flaky)
    reports = []
    with pytest.warns(RuntimeWarning, match="disk full"):
        for _, result in _chat(session, 10):
            reports.append(result.session)
    failed = next(r for r in reports if r.memory_write_error)
    assert "OSError: disk full" in failed.memory_write_error
    assert calls[1][: len(calls[0])] == calls[0]  # the failed turns come first in the next write


def test_a_session_closed_with_unwritten_evictions_tries_once_more_then_warns():
    gen = _gen("llama")
    down = {"on": True}
    written: list[dict] = []

    def store(turns):
        if down["on"]:
            raise OSError("index unreachable")
        written.extend(turns)
        return ["w"] * len(turns)

    session = RecallSession(gen, max_cache_tokens=150, writer=store)
    with pytest.warns(RuntimeWarning, match="retried"):
        list(_chat(session, 8))
    assert session._writes.waiting
    down["on"] = False
    session.close()  # the store is back: written now
    assert written and not session._writes.waiting
    down["on"] = True
    with pytest.warns(RuntimeWarning, match="retried"):
        list(_chat(session, 8))
    with pytest.warns(RuntimeWarning, match=r"\d+ evicted message\(s\) could not be written to memory and are dropped"):
        session.close()


def test_an_evicted_message_the_memory_refuses_is_dropped_and_blocks_no_later_write():
    """A message refused for good (a ValueError: a NUL pasted in) used to fail every later
    eviction's write with it, so nothing evicted after it was ever written."""
    gen = _gen("llama")
    written: list[dict] = []

    def store(turns):
        if any("\x00" in t["content"] for t in turns):
            raise ValueError("content contains NUL characters")
        written.extend(turns)
        return [f"m{len(written)}"] * len(turns)

    session = RecallSession(gen, max_cache_tokens=150, writer=store)
    messages, evicted = [SYSTEM], []
    with pytest.warns(RuntimeWarning, match="refused by the memory and is dropped.*NUL"):
        for i in range(10):
            messages.append({"role": "user", "content": USER_TURNS[i % len(USER_TURNS)] + ("\x00" if i == 0 else "")})
            result = session.reply(list(messages))
            messages.append({"role": "assistant", "content": result.text})
            evicted.append(result.session.memory_written)
    assert not session._writes.waiting
    users = [t["content"] for t in written if t["role"] == "user"]
    assert len(users) >= 3 and all("\x00" not in u for u in users)  # every evicted message but the refused one
    assert sum(bool(ids) for ids in evicted) >= 3
    session.close()


@pytest.mark.parametrize(
    ("settings", "message"),
    [({"write_roles": ("User",)}, "write_roles must be a non-empty sequence of roles from 'user'"),
     ({"write_roles": None}, "write_roles must be a role or a sequence"),
     ({"memory_session_id": " "}, "session_id must be"), ({"user_id": ""}, "user_id must be")],
)  # fmt: skip
def test_what_evicted_messages_are_written_with_is_checked_at_init(settings, message):
    """``write_roles=("User",)`` was taken, and nothing was written, silently; ``"user"`` was read as
    the roles u, s, e, r (it is now the one role, as a store's ``roles`` reads it)."""
    with pytest.raises(ValueError, match=message):
        RecallSession(_gen("llama"), max_cache_tokens=150, writer=lambda turns: [], **settings)
    session = RecallSession(_gen("llama"), max_cache_tokens=150, writer=lambda turns: [], write_roles="user")
    assert session.write_roles == ("user",)


def test_a_writer_replaced_after_the_session_is_made_is_the_one_used():
    """benchmarks/load.py wraps a session's writer to count (and kill in) its writes."""
    from recall_core.memory.errors import EncoderMismatchError

    session = RecallSession(_gen("llama"), max_cache_tokens=150, writer=lambda turns: ["unused"])
    calls: list[dict] = []
    session.writer = lambda turns: calls.extend(turns) or ["m"] * len(turns)
    list(_chat(session, 8))
    assert calls and session.writer is not None

    def mismatch(turns):  # the memory's own error, a ValueError too: journaled, so kept, not dropped
        raise EncoderMismatchError("the index was built with another encoder")

    session.writer = mismatch
    session.reset()  # the same conversation again: its messages are written already (each once)
    with pytest.warns(RuntimeWarning, match="retried at the next eviction"):
        list(_chat(session, 8))
    assert session._writes.waiting
    session.writer = lambda turns: ["m"] * len(turns)
    session.close()
    assert not session._writes.waiting


def test_stream_joins_to_the_reply():
    gen = _gen("llama", max_new_tokens=12)
    a, b = RecallSession(gen), RecallSession(gen)
    messages = [SYSTEM, {"role": "user", "content": USER_TURNS[0]}]
    expected = a.reply(messages)
    stream = b.stream(messages)
    assert "".join(stream) == expected.text
    assert stream.result.session.turn == 1 and torch.equal(stream.result.sequences, expected.sequences)
    follow = messages + [{"role": "assistant", "content": expected.text}, {"role": "user", "content": "Hi"}]
    again = b.stream(follow)
    assert "".join(again) == a.reply(follow).text and again.result.session.reused_tokens > 0


async def test_astream_joins_to_the_reply():
    gen = _gen("llama", max_new_tokens=8)
    session = RecallSession(gen)
    messages = [SYSTEM, {"role": "user", "content": USER_TURNS[0]}]
    pieces = [piece async for piece in session.astream(messages)]
    assert "".join(pieces) == gen.generate(messages).text


def test_append_scores_and_continues():
    gen = _gen("llama")
    session = RecallSession(gen)
    first = session.append([SYSTEM, {"role": "user", "content": USER_TURNS[0]}])
    assert first.logprobs is None and session.cache_tokens == len(first.token_ids)
    messages = [SYSTEM, {"role": "user", "content": USER_TURNS[0]}, {"role": "assistant", "content": USER_TURNS[1]}]
    scored = session.append(messages, return_logprobs=True)
    shown = decorate(messages, gen.config)  # as the session renders them (the recall policy's system message)
    ids = gen.tokenizer.apply_chat_template(shown, tokenize=True, add_generation_prompt=False, return_dict=False)
    with torch.no_grad():
        logits = gen.model(torch.tensor([ids])).logits[0]
    start = len(ids) - len(scored.token_ids)
    expected = torch.log_softmax(logits[start:-1], -1).gather(-1, torch.tensor(ids[start + 1 :])[:, None])[:, 0]
    torch.testing.assert_close(scored.logprobs, expected, atol=1e-4, rtol=1e-4)
    reply = session.reply(messages + [{"role": "user", "content": "Hi"}])
    assert reply.session.reused_tokens > 0 and reply.session.reason is None
    assert torch.equal(reply.sequences, gen.generate(messages + [{"role": "user", "content": "Hi"}]).sequences)


def test_reset_frees_the_cache():
    gen = _gen("llama")
    session = RecallSession(gen)
    list(_chat(session, 2))
    assert session.cache_bytes > 0
    session.reset()
    assert session.cache_bytes == 0 and session.messages == [] and session.turns == 0


def test_a_long_history_that_does_not_fit_is_read_from_its_end():
    """A first call with 300 messages and a small bound: the old ones go to memory unread, and the
    reply is the one for the messages kept (the sinks and the newest exchanges)."""
    gen = _gen("llama")
    written: list[dict] = []
    session = RecallSession(gen, max_cache_tokens=200, writer=lambda turns: written.extend(turns) or ["w"])
    history = [SYSTEM]
    for i in range(150):
        history += [{"role": "user", "content": f"Note {i}."}, {"role": "assistant", "content": "Noted."}]
    history.append({"role": "user", "content": USER_TURNS[5]})
    result = session.reply(history)
    report = result.session
    assert report.evicted_messages == len(written) >= 280 and "evicted before they were read" in report.reason
    kept = session.messages[:-1]  # the reply is the session's last message
    assert kept[0] == decorate([SYSTEM], gen.config)[0] and kept[-1] == history[-1] and len(kept) < 40
    assert result.text == gen.generate(kept).text


def test_the_sessions_write_warnings_point_at_the_callers_line():
    """A refused message, a write that must wait and the messages dropped at reset each warn at
    the line that called ``reply`` or ``reset``, not inside the session."""

    def flaky(turns):
        if any("\x00" in t["content"] for t in turns):
            raise ValueError("a NUL character")
        raise OSError("disk full")

    session = RecallSession(_gen("llama"), max_cache_tokens=150, writer=flaky)
    messages = [SYSTEM]
    lines = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for i in range(10):
            messages.append({"role": "user", "content": USER_TURNS[i % len(USER_TURNS)] + ("\x00" if i == 0 else "")})
            lines.append(inspect.currentframe().f_lineno + 1)
            result = session.reply(list(messages))
            messages.append({"role": "assistant", "content": result.text})
        lines.append(inspect.currentframe().f_lineno + 1)
        session.reset()
    said = {str(w.message).split(" (")[0]: (w.filename, w.lineno) for w in caught}
    assert len(said) == 3, said  # refused, must wait, dropped with the session
    for filename, line in said.values():
        assert filename == __file__ and line in lines

"""``RecallConfig.base_replies``: a chat reply that reads no notes is the base model's.

The recall-tuned model still decides (``"ask"``, a statement under ``"auto"``); what it decided
not to recall for, and every call with no memory attached, is answered by the base model as
``generate()`` on that model answers it, in a call or in a session. Everything that reads notes
stays the tuned model's.
"""

from __future__ import annotations

import pytest
import torch

from recall_core import RecallConfig, RecallGenerator, RecallSession, SessionConfig
from recall_core.kv.cache import cache_nbytes
from recall_core.models.base import BASE_LOADER, base_model_of, remember_base
from recall_core.serving import ServedRecallGenerator
from recall_core.serving.client import Completion
from tests.helpers.engines import ScriptedEngine
from tests.helpers.memories import FixedMemory
from tests.helpers.tiny import tiny_model
from tests.unit.test_engine_ask import Decided

FACT = "The user's new flat in Stockport is £720 a month."
NEWS = [{"role": "user", "content": "omg we got it!! the flat in stockport, moving in march 1st"}]
QUESTION = [{"role": "user", "content": "how much is the rent on my new flat"}]
ON = RecallConfig(base_replies=True)
DEFAULTS = {"max_new_tokens": 8}


def _pair(asked: bool = False) -> tuple[Decided, RecallGenerator]:
    """A "tuned" generator (seed 0) given a "base" model (seed 1, another random model with the same
    tokenizer), and a generator over that base model alone."""
    tuned, tokenizer = tiny_model("llama", seed=0)
    base, _ = tiny_model("llama", seed=1)
    gen = Decided(tuned, tokenizer, memory=FixedMemory(FACT), generation_defaults=DEFAULTS, base_model=base,
                  asked=asked)  # fmt: skip
    return gen, RecallGenerator(base, tokenizer, generation_defaults=DEFAULTS)


def test_no_memory_the_reply_is_the_base_models_generate():
    gen, plain = _pair()
    got = gen.generate(NEWS, memory=None, config=ON)
    expected = plain.generate(NEWS, memory=None)
    assert got.text == expected.text and torch.equal(got.sequences, expected.sequences)
    assert not got.recalls
    tuned = gen.generate(NEWS, memory=None)  # off (the default): the tuned model's own reply
    assert not torch.equal(tuned.sequences, got.sequences)


def test_a_statement_the_model_does_not_ask_for_is_answered_by_the_base_model():
    gen, plain = _pair(asked=False)
    got = gen.generate(NEWS, config=ON)
    assert gen.passes == 1  # the tuned model decided
    assert got.text == plain.generate(NEWS, memory=None).text
    assert got.usage.injected_tokens == 0 and not got.recalls


def test_what_reads_notes_stays_the_tuned_models():
    gen, _ = _pair(asked=True)
    asked = gen.generate(NEWS, config=ON)  # the model asked: notes, tuned model
    assert asked.recalls and asked.recalls[0].memory_id is not None
    assert torch.equal(asked.sequences, gen.generate(NEWS, config=ON.replace(base_replies=False)).sequences)
    question = gen.generate(QUESTION, config=ON)  # a question under "auto": notes, no decision
    assert torch.equal(question.sequences, gen.generate(QUESTION).sequences)
    assert gen._base is None  # the base model was never needed


def test_ask_not_asked_is_the_base_models_and_a_text_prompt_is_never_gated():
    gen, plain = _pair(asked=False)
    ask = ON.replace(recall_policy="ask", ask_on_score=0.0, ask_on_names=False)  # the model's decision alone
    got = gen.generate(QUESTION, config=ask)
    assert gen.passes == 1 and not got.recalls
    assert got.text == plain.generate(QUESTION, memory=None, config=ask.replace(base_replies=False)).text
    text = gen.generate("The weather today is", memory=None, config=ON)
    assert torch.equal(text.sequences, gen.generate("The weather today is", memory=None).sequences)


def test_streaming_and_stop_strings_reach_the_base_model():
    gen, plain = _pair()
    expected = plain.generate(NEWS, memory=None).text
    pieces = list(gen.stream(NEWS, memory=None, config=ON))
    assert "".join(pieces) == expected


def test_without_a_known_base_model_it_is_refused_by_name():
    tuned, tokenizer = tiny_model("llama")
    gen = RecallGenerator(tuned, tokenizer, generation_defaults=DEFAULTS)
    with pytest.raises(ValueError, match="base_replies"):
        gen.generate(NEWS, memory=None, config=ON)
    other, _ = tiny_model("llama", seed=1)
    other.resize_token_embeddings(len(tokenizer) + 8)
    with pytest.raises(ValueError, match="base_model has"):
        RecallGenerator(tuned, tokenizer, base_model=other).generate(NEWS, memory=None, config=ON)
    with pytest.raises(ValueError, match="base_replies must be True or False"):
        RecallConfig(base_replies="yes")


def test_the_base_model_is_loaded_once_from_what_the_tuned_model_records():
    tuned, tokenizer = tiny_model("llama")
    base, _ = tiny_model("llama", seed=1)
    loads = []
    remember_base(tuned, lambda: loads.append(1) or base)
    assert getattr(tuned, BASE_LOADER) is not None and not loads  # nothing loaded until needed
    first = RecallGenerator(tuned, tokenizer, generation_defaults=DEFAULTS)
    second = RecallGenerator(tuned, tokenizer, generation_defaults=DEFAULTS)
    assert first.generate(NEWS, memory=None, config=ON).text == second.generate(NEWS, memory=None, config=ON).text
    assert loads == [1] and base_model_of(tuned) is base
    assert base_model_of(base) is None  # a model nothing was recorded on


def test_a_session_gives_the_same_reply_and_goes_on_from_it_as_from_any_reply():
    """The base model answers the conversation the session holds; the tuned model then runs that
    reply on the session's cache, so the next (tuned) turn is what a fresh session on the whole
    conversation gives."""
    gen, _ = _pair()
    session = RecallSession(gen, memory=None, recall_config=ON)
    first = session.reply(NEWS[0]["content"])
    assert first.text == gen.generate(NEWS, memory=None, config=ON).text and not first.recalls
    assert first.session.prefilled_tokens > 0 and session.cache_tokens > 0
    then = session.reply("and what about march", config=RecallConfig())
    assert then.session.reused_tokens > 0
    whole = [*NEWS, {"role": "assistant", "content": first.text}, {"role": "user", "content": "and what about march"}]
    fresh = RecallSession(gen, memory=None).reply(whole)
    new = then.usage.generated_tokens
    assert new == fresh.usage.generated_tokens and then.text == fresh.text
    assert torch.equal(then.sequences[0, -new:], fresh.sequences[0, -new:])
    # the base model's own session: the next base reply prefills only what it has not seen
    again = session.reply("ok thanks")
    assert 0 < again.usage.cached_tokens < again.usage.prompt_tokens
    talk = [*whole, {"role": "assistant", "content": then.text}, {"role": "user", "content": "ok thanks"}]
    assert again.text == gen.generate(talk, memory=None, config=ON).text
    assert session.cache_bytes > cache_nbytes(session._cache) > 0  # the base model's cache counted too
    session.reset()
    assert session.cache_bytes == 0


def _base_reports(monkeypatch: pytest.MonkeyPatch, session: RecallSession) -> list:
    """The session reports of the base model's session's replies (a list that fills as it replies)."""
    reports, reply = [], RecallSession.reply

    def spied(self, *args, **kwargs):
        result = reply(self, *args, **kwargs)
        if self is session._base_session:
            reports.append(result.session)
        return result

    monkeypatch.setattr(RecallSession, "reply", spied)
    return reports


def test_a_bounded_session_s_base_model_keeps_its_own_cache_past_evictions(monkeypatch):
    """The base model's session is given what it has not seen and evicts by its own bounds: its
    replies are those of a bounded session on the base model alone, and after the first eviction
    it still reuses its cache (before 2026-12-07 it started afresh every turn from then on)."""
    gen, plain = _pair()
    bounds = SessionConfig(max_cache_tokens=120, sink_tokens=4)
    session, alone = RecallSession(gen, bounds, memory=None, recall_config=ON), RecallSession(plain, bounds, memory=None)
    base_reports = _base_reports(monkeypatch, session)
    for turn in range(5):
        said = f"turn {turn}: tell me about thing number {turn} please, and a few more words"
        got, expected = session.reply(said), alone.reply(said)
        assert got.text == expected.text
    assert session.evicted_messages > 2 and alone.evicted_messages > 2
    assert all(r.reused_tokens > 0 and r.reason is None for r in base_reports[1:])


def test_a_base_model_session_goes_on_after_turns_the_tuned_model_answered(monkeypatch):
    """Turns the tuned model answers (with notes) are given to the base model's session at its next
    reply, after what it holds: it reuses its cache and answers the whole conversation."""
    gen, _ = _pair()
    session = RecallSession(gen, memory=None, recall_config=ON)
    base_reports = _base_reports(monkeypatch, session)
    first = session.reply(NEWS[0]["content"])
    tuned = session.reply(QUESTION[0]["content"], memory=FixedMemory(FACT))
    assert tuned.recalls
    last = session.reply("ok thanks")
    talk = [*NEWS, {"role": "assistant", "content": first.text}, *QUESTION, {"role": "assistant", "content": tuned.text},
            {"role": "user", "content": "ok thanks"}]  # fmt: skip
    assert last.text == gen.generate(talk, memory=None, config=ON).text
    assert len(base_reports) == 2 and base_reports[1].reason is None and base_reports[1].reused_tokens > 0


def test_a_call_that_fails_after_the_base_model_replied_leaves_it_to_start_afresh_once(monkeypatch):
    """The base model's session holds a reply the recall session did not keep: it is reset, starts
    afresh at the next base reply and goes on from its cache after that (until 2026-12-07 it fell
    back to the held conversation and started afresh on nearly every turn: a reviewer)."""
    gen, plain = _pair()
    bounds = SessionConfig(max_cache_tokens=120, sink_tokens=4)
    session, alone = RecallSession(gen, bounds, memory=None, recall_config=ON), RecallSession(plain, bounds, memory=None)
    base_reports = _base_reports(monkeypatch, session)
    said = [f"turn {turn}: tell me about thing number {turn} please, and a few more words" for turn in range(9)]
    for text in said[:4]:
        assert session.reply(text).text == alone.reply(text).text
    forward, failed = RecallSession._forward, []

    def fails_once(self, ids, last_only=False):
        if self is session and not failed:
            failed.append(True)
            raise RuntimeError("boom")
        return forward(self, ids, last_only)

    monkeypatch.setattr(RecallSession, "_forward", fails_once)
    with pytest.raises(RuntimeError, match="boom"):
        session.reply(said[4])
    for text in said[4:]:
        assert session.reply(text).text == alone.reply(text).text
    assert all(r.reused_tokens > 0 and r.reason is None for r in base_reports[-4:])


def test_a_session_statement_not_asked_is_the_base_models_and_asked_is_the_tuned_models():
    from tests.unit.test_engine_ask import DecidedSession

    for asked in (False, True):
        gen, plain = _pair()
        session = DecidedSession(gen, memory=FixedMemory(FACT), recall_config=ON, asked=asked)
        result = session.reply(NEWS[0]["content"])
        assert session.passes == 1
        assert bool(result.recalls and result.recalls[0].memory_id) is asked
        if not asked:
            assert result.text == plain.generate(NEWS, memory=None).text
            assert result.usage.cached_tokens == 0  # the base model has no cache here: all prefilled


def test_a_failed_base_reply_leaves_the_session_as_it_was():
    tuned, tokenizer = tiny_model("llama")
    gen = RecallGenerator(tuned, tokenizer, generation_defaults=DEFAULTS)  # no base model known
    session, untouched = RecallSession(gen, memory=None), RecallSession(gen, memory=None)
    assert session.reply(NEWS[0]["content"]).text == untouched.reply(NEWS[0]["content"]).text
    with pytest.raises(ValueError, match="base_replies"):
        session.reply("and what about march", config=ON)
    assert session.turns == untouched.turns
    assert session.reply("and what about march").text == untouched.reply("and what about march").text


ADAPTER = {"id": 0, "path": "recall-adapter.gguf", "scale": 0.0}


def _served(*replies: Completion, adapters: list[dict] | None = None, **kwargs) -> tuple[ServedRecallGenerator, ScriptedEngine]:
    _, tokenizer = tiny_model("llama")
    engine = ScriptedEngine(*replies, adapters=[ADAPTER] if adapters is None else adapters)
    return ServedRecallGenerator(engine, tokenizer, context_window=512, **kwargs), engine


def _said(token: int, end: int) -> Completion:
    return Completion(tokens=[token, end], stop_type="eos", logprobs=[{token: -0.1}, {end: -0.1}])


def test_a_served_backend_takes_the_recall_adapter_out_for_replies_that_read_no_notes():
    """Served: the base model is the engine's recall adapter (served unapplied beside the merged
    model) at scale -1; the requests that read notes, and the decision, carry no adapter field."""
    served, engine = _served()
    end = served.tokenizer.eos_token_id
    engine.replies.extend([_said(7, end)])
    got = served.generate(NEWS, memory=None, config=ON, max_new_tokens=4)
    assert [body["lora"] for body in engine.bodies] == [[{"id": 0, "scale": -1.0}]]
    assert got.text == served.tokenizer.decode([7]) and not got.recalls
    engine.bodies.clear()
    engine.replies.extend([_said(9, end)])
    served.generate(QUESTION, memory=FixedMemory(FACT), config=ON, max_new_tokens=4)  # "auto": notes, tuned
    # the tuned model's requests name the adapter at the engine's scale, 0: llama.cpp checks a slot's
    # cache against the scales only for a request that names them (else it reuses a base reply's)
    assert len(engine.bodies) == 1 and engine.bodies[0]["lora"] == [{"id": 0, "scale": 0.0}]
    engine.bodies.clear()
    decision = Completion(tokens=[5], stop_type="limit", logprobs=[{5: -0.1}], cached_tokens=12)
    reply = Completion(tokens=[7, end], stop_type="eos", logprobs=[{7: -0.1}, {end: -0.1}], cached_tokens=0)
    engine.replies.extend([decision, reply])
    ask = ON.replace(recall_policy="ask", ask_on_score=0.0, ask_on_names=False, ask_on_abstention=False)
    got = served.generate(QUESTION, memory=FixedMemory(FACT), config=ask, max_new_tokens=4)  # not asked: the base
    assert engine.bodies[0]["lora"] == [{"id": 0, "scale": 0.0}] and engine.bodies[1]["lora"] == [{"id": 0, "scale": -1.0}]
    # the decision is shown; the base reply computed its prompt again (the scale switch clears the
    # slot's cache), so the call's cached tokens are its own, not the decision's
    assert got.output.decided == [decision] and got.output.requests == [reply] and got.usage.cached_tokens == 0
    assert served.config.base_replies is False and served.base_generator() is served.base_generator()


def test_a_served_backend_without_the_adapter_refuses_it():
    for adapters, words in (([], "--lora"), ([ADAPTER, {**ADAPTER, "id": 1}], "base_lora=ID")):
        served, _ = _served(adapters=adapters)
        for memory in (None, FixedMemory(FACT)):
            with pytest.raises(ValueError, match=words):
                served.generate(NEWS, memory=memory, config=ON, max_new_tokens=4)
    served, engine = _served(_said(7, 2), adapters=[ADAPTER, {**ADAPTER, "id": 1}], base_lora=1)
    served.generate(NEWS, memory=None, config=ON, max_new_tokens=4)
    assert engine.bodies[0]["lora"] == [{"id": 0, "scale": 0.0}, {"id": 1, "scale": -1.0}]
    with pytest.raises(ValueError, match="base_lora must be"):
        _served(base_lora=-1)
    # an adapter loaded at 1 (the merged model with it twice, or a plain model: not told apart) is refused
    served, engine = _served(adapters=[{**ADAPTER, "scale": 1.0}])
    with pytest.raises(ValueError, match="base_lora: the engine's adapter 0 is at scale 1"):
        served.generate(NEWS, memory=None, config=ON, max_new_tokens=4)
    assert not engine.bodies


def test_a_served_backend_may_send_them_to_an_engine_serving_the_base_model():
    served, engine = _served(adapters=[])
    base = ScriptedEngine(_said(7, 2))
    served = ServedRecallGenerator(engine, served.tokenizer, context_window=512, base_engine=base)
    served.generate(NEWS, memory=None, config=ON, max_new_tokens=4)
    assert not engine.bodies and len(base.bodies) == 1 and "lora" not in base.bodies[0]
    with pytest.raises(ValueError, match="not both"):
        ServedRecallGenerator(engine, served.tokenizer, base_engine=base, base_lora=0)


def test_a_base_engine_that_is_down_fails_the_call_with_engine_error():
    """A fault on the base model's engine is the caller's to see: ``EngineError`` naming the engine,
    never a reply from the tuned model in its place."""
    from recall_core.serving import EngineError
    from recall_core.serving.client import EngineClient

    served, engine = _served(adapters=[])
    down = ServedRecallGenerator(engine, served.tokenizer, context_window=512,
                                 base_engine=EngineClient("http://127.0.0.1:9", timeout=2.0))  # fmt: skip
    with pytest.raises(EngineError, match="127.0.0.1:9"):
        down.generate(NEWS, memory=None, config=ON, max_new_tokens=4)
    assert not engine.bodies

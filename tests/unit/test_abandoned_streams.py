"""Streams left early, failing midway or cancelled, and cancelled calls: what the engine reports,
what a session keeps, what the adapters write to long-term memory.

No timing: the model is held at a chosen forward pass (a forward hook) or decoding step (a logits
processor) until the consumer has stopped, or it raises there.
"""

from __future__ import annotations

import asyncio
import threading

import pytest
import torch
from langchain_core.messages import AIMessage, HumanMessage
from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.prompts import PromptTemplate
from transformers import LogitsProcessor

from langchain_recall import ChatRecall
from llamaindex_recall import RecallLLM
from recall_core import RecallGenerator, RecallSession, SessionConfig
from recall_core.memory import HashEncoder, MemoryStore
from recall_core.models.templates import SMOLLM2_TOOLS_TEMPLATE
from tests.helpers.adapters import Person, weather
from tests.helpers.tiny import tiny_model

SAY = "My dog is called Biscuit."
FILL = ["Remember that my favourite colour is green.", "I was born in 1990.", "My cat is called Pepper.",
        "The quick brown fox jumps over the lazy dog.", "I work at the hospital.", "My name is Ada."]
WAIT = 30  # seconds a held model waits at most: a bug fails the test instead of hanging it


def _gen(max_new: int = 40) -> RecallGenerator:
    model, tokenizer = tiny_model("llama")
    return RecallGenerator(model, tokenizer, generation_defaults={"max_new_tokens": max_new, "do_sample": False,
                                                                  "min_new_tokens": max_new})  # fmt: skip


class Hold(LogitsProcessor):
    """At decoding step ``at`` the worker waits until ``event`` is set (a stream's cancel event)."""

    def __init__(self, at: int = 6) -> None:
        self.at, self.calls, self.event = at, 0, threading.Event()

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        self.calls += 1
        if self.calls == self.at:
            assert self.event.wait(WAIT), "the consumer never stopped the stream"
        return scores


class Gate:
    """A forward pre-hook: at forward ``at`` it raises (``fail``) or sets ``reached`` and waits for ``release``."""

    def __init__(self, model, at: int = 4, fail: bool = False) -> None:
        self.at, self.fail, self.calls = at, fail, 0
        self.reached, self.release = threading.Event(), threading.Event()
        self.handle = model.register_forward_pre_hook(self)

    def __call__(self, module, args) -> None:
        self.calls += 1
        if self.calls == self.at:
            if self.fail:
                raise RuntimeError(f"boom at forward {self.calls}")
            self.reached.set()
            assert self.release.wait(WAIT), "the test never released the model"


@pytest.fixture
def store(tmp_path):
    store = MemoryStore.local(tmp_path / "memory", encoder=HashEncoder(64))
    yield store
    store.close()


def _roles(store: MemoryStore, user: str) -> list[str]:
    return sorted(record.role for record in store.for_user(user).all())


# --------------------------------------------------------------------------- the engine (D2)
def test_a_stream_left_early_says_cancelled_and_one_drained_says_why_it_ended():
    gen = _gen()
    hold = Hold()
    stream = gen.stream([{"role": "user", "content": SAY}], logits_processor=[hold])
    hold.event = stream._cancel  # the event leaving the stream sets
    for _ in stream:
        break
    assert stream.result.finish_reason == "cancelled"
    assert stream.result.usage.generated_tokens < 40
    drained = gen.stream([{"role": "user", "content": SAY}])
    assert "".join(drained) == gen.generate([{"role": "user", "content": SAY}]).text
    assert drained.result.finish_reason == "length"


def test_an_async_stream_left_early_says_cancelled():
    gen = _gen()
    hold = Hold()
    stream = gen.astream([{"role": "user", "content": SAY}], logits_processor=[hold])
    hold.event = stream._cancel  # the event leaving the stream sets

    async def main() -> None:
        async for _ in stream:
            break
        await asyncio.to_thread(stream._thread.join, WAIT)

    asyncio.run(main())
    assert stream.result.finish_reason == "cancelled"


# --------------------------------------------------------------------------- a session (D3)
def test_a_session_keeps_only_what_the_consumer_of_an_abandoned_stream_was_handed():
    gen = _gen()
    user1, user2 = {"role": "user", "content": SAY}, {"role": "user", "content": "I live in Lisbon."}
    session = RecallSession(gen)
    hold = Hold()
    stream = session.stream([user1], logits_processor=[hold])
    hold.event = stream._cancel  # the event leaving the stream sets
    seen = ""
    for piece in stream:
        seen += piece
        break
    assert seen and session.messages[-1] == {"role": "assistant", "content": seen}
    assert stream.result.text == seen and stream.result.finish_reason == "cancelled"
    reply = session.reply("I live in Lisbon.")  # a new message only: the session's own history goes on
    as_seen = gen.generate([user1, {"role": "assistant", "content": seen}, user2])
    assert torch.equal(reply.sequences, as_seen.sequences)


def test_a_session_keeps_a_constrained_reply_left_early_as_handed_not_cut_at_a_stop_string():
    """A stop string does not cut a constrained reply; the session's trim of an abandoned stream cut it all
    the same (its output arguments were set aside): '{"city' handed, '{' kept (a reviewer, 2026-12-07)."""
    from recall_core import RecallConfig

    model, tokenizer = tiny_model("llama")
    gen = RecallGenerator(model, tokenizer, config=RecallConfig(recall_policy="off"))
    schema = {"type": "object", "properties": {"city": {"type": "string", "maxLength": 8}}, "required": ["city"]}
    shaped = {"type": "json_schema", "json_schema": {"name": "place", "schema": schema}}
    session = RecallSession(gen)
    stream = session.stream([{"role": "user", "content": "Where do I live?"}], response_format=shaped, stop=['"'],
                            max_new_tokens=60)  # fmt: skip
    seen = []
    for piece in stream:
        seen.append(piece)
        if len(seen) == 3:
            break
    assert '"' in "".join(seen)
    assert session.messages[-1]["content"] == stream.result.text == "".join(seen)


@pytest.mark.parametrize("pieces", [2, 3])
def test_markers_the_loop_took_back_count_for_no_text_the_consumer_was_handed(pieces):
    """Under "uncertainty" the loop writes <recall> and, finding nothing, takes it back: the streamer had
    counted it, and the session kept one reply id more than its consumer saw per marker (until
    2026-12-07: a reviewer)."""
    from recall_core import RecallConfig
    from tests.helpers.memories import ListMemory

    model, tokenizer = tiny_model("llama")
    config = RecallConfig(recall_policy="uncertainty", uncertainty_threshold=0.1, min_score=0.99, max_recalls=8)
    gen = RecallGenerator(model, tokenizer, memory=ListMemory({"a": "zzz"}), config=config,
                          generation_defaults={"max_new_tokens": 30, "min_new_tokens": 30})  # fmt: skip
    session = RecallSession(gen)
    stream = session.stream([{"role": "user", "content": SAY}])
    seen = []
    for piece in stream:
        seen.append(piece)
        if len(seen) == pieces:
            break
    assert any(not r.injected and r.trigger == "uncertainty" for r in stream.result.recalls)  # taken back
    assert session.messages[-1]["content"] == stream.result.text == "".join(seen)


# --------------------------------------------------------------------------- LangChain (D1, D5, D6)
def test_langchain_stream_left_early_or_failing_writes_the_users_turn_once(store):
    gen = _gen(12)
    chat = ChatRecall(generator=gen, store=store, user_id="ada", max_tokens=12,
                      sessions=SessionConfig(max_cache_tokens=220))  # fmt: skip
    seen = next(iter(chat.stream([HumanMessage(SAY)], thread_id="t"))).content
    assert _roles(store, "ada") == ["user"]  # the user's turn, not the partial reply
    history = [HumanMessage(SAY), AIMessage(seen)]
    for text in FILL:
        history += [HumanMessage(text), AIMessage(chat.invoke(history + [HumanMessage(text)], thread_id="t").content)]
    assert chat.session_pool.get(("ada", "t")).evicted_messages  # the abandoned exchange was evicted...
    texts = [r.text for r in store.for_user("ada").all()]
    assert texts.count(SAY) == 1 and seen not in texts  # ...and not written again, nor its partial reply

    gate = Gate(gen.model, fail=True)
    with pytest.raises(RuntimeError, match="boom"):
        list(chat.stream([HumanMessage(SAY)], thread_id="t2", user_id="bob"))
    gate.handle.remove()
    assert _roles(store, "bob") == ["user"]


async def _cancel_at(gate: Gate, make) -> None:
    """Run ``make()`` as a task, cancel it while the model is held at the gate, then let the model go on."""
    task = asyncio.ensure_future(make())
    assert await asyncio.to_thread(gate.reached.wait, WAIT)
    task.cancel()
    for _ in range(5):  # the task takes its cancellation (and sets its stop event) before the model goes on
        await asyncio.sleep(0)
    gate.release.set()
    with pytest.raises(asyncio.CancelledError):
        await task


def test_langchain_astream_cancelled_writes_the_users_turn(store):
    gen = _gen()
    chat = ChatRecall(generator=gen, store=store, user_id="ada", max_tokens=40)

    async def consume() -> None:
        async for _ in chat.astream(SAY, thread_id="t"):
            pass

    gate = Gate(gen.model)
    asyncio.run(_cancel_at(gate, consume))
    gate.handle.remove()
    assert _roles(store, "ada") == ["user"]


def test_langchain_ainvoke_cancelled_stops_writes_the_users_turn_and_keeps_no_reply(store):
    gen = _gen()
    chat = ChatRecall(generator=gen, store=store, user_id="ada", max_tokens=40)
    gate = Gate(gen.model)
    asyncio.run(_cancel_at(gate, lambda: chat.ainvoke(SAY, thread_id="t")))
    gate.handle.remove()
    assert gate.calls < 10  # stopped at the next token, not after 40
    assert _roles(store, "ada") == ["user"]
    session = chat.session_pool.get(("ada", "t"))
    assert session.turns == 1 and session.messages[-1] == {"role": "assistant", "content": ""}  # nothing unseen


def test_a_cancelled_call_waiting_for_its_session_does_not_wait_for_the_call_before_it(store):
    """A cancelled ``ainvoke`` queued behind another generation on its thread waited for that whole
    generation (3.1 s in the review) before its ``CancelledError``; now it returns at once and its
    thread stops at its first token once it gets the session."""
    gen = _gen()
    chat = ChatRecall(generator=gen, store=store, user_id="ada", max_tokens=40)
    gate = Gate(gen.model)

    async def scenario() -> None:
        first = asyncio.ensure_future(chat.ainvoke(SAY, thread_id="t"))
        assert await asyncio.to_thread(gate.reached.wait, WAIT)
        second = asyncio.ensure_future(chat.ainvoke("I live in Lisbon.", thread_id="t"))
        await asyncio.sleep(0.2)  # queued on the session the first call holds
        second.cancel()
        with pytest.raises(asyncio.CancelledError):
            await second
        assert not gate.release.is_set()  # it returned while the first call was still generating
        gate.release.set()
        await first

    asyncio.run(scenario())
    gate.handle.remove()


def test_a_base_model_s_reply_is_marked_written_by_its_own_receipt():
    """With ``base_replies``, the base model's reply never filled the call's receipt, so the adapters'
    ``mark_written(receipt)`` left it unmarked (written again at eviction)."""
    from recall_core.config import RecallConfig
    from recall_core.session.writes import CallReceipt

    model, tokenizer = tiny_model("llama")
    base, _ = tiny_model("llama")
    gen = RecallGenerator(model, tokenizer, base_model=base, config=RecallConfig(base_replies=True),
                          generation_defaults={"max_new_tokens": 8, "do_sample": False})  # fmt: skip
    session, receipt = RecallSession(gen), CallReceipt()
    session.reply(SAY, receipt=receipt)
    assert receipt.user is not None and receipt.reply is not None
    session.mark_written(("user", "assistant"), receipt)
    assert receipt.reply.written and len(session.written_log) == 2


def test_langchain_marks_its_own_exchange_written_when_another_call_came_between(store):
    """A stream drained after a second call on its thread marks its own user message written (in
    the session's written log: an eviction does not write it again), not the second call's."""
    gen = _gen(12)
    chat = ChatRecall(generator=gen, store=store, user_id="ada", max_tokens=12)
    other = "I live in Lisbon and I work as a nurse."
    stream = chat.stream([HumanMessage(SAY)], thread_id="t")
    first = next(stream)
    chat.invoke([HumanMessage(SAY), AIMessage(first.content), HumanMessage(other)], thread_id="t")
    assert "".join(c.content for c in stream)  # drained: its exchange is written now
    session = chat.session_pool.get(("ada", "t"))
    said = [m for u in session._units for m in u.messages if m.role == "user"]
    assert [m.content for m in said] == [SAY, other]
    assert [m.key in session.written_log for m in said] == [True, True]
    assert sorted(r.text for r in store.for_user("ada").all() if r.role == "user") == sorted([SAY, other])


# --------------------------------------------------------------------------- LlamaIndex (D1, D4, D5)
def test_llamaindex_streams_left_early_or_failing_write_the_users_turn(store):
    gen = _gen(12)
    llm = RecallLLM(generator=gen, store=store, user_id="ada", max_new_tokens=12, write_memory=True)
    said = [ChatMessage(role="user", content=SAY)]
    next(iter(llm.stream_chat(said, user_id="u1", thread_id="t")))
    next(iter(llm.stream_complete(SAY, user_id="u2")))
    assert _roles(store, "u1") == _roles(store, "u2") == ["user"]
    gate = Gate(gen.model, fail=True)
    with pytest.raises(RuntimeError, match="boom"):
        list(llm.stream_chat(said, user_id="u3", thread_id="t"))
    gate.handle.remove()
    assert _roles(store, "u3") == ["user"]


def test_llamaindex_astream_chat_and_achat_cancelled_write_the_users_turn_and_stop(store):
    gen = _gen()
    llm = RecallLLM(generator=gen, store=store, user_id="ada", max_new_tokens=40, write_memory=True)
    said = [ChatMessage(role="user", content=SAY)]

    async def consume() -> None:
        async for _ in await llm.astream_chat(said, user_id="u1", thread_id="t"):
            pass

    for user, make in (("u1", consume), ("u2", lambda: llm.achat(said, user_id="u2", thread_id="t")),
                       ("u3", lambda: llm.acomplete(SAY, user_id="u3"))):  # fmt: skip
        gate = Gate(gen.model)
        asyncio.run(_cancel_at(gate, make))
        gate.handle.remove()
        assert _roles(store, user) == ["user"], user
        if user != "u1":
            assert gate.calls < 10, user  # stopped at the next token, not after 40


def test_llamaindex_is_a_function_calling_model_only_with_a_template_that_renders_tools():
    from llama_index.core.agent.workflow import AgentWorkflow

    model, tokenizer = tiny_model("llama")
    model.config.max_position_embeddings = 2048  # the tools described in the system message are long
    plain = RecallLLM(generator=RecallGenerator(model, tokenizer), max_new_tokens=120)
    assert not plain.metadata.is_function_calling_model
    flow = AgentWorkflow.from_tools_or_functions([weather], llm=plain)
    assert type(flow.agents[flow.root_agent]).__name__ == "ReActAgent"
    model, tokenizer = tiny_model("llama")
    model.config.max_position_embeddings = 2048
    tokenizer.chat_template = SMOLLM2_TOOLS_TEMPLATE
    tools = RecallLLM(generator=RecallGenerator(model, tokenizer), max_new_tokens=120)
    assert tools.metadata.is_function_calling_model
    for llm in (plain, tools):  # a forced call, on either template
        person = llm.structured_predict(Person, PromptTemplate("Extract the person: {text}"), text="Ada is 36.")
        assert isinstance(person, Person)
        person = asyncio.run(llm.astructured_predict(Person, PromptTemplate("Extract: {text}"), text="Ada is 36."))
        assert isinstance(person, Person)


def test_structured_predict_reports_to_llamaindex_instrumentation_where_the_template_has_tools():
    """The forced-call override skipped LlamaIndex's span and its structured-predict events on every
    template (a review of the change); where the template renders tools LlamaIndex's own runs now."""
    from llama_index.core.instrumentation import get_dispatcher
    from llama_index.core.instrumentation.event_handlers import BaseEventHandler

    seen: list[str] = []

    class Seen(BaseEventHandler):
        @classmethod
        def class_name(cls) -> str:
            return "Seen"

        def handle(self, event, **kwargs) -> None:
            seen.append(type(event).__name__)

    model, tokenizer = tiny_model("llama")
    model.config.max_position_embeddings = 2048
    tokenizer.chat_template = SMOLLM2_TOOLS_TEMPLATE
    llm = RecallLLM(generator=RecallGenerator(model, tokenizer), max_new_tokens=120)
    dispatcher, handler = get_dispatcher(), Seen()
    dispatcher.add_event_handler(handler)
    try:
        assert isinstance(llm.structured_predict(Person, PromptTemplate("Name: {text}"), text="Ada"), Person)
    finally:
        dispatcher.event_handlers.remove(handler)
    assert [e for e in seen if "StructuredPredict" in e] == ["LLMStructuredPredictStartEvent", "LLMStructuredPredictEndEvent"]

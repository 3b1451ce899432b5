"""ChatRecall / RecallLLM with a real MemoryStore (Chroma, hash encoder): writing exchanges, per-user recall."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler

from langchain_recall import ChatRecall, RecallLLM
from recall_core import RECALL_TOKEN
from tests.helpers.adapters import HalfDownStore
from tests.helpers.memories import FixedMemory

FACT = "My dog is called Biscuit."
QUESTION = "What is my dog called?"


def test_chat_writes_each_exchange_and_recalls_it_later(generator, store):
    chat = ChatRecall(generator=generator, store=store, user_id="ada", session_id="s1", max_tokens=8)
    first = chat.invoke(FACT)
    assert not any(r["injected"] for r in first.response_metadata["recalls"])  # a new user: nothing yet
    records = store.for_user("ada").all()
    assert [(r.role, r.session_id) for r in records][:1] == [("user", "s1")]
    assert records[0].text == FACT
    assert {r.role for r in records} <= {"user", "assistant"}
    later = ChatRecall(generator=generator, store=store, user_id="ada", max_tokens=8).invoke(QUESTION)
    recall = later.response_metadata["recalls"][0]  # the prompt's; a random model may emit more
    assert recall["injected"] and FACT in recall["text"] and recall["query"] == QUESTION


def test_a_question_is_not_written_unless_asked_for(generator, store):
    chat = ChatRecall(generator=generator, store=store, user_id="ada", write_roles=("user",), max_tokens=4)
    written = chat.invoke(QUESTION).response_metadata["memory_written"]
    assert written == [] and store.for_user("ada").count() == 0
    chat.invoke(f"Hi again. {QUESTION}")  # a greeting is no fact either
    chat.invoke("My dog Rex is sick, what should I do?")  # what is said before the question is
    assert [r.text for r in store.for_user("ada").all()] == ["My dog Rex is sick."]
    asks = ChatRecall(generator=generator, store=store, user_id="bo", write_roles=("user",), write_questions=True,
                      max_tokens=4)  # fmt: skip
    asks.invoke(QUESTION)
    assert [r.text for r in store.for_user("bo").all()] == [QUESTION]


def test_write_memory_false_writes_nothing(generator, store):
    ChatRecall(generator=generator, store=store, user_id="ada", write_memory=False, max_tokens=4).invoke(FACT)
    assert store.for_user("ada").count() == 0


def test_write_memory_per_call(generator, store):
    chat = ChatRecall(generator=generator, store=store, user_id="ada", max_tokens=4)
    off = chat.invoke(FACT, write_memory=False)
    assert store.for_user("ada").count() == 0 and "memory_written" not in off.response_metadata
    quiet = ChatRecall(generator=generator, store=store, user_id="ada", write_memory=False, max_tokens=4)
    assert quiet.invoke(FACT, write_memory=True).response_metadata["memory_written"]
    assert [r.text for r in store.for_user("ada").all() if r.role == "user"] == [FACT]
    chunks = list(chat.stream("My cat is called Pepper.", write_memory=False))
    assert "memory_written" not in chunks[-1].response_metadata
    assert [r.text for r in store.for_user("ada").all() if r.role == "user"] == [FACT]


def test_recall_and_write_memory_per_call_in_a_chain(generator, store):
    """In a chain a call's switches come from ``configurable`` (kwargs of a chain's invoke go elsewhere)."""
    from langchain_core.prompts import ChatPromptTemplate

    store.for_user("ada").add(FACT)
    chain = ChatPromptTemplate.from_messages([("human", "{input}")]) | ChatRecall(
        generator=generator, store=store, user_id="ada", max_tokens=4
    )
    on = chain.invoke({"input": QUESTION})
    assert on.response_metadata["recalls"][0]["injected"] and on.response_metadata["memory_written"]
    off = chain.invoke({"input": QUESTION}, {"configurable": {"recall": "off", "write_memory": False}})
    assert off.response_metadata["recalls"] == [] and "memory_written" not in off.response_metadata
    direct = ChatRecall(generator=generator, store=store, user_id="ada", max_tokens=4).invoke(
        QUESTION, {"configurable": {"recall": "off"}}
    )
    assert direct.response_metadata["recalls"] == []


def test_a_thread_is_the_session_of_what_is_written(generator, store):
    """``configurable.thread_id`` (and ``thread_id=``) is the session recorded with the memories,
    unless a ``session_id`` is given; evicted turns get it too."""
    chat = ChatRecall(generator=generator, store=store, user_id="ada", max_tokens=4)
    chat.invoke(FACT, config={"configurable": {"thread_id": "t-42"}})
    chat.invoke("My cat is called Pepper.", thread_id="t-43")
    chat.invoke("I live in Porto.", thread_id="t-44", session_id="mine")
    sessions = {r.text: r.session_id for r in store.for_user("ada").all() if r.role == "user"}
    assert sessions == {FACT: "t-42", "My cat is called Pepper.": "t-43", "I live in Porto.": "mine"}
    named = ChatRecall(generator=generator, store=store, user_id="bo", session_id="fixed", max_tokens=4)
    named.invoke(FACT, config={"configurable": {"thread_id": "t-45"}})
    assert {r.session_id for r in store.for_user("bo").all()} == {"fixed"}


def test_users_are_kept_apart_and_chosen_per_call(generator, store):
    chat = ChatRecall(generator=generator, store=store, max_tokens=4)
    chat.invoke(FACT, user_id="ada")
    bo = chat.bind(user_id="bo").invoke(QUESTION)
    assert bo.response_metadata["recalls"][0]["reason"] == "no memory"
    ada = chat.invoke(QUESTION, user_id="ada")
    assert FACT in ada.response_metadata["recalls"][0]["text"]
    with pytest.raises(ValueError, match="user_id"):
        chat.invoke(QUESTION)  # a store and no user: refuse rather than guess


def test_markers_are_not_written_and_streams_write_too(generator, store):
    chat = ChatRecall(generator=generator, store=store, user_id="ada", recall="explicit", max_tokens=4)
    "".join(c.content for c in chat.stream(FACT + RECALL_TOKEN))
    user_turns = [r.text for r in store.for_user("ada").all() if r.role == "user"]
    assert user_turns == [FACT]

    async def later():
        return [c async for c in chat.astream("My cat is called Pepper.")]

    asyncio.run(later())
    assert sorted(r.text for r in store.for_user("ada").all() if r.role == "user") == sorted(
        [FACT, "My cat is called Pepper."]
    )


def test_async_invoke_writes(generator, store):
    chat = ChatRecall(generator=generator, store=store, user_id="ada", max_tokens=4)
    asyncio.run(chat.ainvoke(FACT))
    assert any(r.text == FACT for r in store.for_user("ada").all())


def test_llm_reads_the_store(generator, store):
    store.for_user("ada").add(FACT)
    llm = RecallLLM(generator=generator, store=store, user_id="ada", use_chat_template=True, max_tokens=4)
    info = llm.generate([QUESTION]).generations[0][0].generation_info
    assert FACT in info["recalls"][0]["text"] and info["recalls"][0]["score"] > 0.2


def test_written_ids_are_reported(generator, store):
    message = ChatRecall(generator=generator, store=store, user_id="ada", max_tokens=4).invoke(FACT)
    assert sorted(message.response_metadata["memory_written"]) == sorted(
        r.id for r in store.for_user("ada").all()
    )
    chunks = list(
        ChatRecall(generator=generator, store=store, user_id="ada", max_tokens=4).stream("I live in Lisbon.")
    )
    assert len(chunks[-1].response_metadata["memory_written"]) >= 1


def test_a_failed_write_keeps_the_reply(generator):
    store = HalfDownStore(FixedMemory(FACT))  # searches work, writes fail
    chat = ChatRecall(generator=generator, store=store, user_id="ada", max_tokens=4)
    with pytest.warns(RuntimeWarning, match="writing it to memory failed"):
        message = chat.invoke(QUESTION)
    assert isinstance(message.content, str) and message.response_metadata["recalls"][0]["injected"]
    assert "unreachable" in message.response_metadata["memory_write_error"]


def test_a_refused_message_reports_the_reply_it_wrote(generator, store):
    """The memory refuses a message with a NUL in it; the reply is written all the same, and its id
    is reported beside the error."""
    chat = ChatRecall(generator=generator, store=store, user_id="ada", max_tokens=4, write_roles=("user", "assistant"))
    with pytest.warns(RuntimeWarning, match="writing it to memory failed") as caught:
        message = chat.invoke("My cat is called Miso.\x00")
    assert caught[0].filename == __file__  # the caller's line, not the adapter's
    meta = message.response_metadata
    assert "1 of 2 turn(s) were refused" in meta["memory_write_error"] and "turn 0 (user)" in meta["memory_write_error"]
    stored = store.for_user("ada").all()
    assert meta["memory_written"] == [r.id for r in stored] and {r.role for r in stored} == {"assistant"}


def test_an_agents_next_step_writes_its_reply_not_the_question_again(tools_generator, store):
    """A call that goes on after a tool's result (what an agent's loop sends) adds only its reply:
    the user's question was written by the step that answered it first."""
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    chat = ChatRecall(generator=tools_generator, store=store, user_id="ada", max_tokens=4, write_questions=True)
    chat.invoke([HumanMessage(QUESTION)])
    (asked,) = [r.id for r in store.for_user("ada").all() if r.role == "user"]
    call = {"name": "weather", "args": {"city": "Porto"}, "id": "c1", "type": "tool_call"}
    step = chat.invoke([HumanMessage(QUESTION), AIMessage("", tool_calls=[call]), ToolMessage("sunny", tool_call_id="c1")])
    written = step.response_metadata.get("memory_written", [])
    assert asked not in written and len(written) == bool(step.content.strip())
    assert [r.text for r in store.for_user("ada").all() if r.role == "user"] == [QUESTION]


def test_the_llm_reads_configurable_when_invoked_batched_or_streamed_directly(generator, store):
    """Outside a chain the running config is empty: invoke's own config says the user and the switches."""
    store.for_user("ada").add(FACT)
    llm = RecallLLM(generator=generator, store=store, max_tokens=4)
    ada = {"configurable": {"user_id": "ada"}}
    ended: list[Any] = []

    class Recalls(BaseCallbackHandler):
        def on_llm_end(self, response: Any, **kwargs: Any) -> None:
            ended.extend(g[0].generation_info["recalls"] for g in response.generations)

    for run in (lambda c: llm.invoke(QUESTION, c), lambda c: llm.batch([QUESTION, QUESTION], c),
                lambda c: "".join(llm.stream(QUESTION, c)), lambda c: asyncio.run(llm.ainvoke(QUESTION, c)),
                lambda c: asyncio.run(llm.abatch([QUESTION], c))):  # fmt: skip
        ended.clear()
        run({**ada, "callbacks": [Recalls()]})
        assert ended and all(FACT in r[0]["text"] for r in ended)
    ended.clear()
    llm.invoke(QUESTION, {"configurable": {"user_id": "ada", "recall": "off"}, "callbacks": [Recalls()]})
    assert ended == [[]]  # recall="off" from the config: nothing searched
    ended.clear()
    llm.batch([QUESTION, QUESTION], [{**ada, "callbacks": [Recalls()]},
                                     {"configurable": {"user_id": "bo"}, "callbacks": [Recalls()]}])  # fmt: skip
    assert sorted(r[0]["reason"] or "found" for r in ended) == ["found", "no memory"]  # each input its own user
    with pytest.raises(ValueError, match="user_id"):
        llm.invoke(QUESTION)
    # a chain-wide switch for the chat model (the LLM writes no memory) is left alone, not a TypeError
    # (until 2026-12-07, a reviewer), in every way of calling it
    switches = {"configurable": {"user_id": "ada", "write_memory": False, "session_id": "s"}}
    for run in (lambda c: llm.invoke(QUESTION, c), lambda c: llm.batch([QUESTION], c),
                lambda c: "".join(llm.stream(QUESTION, c)), lambda c: asyncio.run(llm.ainvoke(QUESTION, c))):  # fmt: skip
        assert run(switches)



def test_a_uuid_thread_id_is_taken_as_its_string_and_the_exchange_is_written(generator, store):
    """LangGraph's examples pass a ``uuid.UUID`` as thread_id: it was taken as it was, and every write
    of its calls was refused (a TurnsRefused warning, ``memory_written=[]``)."""
    import uuid
    import warnings

    thread = uuid.uuid4()
    chat = ChatRecall(generator=generator, store=store, user_id="ada", max_tokens=4)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        reply = chat.invoke(FACT, {"configurable": {"thread_id": thread}})
    assert reply.response_metadata["memory_written"] and "memory_write_error" not in reply.response_metadata
    assert [(r.text, r.session_id) for r in store.for_user("ada").all() if r.role == "user"] == [(FACT, str(thread))]
    assert chat.session_pool.keys() == [("ada", str(thread))] and chat.close_session(thread)


@pytest.mark.parametrize(
    ("call", "configurable", "field"),
    [
        ({"session_id": "  "}, {}, "session_id"),
        ({"session_id": 1.5}, {}, "session_id"),
        ({"session_id": ["x"]}, {}, "session_id"),
        ({"session_id": "a\x00b"}, {}, "session_id"),
        ({"thread_id": ""}, {}, "thread_id"),
        ({"thread_id": 1.5}, {}, "thread_id"),
        ({"thread_id": ["x"]}, {}, "thread_id"),
        ({}, {"thread_id": ""}, "thread_id"),
        ({}, {"thread_id": 1.5}, "thread_id"),
        ({}, {"thread_id": "a\x00b"}, "thread_id"),
    ],
)
def test_a_bad_thread_or_session_id_is_refused_before_anything_is_generated(
    generator, store, monkeypatch, call, configurable, field
):
    """Taken as they were, they cost every write of the call (the memory refused it, for good); a list
    raised a bare TypeError."""

    def generate(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("generated before the call's arguments were checked")

    monkeypatch.setattr(generator, "generate", generate)
    chat = ChatRecall(generator=generator, store=store, user_id="ada", max_tokens=4)
    with pytest.raises(ValueError, match=field):
        chat.invoke(FACT, {"configurable": configurable}, **call)
    assert store.for_user("ada").count() == 0 and chat._session_pool is None


def test_a_global_llm_cache_never_serves_one_user_s_reply_to_another(generator, store, monkeypatch):
    """LangChain's cache key is the prompt and the model's settings, not whose memory a call reads:
    with ``set_llm_cache`` on, bob got ada's reply, her recalled memories and her written ids
    (a reviewer, 2026-12-07). The adapters consult no cache, and refuse one given to them."""
    from langchain_core.caches import InMemoryCache
    from langchain_core.globals import get_llm_cache, set_llm_cache

    store.writer.add_turn("ada", "user", "My dog is called Biscuit.", session_id="old")
    store.writer.add_turn("bob", "user", "My cat is called Tom.", session_id="old")
    before = get_llm_cache()
    set_llm_cache(InMemoryCache())
    try:
        chat = ChatRecall(generator=generator, store=store, max_tokens=4)
        llm = RecallLLM(generator=generator, store=store, max_tokens=4)
        for user, pet in (("ada", "Biscuit"), ("bob", "Tom")):
            reply = chat.invoke("What is my pet called?", {"configurable": {"user_id": user}})
            assert pet in reply.response_metadata["recalls"][0]["text"]
            result = llm.generate(["What is my pet called?"], user_id=user)
            assert pet in result.generations[0][0].generation_info["recalls"][0]["text"]
    finally:
        set_llm_cache(before)
    for model in (ChatRecall, RecallLLM):
        with pytest.raises(ValueError, match="cache must be False or None"):
            model(generator=generator, store=store, cache=True)
        with pytest.raises(ValueError, match="cache must be False or None"):
            model(generator=generator, store=store, cache=InMemoryCache())


def test_runnable_with_message_history_writes_each_conversation_under_its_session(generator, store):
    """``RunnableWithMessageHistory`` names its conversation ``configurable.session_id``: until
    2026-12-07 it was not read, and every conversation was written under one default session."""
    from langchain_core.chat_history import InMemoryChatMessageHistory
    from langchain_core.runnables.history import RunnableWithMessageHistory

    histories: dict[str, InMemoryChatMessageHistory] = {}
    chat = RunnableWithMessageHistory(
        ChatRecall(generator=generator, store=store, user_id="ada", write_roles=("user",), max_tokens=4),
        lambda session_id: histories.setdefault(session_id, InMemoryChatMessageHistory()),
    )  # fmt: skip
    chat.invoke("My dog is called Biscuit.", {"configurable": {"session_id": "conv-1"}})
    chat.invoke("My cat is called Tom.", {"configurable": {"session_id": "conv-2"}})
    written = {r.text: r.session_id for r in store.for_user("ada").all()}
    assert written == {"My dog is called Biscuit.": "conv-1", "My cat is called Tom.": "conv-2"}

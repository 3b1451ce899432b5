"""The adapters keep a KV-cache session per (user, thread): LangChain kwargs and configurable,
LangGraph threads, LlamaIndex chat engines; LRU bounds, reset and close, serialized calls."""

from __future__ import annotations

import asyncio
import time

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from langchain_recall import ChatRecall
from recall_core import RecallConfig, SessionConfig
from tests.helpers.adapters import SlowMemory

FACT = "My dog is called Biscuit."
HISTORY = [SystemMessage("You are kind."), HumanMessage(FACT)]


def _cache_read(message: AIMessage) -> int:
    return message.usage_metadata["input_token_details"]["cache_read"]


def _two_turns(chat: ChatRecall, **kwargs):
    first = chat.invoke(HISTORY, **kwargs)
    second = chat.invoke([*HISTORY, first, HumanMessage("Where do I live?")], **kwargs)
    return first, second


def test_a_thread_id_keeps_the_cache_between_calls(generator):
    chat = ChatRecall(generator=generator, max_tokens=6)
    first, second = _two_turns(chat, thread_id="t1")
    assert _cache_read(first) == 0 and _cache_read(second) > 0
    report = second.response_metadata["session"]
    assert report["reused_tokens"] == _cache_read(second) and report["reason"] is None
    stateless = ChatRecall(generator=generator, max_tokens=6, sessions=None)
    expected = stateless.invoke([*HISTORY, first, HumanMessage("Where do I live?")])
    assert second.content == expected.content and "session" not in expected.response_metadata
    assert chat.session_pool.keys() == [(None, "t1")]


def test_no_thread_id_no_session(generator):
    chat = ChatRecall(generator=generator, max_tokens=4)
    _, second = _two_turns(chat)
    assert _cache_read(second) == 0 and chat.session_pool is not None and len(chat.session_pool) == 0


def test_thread_and_user_come_from_the_configurable(generator):
    chat = ChatRecall(generator=generator, max_tokens=4)
    config = {"configurable": {"thread_id": "t9", "user_id": "ada"}}
    first = chat.invoke(HISTORY, config=config)
    second = chat.invoke([*HISTORY, first, HumanMessage("Hi")], config=config)
    assert _cache_read(second) > 0 and chat.session_pool.keys() == [("ada", "t9")]
    streamed = list(chat.stream([*HISTORY, first, HumanMessage("Hi"), second, HumanMessage("Bye")], config=config))
    assert _cache_read(streamed[-1]) > 0


def test_a_langgraph_thread_is_a_session(generator):
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import START, MessagesState, StateGraph

    chat = ChatRecall(generator=generator, max_tokens=6)

    def answer(state: MessagesState):
        return {"messages": [chat.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("answer", answer)
    graph.add_edge(START, "answer")
    app = graph.compile(checkpointer=InMemorySaver())
    one, two = {"configurable": {"thread_id": "one"}}, {"configurable": {"thread_id": "two"}}
    app.invoke({"messages": [HumanMessage(FACT)]}, one)
    app.invoke({"messages": [HumanMessage("Hello")]}, two)
    state = app.invoke({"messages": [HumanMessage("What is my dog called?")]}, one)
    assert _cache_read(state["messages"][-1]) > 0
    assert sorted(chat.session_pool.keys()) == [(None, "one"), (None, "two")]


def test_sessions_are_bounded_in_count_and_bytes(generator):
    chat = ChatRecall(generator=generator, max_tokens=4, sessions=SessionConfig(max_sessions=2))
    for thread in ("a", "b", "c"):
        chat.invoke(HISTORY, thread_id=thread)
    assert chat.session_pool.keys() == [(None, "b"), (None, "c")]  # the least recently used went
    chat.invoke(HISTORY, thread_id="b")
    chat.invoke(HISTORY, thread_id="d")
    assert chat.session_pool.keys() == [(None, "b"), (None, "d")]
    one = chat.session_pool.get((None, "b")).cache_bytes
    small = ChatRecall(generator=generator, max_tokens=4, sessions=SessionConfig(max_bytes=one * 3 // 2))
    small.invoke(HISTORY, thread_id="x")
    small.invoke(HISTORY, thread_id="y")
    assert small.session_pool.keys() == [(None, "y")] and small.session_pool.nbytes <= one * 3 // 2


def test_reset_and_close_session_free_them(generator):
    chat = ChatRecall(generator=generator, max_tokens=4, user_id="ada")
    chat.invoke(HISTORY, thread_id="a")
    chat.invoke(HISTORY, thread_id="b")
    assert chat.close_session("a") and not chat.close_session("a")
    assert chat.session_pool.keys() == [("ada", "b")]
    chat.reset()
    assert len(chat.session_pool) == 0
    _, second = _two_turns(chat, thread_id="b")  # a closed session starts again on the next call
    assert _cache_read(second) > 0


def test_calls_on_one_thread_are_serialized_other_threads_run_alongside(generator):
    chat = ChatRecall(generator=generator, memory=SlowMemory(FACT, delay=0.4), max_tokens=2)

    async def two(first: str, second: str) -> float:
        start = time.perf_counter()
        # questions: the memory is searched for them (a message that asks nothing may not be: ask_on_statements)
        await asyncio.gather(chat.ainvoke("Where do I live?", thread_id=first),
                             chat.ainvoke("What is my dog called?", thread_id=second))
        return time.perf_counter() - start

    assert asyncio.run(two("same", "same")) >= 0.8  # one after the other
    assert asyncio.run(two("left", "right")) < 0.75  # side by side


def test_evicted_history_is_written_once_to_the_store(generator, store):
    chat = ChatRecall(generator=generator, store=store, user_id="ada", max_tokens=6,
                      recall_config=RecallConfig(max_recalls=0), sessions=SessionConfig(max_cache_tokens=120))  # fmt: skip
    history = [SystemMessage("You are kind.")]
    for i in range(6):
        history.append(HumanMessage(f"Fact number {i}: my item {i} is blue."))
        history.append(AIMessage(f"Noted {i}."))
    history.append(HumanMessage("What colour is item 0?"))
    reply = chat.invoke(history, thread_id="long")  # the old turns do not fit: evicted unread, written
    report = reply.response_metadata["session"]
    assert report["evicted_messages"] >= 6 and report["memory_written"]
    assert "did not fit" in report["reason"]
    texts = [r.text for r in store.for_user("ada").all()]
    assert "Fact number 0: my item 0 is blue." in texts
    assert texts.count("Fact number 0: my item 0 is blue.") == 1
    # The exchanges ChatRecall writes itself are not written again when they are evicted later.
    history += [reply]
    for question in ("And item 1?", "Thanks!", "Bye!", "One more thing."):
        history.append(HumanMessage(question))  # "And item 1?" is said off the record: never written
        history.append(chat.invoke(history, thread_id="long", write_memory=question != "And item 1?"))
    assert chat.session_pool.get(("ada", "long")).evicted_messages >= 16  # "And item 1?" and its reply too
    texts = [r.text for r in store.for_user("ada").all()]
    # A question is not written (write_questions=False), neither after its reply nor when evicted.
    assert texts.count("What colour is item 0?") == 0 and texts.count("Thanks!") == 1
    assert texts.count("Fact number 5: my item 5 is blue.") == 1  # kept at first, written when evicted
    assert "And item 1?" not in texts
    assert {r.session_id for r in store.for_user("ada").all()} == {"long"}  # the thread is the session


def test_evicted_history_is_written_under_the_calls_session_id(generator, store):
    """Until 2026-12-07 turns evicted went under the thread id, the call's own exchange under its
    ``session_id`` (``RunnableWithMessageHistory`` names its conversation so; a reviewer)."""
    chat = ChatRecall(generator=generator, store=store, user_id="ada", max_tokens=6,
                      recall_config=RecallConfig(max_recalls=0), sessions=SessionConfig(max_cache_tokens=120))  # fmt: skip
    history = []
    for i in range(6):
        history += [HumanMessage(f"Fact number {i}: my item {i} is blue."), AIMessage(f"Noted {i}.")]
    history.append(HumanMessage("Thanks for listening to all of that."))
    reply = chat.invoke(history, {"configurable": {"thread_id": "T", "session_id": "S"}})
    assert reply.response_metadata["session"]["evicted_messages"] >= 6
    assert {r.session_id for r in store.for_user("ada").all()} == {"S"}


# ---------------------------------------------------------------------- LlamaIndex
def test_a_llamaindex_chat_engine_keeps_its_session(generator, store):
    from llama_index.core.chat_engine import SimpleChatEngine
    from llama_index.core.memory import Memory

    from llamaindex_recall import RecallLLM, RecallMemoryBlock

    llm = RecallLLM(generator=generator, store=store, max_new_tokens=6)
    block = RecallMemoryBlock(store=store, user_id="ada")
    memory = Memory.from_defaults(session_id="s1", token_limit=4000, memory_blocks=[block])
    engine = SimpleChatEngine.from_defaults(llm=llm, memory=memory)
    engine.chat(FACT)
    engine.chat("Where do I live?")
    keys = llm.session_pool.keys()
    assert keys == [("ada", "s1")]  # the Memory's session is the thread
    session = llm.session_pool.get(keys[0])
    assert session.turns == 2 and session.last_report.reused_tokens > 0 and session.last_report.reason is None
    assert [m["content"] for m in session.messages if m["role"] == "user"] == [FACT, "Where do I live?"]


def test_llamaindex_chat_with_a_thread_id_reuses_the_cache(generator):
    from llama_index.core.base.llms.types import ChatMessage

    from llamaindex_recall import RecallLLM

    llm = RecallLLM(generator=generator, max_new_tokens=6)
    messages = [ChatMessage(role="system", content="You are kind."), ChatMessage(role="user", content=FACT)]
    first = llm.chat(messages, thread_id="t")
    messages += [first.message, ChatMessage(role="user", content="Where do I live?")]
    second = llm.chat(messages, thread_id="t")
    assert second.raw["session"]["reused_tokens"] > 0
    streamed = list(llm.stream_chat([*messages, second.message, ChatMessage(role="user", content="Hi")], thread_id="t"))
    assert streamed[-1].raw["session"]["reused_tokens"] > 0
    assert RecallLLM(generator=generator, max_new_tokens=6, sessions=None).chat(messages).message.content == (
        second.message.content
    )


def test_a_session_writes_evicted_turns_with_their_date_and_session(generator, store):
    """Messages may carry timestamp / session_id / turn_index: the store keeps them with the evicted turn,
    and a later <recall> in the same session brings the turn back."""
    from recall_core import RecallSession
    from recall_core.memory import MemoryWriter
    from tests.helpers.memories import RAW_TEXT

    session = RecallSession(generator, max_cache_tokens=150, store=store, user_id="ada",
                            writer=MemoryWriter(store, **RAW_TEXT))  # fmt: skip
    session.append([{"role": "system", "content": "You are kind."}])
    for day in range(1, 9):
        session.append({"role": "user", "content": f"On day {day} I fed the cat.", "timestamp": f"2026-03-0{day}T10:00:00",
                        "session_id": f"s{day}", "turn_index": 0})  # fmt: skip
        session.append({"role": "assistant", "content": "Noted.", "timestamp": f"2026-03-0{day}T10:00:05",
                        "session_id": f"s{day}", "turn_index": 1})  # fmt: skip
    assert session.evicted_messages >= 4
    first = next(r for r in store.for_user("ada").all() if r.text == "On day 1 I fed the cat.")
    assert first.session_id == "s1" and first.timestamp.startswith("2026-03-01") and first.turn_index == 0
    result = session.reply("What did I do on day 1?", memory=store.for_user("ada"), max_new_tokens=4)
    assert any("day 1" in r.text for r in result.recalls if r.injected)


def test_base_replies_reach_the_chat_model_with_and_without_a_session():
    """``RecallConfig(base_replies=True)``: with no memory the reply is the base model's, whether the
    adapter keeps a session for the thread or not."""
    from recall_core import RecallGenerator
    from tests.helpers.tiny import tiny_model

    tuned, tokenizer = tiny_model("llama", seed=0)
    base, _ = tiny_model("llama", seed=1)
    generator = RecallGenerator(tuned, tokenizer, base_model=base)
    plain = ChatRecall(generator=RecallGenerator(base, tokenizer), max_tokens=6, sessions=None).invoke(HISTORY)
    on = RecallConfig(base_replies=True)
    with_session = ChatRecall(generator=generator, max_tokens=6, recall_config=on).invoke(HISTORY, thread_id="t1")
    without = ChatRecall(generator=generator, max_tokens=6, recall_config=on, sessions=None).invoke(HISTORY)
    assert with_session.content == without.content == plain.content
    assert ChatRecall(generator=generator, max_tokens=6).invoke(HISTORY).content != plain.content


def test_base_replies_reach_a_served_chat_model_as_the_adapter_taken_out():
    """Served: ``ChatRecall`` over a ``ServedRecallGenerator`` sends the reply that reads no notes with
    the engine's recall adapter at scale -1, and the default reply without it."""
    from recall_core.serving import ServedRecallGenerator
    from recall_core.serving.client import Completion
    from tests.helpers.engines import ScriptedEngine
    from tests.helpers.tiny import tiny_model

    _, tokenizer = tiny_model("llama")
    said = Completion(tokens=[7, tokenizer.eos_token_id], stop_type="eos", logprobs=[{7: -0.1}] * 2)
    engine = ScriptedEngine(said, said, adapters=[{"id": 0, "path": "recall-adapter.gguf", "scale": 0.0}])
    served = ServedRecallGenerator(engine, tokenizer, context_window=512)
    on = RecallConfig(base_replies=True)
    ChatRecall(generator=served, max_tokens=6, recall_config=on).invoke(HISTORY)
    ChatRecall(generator=served, max_tokens=6).invoke(HISTORY)
    assert [body.get("lora") for body in engine.bodies] == [[{"id": 0, "scale": -1.0}], [{"id": 0, "scale": 0.0}]]

"""RecallMemoryBlock in llama_index Memory / SimpleChatEngine, and memory shared across the two adapters."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.chat_engine import SimpleChatEngine
from llama_index.core.instrumentation.events.llm import LLMChatEndEvent
from llama_index.core.memory import Memory

from langchain_recall import ChatRecall
from llamaindex_recall import RecallLLM, RecallMemoryBlock
from recall_core import RECALL_TOKEN
from recall_core.config import DEFAULT_SYSTEM_PROMPT
from tests.helpers.adapters import HalfDownStore
from tests.helpers.memories import FixedMemory

FACT = "My dog is called Biscuit."
QUESTION = "What is my dog called?"


def test_block_writes_turns_and_returns_a_marker(store):
    block = RecallMemoryBlock(store=store, user_id="ada", accept_short_term_memory=True)
    messages = [
        ChatMessage(role=MessageRole.USER, content=FACT),
        ChatMessage(role=MessageRole.ASSISTANT, content="Noted."),
        ChatMessage(role=MessageRole.TOOL, content="{}"),
    ]
    asyncio.run(block.aput(messages, from_short_term_memory=True, session_id="s1"))
    records = store.for_user("ada").all()
    assert [(r.role, r.text, r.session_id) for r in records] == [
        ("user", FACT, "s1"),
        ("assistant", "Noted.", "s1"),
    ]
    (marker,) = asyncio.run(block.aget([ChatMessage(role="user", content=QUESTION)]))
    assert marker.content == RECALL_TOKEN and marker.role == MessageRole.SYSTEM
    assert marker.additional_kwargs["recall_user_id"] == "ada"
    assert asyncio.run(block.atruncate([marker], 100)) == [marker]  # never dropped


def test_block_checks_its_arguments(store):
    with pytest.raises(ValueError, match="recall"):
        RecallMemoryBlock(store=store, user_id="ada", name="recall")
    with pytest.raises(ValueError):
        RecallMemoryBlock(store=None, user_id="ada")
    with pytest.raises(ValueError):
        RecallMemoryBlock(store=store)  # whose memory?
    with pytest.raises(ValueError, match="user_id must be"):
        RecallMemoryBlock(store=store, user_id="  ")
    with pytest.raises(ValueError, match="write_roles must be a non-empty sequence of roles"):
        RecallMemoryBlock(store=store, user_id="ada", write_roles=("usr",))
    assert RecallMemoryBlock(store=store, user_id="ada", write_roles="user").write_roles == ("user",)


def test_a_marker_message_becomes_a_recall_for_its_user(generator, store, events):
    store.for_user("ada").add(FACT)
    llm = RecallLLM(generator=generator, store=store, recall="explicit", max_new_tokens=4)
    block = RecallMemoryBlock(store=store, user_id="ada")
    messages = [block.marker(), ChatMessage(role="user", content=QUESTION)]
    raw = llm.chat(messages).raw
    recall = raw["recalls"][0]
    assert recall["injected"] and FACT in recall["text"] and recall["query"] == QUESTION
    plain = llm.chat([ChatMessage(role="user", content=QUESTION)], user_id="ada").raw
    assert plain["recalls"] == []  # explicit policy and no marker: no recall
    # The marker message itself is gone: its <recall> goes where the policy puts memories (a
    # system message of the default prompt when the conversation has none), and nothing else.
    system = ChatMessage(role="system", content=f"{DEFAULT_SYSTEM_PROMPT}\n\n{RECALL_TOKEN}")
    same = llm.chat([system, ChatMessage(role="user", content=QUESTION)], user_id="ada").raw
    assert raw["usage"]["prompt_tokens"] == same["usage"]["prompt_tokens"]


def test_a_marker_message_leaves_the_decision_to_the_model(generator, store):
    """Under recall="model" a memory block's marker says whose memory to search, not where to recall."""
    store.for_user("ada").add(FACT)
    llm = RecallLLM(generator=generator, store=store, recall="model", max_new_tokens=4)
    block = RecallMemoryBlock(store=store, user_id="ada")
    marked = llm.chat([block.marker(), ChatMessage(role="user", content=QUESTION)]).raw
    plain = llm.chat([ChatMessage(role="user", content=QUESTION)], user_id="ada").raw
    assert [r for r in marked["recalls"] if r["trigger"] == "prompt"] == []
    assert marked["usage"]["prompt_tokens"] == plain["usage"]["prompt_tokens"]


def test_simple_chat_engine_with_memory_block_flushing(generator, store, events):
    """The block as LlamaIndex's own blocks work: it writes what Memory flushes, nothing else."""
    llm = RecallLLM(generator=generator, store=store, max_new_tokens=6)
    block = RecallMemoryBlock(store=store, user_id="ada", write_memory=False, accept_short_term_memory=True)
    # A small short-term window so that older turns flow into the block (and the store) quickly.
    memory = Memory.from_defaults(
        session_id="s1",
        token_limit=60,
        chat_history_token_ratio=0.5,
        token_flush_size=10,
        memory_blocks=[block],
    )
    engine = SimpleChatEngine.from_defaults(llm=llm, memory=memory)
    engine.chat(FACT)
    assert store.for_user("ada").count() == 0  # still in the short-term queue
    engine.chat("I live in Lisbon and I work as a nurse.")
    engine.chat("My favourite colour is green.")
    written = [r.text for r in store.for_user("ada").all() if r.role == "user"]
    assert FACT in written  # flushed out of the short-term queue into the long-term block
    events.clear()
    fresh = Memory.from_defaults(session_id="s2", token_limit=60, memory_blocks=[block])
    SimpleChatEngine.from_defaults(llm=llm, memory=fresh).chat(QUESTION)
    (response,) = [e.response for e in events if isinstance(e, LLMChatEndEvent)]
    recall = response.raw["recalls"][0]
    assert recall["injected"] and FACT in recall["text"] and recall["query"] == QUESTION


def test_langchain_write_is_recalled_by_llamaindex(generator, store):
    ChatRecall(generator=generator, store=store, user_id="ada", max_tokens=4).invoke(FACT)
    raw = (
        RecallLLM(generator=generator, store=store, user_id="ada", max_new_tokens=4)
        .chat([ChatMessage(role="user", content=QUESTION)])
        .raw
    )
    assert raw["recalls"][0]["injected"] and FACT in raw["recalls"][0]["text"]


def test_llamaindex_write_is_recalled_by_langchain(generator, store):
    block = RecallMemoryBlock(store=store, user_id="bo")
    asyncio.run(block.aput([ChatMessage(role="user", content="My cat is called Pepper.")]))
    message = ChatRecall(generator=generator, store=store, user_id="bo", max_tokens=4).invoke(
        [HumanMessage("What is my cat called?")]
    )
    recall = message.response_metadata["recalls"][0]
    assert recall["injected"] and "My cat is called Pepper." in recall["text"]


def test_user_with_no_memories_is_answered_and_traced(generator, store):
    raw = (
        RecallLLM(generator=generator, store=store, user_id="nobody", max_new_tokens=4)
        .chat([ChatMessage(role="user", content=QUESTION)])
        .raw
    )
    assert raw["recalls"][0]["reason"] == "no memory" and raw["usage"]["injected_tokens"] == 0
    assert isinstance(raw["recalls"][0]["query"], str)


def test_a_failed_write_warns_and_the_chat_goes_on():
    block = RecallMemoryBlock(store=HalfDownStore(), user_id="ada")  # writes fail, searches fail the test
    with pytest.warns(RuntimeWarning, match="could not write all of 1 turn"):
        asyncio.run(block.aput([ChatMessage(role="user", content=FACT)]))


def test_a_message_the_memory_refuses_costs_no_other_message(store):
    """One refused message (a NUL pasted in) used to stop the write there: the messages after it were lost."""
    block = RecallMemoryBlock(store=store, user_id="ada")
    history = [ChatMessage(role="user", content=FACT), ChatMessage(role="user", content="I paste\x00d this."),
               ChatMessage(role="user", content="I live in Lisbon."), ChatMessage(role="assistant", content="Noted.")]  # fmt: skip
    with pytest.warns(RuntimeWarning, match=r"1 of 4 turn\(s\) were refused.*turn 1 \(user\).*NUL"):
        asyncio.run(block.aput(history))
    assert sorted(r.text for r in store.for_user("ada").all()) == sorted([FACT, "I live in Lisbon.", "Noted."])


def _engine(generator, store, session_id, **block):
    """The README's recipe: a RecallMemoryBlock in a default Memory (its large token_limit: nothing is flushed)."""
    llm = RecallLLM(generator=generator, store=store, max_new_tokens=6)
    memory = Memory.from_defaults(session_id=session_id, memory_blocks=[RecallMemoryBlock(store=store, user_id="ada", **block)])
    return SimpleChatEngine.from_defaults(llm=llm, memory=memory)


def test_the_default_recipe_writes_each_exchange_as_it_happens(generator, store, events):
    engine = _engine(generator, store, "monday")
    reply = engine.chat(FACT)
    records = store.for_user("ada").all()
    assert [(r.role, r.text, r.session_id) for r in records] == [
        ("user", FACT, "monday"), ("assistant", str(reply), "monday")
    ][: len(records)] and len(records) == 1 + bool(str(reply).strip())
    (first,) = [e.response for e in events if isinstance(e, LLMChatEndEvent)]
    assert first.raw["memory_written"] == [r.id for r in records]
    events.clear()
    _engine(generator, store, "tuesday").chat(QUESTION)  # a new Memory: nothing of monday in its history
    (response,) = [e.response for e in events if isinstance(e, LLMChatEndEvent)]
    recall = response.raw["recalls"][0]
    assert recall["injected"] and FACT in recall["text"] and recall["query"] == QUESTION
    # The Memory's session is the KV-cache thread too; its flushes are not written twice. The
    # question only asks: it is not written (write_questions=False, the default).
    assert [r.session_id for r in store.for_user("ada").all() if r.role == "user"] == ["monday"]


def test_questions_are_written_only_when_asked_for(generator, store):
    _engine(generator, store, "s1", write_roles=("user",)).chat(QUESTION)
    assert store.for_user("ada").count() == 0
    _engine(generator, store, "s2", write_roles=("user",), write_questions=True).chat(QUESTION)
    assert [(r.text, r.session_id) for r in store.for_user("ada").all()] == [(QUESTION, "s2")]
    # Without a block: the LLM's own field decides.
    llm = RecallLLM(generator=generator, store=store, max_new_tokens=4, write_roles=("user",))
    llm.chat([ChatMessage(role="user", content=QUESTION)], user_id="bo", write_memory=True)
    assert store.for_user("bo").count() == 0
    llm = RecallLLM(generator=generator, store=store, max_new_tokens=4, write_roles=("user",), write_questions=True)
    llm.chat([ChatMessage(role="user", content=QUESTION)], user_id="bo", write_memory=True)
    assert [r.text for r in store.for_user("bo").all()] == [QUESTION]
    # Messages Memory flushes to the block are held to the same rule.
    block = RecallMemoryBlock(store=store, user_id="cy", accept_short_term_memory=True)
    asyncio.run(block.aput([ChatMessage(role="user", content=QUESTION), ChatMessage(role="user", content=FACT)],
                           from_short_term_memory=True))  # fmt: skip
    assert [r.text for r in store.for_user("cy").all()] == [FACT]


@pytest.mark.parametrize("mode", ["stream", "achat", "astream"])
def test_streams_and_async_chats_write_too(generator, store, mode):
    engine = _engine(generator, store, "s1", write_roles=("user",))
    if mode == "stream":
        "".join(engine.stream_chat(FACT).response_gen)
    elif mode == "achat":
        asyncio.run(engine.achat(FACT))
    else:

        async def run():
            response = await engine.astream_chat(FACT)
            return "".join([piece async for piece in response.async_response_gen()])

        asyncio.run(run())
    assert [(r.role, r.text, r.session_id) for r in store.for_user("ada").all()] == [("user", FACT, "s1")]


def test_write_memory_off_on_the_block_or_for_one_call(generator, store):
    _engine(generator, store, "s1", write_memory=False).chat(FACT)
    assert store.for_user("ada").count() == 0
    llm = RecallLLM(generator=generator, store=store, max_new_tokens=4)
    block = RecallMemoryBlock(store=store, user_id="ada", write_roles=("user",))
    chat = [block.marker("s2"), ChatMessage(role="user", content=FACT)]
    assert "memory_written" not in llm.chat(chat, write_memory=False).raw
    assert store.for_user("ada").count() == 0
    assert len(llm.chat(chat).raw["memory_written"]) == 1
    # Without a block the LLM writes only when asked to, for its user, under the call's thread.
    plain = [ChatMessage(role="user", content="My cat is called Pepper.")]
    assert "memory_written" not in llm.chat(plain, user_id="bo").raw
    llm.chat(plain, user_id="bo", thread_id="t1", write_memory=True)
    assert {(r.role, r.session_id) for r in store.for_user("bo").all()} <= {("user", "t1"), ("assistant", "t1")}
    assert "My cat is called Pepper." in [r.text for r in store.for_user("bo").all()]


def test_recall_off_for_one_call_with_a_block(generator, store):
    store.for_user("ada").add(FACT)
    llm = RecallLLM(generator=generator, store=store, max_new_tokens=4)
    block = RecallMemoryBlock(store=store, user_id="ada", write_memory=False)
    chat = [block.marker(), ChatMessage(role="user", content=QUESTION)]
    assert llm.chat(chat).raw["recalls"][0]["injected"]
    assert llm.chat(chat, recall="off").raw["recalls"] == []
    off = RecallLLM(generator=generator, store=store, recall="off", max_new_tokens=4)
    assert off.chat(chat).raw["recalls"] == []  # the block's marker does not switch it back on


def test_recall_off_for_one_chat_engine_call_through_the_block(generator, store, events):
    """A chat engine passes no per-call arguments to its LLM: the block's ``recall`` switches it."""
    store.for_user("ada").add(FACT)
    engine = _engine(generator, store, "s1", write_memory=False)
    block = engine._memory.memory_blocks[0]
    block.recall = False
    engine.chat(QUESTION)
    block.recall = True
    engine.chat(QUESTION)
    off, on = [e.response.raw["recalls"] for e in events if isinstance(e, LLMChatEndEvent)]
    assert off == [] and on[0]["injected"] and FACT in on[0]["text"]


def test_a_failed_write_after_the_reply_keeps_the_reply(generator):
    store = HalfDownStore(FixedMemory(FACT))  # searches work, writes fail
    llm = RecallLLM(generator=generator, store=store, max_new_tokens=4)
    block = RecallMemoryBlock(store=store, user_id="ada")
    with pytest.warns(RuntimeWarning, match="writing it to memory failed"):
        response = llm.chat([block.marker(), ChatMessage(role="user", content=FACT)])
    assert response.raw["memory_write_error"].startswith("MemoryUnavailableError")
    assert response.raw["usage"]["generated_tokens"] > 0  # the reply is there, beside the error


def test_a_refused_message_reports_the_reply_it_wrote(generator, store):
    """The memory refuses a message with a NUL in it; the reply is written all the same, and its id
    is reported beside the error."""
    llm = RecallLLM(generator=generator, store=store, max_new_tokens=4)
    block = RecallMemoryBlock(store=store, user_id="ada", write_roles=("user", "assistant"))
    with pytest.warns(RuntimeWarning, match="writing it to memory failed") as caught:
        response = llm.chat([block.marker(), ChatMessage(role="user", content="My cat is called Miso.\x00")])
    (refused,) = [w for w in caught if "writing it to memory failed" in str(w.message)]
    assert refused.filename == __file__  # the caller's line, not the adapter's nor llama_index's
    assert "1 of 2 turn(s) were refused" in response.raw["memory_write_error"]
    stored = store.for_user("ada").all()
    assert response.raw["memory_written"] == [r.id for r in stored] and {r.role for r in stored} == {"assistant"}


KILLED_AFTER_THE_REPLY = """
import os, signal, sys
from llama_index.core.chat_engine import SimpleChatEngine
from llama_index.core.memory import Memory
from llamaindex_recall import RecallLLM, RecallMemoryBlock
from recall_core import RecallGenerator
from recall_core.memory import HashEncoder, MemoryStore
from tests.helpers.tiny import tiny_model

model, tokenizer = tiny_model("llama")
store = MemoryStore.local(sys.argv[1], encoder=HashEncoder(64))
llm = RecallLLM(generator=RecallGenerator(model, tokenizer), store=store, max_new_tokens=4)
memory = Memory.from_defaults(session_id="monday", memory_blocks=[RecallMemoryBlock(store=store, user_id="ada")])
SimpleChatEngine.from_defaults(llm=llm, memory=memory).chat(sys.argv[2])
print("answered", flush=True)
os.kill(os.getpid(), signal.SIGKILL)  # no close, no flush of Memory: the process just dies
"""


def test_a_reply_the_user_got_is_remembered_though_the_process_is_killed(generator, tmp_path):
    """The README's recipe in a process killed (-9) right after its first reply: a new process
    over the same store recalls what it was told."""
    import subprocess
    import sys

    from recall_core.memory import HashEncoder, MemoryStore

    script = tmp_path / "killed.py"
    script.write_text(KILLED_AFTER_THE_REPLY)
    import os
    from pathlib import Path

    root = str(Path(__file__).resolve().parents[3])  # the script imports the tests' tiny model
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, str(script), str(tmp_path / "memory"), FACT], capture_output=True,
                          text=True, timeout=600, env=env)  # fmt: skip
    assert done.returncode == -9 and "answered" in done.stdout, done.stderr[-3000:]
    with MemoryStore.local(tmp_path / "memory", encoder=HashEncoder(64)) as store:
        assert [(r.text, r.session_id) for r in store.for_user("ada").all() if r.role == "user"] == [(FACT, "monday")]
        llm = RecallLLM(generator=generator, store=store, max_new_tokens=4)
        block = RecallMemoryBlock(store=store, user_id="ada")
        raw = llm.chat([block.marker("tuesday"), ChatMessage(role="user", content=QUESTION)]).raw
        assert raw["recalls"][0]["injected"] and FACT in raw["recalls"][0]["text"]


def test_the_block_beside_another_memory_block_recalls_writes_and_keeps_that_blocks_text(generator, store, events):
    """Memory puts the text of its other blocks into the first system message: the block's marker."""
    from llama_index.core.memory import StaticMemoryBlock

    store.for_user("ada").add(FACT)
    profile = StaticMemoryBlock(name="profile", static_content="The user prefers short answers.")
    memory = Memory.from_defaults(session_id="s1", memory_blocks=[profile, RecallMemoryBlock(store=store, user_id="ada")])
    llm = RecallLLM(generator=generator, store=store, max_new_tokens=4)  # no user_id: the marker says whose
    engine = SimpleChatEngine.from_defaults(llm=llm, memory=memory)
    engine.chat(QUESTION)
    (response,) = [e.response for e in events if isinstance(e, LLMChatEndEvent)]
    recall = response.raw["recalls"][0]
    assert recall["injected"] and FACT in recall["text"]
    # the profile is still in the prompt: the same count as the profile given as a system message of its own
    alone = ChatMessage(role="system", content="<memory>\n<profile>\nThe user prefers short answers.\n</profile>\n</memory>")
    same = llm.chat([alone, ChatMessage(role="user", content=QUESTION)], user_id="ada", write_memory=False).raw
    assert response.raw["usage"]["prompt_tokens"] == same["usage"]["prompt_tokens"]
    engine.chat("I live in Lisbon.")
    assert "I live in Lisbon." in [r.text for r in store.for_user("ada").all() if r.role == "user"]  # written


def test_insert_method_user_writes_and_searches_with_the_users_own_words(generator, store, events):
    """``Memory(insert_method=USER)`` puts the other blocks' text in front of the last user message: that
    text was written as the user's words, and the recall searched with it."""
    from llama_index.core.memory import StaticMemoryBlock
    from llama_index.core.memory.memory import InsertMethod

    store.writer.add_turn("ada", "user", FACT, session_id="old")
    profile = StaticMemoryBlock(name="profile", static_content="The user is a vegetarian.")
    block = RecallMemoryBlock(store=store, user_id="ada", write_questions=True)
    memory = Memory.from_defaults(session_id="s1", insert_method=InsertMethod.USER, memory_blocks=[profile, block])
    llm = RecallLLM(generator=generator, store=store, max_new_tokens=4)
    engine = SimpleChatEngine.from_defaults(llm=llm, memory=memory)
    engine.chat("I live in Lisbon.")
    events.clear()
    engine.chat(QUESTION)
    (response,) = [e.response for e in events if isinstance(e, LLMChatEndEvent)]
    recall = [r for r in response.raw["recalls"] if r["trigger"] == "prompt"][0]
    assert recall["query"] == QUESTION and recall["injected"] and FACT in recall["text"]
    written = [r.text for r in store.for_user("ada").all() if r.role == "user" and r.session_id == "s1"]
    assert written == ["I live in Lisbon.", QUESTION]
    # The model still reads the profile: in a user message of its own, just before the question.
    users = [m["content"] for m in llm.session_pool.get(("ada", "s1")).messages if m["role"] == "user"]
    assert "The user is a vegetarian." in users[-2] and users[-1] == QUESTION


def test_a_cache_point_beside_the_users_words_still_lets_them_be_split_off():
    """A ``CachePoint`` (no content) kept the message whole: the recall searched with the memory's text
    put in front of the user's words (a reviewer, 2026-12-07)."""
    from llama_index.core.base.llms.types import CacheControl, CachePoint, TextBlock

    from llamaindex_recall.markers import message_text, split_own_turn

    before = "<memory>The user likes tea.</memory>\n"
    for extra in ([], [CachePoint(cache_control=CacheControl(type="ephemeral"))]):
        message = ChatMessage(role="user", blocks=[TextBlock(text=before + QUESTION), *extra])
        assert [message_text(m) for m in split_own_turn([message], 0, QUESTION)] == [before, QUESTION]


@pytest.fixture(scope="module")
def react_generator():
    """A tiny random Llama with room for ReActAgent's long system header (about 1,700 tokens here)."""
    from recall_core import RecallGenerator
    from tests.helpers.tiny import tiny_model

    return RecallGenerator(*tiny_model("llama", positions=4096))


def _react_steps(memory):
    """What LlamaIndex's ReActAgent sends: its own system header, the Memory's chat (the block's marker in
    it), and after a tool ran, the tool's Observation as a user message."""
    from llama_index.core.agent.react.formatter import ReActChatFormatter
    from llama_index.core.agent.react.types import ActionReasoningStep, ObservationReasoningStep
    from llama_index.core.tools import FunctionTool

    from tests.helpers.adapters import weather

    tools, formatter = [FunctionTool.from_defaults(weather)], ReActChatFormatter.from_defaults()
    steps = [ActionReasoningStep(thought="I need the weather tool.", action="weather", action_input={"city": "Lisbon"}),
             ObservationReasoningStep(observation="It is sunny and 24 C in Lisbon.")]  # fmt: skip
    return formatter.format(tools, chat_history=memory.get()), formatter.format(tools, memory.get(), steps)


def test_an_agents_observation_is_not_written_as_the_users_words(react_generator, store):
    memory = Memory.from_defaults(session_id="react", memory_blocks=[RecallMemoryBlock(store=store, user_id="ada")])
    memory.put(ChatMessage(role="user", content="I am in Lisbon today."))
    first, after_the_tool = _react_steps(memory)
    assert after_the_tool[-1].role == MessageRole.USER and after_the_tool[-1].content.startswith("Observation:")
    llm = RecallLLM(generator=react_generator, store=store, max_new_tokens=4)
    llm.chat(first)
    llm.chat(after_the_tool)
    users = [r.text for r in store.for_user("ada").all() if r.role == "user"]
    assert users == ["I am in Lisbon today."]  # the Observation was written as the user's, once per step


def test_an_agent_that_drops_the_blocks_marker_is_told_why(react_generator, store):
    """LlamaIndex's ReActAgent takes the first system message as its own: without a system_prompt of
    the agent's that is the block's marker, and the call had no user ("no user_id was given")."""
    from llama_index.core.agent.workflow import ReActAgent

    from tests.helpers.adapters import weather

    def run(agent):
        memory = Memory.from_defaults(session_id="react", memory_blocks=[RecallMemoryBlock(store=store, user_id="ada")])

        async def go():
            return await agent.run(user_msg=FACT, memory=memory, max_iterations=2)

        return asyncio.run(go())

    llm = RecallLLM(generator=react_generator, store=store, max_new_tokens=4)
    with pytest.raises(ValueError, match="no RecallMemoryBlock marker.*ReActAgent.*give the agent a system_prompt"):
        run(ReActAgent(tools=[weather], llm=llm))
    run(ReActAgent(tools=[weather], llm=llm, system_prompt="Answer briefly."))
    assert [r.text for r in store.for_user("ada").all() if r.role == "user"] == [FACT]


@pytest.mark.parametrize("user_id", ["", 0, None, "  "])
def test_a_per_call_user_id_is_checked_not_replaced_by_another_user(generator, store, user_id):
    """``user_id=""`` (or 0, None) on an instance for ada searched and wrote ada's memory, silently."""
    store.for_user("ada").add("The safe code is 4321.")
    llm = RecallLLM(generator=generator, store=store, user_id="ada", max_new_tokens=4, write_memory=True)
    with pytest.raises(ValueError, match="user_id must be a non-empty string"):
        llm.chat([ChatMessage(role="user", content="I am new here. My dog is Rex.")], user_id=user_id)
    assert [r.text for r in store.for_user("ada").all()] == ["The safe code is 4321."]


def test_a_block_memory_could_cut_or_a_blank_thread_is_refused(store):
    """Past its token_limit Memory drops blocks of priority 1 and above, the marker with them: nothing
    was recalled or written, silently."""
    for priority in (1, 5, -1):
        with pytest.raises(ValueError, match="priority must be 0"):
            RecallMemoryBlock(store=store, user_id="ada", priority=priority)
    for thread in ("", "  ", "a\x00b", 1.5, None):
        with pytest.raises(ValueError, match="thread_id must be"):
            RecallMemoryBlock(store=store, user_id="ada", thread_id=thread)
    # as RecallLLM's per-call thread_id: a UUID or an int is its str() (LangGraph's thread ids)
    assert RecallMemoryBlock(store=store, user_id="ada", thread_id=5).thread_id == "5"


def _history_engine(generator, store, **block):
    history = [ChatMessage(role="user", content=FACT), ChatMessage(role="assistant", content="Nice name."),
               ChatMessage(role="user", content="I live in Lisbon and I work as a nurse."),
               ChatMessage(role="assistant", content="Noted.")]  # fmt: skip
    memory = Memory.from_defaults(session_id="imp", chat_history=history, token_limit=60, chat_history_token_ratio=0.5,
                                  token_flush_size=10, memory_blocks=[RecallMemoryBlock(store=store, user_id="ada", **block)])  # fmt: skip
    engine = SimpleChatEngine.from_defaults(llm=RecallLLM(generator=generator, store=store, max_new_tokens=4), memory=memory)
    for line in ["My favourite colour is green.", "I was born in 1990.", "I work at the hospital."]:
        engine.chat(line)
    return [(r.role, r.text) for r in store.for_user("ada").all()]


def test_history_given_to_memory_is_written_only_by_a_block_that_takes_its_flushes(generator, store, tmp_path):
    """docs/frameworks.md: the block writes each exchange as it happens, and (by default) not what Memory
    flushes, so history handed to Memory directly (chat_history=) is not written; with
    accept_short_term_memory=True it is written when flushed, and nothing twice."""
    from recall_core.memory import HashEncoder, MemoryStore

    written = _history_engine(generator, store)
    assert ("user", "My favourite colour is green.") in written and ("user", FACT) not in written
    with MemoryStore.local(tmp_path / "other", encoder=HashEncoder(64)) as other:
        taken = _history_engine(generator, other, accept_short_term_memory=True)
    assert ("user", FACT) in taken and ("user", "My favourite colour is green.") in taken
    assert len(taken) == len(set(taken))  # the turns written as they happened are not written again


def test_a_turn_the_index_was_down_for_is_written_when_its_session_evicts_it(generator, store, monkeypatch, events):
    """RecallLLM's KV-cache sessions had no writer: a reply an outage left unwritten (the write stops at
    the user's turn, which the journal keeps) was never written, even when evicted."""
    from recall_core import SessionConfig
    from recall_core.memory import MemoryUnavailableError

    def down(*args: Any, **kwargs: Any) -> None:
        raise MemoryUnavailableError("down (injected)")

    llm = RecallLLM(generator=generator, store=store, max_new_tokens=4,
                    sessions=SessionConfig(max_cache_tokens=120, sink_tokens=4))  # fmt: skip
    memory = Memory.from_defaults(session_id="t", memory_blocks=[RecallMemoryBlock(store=store, user_id="ada")])
    engine = SimpleChatEngine.from_defaults(llm=llm, memory=memory)
    engine.chat("Hello, I am Ada.")
    with monkeypatch.context() as outage, pytest.warns(RuntimeWarning, match="writing it to memory failed"):
        outage.setattr(store.index, "write", down)
        reply = str(engine.chat(FACT))
    assert reply.strip()
    events.clear()
    for line in ["I live in Lisbon.", "I work as a nurse.", "My favourite colour is green.", "I was born in 1990."]:
        engine.chat(line)
    assert llm.session_pool.get(("ada", "t")).evicted_messages >= 4
    at_evictions = [i for e in events if isinstance(e, LLMChatEndEvent) for i in e.response.raw["session"]["memory_written"]]
    records = {r.id: (r.role, r.text, r.session_id) for r in store.for_user("ada").all()}
    assert ("assistant", reply, "t") in [records[i] for i in at_evictions]

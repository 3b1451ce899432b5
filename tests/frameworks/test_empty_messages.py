"""An empty or blank message is refused at every entry point, the same way (a ValueError naming
the field), before anything is searched or written: the engine, a session, ChatRecall, both
RecallLLMs (LangChain, and LlamaIndex's chat and complete)."""

from __future__ import annotations

import asyncio

import pytest

from recall_core import RecallSession
from tests.helpers.memories import FixedMemory

BLANKS = ["", "   \n\t"]
EMPTY = r"empty|'content'"


@pytest.fixture
def memory():
    return FixedMemory("The user's dog is called Biscuit.")


def _refused(call, memory) -> None:
    with pytest.raises(ValueError, match=EMPTY):
        call()
    assert memory.queries == []  # nothing was searched with the system prompt instead


@pytest.mark.parametrize("blank", BLANKS)
def test_the_engine_refuses_a_blank_message(generator, memory, blank):
    _refused(lambda: generator.generate(blank, memory=memory), memory)
    _refused(lambda: generator.generate("<recall>", memory=memory), memory)  # a marker alone is no prompt
    _refused(lambda: generator.generate([{"role": "system", "content": "You are kind."},
                                         {"role": "user", "content": blank}], memory=memory), memory)  # fmt: skip
    _refused(lambda: "".join(generator.stream([{"role": "user", "content": blank}], memory=memory)), memory)


@pytest.mark.parametrize("blank", BLANKS)
def test_a_session_refuses_a_blank_message(generator, memory, blank):
    session = RecallSession(generator)
    _refused(lambda: session.reply(blank, memory=memory), memory)
    _refused(lambda: session.reply([{"role": "user", "content": blank}], memory=memory), memory)
    assert session.reply("My dog is called Biscuit.", memory=memory, max_new_tokens=2).text is not None


@pytest.mark.parametrize("blank", BLANKS)
def test_langchain_refuses_a_blank_message(generator, memory, store, blank):
    from langchain_core.messages import HumanMessage, SystemMessage

    from langchain_recall import ChatRecall, RecallLLM

    chat = ChatRecall(generator=generator, memory=memory, max_tokens=4)
    _refused(lambda: chat.invoke(blank), memory)
    _refused(lambda: chat.invoke([SystemMessage("You are kind."), HumanMessage(blank)]), memory)
    _refused(lambda: list(chat.stream(blank)), memory)
    _refused(lambda: asyncio.run(chat.ainvoke(blank)), memory)
    writing = ChatRecall(generator=generator, store=store, user_id="ada", max_tokens=4)
    with pytest.raises(ValueError, match=EMPTY):
        writing.invoke(blank)
    assert store.for_user("ada").all() == []  # nothing written
    for llm in (RecallLLM(generator=generator, memory=memory, max_tokens=4),
                RecallLLM(generator=generator, memory=memory, max_tokens=4, use_chat_template=True)):  # fmt: skip
        _refused(lambda llm=llm: llm.invoke(blank), memory)
        _refused(lambda llm=llm: list(llm.stream(blank)), memory)


@pytest.mark.parametrize("blank", BLANKS)
def test_llamaindex_refuses_a_blank_message(generator, memory, blank):
    from llama_index.core.llms import ChatMessage

    from llamaindex_recall import RecallLLM

    llm = RecallLLM(generator=generator, memory=memory, max_new_tokens=4)
    _refused(lambda: llm.complete(blank), memory)
    _refused(lambda: llm.complete(blank, formatted=True), memory)
    _refused(lambda: list(llm.stream_complete(blank)), memory)
    _refused(lambda: llm.chat([ChatMessage(role="user", content=blank)]), memory)
    _refused(lambda: list(llm.stream_chat([ChatMessage(role="user", content=blank)])), memory)
    _refused(lambda: asyncio.run(llm.achat([ChatMessage(role="user", content=blank)])), memory)

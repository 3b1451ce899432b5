"""RecallLLM as a LlamaIndex ``FunctionCallingLLM``: chat with tools (forced, streamed, none, in
the history) and structured prediction.

A tiny random Llama whose template renders tools: whatever it would write, a forced call comes
out valid. Real agents on the default model: test_agents_integration.py.
"""

from __future__ import annotations

import pytest
from llama_index.core.base.llms.types import ChatMessage, ToolCallBlock
from llama_index.core.tools import FunctionTool

from llamaindex_recall import RecallLLM
from tests.helpers.adapters import Person, weather


@pytest.fixture
def llm(tools_generator) -> RecallLLM:
    return RecallLLM(generator=tools_generator, max_new_tokens=120)


def test_llamaindex_chat_with_tools(llm):
    assert llm.metadata.is_function_calling_model
    response = llm.chat_with_tools([FunctionTool.from_defaults(weather)], user_msg="Weather?", tool_required=True)
    calls = llm.get_tool_calls_from_response(response)
    assert [c.tool_name for c in calls] == ["weather"] and calls[0].tool_kwargs["city"]
    assert any(isinstance(b, ToolCallBlock) for b in response.message.blocks)
    streamed = list(llm.stream_chat_with_tools([FunctionTool.from_defaults(weather)], user_msg="Weather?",
                                               tool_choice="weather"))  # fmt: skip
    assert llm.get_tool_calls_from_response(streamed[-1])[0].tool_name == "weather"


def test_llamaindex_no_call_and_bad_choice(llm):
    tool_ = FunctionTool.from_defaults(weather)
    response = llm.chat_with_tools([tool_], user_msg="Hi", max_new_tokens=2)
    assert llm.get_tool_calls_from_response(response, error_on_no_tool_call=False) == []
    with pytest.raises(ValueError, match="expected at least one tool call"):
        llm.get_tool_calls_from_response(response)
    with pytest.raises(ValueError, match="not a bound tool"):
        llm.chat_with_tools([tool_], user_msg="Hi", tool_choice="nope")


def test_llamaindex_tool_history(llm):
    history = [
        ChatMessage(role="user", content="Weather?"),
        ChatMessage(role="assistant", blocks=[ToolCallBlock(tool_call_id="c1", tool_name="weather", tool_kwargs={"city": "Lisbon"})]),
        ChatMessage(role="tool", content="sunny", additional_kwargs={"tool_call_id": "c1"}),
    ]  # fmt: skip
    response = llm.chat_with_tools([FunctionTool.from_defaults(weather)], chat_history=history, max_new_tokens=3)
    assert response.message.role == "assistant"


def test_llamaindex_structured_predict(llm):
    from llama_index.core.prompts import PromptTemplate

    person = llm.structured_predict(Person, PromptTemplate("Extract the person: {text}"), text="Ada is 36.")
    assert isinstance(person, Person)

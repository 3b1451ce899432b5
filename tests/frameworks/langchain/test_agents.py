"""Agents on ChatRecall: bound tools (forced, streamed, async, in the history) and structured output.

A tiny random Llama whose template renders tools: whatever it would write, a forced call or a
schema comes out valid. A real agent on the default model: test_agents_integration.py.
"""

from __future__ import annotations

import pytest
from langchain_core.exceptions import OutputParserException
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage, ToolMessage
from langchain_core.tools import tool

from langchain_recall import ChatRecall
from tests.helpers.adapters import Person


@tool
def get_weather(city: str) -> str:
    """Get today's weather in a city."""
    return f"It is sunny and 24 C in {city}."


@pytest.fixture
def chat(tools_generator) -> ChatRecall:
    return ChatRecall(generator=tools_generator, max_tokens=120)


def test_bind_tools_forced_call(chat):
    message = chat.bind_tools([get_weather], tool_choice="get_weather").invoke("Weather in Lisbon?")
    assert [c["name"] for c in message.tool_calls] == ["get_weather"]
    assert message.tool_calls[0]["args"]["city"] and message.tool_calls[0]["type"] == "tool_call"
    assert message.response_metadata["finish_reason"] == "tool_calls"
    assert [b["type"] for b in message.content_blocks].count("tool_call") == 1


def test_streamed_call_arrives_as_tool_call_chunks(chat):
    chunks = list(chat.bind_tools([get_weather], tool_choice="any").stream("Weather in Lisbon?"))
    assert all(isinstance(c, AIMessageChunk) for c in chunks)
    assert any(c.tool_call_chunks for c in chunks)
    full = chunks[0]
    for chunk in chunks[1:]:
        full = full + chunk
    invoked = chat.bind_tools([get_weather], tool_choice="any").invoke("Weather in Lisbon?")
    assert [(c["name"], c["args"]) for c in full.tool_calls] == [(c["name"], c["args"]) for c in invoked.tool_calls]
    assert full.content == ""


async def test_async_call(chat):
    message = await chat.bind_tools([get_weather], tool_choice="any").ainvoke("Weather in Lisbon?")
    assert message.tool_calls
    chunks = [c async for c in chat.bind_tools([get_weather], tool_choice="any").astream("Weather?")]
    assert any(c.tool_call_chunks for c in chunks)


def test_tool_history_goes_through_the_template(chat):
    call = {"name": "get_weather", "args": {"city": "Lisbon"}, "id": "c1", "type": "tool_call"}
    history = [HumanMessage("Weather?"), AIMessage("", tool_calls=[call]), ToolMessage("sunny", tool_call_id="c1")]
    reply = chat.bind_tools([get_weather]).invoke(history, max_tokens=3)
    assert isinstance(reply, AIMessage)


def test_bind_tools_bad_input(chat):
    with pytest.raises(ValueError, match="'nope', which is not a bound tool"):
        chat.bind_tools([get_weather], tool_choice="nope")
    bad = {"type": "function", "function": {"name": "broken", "parameters": {"type": "object",
           "properties": {"x": {"type": "strin"}}}}}  # fmt: skip
    with pytest.raises(ValueError, match="tool 'broken'"):
        chat.bind_tools([bad])


def test_template_without_tools_says_so(generator):
    chat = ChatRecall(generator=generator, max_tokens=100)
    with pytest.raises(ValueError, match="no tool support"):
        chat.bind_tools([get_weather]).invoke("Weather?")


@pytest.mark.parametrize("method", ["json_schema", "function_calling", "json_mode"])
def test_structured_output_pydantic(chat, method):
    person = chat.with_structured_output(Person, method=method).invoke("Ada is 36.")
    assert isinstance(person, Person) and person.name


def test_structured_output_dict_include_raw_and_parse_errors(chat):
    schema = Person.model_json_schema()
    out = chat.with_structured_output(schema, include_raw=True).invoke("Ada is 36.")
    assert set(out["parsed"]) == {"name", "age"} and out["parsing_error"] is None and isinstance(out["raw"], AIMessage)
    # A budget too small for the JSON: LangChain's parse error, never a silent None.
    short = ChatRecall(generator=chat.generator, max_tokens=2)
    with pytest.raises(OutputParserException):
        short.with_structured_output(Person).invoke("Ada is 36.")
    with pytest.raises(OutputParserException):
        short.with_structured_output(Person, method="function_calling").invoke("Ada is 36.")
    failed = short.with_structured_output(Person, include_raw=True).invoke("Ada is 36.")
    assert failed["parsed"] is None and isinstance(failed["parsing_error"], OutputParserException)
    with pytest.raises(ValueError, match="method must be"):
        chat.with_structured_output(Person, method="xml")

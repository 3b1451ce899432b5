"""Agents on the recall engine: ChatRecall's tools and structured output, RecallLLM as a
FunctionCallingLLM, and real agents (LangChain ``create_agent``, LlamaIndex ``FunctionAgent`` /
``AgentWorkflow``) that call a tool with a fact recalled from a past session.

Unit tests use a tiny random Llama whose template renders tools: whatever it would write,
a forced call or a schema comes out valid. The agent tests use the embedded default model.
"""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.exceptions import OutputParserException
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage, ToolMessage
from langchain_core.tools import tool
from llama_index.core.base.llms.types import ChatMessage, ToolCallBlock
from llama_index.core.tools import FunctionTool
from pydantic import BaseModel, Field

from langchain_recall import ChatRecall
from llamaindex_recall import RecallLLM
from recall_core import RecallGenerator
from recall_core.memory import MemoryStore
from recall_core.models.templates import SMOLLM2_TOOLS_TEMPLATE
from tests.helpers.tiny import tiny_model

pytest_plugins = ["tests.helpers.adapters"]


class Person(BaseModel):
    """A person mentioned in the text."""

    name: str = Field(description="the person's name")
    age: int = Field(description="their age in years")


@tool
def get_weather(city: str) -> str:
    """Get today's weather in a city."""
    return f"It is sunny and 24 C in {city}."


def weather(city: str) -> str:
    """Get today's weather in a city."""
    return f"It is sunny and 24 C in {city}."


@pytest.fixture(scope="module")
def tools_generator() -> RecallGenerator:
    model, tokenizer = tiny_model("llama")
    model.config.max_position_embeddings = 2048  # the tools' description is long in a 400-token vocabulary
    tokenizer.chat_template = SMOLLM2_TOOLS_TEMPLATE
    return RecallGenerator(model, tokenizer)


@pytest.fixture
def chat(tools_generator) -> ChatRecall:
    return ChatRecall(generator=tools_generator, max_tokens=120)


# --------------------------------------------------------------------------- LangChain
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


# --------------------------------------------------------------------------- LlamaIndex
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


# --------------------------------------------------------------------------- real agents, real model
@pytest.fixture(scope="module")
def past_session(tmp_path_factory):
    """A store where user "ada" said where she lives, in an earlier session."""
    store = MemoryStore.local(tmp_path_factory.mktemp("agents") / "memory")
    store.writer.add_turn("ada", "user", "I live in Lisbon, by the river.", session_id="monday")
    yield store
    store.close()


@pytest.mark.integration
def test_create_agent_calls_a_tool_with_a_recalled_fact(past_session):
    from langchain.agents import create_agent
    from langchain.agents.middleware import wrap_model_call

    @wrap_model_call
    def call_a_tool_first(request, handler):  # the 135M model does not choose tools by itself
        if not any(isinstance(m, ToolMessage) for m in request.messages):
            request = request.override(tool_choice="any")
        return handler(request)

    chat = ChatRecall(store=past_session, user_id="ada", max_tokens=48, write_memory=False)
    agent = create_agent(chat, tools=[get_weather], middleware=[call_a_tool_first])
    out = agent.invoke({"messages": [{"role": "user", "content": "What is the weather like where I live?"}]})
    call_message, result = out["messages"][1], out["messages"][2]
    assert [r["memory_id"] is not None for r in call_message.response_metadata["recalls"]] == [True]
    assert call_message.tool_calls[0]["args"] == {"city": "Lisbon"}  # from the recalled memory
    assert isinstance(result, ToolMessage) and "Lisbon" in result.content
    assert isinstance(out["messages"][-1], AIMessage)


@pytest.mark.integration
@pytest.mark.parametrize(
    "tuned",
    [False, pytest.param(True, marks=pytest.mark.xfail(strict=True, reason=(
        "the recall-tuned default fills the forced call's city with 'str' under LlamaIndex's FunctionAgent "
        "prompt (tool calls were not in the tuning data; BENCHMARKS.md, Recall tuning)")))],
)
def test_function_agent_and_workflow_call_a_tool_with_a_recalled_fact(past_session, tuned):
    from llama_index.core.agent.workflow import AgentWorkflow, FunctionAgent

    from recall_core import RecallGenerator

    generator = RecallGenerator.from_pretrained(device="cpu", tuned=tuned)
    llm = RecallLLM(generator=generator, store=past_session, user_id="ada", max_new_tokens=48)
    agent = FunctionAgent(name="weather", description="Answers weather questions.", llm=llm,
                          tools=[FunctionTool.from_defaults(weather)], initial_tool_choice="weather")  # fmt: skip
    for runner in (agent, AgentWorkflow(agents=[agent])):
        output = asyncio.run(_run(runner, "What is the weather like where I live?"))
        assert [(c.tool_name, c.tool_kwargs) for c in output.tool_calls] == [("weather", {"city": "Lisbon"})]
        assert "Lisbon" in output.tool_calls[0].tool_output.content


async def _run(runner, question):
    return await runner.run(question)

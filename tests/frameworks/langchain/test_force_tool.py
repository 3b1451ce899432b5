"""Agents and structured output on a small model (issue 22, item 9):
`create_agent(chat, tools, middleware=[ForceToolCallMiddleware()])`, the one-line way to make
an agent call its tool, and the time bound of structured output through the adapter. A tiny
random Llama whose template renders tools: left to choose, it never calls one."""

from __future__ import annotations

import time

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import BaseModel

from langchain_recall import ChatRecall, ForceToolCallMiddleware

CALLS: list[str] = []


@tool
def get_weather(city: str) -> str:
    """Get today's weather in a city."""
    CALLS.append(city)
    return f"It is sunny and 24 C in {city}."


@tool
def get_time(city: str) -> str:
    """Get the time in a city."""
    return f"It is noon in {city}."


@pytest.fixture
def chat(tools_generator) -> ChatRecall:
    CALLS.clear()
    return ChatRecall(generator=tools_generator, max_tokens=100)


def _tool_turns(messages) -> list[list[str]]:
    return [[c["name"] for c in m.tool_calls] for m in messages if isinstance(m, AIMessage) and m.tool_calls]


def test_without_it_the_small_model_calls_no_tool(chat):
    out = create_agent(chat, tools=[get_weather]).invoke({"messages": [{"role": "user", "content": "Weather in Lisbon?"}]})
    assert _tool_turns(out["messages"]) == [] and CALLS == []


def test_one_line_forces_one_call_a_turn_then_the_model_answers(chat):
    agent = create_agent(chat, tools=[get_weather], middleware=[ForceToolCallMiddleware()], checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t1"}}
    out = agent.invoke({"messages": [{"role": "user", "content": "Weather in Lisbon?"}]}, config)
    kinds = [type(m) for m in out["messages"]]
    assert kinds == [HumanMessage, AIMessage, ToolMessage, AIMessage]
    assert _tool_turns(out["messages"]) == [["get_weather"]] and len(CALLS) == 1
    assert not out["messages"][-1].tool_calls  # the model answered rather than call again
    out = agent.invoke({"messages": [{"role": "user", "content": "And tomorrow?"}]}, config)  # a new turn: forced again
    assert _tool_turns(out["messages"]) == [["get_weather"], ["get_weather"]] and len(CALLS) == 2


async def test_async_and_a_named_tool_and_several_calls(chat):
    agent = create_agent(chat, tools=[get_weather, get_time], middleware=[ForceToolCallMiddleware("get_time", calls=2)])
    out = await agent.ainvoke({"messages": [{"role": "user", "content": "Time in Lisbon?"}]})
    assert _tool_turns(out["messages"]) == [["get_time"], ["get_time"]]
    assert isinstance(out["messages"][-1], AIMessage) and not out["messages"][-1].tool_calls


@pytest.mark.parametrize(("args", "message"), [(("",), "tool must be"), ((None,), None), ((), None)])
def test_arguments(args, message):
    if message is None:
        assert ForceToolCallMiddleware(*args).tool is None
    else:
        with pytest.raises(ValueError, match=message):
            ForceToolCallMiddleware(*args)
    with pytest.raises(ValueError, match="calls must be an int >= 1"):
        ForceToolCallMiddleware(calls=0)


# --------------------------------------------------------------------------- structured output in time
class Pet(BaseModel):
    name: str
    species: str


@pytest.fixture
def slow_chat(tools_generator, monkeypatch) -> ChatRecall:
    """The tiny model at 0.03 s a token: a slow model on a busy machine."""
    model = tools_generator.model
    forward = model.forward

    def slow_forward(*args, **kwargs):
        time.sleep(0.03)
        return forward(*args, **kwargs)

    monkeypatch.setattr(model, "forward", slow_forward)
    return ChatRecall(generator=tools_generator, max_tokens=400, timeout=1.0)


def test_structured_output_keeps_the_time_bound_and_says_so(slow_chat):
    with pytest.warns(RuntimeWarning, match="max_time=1 s"):
        out = slow_chat.with_structured_output(Pet, include_raw=True).invoke("My dog is called Pluto.")
    assert out["raw"].response_metadata["finish_reason"] == "time"
    pet = out["parsed"]
    assert isinstance(pet, Pet) and pet.name.strip() == pet.name != "" and pet.species.strip() == pet.species != ""

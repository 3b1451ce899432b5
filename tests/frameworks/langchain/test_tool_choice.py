"""``bind_tools(tool_choice="none")`` and the stream of a reply with calls, through ``ChatRecall``.

A tiny random Llama whose template renders tools; a logits processor added under the adapter
stands in for a model that writes a given reply (a call, text after a call)."""

from __future__ import annotations

import json

import pytest
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import tool

from langchain_recall import ChatRecall
from tests.helpers.logits import writing

CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'


@tool
def get_weather(city: str) -> str:
    """Get today's weather in a city."""
    return f"It is sunny in {city}."


def _writing(generator, monkeypatch, reply: str) -> ChatRecall:
    """``ChatRecall`` over ``generator``, whose every reply is ``reply`` (generate and stream)."""
    return ChatRecall(generator=generator, max_tokens=writing(generator, monkeypatch, reply) + 2)


def _joined(chunks):
    total = chunks[0]
    for chunk in chunks[1:]:
        total += chunk
    return total


def test_choice_none_gives_text_and_no_call(tools_generator, monkeypatch):
    bound = _writing(tools_generator, monkeypatch, CALL).bind_tools([get_weather], tool_choice="none")
    message = bound.invoke("Weather in Paris?")
    assert message.tool_calls == [] and message.invalid_tool_calls == []
    assert message.response_metadata["finish_reason"] == "stop" and "get_weather" in message.content
    streamed = _joined(list(bound.stream("Weather in Paris?")))
    assert streamed.tool_calls == [] and streamed.content == message.content


def test_choice_none_on_a_template_without_tool_support(generator):
    message = ChatRecall(generator=generator, max_tokens=3).bind_tools([get_weather], tool_choice="none").invoke("hi")
    assert message.tool_calls == [] and isinstance(message.content, str)


@pytest.mark.parametrize("reply", [f"Let me check.\n{CALL}\nI will report back.", f"{CALL}\nDone."])
def test_streamed_content_is_invoke_content(tools_generator, monkeypatch, reply):
    bound = _writing(tools_generator, monkeypatch, reply).bind_tools([get_weather])
    message = bound.invoke("Weather in Paris?")
    streamed = _joined(list(bound.stream("Weather in Paris?")))
    assert [c["name"] for c in message.tool_calls] == ["get_weather"] == [c["name"] for c in streamed.tool_calls]
    assert streamed.content == message.content == reply.replace(CALL, "").strip()


@pytest.mark.parametrize("reply", ['<tool_call>\n{"name": "get_weather", "arguments": {"city": "Pa',
                                   '<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>'],
                         ids=["cut-short", "unbound-tool"])  # fmt: skip
def test_an_invalid_call_streams_invalid_as_invoke_reports_it(tools_generator, monkeypatch, reply):
    """LangChain reads a streamed chunk's calls again from their args: until 2026-12-07 a call cut
    short (or to an unbound tool) streamed as a valid call with the wrong arguments (a reviewer)."""
    bound = _writing(tools_generator, monkeypatch, reply).bind_tools([get_weather])
    message = bound.invoke("Weather in Paris?")
    streamed = _joined(list(bound.stream("Weather in Paris?")))
    assert message.tool_calls == [] == streamed.tool_calls and len(message.invalid_tool_calls) == 1
    [invalid] = streamed.invalid_tool_calls
    assert json.loads(invalid["args"]) == message.invalid_tool_calls[0]["args"] and invalid["name"]


def test_a_mistral_round_trip(tools_generator, monkeypatch):
    """Mistral's templates take only 9-alphanumeric call ids: a call, its ToolMessage, the next call."""
    from tests.unit.test_structured_tool_choice import MISTRAL_TEMPLATE

    monkeypatch.setattr(tools_generator.tokenizer, "chat_template", MISTRAL_TEMPLATE)
    chat = ChatRecall(generator=tools_generator, max_tokens=80)
    ai = chat.bind_tools([get_weather], tool_choice="get_weather").invoke([HumanMessage("Weather in Paris?")])
    (call,) = ai.tool_calls
    assert len(call["id"]) == 9 and call["id"].isalnum()
    history = [HumanMessage("Weather in Paris?"), ai, ToolMessage("sunny", tool_call_id=call["id"])]
    assert isinstance(chat.bind_tools([get_weather]).invoke(history, max_tokens=3).content, str)
    other = ai.model_copy(update={"tool_calls": [{**call, "id": "toolu_01A-other-framework"}]})
    history = [HumanMessage("Weather in Paris?"), other, ToolMessage("sunny", tool_call_id="toolu_01A-other-framework")]
    assert isinstance(chat.invoke(history, max_tokens=3).content, str)  # ids from elsewhere too, tools bound or not


@pytest.mark.parametrize("parallel, made", [(False, ["Paris"]), (True, ["Paris", "Oslo"]), (None, ["Paris", "Oslo"])])
def test_parallel_tool_calls_false_keeps_the_first_call_the_model_chose(tools_generator, monkeypatch, parallel, made):
    """OpenAI's ``parallel_tool_calls=False``: one call at most, also when the model chooses. It held
    only for a forced choice, and both calls came back (until 2026-12-07: a reviewer). Not given: as many
    as the model writes."""
    two = CALL + "\n" + CALL.replace("Paris", "Oslo")
    chat = _writing(tools_generator, monkeypatch, two)
    bound = chat.bind_tools([get_weather], **({} if parallel is None else {"parallel_tool_calls": parallel}))
    for message in (bound.invoke("Weather?"), _joined(list(bound.stream("Weather?")))):
        assert [call["args"]["city"] for call in message.tool_calls] == made
        assert not message.invalid_tool_calls


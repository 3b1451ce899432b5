"""``chat_with_tools(tool_choice="none")`` and the stream of a reply with calls, through ``RecallLLM``.

A tiny random Llama whose template renders tools; a logits processor added under the adapter
stands in for a model that writes a given reply."""

from __future__ import annotations

from llama_index.core.llms import ChatMessage
from llama_index.core.prompts import PromptTemplate
from llama_index.core.tools import FunctionTool

from llamaindex_recall import RecallLLM
from llamaindex_recall.llms import to_chat_messages
from recall_core import RecallGenerator
from tests.helpers.adapters import Person, weather
from tests.helpers.logits import writing
from tests.helpers.tiny import tiny_model

CALL = '<tool_call>\n{"name": "weather", "arguments": {"city": "Paris"}}\n</tool_call>'


def _writing(generator, monkeypatch, reply: str) -> RecallLLM:
    """``RecallLLM`` over ``generator``, whose every reply is ``reply`` (generate and stream)."""
    return RecallLLM(generator=generator, max_new_tokens=writing(generator, monkeypatch, reply) + 2)


def test_choice_none_gives_text_and_no_call(tools_generator, monkeypatch):
    llm = _writing(tools_generator, monkeypatch, CALL)
    tools = [FunctionTool.from_defaults(weather)]
    response = llm.chat_with_tools(tools, user_msg="Weather?", tool_choice="none")
    assert llm.get_tool_calls_from_response(response, error_on_no_tool_call=False) == []
    assert "weather" in response.message.content
    streamed = list(llm.stream_chat_with_tools(tools, user_msg="Weather?", tool_choice="none"))
    assert llm.get_tool_calls_from_response(streamed[-1], error_on_no_tool_call=False) == []
    assert streamed[-1].message.content == response.message.content


def test_streamed_content_is_chat_content(tools_generator, monkeypatch):
    llm = _writing(tools_generator, monkeypatch, f"Let me check.\n{CALL}\nI will report back.")
    tools = [FunctionTool.from_defaults(weather)]
    response = llm.chat_with_tools(tools, user_msg="Weather?")
    streamed = list(llm.stream_chat_with_tools(tools, user_msg="Weather?"))
    assert [c.tool_name for c in llm.get_tool_calls_from_response(streamed[-1])] == ["weather"]
    assert "".join(r.delta or "" for r in streamed) == response.message.content == "Let me check.\n\nI will report back."


def test_stream_structured_predict_forces_the_call(tools_generator):
    """As ``structured_predict`` does, on a template with tools and on one without (where a call that
    is not forced is refused)."""
    model, tokenizer = tiny_model("llama")
    model.config.max_position_embeddings = 2048  # the tools described in the system message are long
    prompt = PromptTemplate("Extract the person: {text}")
    for engine in (tools_generator, RecallGenerator(model, tokenizer)):
        llm = RecallLLM(generator=engine, max_new_tokens=120)
        last = list(llm.stream_structured_predict(Person, prompt, text="Ada is 36."))[-1]
        assert isinstance(last, Person) and last.name and isinstance(last.age, int)
        streamed = list(llm.as_structured_llm(Person).stream_chat([ChatMessage(role="user", content="Ada is 36.")]))
        assert Person.model_validate_json(streamed[-1].message.content).name


async def test_astream_structured_predict_forces_the_call(tools_generator):
    llm = RecallLLM(generator=tools_generator, max_new_tokens=120)
    stream = await llm.astream_structured_predict(Person, PromptTemplate("Extract the person: {text}"), text="Ada is 36.")
    objects = [item async for item in stream]
    assert isinstance(objects[-1], Person) and objects[-1].name


def test_a_streamed_reply_with_calls_goes_back_once(tools_generator):
    """The streamed reply's calls are blocks and OpenAI-style ``additional_kwargs``: the history has each once."""
    llm = RecallLLM(generator=tools_generator, max_new_tokens=120)
    last = list(llm.stream_chat_with_tools([FunctionTool.from_defaults(weather)], user_msg="Weather?",
                                           tool_required=True))[-1]  # fmt: skip
    assert len(last.message.additional_kwargs["tool_calls"]) == 1
    assert len(to_chat_messages([last.message])[0]["tool_calls"]) == 1


def test_structured_predict_of_a_model_with_an_optional_object_before_required_fields():
    """While closing at the budget's end the model opened the optional `bill` the reserve did not count,
    and the reply was cut before `items` and `level`: "expected at least one tool call" at 120 and 200
    tokens (until 2026-12-07, a reviewer). Closing opens only a missing required key."""
    import enum

    from pydantic import BaseModel

    class Level(int, enum.Enum):
        low = 1
        high = 2

    class Addr(BaseModel):
        city: str

    class Order(BaseModel):
        """An order."""

        ship: Addr
        bill: Addr | None = None
        items: list[Addr]
        level: Level

    model, tokenizer = tiny_model("llama")
    model.config.max_position_embeddings = 2048
    generator = RecallGenerator(model, tokenizer)
    for budget in (120, 200):
        order = RecallLLM(generator=generator, max_new_tokens=budget).structured_predict(
            Order, PromptTemplate("Extract: {text}"), text="Ship to Paris, bill Rome.")
        assert isinstance(order, Order)


def test_one_call_unless_parallel_calls_are_allowed_as_llamaindex_s_openai_does(tools_generator, monkeypatch):
    """``allow_parallel_tool_calls=False`` (LlamaIndex's default) was not kept when the model chose:
    two calls came back, and ``predict_and_call`` raised "Invalid" (until 2026-12-07: a reviewer)."""
    llm = _writing(tools_generator, monkeypatch, CALL + "\n" + CALL.replace("Paris", "Oslo"))
    tools = [FunctionTool.from_defaults(weather)]
    for allowed, cities in ((False, ["Paris"]), (True, ["Paris", "Oslo"])):
        response = llm.chat_with_tools(tools, user_msg="Weather?", allow_parallel_tool_calls=allowed)
        assert [call.tool_kwargs["city"] for call in llm.get_tool_calls_from_response(response)] == cities
    made = llm.predict_and_call(tools, user_msg="Weather?")
    assert [output.raw_input["kwargs"]["city"] for output in made.sources] == ["Paris"]


"""``tool_choice="none"``, the stream of a reply with calls, and how each family's reply is read
(tiny random models; a logits processor stands in for a model that writes a given reply)."""

from __future__ import annotations

import pytest

from recall_core import RecallGenerator, RecallSession
from recall_core.models.templates import SMOLLM2_TOOLS_TEMPLATE
from recall_core.structured.constrained import Constraint, lark_grammar
from recall_core.structured.tools import FORMATS, ToolCallSplitter, calls_possible
from tests.helpers.logits import ForceAt
from tests.helpers.tiny import tiny_model

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
ASK = [{"role": "user", "content": "Weather in Paris?"}]
CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'


def _generator(template: str | None) -> RecallGenerator:
    model, tokenizer = tiny_model("llama")
    model.config.max_position_embeddings = 2048
    if template is not None:
        tokenizer.chat_template = template
    return RecallGenerator(model, tokenizer, generation_defaults={"do_sample": False})


@pytest.fixture(scope="module")
def tool_generator() -> RecallGenerator:
    return _generator(SMOLLM2_TOOLS_TEMPLATE)


@pytest.fixture(scope="module")
def plain_generator() -> RecallGenerator:
    return _generator(None)


def _writes(generator: RecallGenerator, text: str) -> tuple[list[int], ForceAt]:
    ids = generator.tokenizer(text, add_special_tokens=False).input_ids + [generator.tokenizer.eos_token_id]
    return ids, ForceAt(0, ids)


# --------------------------------------------------------------------------- tool_choice="none"
def test_choice_none_is_a_text_reply_even_if_the_model_writes_a_call(tool_generator):
    ids, force = _writes(tool_generator, CALL)
    result = tool_generator.generate(ASK, tools=[WEATHER], tool_choice="none", logits_processor=[force],
                                     max_new_tokens=len(ids) + 2)  # fmt: skip
    assert not result.tool_calls and not result.invalid_tool_calls
    assert result.finish_reason == "stop" and "get_weather" in result.text


def test_choice_none_does_not_render_the_tools(tool_generator):
    plan = tool_generator.plan(ASK, tools=[WEATHER], tool_choice="none")
    assert plan.template_tools is None and plan.constraint is None and plan.tool_format is None
    assert not calls_possible([WEATHER], "none") and calls_possible([WEATHER], "auto")


def test_choice_none_works_on_a_template_without_tool_support(plain_generator):
    history = [*ASK, {"role": "assistant", "content": "", "tool_calls": [
        {"type": "function", "id": "c1", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
        {"role": "tool", "content": "sunny", "tool_call_id": "c1"}]  # fmt: skip
    result = plain_generator.generate(history, tools=[WEATHER], tool_choice="none", max_new_tokens=4)
    assert not result.tool_calls and result.finish_reason == "length"


# --------------------------------------------------------------------------- streaming
@pytest.mark.parametrize(
    "family, reply",
    [
        ("hermes", f"Let me check.\n{CALL}\nI will report back."),
        ("hermes", f"  Let me check. {CALL} {CALL}  Done."),
        ("mistral", 'Checking. [TOOL_CALLS][{"name": "f", "arguments": {}}]'),
        ("llama3", '{"name": "f", "parameters": {}}'),
    ],
)
def test_streamed_content_is_the_parsed_content(family, reply):
    for size in (1, 3, 7):
        splitter = ToolCallSplitter(FORMATS[family])
        shown = "".join(splitter.feed(reply[i : i + size]) for i in range(0, len(reply), size))
        rest, parsed = splitter.finish()
        assert parsed.tool_calls
        assert (shown + rest).strip() == parsed.content


def test_stream_of_a_reply_with_text_after_its_call_matches_generate(tool_generator):
    reply = f"Let me check.\n{CALL}\nI will report back."
    ids, force = _writes(tool_generator, reply)
    result = tool_generator.generate(ASK, tools=[WEATHER], logits_processor=[force], max_new_tokens=len(ids) + 2)
    _, force = _writes(tool_generator, reply)
    stream = tool_generator.stream(ASK, tools=[WEATHER], logits_processor=[force], max_new_tokens=len(ids) + 2)
    streamed = "".join(stream)
    assert result.text == "Let me check.\n\nI will report back." and streamed == result.text
    assert [c.name for c in stream.result.tool_calls] == ["get_weather"]


@pytest.mark.parametrize("in_session", [False, True])
def test_the_engines_own_stream_holds_a_call_back(tool_generator, in_session):
    """``stream()`` with tools, not only the adapters' streams: joining the pieces gives the result's
    text (until 2026-12-07 the pieces held the call's markup, a reviewer found)."""
    reply = f"Let me check.\n{CALL}"
    ids, force = _writes(tool_generator, reply)
    result = tool_generator.generate(ASK, tools=[WEATHER], logits_processor=[force], max_new_tokens=len(ids) + 2)
    _, force = _writes(tool_generator, reply)
    engine = RecallSession(tool_generator) if in_session else tool_generator
    stream = engine.stream(ASK, tools=[WEATHER], logits_processor=[force], max_new_tokens=len(ids) + 2)
    assert "".join(stream) == result.text == stream.result.text == "Let me check."
    assert [c.name for c in stream.result.tool_calls] == ["get_weather"]


# --------------------------------------------------------------------------- reading Llama 3 replies, bound names
LLAMA3 = FORMATS["llama3"]
SEARCH = {"type": "function", "function": {"name": "search", "parameters": {
    "type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}}}  # fmt: skip


def test_llama3_parallel_calls_keep_a_separator_inside_a_string(tool_generator):
    reply = '{"name": "search", "parameters": {"q": "a; b"}}; {"name": "search", "parameters": {"q": "c;"}}'
    parsed = LLAMA3.parse(reply)
    assert [c.arguments for c in parsed.tool_calls] == [{"q": "a; b"}, {"q": "c;"}] and not parsed.invalid_tool_calls
    grammar = LLAMA3.forced_grammar(tool_generator.tokenizer, [SEARCH], parallel=True)
    constraint = Constraint(tool_generator.tokenizer, lark_grammar(grammar), vocab_size=tool_generator.vocab_size)
    assert constraint.accepts(reply)  # what the forced grammar writes is read back as written


@pytest.mark.parametrize(
    "reply",
    ['{"name": "Ada Lovelace", "born": 1815}', '{"name": "Ada"}; {"name": "Bob"}', '{"title": "x"}', "[1, 2]"],
)
def test_llama3_json_that_is_not_a_call_is_content(reply):
    for fmt in (LLAMA3, LLAMA3.bound_to(["search"])):
        parsed = fmt.parse(reply)
        assert parsed.content == reply and not parsed.tool_calls and not parsed.invalid_tool_calls


def test_llama3_calls_are_still_read():
    bound = LLAMA3.bound_to(["search", "ping"])
    assert [c.name for c in bound.parse('{"name": "ping"}').tool_calls] == ["ping"]  # a bound name, no parameters
    assert [c.name for c in bound.parse('<|python_tag|>{"name": "search", "parameters": {"q": "x"}}').tool_calls]
    cut = bound.parse('{"name": "search", "parameters": {"q": "x')
    assert cut.invalid_tool_calls and cut.invalid_tool_calls[0].name == "search" and cut.content == ""


def test_llama3_calls_a_line_apart_and_a_call_cut_before_its_parameters_are_calls_not_text():
    """Review of the first fix: calls on separate lines lost the second (its JSON shown as text), and a
    call cut before ``"parameters"`` became text; both were calls (the second one invalid) before."""
    for fmt in (LLAMA3, LLAMA3.bound_to(["search", "ping"])):
        apart = fmt.parse('{"name": "search", "parameters": {"q": "x"}}\n{"name": "ping", "parameters": {}}')
        assert [c.name for c in apart.tool_calls] == ["search", "ping"] and apart.content == ""
        cut = fmt.parse('{"name": "search", "param')
        assert [c.name for c in cut.invalid_tool_calls] == ["search"] and cut.content == ""
    tagged = LLAMA3.parse('<|python_tag|>{"name": "search", "parameters": {"q": "x"}}<|eom_id|>')
    assert [c.name for c in tagged.tool_calls] == ["search"] and tagged.content == ""


@pytest.mark.parametrize(
    "family, reply",
    [
        ("hermes", '<tool_call>\n{"name": "delete_all", "arguments": {}}\n</tool_call>'),
        ("llama3", '{"name": "delete_all", "parameters": {}}'),
        ("mistral", '[TOOL_CALLS][{"name": "delete_all", "arguments": {}}]'),
    ],
)
def test_a_call_to_a_tool_that_is_not_bound_is_invalid(family, reply):
    parsed = FORMATS[family].bound_to(["search"]).parse(reply)
    assert not parsed.tool_calls and parsed.invalid_tool_calls[0].name == "delete_all"
    assert "not a bound tool (bound: search)" in parsed.invalid_tool_calls[0].error
    assert FORMATS[family].parse(reply).tool_calls  # the format alone does not know the tools


def test_the_engine_reports_a_call_to_an_unbound_tool(tool_generator):
    ids, force = _writes(tool_generator, CALL.replace("get_weather", "delete_all"))
    result = tool_generator.generate(ASK, tools=[WEATHER], logits_processor=[force], max_new_tokens=len(ids) + 2)
    assert not result.tool_calls and [c.name for c in result.invalid_tool_calls] == ["delete_all"]
    assert result.finish_reason == "stop"


#: A Llama-3-style template (the family is read off ``<|python_tag|>``) that renders tools.
LLAMA3_TEMPLATE = (
    "{# <|python_tag|> ipython parameters #}{% if tools %}<|im_start|>system\n{{ tools | tojson }}<|im_end|>\n"
    "{% endif %}{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "<|im_start|>assistant\n"
)


def test_the_engine_keeps_a_llama3_json_answer_as_content():
    generator = _generator(LLAMA3_TEMPLATE)
    answer = '{"name": "Ada Lovelace", "born": 1815}'
    ids, force = _writes(generator, answer)
    result = generator.generate(ASK, tools=[WEATHER], logits_processor=[force], max_new_tokens=len(ids) + 2)
    assert result.text == answer and not result.tool_calls and not result.invalid_tool_calls
    assert result.finish_reason == "stop"


# --------------------------------------------------------------------------- Mistral's call ids
#: The call-id checks of Mistral-7B-Instruct-v0.3's template, verbatim, in a short template.
MISTRAL_TEMPLATE = (
    "{%- if tools %}[AVAILABLE_TOOLS] {{ tools | tojson }}[/AVAILABLE_TOOLS]{% endif %}"
    "{%- for message in messages %}{%- if message.role == 'user' %}[INST] {{ message.content }}[/INST]"
    "{%- elif message.tool_calls is defined and message.tool_calls is not none %}[TOOL_CALLS] ["
    "{%- for tool_call in message.tool_calls %}{{ tool_call.function | tojson }}"
    "{%- if not tool_call.id is defined or tool_call.id|length != 9 %}"
    "{{- raise_exception('Tool call IDs should be alphanumeric strings with length 9!') }}{%- endif %}"
    "{%- endfor %}]{%- elif message.role == 'assistant' %} {{ message.content }}"
    "{%- elif message.role == 'tool' %}[TOOL_RESULTS] {{ message.content }}"
    "{%- if not message.tool_call_id is defined or message.tool_call_id|length != 9 %}"
    "{{- raise_exception('Tool call IDs should be alphanumeric strings with length 9!') }}{%- endif %}"
    "[/TOOL_RESULTS]{%- endif %}{%- endfor %}"
)


def test_mistral_calls_get_ids_its_template_takes_back():
    generator = _generator(MISTRAL_TEMPLATE)
    result = generator.generate(ASK, tools=[WEATHER], tool_choice="any", max_new_tokens=80)
    (call,) = result.tool_calls
    assert len(call.id) == 9 and call.id.isalnum()
    history = [*ASK, {"role": "assistant", "content": "", "tool_calls": [
        {"type": "function", "id": "call_0123456789abcdef01234567", "function": {"name": "get_weather",
                                                                             "arguments": {"city": "Paris"}}}]},
        {"role": "tool", "content": "sunny", "tool_call_id": "call_0123456789abcdef01234567"}]  # fmt: skip
    plan = generator.plan(history, tools=[WEATHER])
    new_id = plan.prompt[1]["tool_calls"][0]["id"]
    assert len(new_id) == 9 and new_id.isalnum() and plan.prompt[2]["tool_call_id"] == new_id  # still paired
    assert history[1]["tool_calls"][0]["id"].startswith("call_")  # the caller's messages are not touched
    result = generator.generate(history, tools=[WEATHER], max_new_tokens=3)  # the template renders it
    assert result.finish_reason == "length"


def test_a_stop_string_never_cuts_a_constrained_reply(tool_generator):
    """A forced call's markup and JSON hold newlines and quotes: an instance's ``stop=["\\n"]`` made every
    forced call invalid ("cut short, no closing tag"), and a structured reply's JSON was cut at a
    quote (until 2026-12-07: a reviewer). A constrained reply is not cut; free text still is."""
    import json

    forced = tool_generator.generate(ASK, tools=[WEATHER], tool_choice="get_weather", stop=["\n"], max_new_tokens=80)
    assert [call.name for call in forced.tool_calls] == ["get_weather"] and not forced.invalid_tool_calls
    schema = {"type": "object", "properties": {"city": {"type": "string", "maxLength": 8}}, "required": ["city"]}
    shaped = {"type": "json_schema", "json_schema": {"name": "place", "schema": schema}}
    reply = tool_generator.generate(ASK, response_format=shaped, stop=['"'], max_new_tokens=60)
    assert isinstance(json.loads(reply.text)["city"], str)
    assert "".join(tool_generator.stream(ASK, response_format=shaped, stop=['"'], max_new_tokens=60)) == reply.text
    assert tool_generator.call_stop_strings({"stop": ['"'], "response_format": shaped}) == []
    assert tool_generator.call_stop_strings({"stop": ['"'], "tools": [WEATHER], "tool_choice": "auto"}) == ['"']


"""Tool calls, structured output and constrained decoding in the engine (tiny random models).

A random model writes garbage unless constrained, which is what these tests want: whatever
it would write, a forced call or a JSON schema must come out valid. The recall loop and the
grammar must compose: a memory injected inside a constrained span leaves the grammar where
it was, and ``<recall>`` stays allowed while there is a memory.
"""

from __future__ import annotations

import json

import pytest
import torch

from recall_core import RECALL_TOKEN, RecallConfig, RecallGenerator
from recall_core.models.templates import SMOLLM2_TOOLS_TEMPLATE
from recall_core.structured.constrained import (
    Constraint,
    GrammarError,
    json_schema_grammar,
    lark_grammar,
    strict_schema,
)
from recall_core.structured.tools import (
    FORMATS,
    ToolCallSplitter,
    supports_tools,
    tool_format,
    tools_system_text,
)
from recall_core.tokens import MEMORY_PAD_TOKEN
from tests.helpers.memories import FixedMemory
from tests.helpers.tiny import tiny_model

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the weather at a location.",
        "parameters": {
            "type": "object",
            "properties": {"location": {"type": "string"}, "days": {"type": "integer"}},
            "required": ["location", "days"],
        },
    },
}
NO_ARGS = {"type": "function", "function": {"name": "ping", "description": "Ping.", "parameters": {}}}
ASK = [{"role": "user", "content": "What is the weather in Lisbon?"}]


@pytest.fixture(scope="module")
def tool_generator() -> RecallGenerator:
    """A tiny random Llama whose chat template renders tools (the default model's template).

    Its 400-token vocabulary spells most JSON a character at a time: a call takes about 90 tokens.
    """
    model, tokenizer = tiny_model("llama")
    model.config.max_position_embeddings = 2048  # rotary positions: the tools' description is long in a 400-token vocabulary
    tokenizer.chat_template = SMOLLM2_TOOLS_TEMPLATE
    return RecallGenerator(model, tokenizer, generation_defaults={"max_new_tokens": 120, "do_sample": False})


@pytest.fixture(scope="module")
def plain_generator() -> RecallGenerator:
    """A tiny random Llama whose template has no tool support."""
    model, tokenizer = tiny_model("llama")
    model.config.max_position_embeddings = 2048
    return RecallGenerator(model, tokenizer, generation_defaults={"max_new_tokens": 120, "do_sample": False})


# --------------------------------------------------------------------------- forced calls
@pytest.mark.parametrize("choice", ["any", "required", "get_weather", {"type": "function", "function": {"name": "get_weather"}}])
def test_forced_choice_gives_a_valid_call(tool_generator, choice):
    result = tool_generator.generate(ASK, tools=[WEATHER, NO_ARGS], tool_choice=choice)
    assert len(result.tool_calls) == 1, (result.text, result.invalid_tool_calls)
    call = result.tool_calls[0]
    if choice != "any" and choice != "required":
        assert call.name == "get_weather"
    if call.name == "get_weather":
        assert set(call.arguments) == {"location", "days"}
        assert isinstance(call.arguments["location"], str) and call.arguments["location"]
        assert isinstance(call.arguments["days"], int)
    assert result.finish_reason == "tool_calls" and result.text == ""


def test_forced_call_with_no_arguments(tool_generator):
    result = tool_generator.generate(ASK, tools=[NO_ARGS], tool_choice="ping")
    assert [(c.name, c.arguments) for c in result.tool_calls] == [("ping", {})]


def test_forced_call_fits_a_small_budget(tool_generator):
    """The end of the budget closes the JSON: a valid call, not text cut mid-string."""
    tokenizer = tool_generator.tokenizer
    shortest = len(tokenizer(FORMATS["hermes"].write_call("get_weather", {"location": "L", "days": 1})).input_ids)
    budget = shortest + 12  # far less than the random model would write unconstrained
    result = tool_generator.generate(ASK, tools=[WEATHER], tool_choice="any", max_new_tokens=budget)
    assert result.tool_calls, result.invalid_tool_calls
    assert result.usage.generated_tokens <= budget


def test_template_renders_tools_and_results(tool_generator):
    history = [
        *ASK,
        {"role": "assistant", "content": "", "tool_calls": [
            {"type": "function", "id": "c1", "function": {"name": "get_weather", "arguments": {"location": "Lisbon"}}}
        ]},
        {"role": "tool", "content": "sunny", "tool_call_id": "c1"},
    ]  # fmt: skip
    ids = tool_generator.encode(history, tools=[WEATHER], config=RecallConfig(recall_policy="explicit"))
    text = tool_generator.tokenizer.decode(ids[0])
    assert tools_system_text([WEATHER]) in text
    assert '<tool_call>\n{"name": "get_weather", "arguments": {"location": "Lisbon"}}\n</tool_call>' in text
    assert "<tool_response>\nsunny\n</tool_response>" in text
    result = tool_generator.generate(history, tools=[WEATHER], tool_choice="auto", max_new_tokens=5)
    assert isinstance(result.text, str)


def test_template_without_tools_describes_them_when_a_call_is_forced(plain_generator):
    assert not supports_tools(plain_generator.tokenizer)
    result = plain_generator.generate(ASK, tools=[WEATHER], tool_choice="any")
    assert result.tool_calls and result.tool_calls[0].name == "get_weather"
    history = [*ASK, {"role": "assistant", "content": "", "tool_calls": [
        {"type": "function", "id": "c1", "function": {"name": "get_weather", "arguments": {"location": "Lisbon", "days": 1}}}
    ]}, {"role": "tool", "content": "sunny", "tool_call_id": "c1"}]  # fmt: skip
    again = plain_generator.generate(history, tools=[WEATHER], tool_choice="get_weather")
    assert again.tool_calls


def test_template_without_tools_refuses_auto(plain_generator):
    with pytest.raises(ValueError, match="no tool support"):
        plain_generator.generate(ASK, tools=[WEATHER])


# --------------------------------------------------------------------------- bad input
def test_unknown_tool_choice_names_the_tools(tool_generator):
    with pytest.raises(ValueError, match="'nope', which is not a bound tool.*get_weather"):
        tool_generator.generate(ASK, tools=[WEATHER], tool_choice="nope")


def test_schema_the_engine_cannot_compile_names_the_tool(tool_generator):
    bad = {"type": "function", "function": {"name": "broken", "parameters": {
        "type": "object", "properties": {"x": {"type": "strin"}}}}}  # fmt: skip
    with pytest.raises(GrammarError, match="tool 'broken'"):
        tool_generator.generate(ASK, tools=[WEATHER, bad], tool_choice="get_weather")
    assert issubclass(GrammarError, ValueError)


@pytest.mark.parametrize(
    "tools, message",
    [([{"name": "x"}], "tool 0 must be"), ([{"type": "function", "function": {"name": "x", "parameters": {"type": "array"}}}],
                                            "of type 'object'")],
)  # fmt: skip
def test_malformed_tool_dicts(tool_generator, tools, message):
    with pytest.raises(ValueError, match=message):
        tool_generator.generate(ASK, tools=tools, tool_choice="any")


def test_tools_need_messages_and_exclude_response_format(tool_generator):
    with pytest.raises(ValueError, match="chat messages"):
        tool_generator.generate("hello", tools=[WEATHER], tool_choice="any")
    with pytest.raises(ValueError, match="not both"):
        tool_generator.generate(ASK, tools=[WEATHER], response_format={"type": "json_object"})
    with pytest.raises(ValueError, match="needs tools"):
        tool_generator.generate(ASK, tool_choice="any")
    with pytest.raises(ValueError, match="response_format must be"):
        tool_generator.generate(ASK, response_format={"type": "yaml"})


# --------------------------------------------------------------------------- structured output
def test_json_schema_response_is_valid(tool_generator):
    schema = {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"},
              "tags": {"type": "array", "items": {"type": "string"}}}, "required": ["name", "age"]}  # fmt: skip
    result = tool_generator.generate(ASK, response_format={"type": "json_schema", "json_schema": {"name": "P", "schema": schema}})
    value = json.loads(result.text)
    assert set(value) <= {"name", "age", "tags"} and {"name", "age"} <= set(value)
    assert isinstance(value["age"], int) and value["name"]


def test_json_mode_gives_an_object(tool_generator):
    result = tool_generator.generate(ASK, response_format={"type": "json_object"}, max_new_tokens=40)
    assert isinstance(json.loads(result.text), dict)


def test_strict_schema_keeps_what_the_schema_says():
    schema = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string", "enum": ["x"]},
              "c": {"type": "object", "additionalProperties": True}}, "required": ["a", "b"]}  # fmt: skip
    strict = strict_schema(schema)
    assert strict["additionalProperties"] is False and strict["properties"]["a"]["minLength"] == 1
    assert "minLength" not in strict["properties"]["b"] and strict["properties"]["c"]["additionalProperties"] is True
    assert schema["properties"]["a"] == {"type": "string"}  # the caller's schema is not touched


def test_constraint_accepts_unicode_and_refuses_other_keys(tool_generator):
    grammar = json_schema_grammar({"type": "object", "properties": {"n": {"type": "string"}}, "required": ["n"]})
    constraint = Constraint(tool_generator.tokenizer, grammar, vocab_size=tool_generator.vocab_size)
    assert constraint.accepts('{"n": "你好啊集团"}')
    assert not constraint.accepts('{"n": "x", "m": 1}')
    assert not constraint.accepts('{"n": ""}')
    with pytest.raises(GrammarError, match="lark thing"):
        Constraint(tool_generator.tokenizer, lark_grammar("start: undefined_rule"), vocab_size=10**3, name="lark thing")


# --------------------------------------------------------------------------- recall composes with grammars
def test_recall_in_the_prompt_then_a_constrained_call(tool_generator):
    memory = FixedMemory("Ada lives in Lisbon.")
    messages = [{"role": "user", "content": f"Where do I live? {RECALL_TOKEN} Get the weather there."}]
    result = tool_generator.generate(messages, tools=[WEATHER], tool_choice="any", memory=memory,
                                     config=RecallConfig(recall_policy="explicit"))  # fmt: skip
    assert result.recalls[0].memory_id == "m0" and result.recalls[0].in_prompt
    # The random model also writes <recall> inside the call (allowed while there is a memory):
    # each of those recalls injects too, and the call still comes out valid.
    assert all(r.memory_id == "m0" for r in result.recalls) and result.usage.injected_tokens > 0
    assert result.tool_calls and result.tool_calls[0].name == "get_weather"


def test_a_recall_inside_a_constrained_span_leaves_the_grammar_where_it_was(tool_generator):
    tokenizer = tool_generator.tokenizer
    recall_id, pad_id = tokenizer.convert_tokens_to_ids([RECALL_TOKEN, MEMORY_PAD_TOKEN])
    grammar = lark_grammar(FORMATS["hermes"].forced_grammar(tokenizer, [WEATHER], parallel=False))
    constraint = Constraint(tokenizer, grammar, vocab_size=tool_generator.vocab_size)
    processor = constraint.logits_processor(allow_ids=[recall_id], skip_ids=[recall_id, pad_id])
    head = tokenizer('<tool_call>\n{"name": "get_weather", "arguments": {"location": "Lis', add_special_tokens=False).input_ids
    rest = tokenizer('bon", "days": 2}}\n</tool_call>', add_special_tokens=False).input_ids
    width = tool_generator.vocab_size
    sequence = [5, 6, 7]
    processor(torch.tensor([sequence]), torch.zeros(1, width))
    sequence += head
    before = processor(torch.tensor([sequence]), torch.zeros(1, width))
    assert before[0, recall_id] == 0  # <recall> allowed next to the grammar's tokens
    sequence += [recall_id] + [pad_id] * 4  # the loop injected a memory here
    after = processor(torch.tensor([sequence]), torch.zeros(1, width))
    assert torch.equal(torch.isinf(before), torch.isinf(after))
    for token in rest:
        scores = processor(torch.tensor([sequence]), torch.zeros(1, width))
        assert scores[0, token] == 0, tokenizer.decode([token])
        sequence.append(token)
    scores = processor(torch.tensor([sequence]), torch.zeros(1, width))  # reads the last token
    assert processor.done and not torch.isinf(scores[0, tokenizer.eos_token_id])


def test_no_memory_means_no_recall_inside_the_grammar(tool_generator):
    tokenizer = tool_generator.tokenizer
    recall_id = tokenizer.convert_tokens_to_ids(RECALL_TOKEN)
    constraint = Constraint(tokenizer, json_schema_grammar({"type": "object"}), vocab_size=tool_generator.vocab_size)
    processor = constraint.logits_processor(skip_ids=[recall_id])
    scores = processor(torch.tensor([[1, 2]]), torch.zeros(1, tool_generator.vocab_size))
    assert torch.isinf(scores[0, recall_id])


# --------------------------------------------------------------------------- formats and parsing
@pytest.mark.parametrize(
    "template, family",
    [
        ("{% for t in tools %}{% endfor %}<tool_call>", "hermes"),
        ("{{ tools }}[TOOL_CALLS]", "mistral"),
        ("{{ tools }}<|python_tag|>", "llama3"),
        ("{{ messages }}", "hermes"),
    ],
)
def test_format_is_read_off_the_template(template, family):
    class Tokenizer:
        chat_template = template

    assert tool_format(Tokenizer()).name == family
    assert supports_tools(Tokenizer()) == ("tools" in template)


@pytest.mark.parametrize(
    "family, text, calls, content",
    [
        ("hermes", 'Sure.\n<tool_call>\n{"name": "f", "arguments": {"x": 1}}\n</tool_call>', [("f", {"x": 1})], "Sure."),
        ("hermes", '<tool_call>[{"name": "f", "arguments": {}}, {"name": "g", "arguments": "{\\"y\\": 2}"}]</tool_call>',
         [("f", {}), ("g", {"y": 2})], ""),
        ("hermes", "no call here", [], "no call here"),
        ("llama3", '{"name": "f", "parameters": {"x": 1}}', [("f", {"x": 1})], ""),
        ("llama3", '<|python_tag|>{"name": "f", "parameters": {}}; {"name": "g", "parameters": {"a": "b"}}',
         [("f", {}), ("g", {"a": "b"})], ""),
        ("llama3", "The answer is {x}.", [], "The answer is {x}."),
        ("mistral", 'ok[TOOL_CALLS][{"name": "f", "arguments": {"x": 1}}]', [("f", {"x": 1})], "ok"),
        ("mistral", '[TOOL_CALLS]f[ARGS]{"x": 2}', [("f", {"x": 2})], ""),
    ],
)  # fmt: skip
def test_each_family_parses(family, text, calls, content):
    parsed = FORMATS[family].parse(text)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == calls
    assert parsed.content == content and not parsed.invalid_tool_calls


@pytest.mark.parametrize(
    "family, text, name",
    [
        ("hermes", '<tool_call>\n{"name": "f", "arguments": {"x": ', "f"),
        ("hermes", '<tool_call>{"arguments": {}}</tool_call>', None),
        ("llama3", '{"name": "f", "parameters": {"x": 1', "f"),
        ("mistral", '[TOOL_CALLS][{"name": "g", "arguments": {', "g"),
    ],
)
def test_malformed_calls_are_reported(family, text, name):
    parsed = FORMATS[family].parse(text)
    assert not parsed.tool_calls and len(parsed.invalid_tool_calls) == 1
    assert parsed.invalid_tool_calls[0].name == name and parsed.invalid_tool_calls[0].error


@pytest.mark.parametrize("family", ["hermes", "llama3", "mistral"])
def test_forced_grammar_accepts_what_the_family_writes(tool_generator, family):
    fmt = FORMATS[family]
    grammar = lark_grammar(fmt.forced_grammar(tool_generator.tokenizer, [WEATHER, NO_ARGS], parallel=False))
    constraint = Constraint(tool_generator.tokenizer, grammar, vocab_size=tool_generator.vocab_size)
    written = fmt.write_call("get_weather", {"location": "Lisbon", "days": 3})
    if family == "hermes":
        assert constraint.accepts(written)
    elif family == "llama3":
        assert constraint.accepts(written)
    else:  # the grammar writes the list with its opening bracket right after [TOOL_CALLS]
        assert constraint.accepts(written)
    assert [c.name for c in fmt.parse(written).tool_calls] == ["get_weather"]


def test_splitter_streams_content_and_holds_calls():
    splitter = ToolCallSplitter(FORMATS["hermes"])
    text = 'Let me check.<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>'
    shown = "".join(splitter.feed(text[i : i + 3]) for i in range(0, len(text), 3))
    rest, parsed = splitter.finish()
    assert shown + rest == "Let me check." and [c.name for c in parsed.tool_calls] == ["f"]
    plain = ToolCallSplitter(FORMATS["hermes"])
    pieces = [plain.feed(p) for p in ["a <", "b> c", " <tool"]]
    rest, parsed = plain.finish()
    assert "".join(pieces) + rest == "a <b> c <tool" and not parsed.tool_calls


def test_a_stream_holds_the_call_back(tool_generator):
    stream = tool_generator.stream(ASK, tools=[WEATHER], tool_choice="any")
    pieces = list(stream)
    assert "".join(pieces) == "" and stream.result.tool_calls


def test_a_family_whose_marker_is_a_special_token():
    """Mistral's [TOOL_CALLS] is a special token: the grammar writes its id, decoding keeps it,
    and streaming holds the call back like any other."""
    model, tokenizer = tiny_model("llama")
    model.config.max_position_embeddings = 2048
    tokenizer.add_special_tokens({"additional_special_tokens": ["[TOOL_CALLS]"]}, replace_extra_special_tokens=False)
    model.resize_token_embeddings(len(tokenizer), mean_resizing=False)
    tokenizer.chat_template = (
        "{% if tools %}{{ '[AVAILABLE_TOOLS]' + (tools | tojson) + '[/AVAILABLE_TOOLS]' }}{% endif %}"
        "{% for m in messages %}{{ m['role'] + ': ' + m['content'] + '\\n' }}{% endfor %}"
        "{# a reply may be [TOOL_CALLS][...] #}{{ 'assistant: ' }}"
    )
    generator = RecallGenerator(model, tokenizer, generation_defaults={"max_new_tokens": 120, "do_sample": False})
    assert tool_format(tokenizer).name == "mistral" and supports_tools(tokenizer)
    result = generator.generate(ASK, tools=[WEATHER], tool_choice="any")
    marker = tokenizer.convert_tokens_to_ids("[TOOL_CALLS]")
    assert marker in result.sequences[0].tolist()
    assert [c.name for c in result.tool_calls] == ["get_weather"], result.invalid_tool_calls
    stream = generator.stream(ASK, tools=[WEATHER], tool_choice="any")
    assert "".join(stream) == ""
    assert [c.arguments for c in stream.result.tool_calls] == [c.arguments for c in result.tool_calls]


def test_engine_grammar_is_lark_for_llamacpps_llguidance():
    from recall_core.structured.constrained import engine_grammar, json_object_grammar

    schema = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
    for grammar in (json_schema_grammar(schema), json_object_grammar(), lark_grammar('start: "a" %json {"type": "object"}')):
        text = engine_grammar(grammar)
        header, _, lark = text.partition("\n")
        assert header == "%llguidance {}" and lark.startswith("start:")
        assert lark_grammar(lark) == lark  # it compiles as it is sent
    inline = engine_grammar(json_schema_grammar(schema)).partition("\n")[2]
    # the schema as the in-process engine holds it: strict, compact, a required string not blank
    body = json.loads(inline[len("start: %json "):])
    assert body["additionalProperties"] is False and body["properties"]["name"]["minLength"] == 1
    assert body["x-guidance"]["whitespace_flexible"] is False

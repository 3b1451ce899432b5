"""Schemas as LlamaIndex, LangChain and Pydantic write them: ``$defs`` / ``$ref`` in a forced call
and in the closing reserve, ``anyOf`` branches, long ``minLength``, ``const`` values, objects with
the same keys, and a LangChain reply cut mid-JSON (tiny random models)."""

from __future__ import annotations

import json

import jsonschema
import pytest
import torch
from langchain_core.exceptions import OutputParserException
from pydantic import BaseModel, field_validator

from recall_core import RecallGenerator
from recall_core.models.templates import SMOLLM2_TOOLS_TEMPLATE
from recall_core.structured.constrained import (
    ConstrainedLogitsProcessor,
    Constraint,
    json_schema_grammar,
    lark_grammar,
    skeleton,
    strict_schema,
)
from recall_core.structured.outputs import check_tool_schemas, response_format_grammar
from recall_core.structured.schemas import missing_json
from recall_core.structured.tools import FORMATS
from tests.helpers.tiny import tiny_model

KIND = {"type": "string", "enum": ["cat", "dog"]}
ADOPT = {"type": "function", "function": {"name": "adopt", "description": "Adopt a pet.", "parameters": {
    "type": "object", "$defs": {"Kind": KIND}, "properties": {"kind": {"$ref": "#/$defs/Kind"}}, "required": ["kind"]}}}
PAINT = {"type": "function", "function": {"name": "paint", "description": "Paint it.", "parameters": {
    "type": "object", "$defs": {"Kind": {"type": "string", "enum": ["red", "blue"]}},
    "properties": {"kind": {"$ref": "#/$defs/Kind"}}, "required": ["kind"]}}}  # fmt: skip
PET = {"type": "object", "properties": {"name": {"type": "string"}, "kind": KIND}, "required": ["name", "kind"]}
ASK = [{"role": "user", "content": "Ada has a cat called Tom."}]


@pytest.fixture(scope="module")
def generator() -> RecallGenerator:
    model, tokenizer = tiny_model("llama", positions=4096)
    tokenizer.chat_template = SMOLLM2_TOOLS_TEMPLATE
    return RecallGenerator(model, tokenizer, generation_defaults={"do_sample": False})


def _valid(text: str, schema: dict) -> bool:
    try:
        jsonschema.validate(json.loads(text), schema)
    except (ValueError, jsonschema.ValidationError):
        return False
    return True


# --------------------------------------------------------------------------- $defs / $ref in forced calls
def test_a_forced_call_whose_parameters_use_refs(generator):
    """Until 2026-12-07: GrammarError "Pointer '/$defs/Kind' does not exist" at call time."""
    check_tool_schemas([ADOPT])
    result = generator.generate(ASK, tools=[ADOPT], tool_choice="adopt", max_new_tokens=80)
    assert not result.invalid_tool_calls and [c.name for c in result.tool_calls] == ["adopt"]
    assert result.tool_calls[0].arguments["kind"] in ("cat", "dog")


@pytest.mark.parametrize("family", ["hermes", "llama3", "mistral"])
def test_tools_with_the_same_defs_names_keep_their_own(generator, family):
    fmt = FORMATS[family]
    grammar = fmt.forced_grammar(generator.tokenizer, [ADOPT, PAINT], parallel=False)
    constraint = Constraint(generator.tokenizer, lark_grammar(grammar), vocab_size=generator.vocab_size)
    assert constraint.accepts(fmt.write_call("adopt", {"kind": "cat"}))
    assert constraint.accepts(fmt.write_call("paint", {"kind": "red"}))
    assert not constraint.accepts(fmt.write_call("adopt", {"kind": "red"}))


# --------------------------------------------------------------------------- the closing reserve
def test_the_reserve_follows_refs_and_takes_the_largest_branch():
    with_ref = {"type": "object", "$defs": {"Pet": PET}, "required": ["pets", "best"], "properties": {
        "pets": {"type": "array", "items": {"$ref": "#/$defs/Pet"}}, "best": {"$ref": "#/$defs/Pet"}}}  # fmt: skip
    assert skeleton(with_ref) == {"pets": [], "best": {"name": "x", "kind": "cat"}}
    where = {"type": "object", "required": ["where"], "properties": {"where": {"anyOf": [{"enum": ["unknown"]}, PET]}}}
    assert skeleton(where) == {"where": {"name": "x", "kind": "cat"}}
    tree = {"type": "object", "required": ["v", "next"], "properties": {"v": {"type": "integer"}, "next": {"$ref": "#"}}}
    assert skeleton(tree) == {"v": 0, "next": {"v": 0, "next": None}}  # a recursive schema ends


@pytest.mark.parametrize("budget", [80, 120])
def test_a_schema_with_refs_closes_within_its_budget(generator, budget):
    schema = {"type": "object", "$defs": {"Pet": PET}, "required": ["pets", "best"], "properties": {
        "pets": {"type": "array", "items": {"$ref": "#/$defs/Pet"}}, "best": {"$ref": "#/$defs/Pet"}}}  # fmt: skip
    response_format = {"type": "json_schema", "json_schema": {"name": "p", "schema": schema}}
    result = generator.generate(ASK, response_format=response_format, max_new_tokens=budget)
    assert _valid(result.text, schema), result.text[-60:]


def _obj(keys: list[str]) -> dict:
    return {"type": "object", "properties": {k: {"type": "string"} for k in keys}, "required": keys}


@pytest.mark.parametrize("budget", [120, 220])
def test_objects_with_the_same_keys_each_get_room_for_theirs(generator, budget):
    """An order's billing and shipping address: until 2026-12-07 the second was cut mid-JSON."""
    schema = {"type": "object", "required": ["home", "work"], "properties": {
        "home": _obj(["street", "city", "country"]), "work": _obj(["street", "city", "country"])}}  # fmt: skip
    response_format = {"type": "json_schema", "json_schema": {"name": "a", "schema": schema}}
    result = generator.generate([{"role": "user", "content": "Ada lives in London and works in Paris."}],
                                response_format=response_format, max_new_tokens=budget)  # fmt: skip
    assert _valid(result.text, schema) and result.finish_reason == "stop", result.text[-60:]


@pytest.mark.parametrize("budget", [80, 100])
def test_parallel_calls_end_rather_than_open_a_call_with_no_room(generator, budget):
    tools = [{"type": "function", "function": {"name": n, "description": n, "parameters": _obj([p])}}
             for n, p in (("get_weather", "city"), ("get_time", "zone"))]  # fmt: skip
    result = generator.generate([{"role": "user", "content": "weather in Lisbon and time in UTC"}], tools=tools,
                                tool_choice="required", parallel_tool_calls=True, max_new_tokens=budget)  # fmt: skip
    assert result.tool_calls and not result.invalid_tool_calls


# --------------------------------------------------------------------------- what strict_schema keeps
@pytest.mark.parametrize("least", [3, 21, 100])
def test_a_long_min_length_compiles_and_is_not_blank(generator, least):
    schema = {"type": "object", "properties": {"s": {"type": "string", "minLength": least, "maxLength": 120}},
              "required": ["s"]}  # fmt: skip
    grammar = response_format_grammar({"type": "json_schema", "json_schema": {"name": "t", "schema": schema}})
    constraint = Constraint(generator.tokenizer, grammar, vocab_size=generator.vocab_size)
    assert constraint.accepts(json.dumps({"s": "a" * least})) and constraint.accepts(json.dumps({"s": "a" * 120}))
    assert not constraint.accepts(json.dumps({"s": "a" * (least - 1)}))
    assert not constraint.accepts(json.dumps({"s": "a" * 121}))
    assert not constraint.accepts(json.dumps({"s": " " + "a" * least})) and not constraint.accepts(
        json.dumps({"s": " " * least}))


def test_const_and_enum_values_are_not_rewritten(generator):
    value = {"op": "set", "properties": {"color": "red"}}
    schema = {"type": "object", "required": ["patch", "tag"], "properties": {
        "patch": {"const": value}, "tag": {"enum": [{"properties": {}}], "default": {"properties": {}}}}}  # fmt: skip
    strict = strict_schema(schema)
    assert strict["properties"]["patch"]["const"] == value
    assert strict["properties"]["tag"] == schema["properties"]["tag"]
    constraint = Constraint(generator.tokenizer, json_schema_grammar(schema), vocab_size=generator.vocab_size)
    assert constraint.accepts(json.dumps({"patch": value, "tag": {"properties": {}}}, separators=(", ", ": ")))


# --------------------------------------------------------------------------- LangChain: a reply cut mid-JSON
def test_a_langchain_reply_cut_mid_json_is_a_parse_error(generator):
    from langchain_recall import ChatRecall

    chat = ChatRecall(generator=generator, max_tokens=30)
    schema = {"title": "Contact", "type": "object", "properties": {f"f{i}": {"type": "string"} for i in range(6)},
              "required": [f"f{i}" for i in range(6)]}  # fmt: skip
    out = chat.with_structured_output(schema, include_raw=True).invoke("Ada's contact?")
    assert out["raw"].response_metadata.get("finish_reason") == "length"
    assert out["parsed"] is None and isinstance(out["parsing_error"], OutputParserException)
    assert "token budget" in str(out["parsing_error"])
    with pytest.raises(OutputParserException):
        chat.with_structured_output(schema).invoke("Ada's contact?")
    whole = ChatRecall(generator=generator, max_tokens=200).with_structured_output(schema).invoke("Ada's contact?")
    assert sorted(whole) == sorted(schema["properties"])


def test_a_langchain_structured_stream_still_streams_partial_objects(generator):
    """The whole-JSON check sat before the parser as a lambda, which made the stream one chunk
    (until 2026-12-07, the day it came: a reviewer); LangChain's parsers stream partial objects."""
    from langchain_recall import ChatRecall

    chat = ChatRecall(generator=generator, max_tokens=200)
    schema = {"title": "Contact", "type": "object", "properties": {f"f{i}": {"type": "string"} for i in range(3)},
              "required": [f"f{i}" for i in range(3)]}  # fmt: skip
    for method in ("json_schema", "json_mode"):
        chunks = list(chat.with_structured_output(schema, method=method).stream("Ada's contact?"))
        assert len(chunks) > 3 and chunks[-1] == chat.with_structured_output(schema, method=method).invoke("Ada's contact?")


# --------------------------------------------------------------------------- the reserve where a reply stands
def _path(tokenizer, schema: dict, text: str):
    constraint = Constraint(tokenizer, json_schema_grammar(schema), vocab_size=len(tokenizer), schemas=[schema])
    processor = constraint.logits_processor(max_new_tokens=1000)
    processor._follow_strings(tokenizer(text, add_special_tokens=False).input_ids)
    return constraint, processor.path()


def test_a_reply_in_a_smaller_branch_keeps_room_for_that_branch_s_keys(generator):
    # The largest branch was followed whatever was written: inside the other branch's nested object
    # nothing was reserved, and every budget ended mid-JSON (until 2026-12-07, the day it came: a reviewer).
    loose = {"type": "object", "properties": {k: {"type": "string"} for k in ("author", "country")},
             "required": ["author", "country"]}  # fmt: skip
    long_title = {"type": "object", "properties": {"title": {"type": "string", "minLength": 120}}, "required": ["title"]}
    with_meta = {"type": "object", "properties": {"title": {"type": "string"}, "meta": loose}, "required": ["title", "meta"]}
    schema = {"anyOf": [long_title, with_meta]}
    assert missing_json(schema, _path(generator.tokenizer, schema, '{"title": "t", "meta": {')[1]) == (
        '"author": "x", "country": "x"')


def test_the_reserve_counts_the_comma_and_never_falls_below_the_default(generator):
    # '{"city": "Lisbon"' still needs ', "extra": {}}': the comma was not counted, and no floor was
    # kept once something was open (13 of 100 sampled replies ended cut, against 2 before; a reviewer).
    schema = {"type": "object", "properties": {"city": {"type": "string"}, "extra": {"type": "object"}},
              "required": ["city", "extra"]}  # fmt: skip
    constraint, path = _path(generator.tokenizer, schema, '{"city": "Lisbon"')
    assert missing_json(schema, path).startswith(", ")
    assert constraint.reserve_after(path) >= ConstrainedLogitsProcessor.closing_reserve


def test_a_langchain_structured_stream_cut_short_raises_at_its_end(generator):
    """The whole-JSON check ran at the whole-reply parse only, which a stream never makes: a reply cut
    by the budget streamed out as a partial object with no error (2026-12-07, the day the check came)."""
    from langchain_recall import ChatRecall

    chat = ChatRecall(generator=generator, max_tokens=10)
    schema = {"title": "Note", "type": "object", "properties": {"title": {"type": "string"},
              "tags": {"type": "array", "items": {"type": "string"}}}, "required": ["title", "tags"]}  # fmt: skip
    with pytest.raises(OutputParserException, match="token budget"):
        list(chat.with_structured_output(schema, method="json_schema").stream("A note?"))


def test_whole_json_holding_a_fence_in_a_string_is_json():
    # A fence was looked for first, and a code field's fence taken for the reply's (the same day).
    from langchain_core.messages import AIMessage

    from langchain_recall._tools import _WholeJsonParser

    reply = json.dumps({"language": "python", "snippet": "```python\nprint(1)\n```"})
    assert _WholeJsonParser().invoke(AIMessage(content=reply))["snippet"].startswith("```python")
    assert _WholeJsonParser().invoke(AIMessage(content='Here:\n```json\n{"a": 1}\n```'))["a"] == 1


def test_openapi_nullable_lets_the_value_be_null(generator):
    # OpenAPI 3.0's (and Gemini's) "nullable": true was ignored, as JSON Schema ignores it: the value
    # could not be null (until 2026-12-07, a reviewer).
    schema = {"type": "object", "required": ["a", "b", "c"], "properties": {
        "a": {"type": "string", "nullable": True}, "b": {"enum": ["x", "y"], "nullable": True},
        "c": {"type": ["integer", "null"], "nullable": True}}}  # fmt: skip
    properties = strict_schema(schema)["properties"]
    assert properties["a"] == {"type": ["string", "null"]} and properties["c"] == {"type": ["integer", "null"]}
    assert properties["b"] == {"anyOf": [{"enum": ["x", "y"]}, {"type": "null"}]}
    reply = '{"a": null, "b": null, "c": null}'
    ids, force = _forced(generator, reply)
    result = generator.generate(ASK, response_format={"type": "json_schema", "json_schema": {"name": "n", "schema": schema}},
                                logits_processor=[force], max_new_tokens=len(ids) + 4)  # fmt: skip
    assert json.loads(result.text) == {"a": None, "b": None, "c": None}


def _forced(generator, text: str):
    from tests.helpers.logits import ForceAt

    ids = generator.tokenizer(text, add_special_tokens=False).input_ids
    return ids, ForceAt(0, ids)


class _RefusedNote(BaseModel):
    """A note whose every title a validator refuses (Pydantic's error, not the JSON's)."""

    title: str

    @field_validator("title")
    @classmethod
    def never(cls, value: str) -> str:
        raise ValueError("no title is good enough")


def test_langchain_include_raw_streams_report_the_parse_error_and_pydantic_validators_raise(generator):
    """At a stream's end the whole-reply check raised past LangChain's fallback with include_raw=True,
    and a Pydantic validator's refusal of a whole reply ended a stream with no chunk and no error
    (2026-12-07, the day the stream check came: a reviewer)."""
    from langchain_recall import ChatRecall

    cut = ChatRecall(generator=generator, max_tokens=3).with_structured_output(_RefusedNote, include_raw=True)
    chunks = list(cut.stream("A note?"))
    assert "raw" in chunks[0] and chunks[-1]["parsed"] is None
    assert isinstance(chunks[-1]["parsing_error"], OutputParserException)
    whole = ChatRecall(generator=generator, max_tokens=60).with_structured_output(_RefusedNote)
    with pytest.raises(OutputParserException, match="no title is good enough"):
        list(whole.stream("A note?"))


def test_langchain_include_raw_reports_a_tools_parser_s_validation_error(generator):
    """With method="function_calling" the tools parser raises Pydantic's ValidationError itself: it
    escaped include_raw=True on every call (2026-12-07, the day the include_raw path was rebuilt)."""
    from langchain_recall import ChatRecall

    chat = ChatRecall(generator=generator, max_tokens=400)
    out = chat.with_structured_output(_RefusedNote, method="function_calling", include_raw=True).invoke("A note?")
    assert out["parsed"] is None and "no title is good enough" in str(out["parsing_error"])


def test_a_reply_s_last_value_is_not_cut_and_missing_keys_keep_their_floor(generator):
    """The floor of the closing reserve kept 10 tokens even once every required key was written (a
    reply with 12 tokens to spare was cut in its last value), while dropped at a path (13 of 100
    sampled replies ended cut): it is kept while keys are missing, and dropped once none is."""
    schema = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}, "required": ["a", "b"]}
    constraint, missing = _path(generator.tokenizer, schema, '{"a": "x"')
    assert constraint.reserve_after(missing) >= ConstrainedLogitsProcessor.closing_reserve
    constraint, done = _path(generator.tokenizer, schema, '{"a": "x", "b": "y')
    assert constraint.reserve_after(done) == 0


def test_an_include_raw_stream_given_nothing_yields_nothing():
    # An upstream that yields nothing: an IndexError, where LangChain's own yields nothing (the same day).
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.runnables import RunnableGenerator

    from langchain_recall._tools import structured_output

    def nothing(chunks):
        for _ in chunks:
            pass
        yield from ()

    model = GenericFakeChatModel(messages=iter([AIMessage(content='{"title": "abc"}')]))
    schema = {"title": "Note", "type": "object", "properties": {"title": {"type": "string"}}}
    assert list((RunnableGenerator(nothing) | structured_output(model, schema, "json_schema", True)).stream("q")) == []


@pytest.mark.parametrize("family", ["hermes", "llama3", "mistral"])
def test_the_keys_missing_in_a_call_s_arguments_are_known_in_every_format(family):
    # Mistral's list of calls, a frame its call schema does not describe, made the path one longer
    # than the nodes, and no key was ever missing there (2026-12-07, the day it came: a reviewer).
    from recall_core.structured.schemas import missing_keys

    fmt = FORMATS[family]
    tool = {"type": "function", "function": {"name": "a", "parameters": {"type": "object", "properties": {
        "unit": {"type": "string"}, "city": {"type": "string"}}, "required": ["city"]}}}  # fmt: skip
    inner = (("{", ("name", fmt.arguments_key), False), ("{", (), False))
    path = ((("[", (), False),) if family == "mistral" else ()) + inner
    assert missing_keys(fmt.call_schema(tool), path) == ["city"]


@pytest.mark.parametrize("name", ["a", "météo"])  # (a name of byte tokens was never recognised until 2026-12-07)
@pytest.mark.parametrize("family", ["hermes", "llama3", "mistral"])
def test_closing_opens_only_a_key_the_called_tool_requires(family, name):
    """Of several forced tools, closing kept the union of their missing required keys, so a key that
    another tool requires (``unit``, optional in ``a``) was let open in ``a``'s arguments and the
    reply cut before ``city`` (until 2026-12-07: a reviewer). The call's ``"name"`` picks the tool."""
    model, tokenizer = tiny_model("llama")
    fmt = FORMATS[family]
    a = {"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": {
        "unit": {"type": "string"}, "city": {"type": "string"}}, "required": ["city"]}}}  # fmt: skip
    b = {"type": "function", "function": {"name": "b", "parameters": {"type": "object", "properties": {
        "unit": {"type": "string"}}, "required": ["unit"]}}}  # fmt: skip
    constraint = Constraint(tokenizer, lark_grammar(fmt.forced_grammar(tokenizer, [a, b], False)),
                            vocab_size=model.config.vocab_size, schemas=[fmt.call_schema(t) for t in (a, b)])  # fmt: skip
    width = model.config.vocab_size
    for called, missing in ((name, "city"), ("b", "unit")):
        call = fmt.write_call(called, {})
        ids = tokenizer(call[: call.index("{}") + 1] + '"', add_special_tokens=False).input_ids  # the first key's quote
        processor = constraint.logits_processor(max_new_tokens=len(ids) + 3)  # closing from here on
        processor(torch.tensor([[0]]), torch.zeros(1, width))
        allowed = processor(torch.tensor([[0, *ids]]), torch.zeros(1, width))[0] > -float("inf")
        keys = {tokenizer.decode([i]) for i in allowed.nonzero().flatten().tolist()}
        assert keys and all(missing.startswith(key) for key in keys), (called, keys)


def test_the_cursor_knows_string_values_with_escapes_and_leaves_strings_in_arrays_and_code_alone():
    from recall_core.structured.json_cursor import JsonCursor

    cursor = JsonCursor()
    for piece in ['{"na', 'me": "a\\"b\\u00e9', '", "list": ["x", "{y"], "code": "f(){"', ', "n": 3, "o": {"k": "v']:
        cursor.follow(piece)
    assert cursor.values() == ((("name", 'a"bé'), ("code", "f(){")), ())  # the inner value is not closed yet
    assert cursor.path() == (("{", ("name", "list", "code", "n", "o"), False), ("{", ("k",), False))
    assert cursor.in_string and cursor.string_depth == 0 and cursor.depth == 2


def test_a_key_of_byte_tokens_counts_as_written():
    """"città" followed a token's text at a time was "citt\ufffd\ufffd", and stayed missing (a reviewer)."""
    from recall_core.structured.schemas import missing_keys

    _, tokenizer = tiny_model("llama")
    schema = {"type": "object", "properties": {"città": {"type": "string"}, "n": {"type": "integer"}},
              "required": ["città", "n"]}  # fmt: skip
    constraint = Constraint(tokenizer, json_schema_grammar(schema), vocab_size=len(tokenizer), schemas=[schema])
    processor = constraint.logits_processor(max_new_tokens=1000)
    processor._follow_strings(tokenizer('{"città": "Roma", ', add_special_tokens=False).input_ids)
    assert missing_keys(schema, processor.path()) == ["n"]

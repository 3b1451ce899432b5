"""What a JSON schema lets a constrained reply write (free-form objects), and the token budget's
closing on a schema with several required keys (tiny random models)."""

from __future__ import annotations

import json

import pytest
import torch

from recall_core import RecallGenerator
from recall_core.models.templates import SMOLLM2_TOOLS_TEMPLATE
from recall_core.structured.constrained import Constraint, json_schema_grammar, lark_json, strict_schema
from tests.helpers.tiny import tiny_model

EVENT = {"type": "object", "required": ["name", "attributes", "extra"], "properties": {
    "name": {"type": "string"}, "attributes": {"type": "object"},
    "extra": {"type": "object", "properties": {"k": {"type": "integer"}}}}}  # fmt: skip


@pytest.fixture(scope="module")
def generator() -> RecallGenerator:
    model, tokenizer = tiny_model("llama")
    model.config.max_position_embeddings = 2048
    tokenizer.chat_template = SMOLLM2_TOOLS_TEMPLATE
    return RecallGenerator(model, tokenizer, generation_defaults={"do_sample": False})


# --------------------------------------------------------------------------- free-form objects
def test_only_objects_that_declare_properties_are_closed():
    strict = strict_schema(EVENT)
    assert strict["additionalProperties"] is False and strict["properties"]["extra"]["additionalProperties"] is False
    assert "additionalProperties" not in strict["properties"]["attributes"]
    assert "additionalProperties" not in strict_schema({"type": "object"})
    assert strict_schema({"type": "object", "properties": {}})["additionalProperties"] is False  # a tool with no arguments


def test_a_free_form_object_field_takes_any_keys(generator):
    constraint = Constraint(generator.tokenizer, json_schema_grammar(EVENT), vocab_size=generator.vocab_size)
    assert constraint.accepts('{"name": "x", "attributes": {"color": "red", "n": [1]}, "extra": {"k": 1}}')
    assert constraint.accepts('{"name": "x", "attributes": {}, "extra": {}}')
    assert not constraint.accepts('{"name": "x", "attributes": {}, "extra": {"other": 1}}')
    assert not constraint.accepts('{"name": "x", "attributes": {}, "extra": {}, "more": 1}')
    call = {"type": "object", "properties": {"filters": {"type": "object"}}, "required": ["filters"]}
    assert json.loads(lark_json(call).removeprefix("%json "))["properties"]["filters"] == {"type": "object"}


# --------------------------------------------------------------------------- the budget and required keys
CONTACT = {"type": "object", "required": ["first_name", "last_name", "city", "country", "email"],
           "properties": {key: {"type": "string"} for key in ["first_name", "last_name", "city", "country", "email"]}}  # fmt: skip
LOOKUP = {"type": "function", "function": {"name": "lookup", "description": "Look a person up.", "parameters": {
    "type": "object", "required": ["first_name", "city"],
    "properties": {"first_name": {"type": "string"}, "city": {"type": "string"}}}}}  # fmt: skip
ASK = [{"role": "user", "content": "Ada Lovelace lives in London."}]


@pytest.mark.parametrize("budget", [120, 200])
def test_the_budget_keeps_room_for_every_required_key(generator, budget):
    """The random model loops inside the first string: the budget must close it early enough to write the rest."""
    response_format = {"type": "json_schema", "json_schema": {"name": "contact", "schema": CONTACT}}
    result = generator.generate(ASK, response_format=response_format, max_new_tokens=budget)
    value = json.loads(result.text)
    assert sorted(value) == sorted(CONTACT["required"]) and all(v.strip() == v != "" for v in value.values())
    assert result.finish_reason == "stop"


def test_a_forced_call_ends_with_its_closing_tag_at_the_end_of_the_budget(generator):
    result = generator.generate(ASK, tools=[LOOKUP], tool_choice="lookup", max_new_tokens=150)
    assert not result.invalid_tool_calls and [c.name for c in result.tool_calls] == ["lookup"]
    assert sorted(result.tool_calls[0].arguments) == ["city", "first_name"]


@pytest.mark.parametrize("fields", [3, 8])
def test_a_reply_that_fits_its_budget_is_never_cut(fields):
    """Review of the first fix, which kept room for every required key to the end: a valid answer
    with 12 tokens to spare was cut in its first string (the 88-token answer at token 53). The
    room kept is for the keys not written yet."""
    tokenizer = tiny_model("llama")[1]
    keys = [f"field{i}" for i in range(fields)]
    schema = {"type": "object", "required": ["story", *keys],
              "properties": {"story": {"type": "string"}, **{k: {"type": "string"} for k in keys}}}  # fmt: skip
    constraint = Constraint(tokenizer, json_schema_grammar(schema), vocab_size=len(tokenizer), schemas=[schema])
    answer = json.dumps({"story": "My dog is called Biscuit and my cat is called Pepper. I live in Lisbon.",
                         **dict.fromkeys(keys, "ok")}, separators=(", ", ": "))  # fmt: skip
    ids = tokenizer(answer, add_special_tokens=False).input_ids
    assert constraint.closing_reserve > 12
    processor = constraint.logits_processor(max_new_tokens=len(ids) + 12)
    for step, token in enumerate(ids):
        scores = processor(torch.tensor([[0, 1, *ids[:step]]]), torch.zeros(1, len(tokenizer)))
        assert scores[0, token] != -float("inf"), (step, tokenizer.decode(ids[:step]))

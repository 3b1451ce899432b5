"""``with_structured_output`` on schemas that are not plain objects: a top-level array dict schema
is held to (not reduced to its title), and a free-form ``dict`` field takes any keys. A tiny
random Llama: whatever it would write, the reply must follow the schema."""

from __future__ import annotations

import json

from typing_extensions import TypedDict

from langchain_recall import ChatRecall


class Event(TypedDict):
    """An event."""

    name: str
    attributes: dict


def test_an_array_schema_is_held_to(tools_generator):
    schema = {"title": "names", "type": "array", "items": {"type": "string"}, "minItems": 1}
    chat = ChatRecall(generator=tools_generator, max_tokens=40)
    bound = chat.with_structured_output(schema, method="json_schema").first
    assert bound.kwargs["response_format"]["json_schema"] == {"name": "names", "schema": schema}
    out = chat.with_structured_output(schema, method="json_schema", include_raw=True).invoke("Name two cities.")
    assert out["parsing_error"] is None and isinstance(out["parsed"], list) and out["parsed"]
    assert all(isinstance(item, str) for item in out["parsed"])


def test_a_free_form_dict_field_takes_any_keys(tools_generator):
    chat = ChatRecall(generator=tools_generator, max_tokens=60)
    response_format = chat.with_structured_output(Event, method="json_schema").first.kwargs["response_format"]
    constraint = tools_generator.plan([], response_format=response_format).constraint
    assert constraint.accepts(json.dumps({"name": "x", "attributes": {"color": "red", "size": 2}}))
    assert not constraint.accepts(json.dumps({"name": "x", "attributes": {}, "other": 1}))

"""JSON schemas as the constrained decoder reads them: made strict, their local ``$ref`` moved
with the schema, and the shortest JSON they ask for (the room closing a reply needs).

Nothing here validates or compiles a schema (llguidance does); these functions walk a schema's
subschemas only, never the values it holds (``const``, ``enum``, ``default``, ``examples``).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any
from urllib.parse import unquote

#: String keywords that already say what a string may be (left alone by :func:`strict_schema`).
_STRING_LIMITS = frozenset({"enum", "const", "pattern", "format"})
#: What a required string must match: a non-space character first and last (JSON Schema patterns
#: are searches, hence the anchors).
NOT_BLANK = r"^\S(?:[\s\S]*\S)?$"

#: Keywords whose value is one subschema, a list of them, or a dict of them (draft 7 and 2020-12).
_ONE = frozenset({"items", "additionalProperties", "additionalItems", "unevaluatedProperties", "unevaluatedItems",
                  "contains", "propertyNames", "not", "if", "then", "else"})  # fmt: skip
_LIST = frozenset({"allOf", "anyOf", "oneOf", "prefixItems", "items"})  # ``items`` a list: draft 7 tuples
_MAP = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})


def map_subschemas(node: Any, change: Callable[[dict[str, Any]], dict[str, Any]]) -> Any:
    """A copy of schema ``node`` with ``change`` applied to every (sub)schema in it, innermost first.

    Only subschema keywords are walked: the values a schema holds (``const``, ``enum``, ``default``,
    ``examples``, unknown keywords) are copied as they are. Until 2026-12-07 :func:`strict_schema`
    walked them too, and closed a ``const`` value holding a ``"properties"`` dict (adding
    ``"additionalProperties": false`` to it), so the grammar refused the only valid value (a reviewer).
    """
    if not isinstance(node, Mapping):
        return copy.deepcopy(node)  # true / false schemas
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _MAP and isinstance(value, Mapping):
            out[key] = {name: map_subschemas(sub, change) for name, sub in value.items()}
        elif key in _LIST and isinstance(value, list):
            out[key] = [map_subschemas(sub, change) for sub in value]
        elif key in _ONE and isinstance(value, Mapping):
            out[key] = map_subschemas(value, change)
        else:
            out[key] = copy.deepcopy(value)
    return change(out)


# --------------------------------------------------------------------------- strict schemas
def strict_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``schema`` made strict where it does not say otherwise.

    * Objects that declare ``properties`` take no others: JSON Schema allows unknown ones by
      default, and a decoder constrained by such a schema may invent keys (OpenAI's strict
      mode makes the same choice). An object that declares none (``{"type": "object"}``, a
      ``dict`` field) is free-form and stays open: closed, it could only be ``{}``.
    * A required string property is not blank: ``minLength`` 1 and :data:`NOT_BLANK` (it
      starts and ends with a non-space character, so ``" "`` and ``"  x"`` are not valid).
      Greedy decoding of a small model readily closes a string at once or writes a lone
      space (``species=' '``), and a call with a blank required argument is not the call that
      was asked for. A string whose schema says what it may be (``enum``, ``const``,
      ``pattern``, ``format``) is left alone, and so is an explicit ``minLength: 0``.
    """
    return map_subschemas(dict(schema), _strict_node)


def _strict_node(node: dict[str, Any]) -> dict[str, Any]:
    node = _nullable(node)
    # only an object that declares its properties is closed: a free-form one ({"type": "object"},
    # a ``dict`` field) would otherwise only ever be {}
    if isinstance(node.get("properties"), dict) and "additionalProperties" not in node:
        node["additionalProperties"] = False
    properties = node.get("properties")
    if isinstance(properties, dict):
        for name in node.get("required") or ():
            prop = properties.get(name) if isinstance(name, str) else None
            if isinstance(prop, dict) and prop.get("type") == "string":
                properties[name] = _not_blank(prop)
    return node


def _nullable(node: dict[str, Any]) -> dict[str, Any]:
    """OpenAPI's ``"nullable": true`` (Gemini's and OpenAPI 3.0's schemas) as JSON Schema says it: ``null``
    among the types. JSON Schema ignores the keyword, so until 2026-12-07 such a value could not be null
    (a reviewer)."""
    if node.get("nullable") is not True:
        return node
    rest = {key: value for key, value in node.items() if key != "nullable"}
    kind = rest.get("type")
    if isinstance(kind, str):
        return {**rest, "type": [kind, "null"]} if kind != "null" else rest
    if isinstance(kind, list):
        return {**rest, "type": [*kind, "null"]} if "null" not in kind else rest
    return {"anyOf": [rest, {"type": "null"}]}


def _not_blank(prop: dict[str, Any]) -> dict[str, Any]:
    """A required string's schema made not blank, unless it already says what the string may be.

    With a ``minLength`` of 2 or more, one pattern says both (a non-space character first and
    last, the lengths between), and the node loses ``minLength`` / ``maxLength``: until 2026-12-07
    :data:`NOT_BLANK` and ``minLength`` >= 21 together made llguidance refuse the schema ("Unable to
    determine if regex is empty"), so a Pydantic ``Field(min_length=100)`` could not be asked for
    (a reviewer)."""
    if _STRING_LIMITS & prop.keys() or prop.get("minLength") == 0:
        return prop
    least = int(prop.get("minLength") or 1)
    if least < 2:
        return {**prop, "minLength": 1, "pattern": NOT_BLANK}
    most = prop.get("maxLength")
    if most is not None and int(most) < least:  # no string fits: left for the engine to say so
        return prop
    between = f"{{{least - 2},{'' if most is None else int(most) - 2}}}"
    rest = {key: value for key, value in prop.items() if key not in ("minLength", "maxLength")}
    return {**rest, "pattern": rf"^\S[\s\S]{between}\S$"}


# --------------------------------------------------------------------------- references
def rebase_refs(schema: Any, prefix: str) -> Any:
    """``schema`` (a copy) to be placed at JSON pointer ``prefix`` of another schema: its local
    ``$ref`` (``#``, ``#/$defs/Kind``, ``#/properties/x``) point there.

    Why: a forced call's schema holds a tool's parameters under ``properties/arguments`` (several
    tools under ``anyOf/i`` too), where ``#/$defs/Kind`` no longer resolves; until 2026-12-07 such a
    call raised ``GrammarError`` ("Pointer '/$defs/Kind' does not exist") though ``bind_tools``
    accepted the tool, and LlamaIndex and Pydantic write such schemas for nested models and enums
    (a reviewer)."""

    def rebase(node: dict[str, Any]) -> dict[str, Any]:
        ref = node.get("$ref")
        if isinstance(ref, str) and (ref == "#" or ref.startswith("#/")):
            node["$ref"] = "#" + prefix + ref[1:]
        return node

    return map_subschemas(schema, rebase)


def resolve_ref(root: Any, ref: str) -> Any:
    """What the local ``ref`` (``#`` or ``#/json/pointer``) points to in ``root``, or ``None``."""
    if ref != "#" and not ref.startswith("#/"):
        return None
    node = root
    for part in ref[2:].split("/") if ref != "#" else ():
        part = unquote(part).replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node


# --------------------------------------------------------------------------- the shortest JSON
def compact(value: Any) -> str:
    """``value`` as the constraint writes JSON (``json.dumps``' separators)."""
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def _text_size(value: Any) -> int:
    return len(compact(value))


def skeleton(
    schema: Any, root: Any = None, *, size: Callable[[Any], int] = _text_size, refs: frozenset[str] = frozenset()
) -> Any:
    """The shortest JSON value ``schema`` asks for, roughly: required keys only, one character a
    string, zero a number, empty arrays (for the room closing a reply needs, not for validation).

    A local ``$ref`` is read in ``root`` (``schema`` itself by default; a reference back to a schema
    being expanded is ``null``, so a recursive schema ends); of ``anyOf`` / ``oneOf`` / ``allOf`` the
    branch that is largest by ``size`` (characters of its JSON, or tokens). Until 2026-12-07 a
    ``$ref`` was ``null`` and only the first branch was read, so a reply taking a larger branch, or
    a ``$defs`` model, had no room left for its keys and was cut mid-JSON (a reviewer)."""
    root = schema if root is None else root
    node = _resolved(schema, root, refs)
    if node is None:
        return None
    schema, refs = node
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            return max((skeleton(branch, root, size=size, refs=refs) for branch in schema[key]), key=size)
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list) and kind else kind
    if kind == "object" or "properties" in schema:
        properties = schema.get("properties") or {}
        return {name: skeleton(properties.get(name, {}), root, size=size, refs=refs)
                for name in schema.get("required") or () if isinstance(name, str)}  # fmt: skip
    if kind == "array":
        return [skeleton(schema.get("items", {}), root, size=size, refs=refs)] * int(schema.get("minItems") or 0)
    return {"string": "x" * max(1, int(schema.get("minLength") or 1)), "integer": 0, "number": 0,
            "boolean": False}.get(kind)  # fmt: skip


def _resolved(schema: Any, root: Any, refs: frozenset[str]) -> tuple[Mapping[str, Any], frozenset[str]] | None:
    """``schema`` with its ``$ref`` followed (``None`` where it cannot be, or loops back)."""
    for _ in range(32):  # a chain of references, not a loop
        if not isinstance(schema, Mapping):
            return None
        ref = schema.get("$ref")
        if not isinstance(ref, str):
            return schema, refs
        if ref in refs:
            return None
        schema, refs = resolve_ref(root, ref), refs | {ref}
    return None


def missing_json(
    schema: Any, path: Sequence[tuple[str, Sequence[str], bool]], size: Callable[[Any], int] = _text_size
) -> str:
    """The shortest JSON still to write for ``schema`` where a reply stands at ``path``: the
    required keys not yet written in each open object (``path`` lists them, outermost first, as
    ``("{", keys written, whether the last key's value is still to start)`` or ``("[", (), False)``),
    as ``"key": value`` pieces, and the value of a key just written; the whole :func:`skeleton` when
    nothing is open yet.

    Keys are counted per object: until 2026-12-07 a key counted as written when its name was
    anywhere in the reply, so of two objects with the same keys (an order's billing and shipping
    addresses, parallel calls) the second had no room left for its own and was cut (a reviewer).
    """
    if not path:
        return compact(skeleton(schema, size=size))
    pieces = []
    for opener, node, keys, pending in _open_nodes(schema, path, size):
        if opener == "[":
            continue
        properties, required = node.get("properties") or {}, node.get("required") or ()
        missing = [f"{json.dumps(name, ensure_ascii=False)}: {compact(skeleton(properties.get(name, {}), schema, size=size))}"
                   for name in required if isinstance(name, str) and name not in keys]  # fmt: skip
        if missing and keys:  # the comma after the keys written (a reviewer: a token short)
            missing[0] = ", " + missing[0]
        pieces += missing
        if pending:  # the last key is written, its value not started
            pieces.append(compact(skeleton(properties.get(keys[-1], {}) if keys else {}, schema, size=size)))
    return ", ".join(pieces)


def missing_keys(schema: Any, path: Sequence[tuple[str, Sequence[str], bool]]) -> list[str]:
    """The required keys not yet written in the innermost open object at ``path`` (none when the
    innermost open value is an array, or the schema does not describe it)."""
    nodes = list(_open_nodes(schema, path, _text_size))
    # every frame but the wrappers described (until 2026-12-07, the day it came, Mistral's list of
    # calls made the path one longer than the nodes, and no key was ever missing: a reviewer)
    if not nodes or len(nodes) < len(path) - _wrappers(schema, path, _text_size) or nodes[-1][0] != "{":
        return []
    _, node, keys, _ = nodes[-1]
    return [name for name in node.get("required") or () if isinstance(name, str) and name not in keys]


def fits(schema: Any, path: Sequence[tuple[str, Sequence[str], bool]],
         values: Sequence[Sequence[tuple[str, str]]]) -> bool:  # fmt: skip
    """Do the string ``values`` written in the open objects at ``path`` (per frame, as ``path``'s) fit
    ``schema``: no ``const`` or ``enum`` of the schema says otherwise (a call's ``"name"``)?"""
    skip = _wrappers(schema, path, _text_size)
    for (_, node, _, _), written in zip(_open_nodes(schema, path, _text_size), list(values)[skip:], strict=False):
        properties = node.get("properties") or {}
        for key, value in written:
            prop = _resolved(properties.get(key), schema, frozenset())
            if prop is None:
                continue
            if "const" in prop[0] and prop[0]["const"] != value:
                return False
            if isinstance(prop[0].get("enum"), list) and value not in prop[0]["enum"]:
                return False
    return True


def _open_nodes(
    schema: Any, path: Sequence[tuple[str, Sequence[str], bool]], size: Callable[[Any], int]
) -> Iterator[tuple[str, Mapping[str, Any], Sequence[str], bool]]:
    """``(opener, the schema it follows, keys written, pending)`` of each open object and array at
    ``path`` that the schema describes, outermost first (a wrapper it does not, Mistral's list of
    calls, left out)."""
    root, node, frames = schema, schema, list(path)[_wrappers(schema, path, size) :]
    for opener, keys, pending in frames:
        node = _branch(node, opener, root, size, keys)
        if node is None:
            return
        yield opener, node, keys, pending
        if opener == "[":
            node = node.get("items") if isinstance(node.get("items"), Mapping) else {}
        else:
            node = (node.get("properties") or {}).get(keys[-1], {}) if keys else {}


def _wrappers(schema: Any, path: Sequence[tuple[str, Sequence[str], bool]], size: Callable[[Any], int]) -> int:
    """How many of ``path``'s outer frames the schema does not describe (Mistral's list of calls)."""
    count = 0
    while count < len(path) and _branch(schema, path[count][0], schema, size) is None:
        count += 1
    return count


def _branch(
    schema: Any, opener: str, root: Any, size: Callable[[Any], int], keys: Sequence[str] = ()
) -> Mapping[str, Any] | None:
    """The (sub)schema of ``schema`` an object (``{``) or array (``[``) being written follows: its
    ``$ref`` followed, of several branches the largest of that kind among those that declare the
    ``keys`` written in it (all of that kind when none does); ``None`` when it is not one. (Until
    2026-12-07, the day it came, the largest whatever was written: a reply in another branch had
    none of its keys reserved, a reviewer.)"""
    node = _resolved(schema, root, frozenset())
    if node is None:
        return None
    schema = node[0]
    branches = [b for key in ("anyOf", "oneOf", "allOf") for b in (schema.get(key) or ()) if isinstance(b, Mapping)]
    if branches:
        fitting = [b for b in (_branch(b, opener, root, size, keys) for b in branches) if b is not None]
        declaring = [b for b in fitting if all(k in (b.get("properties") or {}) for k in keys)]
        return max(declaring or fitting, key=lambda b: size(skeleton(b, root, size=size)), default=None)
    kind = schema.get("type")
    kinds = set(kind) if isinstance(kind, list) else {kind}
    if opener == "{":
        return schema if "object" in kinds or "properties" in schema or kinds == {None} else None
    return schema if "array" in kinds or "items" in schema or kinds == {None} else None

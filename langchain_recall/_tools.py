"""LangChain's side of tool calling and structured output: translation only.

Tools and schemas become the OpenAI-style dicts the engine reads
(:mod:`recall_core.structured.outputs`); the engine's :class:`~recall_core.structured.tools.ToolCall` objects
become LangChain ``tool_calls`` / ``tool_call_chunks``. Constrained decoding, the chat
template and parsing the reply are the engine's.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any, Literal

from langchain_core.exceptions import OutputParserException
from langchain_core.messages import AIMessage, BaseMessage, BaseMessageChunk
from langchain_core.messages.tool import InvalidToolCall, ToolCall, ToolCallChunk
from langchain_core.output_parsers import JsonOutputParser, PydanticOutputParser
from langchain_core.output_parsers.openai_tools import JsonOutputKeyToolsParser, PydanticToolsParser
from langchain_core.outputs import ChatGeneration, Generation
from langchain_core.runnables import Runnable, RunnableGenerator, RunnableLambda, RunnableMap
from langchain_core.runnables.utils import AddableDict
from langchain_core.utils.function_calling import convert_to_json_schema, convert_to_openai_tool
from langchain_core.utils.pydantic import is_basemodel_subclass

from recall_core import RecallResult
from recall_core.structured.outputs import check_tool_schemas
from recall_core.structured.tools import check_tools, chosen_tools

StructuredOutputMethod = Literal["json_schema", "function_calling", "json_mode"]


def openai_tools(tools: Sequence[Any], tool_choice: Any) -> tuple[list[dict[str, Any]], Any]:
    """``tools`` (LangChain tools, functions, Pydantic models, dicts) as checked OpenAI dicts.

    Raises ``ValueError`` for a schema the grammar engine cannot compile (naming the tool)
    and for a ``tool_choice`` naming a tool that is not bound.
    """
    formatted = check_tools([convert_to_openai_tool(tool) for tool in tools])
    check_tool_schemas(formatted)
    if tool_choice is True:
        tool_choice = "any"
    chosen_tools(formatted, tool_choice)  # raises for an unknown name
    return formatted, tool_choice


def assistant_tool_calls(message: AIMessage) -> list[dict[str, Any]]:
    """An ``AIMessage``'s calls as the chat template reads them (arguments as a dict)."""
    return [
        {"type": "function", "id": call.get("id"), "function": {"name": call["name"], "arguments": call["args"]}}
        for call in message.tool_calls
    ]


def message_tool_calls(result: RecallResult) -> dict[str, Any]:
    """``tool_calls`` / ``invalid_tool_calls`` for an ``AIMessage`` from the engine's result."""
    return {
        "tool_calls": [ToolCall(name=c.name, args=c.arguments, id=c.id, type="tool_call") for c in result.tool_calls],
        "invalid_tool_calls": [
            InvalidToolCall(name=c.name, args=c.arguments, id=c.id, error=c.error, type="invalid_tool_call")
            for c in result.invalid_tool_calls
        ],
    }


def tool_call_chunks(result: RecallResult) -> list[ToolCallChunk]:
    """The result's calls as streaming chunks (one per call, arguments as JSON text).

    LangChain reads a chunk's calls again from their ``args``: valid where they parse (partially)
    into an object. An invalid call's raw text often does: a call cut short ('{"name": "f",
    "arguments": {"city": "Li') or to an unbound tool. So its ``args`` are that text as a JSON
    string, which stays invalid, as in ``invoke`` (``json.loads`` gives the raw text back; a chunk
    carries no error). Until 2026-12-07 ``stream`` turned such a call into a valid one with the
    wrong arguments (a reviewer)."""
    chunks = [
        ToolCallChunk(name=c.name, args=json.dumps(c.arguments, ensure_ascii=False), id=c.id, index=i,
                      type="tool_call_chunk")
        for i, c in enumerate(result.tool_calls)
    ]  # fmt: skip
    start = len(chunks)
    chunks += [
        ToolCallChunk(name=c.name, args=json.dumps(c.arguments, ensure_ascii=False), id=c.id, index=start + i,
                      type="tool_call_chunk")
        for i, c in enumerate(result.invalid_tool_calls)
    ]  # fmt: skip
    return chunks


# --------------------------------------------------------------------------- structured output
def structured_output(
    model: Any,
    schema: dict[str, Any] | type,
    method: StructuredOutputMethod,
    include_raw: bool,
) -> Runnable:
    """``model.with_structured_output(schema, method=..., include_raw=...)``, built like LangChain's partners."""
    is_pydantic = isinstance(schema, type) and is_basemodel_subclass(schema)
    if method == "function_calling":
        name = convert_to_openai_tool(schema)["function"]["name"]
        llm = model.bind_tools(
            [schema], tool_choice=name,
            ls_structured_output_format={"kwargs": {"method": method}, "schema": schema},
        )  # fmt: skip
        tools_parser = (
            PydanticToolsParser(tools=[schema], first_tool_only=True)
            if is_pydantic
            else JsonOutputKeyToolsParser(key_name=name, first_tool_only=True)
        )
        parser: Runnable = RunnableLambda(_require_tool_call) | tools_parser
    elif method in ("json_schema", "json_mode"):
        # JSON mode constrains the reply to a JSON object; given a schema with properties, a local
        # decoder may as well hold it to the schema too (a hosted JSON mode cannot).
        if method == "json_schema" or _has_properties(schema):
            json_schema = _json_schema(schema)
            response_format: dict[str, Any] = {
                "type": "json_schema",
                "json_schema": {"name": json_schema.get("title", "output"), "schema": json_schema},
            }
        else:
            response_format = {"type": "json_object"}
        llm = model.bind(
            response_format=response_format,
            ls_structured_output_format={"kwargs": {"method": method}, "schema": schema},
        )
        parser = _WholePydanticParser(pydantic_object=schema) if is_pydantic else _WholeJsonParser()
    else:
        raise ValueError(f"method must be 'json_schema', 'function_calling' or 'json_mode', got {method!r}")
    if not include_raw:
        return llm | parser
    return _with_raw(llm, parser)


#: Keywords that make a dict a JSON schema (not an OpenAI function or tool dict).
_SCHEMA_KEYWORDS = frozenset({"type", "anyOf", "oneOf", "allOf", "enum", "const", "$ref", "items", "properties"})


def _json_schema(schema: dict[str, Any] | type) -> dict[str, Any]:
    """The JSON schema the reply is held to.

    A JSON schema dict whose top level is not an object (an array, a string, ``anyOf``...) is
    used as given: LangChain's ``convert_to_json_schema`` reads every dict as an object's schema
    and would keep only its title, leaving the reply unconstrained. The rest (Pydantic, TypedDict,
    object schemas, OpenAI function dicts) is converted as LangChain's partners do.
    """
    if (
        isinstance(schema, dict)
        and _SCHEMA_KEYWORDS & schema.keys()
        and not {"function", "parameters"} & schema.keys()
        and schema.get("type") not in ("object", "function")
        and "properties" not in schema
    ):
        return dict(schema)
    return convert_to_json_schema(schema)


def _has_properties(schema: dict[str, Any] | type) -> bool:
    try:
        return bool(convert_to_json_schema(schema).get("properties"))
    except (ValueError, TypeError):
        return False


def _require_tool_call(message: BaseMessage) -> BaseMessage:
    """A forced call that did not come out (cut by the token budget): LangChain's parse error, not ``None``."""
    if isinstance(message, AIMessage) and not message.tool_calls:
        problems = "; ".join(f"{c.get('name')}: {c.get('error')}" for c in message.invalid_tool_calls)
        raise OutputParserException(
            f"the model made no valid tool call ({problems or 'no call'}); a larger max_tokens may help",
            llm_output=json.dumps([c.get("args") for c in message.invalid_tool_calls]) or str(message.content),
        )
    return message


class _WholeJson:
    """A parser that refuses JSON that is not whole (:func:`_require_json`) or that its schema refuses:
    at its whole-reply parse, and at a stream's end, after LangChain's partial parses (a check before
    the parser made a stream one chunk; one only at the whole-reply parse let a stream cut short, or
    failing a Pydantic validator, end as a success or as nothing)."""

    def parse_result(self, result: list[Generation], *, partial: bool = False) -> Any:
        if not partial and result and isinstance(result[0], ChatGeneration):
            _require_json(result[0].message)
        return super().parse_result(result, partial=partial)  # type: ignore[misc]

    def _transform(self, input: Iterator[str | BaseMessage]) -> Iterator[Any]:
        seen: list[str | BaseMessage] = []
        yield from super()._transform(_kept(input, seen))  # type: ignore[misc]
        self._parse_whole(seen)

    async def _atransform(self, input: AsyncIterator[str | BaseMessage]) -> AsyncIterator[Any]:
        seen: list[str | BaseMessage] = []

        async def kept() -> AsyncIterator[str | BaseMessage]:
            async for chunk in input:
                seen.append(chunk)
                yield chunk

        async for parsed in super()._atransform(kept()):  # type: ignore[misc]
            yield parsed
        self._parse_whole(seen)

    def _parse_whole(self, chunks: list[str | BaseMessage]) -> None:
        if chunks:  # (nothing came: nothing to check)
            self.parse_result([ChatGeneration(message=_joined(chunks))])


def _kept(chunks: Iterator[str | BaseMessage], seen: list[str | BaseMessage]) -> Iterator[str | BaseMessage]:
    for chunk in chunks:
        seen.append(chunk)
        yield chunk


def _joined(chunks: list[Any]) -> BaseMessage:
    """A stream's chunks (message chunks or text) as one message (one message: itself)."""
    if len(chunks) == 1 and isinstance(chunks[0], BaseMessage):
        return chunks[0]
    if all(isinstance(c, BaseMessageChunk) for c in chunks):
        message = chunks[0]
        for chunk in chunks[1:]:
            message = message + chunk
        return message
    return AIMessage(content="".join(c if isinstance(c, str) else str(c.content) for c in chunks))


def _with_raw(llm: Runnable, parser: Runnable) -> Runnable:
    """``include_raw=True``: ``{"raw", "parsed", "parsing_error"}``; streamed, the raw chunks as they come
    and the parse of the whole reply at the end, its error in ``parsing_error`` (a parse error at a
    stream's end raised past LangChain's fallback, which catches only before the first chunk: a
    reviewer, 2026-12-07)."""

    def parsed(raw: Any) -> AddableDict:
        try:
            return AddableDict(parsed=parser.invoke(raw), parsing_error=None)
        except Exception as error:  # noqa: BLE001 - any, as LangChain's fallback (a tools parser's ValidationError)
            return AddableDict(parsed=None, parsing_error=error)

    def transform(chunks: Iterator[Any]) -> Iterator[AddableDict]:
        raw = []
        for chunk in chunks:
            raw.append(chunk["raw"])
            yield AddableDict(raw=chunk["raw"])
        if raw:  # (nothing came: nothing to parse, as LangChain's own yields nothing)
            yield parsed(_joined(raw))

    async def atransform(chunks: AsyncIterator[Any]) -> AsyncIterator[AddableDict]:
        raw = []
        async for chunk in chunks:
            raw.append(chunk["raw"])
            yield AddableDict(raw=chunk["raw"])
        if raw:  # (nothing came: nothing to parse, as LangChain's own yields nothing)
            yield parsed(_joined(raw))

    return RunnableMap(raw=llm) | RunnableGenerator(transform, atransform)


class _WholeJsonParser(_WholeJson, JsonOutputParser):
    pass


class _WholePydanticParser(_WholeJson, PydanticOutputParser):
    pass


def _require_json(message: BaseMessage) -> BaseMessage:
    """A reply that is not whole JSON (cut by the token budget mid-JSON): LangChain's parse error.

    ``JsonOutputParser`` completes partial JSON, so until 2026-12-07 a reply cut mid-JSON came back
    as a dict missing required keys, with no error (a reviewer); the docs promise
    ``OutputParserException``, as LangChain's own models raise (``parsing_error`` with ``include_raw``).
    """
    text = message.content if isinstance(message.content, str) else str(message.content)
    try:
        _whole_json(text)
    except ValueError as error:
        finish = (getattr(message, "response_metadata", None) or {}).get("finish_reason")
        cause = ("the reply was cut by the token budget (finish_reason 'length'); a larger max_tokens may help"
                 if finish == "length" else f"finish_reason {finish!r}")  # fmt: skip
        raise OutputParserException(f"the reply is not valid JSON ({error}): {cause}", llm_output=text) from error
    return message


def _whole_json(text: str) -> Any:
    """``text`` read as JSON as ``parse_json_markdown`` reads it, but whole: the text itself, else a
    fenced block in it (a fence inside a JSON string is the string's: the text is tried first)."""
    try:
        return json.loads(text.strip())
    except ValueError:
        fenced = re.search(r"```(?:json)?(.*?)```", text, re.DOTALL)
        if fenced is None:
            raise
        return json.loads(fenced.group(1))

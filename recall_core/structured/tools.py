"""Tool calls: how each chat-template family writes them, how they are parsed and forced.

Tools are OpenAI-style dicts (``{"type": "function", "function": {"name", "description",
"parameters"}}``), the form LangChain's ``convert_to_openai_tool`` and LlamaIndex's
``to_openai_tool`` produce and chat templates read. Three families write calls differently:

* ``hermes``: ``<tool_call>\\n{"name": ..., "arguments": {...}}\\n</tool_call>`` (Qwen2.5,
  Hermes, SmolLM3, and the embedded default model);
* ``llama3``: the reply is ``{"name": ..., "parameters": {...}}`` (Llama 3.1 / 3.2 / 3.3);
* ``mistral``: ``[TOOL_CALLS][{"name": ..., "arguments": {...}}]`` (and ``[TOOL_CALLS]name[ARGS]{...}``).

:func:`tool_format` reads the family off the chat template; :meth:`ToolFormat.parse` splits a
reply into content, calls and malformed calls; :meth:`ToolFormat.forced_grammar` is the Lark
grammar that makes the model emit a valid call to one of the allowed tools.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from recall_core.structured.constrained import lark_json, lark_literal
from recall_core.structured.schemas import rebase_refs

#: ``tool_choice`` values that force some tool call (``"any"`` is LangChain's, ``"required"`` OpenAI's).
FORCED_CHOICES = frozenset({"any", "required"})


@dataclass(frozen=True)
class ToolCall:
    """A well-formed call: ``arguments`` is a dict."""

    name: str
    arguments: dict[str, Any]
    id: str = field(default_factory=lambda: new_call_id())


@dataclass(frozen=True)
class InvalidToolCall:
    """A call the model started but did not write correctly: ``arguments`` is the raw text."""

    name: str | None
    arguments: str
    error: str
    id: str = field(default_factory=lambda: new_call_id())


@dataclass(frozen=True)
class ParsedReply:
    """A reply split into its text and its tool calls."""

    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    invalid_tool_calls: tuple[InvalidToolCall, ...] = ()


def new_call_id() -> str:
    """A call id as OpenAI writes them (``call_`` and 24 hex digits)."""
    return f"call_{uuid.uuid4().hex[:24]}"


#: What Mistral's templates accept as a call id (they raise on any other): 9 letters or digits.
MISTRAL_ID = re.compile(r"[a-zA-Z0-9]{9}")


def mistral_call_id(call_id: Any = None) -> str:
    """A 9-character alphanumeric id, as Mistral's templates require (vLLM makes the same):
    a new random one, or ``call_id`` itself when it already is one, else one derived from it
    (the same every time, so a call and its result still pair up)."""
    if call_id is None:
        return uuid.uuid4().hex[:9]
    text = str(call_id)
    return text if MISTRAL_ID.fullmatch(text) else hashlib.sha256(text.encode()).hexdigest()[:9]


def mistral_history(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` with every call id (assistant ``tool_calls``, a tool turn's ``tool_call_id``) made
    one Mistral's templates accept (:func:`mistral_call_id`): ids from other models or frameworks
    (``call_`` and 24 hex, LangChain's, uuids) would make the template raise."""
    out = []
    for message in messages:
        item = dict(message)
        if item.get("tool_calls"):
            item["tool_calls"] = [
                {**call, "id": mistral_call_id(call["id"])} if isinstance(call, Mapping) and call.get("id") else call
                for call in item["tool_calls"]
            ]
        if item.get("tool_call_id"):
            item["tool_call_id"] = mistral_call_id(item["tool_call_id"])
        out.append(item)
    return out


# --------------------------------------------------------------------------- tools
def check_tools(tools: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI-style tool dicts, checked: a ``function`` with a name and an object ``parameters``."""
    checked = []
    for index, tool in enumerate(tools):
        function = tool.get("function") if isinstance(tool, Mapping) else None
        if not isinstance(function, Mapping) or not isinstance(function.get("name"), str) or not function["name"]:
            raise ValueError(f"tool {index} must be {{'type': 'function', 'function': {{'name': ..., 'parameters': ...}}}}")
        name = function["name"]
        parameters = function.get("parameters") or {"type": "object", "properties": {}}
        if not isinstance(parameters, Mapping) or parameters.get("type", "object") != "object":
            raise ValueError(f"tool {name!r}: parameters must be a JSON schema of type 'object'")
        checked.append({"type": "function", "function": {**function, "parameters": dict(parameters)}})
    return checked


def tool_names(tools: Sequence[Mapping[str, Any]]) -> list[str]:
    return [tool["function"]["name"] for tool in tools]


def forces_a_call(tool_choice: Any) -> bool:
    """Whether ``tool_choice`` forces a call (anything but ``None``, ``False``, ``"auto"`` and ``"none"``)."""
    return not (tool_choice is None or tool_choice is False or tool_choice in ("auto", "none"))


def chosen_tools(tools: Sequence[Mapping[str, Any]], tool_choice: Any) -> list[dict[str, Any]] | None:
    """The tools a call is forced to pick from, or ``None`` when the model may answer in text.

    ``tool_choice``: ``None`` / ``"auto"`` (the model decides), ``"none"`` (no call),
    ``"any"`` / ``"required"`` / ``True`` (a call to any tool), a tool's name, or
    ``{"type": "function", "function": {"name": ...}}``. A name that is not bound raises.
    """
    if not forces_a_call(tool_choice):
        return None
    if tool_choice is True or (isinstance(tool_choice, str) and tool_choice in FORCED_CHOICES):
        return list(tools)
    name = tool_choice
    if isinstance(tool_choice, Mapping):
        name = (tool_choice.get("function") or {}).get("name") or tool_choice.get("name")
    if not isinstance(name, str):
        raise ValueError(f"tool_choice must be 'auto', 'none', 'any', 'required' or a tool's name, got {tool_choice!r}")
    matching = [tool for tool in tools if tool["function"]["name"] == name]
    if not matching:
        raise ValueError(f"tool_choice names {name!r}, which is not a bound tool (bound: {', '.join(tool_names(tools))})")
    return matching


# --------------------------------------------------------------------------- formats
class ToolFormat:
    """How one template family writes tool calls."""

    name = "base"
    #: Text that opens a call in a reply (streaming holds text back from here).
    opener = ""
    #: Key of the arguments in a call's JSON.
    arguments_key = "arguments"
    #: What a forced call writes after its JSON.
    tail = ""

    def call_schema(self, tool: Mapping[str, Any]) -> dict[str, Any]:
        """The JSON schema of one call to ``tool`` (name fixed, arguments per the tool); the
        parameters' local ``$ref`` (``#/$defs/...``) point where the parameters now are."""
        function = tool["function"]
        arguments = rebase_refs(function["parameters"], f"/properties/{self.arguments_key}")
        return {
            "type": "object",
            "properties": {"name": {"const": function["name"]}, self.arguments_key: arguments},
            "required": ["name", self.arguments_key],
        }

    def calls_schema(self, tools: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        schemas = [self.call_schema(tool) for tool in tools]
        if len(schemas) == 1:
            return schemas[0]
        return {"anyOf": [rebase_refs(schema, f"/anyOf/{i}") for i, schema in enumerate(schemas)]}

    def forced_grammar(self, tokenizer: Any, tools: Sequence[Mapping[str, Any]], parallel: bool) -> str:
        """Lark text for a reply that is one call (several with ``parallel``) to one of ``tools``."""
        raise NotImplementedError

    def write_call(self, name: str, arguments: Mapping[str, Any]) -> str:
        """A call as the model writes it (for templates that cannot render ``tool_calls``)."""
        raise NotImplementedError

    #: The bound tools' names, when known (:meth:`bound_to`): a call to another name is invalid.
    tools: frozenset[str] | None = None

    def bound_to(self, names: Iterable[str]) -> ToolFormat:
        """This format reading replies to a call with these tools bound (a copy)."""
        bound = copy.copy(self)
        bound.tools = frozenset(names)
        return bound

    def parse(self, text: str) -> ParsedReply:
        """``text`` split into content, calls and malformed calls; with :attr:`tools` known, a
        call to a name that is not bound is reported in ``invalid_tool_calls`` (naming the bound ones)."""
        parsed = self._parse(text)
        if self.tools is None or all(call.name in self.tools for call in parsed.tool_calls):
            return parsed
        bound = ", ".join(sorted(self.tools))
        unknown = tuple(
            InvalidToolCall(c.name, json.dumps(c.arguments, ensure_ascii=False),
                            f"{c.name!r} is not a bound tool (bound: {bound})", c.id)
            for c in parsed.tool_calls if c.name not in self.tools
        )  # fmt: skip
        known = tuple(c for c in parsed.tool_calls if c.name in self.tools)
        return ParsedReply(parsed.content, known, parsed.invalid_tool_calls + unknown)

    def _parse(self, text: str) -> ParsedReply:
        raise NotImplementedError

    def marker_tokens(self) -> tuple[str, ...]:
        """Special tokens of the format that must survive decoding (they carry the call)."""
        return ()


class HermesFormat(ToolFormat):
    name = "hermes"
    opener = "<tool_call>"
    closer = "</tool_call>"
    tail = "\n</tool_call>"

    def forced_grammar(self, tokenizer: Any, tools: Sequence[Mapping[str, Any]], parallel: bool) -> str:
        opener, closer = lark_literal(tokenizer, self.opener), lark_literal(tokenizer, self.closer)
        repeat = ' ("\\n" call)*' if parallel else ""
        return f'start: call{repeat}\ncall: {opener} "\\n" body "\\n" {closer}\nbody: {lark_json(self.calls_schema(tools))}\n'

    def write_call(self, name: str, arguments: Mapping[str, Any]) -> str:
        body = json.dumps({"name": name, "arguments": dict(arguments)}, ensure_ascii=False)
        return f"{self.opener}\n{body}\n{self.closer}"

    def _parse(self, text: str) -> ParsedReply:
        pattern = re.compile(re.escape(self.opener) + r"(.*?)(?:" + re.escape(self.closer) + r"|$)", re.DOTALL)
        calls: list[ToolCall] = []
        invalid: list[InvalidToolCall] = []
        for match in pattern.finditer(text):
            _read_calls(match.group(1), calls, invalid, closed=match.group(0).endswith(self.closer))
        content = pattern.sub("", text).strip() if (calls or invalid) else text
        return ParsedReply(content, tuple(calls), tuple(invalid))

    def marker_tokens(self) -> tuple[str, ...]:
        return (self.opener, self.closer)


class Llama3Format(ToolFormat):
    name = "llama3"
    opener = "{"
    arguments_key = "parameters"
    python_tag = "<|python_tag|>"

    def forced_grammar(self, tokenizer: Any, tools: Sequence[Mapping[str, Any]], parallel: bool) -> str:
        repeat = ' ("; " call)*' if parallel else ""
        return f"start: call{repeat}\ncall: {lark_json(self.calls_schema(tools))}\n"

    def write_call(self, name: str, arguments: Mapping[str, Any]) -> str:
        return json.dumps({"name": name, "parameters": dict(arguments)}, ensure_ascii=False)

    def _parse(self, text: str) -> ParsedReply:
        """A reply is calls when it is ``<|python_tag|>`` and calls, or JSON objects (``; ``
        between them) that each look like a call: a ``"name"`` string with ``"parameters"``
        (or ``"arguments"``), or the name of a bound tool. Any other JSON is an answer in text
        (``{"name": "Ada Lovelace", "born": 1815}`` under ``tool_choice="auto"``)."""
        body = text.strip()
        tagged = body.startswith(self.python_tag)
        if tagged:
            body = body[len(self.python_tag) :].strip()
        if not body.startswith("{"):
            return ParsedReply(text)
        pieces, rest = _json_objects(body, ";")
        if not tagged and not all(self._looks_like_call(piece, value) for piece, value in pieces):
            return ParsedReply(text)
        calls: list[ToolCall] = []
        invalid: list[InvalidToolCall] = []
        for piece, _ in pieces:
            _read_calls(piece, calls, invalid, closed=True)
        for end in self.end_markers:  # the end of a tagged call, where the decoding kept special tokens
            rest = rest.replace(end, "")
        return ParsedReply(rest.strip(), tuple(calls), tuple(invalid))

    #: Llama 3's ends of a turn and of a tool call: never content.
    end_markers = ("<|eom_id|>", "<|eot_id|>")

    def _looks_like_call(self, piece: str, value: Any) -> bool:
        if value is None:  # not JSON (cut short): a call if it starts like one (llama.cpp reads them so)
            named = re.match(r'\{\s*"name"\s*:\s*"([^"]*)"', piece)  # a bound tool's name, or any with no tools known
            return named is not None and (self.tools is None or named.group(1) in self.tools
                                          or re.match(r'[^,]*,\s*"(?:parameters|arguments)"', piece[named.end():]) is not None)  # fmt: skip
        name = value.get("name") if isinstance(value, dict) else None
        if not isinstance(name, str):
            return False
        return "parameters" in value or "arguments" in value or (self.tools is not None and name in self.tools)

    def marker_tokens(self) -> tuple[str, ...]:
        return (self.python_tag,)


class MistralFormat(ToolFormat):
    name = "mistral"
    opener = "[TOOL_CALLS]"
    tail = "]"

    def forced_grammar(self, tokenizer: Any, tools: Sequence[Mapping[str, Any]], parallel: bool) -> str:
        repeat = ' (", " call)*' if parallel else ""
        opener = lark_literal(tokenizer, self.opener)
        return f'start: {opener} "[" call{repeat} "]"\ncall: {lark_json(self.calls_schema(tools))}\n'

    def write_call(self, name: str, arguments: Mapping[str, Any]) -> str:
        return self.opener + json.dumps([{"name": name, "arguments": dict(arguments)}], ensure_ascii=False)

    def _parse(self, text: str) -> ParsedReply:
        parsed = self._parse_calls(text)
        return ParsedReply(  # ids the template accepts when the calls come back in the history
            parsed.content,
            tuple(replace(c, id=mistral_call_id()) for c in parsed.tool_calls),
            tuple(replace(c, id=mistral_call_id()) for c in parsed.invalid_tool_calls),
        )

    def _parse_calls(self, text: str) -> ParsedReply:
        if self.opener not in text:
            return ParsedReply(text)
        content, *blocks = text.split(self.opener)
        calls: list[ToolCall] = []
        invalid: list[InvalidToolCall] = []
        for block in blocks:
            block = block.strip()
            if "[ARGS]" in block:  # the newer form: name[ARGS]{...}
                name, _, arguments = block.partition("[ARGS]")
                decoded = _loads(arguments)
                if isinstance(decoded, dict) and name.strip():
                    calls.append(ToolCall(name.strip(), decoded))
                else:
                    invalid.append(InvalidToolCall(name.strip() or None, arguments, "the call is not valid JSON"))
            else:
                _read_calls(block, calls, invalid, closed=True)
        return ParsedReply(content.strip(), tuple(calls), tuple(invalid))

    def marker_tokens(self) -> tuple[str, ...]:
        return (self.opener, "[ARGS]")


FORMATS: Mapping[str, ToolFormat] = {f.name: f for f in (HermesFormat(), Llama3Format(), MistralFormat())}


def template_text(tokenizer: Any) -> str:
    template = getattr(tokenizer, "chat_template", None)
    if isinstance(template, Mapping):  # named templates: the tool one when there is one
        template = template.get("tool_use") or template.get("default") or ""
    return template or ""


def supports_tools(tokenizer: Any) -> bool:
    """Does the chat template render a ``tools`` list (it reads the variable)?"""
    return re.search(r"\btools\b", template_text(tokenizer)) is not None


def tool_format(tokenizer: Any) -> ToolFormat:
    """The family of the tokenizer's chat template; Hermes when the template does not say."""
    template = template_text(tokenizer)
    if "[TOOL_CALLS]" in template:
        return FORMATS["mistral"]
    if "<tool_call>" in template:
        return FORMATS["hermes"]
    if "<|python_tag|>" in template or ("ipython" in template and "parameters" in template):
        return FORMATS["llama3"]
    return FORMATS["hermes"]


def special_ids(tokenizer: Any) -> frozenset[int]:
    """Every special token id (what ``decode(skip_special_tokens=True)`` drops)."""
    added = getattr(tokenizer, "added_tokens_decoder", {})
    return frozenset(tokenizer.all_special_ids) | {i for i, token in added.items() if getattr(token, "special", False)}


# --------------------------------------------------------------------------- describing tools
def tools_system_text(tools: Sequence[Mapping[str, Any]]) -> str:
    """Tools described for a template without tool support (the Hermes / Qwen2.5 wording)."""
    listed = "\n".join(json.dumps(tool, ensure_ascii=False) for tool in tools)
    return (
        "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
        "You are provided with function signatures within <tools></tools> XML tags:\n"
        f"<tools>\n{listed}\n</tools>\n\n"
        "For each function call, return a json object with function name and arguments within "
        "<tool_call></tool_call> XML tags:\n<tool_call>\n"
        '{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
    )


def describe_tools(messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` with the tools described in the system message (added first if there is none)."""
    text = tools_system_text(tools)
    out = [dict(message) for message in messages]
    if out and out[0].get("role") == "system":
        out[0]["content"] = f"{out[0].get('content', '')}\n\n{text}".strip()
    else:
        out.insert(0, {"role": "system", "content": text})
    return out


def inline_tool_history(messages: Sequence[Mapping[str, Any]], fmt: ToolFormat) -> list[dict[str, Any]]:
    """Tool calls and results as plain text turns, for a template that cannot render them.

    An assistant turn's ``tool_calls`` are written the way the model writes them; a
    ``tool`` turn becomes a user turn holding ``<tool_response>...</tool_response>`` (how
    Qwen2.5's template renders results).
    """
    out = []
    for message in messages:
        role = message.get("role")
        if role == "assistant" and message.get("tool_calls"):
            written = [fmt.write_call(c["function"]["name"], c["function"]["arguments"]) for c in message["tool_calls"]]
            content = "\n".join(part for part in [str(message.get("content") or ""), *written] if part)
            out.append({"role": "assistant", "content": content})
        elif role == "tool":
            out.append({"role": "user", "content": f"<tool_response>\n{message.get('content', '')}\n</tool_response>"})
        else:
            out.append({key: value for key, value in message.items() if key in ("role", "content")})
    return out


# --------------------------------------------------------------------------- parsing
def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, TypeError):
        return None


def _json_objects(text: str, separator: str) -> tuple[list[tuple[str, Any]], str]:
    """``text`` read as JSON objects with ``separator`` (or only space) between them: ``([(piece, value or None)], rest)``.

    Each piece is read as JSON up to its end (a separator inside a string stays there); a piece
    that is not valid JSON runs to the end of the text (value ``None``); ``rest`` is what follows
    the last object that is not another object."""
    decoder = json.JSONDecoder()
    pieces: list[tuple[str, Any]] = []
    position = 0
    while True:
        try:
            value, end = decoder.raw_decode(text, position)
        except ValueError:
            pieces.append((text[position:], None))
            return pieces, ""
        pieces.append((text[position:end], value))
        after = text[end:].lstrip()
        # the separator, or only space (calls a line apart), then the next object
        following = after[len(separator) :].lstrip() if after.startswith(separator) else after
        if not following.startswith("{"):
            return pieces, after
        position = len(text) - len(following)


def _read_calls(
    body: str, calls: list[ToolCall], invalid: list[InvalidToolCall], *, closed: bool, name: str | None = None
) -> None:
    """Append the call(s) written in ``body`` (a JSON object or a list of them) to ``calls`` or ``invalid``."""
    body = body.strip()
    decoded = _loads(body)
    if decoded is None:
        guess = re.search(r'"name"\s*:\s*"([^"]*)"', body)
        why = "the call is cut short (no closing tag)" if not closed else "the call is not valid JSON"
        invalid.append(InvalidToolCall(name or (guess.group(1) if guess else None), body, why))
        return
    for item in decoded if isinstance(decoded, list) else [decoded]:
        call_name = item.get("name") if isinstance(item, dict) else None
        arguments = None
        if isinstance(item, dict):
            arguments = next((item[k] for k in ("arguments", "parameters") if k in item), {})
            if isinstance(arguments, str):  # some models write the arguments as a JSON string
                arguments = _loads(arguments)
        if not isinstance(call_name, str) or not call_name or not isinstance(arguments, dict):
            text = json.dumps(item, ensure_ascii=False)
            invalid.append(InvalidToolCall(call_name if isinstance(call_name, str) else None, text,
                                           "a call needs a 'name' string and an 'arguments' object"))  # fmt: skip
        else:
            calls.append(ToolCall(call_name, arguments))


class ToolCallSplitter:
    """Streams a reply's text while holding back what may be a tool call.

    ``feed(piece)`` returns the text that is surely content; text from the format's opener
    on (or a tail that could grow into it) is held until the end, when :meth:`finish`
    returns the :class:`ParsedReply` of the whole reply and the content not yet shown (the
    text after a call too). Joining the streamed content gives the parsed ``content``.
    """

    def __init__(self, fmt: ToolFormat) -> None:
        self.fmt = fmt
        self.text = ""
        self.shown = 0
        self.holding = False

    def feed(self, piece: str) -> str:
        self.text += piece
        if self.holding:
            return ""
        opener = self.fmt.opener
        if isinstance(self.fmt, Llama3Format):  # a llama call is the whole reply: decide on its first character
            stripped = self.text.lstrip()
            if not stripped:
                return ""
            if stripped.startswith(("{", "<|python_tag|>")):
                self.holding = True
                return ""
            opener = "\0"  # never found: the rest is content
        index = self.text.find(opener, self.shown)
        if index != -1:
            self.holding = True
        # Spaces at the end are held too: a reply with a call loses those before it ("Let me
        # check.\n<tool_call>..." is "Let me check."), and the pieces join to its content.
        cut = index if index != -1 else len(self.text) - _partial_suffix(self.text, opener)
        cut = max(self.shown, len(self.text[:cut].rstrip()))
        out, self.shown = self.text[self.shown : cut], cut
        return out

    def finish(self) -> tuple[str, ParsedReply]:
        """``(content not yet shown, the parsed reply)``: the streamed text joined with it is the
        parsed ``content`` (text written after a call included), up to the spaces around a call."""
        parsed = self.fmt.parse(self.text)
        shown, self.shown = self.text[: self.shown], len(self.text)
        if not (parsed.tool_calls or parsed.invalid_tool_calls):
            return self.text[len(shown) :], parsed
        # the parsed content drops the calls and strips the text around them: go on from what was shown
        for prefix in (shown.lstrip(), shown.strip()):
            if parsed.content.startswith(prefix):
                return parsed.content[len(prefix) :], parsed
        return "", parsed


def calls_possible(tools: Any, tool_choice: Any) -> bool:
    """Can a reply with these options hold tool calls (not under ``tool_choice="none"``)?"""
    return bool(tools) and tool_choice != "none"


def call_splitter(tokenizer: Any, tools: Any, tool_choice: Any) -> ToolCallSplitter | None:
    """The splitter a stream with these options needs (it reads calls as the engine does), or
    ``None`` when the reply cannot hold calls and streams as it is."""
    if not calls_possible(tools, tool_choice):
        return None
    return ToolCallSplitter(tool_format(tokenizer).bound_to(tool_names(check_tools(tools))))


def _partial_suffix(text: str, pattern: str) -> int:
    for size in range(min(len(pattern) - 1, len(text)), 0, -1):
        if text.endswith(pattern[:size]):
            return size
    return 0

"""What a reply must look like: tools, ``tool_choice`` and ``response_format`` made into a plan.

:func:`plan_output` turns one call's options into an :class:`OutputPlan`: the messages and
``tools`` to render through the chat template, the :class:`~recall_core.structured.constrained.Constraint`
the decoder must follow (a forced tool call, a JSON schema, JSON mode), and the tool format
to parse the reply with. :class:`~recall_core.RecallGenerator` follows the plan; the adapters
only translate their frameworks' tools and schemas into the OpenAI-style dicts read here.

The rules:

* tools go through the chat template (``apply_chat_template(..., tools=...)``);
* a template without tool support gets tools only when ``tool_choice`` forces a call: they
  are then described in the system message and the call is constrained; asked for tools
  otherwise, it is a ``ValueError`` that says so;
* ``tool_choice="none"``: the tools are not rendered and the reply is text, never a call;
* a forced ``tool_choice`` (``"any"``, ``"required"``, a name) is enforced by the grammar, so
  even a small model writes a valid call; ``"auto"`` leaves the choice to the model and
  parses what it wrote (malformed calls are reported, not dropped).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from recall_core.structured.constrained import (
    Constraint,
    GrammarError,
    check_grammar,
    json_object_grammar,
    json_schema_grammar,
    lark_grammar,
    lark_json,
)
from recall_core.structured.tools import (
    ToolFormat,
    check_tools,
    chosen_tools,
    describe_tools,
    forces_a_call,
    inline_tool_history,
    mistral_history,
    supports_tools,
    tool_format,
    tool_names,
)


@dataclass(frozen=True)
class OutputPlan:
    """How one call renders its prompt, constrains its decoding and reads its reply."""

    prompt: Any
    template_tools: list[dict[str, Any]] | None = None
    constraint: Constraint | None = None
    tool_format: ToolFormat | None = None
    #: ``parallel_tool_calls=False`` given: the reply keeps its first call only, chosen by the model
    #: too (OpenAI's meaning; until 2026-12-07 it held only for a forced choice: a reviewer)
    one_call: bool = False

    @property
    def tail(self) -> str:
        """What the constrained reply writes after its JSON (a forced call's closing tag)."""
        return self.tool_format.tail if self.tool_format is not None and self.constraint is not None else ""

    def keep_tokens(self) -> tuple[str, ...]:
        """Special tokens that carry a tool call and must stay in the decoded text."""
        return self.tool_format.marker_tokens() if self.tool_format is not None else ()


def plan_output(
    tokenizer: Any,
    vocab_size: int,
    prompt: Any,
    *,
    tools: Sequence[Mapping[str, Any]] | None = None,
    tool_choice: Any = None,
    response_format: Mapping[str, Any] | None = None,
    parallel_tool_calls: bool | None = None,
) -> OutputPlan:
    """The plan for one call; ``ValueError`` (naming the tool or field) when the options cannot work."""
    if parallel_tool_calls is not None and not isinstance(parallel_tool_calls, bool):  # "false" read as true
        raise ValueError(f"parallel_tool_calls must be True, False or None, got {parallel_tool_calls!r}")
    if tools and response_format is not None:
        raise ValueError("give tools or response_format, not both")
    if not isinstance(prompt, str) and tool_format(tokenizer).name == "mistral":
        prompt = mistral_history(prompt)  # its templates raise on call ids that are not 9 alphanumerics
    if response_format is not None:
        grammar = response_format_grammar(response_format)
        spec = response_format.get("json_schema") or {}
        schemas = [spec.get("schema")] if isinstance(spec, Mapping) else []
        constraint = Constraint(tokenizer, grammar, vocab_size=vocab_size, name="response_format", schemas=schemas)
        return OutputPlan(prompt, constraint=constraint)
    if not tools:
        if tool_choice is not None and tool_choice not in ("auto", "none"):
            raise ValueError(f"tool_choice={tool_choice!r} needs tools: bind some first")
        return OutputPlan(prompt)
    if isinstance(prompt, str):
        raise ValueError("tools need chat messages (the chat template renders them), not a string prompt")
    tools = check_tools(tools)
    check_tool_schemas(tools)
    if tool_choice == "none":
        return _no_call_plan(tokenizer, prompt)
    forced = chosen_tools(tools, tool_choice)
    fmt = tool_format(tokenizer).bound_to(tool_names(tools))  # a call to another name is reported invalid
    if supports_tools(tokenizer):
        messages, template_tools = list(prompt), tools
    elif forced is None:
        raise ValueError(
            "this model's chat template has no tool support, so it cannot choose to call tools "
            "(tool_choice='auto'): force a call with tool_choice='any' or a tool's name (the tools are then "
            "described in the system message and the call is constrained), or use a model whose chat "
            "template supports tools (Qwen2.5, Llama 3.1+, SmolLM3, Hermes, Mistral)"
        )
    else:
        messages, template_tools = describe_tools(inline_tool_history(prompt, fmt), tools), None
    constraint = None
    if forced is not None:
        grammar = lark_grammar(fmt.forced_grammar(tokenizer, forced, bool(parallel_tool_calls)))
        schemas = [fmt.call_schema(tool) for tool in forced]  # their $ref resolve, as in the grammar
        constraint = Constraint(tokenizer, grammar, vocab_size=vocab_size, name=_tools_label(forced), schemas=schemas)
    return OutputPlan(messages, template_tools, constraint, fmt, one_call=parallel_tool_calls is False)


def constrained_call(arguments: Mapping[str, Any]) -> bool:
    """Whether a call with these keyword ``arguments`` is decoded under a constraint: a
    ``response_format``, or ``tools`` with a forced ``tool_choice`` (see :func:`plan_output`)."""
    forced = bool(arguments.get("tools")) and forces_a_call(arguments.get("tool_choice"))
    return arguments.get("response_format") is not None or forced


def _no_call_plan(tokenizer: Any, messages: Sequence[Mapping[str, Any]]) -> OutputPlan:
    """``tool_choice="none"``: a text reply, never a call (OpenAI's meaning).

    The tools are not rendered and the reply is not parsed for calls. OpenAI still shows the
    tools to its model, but a small local model shown tools it may not call writes calls anyway,
    and Llama 3's call opens with a plain ``{`` that cannot be blocked without blocking JSON in
    text; vLLM has ``--exclude-tools-when-tool-choice-none`` for the same reason. Earlier calls
    and their results stay in the history (as text turns where the template cannot render them).
    """
    if supports_tools(tokenizer):
        return OutputPlan(list(messages))
    return OutputPlan(inline_tool_history(messages, tool_format(tokenizer)))


def out_of_time(result: Any, processor: Any) -> Any:
    """``result`` of a constrained reply the time bound closed early: ``finish_reason="time"``,
    and a ``RuntimeWarning`` that says what happened and what to change."""
    warnings.warn(
        f"{processor.constraint.name}: constrained decoding reached max_time={processor.max_time:g} s after "
        f"{processor.generated} tokens and closed the reply early, so a value may be cut short: give the call "
        "more time (max_time= / timeout=), fewer tokens to write, or a bigger model",
        RuntimeWarning,
        stacklevel=4,
    )
    return replace(result, finish_reason="time")


def check_tool_schemas(tools: Sequence[Mapping[str, Any]]) -> None:
    """Each tool's call compiles as a forced call compiles it (its parameters inside the call's
    schema, their ``$ref`` rebased), else ``ValueError`` naming the tool.

    Until 2026-12-07 only the parameters were compiled: a schema whose ``$ref`` did not resolve
    inside the call passed here and failed at call time (a reviewer)."""
    for tool in tools:
        name = tool["function"]["name"]
        try:
            check_grammar(lark_grammar(f"start: {lark_json(ToolFormat().call_schema(tool))}\n"), f"tool {name!r}")
        except GrammarError:
            raise
        except ValueError as error:  # llguidance refuses the schema before compiling it
            raise GrammarError(f"tool {name!r}: the grammar engine cannot compile its parameters ({error})") from error


def response_format_grammar(response_format: Mapping[str, Any]) -> str:
    """The grammar of an OpenAI-style ``response_format``.

    ``{"type": "json_object"}`` (JSON mode: any object) or ``{"type": "json_schema",
    "json_schema": {"name": ..., "schema": {...}}}``.
    """
    kind = response_format.get("type") if isinstance(response_format, Mapping) else None
    if kind == "json_object":
        return json_object_grammar()
    if kind == "json_schema":
        spec = response_format.get("json_schema") or {}
        schema = spec.get("schema") if isinstance(spec, Mapping) else None
        if not isinstance(schema, Mapping):
            raise ValueError("response_format: a json_schema needs {'json_schema': {'name': ..., 'schema': {...}}}")
        try:
            grammar = json_schema_grammar(schema)
        except ValueError as error:
            raise GrammarError(f"response_format: the grammar engine cannot compile the schema ({error})") from error
        return check_grammar(grammar, f"response_format {spec.get('name', 'schema')!r}")
    raise ValueError(
        f"response_format must be {{'type': 'json_object'}} or {{'type': 'json_schema', 'json_schema': {{...}}}}, "
        f"got {response_format!r}"
    )


def _tools_label(tools: Sequence[Mapping[str, Any]]) -> str:
    names = ", ".join(repr(tool["function"]["name"]) for tool in tools)
    return f"tool {names}" if len(tools) == 1 else f"tools {names}"

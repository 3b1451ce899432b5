"""LlamaIndex chat messages as the ``{"role", "content"}`` dicts a chat template reads, and back.

Text only: an image, audio or file block is a ``ValueError`` naming the message. Tool calls go
both ways: an assistant message's ``ToolCallBlock`` s (or OpenAI-style ``additional_kwargs``)
become the template's ``tool_calls``, and a reply's calls become ``ToolCallBlock`` s.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from llama_index.core.base.llms.types import ChatMessage, MessageRole, TextBlock, ToolCallBlock

from recall_core import RecallResult

__all__ = ["assistant_message", "role_name", "template_call", "to_chat_messages"]

#: Blocks the model reads nothing of, passed over: a thought, a ``CachePoint`` (a provider's cache mark;
#: refused as a non-text block until 2026-12-07).
CONTENT_FREE_BLOCKS = ("thinking", "cache")


def role_name(message: ChatMessage) -> str:
    return message.role.value if isinstance(message.role, MessageRole) else str(message.role)


def to_chat_messages(messages: Sequence[ChatMessage]) -> list[dict[str, Any]]:
    """LlamaIndex messages as ``{"role", "content"}`` dicts; text only, else ``ValueError`` naming the message.

    An assistant message's tool calls (``ToolCallBlock`` s, or OpenAI-style
    ``additional_kwargs["tool_calls"]``) and a tool message's ``tool_call_id`` go along in
    the keys chat templates read.
    """
    out: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        parts = []
        calls = []
        for block in message.blocks:
            if isinstance(block, TextBlock):
                parts.append(block.text)
            elif isinstance(block, ToolCallBlock):
                calls.append(template_call(block.tool_call_id, block.tool_name, block.tool_kwargs))
            elif getattr(block, "block_type", None) in CONTENT_FREE_BLOCKS:
                continue
            else:
                raise ValueError(
                    f"message {index} ({message.role.value}) has a {getattr(block, 'block_type', type(block).__name__)!r} "
                    "block: RecallLLM takes text only (the local model has no image, audio or file input)"
                )
        # text blocks joined as ``ChatMessage.content`` joins them (until 2026-12-07 with nothing between)
        item: dict[str, Any] = {"role": role_name(message), "content": "\n".join(parts)}
        for call in [] if calls else message.additional_kwargs.get("tool_calls") or []:  # OpenAI-style, other LLMs
            function = call.get("function", {}) if isinstance(call, dict) else {}
            if function.get("name"):
                calls.append(template_call(call.get("id"), function["name"], function.get("arguments", {})))
        if calls:
            item["tool_calls"] = calls
        if item["role"] == "tool" and message.additional_kwargs.get("tool_call_id"):
            item["tool_call_id"] = message.additional_kwargs["tool_call_id"]
        out.append(item)
    return out


def template_call(call_id: str | None, name: str, arguments: Any) -> dict[str, Any]:
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            pass
    return {"type": "function", "id": call_id, "function": {"name": name, "arguments": arguments}}


def assistant_message(text: str, result: RecallResult | None) -> ChatMessage:
    """The reply: its text, its calls as ``ToolCallBlock`` s, malformed calls in ``additional_kwargs``."""
    blocks: list[Any] = [TextBlock(text=text)] if text or result is None or not result.tool_calls else []
    extra: dict[str, Any] = {}
    if result is not None:
        blocks += [ToolCallBlock(tool_call_id=c.id, tool_name=c.name, tool_kwargs=c.arguments) for c in result.tool_calls]
        if result.tool_calls:  # where LlamaIndex's streamed structured output looks for calls (as OpenAI's LLM has them)
            extra["tool_calls"] = [template_call(c.id, c.name, c.arguments) for c in result.tool_calls]
        if result.invalid_tool_calls:
            extra["invalid_tool_calls"] = [
                {"id": c.id, "name": c.name, "arguments": c.arguments, "error": c.error} for c in result.invalid_tool_calls
            ]
    return ChatMessage(role=MessageRole.ASSISTANT, blocks=blocks, additional_kwargs=extra)

"""Agents on small models: a middleware that makes LangChain's ``create_agent`` call a tool.

A 135M model left to choose (``tool_choice="auto"``) answers in text and invents the tool's
result. :class:`ForceToolCallMiddleware` forces a call on the first model call of each user
turn (constrained decoding makes it a valid call to a bound tool), then leaves the model
free, so it answers from the tool's result instead of calling again::

    agent = create_agent(chat, tools=[get_weather], middleware=[ForceToolCallMiddleware()])

Forcing on every model call would loop (call, result, call...) until the recursion limit;
``calls=N`` forces the first N calls of a turn (several tools in a row).

Needs ``langchain`` (its ``agents`` package), besides ``langchain-core``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest
from langchain_core.messages import AIMessage, HumanMessage


class ForceToolCallMiddleware(AgentMiddleware):
    """Force ``create_agent``'s model to call a tool on the first ``calls`` model calls of a user turn.

    Args:
        tool: the tool to call (its name), or ``None`` for any bound tool (``tool_choice="any"``).
        calls: how many model calls of each user turn are forced (>= 1); the ones after are ``"auto"``.
    """

    def __init__(self, tool: str | None = None, *, calls: int = 1) -> None:
        super().__init__()
        if tool is not None and (not isinstance(tool, str) or not tool.strip()):
            raise ValueError(f"tool must be a tool's name or None (any tool), got {tool!r}")
        if isinstance(calls, bool) or not isinstance(calls, int) or calls < 1:
            raise ValueError(f"calls must be an int >= 1, got {calls!r}")
        self.tool = tool
        self.calls = calls

    def forced(self, request: ModelRequest) -> ModelRequest:
        """``request`` with ``tool_choice`` forced if this turn has made fewer than ``calls`` tool calls."""
        made = 0
        for message in reversed(request.messages):
            if isinstance(message, HumanMessage):
                break
            if isinstance(message, AIMessage) and message.tool_calls:
                made += 1
        if made >= self.calls or not request.tools:
            return request
        return request.override(tool_choice=self.tool or "any")

    def wrap_model_call(self, request: ModelRequest, handler: Callable[[ModelRequest], Any]) -> Any:
        return handler(self.forced(request))

    async def awrap_model_call(self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[Any]]) -> Any:
        return await handler(self.forced(request))

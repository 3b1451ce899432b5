"""A serving engine scripted reply by reply, for the served loop's tests that need no real engine."""

from __future__ import annotations

from typing import Any

from recall_core.serving import EngineClient
from recall_core.serving.client import Completion


class ScriptedEngine(EngineClient):
    """Answers each ``/completion`` with the next scripted :class:`Completion`; keeps every request's
    body in ``bodies``, with its ``prompt`` ids."""

    def __init__(self, *replies: Completion) -> None:
        super().__init__("http://127.0.0.1:1")
        self.replies = list(replies)
        self.bodies: list[dict[str, Any]] = []

    def complete(self, prompt, options, on_tokens=None):  # type: ignore[override]
        self.bodies.append({**options, "prompt": list(prompt)})
        reply = self.replies.pop(0)
        if on_tokens is not None:
            on_tokens(reply.tokens, reply.logprobs[: len(reply.tokens)])
        return reply

"""A serving engine scripted reply by reply, for the served loop's tests that need no real engine."""

from __future__ import annotations

from typing import Any

from recall_core.serving import EngineClient
from recall_core.serving.client import Completion


class ScriptedEngine(EngineClient):
    """Answers each ``/completion`` with the next scripted :class:`Completion`; keeps every request's
    body in ``bodies``, with its ``prompt`` ids (and the fields of :meth:`with_fields`). ``adapters``
    is what ``GET /lora-adapters`` lists."""

    def __init__(self, *replies: Completion, adapters: list[dict[str, Any]] | None = None) -> None:
        super().__init__("http://127.0.0.1:1")
        self.replies = list(replies)
        self.bodies: list[dict[str, Any]] = []
        self.adapters = list(adapters or [])

    def lora_adapters(self) -> list[dict[str, Any]]:
        return self.adapters

    def complete(self, prompt, options, on_tokens=None, until=None):  # type: ignore[override]
        self.bodies.append({**options, **self.fields, "prompt": list(prompt)})
        reply = self.replies.pop(0)
        if on_tokens is not None:
            on_tokens(reply.tokens, reply.logprobs[: len(reply.tokens)])
        return reply


def declining_engine(end_id: int) -> ScriptedEngine:
    """An engine whose one-token decision request does not ask (token 5), then replies with one
    token and ``end_id``: for tests where something other than the model places the recall."""
    decision = Completion(tokens=[5], stop_type="limit", logprobs=[{5: -0.1}])
    reply = Completion(tokens=[7, end_id], stop_type="eos", logprobs=[{7: -0.1}, {end_id: -0.1}])
    return ScriptedEngine(decision, reply)

"""HTTP client of a llama.cpp server's native completion API, in token ids.

Why the native ``/completion`` and not ``/v1/completions``: it takes the prompt as token ids
and answers with the ids it generated (``return_tokens``), the stop reason (``stop_type``:
``eos`` / ``limit`` / ``word``), per-token log-probabilities (``n_probs``) and, in
``timings``, how many prompt ids it read from its prefix cache (``cache_n``) and how many it
computed (``prompt_n``). The reply is streamed (server-sent events), so the first token is
known when it is made.

Every failure is an :class:`EngineError` that names the engine's address and what happened
(not reachable, no answer within the timeout, connection closed mid-request, an HTTP error
with the engine's message), raised within the timeout: a caller never hangs on a dead engine.
The client holds no state of a conversation, so an engine restarted at the same address is
used again by the next request.
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

__all__ = ["Completion", "EngineClient", "EngineError"]


class EngineError(RuntimeError):
    """The serving engine could not answer a request (down, hung, killed mid-request, or an error)."""


@dataclass
class Completion:
    """One ``/completion`` request's answer.

    Attributes:
        tokens: the ids generated, in order (an end-of-generation id included when it stopped on one).
        stop_type: ``"eos"`` (an end-of-generation id such as ``<|im_end|>`` or ``<recall>``),
            ``"limit"`` (``n_predict`` reached) or ``"word"`` (a stop string).
        stopping_word: the stop string that ended it (``"word"``).
        prompt_tokens: the prompt's length (``tokens_evaluated``).
        cached_tokens: prompt ids read from the engine's prefix cache (``timings.cache_n``).
        computed_tokens: prompt ids computed (``timings.prompt_n``).
        first_token_s: seconds from sending the request to the first generated id (``None``: none).
        logprobs: per generated id, ``{id: logprob}`` of the top candidates (with ``n_probs``).
        slot: the engine's slot that ran it.
    """

    tokens: list[int] = field(default_factory=list)
    stop_type: str = ""
    stopping_word: str = ""
    prompt_tokens: int = 0
    cached_tokens: int = 0
    computed_tokens: int = 0
    first_token_s: float | None = None
    logprobs: list[dict[int, float]] = field(default_factory=list)
    slot: int = -1


class EngineClient:
    """A thread-safe client of one llama.cpp server (``llama-server``, or xllamacpp's).

    Args:
        url: the server's base address, e.g. ``http://127.0.0.1:8080``.
        timeout: seconds to wait for any answer from the engine (the first byte, then each next
            piece of a streamed reply); a hung engine fails with :class:`EngineError` after it.
        connect_timeout: seconds to wait for the connection.
        max_connections: concurrent requests (give at least the engine's slots, so it batches them).
    """

    def __init__(self, url: str, *, timeout: float = 60.0, connect_timeout: float = 5.0, max_connections: int = 64) -> None:
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ValueError(f"url must be an http(s) address such as 'http://127.0.0.1:8080', got {url!r}")
        if not (isinstance(timeout, int | float) and timeout > 0):
            raise ValueError(f"timeout must be a number of seconds > 0, got {timeout!r}")
        self.url = url.rstrip("/")
        self.timeout = float(timeout)
        limits = httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections)
        self._http = httpx.Client(
            base_url=self.url, timeout=httpx.Timeout(self.timeout, connect=connect_timeout), limits=limits
        )
        self.fields: dict[str, Any] = {}  # sent with every /completion request (with_fields)

    def with_fields(self, **fields: Any) -> EngineClient:
        """A client of the same engine, on the same connections, that sends ``fields`` with every
        ``/completion`` request: ``lora=[{"id": 0, "scale": -1.0}]`` sets an adapter's scale."""
        other = copy.copy(self)
        other.fields = {**self.fields, **fields}
        return other

    def lora_adapters(self) -> list[dict[str, Any]]:
        """The engine's LoRA adapters (``GET /lora-adapters``): each one's ``id``, ``path`` and ``scale``."""
        return self._request(lambda: self._http.get("/lora-adapters").raise_for_status().json(), "GET /lora-adapters")

    def close(self) -> None:
        """Close the connections (the engine keeps running)."""
        self._http.close()

    def health(self) -> bool:
        """Does the engine answer ``/health`` with its model loaded?"""
        try:
            return self._http.get("/health", timeout=2.0).status_code == 200
        except httpx.HTTPError:
            return False

    def props(self) -> dict[str, Any]:
        """The engine's ``/props``: its slots (``total_slots``), context per slot, model path."""
        return self._request(lambda: self._http.get("/props").json(), "GET /props")

    def tokenize(self, text: str) -> list[int]:
        """The engine's own ids of ``text`` (special tokens parsed): to check a GGUF's vocabulary."""
        body = {"content": text, "parse_special": True}
        return self._request(lambda: self._http.post("/tokenize", json=body).json()["tokens"], "POST /tokenize")

    def complete(
        self,
        prompt: list[int],
        options: Mapping[str, Any],
        on_tokens: Callable[[list[int], list[dict[int, float]]], None] | None = None,
    ) -> Completion:
        """Generate from the token ids ``prompt`` with llama.cpp sampling ``options``.

        ``on_tokens`` is called with each piece of new ids as the engine streams them, and their
        top log-probabilities (with ``n_probs``; empty without).
        Raises :class:`EngineError` (never hangs past the timeout).
        """
        body = {**options, **self.fields, "prompt": list(prompt), "stream": True, "return_tokens": True,
                "cache_prompt": True}  # fmt: skip
        result = Completion()
        start = time.perf_counter()

        def run() -> Completion:
            with self._http.stream("POST", "/completion", json=body) as response:
                if response.status_code != 200:
                    response.read()
                    raise EngineError(f"the engine at {self.url} answered HTTP {response.status_code}: {response.text[:500]}")
                for line in response.iter_lines():
                    if not line.startswith("data: "):
                        continue
                    event = json.loads(line[6:])
                    if not isinstance(event, dict):
                        continue
                    if "error" in event:
                        raise EngineError(f"the engine at {self.url} failed the request: {event['error']}")
                    self._read_event(event, result, start, on_tokens)
                    if event.get("stop"):
                        return result
            raise EngineError(
                f"the engine at {self.url} closed the reply before it finished (killed or crashed mid-request?)"
            )

        return self._request(run, "POST /completion")

    @staticmethod
    def _read_event(event: Mapping[str, Any], result: Completion, start: float, on_tokens: Any) -> None:
        tokens = [int(t) for t in event.get("tokens") or []]
        logprobs = [{int(c["id"]): float(c["logprob"]) for c in step.get("top_logprobs") or [] if "id" in c}
                    for step in event.get("completion_probabilities") or []]  # fmt: skip
        result.logprobs.extend(logprobs)
        if tokens:
            if result.first_token_s is None:
                result.first_token_s = time.perf_counter() - start
            result.tokens.extend(tokens)
            if on_tokens is not None:
                on_tokens(tokens, logprobs)
        if event.get("stop"):
            timings = event.get("timings") or {}
            result.stop_type = str(event.get("stop_type", ""))
            result.stopping_word = str(event.get("stopping_word", ""))
            result.prompt_tokens = int(event.get("tokens_evaluated", 0))
            result.cached_tokens = int(timings.get("cache_n", 0))
            result.computed_tokens = int(timings.get("prompt_n", 0))
            result.slot = int(event.get("id_slot", -1))

    def _request(self, run: Callable[[], Any], what: str) -> Any:
        try:
            return run()
        except EngineError:
            raise
        except httpx.ConnectError as error:
            raise EngineError(f"the engine at {self.url} is not reachable ({what}): is it running? ({error})") from error
        except httpx.TimeoutException as error:
            raise EngineError(
                f"the engine at {self.url} gave no answer within {self.timeout:g}s ({what}): hung or overloaded"
            ) from error
        except (httpx.RemoteProtocolError, httpx.ReadError) as error:
            raise EngineError(
                f"the engine at {self.url} closed the connection mid-request ({what}): killed or crashed? ({error})"
            ) from error
        except (httpx.HTTPError, ValueError, KeyError) as error:
            raise EngineError(f"the engine at {self.url} failed {what}: {type(error).__name__}: {error}") from error

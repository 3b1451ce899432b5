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
import numbers
import socket
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from recall_core.serving.pieces import Pieces

__all__ = ["Completion", "EngineClient", "EngineError"]


class EngineError(RuntimeError):
    """The serving engine could not answer a request (down, hung, killed mid-request, or an error).

    ``hung``: it gave no answer within the client's timeout."""

    def __init__(self, message: str, hung: bool = False) -> None:
        super().__init__(message)
        self.hung = hung


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
        logprobs: per generated id, ``{id: logprob}`` of the top candidates and of the id itself
            (with ``n_probs``); empty for an id the engine gave no probability (one its stream left out).
        slot: the engine's slot that ran it.
        interrupted: the request was ended by the caller's ``until`` before the engine finished it.
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
    interrupted: bool = False


#: How often ``EngineClient.complete``'s watchdog asks the caller's ``until`` (seconds).
WATCH_INTERVAL = 0.02


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
        for name, value in (("timeout", timeout), ("connect_timeout", connect_timeout)):
            if isinstance(value, bool) or not (isinstance(value, numbers.Real) and 0 < value < float("inf")):
                raise ValueError(f"{name} must be a number of seconds > 0, got {value!r}")
        if isinstance(max_connections, bool) or not isinstance(max_connections, numbers.Integral) or max_connections < 1:
            raise ValueError(f"max_connections must be an int >= 1, got {max_connections!r}")
        self.url = url.rstrip("/")
        self.timeout = float(timeout)
        limits = httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections)
        self._http = httpx.Client(
            base_url=self.url, timeout=httpx.Timeout(self.timeout, connect=connect_timeout), limits=limits
        )
        self.fields: dict[str, Any] = {}  # sent with every /completion request (with_fields)
        self.pieces: Pieces | None = None  # the served vocabulary, to find the ids a stream leaves out

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
        # (an engine still loading answers 503 with an error body: read as props, its context window was
        # guessed and kept for good until 2026-12-07, a reviewer)
        return self._request(lambda: _object(self._http.get("/props").raise_for_status().json()), "GET /props")

    def tokenize(self, text: str) -> list[int]:
        """The engine's own ids of ``text`` (special tokens parsed): to check a GGUF's vocabulary."""
        body = {"content": text, "parse_special": True}
        return self._request(lambda: [int(t) for t in self._http.post("/tokenize", json=body).raise_for_status().json()["tokens"]],
                             "POST /tokenize")  # fmt: skip

    def with_pieces(self, pieces: Pieces | None) -> EngineClient:
        """A client of the same engine, on the same connections, that finds the ids the engine's stream
        leaves out (a token that ends mid-UTF-8-character) with ``pieces``, the served model's vocabulary."""
        other = copy.copy(self)
        other.pieces = pieces
        return other

    def complete(
        self,
        prompt: list[int],
        options: Mapping[str, Any],
        on_tokens: Callable[[list[int], list[dict[int, float]]], None] | None = None,
        until: Callable[[Completion], bool] | None = None,
    ) -> Completion:
        """Generate from the token ids ``prompt`` with llama.cpp sampling ``options``.

        ``on_tokens`` is called with each piece of new ids as the engine streams them, and their
        log-probabilities (with ``n_probs``; an empty mapping where the engine gave none).
        ``until`` is asked, from a watchdog thread every ``WATCH_INTERVAL`` seconds while the
        engine streams, with the answer so far: once it says ``True`` the connection is closed (the
        engine stops the request) and the answer so far is returned, ``interrupted``. It is how a
        deadline or a consumer that left ends a reply whose engine went silent: ``on_tokens`` runs
        only when ids come.
        With :meth:`with_pieces`, the ids the stream leaves out are put back where they were made
        (:mod:`recall_core.serving.pieces`); those the reply ends with are asked once more.
        Raises :class:`EngineError` (never hangs past the timeout).
        """
        body = {**options, **self.fields, "prompt": list(prompt), "stream": True, "return_tokens": True,
                "cache_prompt": True}  # fmt: skip
        if self.pieces is not None and not body.get("n_probs"):
            body["n_probs"] = 1  # the pieces' bytes come only with probabilities: ``content`` ends mid-character in U+FFFD
        result = Completion()
        reader = _Reader(result, time.perf_counter(), on_tokens, self.pieces, self.url)

        def run() -> Completion:
            with self._http.stream("POST", "/completion", json=body) as response, _Watchdog(response, result, until):
                try:
                    return read(response)
                except (httpx.HTTPError, EngineError, ValueError):
                    if result.interrupted:  # what the watchdog's close broke off: a line cut, the connection
                        return result
                    raise

        def read(response: httpx.Response) -> Completion:
            if response.status_code != 200:
                response.read()
                raise EngineError(f"the engine at {self.url} answered HTTP {response.status_code}: {response.text[:500]}")
            heard = time.perf_counter()  # the last event: lines that carry none (keep-alive comments) do not count
            for line in response.iter_lines():
                if line.startswith("error:"):  # llama.cpp's own event for a failed stream
                    raise EngineError(f"the engine at {self.url} failed the request: {line[6:].strip()[:500]}")
                if not line.startswith("data:"):
                    if line.strip() and not line.startswith((":", "event:", "id:", "retry:")):  # not SSE at all
                        raise EngineError(f"the engine at {self.url} answered with no event stream: {line[:500]}")
                    if time.perf_counter() - heard > self.timeout:
                        raise EngineError(f"the engine at {self.url} sent no event within {self.timeout:g}s "
                                          "(POST /completion): hung or overloaded", hung=True)  # fmt: skip
                    continue
                heard = time.perf_counter()
                event = json.loads(line[5:])  # "data:" and an optional space (SSE)
                if not isinstance(event, dict):
                    continue
                if "error" in event:
                    raise EngineError(f"the engine at {self.url} failed the request: {event['error']}")
                reader.read(event)
                if event.get("stop"):
                    return result
            if result.interrupted:
                return result
            raise EngineError(
                f"the engine at {self.url} closed the reply before it finished (killed or crashed mid-request?)"
            )

        try:
            self._request(run, "POST /completion")
            if (reader.pieces is not None and reader.predicted > len(result.tokens) and "grammar" not in body
                    and not result.interrupted):  # fmt: skip
                # The reply ended mid-character: its last ids were never sent. Asked again from the same
                # prefix (the engine's slot choice by similarity finds the slot that holds it; never pinned
                # by id_slot: pinned requests mixed users' replies, loop.py): the same ids when greedy. Not
                # under a grammar: the engine would start it again at this request.
                rest = {**body, "prompt": list(prompt) + result.tokens,
                        "n_predict": reader.predicted - len(result.tokens), "stream": False}  # fmt: skip
                answer = self._request(lambda: _object(self._http.post("/completion", json=rest).raise_for_status().json()),
                                       "POST /completion")  # fmt: skip
                tokens = _ids(answer.get("tokens"), self.url)[: rest["n_predict"]]
                reader.add(tokens, [{} for _ in tokens])
        except Exception as error:  # a consumer's criterion (serving/loop.py) stops the reply, streamed or
            error.completion = result  # type: ignore[attr-defined]  # asked again: what came before it is
            raise  # the request's record
        return result

    def _request(self, run: Callable[[], Any], what: str) -> Any:
        try:
            return run()
        except EngineError:
            raise
        except httpx.ConnectError as error:
            raise EngineError(f"the engine at {self.url} is not reachable ({what}): is it running? ({error})") from error
        except httpx.TimeoutException as error:
            raise EngineError(f"the engine at {self.url} gave no answer within {self.timeout:g}s ({what}): hung or "
                              "overloaded", hung=True) from error
        except (httpx.RemoteProtocolError, httpx.ReadError) as error:
            raise EngineError(
                f"the engine at {self.url} closed the connection mid-request ({what}): killed or crashed? ({error})"
            ) from error
        except (httpx.HTTPError, ValueError, KeyError) as error:
            raise EngineError(f"the engine at {self.url} failed {what}: {type(error).__name__}: {error}") from error


class _Watchdog:
    """While a streamed response is read: asks ``until(result)`` every ``WATCH_INTERVAL`` seconds and,
    once it says so, marks ``result`` interrupted and shuts the connection's socket down, which
    breaks off the reader's blocked read (a close from another thread would not wake it). Nothing is
    watched without ``until``."""

    def __init__(self, response: httpx.Response, result: Completion, until: Callable[[Completion], bool] | None) -> None:
        self.response, self.result, self.until = response, result, until
        self.done = threading.Event()
        self.lock = threading.Lock()  # no shutdown once the reader is done: the connection may be reused
        self.thread: threading.Thread | None = None

    def __enter__(self) -> _Watchdog:
        if self.until is not None:
            self.thread = threading.Thread(target=self._watch, name="recall-engine-watchdog", daemon=True)
            self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        with self.lock:
            self.done.set()
        if self.thread is not None:
            self.thread.join()

    def _watch(self) -> None:
        while not self.done.wait(WATCH_INTERVAL):
            if self.until(self.result):  # type: ignore[misc]
                with self.lock:
                    if not self.done.is_set():
                        self.result.interrupted = True
                        _shut(self.response)
                return


def _shut(response: httpx.Response) -> None:
    """Shut the socket under ``response`` down (both ways), which wakes a read blocked on it. Without
    a socket (a transport of your own: httpcore's, TLS and proxies included, always give one) the
    response is closed, which a blocked read sees only when it next wakes (the client's timeout)."""
    stream = response.extensions.get("network_stream")
    sock = stream.get_extra_info("socket") if stream is not None else None
    if isinstance(sock, socket.socket):
        try:
            sock.shutdown(socket.SHUT_RDWR)
            return
        except OSError:
            pass
    response.close()


def _object(answer: Any) -> dict[str, Any]:
    """An engine's JSON answer that must be an object (``ValueError``, made an ``EngineError``, if not)."""
    if not isinstance(answer, dict):
        raise ValueError(f"expected a JSON object, got {str(answer)[:200]}")
    return answer


def _ids(tokens: Any, url: str) -> list[int]:
    """An answer's ``tokens`` as ids, else :class:`EngineError`."""
    try:
        return [int(t) for t in tokens or []]
    except (TypeError, ValueError) as error:
        raise EngineError(f"the engine at {url} answered tokens recall does not read ({error}): {str(tokens)[:200]}") from None


class _Reader:
    """One streamed reply's events read into its :class:`Completion`; with ``pieces``, the ids the
    stream left out (no event for a token that ends mid-UTF-8-character) put back before the id
    that completed the character, with no log-probability (llama.cpp records none for them)."""

    def __init__(self, result: Completion, start: float, on_tokens: Any, pieces: Pieces | None, url: str = "") -> None:
        self.result, self.start, self.on_tokens, self.pieces, self.url = result, start, on_tokens, pieces, url
        self.known = b""  # the text of the ids known so far
        self.sent = b""  # the text the engine has sent so far
        self.predicted = 0  # the engine's count of the ids it made (tokens_predicted)

    def read(self, event: Mapping[str, Any]) -> None:
        """Read one server-sent event of ``/completion``; an event of another shape is an
        :class:`EngineError` (until 2026-12-07 a ``TypeError`` from deep inside: a reviewer)."""
        try:
            tokens = [int(t) for t in event.get("tokens") or []]
            steps = event.get("completion_probabilities") or []
            # The sampled id's own logprob is beside top_logprobs (n_probs 1 lists the most likely only).
            logprobs = [{**{int(c["id"]): float(c["logprob"]) for c in step.get("top_logprobs") or [] if "id" in c},
                         **({int(step["id"]): float(step["logprob"])} if "id" in step and "logprob" in step else {})}
                        for step in steps]  # fmt: skip
            text = (bytes(steps[0]["bytes"]) if len(steps) == 1 and "bytes" in steps[0]
                    else str(event.get("content") or "").encode())  # fmt: skip
            timings = event.get("timings") or {}
            ended = (str(event.get("stop_type", "")), str(event.get("stopping_word", "")),
                     int(event.get("tokens_evaluated") or 0), int(timings.get("cache_n") or 0),
                     int(timings.get("prompt_n") or 0), int(event.get("id_slot", -1)))  # fmt: skip
        except (TypeError, ValueError, AttributeError, KeyError) as error:
            raise EngineError(f"the engine at {self.url} sent an event of a shape recall does not read "
                              f"({type(error).__name__}: {error}): {str(event)[:300]}") from None  # fmt: skip
        logprobs = (logprobs + [{} for _ in tokens])[: len(tokens)]
        predicted = event.get("tokens_predicted")
        if isinstance(predicted, int):
            self.predicted = max(self.predicted, predicted)
        gap = self.predicted - len(self.result.tokens) - len(tokens)
        if tokens and gap > 0 and self.pieces is not None:
            whole, own = self.sent + text, self.pieces.of(tokens[:1])
            fits = whole.startswith(self.known) and whole.endswith(own) and len(whole) - len(own) >= len(self.known)
            lost = whole[len(self.known) : len(whole) - len(own)] if fits else None
            found = self.pieces.missing(gap, tokens[0], text, lost)
            tokens, logprobs = found + tokens, [{} for _ in found] + logprobs
        self.sent += text
        self.add(tokens, logprobs)
        if event.get("stop"):
            result = self.result
            result.stop_type, result.stopping_word, result.prompt_tokens, result.cached_tokens, \
                result.computed_tokens, result.slot = ended

    def add(self, tokens: list[int], logprobs: list[dict[int, float]]) -> None:
        """Take ``tokens`` (with their log-probabilities, one mapping each) as the reply's next ids."""
        if not tokens:
            return
        result = self.result
        if result.first_token_s is None:
            result.first_token_s = time.perf_counter() - self.start
        result.tokens.extend(tokens)
        result.logprobs.extend(logprobs)
        if self.pieces is not None:
            self.known += self.pieces.of(tokens)
        if self.on_tokens is not None:
            self.on_tokens(tokens, logprobs)

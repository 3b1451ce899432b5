"""The recall loop over a serving engine: search, then one request with the notes in place.

The in-process loop (:mod:`recall_core.decoding.loop`) injects the notes' embeddings into its
live KV cache at each ``<recall>``. On an engine the same thing is done with token ids:

* a ``<recall>`` in the prompt (``recall_policy="auto"``): search first, then send ONE request
  whose ids hold the notes block right after the marker (the block the loop injects:
  :func:`recall_core.decoding.notes.block_ids`); a marker where nothing is found is dropped,
  as the loop drops it;
* a ``<recall>`` the model writes (``"model"``): the GGUF makes ``<recall>`` an end-of-generation
  token (:mod:`recall_core.serving.gguf_export`), so the engine stops there; the loop searches
  with the last user message and the reply so far (:func:`recall_core.decoding.query.build_query`)
  and sends the continuation: prompt + reply so far + notes. The engine's prefix cache holds
  everything before the notes, so only the notes and what follows are computed
  (:attr:`ServedOutput.requests` has the engine's ``cache_n`` of each request).

The returned sequence is the in-process one: an injected block shows as ``<|memory_pad|>`` ids,
so traces, positions and usage read the same. What needs the model's internals is refused with
a ``ValueError`` that says so (:func:`check_served_config`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from recall_core.config import RecallConfig
from recall_core.decoding.abstain import NotesShown, abstention_opening
from recall_core.decoding.prompt_notes import TokenRecalls
from recall_core.decoding.query import QueryContext
from recall_core.decoding.triggers import below_threshold, recall_ruled_out
from recall_core.memory.text.questions import asks
from recall_core.serving.client import Completion, EngineClient
from recall_core.settings import config_fields
from recall_core.streaming import CancelCriteria
from recall_core.types import Memory, Recall

__all__ = ["ServedOutput", "check_served_config", "served_recall", "sampling_options"]

#: generate() options a served backend understands (others raise: they need the model in process).
SUPPORTED_OPTIONS = frozenset({"max_new_tokens", "do_sample", "temperature", "top_p", "top_k", "min_p",
                               "repetition_penalty", "max_time", "seed", "return_dict_in_generate"})  # fmt: skip


#: The largest seed llama.cpp takes (its 0xFFFFFFFF is "a random seed").
MAX_SEED = 2**32 - 2

#: llama.cpp's samplers in the order transformers applies them: the repetition penalty (a logits
#: processor), then temperature, top_k, top_p, min_p (TemperatureLogitsWarper first).
SAMPLERS = ("penalties", "temperature", "top_k", "top_p", "min_p")


@dataclass
class ServedOutput:
    """What the engine did for one generation (``RecallResult.output`` on a served backend).

    Attributes:
        requests: each ``/completion`` request's answer, in order (the first, then one per
            continuation after a recall), with the engine's ``cached_tokens`` and ``computed_tokens``.
        engine_ids: the ids the engine was given last (prompt, notes and reply so far), for
            checking that they are those the in-process loop would run.
        dropped: requests stopped at their first token and never shown: a weak "I don't know."
            after notes (``abstain_threshold``), asked again with its opening masked.
        decided: the requests that decided, before ``requests``, whether to recall
            (``recall_policy="ask"``; ``"model"``'s check of the abstention). The first of them
            read the conversation's prefix from the engine's cache: ``usage.cached_tokens`` is
            then its ``cached_tokens`` (unless the base model replied, ``base_replies``: the
            reply's own), and the reply's first request finds in the cache what the two share.
        stop_type: the engine's ``stop_type`` of the request that ended the reply (``"eos"``,
            ``"limit"``, ``"word"``); ``""`` when the client ended it (``max_time``, a stopping
            criterion, a stream's consumer that left).
    """

    requests: list[Completion] = field(default_factory=list)
    engine_ids: list[int] = field(default_factory=list)
    dropped: list[Completion] = field(default_factory=list)
    decided: list[Completion] = field(default_factory=list)
    stop_type: str = ""

    @property
    def first_token_s(self) -> float | None:
        """Seconds from the reply's first request to its first generated id (``decided`` not counted)."""
        return self.requests[0].first_token_s if self.requests else None


#: Why a served backend refuses ``RecallConfig.base_replies``: it has no adapter to take out.
BASE_REPLIES_SERVED = ("base_replies=True on a served backend needs the recall adapter served unapplied beside the "
                       "recall-tuned model, to take it out for the replies that read no notes: serve it with "
                       "EngineServer(model, lora='recall-adapter.gguf') or llama-server --lora-scaled "
                       "recall-adapter.gguf:0 (python -m recall_core.serving.gguf_export writes it), or give "
                       "ServedRecallGenerator(base_engine=) an engine serving the plain model")  # fmt: skip


class _Cancelled(Exception):
    """A stopping criterion said stop (a stream's consumer left): the reply ends here."""


def check_served_config(config: RecallConfig, memory: Memory | None) -> None:
    """Refuse, with the reason, what a served backend cannot do: it sees ids and sampled tokens only."""
    if config.inject_mode == "kv":
        raise ValueError("inject_mode='kv' splices keys and values into the model's own cache: it needs the "
                         "in-process backend; a served backend injects tokens (the engine's prefix cache "
                         "reuses what comes before them)")  # fmt: skip
    if memory is not None and config.query_mode == "hidden":
        raise ValueError("query_mode='hidden' searches with the model's hidden state at <recall>, which an engine "
                         "does not return: use query_mode='text' on a served backend")  # fmt: skip
    if memory is not None and config.recall_policy == "uncertainty":
        raise ValueError("recall_policy='uncertainty' reads the full next-token distribution before each token is "
                         "chosen, which an engine does not expose: use 'auto' or 'model' on a served backend")  # fmt: skip
    if memory is not None and config.abstain_contrast > 0:
        raise ValueError("abstain_contrast needs the next-token distribution with and without the notes, which an "
                         "engine does not return: use abstain_contrast=0 on a served backend")  # fmt: skip


#: GenerationConfig fields a served call leaves to the engine's model: its token ids (the GGUF's own).
CONFIG_TOKEN_IDS = frozenset({"bos_token_id", "eos_token_id", "pad_token_id", "decoder_start_token_id"})


def config_as_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` with their ``generation_config`` read as keywords, as transformers reads a call:
    the fields it sets (those that differ from a fresh ``GenerationConfig``) under the call's own
    keywords, which win. A field the engine cannot honour is then refused by :func:`sampling_options`
    like the keyword; the config's token ids are the served model's business."""
    config = options.get("generation_config")
    rest = {name: value for name, value in options.items() if name != "generation_config"}
    if config is None:
        return rest
    fields = {name: value for name, value in config_fields(config).items() if name not in CONFIG_TOKEN_IDS}
    return {**fields, **rest}


def sampling_options(options: Mapping[str, Any], max_new_tokens: int, context_window: int | None = None) -> dict[str, Any]:
    """``generate()`` options as llama.cpp's sampling fields, with transformers' defaults where unset
    (llama.cpp's own differ: top_k 40, min_p 0.05, temperature applied last, the repetition penalty
    over the last 64 ids), so both backends sample the same distribution. ``context_window``, the
    engine's slot, is how far back the repetition penalty looks (transformers: the whole sequence)."""
    unknown = sorted(name for name, value in options.items() if name not in SUPPORTED_OPTIONS and value is not None)
    if unknown:
        raise ValueError(f"{', '.join(unknown)}: not supported on a served backend (it takes "
                         f"{', '.join(sorted(SUPPORTED_OPTIONS))}); use the in-process backend")  # fmt: skip
    seed = options.get("seed")
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed <= MAX_SEED):
        raise ValueError(f"seed must be an int from 0 to {MAX_SEED} or None (llama.cpp takes {MAX_SEED + 1} as "
                         f"'a random seed'), got {seed!r}")  # fmt: skip
    # transformers applies its warpers in this order (llama.cpp's default puts temperature last,
    # which keeps other candidates under top_p / min_p).
    body: dict[str, Any] = {"n_predict": max_new_tokens, "repeat_penalty": float(options.get("repetition_penalty") or 1.0),
                            "typical_p": 1.0, "n_probs": 1, "samplers": list(SAMPLERS)}  # fmt: skip
    if context_window is not None:
        # transformers penalises every id of the sequence; llama.cpp the last repeat_last_n (64 by
        # default). Its -1 (the whole context) is refused by xllamacpp's checks, so the slot's size.
        body["repeat_last_n"] = int(context_window)
    if options.get("do_sample"):
        body.update(temperature=float(options.get("temperature") or 1.0), top_k=int(options.get("top_k") or 50) if
                    options.get("top_k") != 0 else 0, top_p=float(options.get("top_p") or 1.0),
                    min_p=float(options.get("min_p") or 0.0))  # fmt: skip
        if seed is not None:
            body["seed"] = seed
    else:  # greedy
        body.update(temperature=0.0, top_k=1, top_p=1.0, min_p=0.0)
    if options.get("max_time"):
        body["t_max_predict_ms"] = int(float(options["max_time"]) * 1000)
    return body


def served_recall(
    client: EngineClient,
    tokenizer: Any,
    prompt: Sequence[int],
    *,
    ids: tuple[int, int, frozenset[int]],
    memory: Memory | None,
    config: RecallConfig,
    options: Mapping[str, Any],
    max_new_tokens: int,
    prompt_query: str | None,
    streamer: Any = None,
    on_recall: Callable[[Recall], None] | None = None,
    criteria: Sequence[Any] = (),
    grammar: str | None = None,
    context_window: int | None = None,
    watch_time: bool = True,
) -> tuple[torch.LongTensor, list[Recall], int, ServedOutput]:
    """Generate from ``prompt`` ids on the engine, recalling at each ``<recall>``.

    ``ids`` is ``(recall_id, pad_id, boundary_ids)`` of the tokenizer; ``grammar`` (llama.cpp's
    ``"grammar"`` field: :func:`recall_core.structured.constrained.engine_grammar`) constrains
    the reply. ``options``' ``max_time`` ends the reply, as transformers' ``MaxTimeCriteria``
    does, after the first id that comes that many seconds after the call began (llama.cpp's own
    ``t_max_predict_ms`` waits for a newline). Ids that would not fit the engine's slot
    (``context_window``: the prompt with the notes) raise ``ValueError`` before they are sent.
    ``watch_time=False``: ``max_time`` is a bound the caller did not ask for (a constrained reply's),
    so an engine silent past it is reported as hung (:func:`_watched`), not cut as ``"time"``.
    Returns the sequence as
    the in-process loop returns it (pads where notes were injected), the trace, where the
    generated part begins, and the :class:`ServedOutput`.
    """
    check_served_config(config, memory)
    recall_id, pad_id, boundaries = ids
    context = QueryContext(tokenizer, config, recall_id, pad_id, boundaries, prompt_query, None)
    run = _Run(client, tokenizer, memory, config, context, on_recall, context_window)
    run.budget(len(prompt), max_new_tokens)
    body = sampling_options(options, max_new_tokens, context_window)  # stop strings: cut by a criterion
    if grammar is not None:
        body["grammar"] = grammar
    sequence, engine = run.prompt(list(prompt))
    generated_start = len(sequence)
    if streamer is not None:
        streamer.put(torch.tensor([prompt]))  # as generate() does: a skip_prompt streamer drops it
    left = max_new_tokens
    # A <recall> the engine sampled below the policy's threshold was taken back: masked for the rest
    # of the reply, as the in-process loop masks a declined one (RecallConfig.own_recall_threshold()).
    declined = False
    states = prompt_query is not None and not asks(prompt_query)  # RecallConfig.own_recall_on_statements
    abstained = False  # the last request opened with a weak abstention: one token without it
    # Not under a grammar: the engine starts a grammar again at each request.
    abstention = abstention_opening(tokenizer) if config.abstain_threshold > 0 and grammar is None else None
    limit = float(options["max_time"]) if options.get("max_time") else None
    deadline = None if limit is None else time.perf_counter() + limit
    until = _watched(deadline if watch_time else None, criteria, lambda: len(sequence) > generated_start)
    try:
        while left > 0:
            # The model's own <recall> is never sampled without a memory, past max_recalls, nor under
            # "explicit" / "off" (as the in-process loop's _mask_control_tokens).
            masked = (declined or recall_ruled_out(config, memory, run.attempts)
                      or math.isinf(config.own_recall_threshold(run.notes.found, states)))  # fmt: skip
            bias = [[pad_id, False]] + ([[recall_id, False]] if masked else [])
            if abstained:
                bias.append([abstention, False])
            if context_window is not None and len(engine) >= context_window:
                _overflow(engine, sequence, pad_id, context_window)
            take = _on_tokens(sequence, streamer, criteria, deadline)
            if run.notes.take_fresh() and abstention is not None:  # the first token after notes is checked
                take = _checking(take, abstention, config.abstain_threshold)
            try:
                reply = client.complete(engine, {**body, "n_predict": 1 if abstained else left, "logit_bias": bias},
                                        on_tokens=take, until=until)  # fmt: skip
            except _Abstained as weak:  # never shown; asked again, that one step without it
                run.output.dropped.append(weak.reply)
                abstained = True
                continue
            run.output.requests.append(reply)
            run.output.stop_type = reply.stop_type
            # A continuation is not pinned to the slot its prefix ran on (``id_slot``): under concurrent
            # users, pinned continuations came back with another user's name or town in the reply, and
            # garbled greedy replies (a reviewer, 2026-12-07: 2 to 4 of 48 replies with 4 or 8 slots,
            # none of 112 unpinned). The engine's slot choice by prompt similarity (``-sps``) finds it.
            engine = engine + reply.tokens
            left -= len(reply.tokens)
            if reply.interrupted:  # the deadline passed or the consumer left while the engine was silent
                _stops(sequence, criteria)  # a consumer's CancelCriteria records that it fired
                run.output.stop_type = ""
                break
            if abstained:  # the one token in the masked id's place is written: go on as before
                abstained = False
                if reply.stop_type == "limit" and reply.tokens:
                    continue
            if reply.stop_type != "eos" or not reply.tokens or reply.tokens[-1] != recall_id:
                break
            run.output.stop_type = ""  # a continuation (or nothing, if no time is left) ends the reply
            if memory is not None and _below_threshold(reply, recall_id, config.own_recall_threshold(run.notes.found, states)):
                # As the in-process loop masks it: the engine sampled <recall> (an end-of-generation
                # id there), so it is taken back and the reply is asked again from that step
                # without it. A streamer has seen the <recall> id (a special token: no text).
                engine.pop()
                sequence.pop()
                left += 1
                declined = True
                continue
            run.budget(len(engine), left)
            added = run.recall(sequence, reply_start=generated_start)
            engine = engine + added
    except _Cancelled as cancelled:  # a stop string, max_time or a consumer that left: the request so far
        partial = getattr(cancelled, "completion", None)  # stays recorded (until 2026-12-07 a reply cut at a
        if partial is not None and partial.tokens:  # stop string had no request, first-token time, engine ids)
            run.output.requests.append(partial)
            engine = engine + partial.tokens
        run.output.stop_type = ""
    finally:
        if streamer is not None:
            streamer.end()
    run.output.engine_ids = engine
    return torch.tensor([sequence], dtype=torch.long), run.trace, generated_start, run.output


def _overflow(engine: list[int], sequence: list[int], pad_id: int, context_window: int) -> None:
    """Raise the ``ValueError`` of ids the engine's slot cannot hold (it would answer HTTP 400)."""
    notes = sequence.count(pad_id)
    raise ValueError(f"the prompt and reply so far ({len(engine) - notes} ids) with the notes ({notes} ids) make "
                     f"{len(engine)} ids, more than the engine's slot holds (context_window {context_window}, "
                     "with room for one new id): shorten the prompt, or lower RecallConfig.max_memory_tokens "
                     "or the engine's slots for a longer context each")  # fmt: skip


def _below_threshold(reply: Completion, token: int, threshold: float) -> bool:
    """Whether the engine gave ``token``, the last of ``reply`` (the ``<recall>`` it stopped at, or
    the abstention's opening of a first token), less than ``threshold`` (its probability before
    the samplers, from ``n_probs``; unknown counts as enough)."""
    if not reply.logprobs or len(reply.logprobs) < len(reply.tokens):
        return False
    log_p = reply.logprobs[len(reply.tokens) - 1].get(token)
    return log_p is not None and below_threshold(log_p, threshold)


class _Abstained(Exception):
    """The reply opened with the abstention under ``abstain_threshold``: the request is dropped
    before anything is shown (``reply``: what the engine had sent, for the trace)."""

    def __init__(self, reply: Completion) -> None:
        super().__init__("weak abstention")
        self.reply = reply


OnTokens = Callable[[list[int], Sequence[Mapping[int, float]]], None]


def _checking(take: OnTokens, abstention: int, threshold: float) -> OnTokens:
    """``take``, after the first token is checked as the in-process loop checks it
    (:mod:`recall_core.decoding.abstain`): the abstention's opening with less than ``threshold``
    (from ``n_probs``; unknown counts as enough) raises :class:`_Abstained` instead."""
    checked = False

    def check(tokens: list[int], logprobs: Sequence[Mapping[int, float]] = ()) -> None:
        nonlocal checked
        if not checked and tokens:
            checked = True
            first = Completion(tokens=tokens[:1], stop_type="abstained", logprobs=[dict(p) for p in logprobs[:1]])
            if tokens[0] == abstention and _below_threshold(first, abstention, threshold):
                raise _Abstained(first)
        take(tokens, logprobs)

    return check


def _on_tokens(sequence: list[int], streamer: Any, criteria: Sequence[Any], deadline: float | None = None) -> OnTokens:
    """What each streamed piece does: extend the sequence, feed the streamer, check the criteria
    and the ``max_time`` ``deadline`` (a ``time.perf_counter()``; leaving the stream stops the request)."""

    def take(tokens: list[int], logprobs: Sequence[Mapping[int, float]] = ()) -> None:
        for token in tokens:
            sequence.append(token)
            if streamer is not None:
                streamer.put(torch.tensor([token]))
        if _stops(sequence, criteria) or (deadline is not None and time.perf_counter() >= deadline):
            raise _Cancelled

    return take


def _stops(sequence: list[int], criteria: Sequence[Any]) -> bool:
    """Whether one of the stopping ``criteria`` ends the reply ``sequence`` (each is asked, as
    transformers asks them: a :class:`CancelCriteria` records that it fired)."""
    return bool(criteria) and any(bool(c(torch.tensor([sequence]), None).all()) for c in criteria)


def _watched(deadline: float | None, criteria: Sequence[Any], generated: Callable[[], bool]) -> Callable[[Completion], bool] | None:
    """What ends a request while its engine is silent (``EngineClient.complete``'s ``until``), which
    the criteria, asked only when ids come, cannot: the ``max_time`` ``deadline`` once the reply has
    an id (this request's, or ``generated()``: an earlier request's, before a recall; transformers
    gives the first id that comes, and an engine silent from a reply's start fails as hung after
    the client's timeout), and a stream's consumer that left (its :class:`CancelCriteria`).
    Other criteria are asked when ids come. ``None`` when there is nothing to watch."""
    cancels = [c.event for c in criteria if isinstance(c, CancelCriteria)]
    if deadline is None and not cancels:
        return None

    def until(reply: Completion) -> bool:
        late = deadline is not None and time.perf_counter() >= deadline and (bool(reply.tokens) or generated())
        return late or any(event.is_set() for event in cancels)

    return until


class _Run(TokenRecalls):
    """One generation's recall state: the recalls in ids (attempts, the trace) and the engine's answers."""

    def __init__(self, client: EngineClient, tokenizer: Any, memory: Memory | None, config: RecallConfig,
                 context: QueryContext, on_recall: Callable[[Recall], None] | None,
                 window: int | None = None) -> None:  # fmt: skip
        super().__init__(tokenizer, memory, config, context, self._record, room=self._room)
        self.client, self.on_recall = client, on_recall
        self.window = window  # the engine's slot
        self.taken, self.left = 0, 0  # positions the engine holds before a recall, and the reply's budget left
        self.trace: list[Recall] = []
        self.output = ServedOutput()
        self.notes = NotesShown()  # the abstention check and RecallConfig.own_recall_threshold follow it

    def budget(self, taken: int, left: int) -> None:
        """What the next recall's notes must fit beside: ``taken`` positions (a prompt's notes
        among them: not counted again as pending), and ``left`` new tokens to come."""
        self.taken, self.left, self.pending = taken, left, 0

    def _room(self, positions: int) -> bool:
        """Whether notes of ``positions`` fit in the engine's slot with all the reply may still take
        (``NO_ROOM`` otherwise, as in process: until 2026-12-07 they were sent, and the engine cut the
        reply short at its slot's end; a reviewer)."""
        return self.window is None or self.taken + positions + self.left <= self.window

    def _record(self, recall: Recall) -> None:
        self.trace.append(recall)
        self.notes.record(recall)
        if self.on_recall is not None:
            self.on_recall(recall)

"""`ServedRecallGenerator`: a :class:`~recall_core.RecallGenerator` whose tokens come from an engine.

Why: a chatbot served to many users runs an engine (llama.cpp's server here) that batches
requests and caches prefixes. This generator keeps everything recall does before and after
decoding (the chat template with ``<recall>`` where the policy puts it, the memory search, the
notes, the trace, stop strings, tool-call parsing, streaming) and sends the decoding to the
engine in token ids (:mod:`recall_core.serving.loop`). The adapters take it as ``generator=``::

    gen = ServedRecallGenerator("http://127.0.0.1:8080", memory=store.for_user("ada"))
    llm = ChatRecall(generator=gen)          # or llamaindex_recall.RecallLLM(generator=gen)

It holds no model and no conversation state, so it is safe to share between threads and
processes (N stateless clients, M engine replicas: docs/serving.md).
"""

from __future__ import annotations

import copy
import itertools
import numbers
import time
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import Any

import torch

from recall_core.config import RecallConfig, checked_config
from recall_core.decoding.abstain import abstention_ids
from recall_core.decoding.ask import Decision, ReplyReader
from recall_core.generator import _UNSET, Prompt, RecallGenerator
from recall_core.serving.client import Completion, EngineClient, EngineError
from recall_core.serving.loop import (
    BASE_REPLIES_SERVED,
    ServedOutput,
    config_as_options,
    sampling_options,
    served_recall,
)
from recall_core.serving.pieces import Pieces
from recall_core.settings import generator_defaults
from recall_core.streaming import was_cancelled
from recall_core.structured.constrained import CONSTRAINED_MAX_TIME, engine_grammar
from recall_core.structured.outputs import OutputPlan
from recall_core.tokens import MEMORY_PAD_TOKEN, RECALL_TOKEN, tokenizer_info
from recall_core.types import Memory, Recall, RecallResult, check_memory

__all__ = ["ServedRecallGenerator"]

#: The key of _result's options that carries the engine's stop_type to _finish_reason.
_ENGINE_STOP = "engine_stop_type"


@dataclass
class _Decided:
    """What the running generate() call's first pass sent (:meth:`ServedRecallGenerator._first_pass`),
    and whether the reply then went to the base model (``base_replies``)."""

    requests: list[Completion] = field(default_factory=list)
    base_reply: bool = False


#: The running generate() call's :class:`_Decided`, per call: a context variable, so threads sharing
#: the generator (and a stream's worker) keep their own.
_DECIDED: ContextVar[_Decided | None] = ContextVar("recall_served_decided", default=None)


class ServedRecallGenerator(RecallGenerator):
    """Generate with recall on a llama.cpp server (``/completion`` in token ids).

    Args:
        engine: the engine's address (``"http://127.0.0.1:8080"``) or an :class:`EngineClient`.
        tokenizer: the served model's Hugging Face tokenizer (default: the recall-tuned default
            model's, which ``python -m recall_core.serving.gguf_export`` writes as GGUF). It must
            hold ``<recall>`` and ``<|memory_pad|>`` with the GGUF's ids.
        memory, config, generation_defaults: as :class:`~recall_core.RecallGenerator`'s.
        timeout: seconds an engine may stay silent before a call fails with
            :class:`~recall_core.serving.client.EngineError`.
        context_window: positions per engine slot (default: asked of the engine's ``/props``).
        model_name: the name traces and adapters show.
        base_lora: for ``RecallConfig.base_replies``: the id of the engine's LoRA adapter that is
            the recall adapter, served unapplied beside the recall-tuned model
            (``EngineServer(..., lora=...)``, ``llama-server --lora-scaled F:0``).
            A reply that reads no notes is sent with it at scale -1, which takes it out: the base
            model's reply (an adapter not at scale 0 is refused). Default: the engine's only adapter;
            with none or several, ``base_replies`` is refused with a ``ValueError`` that says what
            to serve. The engine clears a slot's cache when a request names other adapter scales
            (every request names them here), so a statement's base reply and the next turn
            prefill the conversation again.
        base_engine: for ``RecallConfig.base_replies``, instead of ``base_lora``: the address (or
            client) of an engine serving the base model itself (``plain.f16.gguf``). Each engine
            keeps its own prefix cache; it costs the base model's memory on the engine side.
    """

    def __init__(
        self,
        engine: str | EngineClient,
        tokenizer: Any = None,
        memory: Memory | None = None,
        config: RecallConfig | None = None,
        generation_defaults: Mapping[str, Any] | None = None,
        *,
        timeout: float = 60.0,
        context_window: int | None = None,
        model_name: str = "served",
        base_lora: int | None = None,
        base_engine: str | EngineClient | None = None,
    ) -> None:
        if tokenizer is None:
            tokenizer = _default_tokenizer()
        vocab = tokenizer.get_vocab()
        if RECALL_TOKEN not in vocab or MEMORY_PAD_TOKEN not in vocab:
            raise ValueError(f"the tokenizer has no {RECALL_TOKEN} / {MEMORY_PAD_TOKEN}: serve a model that has "
                             "them (the recall-tuned default, or a model saved after add_recall_tokens)")  # fmt: skip
        self.client = engine if isinstance(engine, EngineClient) else EngineClient(engine, timeout=timeout)
        self.model = None
        self.model_name = model_name
        self.tokenizer = tokenizer
        check_memory(memory)
        self.memory = memory
        self.query_head = None
        self.config = checked_config(config) or RecallConfig()
        self.generation_defaults = generator_defaults(generation_defaults)
        try:  # and those an engine cannot honour (no_repeat_ngram_size, max_length, a bad seed)
            sampling_options(self._generation_kwargs({}, None)[0], 1)
        except ValueError as error:
            raise ValueError(f"generation_defaults: {error}") from None
        if context_window is not None and (isinstance(context_window, bool)
                                           or not isinstance(context_window, numbers.Integral) or context_window < 2):  # fmt: skip
            raise ValueError(f"context_window must be an int >= 2 (tokens a slot holds) or None, got {context_window!r}")
        self._context_window = context_window
        if base_lora is not None and (isinstance(base_lora, bool) or not isinstance(base_lora, int) or base_lora < 0):
            raise ValueError(f"base_lora must be an adapter id (an int >= 0) or None, got {base_lora!r}")
        if base_lora is not None and base_engine is not None:
            raise ValueError("give base_lora or base_engine, not both: the base model is one or the other")
        self.base_lora = base_lora
        self.base_engine = (EngineClient(base_engine, timeout=timeout) if isinstance(base_engine, str)
                            else base_engine)  # fmt: skip
        self._base: RecallGenerator | None = None
        self._listed: list[dict[str, Any]] | None = None  # the engine's LoRA adapters, asked once (_adapters)
        self._pieces: Pieces | None = None  # the vocabulary's bytes, made once (_engine)
        recall_id, pad_id = vocab[RECALL_TOKEN], vocab[MEMORY_PAD_TOKEN]
        self._ids = (recall_id, pad_id, tokenizer_info(tokenizer, recall_id, pad_id).boundary_ids)

    @property
    def served(self) -> bool:
        """True: decoding runs on an engine (the adapters keep no KV-cache sessions for it)."""
        return True

    @property
    def device(self) -> torch.device:
        return torch.device("cpu")

    @property
    def eos_token_ids(self) -> set[int]:
        return {self.tokenizer.eos_token_id} - {None}

    @property
    def context_window(self) -> int:
        if self._context_window is None:
            props = self.client.props()
            settings = props.get("default_generation_settings") or {}
            n_ctx = settings.get("n_ctx") if isinstance(settings, dict) else None
            n_ctx = n_ctx or props.get("n_ctx")
            if isinstance(n_ctx, bool) or not isinstance(n_ctx, int) or n_ctx < 1:
                # never a guess kept for good (until 2026-12-07 a missing one was 2048: a reviewer)
                how = ("serve the base model on an engine whose /props says it" if self.model_name.endswith("(base)")
                       else "pass ServedRecallGenerator(context_window=)")  # (a base_engine's is its own: a reviewer)
                raise EngineError(f"the engine at {self.client.url} does not say its context window in /props "
                                  f"(n_ctx: {n_ctx!r}): {how}")  # fmt: skip
            self._context_window = n_ctx
        return self._context_window

    @property
    def vocab_size(self) -> int:
        return len(self.tokenizer)

    def kv_precompute(self) -> Any:
        raise ValueError("inject_mode='kv' blocks need the model in process: a served backend injects tokens")

    def check_base_replies(self) -> None:
        """Refuse ``RecallConfig.base_replies`` when no base model is served: no ``base_engine``, and
        no recall adapter on the engine to take out (``ValueError``; asked of the engine once)."""
        self.base_generator()

    def base_generator(self) -> RecallGenerator:
        """This generator on the base model: on :attr:`base_engine` when given; else every request
        sets the engine's adapter :attr:`base_lora` (loaded at scale 0 beside the merged model) to -1:
        the base model's weights. Nothing else changes.

        Raises:
            ValueError: the engine lists no such adapter (or several, and ``base_lora`` is not given),
                or it is not at scale 0.
        """
        if self._base is None and self.base_engine is not None:
            self._base = self._as_base(self.base_engine)
        if self._base is None:
            adapters = self._adapters()
            ids = [int(adapter["id"]) for adapter in adapters]
            chosen = self.base_lora if self.base_lora is not None else ids[0] if len(ids) == 1 else None
            if chosen is None or chosen not in ids:
                raise ValueError(BASE_REPLIES_SERVED + f" (the engine at {self.client.url} lists "
                                 f"{[(a.get('id'), a.get('path')) for a in adapters] or 'none'}"
                                 + ("; pass base_lora=ID)" if len(ids) > 1 else ")"))  # fmt: skip
            loaded = float(next(a for a in adapters if int(a["id"]) == chosen).get("scale", 0.0))
            if loaded != 0.0:
                # At 1 it is either a plain model with the adapter applied or the merged model with the
                # adapter twice: nothing the engine says tells them apart, so neither is guessed.
                raise ValueError(f"base_lora: the engine's adapter {chosen} is at scale {loaded:g}; base_replies "
                                 "needs the recall adapter loaded at scale 0 beside the merged recall-tuned "
                                 "model (llama-server --lora-scaled recall-adapter.gguf:0)")  # fmt: skip
            # -1 takes the merged adapter out; the others as the engine has them.
            scales = [{"id": int(a["id"]), "scale": float(a.get("scale", 0.0)) - (int(a["id"]) == chosen)}
                      for a in adapters]  # fmt: skip
            self._base = self._as_base(self.client.with_fields(lora=scales))
        return self._base

    def _engine(self) -> EngineClient:
        """The client the tuned model's requests go through: on an engine with LoRA adapters, every
        request names their scales. llama.cpp checks whether a slot's cached keys and values were
        computed with other adapter scales only for a request that names them, so without this a
        tuned reply after a base reply (adapter at -1) would reuse that reply's cache."""
        if self._pieces is None:  # to put back the ids the engine's stream leaves out (mid-UTF-8-character)
            self._pieces = Pieces.of_tokenizer(self.tokenizer)
        client = self.client.with_pieces(self._pieces)
        try:
            adapters = self._adapters()
        except EngineError as error:  # an engine without the endpoint, or down (its next request says so): asked again
            if error.hung:  # the call fails now, not after a second timeout (until 2026-12-07: a reviewer)
                raise
            return client
        if not adapters:
            return client
        return client.with_fields(lora=[{"id": int(a["id"]), "scale": float(a.get("scale", 0.0))} for a in adapters])

    def _adapters(self) -> list[dict[str, Any]]:
        """The engine's LoRA adapters (``GET /lora-adapters``), asked once."""
        if self._listed is None:
            self._listed = self.client.lora_adapters()
        return self._listed

    def _as_base(self, client: EngineClient) -> ServedRecallGenerator:
        base = copy.copy(self)
        # No adapters listed: its requests are sent with the client's own fields, not the tuned ones'.
        base.client, base.base_engine, base._base, base._listed = client, None, None, []
        if client.url != self.client.url:  # another engine: its own context, asked when needed
            base._context_window = None
        base.config = self.config.replace(base_replies=False)
        base.model_name = f"{self.model_name} (base)"
        return base

    def generate(self, prompt: Prompt, **kwargs: Any) -> RecallResult:
        """:meth:`RecallGenerator.generate` on the engine (it takes the same arguments).
        ``RecallResult.output`` is the :class:`~recall_core.serving.loop.ServedOutput`; the requests
        that decided whether to recall are in its ``decided``, and ``usage.cached_tokens`` counts the
        conversation's prefix the first request of the call found in the engine's cache (the base
        model's reply, under ``base_replies``, counts its own)."""
        decided = _Decided()
        token = _DECIDED.set(decided)
        try:
            result = super().generate(prompt, **kwargs)
        finally:
            _DECIDED.reset(token)
        if not decided.requests or not isinstance(result.output, ServedOutput):
            return result
        result.output.decided[:0] = decided.requests
        if decided.base_reply:  # the base model's reply computed its own prompt: its usage is its own
            return result
        return replace(result, usage=replace(result.usage, cached_tokens=decided.requests[0].cached_tokens))

    def _base_reply(self, prompt: Prompt, config: RecallConfig, kwargs: dict[str, Any]) -> RecallResult:
        decided = _DECIDED.get()
        if decided is not None:
            decided.base_reply = True
        return super()._base_reply(prompt, config, kwargs)

    def generate_ids(
        self,
        input_ids: torch.LongTensor,
        *,
        past_key_values: Any = None,
        position_ids: torch.LongTensor | None = None,
        plan: OutputPlan | None = None,
        recall_query: str | None = None,
        memory: Memory | None = _UNSET,
        config: RecallConfig | None = None,
        stop: str | Sequence[str] | None = None,
        on_recall: Callable[[Recall], None] | None = None,
        streamer: Any = None,
        stopping_criteria: Sequence[Any] | None = None,
        **generation_kwargs: Any,
    ) -> RecallResult:
        """:meth:`RecallGenerator.generate_ids` on the engine. ``RecallResult.output`` is the
        :class:`~recall_core.serving.loop.ServedOutput` (the engine's answers, its cached tokens)."""
        if past_key_values is not None or position_ids is not None:
            raise ValueError("a served backend keeps no KV cache in process: the engine's prefix cache is the "
                             "session (send the whole conversation; past_key_values/position_ids are not taken)")  # fmt: skip
        config = config or self.config
        memory = self.memory if memory is _UNSET else memory
        plan = plan or OutputPlan(None)
        kwargs, stops = self._generation_kwargs(generation_kwargs, stop)
        stops = [] if plan.constraint is not None else stops  # a constrained reply is never cut, as in process
        kwargs = config_as_options(kwargs)  # an engine takes fields, not a GenerationConfig
        max_new = int(kwargs.pop("max_new_tokens", None) or 256)
        grammar = None
        # The caller's own max_time (the call's, the defaults', a generation config's) is watched while the engine
        # is silent; a constrained reply's bound is not: an engine silent past it is hung, not "time" (a reviewer).
        watch_time = plan.constraint is None or bool(kwargs.get("max_time"))
        if plan.constraint is not None:  # a forced tool call or a response_format: the engine's own llguidance
            grammar = engine_grammar(plan.constraint.grammar)
            kwargs["max_time"] = kwargs.get("max_time") or CONSTRAINED_MAX_TIME
        started = time.perf_counter()
        sequences, trace, start, output = served_recall(
            self._engine(), self.tokenizer, input_ids[0].tolist(), ids=self._ids, memory=memory, config=config,
            options=kwargs, max_new_tokens=max_new, prompt_query=recall_query, streamer=streamer, on_recall=on_recall,
            # stop strings cut here, as in process: sent to the engine, it held back the text of a stop string's
            # start, and the ids rebuilt from the text were wrong after a split character (a reviewer, 2026-12-07)
            criteria=[*self._stopping_criteria(stops), *(stopping_criteria or [])], grammar=grammar,
            context_window=self.context_window, watch_time=watch_time,
        )  # fmt: skip
        done = _Output(sequences, trace, start)
        # How the reply ended, for _finish_reason: the limits asked for, and the engine's own stop
        asked = {"max_new_tokens": max_new, "max_time": kwargs.get("max_time"), _ENGINE_STOP: output.stop_type}
        result = self._result(input_ids, done, stops, asked, plan, elapsed=time.perf_counter() - started,  # type: ignore[arg-type]
                              cancelled=was_cancelled(stopping_criteria))  # fmt: skip
        cached = output.requests[0].cached_tokens if output.requests else 0
        return replace(result, output=output, usage=replace(result.usage, cached_tokens=cached))

    def _wants_output(self, kwargs: Mapping[str, Any]) -> bool:
        return True

    def _finish_reason(
        self, kwargs: Mapping[str, Any], new_ids: list[int], generated: int, length: int, elapsed: float, hit_stop: bool,
        cancelled: bool = False,
    ) -> str:
        """As in process (``max_time`` from the seconds the call took); a reply the engine cut at the
        end of its slot's context (``stop_type`` ``"limit"`` before ``max_new_tokens``) is ``"length"``,
        as llama.cpp's own OpenAI API says (until 2026-12-06 it was ``"stop"``)."""
        reason = super()._finish_reason(kwargs, new_ids, generated, length, elapsed, hit_stop, cancelled)
        if reason == "stop" and not hit_stop and kwargs.get(_ENGINE_STOP) == "limit":
            return "length"
        return reason

    def _first_pass(self, ids: torch.LongTensor, config: RecallConfig) -> tuple[Decision, Any]:
        """``"ask"``'s decision from a one-token greedy request with its probability (``n_probs``);
        the engine's prefix cache then holds the prompt for the call (nothing to hand over here).

        ``ask_on_abstention``: when that token is the abstention's first or a declined ``<recall>``,
        one greedy request as long as the abstention, ``<recall>`` masked, says whether the reply
        without memory would be ``"I don't know."`` (as the in-process pass reads it teacher-forced).
        With ``ask_after_openers``, whatever that token, one greedy request of ``GIVES_UP_TOKENS``
        tokens says whether its text gives up, at once or after short openers
        (:func:`recall_core.decoding.abstain.gives_up`), as the in-process pass reads it. With
        ``ask_on_refusal`` alone, when that token can open the abstention or a refusal, one greedy
        request of ``REFUSAL_TOKENS`` tokens says whether its text opens with either.
        """
        recall_id, pad_id, _ = self._ids
        prompt = ids[0].tolist()
        reply = self._decide(prompt, {**sampling_options({"do_sample": False}, 1), "logit_bias": [[pad_id, False]]})
        log_p = reply.logprobs[0].get(recall_id) if reply.tokens and reply.logprobs else None
        first = reply.tokens[0] if reply.tokens else None
        decision = Decision.of(first, log_p, recall_id, config.recall_threshold)
        abstention = abstention_ids(self.tokenizer) if config.ask_on_abstention else ()
        if decision.asked or not abstention or first is None:
            return decision, None
        reader = ReplyReader.wanted(self.tokenizer, self.eos_token_ids, config)  # room for it: _abstention_checked
        if reader is not None:
            # As the in-process pass reads it, but an engine cannot be stopped on the text, so all
            # the reader's ids are asked for; past openers whatever the first token, else only when
            # it can open what the reader looks for (<recall> masked, it may be another).
            if not reader.openers and first != recall_id and reader.verdict([first]) is False:
                return decision, None
            length = reader.limit
        elif first in (abstention[0], recall_id):
            length = len(abstention)
        else:
            return decision, None
        without = self._decide(prompt, {**sampling_options({"do_sample": False}, length),
                                        "logit_bias": [[pad_id, False], [recall_id, False]]}).tokens  # fmt: skip
        if reader is not None:
            gave_up = reader.verdict(self._reply(without)[:length]) is True
        else:
            gave_up = tuple(without[:length]) == abstention
        return (decision.upon_abstention() if gave_up else decision), None

    def _decide(self, prompt: list[int], options: dict[str, Any]) -> Completion:
        """One request of the first pass, kept for the call's ``ServedOutput.decided``."""
        reply = self._engine().complete(prompt, options)
        decided = _DECIDED.get()
        if decided is not None:
            decided.requests.append(reply)
        return reply

    def _reply(self, tokens: Sequence[int]) -> list[int]:
        """``tokens`` up to the first that ends a reply (an engine may go on past it)."""
        ends = self.eos_token_ids
        return list(itertools.takewhile(lambda token: token not in ends, tokens))


class _Output:
    """The three things :meth:`RecallGenerator._result` reads of a generation's output."""

    def __init__(self, sequences: torch.LongTensor, recalls: list[Recall], generated_start: int) -> None:
        self.sequences, self.recalls, self.generated_start = sequences, recalls, generated_start


def _default_tokenizer() -> Any:
    from transformers import AutoTokenizer

    from recall_core.models.loading import tuned_model_dir

    folder = tuned_model_dir()
    if folder is None:
        raise ValueError("no recall-tuned default model here: pass the served model's tokenizer=")
    return AutoTokenizer.from_pretrained(folder)

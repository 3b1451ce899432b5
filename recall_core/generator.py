"""`RecallGenerator`: the friendly face of the recall loop.

It turns a string or chat messages into ids, checks the arguments, runs
``model.generate(custom_generate=recall_generate, ...)`` and returns a
:class:`RecallResult` (new text, full sequences, recall trace, token usage).
``stream()`` and ``astream()`` yield the same text in pieces (see :mod:`recall_core.streaming`).
Generation options are read by :mod:`recall_core.settings`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import torch
from transformers import StoppingCriteria

from recall_core.config import RecallConfig, checked_config
from recall_core.decoding.abstain import abstention_ids
from recall_core.decoding.ask import (
    Decision,
    ReplyReader,
    checks_abstention,
    first_pass,
    is_statement,
    opening_marker,
    placed_result,
    read_limit,
    reads_text,
    shared_cache,
    statement_config,
    traced_as,
    with_memory_search,
    without_marker,
)
from recall_core.decoding.budget import trained_positions
from recall_core.decoding.hf_compat import CACHE_KEY
from recall_core.decoding.loop import recall_generate
from recall_core.kv.cache import cache_length
from recall_core.kv.memories import KVPrecompute
from recall_core.models.base import base_model_of
from recall_core.models.loading import load_model
from recall_core.models.query_head import RecallQueryHead, saved_query_head
from recall_core.prompt import chat_prompt_ids, check_prompt, last_user_text
from recall_core.results import ReplyResults, id_set
from recall_core.settings import (
    call_options,
    check_call_objects,
    check_model_inputs,
    generate_keywords,
    generation_option_names,
    generator_defaults,
    reply_limits,
    stop_strings,
)
from recall_core.streaming import AsyncRecallStream, RecallStream, TokenTextStreamer, was_cancelled
from recall_core.structured.constrained import CONSTRAINED_MAX_TIME, ClosingLimit
from recall_core.structured.outputs import OutputPlan, constrained_call, out_of_time, plan_output
from recall_core.tokens import MEMORY_PAD_TOKEN, RECALL_TOKEN, recall_token_ids
from recall_core.types import Memory, Recall, RecallResult, check_memory

__all__ = ["AsyncRecallStream", "Prompt", "RecallGenerator", "RecallStream", "TokenTextStreamer"]

Prompt = str | Sequence[Mapping[str, Any]]
_UNSET: Any = object()


class RecallGenerator(ReplyResults):
    """Generate with recall from a model, its tokenizer and (optionally) a memory.

    Example::

        gen = RecallGenerator.from_pretrained(memory=store.for_user("ada"))
        result = gen.generate([{"role": "user", "content": "What is my dog called?"}])
        print(result.text, result.recalls)

    Args:
        model: a causal LM with the recall tokens (see :func:`recall_core.load_model`).
        tokenizer: its tokenizer.
        memory: default memory searched at ``<recall>``; each call may pass another.
        config: default :class:`RecallConfig`; each call may pass another.
        generation_defaults: generate() keyword arguments used unless a call overrides them
            (default: greedy, 256 new tokens), read like a call's (:mod:`recall_core.settings`).
        query_head: a :class:`~recall_core.models.query_head.RecallQueryHead` trained for this model:
            ``query_mode="hidden"`` searches with it. Default: the head saved for the model's
            weights, looked for at the first ``query_mode="hidden"`` call, beside the adapter
            :func:`recall_core.load_model` merged or in the folder the weights came from
            (:func:`~recall_core.models.query_head.saved_query_head`; the recall-tuned default
            ships one). A head trained for another model is refused (``ValueError``).
        base_model: the model ``model`` was recall-tuned from, with the same tokenizer:
            ``RecallConfig.base_replies`` has it write the replies that read no notes. Default:
            the one :func:`recall_core.load_model` recorded on ``model``, loaded when first needed
            (:mod:`recall_core.models.base`).
    """

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        memory: Memory | None = None,
        config: RecallConfig | None = None,
        generation_defaults: Mapping[str, Any] | None = None,
        query_head: RecallQueryHead | None = None,
        base_model: Any = None,
    ) -> None:
        if MEMORY_PAD_TOKEN not in tokenizer.get_vocab():
            from recall_core.tokens import add_recall_tokens

            add_recall_tokens(model, tokenizer)
        self.model = model
        self.tokenizer = tokenizer
        check_memory(memory)
        self.memory = memory
        if query_head is not None:
            query_head.check(model)
        self.query_head = query_head
        self._head_looked_for = query_head is not None  # the saved head is looked for once, when first needed
        self.config = checked_config(config) or RecallConfig()
        self._base_model = base_model
        self._base: RecallGenerator | None = None  # made at the first reply that reads no notes
        self.generation_defaults = generator_defaults(generation_defaults)

    @classmethod
    def from_pretrained(
        cls,
        name_or_path: str | None = None,
        *,
        memory: Memory | None = None,
        config: RecallConfig | None = None,
        device: str | None = None,
        dtype: str | torch.dtype | None = None,
        **model_kwargs: Any,
    ) -> RecallGenerator:
        """Load a model with :func:`recall_core.load_model` (``None``: the embedded default), with
        the query head saved for its weights if there is one (:func:`~recall_core.models.query_head.saved_query_head`):
        with ``adapter=`` given, the head saved beside the adapter (``recall train-head --out``), else
        the one in the model's folder. Loaded now, so that a head for other weights fails here."""
        model, tokenizer = load_model(name_or_path, device=device, dtype=dtype, **model_kwargs)
        return cls(model, tokenizer, memory=memory, config=config, query_head=saved_query_head(model))

    def _query_head_for(self, config: RecallConfig) -> RecallQueryHead | None:
        """The query head a call runs with: the one given, else, for ``query_mode="hidden"``, the
        one saved for the model's weights (looked for once: most calls never need it)."""
        if self.query_head is None and not self._head_looked_for and config.query_mode == "hidden":
            self._head_looked_for = True
            self.query_head = saved_query_head(self.model)
        return self.query_head

    def kv_precompute(self) -> KVPrecompute:
        """What computes this generator's ``inject_mode="kv"`` blocks at write time (its model,
        tokenizer and config): ``MemoryWriter(store, precompute_kv=generator)`` calls this."""
        return KVPrecompute.of(self)

    # ------------------------------------------------------------------ prompts
    @property
    def context_window(self) -> int:
        """How many positions the model was trained on (its config's, else its tokenizer's bound)."""
        trained = trained_positions(self.model.config)
        return trained if trained is not None else int(getattr(self.tokenizer, "model_max_length", 2048))

    @property
    def vocab_size(self) -> int:
        """Width of the model's logits (what a constraint masks)."""
        output = self.model.get_output_embeddings()
        return int(output.weight.shape[0]) if output is not None else len(self.tokenizer)

    def encode(
        self, prompt: Prompt, *, config: RecallConfig | None = None, tools: Sequence[Mapping[str, Any]] | None = None
    ) -> torch.LongTensor:
        """Ids ``[1, L]`` of a string prompt (as is) or chat messages (chat template with ``tools``, recall policy)."""
        config = checked_config(config) or self.config
        if isinstance(prompt, str):
            if not prompt.replace(RECALL_TOKEN, "").strip():  # a marker alone (a text adapter's) is no prompt
                raise ValueError("prompt is empty: give some text or chat messages")
            ids = list(self.tokenizer(prompt).input_ids)
        elif isinstance(prompt, Sequence):
            ids = chat_prompt_ids(
                self.tokenizer, prompt, config.recall_policy, config.recall_position, config.system_prompt, tools=tools
            )
        else:
            raise ValueError(f"prompt must be a string or a list of chat messages, got {type(prompt).__name__}")
        if not ids:
            raise ValueError("prompt is empty after tokenization")
        if len(ids) >= self.context_window:
            raise ValueError(
                f"prompt is {len(ids)} tokens, longer than the model's context window of {self.context_window} "
                "(it must leave room for at least one new token): shorten it"
            )
        return torch.tensor([ids], dtype=torch.long, device=self.device)

    @property
    def device(self) -> torch.device:
        """Where prompt ids go (the model's device; a served backend's are on the CPU)."""
        return self.model.device

    @property
    def eos_token_ids(self) -> set[int]:
        """The ids that end a reply (the model's generation config's ``eos_token_id``)."""
        return id_set(self.model.generation_config.eos_token_id)

    # ------------------------------------------------------------------ generate
    def generate(
        self,
        prompt: Prompt,
        *,
        memory: Memory | None = _UNSET,
        config: RecallConfig | None = None,
        stop: str | Sequence[str] | None = None,
        on_recall: Callable[[Recall], None] | None = None,
        streamer: Any = None,
        stopping_criteria: Sequence[StoppingCriteria] | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        tool_choice: Any = None,
        response_format: Mapping[str, Any] | None = None,
        parallel_tool_calls: bool | None = None,
        **generation_kwargs: Any,
    ) -> RecallResult:
        """Generate a reply with recall.

        Args:
            prompt: a string (used as is) or chat messages (``[{"role", "content"}]``,
                rendered with the tokenizer's chat template and the recall policy).
            memory: overrides the generator's memory for this call (``None``: no memory).
            config: overrides the generator's :class:`RecallConfig` for this call.
            stop: stop strings (with any ``stop_strings=``); generation stops at the first one
                and it is cut from ``text``. A constrained reply (a forced tool call, a
                ``response_format``) is not cut: its JSON would break.
            on_recall: called with each :class:`Recall` as it happens.
            streamer: a transformers streamer that receives the new tokens.
            stopping_criteria: extra transformers stopping criteria.
            tools: OpenAI-style tool dicts, rendered by the chat template; the reply's calls
                are parsed into ``tool_calls`` (see :mod:`recall_core.structured.outputs`).
            tool_choice: ``"auto"`` (default), ``"none"``, ``"any"`` / ``"required"`` or a tool's
                name; a forced choice is enforced by constrained decoding.
            response_format: ``{"type": "json_object"}`` or ``{"type": "json_schema",
                "json_schema": {"name", "schema"}}``: the reply is constrained to it.
            parallel_tool_calls: ``True``: the reply may make several calls; ``False``: one at most
                (the first it makes); ``None`` (default): a forced choice makes one, a model's
                own choice as many as it writes.
            **generation_kwargs: any ``generate()`` argument (``max_new_tokens``,
                ``do_sample``, ``temperature``, ``top_p``, ``top_k``, ``min_p``,
                ``repetition_penalty``, ``stop_strings``...), plus the aliases ``max_tokens``
                and ``timeout`` (``max_time``). ``temperature`` 0 decodes greedily; above 0 it
                samples unless ``do_sample=False`` is given. Unknown names raise, and so do
                options that leave recall's one decoding path, greedy or sampled, on the KV cache,
                from token ids (``ValueError`` naming them: ``use_cache=False``, ``inputs_embeds``,
                beams, contrastive search, DoLa, assisted generation, token healing:
                :data:`recall_core.settings.ONE_PATH`).

        Returns:
            A :class:`RecallResult`. With ``return_dict_in_generate=True`` its ``output`` holds
            the :class:`~recall_core.RecallGenerateOutput` (scores, attentions, cache...; after a
            recall in the reply its ``step_positions`` say which token of ``sequences`` each
            score belongs to: the notes' pads have none).
        """
        check_prompt(prompt)
        check_call_objects(streamer, stopping_criteria, tools)
        memory = self.memory if memory is _UNSET else memory
        check_memory(memory)
        question = None if isinstance(prompt, str) else last_user_text(prompt)
        base = checked_config(config) or self.config
        reply_kwargs: dict[str, Any] = {}  # what a base model's reply is given (base_replies only)
        if base.base_replies:
            self.check_base_replies()
            reply_kwargs = {"stop": stop, "streamer": streamer, "stopping_criteria": stopping_criteria, "tools": tools,
                            "tool_choice": tool_choice, "response_format": response_format,
                            "parallel_tool_calls": parallel_tool_calls, **generation_kwargs}  # fmt: skip
            if memory is None and not isinstance(prompt, str):
                return self._base_reply(prompt, base, reply_kwargs)
        config = statement_config(base, question if memory is not None else None)
        plan = self.plan(prompt, tools=tools, tool_choice=tool_choice, response_format=response_format,
                         parallel_tool_calls=parallel_tool_calls)  # fmt: skip
        statement = is_statement(base, config)  # rendered as "auto" renders it, less the marker
        ids = self.encode(plan.prompt, config=base if statement else config, tools=plan.template_tools)
        if statement:
            ids = without_marker(ids, recall_token_ids(self.model, self.tokenizer)[0])
        cache = None
        placed = None  # why the engine asked where the model did not ("abstention", "names", "score")
        chat_with_memory = memory is not None and not isinstance(prompt, str)
        if config.recall_policy == "ask" and chat_with_memory:
            # The model decides on the prompt as "model" renders it (a statement: as "auto" does,
            # unmarked); the call then runs as "auto" or without recall, from what that pass
            # computed (recall_core.decoding.ask).
            decision, cache = self._first_pass(ids, self._abstention_checked(config, plan, ids.shape[1]))
            decision = with_memory_search(decision, question, memory, config)
            if not decision.asked and base.base_replies:
                return self._base_reply(prompt, base, reply_kwargs)
            config, placed = decision.config(config), decision.placed
            if decision.asked or not statement:  # a statement not asked goes on from the ids it was decided on
                asked = self.encode(plan.prompt, config=config, tools=plan.template_tools)
                cache = shared_cache(cache, ids, asked) if cache is not None else None
                ids = asked
        elif config.recall_policy == "model" and chat_with_memory:
            # A reply that would open with "I don't know." without looking, or whose question names
            # what the memory says, opens with <recall> instead; the rest is the model's
            # (recall_core.decoding.ask.opening_marker). Without the abstention's check no pass is run.
            checked = self._abstention_checked(config, plan, ids.shape[1])
            decision = Decision.unread()
            if checked.ask_on_abstention:
                decision, cache = self._first_pass(ids, checked)
            decision = with_memory_search(decision, question, memory, config)
            ids, placed = opening_marker(ids, decision, recall_token_ids(self.model, self.tokenizer)[0])
        if cache is not None and self._own_cache_asked(generation_kwargs):
            cache = None  # generate() takes a cache or a cache_implementation, not both: the pass is run again
        if placed is not None:
            on_recall = traced_as(on_recall, placed)
        result = self.generate_ids(
            ids, past_key_values=cache, plan=plan, memory=memory, config=config, stop=stop, on_recall=on_recall,
            streamer=streamer, stopping_criteria=stopping_criteria, recall_query=question, **generation_kwargs,
        )  # fmt: skip
        if cache is not None:  # computed by this call's first pass, not read from a session's cache
            result = replace(result, usage=replace(result.usage, cached_tokens=0))
        return placed_result(result, placed) if placed is not None else result

    def _base_reply(self, prompt: Prompt, config: RecallConfig, kwargs: dict[str, Any]) -> RecallResult:
        """``RecallConfig.base_replies``: the base model's reply to ``prompt`` with no memory, as this
        generator's :meth:`generate` on that model gives it under ``config``; nothing was recalled, so
        no recall is traced (a prompt's marker that found no memory is not shown either)."""
        result = self.base_generator().generate(prompt, memory=None, config=config.replace(base_replies=False), **kwargs)
        return replace(result, recalls=[])

    def check_base_replies(self) -> None:
        """Refuse ``RecallConfig.base_replies`` where it cannot be honoured (a served backend: ``ValueError``);
        in process the base model is found when a reply first needs it (:meth:`base_generator`)."""

    def base_generator(self) -> RecallGenerator:
        """A generator over the base model this one's was recall-tuned from (``RecallConfig.base_replies``),
        made once; its generation defaults are this one's.

        Raises:
            ValueError: no base model is known (pass ``base_model=``), or its vocabulary is not this tokenizer's.
        """
        if self._base is None:
            model = self._base_model if self._base_model is not None else base_model_of(self.model)
            if model is None:
                raise ValueError("base_replies=True needs the base model the recall-tuned one was made from: load "
                                 "the model with recall_core.load_model (the default, or adapter=), or pass "
                                 "RecallGenerator(base_model=...)")  # fmt: skip
            width = model.get_output_embeddings().weight.shape[0]
            if width != self.vocab_size:
                raise ValueError(f"base_model has {width} output ids, this model {self.vocab_size}: it must share "
                                 "this model's tokenizer (with the recall tokens)")  # fmt: skip
            self._base = RecallGenerator(model, self.tokenizer, config=self.config.replace(base_replies=False),
                                         generation_defaults=self.generation_defaults)  # fmt: skip
        return self._base

    def _own_cache_asked(self, generation_kwargs: Mapping[str, Any]) -> bool:
        """Whether the call asks generate() for a cache of its own (``cache_implementation``), so
        that the first pass's cache cannot go on into it."""
        return self.options_for(generation_kwargs).get("cache_implementation") is not None

    def _abstention_checked(self, config: RecallConfig, plan: OutputPlan, length: int) -> RecallConfig:
        """``config`` for the first pass (``"ask"``, ``"model"``): ``ask_on_abstention`` off where the reply cannot be
        the abstention (a constrained reply: tools, ``response_format``) or where the abstention's
        ids would not fit after the prompt's ``length`` tokens in the context window;
        ``ask_after_openers`` and ``ask_on_refusal`` off where the ids read as text would not (:func:`reads_text`)."""
        checked = checks_abstention(config, abstention_ids(self.tokenizer), plan.constraint is not None, length,
                                    self.context_window)  # fmt: skip
        if checked and read_limit(config) and not reads_text(config, length, self.context_window):
            # no room to read the reply as text: the abstention at its start only
            return config.replace(ask_after_openers=False, ask_on_refusal=False)
        return config if checked or not config.ask_on_abstention else config.replace(ask_on_abstention=False)

    def _first_pass(self, ids: torch.LongTensor, config: RecallConfig) -> tuple[Decision, Any]:
        """The first pass's decision on ``ids`` (``"ask"``, ``"model"``) and its cache (``None``: nothing to reuse)."""
        recall_id, pad_id = recall_token_ids(self.model, self.tokenizer)
        abstention = abstention_ids(self.tokenizer) if config.ask_on_abstention else ()
        reader = ReplyReader.wanted(self.tokenizer, self.eos_token_ids, config)
        return first_pass(self.model, ids, recall_id, pad_id, config.recall_threshold, abstention, reader)

    def plan(self, prompt: Prompt, **outputs: Any) -> OutputPlan:
        """How a call with ``tools`` / ``tool_choice`` / ``response_format`` / ``parallel_tool_calls``
        renders its prompt, constrains its decoding and reads its reply (:mod:`recall_core.structured.outputs`)."""
        return plan_output(self.tokenizer, self.vocab_size, prompt, **outputs)

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
        stopping_criteria: Sequence[StoppingCriteria] | None = None,
        **generation_kwargs: Any,
    ) -> RecallResult:
        """:meth:`generate` from ids already made, optionally continuing a cache.

        Args:
            input_ids: ``[1, L]`` prompt ids (``<recall>`` ids mark where to recall).
            past_key_values: a ``DynamicCache`` that holds the keys and values of the first
                ids (a :class:`~recall_core.RecallSession` 's). Only the ids after it are run,
                and only their ``<recall>`` markers are recalled at; the cache grows in place.
            position_ids: ``[1, L]`` positions of the ids, when they are not ``0..L-1``.
            plan: the call's :meth:`plan` (tools, structured output), if it has one.
            recall_query: what the prompt's markers search with (a chat's last user message).
            The other arguments are :meth:`generate` 's.

        Returns:
            A :class:`RecallResult`; ``usage.cached_tokens`` is how many prompt ids the cache held.
        """
        check_model_inputs(input_ids, position_ids, generation_kwargs.get("attention_mask"), past_key_values,
                           self.vocab_size)  # fmt: skip
        config = checked_config(config) or self.config
        memory = self.memory if memory is _UNSET else memory
        check_memory(memory)
        check_call_objects(streamer, stopping_criteria, None, on_recall)  # on_recall: not only at the first recall
        plan = plan or OutputPlan(None)
        kwargs, stop_strings = self._generation_kwargs(generation_kwargs, stop)
        processor = None
        if plan.constraint is not None:
            # never cut a constrained reply: a stop string inside it broke the call (an instance's
            # stop=["\n"] made every forced call invalid; a reviewer, 2026-12-07)
            stop_strings = []
            budget, max_time = reply_limits(kwargs, input_ids.shape[1])
            processor = self._constrain(plan, memory, budget, max_time or CONSTRAINED_MAX_TIME)
            kwargs["logits_processor"] = [*(kwargs.get("logits_processor") or []), processor]
        keep_output = self._wants_output(kwargs)
        criteria = self._stopping_criteria(stop_strings)
        criteria.extend(stopping_criteria or [])
        if processor is not None:  # the processor closes the JSON by max_time; this bounds the closing
            criteria.append(ClosingLimit(processor))
        config_given = kwargs.get("generation_config")
        if "use_cache" not in kwargs and (config_given is None or config_given.use_cache is not False):
            # A model saved with use_cache=False (gradient-checkpointed training) is not the caller
            # asking for it: recall decodes on the cache (settings.ONE_PATH refuses the caller's False).
            kwargs["use_cache"] = True
        cached = cache_length(past_key_values)
        if past_key_values is not None:
            kwargs[CACHE_KEY] = past_key_values
        if position_ids is not None:
            kwargs["position_ids"] = position_ids
        started = time.perf_counter()
        output = self.model.generate(
            input_ids,
            custom_generate=recall_generate,
            memory=memory,
            recall_config=config,
            recall_tokenizer=self.tokenizer,
            recall_streamer=streamer,
            recall_callback=on_recall,
            recall_query=recall_query,
            recall_query_head=self._query_head_for(config),
            stopping_criteria=criteria,
            # The output object reports the trace and where the generated tokens start.
            **generate_keywords({**kwargs, "return_dict_in_generate": True}, cache_given=past_key_values is not None),
        )
        result = self._result(input_ids, output, stop_strings, kwargs, plan, cached, time.perf_counter() - started,
                              cancelled=was_cancelled(stopping_criteria))  # fmt: skip
        if processor is not None and processor.out_of_time:
            result = out_of_time(result, processor)
        return replace(result, output=output) if keep_output else result

    def generate_batch(self, prompts: Sequence[Prompt], **kwargs: Any) -> list[RecallResult]:
        """One :meth:`generate` per prompt: each row gets its own recalls, nothing is shared."""
        # Any iterable of prompts (as before 2026-12-07: a reviewer); not a string (it ran one prompt per
        # character until 2026-12-07: a reviewer) nor one conversation.
        listed = list(prompts) if isinstance(prompts, Iterable) and not isinstance(prompts, (str, bytes, Mapping)) else None
        if listed is None or (listed and isinstance(listed[0], Mapping)):
            raise ValueError(f"generate_batch() takes a list of prompts (strings or conversations), got a "
                             f"{type(prompts).__name__}; for one prompt or one conversation (a list of messages), "
                             "use generate()")  # fmt: skip
        return [self.generate(prompt, **kwargs) for prompt in listed]

    def stream(self, prompt: Prompt, **kwargs: Any) -> RecallStream:
        """Like :meth:`generate`, but returns a :class:`RecallStream` of text pieces.

        Joining the pieces gives exactly ``generate(...).text``; the stream's ``result``
        holds the full :class:`RecallResult` once it is exhausted.
        """
        return RecallStream(self.generate, self.tokenizer, prompt, kwargs, self.call_stop_strings(kwargs))

    def astream(self, prompt: Prompt, **kwargs: Any) -> AsyncRecallStream:
        """:meth:`stream` for ``async for``: awaiting a piece never blocks the event loop."""
        return AsyncRecallStream(self.generate, self.tokenizer, prompt, kwargs, self.call_stop_strings(kwargs))

    def call_stop_strings(self, arguments: Mapping[str, Any]) -> list[str]:
        """Every stop string a call with these keyword ``arguments`` cuts its text at: ``stop``,
        ``stop_strings``, a ``generation_config``'s and :attr:`generation_defaults`' (checked); none
        where the reply is constrained (a forced tool call, a ``response_format``)."""
        if constrained_call(arguments):  # checked all the same: a session asks before it evicts
            stop_strings(arguments.get("stop"), arguments.get("stop_strings"))
            return []
        given = {k: v for k, v in arguments.items() if k in generation_option_names() or k == "generation_config"}
        return self._generation_kwargs(given, arguments.get("stop"))[1]

    # ------------------------------------------------------------------ helpers
    def _constrain(self, plan: OutputPlan, memory: Memory | None, max_new_tokens: int | None, max_time: float) -> Any:
        """The plan's logits processor for one call: ``<recall>`` and injected pads are not text;
        ``<recall>`` stays allowed while there is a memory to search; the end of the budget closes the JSON."""
        vocab = self.tokenizer.get_vocab()
        recall_id, pad_id = vocab[RECALL_TOKEN], vocab[MEMORY_PAD_TOKEN]
        assert plan.constraint is not None
        return plan.constraint.logits_processor(
            allow_ids=[recall_id] if memory is not None else [], skip_ids=[recall_id, pad_id], pad_ids=[pad_id],
            max_new_tokens=max_new_tokens, tail=plan.tail, max_time=max_time,
        )  # fmt: skip

    def _generation_kwargs(
        self, given: Mapping[str, Any], stop: str | Sequence[str] | None
    ) -> tuple[dict[str, Any], list[str]]:
        """The call's options over the defaults (:func:`~recall_core.settings.call_options`), and the stop strings."""
        kwargs = self.options_for(given)
        return kwargs, stop_strings(stop, kwargs.pop("stop_strings", None))

    def options_for(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """A call's ``generate()`` options over :attr:`generation_defaults`, as transformers reads them
        (:func:`~recall_core.settings.call_options`)."""
        return call_options(self.generation_defaults, given)

    def _wants_output(self, kwargs: Mapping[str, Any]) -> bool:
        """Did the caller ask for the full output (``return_dict_in_generate``), as generate() reads it?"""
        asked = kwargs.get("return_dict_in_generate")
        if asked is None:
            asked = (kwargs.get("generation_config") or self.model.generation_config).return_dict_in_generate
        return bool(asked)

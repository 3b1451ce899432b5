"""`RecallGenerator`: the friendly face of the recall loop.

It turns a string or chat messages into ids, checks the arguments, runs
``model.generate(custom_generate=recall_generate, ...)`` and returns a
:class:`RecallResult` (new text, full sequences, recall trace, token usage).
``stream()`` yields the same text in pieces.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

import torch
from transformers import StoppingCriteria, StoppingCriteriaList, StopStringCriteria, TextIteratorStreamer

from .chat import chat_prompt_ids
from .config import RecallConfig
from .loop import RecallGenerateOutput, recall_generate
from .models import MEMORY_PAD_TOKEN, load_model
from .text import TextFinisher, finish_text
from .types import Memory, Recall, RecallResult, Usage

Prompt = str | Sequence[Mapping[str, Any]]
_UNSET: Any = object()

#: generate() arguments we check ourselves, so a bad value fails with its name and range.
_RANGES: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "temperature": (">= 0", lambda v: v >= 0),
    "top_p": ("in (0, 1]", lambda v: 0 < v <= 1),
    "min_p": ("in [0, 1]", lambda v: 0 <= v <= 1),
    "top_k": ("an int >= 0", lambda v: isinstance(v, int) and v >= 0),
    "repetition_penalty": ("> 0", lambda v: v > 0),
    "max_new_tokens": ("an int >= 1", lambda v: isinstance(v, int) and v >= 1),
}
#: Accepted for LangChain / OpenAI habits, mapped to transformers names.
_ALIASES = {"max_tokens": "max_new_tokens"}


class RecallGenerator:
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
            (default: greedy, 256 new tokens).
    """

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        memory: Memory | None = None,
        config: RecallConfig | None = None,
        generation_defaults: Mapping[str, Any] | None = None,
    ) -> None:
        if MEMORY_PAD_TOKEN not in tokenizer.get_vocab():
            from .models import add_recall_tokens

            add_recall_tokens(model, tokenizer)
        self.model = model
        self.tokenizer = tokenizer
        self.memory = memory
        self.config = config or RecallConfig()
        self.generation_defaults = dict(generation_defaults or {"max_new_tokens": 256, "do_sample": False})
        self._check_generation_kwargs(self.generation_defaults)

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
        """Load a model with :func:`recall_core.load_model` (``None``: the embedded default)."""
        model, tokenizer = load_model(name_or_path, device=device, dtype=dtype, **model_kwargs)
        return cls(model, tokenizer, memory=memory, config=config)

    # ------------------------------------------------------------------ prompts
    @property
    def context_window(self) -> int:
        """How many positions the model was trained on."""
        config = self.model.config
        for name in ("max_position_embeddings", "n_positions", "max_sequence_length"):
            value = getattr(config, name, None)
            if isinstance(value, int) and value > 0:
                return value
        return int(getattr(self.tokenizer, "model_max_length", 2048))

    def encode(self, prompt: Prompt, *, config: RecallConfig | None = None) -> torch.LongTensor:
        """Ids ``[1, L]`` of a string prompt (as is) or chat messages (chat template, recall policy)."""
        config = config or self.config
        if isinstance(prompt, str):
            if not prompt.strip():
                raise ValueError("prompt is empty: give some text or chat messages")
            ids = list(self.tokenizer(prompt).input_ids)
        elif isinstance(prompt, Sequence):
            ids = chat_prompt_ids(self.tokenizer, prompt, config.recall_policy, config.recall_position)
        else:
            raise ValueError(f"prompt must be a string or a list of chat messages, got {type(prompt).__name__}")
        if not ids:
            raise ValueError("prompt is empty after tokenization")
        if len(ids) >= self.context_window:
            raise ValueError(
                f"prompt is {len(ids)} tokens, longer than the model's context window of {self.context_window} "
                "(it must leave room for at least one new token): shorten it"
            )
        return torch.tensor([ids], dtype=torch.long, device=self.model.device)

    # ------------------------------------------------------------------ generate
    def generate(
        self,
        prompt: Prompt,
        *,
        memory: Memory | None = _UNSET,
        config: RecallConfig | None = None,
        stop: Sequence[str] | None = None,
        on_recall: Callable[[Recall], None] | None = None,
        streamer: Any = None,
        stopping_criteria: Sequence[StoppingCriteria] | None = None,
        **generation_kwargs: Any,
    ) -> RecallResult:
        """Generate a reply with recall.

        Args:
            prompt: a string (used as is) or chat messages (``[{"role", "content"}]``,
                rendered with the tokenizer's chat template and the recall policy).
            memory: overrides the generator's memory for this call (``None``: no memory).
            config: overrides the generator's :class:`RecallConfig` for this call.
            stop: stop strings; generation stops at the first one and it is cut from ``text``.
            on_recall: called with each :class:`Recall` as it happens.
            streamer: a transformers streamer that receives the new tokens.
            stopping_criteria: extra transformers stopping criteria.
            **generation_kwargs: any ``generate()`` argument (``max_new_tokens``,
                ``do_sample``, ``temperature``, ``top_p``, ``top_k``, ``min_p``,
                ``repetition_penalty``, ``stop_strings``...). Unknown names raise.

        Returns:
            A :class:`RecallResult`. With ``return_dict_in_generate=True`` its ``output`` holds
            the :class:`~recall_core.RecallGenerateOutput` (scores, attentions, cache...).
        """
        config = config or self.config
        input_ids = self.encode(prompt, config=config)
        kwargs, stop_strings = self._generation_kwargs(generation_kwargs, stop)
        keep_output = self._wants_output(kwargs)
        criteria = self._stopping_criteria(stop_strings)
        criteria.extend(stopping_criteria or [])
        output = self.model.generate(
            input_ids,
            custom_generate=recall_generate,
            memory=self.memory if memory is _UNSET else memory,
            recall_config=config,
            recall_tokenizer=self.tokenizer,
            recall_streamer=streamer,
            recall_callback=on_recall,
            stopping_criteria=criteria,
            # The output object reports the trace and where the generated tokens start.
            **{**kwargs, "return_dict_in_generate": True},
        )
        result = self._result(input_ids, output, stop_strings, kwargs)
        return replace(result, output=output) if keep_output else result

    def generate_batch(self, prompts: Sequence[Prompt], **kwargs: Any) -> list[RecallResult]:
        """One :meth:`generate` per prompt: each row gets its own recalls, nothing is shared."""
        return [self.generate(prompt, **kwargs) for prompt in prompts]

    def stream(self, prompt: Prompt, **kwargs: Any) -> RecallStream:
        """Like :meth:`generate`, but returns a :class:`RecallStream` of text pieces.

        Joining the pieces gives exactly ``generate(...).text``; the stream's ``result``
        holds the full :class:`RecallResult` once it is exhausted.
        """
        if "streamer" in kwargs:
            raise TypeError("stream() makes its own streamer; use generate(streamer=...) to pass one")
        return RecallStream(self, prompt, kwargs)

    # ------------------------------------------------------------------ helpers
    def _generation_kwargs(self, given: Mapping[str, Any], stop: Sequence[str] | None) -> tuple[dict[str, Any], list[str]]:
        kwargs = dict(self.generation_defaults)
        for name, value in given.items():
            kwargs[_ALIASES.get(name, name)] = value
        for name in ("num_beams", "num_return_sequences"):
            if kwargs.get(name, 1) != 1:
                raise ValueError(f"{name} must be 1 with recall (one decoding path), got {kwargs[name]}")
        self._check_generation_kwargs(kwargs)
        stop_strings = [*(stop or []), *_as_list(kwargs.pop("stop_strings", None))]
        if any(not isinstance(s, str) or not s for s in stop_strings):
            raise ValueError(f"stop strings must be non-empty strings, got {stop_strings!r}")
        return kwargs, stop_strings

    @staticmethod
    def _check_generation_kwargs(kwargs: Mapping[str, Any]) -> None:
        for name, (allowed, ok) in _RANGES.items():
            if name in kwargs and kwargs[name] is not None:
                value = kwargs[name]
                if isinstance(value, bool) or not isinstance(value, (int, float)) or not ok(value):
                    raise ValueError(f"{name} must be {allowed}, got {value!r}")

    def _wants_output(self, kwargs: Mapping[str, Any]) -> bool:
        """Did the caller ask for the full output (``return_dict_in_generate``), as generate() reads it?"""
        asked = kwargs.get("return_dict_in_generate")
        if asked is None:
            asked = (kwargs.get("generation_config") or self.model.generation_config).return_dict_in_generate
        return bool(asked)

    def _stopping_criteria(self, stop_strings: list[str]) -> StoppingCriteriaList:
        if not stop_strings:
            return StoppingCriteriaList()
        return StoppingCriteriaList([StopStringCriteria(self.tokenizer, stop_strings)])

    def _result(
        self,
        input_ids: torch.LongTensor,
        output: RecallGenerateOutput,
        stop_strings: list[str],
        kwargs: Mapping[str, Any],
    ) -> RecallResult:
        prompt_length = input_ids.shape[1]
        sequences, trace = output.sequences, list(output.recalls or [])
        pad_id = self.tokenizer.convert_tokens_to_ids(MEMORY_PAD_TOKEN)
        new_ids = [i for i in sequences[0, output.generated_start :].tolist() if i != pad_id]
        injected = sum(r.length for r in trace)
        generated = sequences.shape[1] - output.generated_start - sum(r.length for r in trace if not r.in_prompt)
        raw = self.tokenizer.decode(new_ids, skip_special_tokens=True)
        text, hit_stop = finish_text(raw, stop_strings)
        eos = self.model.generation_config.eos_token_id
        eos_ids = set(eos if isinstance(eos, list) else [eos]) - {None}
        max_new = kwargs.get("max_new_tokens")
        ended_on_eos = bool(new_ids) and new_ids[-1] in eos_ids
        finish_reason = "length" if (max_new and generated >= max_new and not (hit_stop or ended_on_eos)) else "stop"
        return RecallResult(
            text=text,
            sequences=sequences,
            recalls=trace,
            usage=Usage(prompt_tokens=prompt_length, generated_tokens=generated, injected_tokens=injected),
            finish_reason=finish_reason,
        )


class RecallStream:
    """An iterator of text pieces from one generation; ``result`` is set when it ends.

    Generation runs in a background thread (as with transformers' ``TextIteratorStreamer``);
    an exception there is raised here, in the consumer. Pieces come token by token (held
    back only while a multi-byte character or a possible stop string is incomplete).
    Stopping early (``close()``, or leaving a ``for`` loop) ends the generation too.
    """

    def __init__(self, generator: RecallGenerator, prompt: Prompt, kwargs: dict[str, Any]) -> None:
        self.result: RecallResult | None = None
        self._error: BaseException | None = None
        stop = list(kwargs.get("stop") or []) + _as_list(kwargs.get("stop_strings"))
        self._finisher = TextFinisher(stop)
        self._streamer = TokenTextStreamer(generator.tokenizer, skip_prompt=True, skip_special_tokens=True)
        self._cancel = threading.Event()
        kwargs = {**kwargs, "stopping_criteria": [*kwargs.get("stopping_criteria", []), _Cancelled(self._cancel)]}
        self._thread = threading.Thread(target=self._run, args=(generator, prompt, kwargs), daemon=True)
        self._started = False

    def _run(self, generator: RecallGenerator, prompt: Prompt, kwargs: dict[str, Any]) -> None:
        try:
            self.result = generator.generate(prompt, streamer=self._streamer, **kwargs)
        except BaseException as error:  # handed to the consumer thread
            self._error = error
            self._streamer.end()

    def __iter__(self) -> Iterator[str]:
        if self._started:
            raise RuntimeError("a RecallStream can be iterated once")
        self._started = True
        self._thread.start()
        try:
            for piece in self._streamer:
                shown = self._finisher.feed(piece)
                if shown:
                    yield shown
            self._thread.join()
            if self._error is not None:
                raise self._error
            tail = self._finisher.finish()
            if tail:
                yield tail
        finally:
            if self._thread.is_alive():  # the consumer stopped early
                self.close()

    def close(self) -> None:
        """Stop generating (at the next token) and wait for the generation thread to end."""
        self._cancel.set()
        if self._thread.is_alive():  # its queue is unbounded: the thread never waits on us
            self._thread.join()


class TokenTextStreamer(TextIteratorStreamer):
    """A ``TextIteratorStreamer`` that hands over text at every token, not at every word.

    transformers' streamers wait for a space before showing a word; callbacks that expect
    every token (LangChain's ``on_llm_new_token``) get each token's text here. Text is held
    back only while it ends in an incomplete multi-byte character.
    """

    def put(self, value: torch.Tensor) -> None:
        if value.dim() > 1:
            value = value[0]
        if self.skip_prompt and self.next_tokens_are_prompt:
            self.next_tokens_are_prompt = False
            return
        self.token_cache.extend(value.tolist())
        text = self.tokenizer.decode(self.token_cache, **self.decode_kwargs)
        if text.endswith("\ufffd") or len(text) <= self.print_len:
            return
        printable = text[self.print_len :]
        if text.endswith("\n"):
            self.token_cache, self.print_len = [], 0
        else:
            self.print_len = len(text)
        self.on_finalized_text(printable)


class _Cancelled(StoppingCriteria):
    def __init__(self, event: threading.Event) -> None:
        self.event = event

    def __call__(self, input_ids: torch.LongTensor, scores: Any, **kwargs: Any) -> torch.BoolTensor:
        return torch.full((input_ids.shape[0],), self.event.is_set(), dtype=torch.bool, device=input_ids.device)


def _as_list(value: str | Sequence[str] | None) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)

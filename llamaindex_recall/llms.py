"""`RecallLLM`: a LlamaIndex ``CustomLLM`` over the recall engine."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from llama_index.core.base.llms.generic_utils import messages_to_prompt as generic_messages_to_prompt
from llama_index.core.base.llms.types import (
    ChatMessage,
    ChatResponse,
    ChatResponseAsyncGen,
    ChatResponseGen,
    CompletionResponse,
    CompletionResponseAsyncGen,
    CompletionResponseGen,
    LLMMetadata,
    MessageRole,
    TextBlock,
)
from llama_index.core.bridge.pydantic import ConfigDict, Field, PrivateAttr, model_validator
from llama_index.core.llms.callbacks import llm_chat_callback, llm_completion_callback
from llama_index.core.llms.custom import CustomLLM
from llama_index.core.llms.llm import default_completion_to_prompt
from recall_core import RECALL_TOKEN, RecallConfig, RecallGenerator, RecallResult

from langchain_recall import _engine

#: Per-call keyword arguments besides generate() options.
CALL_ARGUMENTS = frozenset({"user_id", "memory", "recall", "recall_config", "on_recall", "timeout", "stop"})
#: ``additional_kwargs`` key a recall marker message may carry: whose memory to search.
USER_ID_KEY = "recall_user_id"


@dataclass
class _Call:
    prompt: str | list[dict[str, str]]
    kwargs: dict[str, Any]


def is_recall_marker(message: ChatMessage) -> bool:
    """A message that only says "consult memory here" (what :class:`RecallMemoryBlock` adds)."""
    return (message.content or "").strip() == RECALL_TOKEN


def to_chat_messages(messages: Sequence[ChatMessage]) -> list[dict[str, str]]:
    """LlamaIndex messages as ``{"role", "content"}`` dicts; text only, else ``ValueError`` naming the message."""
    out = []
    for index, message in enumerate(messages):
        parts = []
        for block in message.blocks:
            if isinstance(block, TextBlock):
                parts.append(block.text)
            elif getattr(block, "block_type", None) == "thinking":
                continue
            else:
                raise ValueError(
                    f"message {index} ({message.role.value}) has a {getattr(block, 'block_type', type(block).__name__)!r} "
                    "block: RecallLLM takes text only (the local model has no image, audio or file input)"
                )
        role = message.role.value if isinstance(message.role, MessageRole) else str(message.role)
        out.append({"role": role, "content": "".join(parts)})
    return out


class RecallLLM(CustomLLM):
    """A local Hugging Face chat model with long-term memory recalled *inside* generation.

    ``complete`` and ``stream_complete`` format the prompt the same way: unless
    ``formatted=True`` (the string is used as is) or a custom ``completion_to_prompt`` is
    given, the prompt becomes one user turn (after ``system_prompt``) in the tokenizer's
    chat template. ``chat`` / ``stream_chat`` use the chat template too. With
    ``recall="auto"`` (the default) ``<recall>`` goes where the reply to the last user turn
    consults memory (``RecallConfig.recall_position``; the end of a raw prompt); a system
    message holding only ``<recall>`` (what :class:`~llamaindex_recall.RecallMemoryBlock`
    adds) asks for the same for this call, and is removed.

    Example::

        from llamaindex_recall import RecallLLM
        from recall_core.memory import MemoryStore

        llm = RecallLLM(store=MemoryStore.local(), user_id="ada", max_new_tokens=64)
        print(llm.complete("What is my dog called?").raw["recalls"])

    Every response's ``raw`` holds ``recalls`` (the trace: memory id, score, text, or why
    nothing was injected), ``usage`` and ``finish_reason``; ``additional_kwargs`` holds the
    token counts. Per-call keyword arguments: any transformers ``generate()`` option, plus
    ``stop``, ``user_id``, ``memory``, ``recall``, ``recall_config``, ``timeout``,
    ``on_recall``. Unknown names raise ``TypeError``.
    """

    model_config = ConfigDict(extra="forbid", protected_namespaces=(), arbitrary_types_allowed=True)

    model_name: str | None = Field(
        default=None,
        description="Hugging Face model id or local folder; None is the embedded offline default.",
    )
    generator: RecallGenerator | None = Field(
        default=None, exclude=True, description="An existing RecallGenerator."
    )
    device: str | None = Field(default=None, description="'cpu', 'cuda', ...; default CUDA when available.")
    dtype: str | None = Field(default=None, description="'float32', 'bfloat16', ...")
    store: Any = Field(default=None, exclude=True, description="A recall_core.memory.MemoryStore.")
    user_id: str | None = Field(default=None, description="Whose memory to search in the store.")
    memory: Any = Field(default=None, exclude=True, description="Instead of store: anything with search().")
    recall: Literal["auto", "explicit"] | None = Field(
        default=None,
        description="'auto' puts <recall> where the reply consults memory; 'explicit' leaves it to the prompt.",
    )
    recall_config: RecallConfig | None = Field(
        default=None, exclude=True, description="A recall_core.RecallConfig."
    )
    temperature: float | None = Field(default=None, description="0 or None: greedy; above 0: sampling.")
    max_new_tokens: int = Field(default=256, gt=0, description="Most new tokens per call (num_output).")
    context_window: int | None = Field(
        default=None, gt=0, description="Override of the model's context window."
    )
    top_p: float | None = Field(default=None)
    top_k: int | None = Field(default=None)
    repetition_penalty: float | None = Field(default=None)
    stop: list[str] | None = Field(default=None, description="Stop strings, cut from the output.")
    timeout: float | None = Field(default=None, description="Most seconds of decoding per call.")
    generate_kwargs: dict[str, Any] = Field(
        default_factory=dict, description="Other transformers generate() options."
    )

    _engine: RecallGenerator | None = PrivateAttr(default=None)
    _engine_lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @model_validator(mode="after")
    def _check_recall_settings(self) -> RecallLLM:
        _engine.check_memory_arguments(self.memory, self.store)
        if self.generator is not None and not isinstance(self.generator, RecallGenerator):
            raise TypeError(
                f"generator must be a recall_core.RecallGenerator, got {type(self.generator).__name__}"
            )
        _engine.check_call_kwargs("RecallLLM generate_kwargs", self.generate_kwargs)
        self._sampling_kwargs()
        return self

    @classmethod
    def class_name(cls) -> str:
        return "RecallLLM"

    @classmethod
    def from_model(cls, hf_model: Any, tokenizer: Any, /, **kwargs: Any) -> RecallLLM:
        """Wrap an already loaded Hugging Face causal LM and its tokenizer (recall tokens added if missing)."""
        kwargs.setdefault("model_name", getattr(hf_model.config, "name_or_path", None) or None)
        generator = RecallGenerator(hf_model, tokenizer, config=kwargs.get("recall_config"))
        return cls(generator=generator, **kwargs)

    # ------------------------------------------------------------------ engine
    @property
    def engine(self) -> RecallGenerator:
        """The :class:`recall_core.RecallGenerator` behind this LLM (loaded on first use)."""
        if self._engine is None:
            with self._engine_lock:
                if self._engine is None:
                    self._engine = _engine.build_generator(
                        generator=self.generator, name_or_path=self.model_name, device=self.device,
                        dtype=self.dtype, config=self.recall_config,
                    )  # fmt: skip
        return self._engine

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(
            context_window=self.context_window or self.engine.context_window,
            num_output=self.max_new_tokens,
            is_chat_model=True,
            is_function_calling_model=False,
            model_name=_engine.model_display_name(self.model_name, self.generator),
        )

    def _sampling_kwargs(self) -> dict[str, Any]:
        kwargs = _engine.sampling_kwargs(
            temperature=self.temperature, max_tokens=self.max_new_tokens, top_p=self.top_p, top_k=self.top_k,
            repetition_penalty=self.repetition_penalty, timeout=self.timeout,
        )  # fmt: skip
        return {**self.generate_kwargs, **kwargs}

    def _call_kwargs(
        self, kwargs: Mapping[str, Any], marker_user: str | None = None, force_auto: bool = False
    ) -> tuple[dict[str, Any], RecallConfig]:
        _engine.check_call_kwargs("RecallLLM", kwargs, CALL_ARGUMENTS)
        call = dict(kwargs)
        user_id = call.pop("user_id", None) or marker_user or self.user_id
        recall = call.pop("recall", None)
        recall_config = call.pop("recall_config", None)
        memory = call.pop("memory", None)
        stop = call.pop("stop", None)
        gen = {**self._sampling_kwargs(), **_engine.normalize_generation_kwargs(call)}
        stops = list(stop if stop is not None else (self.stop or []))
        if stops:
            gen["stop"] = stops
        if recall_config is not None and not isinstance(recall_config, RecallConfig):
            raise TypeError(
                f"recall_config must be a recall_core.RecallConfig, got {type(recall_config).__name__}"
            )
        config = recall_config or self.recall_config or self.engine.config
        policy = "auto" if force_auto else (recall or self.recall)
        if policy is not None and policy != config.recall_policy:
            config = config.replace(recall_policy=policy)
        gen["config"] = config
        if memory is not None:
            _engine.check_memory_arguments(memory, None)
            gen["memory"] = memory
        elif self.memory is not None or self.store is not None:
            gen["memory"] = _engine.resolve_memory(self.memory, self.store, user_id)
        return gen, config

    # ------------------------------------------------------------------ prompts
    def _completion_call(self, prompt: str, formatted: bool, kwargs: Mapping[str, Any]) -> _Call:
        """The one place ``complete`` and ``stream_complete`` (sync and async) build their prompt."""
        gen, config = self._call_kwargs(kwargs)
        if not formatted and self.completion_to_prompt is not default_completion_to_prompt:
            prompt, formatted = self.completion_to_prompt(prompt), True
        if not formatted and getattr(self.engine.tokenizer, "chat_template", None):
            messages = [{"role": "user", "content": prompt}]
            if self.system_prompt:
                messages.insert(0, {"role": "system", "content": self.system_prompt})
            return _Call(messages, gen)
        if config.recall_policy == "auto" and RECALL_TOKEN not in prompt:
            prompt += RECALL_TOKEN
        return _Call(prompt, gen)

    def _chat_call(self, messages: Sequence[ChatMessage], kwargs: Mapping[str, Any]) -> _Call:
        markers = [m for m in messages if is_recall_marker(m)]
        kept = [m for m in messages if not is_recall_marker(m)]
        marker_user = next(
            (m.additional_kwargs.get(USER_ID_KEY) for m in markers if m.additional_kwargs.get(USER_ID_KEY)),
            None,
        )
        gen, config = self._call_kwargs(
            kwargs, marker_user=marker_user, force_auto=bool(markers) and "recall" not in kwargs
        )
        if self.messages_to_prompt is not generic_messages_to_prompt:  # the user's own formatting
            prompt = self.messages_to_prompt(kept)
            if config.recall_policy == "auto" and RECALL_TOKEN not in prompt:
                prompt += RECALL_TOKEN
            return _Call(prompt, gen)
        return _Call(to_chat_messages(self._extend_messages(kept)), gen)

    # ------------------------------------------------------------------ responses
    def _raw(self, result: RecallResult) -> dict[str, Any]:
        return {
            "finish_reason": result.finish_reason,
            "model_name": self.metadata.model_name,
            "usage": _engine.usage_dict(result),
            "recalls": _engine.recall_dicts(result),
        }

    def _completion(self, result: RecallResult) -> CompletionResponse:
        return CompletionResponse(
            text=result.text, raw=self._raw(result), additional_kwargs=_engine.usage_dict(result)
        )

    def _chat_response(self, result: RecallResult) -> ChatResponse:
        message = ChatMessage(role=MessageRole.ASSISTANT, content=result.text)
        return ChatResponse(
            message=message, raw=self._raw(result), additional_kwargs=_engine.usage_dict(result)
        )

    def _run(self, call: _Call) -> RecallResult:
        return self.engine.generate(call.prompt, **call.kwargs)

    # ------------------------------------------------------------------ completion
    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return self._completion(self._run(self._completion_call(prompt, formatted, kwargs)))

    @llm_completion_callback()
    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponseGen:
        call = self._completion_call(
            prompt, formatted, kwargs
        )  # bad arguments raise here, not at first next()
        stream = self.engine.stream(call.prompt, **call.kwargs)

        def gen() -> CompletionResponseGen:
            text = ""
            for piece in stream:
                text += piece
                yield CompletionResponse(text=text, delta=piece)
            assert stream.result is not None
            yield CompletionResponse(text=text, delta="", raw=self._raw(stream.result),
                                     additional_kwargs=_engine.usage_dict(stream.result))  # fmt: skip

        return gen()

    @llm_completion_callback()
    async def acomplete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        call = self._completion_call(prompt, formatted, kwargs)
        return self._completion(await _engine.run_in_thread(self._run, call))

    @llm_completion_callback()
    async def astream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseAsyncGen:
        call = self._completion_call(prompt, formatted, kwargs)
        stream = _engine.AsyncRecallStream(self.engine, call.prompt, call.kwargs)

        async def gen() -> CompletionResponseAsyncGen:
            text = ""
            async for piece in stream:
                text += piece
                yield CompletionResponse(text=text, delta=piece)
            assert stream.result is not None
            yield CompletionResponse(text=text, delta="", raw=self._raw(stream.result),
                                     additional_kwargs=_engine.usage_dict(stream.result))  # fmt: skip

        return gen()

    # ------------------------------------------------------------------ chat
    @llm_chat_callback()
    def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        return self._chat_response(self._run(self._chat_call(messages, kwargs)))

    @llm_chat_callback()
    def stream_chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponseGen:
        call = self._chat_call(messages, kwargs)
        stream = self.engine.stream(call.prompt, **call.kwargs)

        def gen() -> ChatResponseGen:
            text = ""
            for piece in stream:
                text += piece
                yield ChatResponse(message=ChatMessage(role=MessageRole.ASSISTANT, content=text), delta=piece)
            assert stream.result is not None
            yield ChatResponse(message=ChatMessage(role=MessageRole.ASSISTANT, content=text), delta="",
                               raw=self._raw(stream.result), additional_kwargs=_engine.usage_dict(stream.result))  # fmt: skip

        return gen()

    @llm_chat_callback()
    async def achat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        call = self._chat_call(messages, kwargs)
        return self._chat_response(await _engine.run_in_thread(self._run, call))

    @llm_chat_callback()
    async def astream_chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponseAsyncGen:
        call = self._chat_call(messages, kwargs)
        stream = _engine.AsyncRecallStream(self.engine, call.prompt, call.kwargs)

        async def gen() -> ChatResponseAsyncGen:
            text = ""
            async for piece in stream:
                text += piece
                yield ChatResponse(message=ChatMessage(role=MessageRole.ASSISTANT, content=text), delta=piece)
            assert stream.result is not None
            yield ChatResponse(message=ChatMessage(role=MessageRole.ASSISTANT, content=text), delta="",
                               raw=self._raw(stream.result), additional_kwargs=_engine.usage_dict(stream.result))  # fmt: skip

        return gen()

"""`RecallLLM`: a LlamaIndex ``CustomLLM`` over the recall engine."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, TypeVar

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
from llama_index.core.bridge.pydantic import ConfigDict, Field, model_validator
from llama_index.core.llms.callbacks import llm_chat_callback, llm_completion_callback
from llama_index.core.llms.custom import CustomLLM
from llama_index.core.llms.llm import default_completion_to_prompt
from recall_core import RECALL_TOKEN, AsyncRecallStream, RecallResult, RecallStream
from recall_core.adapters import (
    CALL_ARGUMENTS,
    PreparedCall,
    RecallAdapterBase,
    mark_for_recall,
    model_display_name,
    recall_dicts,
    usage_dict,
)

#: ``additional_kwargs`` key a recall marker message may carry: whose memory to search.
USER_ID_KEY = "recall_user_id"
#: ``additional_kwargs`` key a recall marker message may carry: which conversation (KV-cache session) it is.
THREAD_ID_KEY = "recall_thread_id"


@dataclass
class _Call:
    prompt: str | list[dict[str, str]]
    kwargs: dict[str, Any]
    prepared: PreparedCall | None = None  # chat calls: whose session continues


def is_recall_marker(message: ChatMessage) -> bool:
    """A message that only says "consult memory here" (what :class:`RecallMemoryBlock` adds)."""
    return (message.content or "").strip() == RECALL_TOKEN


def role_name(message: ChatMessage) -> str:
    return message.role.value if isinstance(message.role, MessageRole) else str(message.role)


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
        out.append({"role": role_name(message), "content": "".join(parts)})
    return out


_Response = TypeVar("_Response")
#: Builds a stream's response from the text so far and the new piece (and, at the end, the result).
_ChunkBuilder = Callable[[str, str, RecallResult | None], _Response]


def _chunks(stream: RecallStream, chunk: _ChunkBuilder[_Response]) -> Iterator[_Response]:
    """One response per piece of ``stream`` (text so far, piece), then the last (text, ``""``, result)."""
    text = ""
    for piece in stream:
        text += piece
        yield chunk(text, piece, None)
    assert stream.result is not None
    yield chunk(text, "", stream.result)


async def _achunks(stream: AsyncRecallStream, chunk: _ChunkBuilder[_Response]) -> AsyncIterator[_Response]:
    """:func:`_chunks` for an :class:`~recall_core.AsyncRecallStream`."""
    text = ""
    async for piece in stream:
        text += piece
        yield chunk(text, piece, None)
    assert stream.result is not None
    yield chunk(text, "", stream.result)


class RecallLLM(RecallAdapterBase, CustomLLM):
    """A local Hugging Face chat model with long-term memory recalled *inside* generation.

    ``complete`` and ``stream_complete`` format the prompt the same way: unless
    ``formatted=True`` (the string is used as is) or a custom ``completion_to_prompt`` is
    given, the prompt becomes one user turn (after ``system_prompt``) in the tokenizer's
    chat template. ``chat`` / ``stream_chat`` use the chat template too. With
    ``recall="auto"`` (the default) ``<recall>`` goes where the reply to the last user turn
    consults memory (``RecallConfig.recall_position``; the end of a raw prompt); a system
    message holding only ``<recall>`` (what :class:`~llamaindex_recall.RecallMemoryBlock`
    adds) asks for the same for this call, and is removed. (``recall=``, at init or per call,
    is short for ``recall_config``'s ``recall_policy`` and is folded into it.)

    Example::

        from llamaindex_recall import RecallLLM
        from recall_core.memory import MemoryStore

        llm = RecallLLM(store=MemoryStore.local(), user_id="ada", max_new_tokens=64)
        print(llm.complete("What is my dog called?").raw["recalls"])

    Every response's ``raw`` holds ``recalls`` (the trace: memory id, score, text, or why
    nothing was injected), ``usage`` and ``finish_reason``; ``additional_kwargs`` holds the
    token counts. Per-call keyword arguments: any transformers ``generate()`` option, plus
    ``stop``, ``user_id``, ``thread_id``, ``memory``, ``recall``, ``recall_config``, ``timeout``,
    ``on_recall``. Unknown names raise ``TypeError``.

    **KV-cache sessions.** Chat calls of one conversation (``thread_id=``, or the
    :class:`~llamaindex_recall.RecallMemoryBlock` 's thread) keep its KV cache between calls, so
    each call prefills only the new messages (``sessions``: a :class:`recall_core.SessionConfig`;
    ``None`` turns them off; ``reset()`` / ``close_session()`` free them). When ``Memory``
    moves old messages out of the chat history, the history no longer extends the cached one
    and is prefilled afresh (the response's ``raw["session"]`` says so).
    """

    model_config = ConfigDict(extra="forbid", protected_namespaces=(), arbitrary_types_allowed=True)

    max_new_tokens: int = Field(default=256, gt=0, description="Most new tokens per call (num_output).")
    context_window: int | None = Field(
        default=None, gt=0, description="Override of the model's context window."
    )
    generate_kwargs: dict[str, Any] = Field(
        default_factory=dict, description="Other transformers generate() options."
    )

    def _max_new_tokens(self) -> int | None:
        return self.max_new_tokens

    def _extra_options(self) -> tuple[str, Mapping[str, Any]]:
        return "generate_kwargs", self.generate_kwargs

    @model_validator(mode="after")
    def _check_settings(self) -> RecallLLM:
        self._check_recall_settings("RecallLLM")
        return self

    @classmethod
    def class_name(cls) -> str:
        return "RecallLLM"

    # ------------------------------------------------------------------ model and calls
    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(
            context_window=self.context_window or self.engine.context_window,
            num_output=self.max_new_tokens,
            is_chat_model=True,
            is_function_calling_model=False,
            model_name=model_display_name(self.model_name, self.generator),
        )

    def _prepare(
        self,
        kwargs: Mapping[str, Any],
        marker_user: str | None = None,
        policy: str | None = None,
        marker_thread: str | None = None,
    ) -> PreparedCall:
        """One call's ``generate()`` arguments; whose memory: ``user_id=``, else the marker's, else ours.

        The conversation (KV-cache session) is ``thread_id=``, else the memory block's.
        """
        user_id = kwargs.get("user_id") or marker_user or self.user_id
        if marker_thread is not None and kwargs.get("thread_id") is None:
            kwargs = {**kwargs, "thread_id": marker_thread}
        return self._prepare_call("RecallLLM", kwargs, CALL_ARGUMENTS, user_id=user_id, policy=policy)

    # ------------------------------------------------------------------ prompts
    def _completion_call(self, prompt: str, formatted: bool, kwargs: Mapping[str, Any]) -> _Call:
        """The one place ``complete`` and ``stream_complete`` (sync and async) build their prompt."""
        prepared = self._prepare(kwargs)
        if not formatted and self.completion_to_prompt is not default_completion_to_prompt:
            prompt, formatted = self.completion_to_prompt(prompt), True
        if not formatted and getattr(self.engine.tokenizer, "chat_template", None):
            messages = [{"role": "user", "content": prompt}]
            if self.system_prompt:
                messages.insert(0, {"role": "system", "content": self.system_prompt})
            return _Call(messages, prepared.kwargs)
        return _Call(mark_for_recall(prompt, prepared.config), prepared.kwargs)

    def _chat_call(self, messages: Sequence[ChatMessage], kwargs: Mapping[str, Any]) -> _Call:
        markers = [m for m in messages if is_recall_marker(m)]
        kept = [m for m in messages if not is_recall_marker(m)]
        marker_user = next(
            (m.additional_kwargs.get(USER_ID_KEY) for m in markers if m.additional_kwargs.get(USER_ID_KEY)),
            None,
        )
        marker_thread = next(
            (m.additional_kwargs.get(THREAD_ID_KEY) for m in markers if m.additional_kwargs.get(THREAD_ID_KEY)),
            None,
        )
        policy = "auto" if markers and "recall" not in kwargs else None  # a marker asks for a recall
        prepared = self._prepare(kwargs, marker_user=marker_user, policy=policy, marker_thread=marker_thread)
        if self.messages_to_prompt is not generic_messages_to_prompt:  # the user's own formatting
            return _Call(mark_for_recall(self.messages_to_prompt(kept), prepared.config), prepared.kwargs)
        return _Call(to_chat_messages(self._extend_messages(kept)), prepared.kwargs, prepared)

    # ------------------------------------------------------------------ responses
    def _raw(self, result: RecallResult) -> dict[str, Any]:
        return {
            "finish_reason": result.finish_reason,
            "model_name": self.metadata.model_name,
            "usage": usage_dict(result),
            "recalls": recall_dicts(result),
            "session": asdict(result.session) if result.session is not None else None,
        }

    def _completion(self, result: RecallResult) -> CompletionResponse:
        return CompletionResponse(
            text=result.text, raw=self._raw(result), additional_kwargs=usage_dict(result)
        )

    def _chat_response(self, result: RecallResult) -> ChatResponse:
        message = ChatMessage(role=MessageRole.ASSISTANT, content=result.text)
        return ChatResponse(message=message, raw=self._raw(result), additional_kwargs=usage_dict(result))

    def _completion_chunk(self, text: str, delta: str, result: RecallResult | None) -> CompletionResponse:
        if result is None:
            return CompletionResponse(text=text, delta=delta)
        return CompletionResponse(
            text=text, delta=delta, raw=self._raw(result), additional_kwargs=usage_dict(result)
        )

    def _chat_chunk(self, text: str, delta: str, result: RecallResult | None) -> ChatResponse:
        message = ChatMessage(role=MessageRole.ASSISTANT, content=text)
        if result is None:
            return ChatResponse(message=message, delta=delta)
        return ChatResponse(
            message=message, delta=delta, raw=self._raw(result), additional_kwargs=usage_dict(result)
        )

    def _run(self, call: _Call) -> RecallResult:
        if call.prepared is not None:  # chat messages: the session of (user, thread), if any
            return self._chat(call.prepared, call.prompt)
        return self.engine.generate(call.prompt, **call.kwargs)

    def _stream(self, call: _Call) -> RecallStream:
        if call.prepared is not None:
            return self._chat_stream(call.prepared, call.prompt)
        return self.engine.stream(call.prompt, **call.kwargs)

    def _astream(self, call: _Call) -> AsyncRecallStream:
        if call.prepared is not None:
            return self._chat_astream(call.prepared, call.prompt)
        return self.engine.astream(call.prompt, **call.kwargs)

    # ------------------------------------------------------------------ completion
    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return self._completion(self._run(self._completion_call(prompt, formatted, kwargs)))

    @llm_completion_callback()
    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponseGen:
        call = self._completion_call(
            prompt, formatted, kwargs
        )  # bad arguments raise here, not at first next()
        return _chunks(self.engine.stream(call.prompt, **call.kwargs), self._completion_chunk)

    @llm_completion_callback()
    async def acomplete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        call = self._completion_call(prompt, formatted, kwargs)
        return self._completion(await asyncio.to_thread(self._run, call))

    @llm_completion_callback()
    async def astream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseAsyncGen:
        call = self._completion_call(prompt, formatted, kwargs)
        return _achunks(self.engine.astream(call.prompt, **call.kwargs), self._completion_chunk)

    # ------------------------------------------------------------------ chat
    @llm_chat_callback()
    def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        return self._chat_response(self._run(self._chat_call(messages, kwargs)))

    @llm_chat_callback()
    def stream_chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponseGen:
        call = self._chat_call(messages, kwargs)
        return _chunks(self._stream(call), self._chat_chunk)

    @llm_chat_callback()
    async def achat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        call = self._chat_call(messages, kwargs)
        return self._chat_response(await asyncio.to_thread(self._run, call))

    @llm_chat_callback()
    async def astream_chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponseAsyncGen:
        call = self._chat_call(messages, kwargs)
        return _achunks(self._astream(call), self._chat_chunk)

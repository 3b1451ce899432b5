"""`RecallLLM`: a LlamaIndex ``CustomLLM`` over the recall engine."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Any

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
    ToolCallBlock,
)
from llama_index.core.bridge.pydantic import ConfigDict, Field, model_validator
from llama_index.core.llms.callbacks import llm_chat_callback, llm_completion_callback
from llama_index.core.llms.custom import CustomLLM
from llama_index.core.llms.function_calling import FunctionCallingLLM
from llama_index.core.llms.llm import ToolSelection, default_completion_to_prompt

from recall_core import AsyncRecallStream, RecallResult, RecallStream
from recall_core.config import UNMARKED_POLICIES
from recall_core.integration import (
    CALL_ARGUMENTS,
    WRITE_MEMORY,
    WRITE_QUESTIONS,
    PreparedCall,
    RecallAdapterBase,
    cancellable_kwargs,
    mark_for_recall,
    model_display_name,
    recall_dicts,
    remember_later,
    run_cancellable,
    unanswered,
    usage_dict,
)
from recall_core.memory.text.questions import turn_to_write
from recall_core.memory.validation import check_user_id
from recall_core.remember import last_exchange, write_reported, write_turns, write_unanswered
from recall_core.settings import option_name
from recall_core.structured.outputs import check_tool_schemas
from recall_core.structured.tools import (
    check_tools,
    chosen_tools,
    supports_tools,
)

from ._forced import ForcedCalls
from ._streams import achunks, chunks
from .markers import (
    RECALL_KEY,
    SESSION_ID_KEY,
    THREAD_ID_KEY,
    USER_ID_KEY,
    WRITE_QUESTIONS_KEY,
    WRITE_ROLES_KEY,
    is_recall_marker,
    marker_text,
    message_text,
    own_user_turn,
    split_own_turn,
    takes_two_user_turns,
    without_rendered_marker,
    without_rendered_markers,
)
from .messages import assistant_message, role_name, to_chat_messages

__all__ = ["RecallLLM", "is_recall_marker", "marker_text", "role_name", "to_chat_messages"]

if TYPE_CHECKING:
    from llama_index.core.tools.types import BaseTool

#: Per-call keyword arguments of :class:`RecallLLM`.
LLAMAINDEX_CALL_ARGUMENTS = CALL_ARGUMENTS | {WRITE_MEMORY}

#: The exchange a call writes after its reply: ``(user_id, roles, session_id, questions)``.
_Write = tuple[str, tuple[str, ...], str | None, bool]


#: What a chat call without a user raises: a memory block's marker may have been dropped on the way.
NO_USER_IN_CHAT = (
    "a memory store is attached but no user_id was given, and no RecallMemoryBlock marker is in the messages: "
    "pass user_id= (to RecallLLM or per call). With a RecallMemoryBlock in the Memory, its marker (a system "
    "message) was dropped on the way, most likely by an agent that replaces the first system message with "
    "its own (LlamaIndex's ReActAgent does when it has no system_prompt): give the agent a system_prompt, or "
    "give RecallLLM a user_id (it then recalls, and writes nothing); see docs/frameworks.md"
)


class EvictedTurns:
    """How :class:`RecallLLM`'s KV-cache session writes the messages it evicts unwritten: as the
    conversation's last call that writes does (its ``target``: user, roles, session, questions rule);
    nothing while no call of it writes."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.target: _Write | None = None

    def __call__(self, messages: Sequence[Mapping[str, Any]]) -> list[str]:
        if self.target is None:
            return []
        user_id, roles, session_id, questions = self.target
        turns = [(m["role"], turn_to_write(m["role"], str(m["content"]), questions)) for m in messages if m["role"] in roles]
        return write_turns(self.store, user_id, turns, session_id=session_id)


@dataclass
class _Call:
    prompt: str | list[dict[str, str]]
    kwargs: dict[str, Any]
    prepared: PreparedCall | None = None  # chat calls: whose session continues
    last_user: str | None = None  # the user's words of this call (written to memory with the reply)
    write: _Write | None = None  # where the exchange is written after the reply (None: it is not)


class _NoMemory:
    """What a chat engine's own step searches when no user is given: nothing (its recall is off)."""

    def search(self, query: Any, k: int = 4) -> list[Any]:
        return []


_NO_MEMORY = _NoMemory()


class RecallLLM(RecallAdapterBase, ForcedCalls, CustomLLM, FunctionCallingLLM):
    """A local Hugging Face chat model with long-term memory recalled *inside* generation.

    ``complete`` and ``stream_complete`` format the prompt the same way: unless
    ``formatted=True`` (the string is used as is) or a custom ``completion_to_prompt`` is
    given, the prompt becomes one user turn (after ``system_prompt``) in the tokenizer's
    chat template. ``chat`` / ``stream_chat`` use the chat template too. With
    ``recall="auto"`` (the default) ``<recall>`` goes where the reply to the last user turn
    consults memory (``RecallConfig.recall_position``; the end of a raw prompt); a system
    message holding only ``<recall>`` (what :class:`~llamaindex_recall.RecallMemoryBlock`
    adds) asks for the same for this call, and is removed. With ``"model"`` or
    ``"uncertainty"`` the model decides when to recall (its own ``<recall>``, or the loop's
    before an uncertain token), and a marker message only says whose memory to search.
    (``recall=``, at init or per call, is short for ``recall_config``'s ``recall_policy`` and
    is folded into it.)

    It is a ``CustomLLM`` and a ``FunctionCallingLLM``: ``chat_with_tools`` renders the tools through the chat
    template, ``tool_required=True`` / ``tool_choice=<name>`` force a call by constrained
    decoding, and ``get_tool_calls_from_response`` reads the reply's ``ToolCallBlock`` s, so
    ``FunctionAgent``, ``AgentWorkflow`` and ``structured_predict`` run on it.

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

    **Writing to long-term memory.** With a :class:`~llamaindex_recall.RecallMemoryBlock` in
    the chat's ``Memory`` (its marker message), each chat exchange (the last user message and the
    reply, the block's ``write_roles``) is written to the block's user's memory right after the
    reply, under the ``Memory``'s ``session_id``: a new process recalls it, however large
    ``token_limit`` is. ``write_memory`` (field, or per call) decides for itself: ``True`` writes
    every chat exchange for ``user_id`` (``write_roles``), ``False`` writes nothing; ``None`` (the
    default) follows the block. The response's ``raw["memory_written"]`` holds the ids written (a
    failed write warns and sets ``raw["memory_write_error"]``: the reply is kept).

    **Recall off for one call.** ``recall="off"`` (per call) answers without memory, even with a
    memory block's marker in the messages; ``recall="explicit"`` recalls only at markers.

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
    write_memory: bool | None = Field(
        default=None,
        description="Write each chat exchange to user_id's memory: None follows a RecallMemoryBlock's marker "
        "(the block's write_memory), True always, False never. A call may pass write_memory= too.",
    )
    write_roles: tuple[str, ...] = Field(
        default=("user", "assistant"), description="With write_memory=True and no block: the roles written."
    )
    write_questions: bool = Field(
        default=WRITE_QUESTIONS,
        description="With write_memory=True and no block: write a user message that only asks too (off: a "
        "question holds no fact and comes back as a note at the next question like it).",
    )

    def _max_new_tokens(self) -> int | None:
        return self.max_new_tokens

    def _extra_options(self) -> tuple[str, Mapping[str, Any]]:
        return "generate_kwargs", self.generate_kwargs

    @model_validator(mode="after")
    def _check_settings(self) -> RecallLLM:
        # an option set as a field may not repeat in generate_kwargs (``max_new_tokens`` always is one:
        # until 2026-12-07 generate_kwargs={"max_new_tokens": 3} was passed over for the 256 default)
        fields = ("temperature", "top_p", "top_k", "repetition_penalty", "timeout")
        self._check_recall_settings("RecallLLM", {"max_new_tokens", *(option_name(f) for f in fields if getattr(self, f) is not None)})
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
            # only a template that renders tools lets the model choose a call; else LlamaIndex's agents
            # fall back to ReAct (before 2026-12-06 this was True, and FunctionAgent failed every step)
            is_function_calling_model=supports_tools(self.engine.tokenizer),
            model_name=model_display_name(self.model_name, self.generator),
        )

    def _prepare(
        self,
        kwargs: Mapping[str, Any],
        marker_user: str | None = None,
        policy: str | None = None,
        marker_thread: str | None = None,
        chat: bool = False,
    ) -> PreparedCall:
        """One call's ``generate()`` arguments; whose memory: ``user_id=``, else the marker's, else ours.

        The conversation (KV-cache session) is ``thread_id=``, else the memory block's. A ``user_id=``
        given is checked: before 2026-12-06 ``""``, ``0`` or ``None`` fell back to another user, silently.
        """
        user_id = check_user_id(kwargs["user_id"]) if "user_id" in kwargs else marker_user or self.user_id
        if chat and user_id is None and self.store is not None and kwargs.get("memory") is None:
            raise ValueError(NO_USER_IN_CHAT)
        if marker_thread is not None and kwargs.get("thread_id") is None:
            kwargs = {**kwargs, "thread_id": marker_thread}
        return self._prepare_call("RecallLLM", kwargs, LLAMAINDEX_CALL_ARGUMENTS, user_id=user_id, policy=policy)

    def _write_target(self, prepared: PreparedCall, marker: ChatMessage | None = None) -> _Write | None:
        """Where this call's exchange is written after the reply: the call's ``write_memory``, else the
        instance's, else the memory block's marker decides; ``None`` when nothing is written."""
        asked = prepared.write_memory if prepared.write_memory is not None else self.write_memory
        extra = marker.additional_kwargs if marker is not None else {}
        roles = tuple(extra.get(WRITE_ROLES_KEY) or ())
        if asked is None:
            asked = bool(roles)
        if not asked or self.store is None or prepared.user_id is None:
            return None
        session_id = extra.get(SESSION_ID_KEY) or prepared.thread_id
        questions = bool(extra.get(WRITE_QUESTIONS_KEY, WRITE_QUESTIONS if roles else self.write_questions))
        return prepared.user_id, roles or tuple(self.write_roles), session_id, questions

    def _remember(self, call: _Call, result: RecallResult) -> dict[str, Any]:
        """Write the call's exchange (if it writes one); what goes into ``raw`` about it.

        A failed write keeps the reply: it warns and reports ``memory_write_error`` instead of raising.
        """
        if call.write is None:
            if call.prepared is not None:  # nor later, when the session's cache evicts it
                self._mark_written(call.prepared, ("user", "assistant"))
            return {}
        user_id, roles, session_id, questions = call.write
        exchange = last_exchange([{"role": "user", "content": call.last_user or ""}], result.text, roles, questions)
        report = write_reported(self.store, user_id, exchange, session_id=session_id)
        if call.prepared is not None:  # what is done with (a question left out, a turn refused) is not
            self._mark_written(call.prepared, report.done(roles))
        return report.metadata  # written again at an eviction

    # ------------------------------------------------------------------ prompts
    def _completion_call(self, prompt: str, formatted: bool, kwargs: Mapping[str, Any]) -> _Call:
        """The one place ``complete`` and ``stream_complete`` (sync and async) build their prompt."""
        prompt, rendered = without_rendered_marker(prompt)
        if rendered:  # a condensing chat engine's own step over the Memory's messages
            return _Call(*self._completion_prompt(prompt, formatted, self._engine_step(kwargs)))
        prepared = self._prepare(kwargs)
        write = self._write_target(prepared)
        if write is not None:
            return _Call(*self._completion_prompt(prompt, formatted, prepared), last_user=prompt, write=write)
        return _Call(*self._completion_prompt(prompt, formatted, prepared))

    def _completion_prompt(
        self, prompt: str, formatted: bool, prepared: PreparedCall
    ) -> tuple[str | list[dict[str, str]], dict[str, Any]]:
        if not formatted and self.completion_to_prompt is not default_completion_to_prompt:
            prompt, formatted = self.completion_to_prompt(prompt), True
        if not formatted and getattr(self.engine.tokenizer, "chat_template", None):
            messages = [{"role": "user", "content": prompt}]
            if self.system_prompt:
                messages.insert(0, {"role": "system", "content": self.system_prompt})
            return messages, prepared.kwargs
        return mark_for_recall(prompt, prepared.config), prepared.kwargs

    def _engine_step(self, kwargs: Mapping[str, Any]) -> PreparedCall:
        """A chat engine's own step over a rendered chat history (:func:`~.markers.without_rendered_marker`):
        no recall (whatever the call's ``recall``: text decided it is such a step, and text must not
        decide whose memory is read), no session, nothing written (the Memory writes the user's turn).
        The user is the call's or the instance's, never one read from the text."""
        if "user_id" not in kwargs and self.user_id is None and kwargs.get("memory") is None:
            kwargs = {**kwargs, "memory": _NO_MEMORY}  # (recall is off: no user's memory is needed)
        return self._prepare(kwargs, policy="off")

    def _extend_messages(self, messages: Sequence[ChatMessage]) -> list[ChatMessage]:
        """LlamaIndex's, once: ``predict``, ``structured_predict`` and the query engines put the
        ``system_prompt`` in before they call ``chat`` (until 2026-12-07 it was there twice)."""
        first = messages[0] if messages else None
        if first is not None and first.role == MessageRole.SYSTEM and message_text(first) == self.system_prompt:
            return list(messages)
        return super()._extend_messages(list(messages))

    def _chat_call(self, messages: Sequence[ChatMessage], kwargs: Mapping[str, Any]) -> _Call:
        markers = [m for m in messages if is_recall_marker(m)]
        if not markers:
            cleaned, rendered = without_rendered_markers(messages)
            if rendered:  # CondenseQuestionChatEngine's rephrasing, asked as a chat message
                prepared = self._engine_step(kwargs)
                if self.messages_to_prompt is not generic_messages_to_prompt:
                    return _Call(self.messages_to_prompt(cleaned), prepared.kwargs)
                return _Call(to_chat_messages(self._extend_messages(cleaned)), prepared.kwargs)
        kept = [m if not is_recall_marker(m) else marker_text(m) for m in messages]
        kept = [m for m in kept if m is not None]
        marker_user = next(
            (m.additional_kwargs.get(USER_ID_KEY) for m in markers if m.additional_kwargs.get(USER_ID_KEY)),
            None,
        )
        marker_thread = next(
            (m.additional_kwargs.get(THREAD_ID_KEY) for m in markers if m.additional_kwargs.get(THREAD_ID_KEY)),
            None,
        )
        # A marker asks for a recall (policy "auto" for this call), unless the model decides when or
        # recall is off.
        configured = getattr(kwargs.get("recall_config") or self.recall_config or self.engine.config, "recall_policy", None)
        asks = markers and "recall" not in kwargs and configured not in UNMARKED_POLICIES | {"off"}
        policy = "auto" if asks else None
        if "recall" not in kwargs and any(m.additional_kwargs.get(RECALL_KEY) is False for m in markers):
            policy = "off"  # the block's recall=False: this Memory's calls answer without memory
        prepared = self._prepare(kwargs, marker_user=marker_user, policy=policy, marker_thread=marker_thread, chat=True)
        marker = markers[-1] if markers else None
        write = prepared.write_target = self._write_target(prepared, marker)
        # The user's own words (the Memory's last user message, less what Memory put in front of it),
        # written only by the call that ends with them: not after a tool's result or an agent's
        # Observation (a user-role message too, which before 2026-12-06 was written as the user's).
        index, words = own_user_turn(kept, marker)
        last_user = words if write is not None and index == len(kept) - 1 else None
        if self.messages_to_prompt is not generic_messages_to_prompt:  # the user's own formatting
            prompt = mark_for_recall(self.messages_to_prompt(kept), prepared.config)
            return _Call(prompt, prepared.kwargs, last_user=last_user, write=write)
        if index is not None and words is not None and message_text(kept[index]) != words \
                and takes_two_user_turns(self.engine.tokenizer):  # fmt: skip
            kept = split_own_turn(kept, index, words)  # the recall searches with the user's words alone
        return _Call(to_chat_messages(self._extend_messages(kept)), prepared.kwargs, prepared, last_user, write)

    # ------------------------------------------------------------------ sessions
    def _session_writer(self, user_id: str | None, thread_id: str | None = None) -> Any:
        """Evicted turns that were not written (the index was down) are written with the write target of the
        conversation's last call that writes (before 2026-12-06 they were never written)."""
        return None if self.store is None or user_id is None else EvictedTurns(self.store)

    def _session_for(self, session: Any, call: PreparedCall) -> Any:
        """The session's writer takes the call's write target (kept when the call writes nothing)."""
        if isinstance(session.writer, EvictedTurns) and call.write_target is not None:
            session.writer.target = call.write_target
        return session

    # ------------------------------------------------------------------ responses
    def _raw(self, result: RecallResult, written: Mapping[str, Any] | None = None) -> dict[str, Any]:
        return {
            "finish_reason": result.finish_reason,
            "model_name": self.metadata.model_name,
            "usage": usage_dict(result),
            "recalls": recall_dicts(result),
            "session": asdict(result.session) if result.session is not None else None,
            **(written or {}),
        }

    def _completion(self, result: RecallResult, written: Mapping[str, Any] | None = None) -> CompletionResponse:
        return CompletionResponse(
            text=result.text, raw=self._raw(result, written), additional_kwargs=usage_dict(result)
        )

    def _chat_response(self, result: RecallResult, written: Mapping[str, Any] | None = None) -> ChatResponse:
        message = assistant_message(result.text, result)
        return ChatResponse(message=message, raw=self._raw(result, written), additional_kwargs=usage_dict(result))

    def _chunk_builders(self, call: _Call) -> tuple[Callable[[RecallResult], None], dict[str, Any]]:
        """A stream's ``finish`` (writes the exchange) and the dict it fills for the last chunk's ``raw``."""
        written: dict[str, Any] = {}
        return (lambda result: written.update(self._remember(call, result))), written

    def _remember_unanswered(self, call: _Call) -> None:
        """A reply that did not come whole: the user's turn is written (:func:`recall_core.remember.write_unanswered`)."""
        prepared = call.prepared
        # Not written (call.write None): the user's turn is marked all the same, never to be written.
        if call.write is None:
            store, user_id, roles, session_id, questions = None, None, ("user",), None, False
        else:
            store, (user_id, roles, session_id, questions) = self.store, call.write
        write_unanswered(store, user_id, [{"role": "user", "content": call.last_user or ""}], roles, questions,
                         session_id, lambda done: prepared is not None and self._mark_written(prepared, done))  # fmt: skip

    def _cancellable(self, call: _Call) -> tuple[_Call, threading.Event]:
        """The call with a stop event that ends its generation at the next token (a cancelled ``achat``)."""
        if call.prepared is not None:
            prepared, event = call.prepared.cancellable()
            return replace(call, kwargs=prepared.kwargs, prepared=prepared), event
        kwargs, event = cancellable_kwargs(call.kwargs)
        return replace(call, kwargs=kwargs), event

    async def _arun_and_remember(self, call: _Call) -> tuple[RecallResult, dict[str, Any]]:
        """:meth:`_run_and_remember` in a worker thread; a cancelled task stops the generation at the next
        token and writes the user's turn (before 2026-12-06 the generation went on to its end)."""
        call, cancel = self._cancellable(call)
        try:
            result = await run_cancellable(cancel, self._run, call)
        except BaseException as error:
            if unanswered(error, streamed=False):
                remember_later(self._remember_unanswered, call)
            raise
        return result, await asyncio.to_thread(self._remember, call, result)

    def _completion_stream(self, stream: Any, call: _Call) -> CompletionResponseGen:
        finish, written = self._chunk_builders(call)

        def chunk(text: str, delta: str, result: RecallResult | None) -> CompletionResponse:
            if result is None:
                return CompletionResponse(text=text, delta=delta)
            return CompletionResponse(text=text, delta=delta, raw=self._raw(result, written),
                                      additional_kwargs=usage_dict(result))  # fmt: skip

        chunks_of = achunks if isinstance(stream, AsyncRecallStream) else chunks
        return chunks_of(stream, chunk, finish, lambda: self._remember_unanswered(call))  # type: ignore[return-value,operator]

    def _chat_stream_of(self, stream: Any, call: _Call, run_async: bool) -> Any:
        finish, written = self._chunk_builders(call)

        def chunk(text: str, delta: str, result: RecallResult | None) -> ChatResponse:
            message = assistant_message(text, result)
            if result is None:
                return ChatResponse(message=message, delta=delta)
            return ChatResponse(message=message, delta=delta, raw=self._raw(result, written),
                                additional_kwargs=usage_dict(result))  # fmt: skip

        return (achunks if run_async else chunks)(stream, chunk, finish, lambda: self._remember_unanswered(call))

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
    def _run_and_remember(self, call: _Call) -> tuple[RecallResult, dict[str, Any]]:
        result = self._run(call)
        return result, self._remember(call, result)

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return self._completion(*self._run_and_remember(self._completion_call(prompt, formatted, kwargs)))

    @llm_completion_callback()
    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponseGen:
        call = self._completion_call(
            prompt, formatted, kwargs
        )  # bad arguments raise here, not at first next()
        return self._completion_stream(self.engine.stream(call.prompt, **call.kwargs), call)

    @llm_completion_callback()
    async def acomplete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        call = self._completion_call(prompt, formatted, kwargs)
        return self._completion(*await self._arun_and_remember(call))

    @llm_completion_callback()
    async def astream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseAsyncGen:
        call = self._completion_call(prompt, formatted, kwargs)
        return self._completion_stream(self.engine.astream(call.prompt, **call.kwargs), call)  # type: ignore[return-value]

    # ------------------------------------------------------------------ chat
    @llm_chat_callback()
    def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        return self._chat_response(*self._run_and_remember(self._chat_call(messages, kwargs)))

    @llm_chat_callback()
    def stream_chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponseGen:
        call = self._chat_call(messages, kwargs)
        return self._chat_stream_of(self._stream(call), call, run_async=False)

    @llm_chat_callback()
    async def achat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        call = self._chat_call(messages, kwargs)
        return self._chat_response(*await self._arun_and_remember(call))

    @llm_chat_callback()
    async def astream_chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponseAsyncGen:
        call = self._chat_call(messages, kwargs)
        return self._chat_stream_of(self._astream(call), call, run_async=True)

    # ------------------------------------------------------------------ function calling
    def _prepare_chat_with_tools(
        self,
        tools: Sequence[BaseTool],
        user_msg: str | ChatMessage | None = None,
        chat_history: list[ChatMessage] | None = None,
        verbose: bool = False,
        allow_parallel_tool_calls: bool = False,
        tool_required: bool = False,
        tool_choice: str | dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> dict[str, Any]:
        """The ``chat`` arguments for a turn with ``tools``.

        ``tool_choice`` (a tool's name, ``"auto"``, ``"none"``, ``"any"`` / ``"required"``) wins
        over ``tool_required`` (``"any"``). A forced choice is enforced by constrained
        decoding. Raises ``ValueError`` for a schema the grammar engine cannot compile
        (naming the tool) and for a ``tool_choice`` naming a tool that is not given.
        """
        messages = list(chat_history or [])
        if user_msg is not None:
            messages.append(ChatMessage(role=MessageRole.USER, content=user_msg) if isinstance(user_msg, str) else user_msg)
        choice = tool_choice if tool_choice is not None else ("any" if tool_required else "auto")
        specs = check_tools([tool.metadata.to_openai_tool(skip_length_check=True) for tool in tools])
        if not specs:
            return {"messages": messages, **kwargs}
        check_tool_schemas(specs)
        chosen_tools(specs, choice)  # an unknown name raises here
        return {
            "messages": messages, "tools": specs, "tool_choice": choice,
            "parallel_tool_calls": allow_parallel_tool_calls, **kwargs,
        }  # fmt: skip

    def get_tool_calls_from_response(
        self, response: ChatResponse, error_on_no_tool_call: bool = True, **kwargs: Any
    ) -> list[ToolSelection]:
        """The reply's calls as ``ToolSelection`` s (from its ``ToolCallBlock`` s).

        With ``error_on_no_tool_call``, a reply without a valid call raises ``ValueError``
        (naming the malformed calls, if the model wrote any).
        """
        selections = [
            ToolSelection(tool_id=block.tool_call_id or "", tool_name=block.tool_name,
                          tool_kwargs=block.tool_kwargs if isinstance(block.tool_kwargs, dict) else {})
            for block in response.message.blocks
            if isinstance(block, ToolCallBlock)
        ]  # fmt: skip
        if not selections and error_on_no_tool_call:
            invalid = response.message.additional_kwargs.get("invalid_tool_calls") or []
            detail = "; ".join(f"{c['name']}: {c['error']}" for c in invalid)
            raise ValueError(f"expected at least one tool call, got none{f' ({detail})' if detail else ''}")
        return selections

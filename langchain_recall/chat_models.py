"""`ChatRecall`: a LangChain chat model (``BaseChatModel``) over the recall engine."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.base import LangSmithParams
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    ChatMessage,
    FunctionMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.messages.ai import UsageMetadata
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.runnables.config import ensure_config
from langchain_core.tools import BaseTool
from langchain_core.tracers._streaming import _StreamingCallbackHandler

from recall_core import RecallResult
from recall_core.integration import (
    WRITE_MEMORY,
    WRITE_QUESTIONS,
    PreparedCall,
    remember_later,
    run_cancellable,
    stop_stream,
    unanswered,
    with_recall_policy,
)
from recall_core.memory.text.questions import turn_to_write
from recall_core.prompt import chat_prompt_ids
from recall_core.remember import last_exchange, write_reported, write_turns, write_unanswered
from recall_core.structured.tools import supports_tools

from ._common import (
    LANGCHAIN_CALL_ARGUMENTS,
    MODEL_CONFIG,
    RecallSettings,
    astream_chunks,
    astreamed_result,
    result_metadata,
    stream_chunks,
    streamed_result,
    token_usage,
)
from ._tools import (
    StructuredOutputMethod,
    assistant_tool_calls,
    message_tool_calls,
    openai_tools,
    structured_output,
    tool_call_chunks,
)

_ROLES: dict[type[BaseMessage], str] = {
    HumanMessage: "user",
    AIMessage: "assistant",
    SystemMessage: "system",
    ToolMessage: "tool",
    FunctionMessage: "function",
}


def to_chat_messages(messages: Sequence[BaseMessage]) -> list[dict[str, Any]]:
    """LangChain messages as ``{"role", "content"}`` dicts for the tokenizer's chat template.

    Content must be text (a string, or text blocks); an ``AIMessage``'s ``tool_calls`` and a
    ``ToolMessage``'s ``tool_call_id`` / ``name`` go along in the keys chat templates read
    (other ``name`` fields are left out). Raises ``ValueError`` naming the message otherwise.
    """
    out: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        if isinstance(message, ChatMessage):
            role = message.role
        else:
            role = next((r for cls, r in _ROLES.items() if isinstance(message, cls)), None)
        if role is None:
            raise ValueError(
                f"message {index} is a {type(message).__name__}, which ChatRecall cannot put in a chat template"
            )
        item: dict[str, Any] = {"role": role, "content": _text_content(index, message)}
        if isinstance(message, AIMessage) and message.tool_calls:
            item["tool_calls"] = assistant_tool_calls(message)
        elif isinstance(message, ToolMessage):
            item["tool_call_id"] = message.tool_call_id
            if message.name:
                item["name"] = message.name
        out.append(item)
    return out


def _text_content(index: int, message: BaseMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    parts = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif isinstance(block, dict) and block.get("type") in ("reasoning", "thinking"):
            continue  # a model's own reasoning in the history is not part of the conversation
        elif isinstance(block, dict) and block.get("type") in ("tool_use", "tool_call") and isinstance(message, AIMessage):
            continue  # the call itself travels in tool_calls
        else:
            kind = block.get("type") if isinstance(block, dict) else type(block).__name__
            raise ValueError(
                f"message {index} ({type(message).__name__}) has a {kind!r} content block: "
                "ChatRecall takes text only (the local model has no image, audio or file input)"
            )
    return "".join(parts)


def _text_chunk(piece: str) -> ChatGenerationChunk:
    return ChatGenerationChunk(message=AIMessageChunk(content=piece))


def usage_metadata(result: RecallResult) -> UsageMetadata:
    """LangChain usage: input = prompt + injected memory (both read, not generated)."""
    usage = result.usage
    input_tokens = usage.prompt_tokens + usage.injected_tokens
    return UsageMetadata(
        input_tokens=input_tokens,
        output_tokens=usage.generated_tokens,
        total_tokens=input_tokens + usage.generated_tokens,
        # cache_read: prompt tokens a session read from its KV cache instead of computing them.
        input_token_details={"recall_injected": usage.injected_tokens, "cache_read": usage.cached_tokens},  # type: ignore[typeddict-unknown-key]
    )


class ChatRecall(RecallSettings, BaseChatModel):
    """A local Hugging Face chat model with long-term memory recalled *inside* generation.

    Messages go through the tokenizer's chat template. With ``recall="auto"`` (the
    default) the engine puts ``<recall>`` where the reply to the last user turn consults
    memory (``RecallConfig.recall_position``); there the loop searches the memory with that
    turn and injects the best memory into the KV cache. With ``"explicit"`` only markers
    written in the messages trigger a recall; with ``"model"`` the model's own ``<recall>``
    does, and with ``"uncertainty"`` the loop recalls before a token the model is unsure of
    (``recall=``, at init or per call, is short for ``recall_config``'s ``recall_policy`` and
    is folded into it); with ``"off"`` nothing is recalled (``recall="off"`` for one call is the
    CLI's ``--no-memory``). With a ``store`` and ``write_memory=True`` (the default) every
    exchange (the last user message and the reply) is written to the user's memory after the
    reply, so later sessions recall it; ``write_memory=False`` for one call leaves that exchange
    out (also when the session's cache evicts it later). Memories are recorded with
    ``session_id``, else the call's thread (``thread_id`` / ``configurable.thread_id``).

    Example::

        from langchain_recall import ChatRecall
        from recall_core.memory import MemoryStore

        chat = ChatRecall(store=MemoryStore.local(), user_id="ada", max_tokens=64)
        chat.invoke("My dog is called Biscuit.")
        chat.invoke("What is my dog called?")  # recalled from memory, not from the prompt

    The ``AIMessage`` has ``usage_metadata`` (input tokens include the injected memory,
    also given as ``input_token_details["recall_injected"]``) and ``response_metadata``
    with ``finish_reason``, ``model_name`` and ``recalls`` (the trace).

    **KV-cache sessions.** Each (user, thread) keeps its conversation's KV cache between
    calls (a :class:`recall_core.RecallSession`), so a call prefills only the messages that
    are new; the thread is ``thread_id=`` or, LangGraph-style, ``config["configurable"]["thread_id"]``
    (``user_id`` likewise). A call without a thread id is prefilled afresh. ``sessions`` (a :class:`recall_core.SessionConfig`) bounds each
    cache (``max_cache_tokens``: old exchanges are evicted and, with ``write_memory``,
    written to the user's memory) and how many sessions are kept (LRU, ``max_sessions`` and
    ``max_bytes``); ``sessions=None`` prefills every call afresh. ``reset()`` and
    ``close_session(thread_id)`` free them. ``usage_metadata.input_token_details["cache_read"]``
    counts the prompt tokens read from the cache.

    Per-call keyword arguments: any transformers ``generate()`` option (``max_tokens``,
    ``temperature``, ``top_p``...), plus ``user_id``, ``thread_id``, ``session_id`` (the
    session recorded with written memories), ``write_memory``, ``memory``, ``recall``,
    ``recall_config``, ``timeout``, ``on_recall``. Unknown names raise ``TypeError``.
    """

    model_config = MODEL_CONFIG
    call_arguments = LANGCHAIN_CALL_ARGUMENTS | {WRITE_MEMORY}

    write_memory: bool = True
    """With a ``store``: write each exchange (last user message and reply) to the user's memory
    (a call may pass ``write_memory=`` to decide for itself)."""
    write_roles: tuple[str, ...] = ("user", "assistant")
    """Which side of the exchange is written; ``("user",)`` keeps only what the user said
    (a small model's replies are rarely worth remembering)."""
    write_questions: bool = WRITE_QUESTIONS
    """Write the user's questions too? Off by default: a user message is written without its
    questions ("I'm moving to Lyon, any tips?" as "I'm moving to Lyon."), and not at all when it
    only asks: a question holds no fact, and written it comes back as a note at the next
    question like it, in the place of the turn that holds the answer (docs/benchmarks/hygiene.md)."""
    session_id: str | None = None
    """Session id recorded with the memories this model writes (a call may pass another); ``None``:
    the call's thread id, so a LangGraph thread is a session of the memory too."""

    @property
    def _llm_type(self) -> str:
        return "recall-chat"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {
            **self._common_identifying_params(),
            "write_memory": self.write_memory,
            "write_roles": self.write_roles,
            "write_questions": self.write_questions,
        }

    def _get_ls_params(self, stop: list[str] | None = None, **kwargs: Any) -> LangSmithParams:
        return self._recall_ls_params("chat", stop, kwargs)

    # ------------------------------------------------------------------ sessions
    def _session_writer(self, user_id: str | None, thread_id: str | None = None) -> Any:
        """Evicted turns go to the user's memory when this model writes memory at all (``write_memory``).

        The store is the one the session was made with (assigning another drops the sessions); the
        write settings are read when a turn is written: until 2026-12-07 they were fixed when the
        session was made, so ``chat.write_memory = False`` after a first call still wrote (a reviewer)."""
        if self.store is None or user_id is None:
            return None
        return _EvictedTurns(self, self.store, user_id, thread_id)

    def _session_for(self, session: Any, call: PreparedCall) -> Any:
        """Turns the session evicts are written under the session id the latest call writes with
        (``session_id=`` or ``configurable.session_id``; until 2026-12-07 they went under the thread
        id while the call's own exchange went under its ``session_id``, a reviewer)."""
        if isinstance(session.writer, _EvictedTurns):
            session.writer.call_session_id = call.session_id
        return session

    # ------------------------------------------------------------------ helpers
    def _chat_result(self, result: RecallResult, written: dict[str, Any]) -> ChatResult:
        metadata = {**result_metadata(result, self.resolved_model_name), **written}
        message = AIMessage(
            content=result.text, usage_metadata=usage_metadata(result), response_metadata=metadata,
            **message_tool_calls(result),
        )  # fmt: skip
        generation = ChatGeneration(message=message, generation_info={"finish_reason": result.finish_reason})
        return ChatResult(
            generations=[generation],
            llm_output={"token_usage": token_usage([result]), "model_name": self.resolved_model_name},
        )

    def _should_stream(self, *, async_api: bool, run_manager: Any = None, **kwargs: Any) -> bool:
        """LangChain's choice, except that ``streaming=True`` alone does not send a call down
        LangChain's stream path: :meth:`_generate` streams to the callbacks itself and keeps the
        usage, which ``generate_from_stream`` drops (``llm_output["token_usage"]`` was ``{}``, a
        reviewer found, 2026-12-07). ``stream()``, ``stream=True`` and a streaming event handler
        (``astream_events``) still stream."""
        if self.streaming and not kwargs.get("stream"):
            handlers = run_manager.handlers if run_manager else []
            return not self._streaming_disabled(**kwargs) and any(isinstance(h, _StreamingCallbackHandler) for h in handlers)
        return super()._should_stream(async_api=async_api, run_manager=run_manager, **kwargs)

    def _combine_llm_outputs(self, llm_outputs: list[dict[str, Any] | None]) -> dict[str, Any]:
        """A batch's ``llm_output``: the calls' ``token_usage`` summed (the base class returns ``{}``:
        until 2026-12-07 ``generate(...).llm_output`` was always empty, a reviewer found)."""
        usage: dict[str, int] = {}
        for output in llm_outputs:
            for name, value in ((output or {}).get("token_usage") or {}).items():
                usage[name] = usage.get(name, 0) + value
        return {"token_usage": usage, "model_name": self.resolved_model_name}

    def _last_chunk(self, result: RecallResult, written: dict[str, Any]) -> ChatGenerationChunk:
        message = AIMessageChunk(
            content="",
            tool_call_chunks=tool_call_chunks(result),
            usage_metadata=usage_metadata(result),
            response_metadata={**result_metadata(result, self.resolved_model_name), **written},
            chunk_position="last",
        )
        return ChatGenerationChunk(message=message, generation_info={"finish_reason": result.finish_reason})

    def _remember(
        self, call: PreparedCall, messages: list[dict[str, str]], result: RecallResult
    ) -> dict[str, Any]:
        """Write the exchange; return what goes into ``response_metadata`` about it.

        A failed write does not cost the user the reply they already have: it is reported
        (a ``RuntimeWarning`` and ``memory_write_error``) instead of raised. The store's
        journal keeps what it accepted, for ``repair`` to index later.
        """
        write = self.write_memory if call.write_memory is None else call.write_memory
        if not write:  # nor later, when the session's cache evicts this exchange
            self._mark_written(call, ("user", "assistant"))
        if not (write and self.store is not None and call.user_id is not None):
            return {}
        exchange = last_exchange(messages, result.text, self.write_roles, self.write_questions)
        session_id = call.session_id or self.session_id or call.thread_id
        report = write_reported(self.store, call.user_id, exchange, session_id=session_id)
        # what is done with is not written again at an eviction: a question left out, a turn refused
        self._mark_written(call, report.done(self.write_roles))
        return report.metadata

    def _remember_unanswered(self, call: PreparedCall, messages: list[dict[str, str]]) -> None:
        """A reply that did not come whole: the user's turn is written (:func:`recall_core.remember.write_unanswered`)."""
        write = self.write_memory if call.write_memory is None else call.write_memory
        # Not written: with write_memory off the user's turn is marked too (never to be written), without
        # a store or user only the reply.
        store = self.store if write and call.user_id is not None else None
        roles = self.write_roles if store is not None else ("user",) if not write else ()
        session_id = call.session_id or self.session_id or call.thread_id
        write_unanswered(store, call.user_id, messages, roles, self.write_questions, session_id,
                         lambda done: self._mark_written(call, done))  # fmt: skip

    def _stream_of(self, chat: list[dict[str, Any]], call: PreparedCall, run_async: bool = False) -> Any:
        """The engine's stream of this call (with tools, the call markup is held back from the text)."""
        start: Callable[..., Any] = self._chat_astream if run_async else self._chat_stream
        return start(call, chat)

    # ------------------------------------------------------------------ tools and structured output
    def get_num_tokens_from_messages(self, messages: list[BaseMessage], tools: Sequence[Any] | None = None) -> int:
        """How many ids the model reads for ``messages`` (and ``tools``): rendered as a call renders
        them, with the chat template, the recall system prompt and ``<recall>`` (where ``"ask"`` or
        ``"model"`` may add one, counted), under the recall policy a call would run with (the
        instance's, or a running config's ``configurable`` ``recall``). LangChain's count of its
        "Human: ..." text was 4 of 32 for one message, so ``trim_messages(token_counter=chat)``
        kept prompts past the context window (until 2026-12-07: a reviewer). With
        ``custom_get_token_ids``, LangChain's count by it. Injected notes are not counted."""
        if self.custom_get_token_ids is not None:
            return super().get_num_tokens_from_messages(messages, tools)
        if not messages:
            return 0  # as LangChain's count (a call refuses no messages)
        engine = self.engine
        configurable = ensure_config().get("configurable") or {}
        config = with_recall_policy(self.recall_config or engine.config, configurable.get("recall"))
        specs = openai_tools(tools, None)[0] if tools else None
        # a template without tool support is given the tools in its system message, under a forced choice
        plan = engine.plan(to_chat_messages(messages), tools=specs,
                           tool_choice=None if not specs or supports_tools(engine.tokenizer) else "any")  # fmt: skip
        policies = [config.recall_policy] + (["auto"] if config.recall_policy in ("ask", "model") else [])
        return max(len(chat_prompt_ids(engine.tokenizer, plan.prompt, policy, config.recall_position,
                                       config.system_prompt, tools=plan.template_tools))
                   + (policy == "model") for policy in policies)  # fmt: skip

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | bool | dict[str, Any] | None = None,
        parallel_tool_calls: bool | None = None,
        strict: bool | None = None,
        **kwargs: Any,
    ) -> Runnable[Any, AIMessage]:
        """Bind tools: they go through the chat template, and the reply's calls come back in ``tool_calls``.

        Args:
            tools: LangChain tools, functions, Pydantic models, TypedDicts or OpenAI tool dicts.
            tool_choice: ``"auto"`` / ``None`` (the model decides), ``"none"``, ``"any"`` /
                ``"required"`` / ``True`` (some call), or a tool's name. A forced choice is
                enforced by constrained decoding: even a small model writes a valid call.
            parallel_tool_calls: ``False``: one call at most (the reply's first); ``True``: several
                also under a forced choice. Not given: a forced choice makes one, the model's own
                choice as many as it writes.
            strict: accepted for compatibility: arguments always follow the tool's schema
                when a call is forced (objects take only their declared properties).

        Raises:
            ValueError: a tool whose schema the grammar engine cannot compile (naming it), a
                ``tool_choice`` naming a tool that is not bound. A model whose chat template
                has no tool support raises at the call unless ``tool_choice`` forces a call.
        """
        formatted, choice = openai_tools(tools, tool_choice)
        if parallel_tool_calls is not None:
            kwargs["parallel_tool_calls"] = parallel_tool_calls
        return super().bind(tools=formatted, tool_choice=choice, **kwargs)

    def with_structured_output(
        self,
        schema: dict[str, Any] | type,
        *,
        method: StructuredOutputMethod = "json_schema",
        include_raw: bool = False,
        strict: bool | None = None,
        **kwargs: Any,
    ) -> Runnable[Any, dict[str, Any] | Any]:
        """A runnable whose output follows ``schema`` (Pydantic class, TypedDict or JSON schema).

        Args:
            method: ``"json_schema"`` (the reply is constrained to the schema's JSON),
                ``"function_calling"`` (a forced call to a tool with the schema as
                arguments) or ``"json_mode"`` (any JSON object; describe the keys in the prompt).
            include_raw: return ``{"raw", "parsed", "parsing_error"}`` instead of raising.
            strict: accepted for compatibility (the schema is always enforced).

        A Pydantic schema gives instances, others give dicts. A reply that cannot be parsed
        (the token budget ran out mid-JSON) raises ``OutputParserException``.
        """
        if kwargs:
            raise ValueError(f"with_structured_output got unsupported arguments {sorted(kwargs)}")
        return structured_output(self, schema, method, include_raw)

    # ------------------------------------------------------------------ sync
    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        call = self._prepare(stop, kwargs)
        chat = to_chat_messages(messages)
        if self.streaming:
            try:
                result = streamed_result(self._stream_of(chat, call), _text_chunk, run_manager)  # type: ignore[arg-type]
            except BaseException as error:  # failing midway
                if unanswered(error):
                    self._remember_unanswered(call, chat)
                raise
        else:
            result = self._chat(call, chat)
        return self._chat_result(result, self._remember(call, chat, result))

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        call = self._prepare(stop, kwargs)
        chat = to_chat_messages(messages)
        stream = self._stream_of(chat, call)
        try:
            yield from stream_chunks(stream, _text_chunk, run_manager)  # type: ignore[arg-type]
        except BaseException as error:  # left early (GeneratorExit), or failing midway
            if unanswered(error):
                stop_stream(stream)
                self._remember_unanswered(call, chat)
            raise
        assert stream.result is not None
        yield self._last_chunk(stream.result, self._remember(call, chat, stream.result))

    # ------------------------------------------------------------------ async
    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        call = self._prepare(stop, kwargs)
        chat = to_chat_messages(messages)
        call, cancel = call.cancellable()
        try:
            if self.streaming:
                stream = self._stream_of(chat, call, run_async=True)
                result = await astreamed_result(stream, _text_chunk, run_manager)  # type: ignore[arg-type]
            else:
                result = await run_cancellable(cancel, self._chat, call, chat)
        except BaseException as error:
            if unanswered(error, streamed=self.streaming):
                remember_later(self._remember_unanswered, call, chat)
            raise
        written = await asyncio.to_thread(self._remember, call, chat, result)
        return self._chat_result(result, written)

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        call = self._prepare(stop, kwargs)
        chat = to_chat_messages(messages)
        stream = self._stream_of(chat, call, run_async=True)
        try:
            async for chunk in astream_chunks(stream, _text_chunk, run_manager):  # type: ignore[arg-type]
                yield chunk
        except BaseException as error:  # left early, cancelled, or failing midway
            if unanswered(error):
                stop_stream(stream)
                remember_later(self._remember_unanswered, call, chat)
            raise
        assert stream.result is not None
        written = await asyncio.to_thread(self._remember, call, chat, stream.result)
        yield self._last_chunk(stream.result, written)


class _EvictedTurns:
    """How a :class:`ChatRecall` session writes the turns it evicts: with the model's write settings
    as they are at the write, under the latest call's session id, else the model's, else the thread."""

    def __init__(self, model: ChatRecall, store: Any, user_id: str, thread_id: str | None) -> None:
        self.model, self.store, self.user_id, self.thread_id = model, store, user_id, thread_id
        #: The ``session_id`` the latest call on this session gave (``None``: it gave none).
        self.call_session_id: str | None = None

    def __call__(self, messages: Sequence[dict[str, Any]]) -> list[str]:
        model = self.model
        if not model.write_memory:  # done with, unwritten, as if the model had been made so
            return []
        session_id = self.call_session_id or model.session_id or self.thread_id
        turns = [(m["role"], turn_to_write(m["role"], str(m["content"]), model.write_questions))
                 for m in messages if m["role"] in model.write_roles]  # fmt: skip
        return write_turns(self.store, self.user_id, turns, session_id=session_id)

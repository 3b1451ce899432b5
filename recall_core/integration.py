"""Framework-neutral glue shared by the LangChain and LlamaIndex adapters.

Nothing here imports LangChain or LlamaIndex (pydantic only: both frameworks' classes are
pydantic v2 models), and nothing here is engine logic. :class:`RecallAdapterBase` declares
the settings both adapters share, once, and does what an adapter does with them (the
lazily built engine, ``from_model``, the checks at init, one call's ``generate``
arguments); the helpers below load models once per process, pick the memory for a call
and turn results into plain dicts. Generation options are read by
:mod:`recall_core.settings`, exactly as the engine reads them.
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from abc import abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any, TypeVar, get_args

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from recall_core.config import RecallConfig, RecallPolicy, SessionConfig
from recall_core.generator import Prompt, RecallGenerator
from recall_core.memory.validation import check_session, check_user_id, check_write_roles
from recall_core.models.loading import DEFAULT_MODEL_NAME, load_model
from recall_core.models.query_head import saved_query_head
from recall_core.session.pool import SessionPool
from recall_core.session.session import RecallSession
from recall_core.session.writes import CallReceipt, Writer
from recall_core.settings import check_option_names, generation_options, one_of, option_name, stop_strings
from recall_core.streaming import AsyncRecallStream, CancelCriteria, RecallStream
from recall_core.tokens import RECALL_TOKEN
from recall_core.types import Memory, RecallResult

#: What the adapters report as provider in traces (LangSmith ``ls_provider``).
PROVIDER = "recall"

#: What a reply must look like (``RecallGenerator.generate``'s own arguments, see recall_core.structured.outputs).
OUTPUT_ARGUMENTS = frozenset({"tools", "tool_choice", "response_format", "parallel_tool_calls"})
#: Per-call keyword arguments both adapters take besides ``generate()`` options.
CALL_ARGUMENTS = (
    frozenset({"user_id", "thread_id", "memory", "recall", "recall_config", "on_recall", "stop", "timeout"})
    | OUTPUT_ARGUMENTS
)
#: The per-call switch of the adapters that write what is said to long-term memory (``ChatRecall``,
#: LlamaIndex's ``RecallLLM``): ``True`` / ``False`` for this call, whatever the instance says.
WRITE_MEMORY = "write_memory"
#: What the adapters' ``write_questions`` says by default: a user message that only asks is not
#: written (``python -m benchmarks.hygiene``: written, such questions come back as notes).
WRITE_QUESTIONS = False
#: The ``generate()`` options the shared fields (and the adapter's most-new-tokens field) set.
FIELD_OPTIONS = frozenset(
    {"temperature", "max_new_tokens", "top_p", "top_k", "repetition_penalty", "max_time", "stop_strings"}
)
#: The init arguments that name the model (``model`` is LangChain's habit).
_MODEL_NAME_ARGUMENTS = ("model_name", "model")


# --------------------------------------------------------------------------- models
_MODELS: dict[tuple[Any, ...], tuple[Any, Any]] = {}
_MODELS_LOCK = threading.Lock()
_KEY_LOCKS: dict[tuple[Any, ...], threading.Lock] = {}


def shared_model(
    name_or_path: str | None = None,
    *,
    device: str | None = None,
    dtype: str | None = None,
    **model_kwargs: Any,
) -> tuple[Any, Any]:
    """``recall_core.load_model(...)``, loaded once per process for the same arguments.

    Adapters are cheap to construct (LangChain builds them per request, tests build them in
    loops); the model behind them is not, so instances that name the same model share it.
    Inference does not change a model, so sharing it between threads is safe.
    """
    key = (name_or_path, device, str(dtype), tuple(sorted((k, repr(v)) for k, v in model_kwargs.items())))
    with _MODELS_LOCK:
        if key in _MODELS:
            return _MODELS[key]
        key_lock = _KEY_LOCKS.setdefault(key, threading.Lock())
    with key_lock:  # one loader per key; others wait for it instead of loading again
        with _MODELS_LOCK:
            if key in _MODELS:
                return _MODELS[key]
        loaded = load_model(name_or_path, device=device, dtype=dtype, **model_kwargs)
        with _MODELS_LOCK:
            _MODELS[key] = loaded
        return loaded


def model_display_name(name_or_path: str | None, generator: RecallGenerator | None = None) -> str:
    """A readable model name for traces: the given name, the loaded model's, or the default's."""
    if name_or_path:
        return str(name_or_path)
    if generator is not None and generator.model is None:  # a served backend: no model in process
        return str(getattr(generator, "model_name", None) or DEFAULT_MODEL_NAME)
    if generator is not None:
        name = getattr(generator.model.config, "name_or_path", None) or getattr(
            generator.model, "name_or_path", None
        )
        if name:
            name = str(name).rstrip("/")
            return DEFAULT_MODEL_NAME if name.endswith(DEFAULT_MODEL_NAME) else name
        return type(generator.model).__name__
    return DEFAULT_MODEL_NAME


def build_generator(
    *,
    generator: RecallGenerator | None,
    name_or_path: str | None,
    device: str | None,
    dtype: str | None,
    config: RecallConfig | None,
) -> RecallGenerator:
    """The adapter's generator: the one given, or one over the shared model named."""
    if generator is not None:
        return generator
    model, tokenizer = shared_model(name_or_path, device=device, dtype=dtype)
    return RecallGenerator(model, tokenizer, config=config, query_head=saved_query_head(model))


# --------------------------------------------------------------------------- memory
def resolve_memory(memory: Memory | None, store: Any, user_id: str | None) -> Memory | None:
    """The memory searched at ``<recall>``: ``memory`` itself, or ``store.for_user(user_id)``."""
    if memory is not None:
        return memory
    if store is None:
        return None
    if user_id is None:
        raise ValueError(
            "a memory store is attached but no user_id was given: pass user_id= (at init or per call)"
        )
    return store.for_user(user_id)


def check_generator(generator: Any) -> None:
    if generator is not None and not isinstance(generator, RecallGenerator):
        raise TypeError(f"generator must be a recall_core.RecallGenerator, got {type(generator).__name__}")


def check_memory_arguments(memory: Any, store: Any) -> None:
    if memory is not None and store is not None:
        raise ValueError("give either memory= (anything with search()) or store= with user_id=, not both")
    if memory is not None and not callable(getattr(memory, "search", None)):
        raise TypeError(f"memory must have a search(query, k) method, got {type(memory).__name__}")
    if store is not None and not callable(getattr(store, "for_user", None)):
        raise TypeError(
            f"store must be a recall_core.memory.MemoryStore (with for_user()), got {type(store).__name__}"
        )


def check_writing(adapter: Any) -> None:
    """Check at init what an adapter writes memory with (``user_id``, ``write_roles``, ``session_id``,
    those it has): a bad one would otherwise fail every write later, or write nothing."""
    if getattr(adapter, "user_id", None) is not None:
        check_user_id(adapter.user_id)
    if hasattr(adapter, "write_roles"):
        check_write_roles(adapter.write_roles)
    if getattr(adapter, "session_id", None) is not None:
        check_session(adapter.session_id)


def check_thread_id(thread_id: object) -> str | None:
    """A call's ``thread_id`` as the string it is keyed and recorded by (``None``: no conversation).

    A ``uuid.UUID`` (LangGraph's habit) or an int is its ``str()``, as LangGraph's checkpointers take it;
    else it must be a session id (without ``session_id`` it is the session its memories are written
    under). Before 2026-12-06 a bad one was taken, and every write of its calls was refused.
    """
    if thread_id is None:
        return None
    if isinstance(thread_id, uuid.UUID) or (isinstance(thread_id, int) and not isinstance(thread_id, bool)):
        return str(thread_id)
    try:
        if isinstance(thread_id, str):
            return check_session(thread_id)
    except ValueError:
        pass
    raise ValueError(f"thread_id must be a non-empty string with a visible character, valid UTF-8 and no NUL "
                     f"(a uuid.UUID or an int is its str()), got {type(thread_id).__name__} {thread_id!r}")


def mark_for_recall(prompt: str, config: RecallConfig) -> str:
    """A raw text prompt under the ``"auto"`` policy: ``<recall>`` at its end, unless it has one.

    (Chat messages need no marker here: the engine places it by ``recall_position``.)
    """
    if config.recall_policy == "auto" and RECALL_TOKEN not in prompt:
        return prompt + RECALL_TOKEN
    return prompt


# --------------------------------------------------------------------------- results
def recall_dicts(result: RecallResult) -> list[dict[str, Any]]:
    """The recall trace as plain dicts (JSON-friendly), with ``injected`` spelled out."""
    out = []
    for recall in result.recalls:
        item = asdict(recall)
        item["candidates"] = [list(c) for c in recall.candidates]
        item["memories"] = [list(m) for m in recall.memories]
        item["injected"] = recall.injected
        out.append(item)
    return out


def usage_dict(result: RecallResult) -> dict[str, int]:
    usage = result.usage
    return {
        "prompt_tokens": usage.prompt_tokens,
        "injected_tokens": usage.injected_tokens,
        "generated_tokens": usage.generated_tokens,
        "total_tokens": usage.total_tokens,
    }


# --------------------------------------------------------------------------- the recall shortcut
def with_recall_policy(config: RecallConfig | None, recall: str | None) -> RecallConfig | None:
    """``config`` with the ``recall`` shortcut applied: the one place the shortcut is resolved.

    ``recall="auto"`` / ``"explicit"`` / ``"off"``... is ``RecallConfig.recall_policy``, said briefly; the
    adapters fold it into their ``recall_config`` at init and into the call's config per
    call, and keep no ``recall`` of their own. ``None`` leaves ``config`` as it is.
    """
    if config is not None and not isinstance(config, RecallConfig):
        raise TypeError(f"recall_config must be a recall_core.RecallConfig, got {type(config).__name__}")
    if recall is None:
        return config
    one_of("recall", recall, get_args(RecallPolicy))
    config = config or RecallConfig()
    return config if config.recall_policy == recall else config.replace(recall_policy=recall)


# --------------------------------------------------------------------------- adapter classes
@dataclass
class PreparedCall:
    """Everything one engine call needs, resolved from the instance and the call's kwargs."""

    kwargs: dict[str, Any]
    user_id: str | None
    session_id: str | None
    config: RecallConfig
    thread_id: str | None = None
    #: The call's ``write_memory=`` (``None``: the instance decides).
    write_memory: bool | None = None
    #: The call's own messages in its session (filled by the session), the ones marked written.
    receipt: CallReceipt = field(default_factory=CallReceipt)
    #: Where the adapter writes this call's turns, in the adapter's own terms (LlamaIndex's ``RecallLLM``:
    #: its write target); the call's session is told it before the reply (:meth:`RecallAdapterBase._session_for`).
    write_target: Any = None

    @property
    def session_key(self) -> tuple[str | None, str | None]:
        """Which KV session the call continues: one per (user, thread)."""
        return self.user_id, self.thread_id

    def cancellable(self) -> tuple[PreparedCall, threading.Event]:
        """This call with a stop event: setting it stops the generation at the next token
        (``finish_reason="cancelled"``), as leaving a stream early does (:func:`run_cancellable`)."""
        kwargs, event = cancellable_kwargs(self.kwargs)
        return replace(self, kwargs=kwargs), event


def cancellable_kwargs(kwargs: Mapping[str, Any]) -> tuple[dict[str, Any], threading.Event]:
    """A call's ``generate()`` arguments with a stop event: setting it stops the generation at the
    next token (a :class:`~recall_core.streaming.CancelCriteria` among its ``stopping_criteria``)."""
    event = threading.Event()
    return {**kwargs, "stopping_criteria": [*(kwargs.get("stopping_criteria") or []), CancelCriteria(event)]}, event


def unanswered(error: BaseException, streamed: bool = True) -> bool:
    """Whether a call that raised ``error`` leaves a user's turn without its reply, to be written alone:
    a stream left early (``GeneratorExit``), a cancelled call, a stream failing midway (not a call
    refused for its input, ``ValueError`` / ``TypeError``, nor a plain call's error: nothing was shown)."""
    if isinstance(error, (GeneratorExit, asyncio.CancelledError)):
        return True
    return streamed and isinstance(error, Exception) and not isinstance(error, (ValueError, TypeError))


def stop_stream(stream: Any) -> None:
    """Stop the generation of a stream left early at its next token (a ``ContentStream`` 's too), before the
    adapter writes the user's turn: the session then keeps only what was handed on (a stream's own
    ``finally`` may run later, when its iterator is collected)."""
    cancel = getattr(getattr(stream, "stream", stream), "cancel", None)
    if callable(cancel):
        cancel()


_Result = TypeVar("_Result")


async def run_cancellable(cancel: threading.Event, work: Callable[..., _Result], *args: Any) -> _Result:
    """``await asyncio.to_thread(work, *args)`` that a cancelled task stops: ``cancel`` is set (the
    generation stops at its next token) and the thread is waited for, so that nothing runs on
    after the ``CancelledError``. Before 2026-12-06 a cancelled ``ainvoke`` / ``achat`` went on
    generating to the end in its thread, and its session kept the whole reply."""
    task = asyncio.ensure_future(asyncio.to_thread(work, *args))
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        cancel.set()
        # The token being generated takes milliseconds; a call still waiting for its session (another
        # call generating) is not waited for: it finds ``cancel`` set and returns at its first token.
        await asyncio.wait([task], timeout=CANCEL_WAIT_S)
        if task.done() and not task.cancelled():
            task.exception()  # retrieved: the cancellation is what the caller sees
        else:
            task.add_done_callback(lambda done: done.cancelled() or done.exception())
        raise


def remember_later(work: Callable[..., Any], *args: Any) -> None:
    """Run ``work(*args)`` (writing a cancelled call's user turn) in a worker thread without waiting
    for it: marking the turn written waits for the call's session, which a call queued before this
    one may hold for its whole generation, and the ``CancelledError`` must not wait for that. A
    failure to write warns (``work``'s own doing); ``asyncio.run`` waits for it before returning."""
    asyncio.get_running_loop().run_in_executor(None, work, *args)


#: Seconds a cancelled call waits for its thread to stop (the token in progress) before the
#: ``CancelledError`` reaches the caller (a review measured 3.1 s for a call queued behind another).
CANCEL_WAIT_S = 0.5


_Adapter = TypeVar("_Adapter", bound="RecallAdapterBase")


class RecallAdapterBase(BaseModel):
    """The settings both adapters share, and what an adapter does with them.

    An adapter class inherits this and its framework's LLM class, declares the field that
    holds the most new tokens and the one that holds any other ``generate()`` options
    under its framework's names, and says which they are by implementing
    :meth:`_max_new_tokens` and :meth:`_extra_options`.

    ``recall="auto"`` / ``"explicit"`` / ``"off"``... is accepted at init and per call as a shortcut
    for ``recall_config``'s ``recall_policy`` (see :func:`with_recall_policy`); it is not a field.
    ``recall="off"`` for one call answers without memory (the CLI's ``--no-memory``).
    """

    model_config = ConfigDict(extra="forbid", protected_namespaces=(), arbitrary_types_allowed=True)

    model_name: str | None = Field(
        default=None,
        validation_alias=AliasChoices(*_MODEL_NAME_ARGUMENTS),
        description="Hugging Face model id or local folder (also accepted as model=); None is the embedded "
        "offline default (SmolLM2-135M-Instruct). With generator=, only a label for traces.",
    )
    generator: RecallGenerator | None = Field(
        default=None, exclude=True, description="An existing recall_core.RecallGenerator to use instead of loading."
    )
    device: str | None = Field(default=None, description="'cpu', 'cuda', 'cuda:1'...; default CUDA when available.")
    dtype: str | None = Field(
        default=None, description="'float32', 'bfloat16'...; default float32 on CPU, bfloat16 on CUDA."
    )
    store: Any = Field(
        default=None, exclude=True,
        description="A recall_core.memory.MemoryStore; each call searches store.for_user(user_id).",
    )  # fmt: skip
    user_id: str | None = Field(
        default=None, description="Whose memory to use with store (a call may pass another user_id=)."
    )
    memory: Any = Field(
        default=None, exclude=True,
        description="Instead of store: any object with search(RecallQuery, k) (the engine's Memory).",
    )  # fmt: skip
    recall_config: RecallConfig | None = Field(
        default=None, exclude=True,
        description="How the loop searches, chooses and injects memories (recall_core.RecallConfig); "
        "None: the generator's.",
    )  # fmt: skip
    temperature: float | None = Field(
        default=None, description="0 or None decodes greedily (deterministic); above 0 samples at that temperature."
    )
    top_p: float | None = None
    top_k: int | None = None
    repetition_penalty: float | None = None
    stop: list[str] | None = Field(
        default=None,
        validation_alias=AliasChoices("stop", "stop_sequences"),
        description="Stop strings (also accepted as stop_sequences=): generation ends at the first one, "
        "which is cut from the output.",
    )
    timeout: float | None = Field(
        default=None,
        description="Most seconds of decoding per call (transformers' max_time); the text so far is returned.",
    )

    sessions: SessionConfig | None = Field(
        default_factory=SessionConfig, exclude=True,
        description="Chat calls keep a KV-cache session per (user, thread) (recall_core.SessionConfig: "
        "max_cache_tokens, sink_tokens, max_sessions, max_bytes); None prefills every call afresh.",
    )  # fmt: skip

    _engine: RecallGenerator | None = PrivateAttr(default=None)
    _engine_lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _session_pool: SessionPool | None = PrivateAttr(default=None)

    # ------------------------------------------------------------------ what each adapter says
    @abstractmethod
    def _max_new_tokens(self) -> int | None:
        """The most new tokens per call, from the adapter's own field (``None``: the engine's default)."""

    @abstractmethod
    def _extra_options(self) -> tuple[str, Mapping[str, Any]]:
        """``(field name, value)`` of the adapter's field of other ``generate()`` options."""

    # ------------------------------------------------------------------ init
    @model_validator(mode="before")
    @classmethod
    def _fold_recall_shortcut(cls, data: Any) -> Any:
        if isinstance(data, dict) and "recall" in data:
            data = dict(data)
            recall = data.pop("recall")
            if recall is not None:
                generator = data.get("generator")
                own = generator.config if isinstance(generator, RecallGenerator) else None
                data["recall_config"] = with_recall_policy(data.get("recall_config") or own, recall)
        return data

    def _check_recall_settings(self, owner: str, reserved: Iterable[str] = ()) -> None:
        """Check the settings at init: memory or store, generator, the other ``generate()``
        options (none of them may set one of the ``reserved`` options), the ranges."""
        check_memory_arguments(self.memory, self.store)
        check_generator(self.generator)
        field, extra = self._extra_options()
        check_option_names(f"{owner} {field}", extra)
        clash = sorted(name for name in extra if option_name(name) in set(reserved))
        if clash:
            raise ValueError(f"set {', '.join(clash)} as field(s) of {owner}, not in {field}")
        self._instance_options()  # checks the values now rather than at the first call
        stop_strings(self.stop)
        check_writing(self)

    @classmethod
    def from_model(cls: type[_Adapter], hf_model: Any, tokenizer: Any, /, **kwargs: Any) -> _Adapter:
        """Wrap an already loaded Hugging Face causal LM and its tokenizer.

        The recall tokens are added if the model does not have them yet. ``kwargs`` are the
        usual fields (``store``, ``user_id``, the most new tokens...); the model's name may
        still be given for traces (it defaults to the model's ``name_or_path``).
        """
        if not set(_MODEL_NAME_ARGUMENTS) & kwargs.keys():
            kwargs["model_name"] = getattr(hf_model.config, "name_or_path", None) or None
        generator = RecallGenerator(hf_model, tokenizer, config=kwargs.get("recall_config"))
        return cls(generator=generator, **kwargs)

    @property
    def engine(self) -> RecallGenerator:
        """The :class:`recall_core.RecallGenerator` behind this adapter (loaded on first use)."""
        if self._engine is None:
            with self._engine_lock:
                if self._engine is None:
                    self._engine = build_generator(
                        generator=self.generator, name_or_path=self.model_name, device=self.device,
                        dtype=self.dtype, config=self.recall_config,
                    )  # fmt: skip
        return self._engine

    # ------------------------------------------------------------------ sessions
    @property
    def session_pool(self) -> SessionPool | None:
        """The KV-cache sessions of chat calls, one per (user, thread) (``None`` with ``sessions=None``)."""
        if self.sessions is None:
            return None
        if self._session_pool is None:
            with self._engine_lock:
                if self._session_pool is None:
                    config = self.sessions
                    self._session_pool = SessionPool(self._new_session, config.max_sessions, config.max_bytes)
        return self._session_pool

    def _new_session(self, key: Any) -> RecallSession:
        user_id, thread_id = key
        assert self.sessions is not None
        return RecallSession(self.engine, self.sessions, writer=self._session_writer(user_id, thread_id))

    def _session_writer(self, user_id: str | None, thread_id: str | None = None) -> Writer | None:
        """How a session of ``(user_id, thread_id)`` writes the turns it evicts to long-term memory
        (``None``: it does not)."""
        return None

    def _session_for(self, session: RecallSession, call: PreparedCall) -> RecallSession:
        """The call's session, about to reply: where an adapter's writes depend on the call (LlamaIndex's
        ``RecallLLM``), it tells the session's writer here."""
        return session

    def reset(self) -> None:
        """Free every KV-cache session (the long-term memory is left as it is)."""
        if self._session_pool is not None:
            self._session_pool.clear()

    def close_session(self, thread_id: str | None = None, *, user_id: str | None = None) -> bool:
        """Free the KV-cache session of ``(user_id or the instance's user_id, thread_id)``; ``False`` if none."""
        if self._session_pool is None:
            return False
        return self._session_pool.close((user_id if user_id is not None else self.user_id, check_thread_id(thread_id)))

    def _pool_for(self, call: PreparedCall) -> SessionPool | None:
        """The sessions to use for a call: none without a thread id (a call that names no
        conversation is prefilled afresh, and runs in parallel with any other). On a served backend
        the engine's prefix cache is the session: each call sends the conversation's ids."""
        if getattr(self.engine, "served", False):
            return None
        return self.session_pool if call.thread_id is not None else None

    def _chat(self, call: PreparedCall, messages: Prompt) -> RecallResult:
        """Reply to chat messages: through the session of the call's (user, thread) when there is one."""
        pool = self._pool_for(call)
        if pool is None:
            return self.engine.generate(messages, **call.kwargs)
        receipt = call.receipt
        return pool.run(call.session_key,  # type: ignore[return-value]
                        lambda session: self._session_for(session, call).reply(messages, receipt=receipt, **call.kwargs))

    def _chat_stream(self, call: PreparedCall, messages: Prompt) -> RecallStream:
        return RecallStream(self._session_runner(call), self.engine.tokenizer, messages, call.kwargs,
                            self.engine.call_stop_strings(call.kwargs))  # fmt: skip

    def _chat_astream(self, call: PreparedCall, messages: Prompt) -> AsyncRecallStream:
        return AsyncRecallStream(self._session_runner(call), self.engine.tokenizer, messages, call.kwargs,
                                 self.engine.call_stop_strings(call.kwargs))  # fmt: skip

    def _session_runner(self, call: PreparedCall) -> Any:
        """What a stream of this call runs: the engine, or the call's session in its pool."""
        pool = self._pool_for(call)
        if pool is None:
            return self.engine.generate
        receipt = call.receipt
        return lambda prompt, **kwargs: pool.run(
            call.session_key, lambda session: self._session_for(session, call).reply(prompt, receipt=receipt, **kwargs))

    def _mark_written(self, call: PreparedCall, roles: Sequence[str]) -> None:
        """Tell the call's session that the call's own exchange (its receipt's) was written to long-term
        memory. Before 2026-12-06 the session's last exchange was marked, whichever call made it."""
        pool = self._pool_for(call)
        if pool is not None and call.session_key in pool:
            pool.get(call.session_key).mark_written(roles, call.receipt)

    # ------------------------------------------------------------------ calls
    def _instance_options(self) -> dict[str, Any]:
        """The instance's ``generate()`` options: the fields over the field of other options."""
        fields = {
            "temperature": self.temperature, "max_new_tokens": self._max_new_tokens(), "top_p": self.top_p,
            "top_k": self.top_k, "repetition_penalty": self.repetition_penalty, "timeout": self.timeout,
        }  # fmt: skip
        _, extra = self._extra_options()
        set_fields = {name: value for name, value in fields.items() if value is not None}
        return {**generation_options(extra), **generation_options(set_fields)}

    def _prepare_call(
        self,
        owner: str,
        kwargs: Mapping[str, Any],
        call_arguments: Iterable[str],
        *,
        user_id: str | None,
        stop: Sequence[str] | None = None,
        policy: str | None = None,
    ) -> PreparedCall:
        """Merge the instance's settings with one call's kwargs; check the names first.

        ``user_id`` is whose memory the call searches in ``store`` (the adapter decides where
        it comes from); ``stop`` (the framework's own argument) wins over a ``stop=`` kwarg,
        which wins over the instance's; ``policy`` overrides the call's ``recall``. ``thread_id`` and
        ``session_id`` are checked before anything is generated (a bad one used to cost every write).
        """
        check_option_names(owner, kwargs, call_arguments)
        call = dict(kwargs)
        call.pop("user_id", None)
        thread_id = check_thread_id(call.pop("thread_id", None))
        session_id = call.pop("session_id", None)
        session_id = None if session_id is None else check_session(session_id)
        write_memory = call.pop(WRITE_MEMORY, None)
        if write_memory is not None and not isinstance(write_memory, bool):
            raise ValueError(f"write_memory must be True, False or None, got {write_memory!r}")
        recall = call.pop("recall", None)
        recall_config = call.pop("recall_config", None)
        memory = call.pop("memory", None)
        stop_kw = call.pop("stop", None)
        output = {name: call.pop(name) for name in OUTPUT_ARGUMENTS & call.keys()}
        options = {**self._instance_options(), **generation_options(call), **output}

        stops = stop if stop is not None else (stop_kw if stop_kw is not None else self.stop)
        if stops:
            options["stop"] = stop_strings(stops)  # a single string is one stop string, not its characters
        config = with_recall_policy(recall_config or self.recall_config or self.engine.config, policy or recall)
        options["config"] = config
        if memory is not None:
            check_memory_arguments(memory, None)
            options["memory"] = memory
        elif self.memory is not None or self.store is not None:
            options["memory"] = resolve_memory(self.memory, self.store, user_id)
        return PreparedCall(options, user_id, session_id, config, thread_id, write_memory)

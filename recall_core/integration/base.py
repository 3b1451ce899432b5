"""``RecallAdapterBase``: the settings both framework adapters share, declared once, and what an
adapter does with them (the lazily built engine, ``from_model``, the checks at init, one call's
``generate`` arguments, its KV session)."""

from __future__ import annotations

import numbers
import threading
from abc import abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar, TypeVar

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from recall_core.config import RecallConfig, SessionConfig
from recall_core.generator import Prompt, RecallGenerator
from recall_core.integration.arguments import (
    OUTPUT_ARGUMENTS,
    WRITE_MEMORY,
    check_generator,
    check_memory_arguments,
    check_thread_id,
    check_writing,
    resolve_memory,
    with_recall_policy,
)
from recall_core.integration.calls import PreparedCall
from recall_core.integration.models import build_generator
from recall_core.memory.validation import check_session, check_user_id
from recall_core.session.pool import SessionPool
from recall_core.session.session import RecallSession
from recall_core.session.writes import Writer
from recall_core.settings import check_option_names, generation_options, option_name, stop_strings
from recall_core.streaming import AsyncRecallStream, RecallStream
from recall_core.types import RecallResult

#: The init arguments that name the model (``model`` is LangChain's habit).
_MODEL_NAME_ARGUMENTS = ("model_name", "model")

_Adapter = TypeVar("_Adapter", bound="RecallAdapterBase")


#: The adapters' numeric fields, under every name they take (LangChain's ``max_tokens`` alias too).
_NUMBER_FIELDS = ("temperature", "top_p", "top_k", "repetition_penalty", "timeout", "max_tokens", "max_new_tokens",
                  "context_window")  # fmt: skip
_INT_FIELDS = frozenset({"top_k", "max_tokens", "max_new_tokens", "context_window"})


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
    #: The name of the adapter's field :meth:`_max_new_tokens` reads, for its error messages (until
    #: 2026-12-07 ``ChatRecall(max_tokens=0)`` named ``max_new_tokens``, a field it has not; a reviewer).
    _max_tokens_field: ClassVar[str] = "max_new_tokens"

    @abstractmethod
    def _max_new_tokens(self) -> int | None:
        """The most new tokens per call, from the adapter's own field (``None``: the engine's default)."""

    @abstractmethod
    def _extra_options(self) -> tuple[str, Mapping[str, Any]]:
        """``(field name, value)`` of the adapter's field of other ``generate()`` options."""

    # ------------------------------------------------------------------ init
    @model_validator(mode="before")
    @classmethod
    def _numbers_are_numbers(cls, data: Any) -> Any:
        """A numeric field given a bool or text is a ``ValueError`` naming it: pydantic's lax mode took
        ``max_tokens=True`` as 1 and ``"7"`` as 7, which a call refuses (until 2026-12-07, a reviewer)."""
        if isinstance(data, dict):
            for name in _NUMBER_FIELDS:
                value = data.get(name)
                if value is None:
                    continue
                whole = name in _INT_FIELDS
                if isinstance(value, bool) or not isinstance(value, numbers.Integral if whole else numbers.Real):
                    raise ValueError(f"{name} must be {'an int' if whole else 'a number'}, got {value!r}")
        return data

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
    def __copy__(self) -> Any:
        """A copy (``model_copy``, with or without ``update=``) keeps neither the original's KV
        sessions nor its engine: they shared one session pool, whose sessions wrote evicted turns to
        the original's store and fed its cached notes to the copy's users, and a copy given another
        ``generator`` answered with the original's (a reviewer, 2026-12-07). The engine is built again
        at the copy's first call: its own ``generator``, or the named model from the shared cache."""
        copied = super().__copy__()
        copied._session_pool = None
        copied._engine = None
        copied._engine_lock = threading.Lock()
        return copied

    def __setattr__(self, name: str, value: Any) -> None:
        """Assigning what the sessions or the engine were made from (``chat.store = other``) drops them,
        as a copy does: the old sessions kept the old store's notes and wrote evicted turns to it."""
        super().__setattr__(name, value)
        if name in _MAKES_SESSIONS:
            object.__getattribute__(self, "__pydantic_private__")["_session_pool"] = None
        if name in _MAKES_ENGINE:
            object.__getattribute__(self, "__pydantic_private__")["_engine"] = None

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
        if getattr(self.engine, "served", False) or call.own_memory:
            # (a call's own memory= is not in the session key (user, thread): two users' calls on one
            # thread reused each other's injected notes, a reviewer found, 2026-12-07)
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
            "temperature": self.temperature, self._max_tokens_field: self._max_new_tokens(), "top_p": self.top_p,
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
            if self.memory is not None and user_id is not None and config.recall_policy != "off":
                _check_memory_owner(self.memory, user_id, "this adapter's memory=")
            options["memory"] = resolve_memory(self.memory, self.store, user_id)
        elif user_id is not None and config.recall_policy != "off":
            _check_memory_owner(getattr(self.engine, "memory", None), user_id, "its generator's own memory")
        return PreparedCall(options, user_id, session_id, config, thread_id, write_memory, own_memory=memory is not None)


#: The fields the KV sessions are made from (their engine, their writer's store), and the engine's.
_MAKES_ENGINE = frozenset({"generator", "model_name", "device", "dtype", "recall_config"})
_MAKES_SESSIONS = _MAKES_ENGINE | {"store", "memory", "sessions"}


def _check_memory_owner(memory: Any, user_id: str, which: str) -> None:
    """Refuse a call for another user than the one a single user's memory is of (a ``UserMemory``:
    it says whose it is). Until 2026-12-07 bob's call read ada's notes from an adapter without a
    store whose generator held ``store.for_user("ada")``, or whose own ``memory=`` did (a reviewer).
    A memory that does not say whose it is serves every user of the adapter."""
    owner = getattr(memory, "user_id", None)
    if isinstance(owner, str) and owner != _same_user(user_id):
        raise ValueError(
            f"user_id {user_id!r} names whose memory to read, but {which} is user {owner!r}'s: give the "
            "adapter store= (with user_id=) to serve several users"
        )


def _same_user(user_id: str) -> str:
    """``user_id`` as a store keeps it (NFC: the two ways of typing "Zoë" are one user), else as given."""
    try:
        return check_user_id(user_id)
    except ValueError:
        return user_id

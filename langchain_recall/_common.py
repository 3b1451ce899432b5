"""What `RecallLLM` and `ChatRecall` share: their settings and how one call is prepared."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict
from typing import Any, ClassVar, Literal, TypeVar

from langchain_core.caches import BaseCache
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models.base import LangSmithParams
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import ensure_config, get_config_list
from pydantic import ConfigDict, Field, field_validator, model_validator

from recall_core import AsyncRecallStream, RecallResult, RecallStream, __version__
from recall_core.integration import (
    CALL_ARGUMENTS,
    FIELD_OPTIONS,
    PROVIDER,
    PreparedCall,
    RecallAdapterBase,
    model_display_name,
    recall_dicts,
    usage_dict,
)
from recall_core.settings import option_value

#: Per-call keyword arguments the LangChain adapters take besides generate() options.
LANGCHAIN_CALL_ARGUMENTS = CALL_ARGUMENTS | {"session_id"}
#: The call's switches that may also come from ``config["configurable"]`` (in a chain, per call), and
#: ``session_id``: ``RunnableWithMessageHistory`` names its conversation so (until 2026-12-07 it was
#: not read, and every such conversation's memories were written under one default session, a
#: reviewer found: the turn before a memory could then come from another conversation).
CONFIGURABLE_SWITCHES = ("recall", "write_memory", "session_id")


#: Why the adapters take no LangChain response cache.
_NO_CACHE = ("a reply depends on the user's memory, which LangChain's cache key does not hold, so a cached "
             "reply would go to another user")  # fmt: skip

#: Unknown init arguments are refused (LangChain's ``Serializable`` would ignore them silently).
#: Each adapter class sets it again: pydantic lets the last base's config win.
MODEL_CONFIG = ConfigDict(
    extra="forbid", populate_by_name=True, protected_namespaces=(), arbitrary_types_allowed=True
)


class RecallSettings(RecallAdapterBase):
    """Fields and helpers common to the LangChain adapters.

    The shared fields (model, memory, sampling, ``stop``, ``timeout``...), the engine,
    ``from_model``, the checks and how one call is prepared come from
    :class:`recall_core.integration.RecallAdapterBase`; this adds LangChain's own fields, its
    reporting (identifying params, LangSmith params) and its version record.
    """

    model_config = MODEL_CONFIG
    #: The per-call keyword arguments this adapter takes besides ``generate()`` options.
    call_arguments: ClassVar[frozenset[str]] = LANGCHAIN_CALL_ARGUMENTS

    max_tokens: int | None = Field(default=None, alias="max_new_tokens")
    """Most new tokens per call (default 256)."""
    streaming: bool = False
    """Whether ``invoke``/``generate`` run through ``_stream`` (token callbacks fire)."""
    model_kwargs: dict[str, Any] = Field(default_factory=dict)
    """Any other transformers ``generate()`` option (``min_p``, ``no_repeat_ngram_size``...)."""
    cache: BaseCache | bool | None = Field(default=False, exclude=True)
    """Always ``False``: LangChain's response cache is never used (see :meth:`_refuse_cache`)."""

    @field_validator("cache", mode="before")
    @classmethod
    def _refuse_cache(cls, value: Any) -> bool:
        """A reply depends on whose memory the call reads, which LangChain's cache key does not hold:
        its key is the prompt and the model's settings (``BaseLLM`` leaves out even the call's
        keywords), not the user a call names or reads from its config. Until 2026-12-07 a global
        ``set_llm_cache`` served one user's reply, recalled memories and written ids to the next
        user who asked the same (a reviewer); so no cache, global or given, is ever consulted."""
        if value is None or value is False:
            return False
        raise ValueError(f"cache must be False or None, got {value!r}: {_NO_CACHE}")

    _max_tokens_field: ClassVar[str] = "max_tokens"

    def _max_new_tokens(self) -> int | None:
        return self.max_tokens

    def _extra_options(self) -> tuple[str, Mapping[str, Any]]:
        return "model_kwargs", self.model_kwargs

    @model_validator(mode="after")
    def _check_settings(self) -> RecallSettings:
        self._check_recall_settings(type(self).__name__, reserved=FIELD_OPTIONS)
        return self

    @model_validator(mode="after")
    def _set_recall_version(self) -> RecallSettings:
        add_version = getattr(self, "_add_version", None)
        if add_version is not None:  # langchain-core's per-package version record for traces
            add_version("recall-llm", __version__)
        return self

    # ------------------------------------------------------------------ calls
    @property
    def resolved_model_name(self) -> str:
        return model_display_name(self.model_name, self.generator)

    def _check_no_cache(self) -> None:
        """Refuse a cache put in after the model was built (``model.cache = ...``, ``model_copy(update=...)``:
        pydantic checks neither), before langchain-core consults it (a reviewer, 2026-12-07)."""
        if self.cache is not False:
            raise ValueError(f"cache must be False or None, got {self.cache!r}: {_NO_CACHE}")

    def generate(self, *args: Any, **kwargs: Any) -> Any:
        """The base class's ``generate``, refusing a cache (see :meth:`_refuse_cache`)."""
        self._check_no_cache()
        return super().generate(*args, **kwargs)  # type: ignore[misc]

    async def agenerate(self, *args: Any, **kwargs: Any) -> Any:
        self._check_no_cache()
        return await super().agenerate(*args, **kwargs)  # type: ignore[misc]

    # ------------------------------------------------------------------ the Runnable entry points
    # invoke(input, config={"configurable": {...}}) does not pass its config on to _generate, and the
    # running config only holds it inside a chain: each entry point reads thread_id / user_id and the
    # switches from it (configured) before the base class runs.
    def invoke(self, input: Any, config: RunnableConfig | None = None, *, stop: list[str] | None = None,
               **kwargs: Any) -> Any:  # fmt: skip
        """The base class's ``invoke``, with ``thread_id`` / ``user_id`` (``recall``, ``write_memory``)
        read from ``config["configurable"]`` where the call does not give them."""
        return super().invoke(input, config, stop=stop, **configured(config, kwargs, self.call_arguments))  # type: ignore[misc]

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, *, stop: list[str] | None = None,
                      **kwargs: Any) -> Any:  # fmt: skip
        return await super().ainvoke(input, config, stop=stop, **configured(config, kwargs, self.call_arguments))  # type: ignore[misc]

    def stream(self, input: Any, config: RunnableConfig | None = None, *, stop: list[str] | None = None,
               **kwargs: Any) -> Iterator[Any]:  # fmt: skip
        self._check_no_cache()
        return super().stream(input, config, stop=stop, **configured(config, kwargs, self.call_arguments))  # type: ignore[misc]

    def astream(self, input: Any, config: RunnableConfig | None = None, *, stop: list[str] | None = None,
                **kwargs: Any) -> AsyncIterator[Any]:  # fmt: skip
        self._check_no_cache()
        return super().astream(input, config, stop=stop, **configured(config, kwargs, self.call_arguments))  # type: ignore[misc]

    def batch(self, inputs: list[Any], config: RunnableConfig | list[RunnableConfig] | None = None, *,
              return_exceptions: bool = False, **kwargs: Any) -> list[Any]:  # fmt: skip
        """The base class's ``batch`` (``BaseLLM``'s calls ``generate`` once, not ``invoke``), with each
        input's ``configurable`` read; inputs whose configs say different users run one by one."""
        calls = [configured(c, kwargs, self.call_arguments) for c in get_config_list(config, len(inputs))]
        if all(call == calls[0] for call in calls):
            return super().batch(inputs, config, return_exceptions=return_exceptions, **(calls[0] if calls else kwargs))  # type: ignore[misc]
        return Runnable.batch(self, inputs, config, return_exceptions=return_exceptions, **kwargs)  # type: ignore[arg-type]

    async def abatch(self, inputs: list[Any], config: RunnableConfig | list[RunnableConfig] | None = None, *,
                     return_exceptions: bool = False, **kwargs: Any) -> list[Any]:  # fmt: skip
        calls = [configured(c, kwargs, self.call_arguments) for c in get_config_list(config, len(inputs))]
        if all(call == calls[0] for call in calls):
            return await super().abatch(inputs, config, return_exceptions=return_exceptions,  # type: ignore[misc]
                                        **(calls[0] if calls else kwargs))  # fmt: skip
        return await Runnable.abatch(self, inputs, config, return_exceptions=return_exceptions, **kwargs)  # type: ignore[arg-type]

    def _prepare(self, stop: Sequence[str] | None, kwargs: Mapping[str, Any]) -> PreparedCall:
        """Merge the instance's settings with one call's ``stop`` and kwargs; check the names.

        ``user_id`` and ``thread_id`` come from the call's kwargs, else from the running
        config's ``configurable`` (LangGraph's ``{"configurable": {"thread_id": ..., "user_id": ...}}``),
        else (the user) from the instance; so do ``recall`` and ``write_memory`` (a chain's
        ``invoke(input, {"configurable": {"recall": "off"}})`` switches recall off for that call).
        """
        configurable = ensure_config().get("configurable") or {}
        # stream=True / False chooses langchain-core's path (_stream or _generate) and is passed on to it
        kwargs = {name: value for name, value in kwargs.items() if name != "stream"}
        user_id = kwargs["user_id"] if "user_id" in kwargs else configurable.get("user_id", self.user_id)
        kwargs = {**kwargs, "thread_id": kwargs.get("thread_id", configurable.get("thread_id"))}
        for name in CONFIGURABLE_SWITCHES:
            if name in self.call_arguments and name not in kwargs and configurable.get(name) is not None:
                kwargs[name] = configurable[name]
        return self._prepare_call(type(self).__name__, kwargs, self.call_arguments, user_id=user_id, stop=stop)

    def get_token_ids(self, text: str) -> list[int]:
        """``text``'s token ids by the model's own tokenizer (or the ``custom_get_token_ids`` given).
        LangChain's default counts GPT-2's tokens, and none offline: until 2026-12-07
        ``trim_messages(token_counter=model)`` never trimmed (a reviewer)."""
        if self.custom_get_token_ids is not None:  # type: ignore[attr-defined]
            return self.custom_get_token_ids(text)  # type: ignore[attr-defined]
        return list(self.engine.tokenizer.encode(text, add_special_tokens=False))

    # ------------------------------------------------------------------ reporting
    def _common_identifying_params(self) -> dict[str, Any]:
        return {
            "model_name": self.resolved_model_name,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "top_p": self.top_p,
            "top_k": self.top_k,
            "repetition_penalty": self.repetition_penalty,
            "stop": self.stop,
            "recall_config": self.recall_config.to_dict() if self.recall_config else None,
            "user_id": self.user_id,
            "model_kwargs": self.model_kwargs,
        }

    def _recall_ls_params(
        self, model_type: Literal["chat", "llm"], stop: list[str] | None, kwargs: Mapping[str, Any]
    ) -> LangSmithParams:
        params = LangSmithParams(ls_provider=PROVIDER, ls_model_type=model_type)
        model = kwargs.get("model")
        params["ls_model_name"] = model if isinstance(model, str) else self.resolved_model_name
        temperature = kwargs.get("temperature", self.temperature)
        if isinstance(temperature, (int, float)) and not isinstance(temperature, bool):
            params["ls_temperature"] = float(temperature)
        max_tokens = option_value(kwargs, "max_new_tokens", self.max_tokens)
        if isinstance(max_tokens, int) and not isinstance(max_tokens, bool):
            params["ls_max_tokens"] = max_tokens
        stops = stop if stop is not None else self.stop
        if stops:
            params["ls_stop"] = [stops] if isinstance(stops, str) else list(stops)
        return params


def configured(config: RunnableConfig | None, kwargs: dict[str, Any], call_arguments: Iterable[str]) -> dict[str, Any]:
    """``kwargs`` with ``thread_id`` / ``user_id`` (and the switches ``recall`` / ``write_memory`` /
    ``session_id`` the adapter takes, in its ``call_arguments``) from ``config["configurable"]``
    when they are not given.

    ``invoke(messages, config={"configurable": {"thread_id": ...}})`` does not pass its config
    on to ``_generate``; inside a chain or a LangGraph node the running config is read there.
    A chain-wide switch another model takes is left for it: until 2026-12-07 ``RecallLLM``, which
    writes no memory, raised ``TypeError`` at ``{"write_memory": False}`` (a reviewer).
    """
    configurable = (config or {}).get("configurable") or {}
    taken = set(call_arguments)
    keys = ("thread_id", "user_id", *(name for name in CONFIGURABLE_SWITCHES if name in taken))
    extra = {k: configurable[k] for k in keys if configurable.get(k) is not None and k not in kwargs}
    return {**kwargs, **extra}


def result_metadata(result: RecallResult, model_name: str) -> dict[str, Any]:
    """What every LangChain output carries: finish reason, model, usage, the recall trace (and the session report)."""
    return {
        "finish_reason": result.finish_reason,
        "model_name": model_name,
        "model_provider": PROVIDER,
        "usage": usage_dict(result),
        "recalls": recall_dicts(result),
        **({"session": asdict(result.session)} if result.session is not None else {}),
    }


def token_usage(results: Sequence[RecallResult]) -> dict[str, int]:
    """Usage summed over a batch, in the OpenAI-style names LangChain's ``llm_output`` uses:
    ``prompt_tokens`` counts the injected memory too, as :func:`usage_dict` does."""
    injected = sum(r.usage.injected_tokens for r in results)
    prompt = sum(r.usage.prompt_tokens for r in results) + injected
    completion = sum(r.usage.generated_tokens for r in results)
    return {
        "prompt_tokens": prompt,
        "injected_tokens": injected,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


_Chunk = TypeVar("_Chunk")



def stream_chunks(
    stream: RecallStream, make: Callable[[str], _Chunk], run_manager: CallbackManagerForLLMRun | None
) -> Iterator[_Chunk]:
    """One chunk per piece of text, each told to the callbacks; ``stream.result`` is set after the last."""
    for piece in stream:
        chunk = make(piece)
        if run_manager is not None:
            run_manager.on_llm_new_token(piece, chunk=chunk)
        yield chunk


async def astream_chunks(
    stream: AsyncRecallStream, make: Callable[[str], _Chunk], run_manager: AsyncCallbackManagerForLLMRun | None
) -> AsyncIterator[_Chunk]:
    """:func:`stream_chunks` for ``async for``."""
    async for piece in stream:
        chunk = make(piece)
        if run_manager is not None:
            await run_manager.on_llm_new_token(piece, chunk=chunk)
        yield chunk


def streamed_result(
    stream: RecallStream, make: Callable[[str], Any], run_manager: CallbackManagerForLLMRun | None
) -> RecallResult:
    """Run ``stream`` to its end, the callbacks told every piece (``streaming=True``); its result."""
    for _ in stream_chunks(stream, make, run_manager):
        pass
    assert stream.result is not None
    return stream.result


async def astreamed_result(
    stream: AsyncRecallStream, make: Callable[[str], Any], run_manager: AsyncCallbackManagerForLLMRun | None
) -> RecallResult:
    """:func:`streamed_result` for ``async for``."""
    async for _ in astream_chunks(stream, make, run_manager):
        pass
    assert stream.result is not None
    return stream.result

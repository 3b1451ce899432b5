"""What `RecallLLM` and `ChatRecall` share: their settings and how one call is prepared."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Literal

from langchain_core.language_models.base import LangSmithParams
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator
from recall_core import RecallConfig, RecallGenerator, RecallResult, __version__
from recall_core.adapters import (
    PROVIDER,
    PreparedCall,
    RecallAdapterMixin,
    model_display_name,
    recall_dicts,
    usage_dict,
)

RecallPolicy = Literal["auto", "explicit"]

#: Per-call keyword arguments the LangChain adapters take besides generate() options.
CALL_ARGUMENTS = frozenset(
    {"user_id", "session_id", "memory", "recall", "recall_config", "on_recall", "timeout", "stop"}
)
#: ``generate()`` options that are fields here, so ``model_kwargs`` may not set them.
FIELD_OPTIONS = frozenset({"temperature", "max_new_tokens", "max_tokens", "top_p", "top_k",
                           "repetition_penalty", "stop_strings", "max_time"})  # fmt: skip


#: Unknown init arguments are refused (LangChain's ``Serializable`` would ignore them silently).
#: Each adapter class sets it again: pydantic lets the last base's config win.
MODEL_CONFIG = ConfigDict(
    extra="forbid", populate_by_name=True, protected_namespaces=(), arbitrary_types_allowed=True
)


class RecallSettings(RecallAdapterMixin, BaseModel):
    """Fields and helpers common to the LangChain adapters (a pydantic mixin).

    The engine, ``from_model``, the checks and how one call is prepared come from
    :class:`recall_core.adapters.RecallAdapterMixin`; this adds LangChain's field names,
    its reporting (identifying params, LangSmith params) and its version record.
    """

    model_config = MODEL_CONFIG
    _model_name_argument: ClassVar[str] = "model"
    _max_tokens_field: ClassVar[str] = "max_tokens"
    _generate_kwargs_field: ClassVar[str] = "model_kwargs"

    model_name: str | None = Field(default=None, alias="model")
    """Hugging Face model id or local folder; ``None`` is the embedded offline default
    (SmolLM2-135M-Instruct). Ignored for loading when ``generator`` is given (then only a label)."""
    generator: RecallGenerator | None = Field(default=None, exclude=True)
    """An existing :class:`recall_core.RecallGenerator` to use instead of loading ``model``."""
    device: str | None = None
    """``"cpu"``, ``"cuda"``, ``"cuda:1"``...; default CUDA when available."""
    dtype: str | None = None
    """``"float32"``, ``"bfloat16"``...; default float32 on CPU, bfloat16 on CUDA."""

    store: Any = Field(default=None, exclude=True)
    """A :class:`recall_core.memory.MemoryStore`; each call searches ``store.for_user(user_id)``."""
    user_id: str | None = None
    """Whose memory to use with ``store`` (a call may pass another ``user_id=``)."""
    memory: Any = Field(default=None, exclude=True)
    """Instead of ``store``: any object with ``search(RecallQuery, k)`` (the engine's ``Memory``)."""
    recall: RecallPolicy | None = None
    """``"auto"`` puts ``<recall>`` where the reply should consult memory (the end of a string
    prompt; in a chat, where ``RecallConfig.recall_position`` says); ``"explicit"`` leaves it
    to the prompt. ``None``: from ``recall_config`` (whose default is ``"auto"``)."""
    recall_config: RecallConfig | None = Field(default=None, exclude=True)
    """How the loop searches, chooses and injects memories (:class:`recall_core.RecallConfig`)."""

    temperature: float | None = None
    """0 or ``None`` decodes greedily (deterministic); above 0 samples at that temperature."""
    max_tokens: int | None = Field(default=None, alias="max_new_tokens")
    """Most new tokens per call (default 256)."""
    top_p: float | None = None
    top_k: int | None = None
    repetition_penalty: float | None = None
    stop: list[str] | None = Field(default=None, alias="stop_sequences")
    """Stop strings: generation ends at the first one, which is cut from the output."""
    timeout: float | None = None
    """Most seconds of decoding per call (transformers' ``max_time``); the text so far is returned."""
    streaming: bool = False
    """Whether ``invoke``/``generate`` run through ``_stream`` (token callbacks fire)."""
    model_kwargs: dict[str, Any] = Field(default_factory=dict)
    """Any other transformers ``generate()`` option (``min_p``, ``no_repeat_ngram_size``...)."""

    _engine: RecallGenerator | None = PrivateAttr(default=None)
    _engine_lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

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

    def _prepare(self, stop: Sequence[str] | None, kwargs: Mapping[str, Any]) -> PreparedCall:
        """Merge the instance's settings with one call's ``stop`` and kwargs; check the names."""
        return self._prepare_call(
            type(self).__name__,
            kwargs,
            CALL_ARGUMENTS,
            user_id=kwargs.get("user_id", self.user_id),
            stop=stop,
        )

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
            "recall": self.recall,
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
        max_tokens = kwargs.get("max_tokens", kwargs.get("max_new_tokens", self.max_tokens))
        if isinstance(max_tokens, int) and not isinstance(max_tokens, bool):
            params["ls_max_tokens"] = max_tokens
        stops = stop if stop is not None else self.stop
        if stops:
            params["ls_stop"] = list(stops)
        return params


def result_metadata(result: RecallResult, model_name: str) -> dict[str, Any]:
    """What every LangChain output carries: finish reason, model, usage, and the recall trace."""
    return {
        "finish_reason": result.finish_reason,
        "model_name": model_name,
        "model_provider": PROVIDER,
        "usage": usage_dict(result),
        "recalls": recall_dicts(result),
    }


def token_usage(results: Sequence[RecallResult]) -> dict[str, int]:
    """Usage summed over a batch, in the OpenAI-style names LangChain's ``llm_output`` uses."""
    prompt = sum(r.usage.prompt_tokens for r in results)
    injected = sum(r.usage.injected_tokens for r in results)
    completion = sum(r.usage.generated_tokens for r in results)
    return {
        "prompt_tokens": prompt,
        "injected_tokens": injected,
        "completion_tokens": completion,
        "total_tokens": prompt + injected + completion,
    }

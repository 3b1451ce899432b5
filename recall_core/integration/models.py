"""The models behind the adapters: loaded once per process for the same arguments, named for
traces, and the adapter's generator over them."""

from __future__ import annotations

import threading
from typing import Any

from recall_core.config import RecallConfig
from recall_core.generator import RecallGenerator
from recall_core.models.loading import DEFAULT_MODEL_NAME, load_model
from recall_core.models.query_head import saved_query_head

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

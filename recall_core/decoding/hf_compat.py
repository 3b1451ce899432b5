"""Every private transformers API recall uses, behind one small set of functions.

The recall loop follows ``GenerationMixin._sample`` step for step, so it calls the same
underscore methods ``_sample`` does. They are not public API and may change in any
release: this module is the one place to adapt when they do. Nothing else in
``recall_core`` calls an underscore method or attribute of transformers.

Checked against transformers 5.17.0, 5.23.0 and 5.24.0: tests/unit/test_engine_loop.py and
tests/unit/test_engine_generator.py (parity with ``model.generate()`` included) pass on each.
Hence ``transformers>=5.17,<5.25`` in ``pyproject.toml``: raise the cap once those tests (and
the whole suite) pass on the next minor release. The underscore methods below exist
since 5.0, but older releases fall short elsewhere: before 5.17 a cache does not say
whether it can be cropped (``is_croppable``), so a prompt's ``<recall>`` where nothing is
injected stayed in the sequence instead of being dropped (those tests fail on 5.3.0 and
5.12.1); before 5.3 ``prepare_inputs_for_generation`` has no ``next_sequence_length``.

5.24 renamed the cache from ``past_key_values`` to ``cache`` everywhere (forward arguments,
outputs, ``generate()``'s model kwargs, ``prepare_inputs_for_generation``'s result), keeping
the old name as a deprecated alias in some places but not in the model kwargs: a loop
that kept ``model_kwargs["past_key_values"]`` fed a stale cache to every step. recall
reads and writes the cache under :data:`CACHE_KEY` only.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import inspect
from collections.abc import Callable
from typing import Any

import torch
from transformers.modeling_outputs import CausalLMOutputWithPast


def _cache_key() -> str:
    fields = {field.name for field in dataclasses.fields(CausalLMOutputWithPast)}
    return "cache" if "cache" in fields else "past_key_values"


#: The name transformers gives the KV cache: in forward arguments and outputs, in
#: ``generate()``'s model kwargs and in what ``prepare_inputs_for_generation`` returns.
#: ``"cache"`` since 5.24, ``"past_key_values"`` before.
CACHE_KEY = _cache_key()


def cache_kwarg(cache: Any) -> dict[str, Any]:
    """``cache`` as the keyword argument a model's forward takes it by: ``model(..., **cache_kwarg(c))``."""
    return {CACHE_KEY: cache}


def cache_of(outputs: Any) -> Any:
    """The KV cache a forward pass returned (``outputs.cache``, ``outputs.past_key_values`` before 5.24)."""
    return getattr(outputs, CACHE_KEY)


def prefill(model: Any, input_ids: Any, generation_config: Any, model_kwargs: dict[str, Any]) -> Any:
    """The prompt's forward pass exactly as ``generate()`` runs it (``GenerationMixin._prefill``)."""
    return model._prefill(input_ids, generation_config, model_kwargs)


def update_model_kwargs(model: Any, outputs: Any, model_kwargs: dict[str, Any]) -> dict[str, Any]:
    """Carry the cache and grow the attention mask after a forward pass, as ``_sample`` does."""
    return model._update_model_kwargs_for_generation(outputs, model_kwargs)


def decode_forward(model: Any, model_kwargs: dict[str, Any], generation_config: Any) -> Callable[..., Any]:
    """The forward for decoding steps: compiled where ``generate()`` would compile (static caches on GPU)."""
    if model._valid_auto_compile_criteria(model_kwargs, generation_config):
        return model.get_compiled_call(generation_config.compile_config)
    return model.__call__


def decode_context(model: Any) -> contextlib.AbstractContextManager[Any]:
    """What ``generate()`` wraps its decoding in (MoE kernels switched for small inputs), if anything."""
    optimize = getattr(model, "_optimize_model_for_decode", None)
    return optimize() if optimize is not None else contextlib.nullcontext()


def croppable(cache: Any) -> bool:
    """Can ``cache.crop(-n)`` drop its last positions? (Caches say so themselves since 5.17.)"""
    return bool(getattr(cache, "is_croppable", False))


def attention_implementation(model: Any) -> str | None:
    """The attention implementation the model runs ("eager", "sdpa", "flash_attention_2"...)."""
    return getattr(model.config, "_attn_implementation", None)


def last_logit_only(model: Any) -> dict[str, int]:
    """Ask for the last position's logits only, where the model can (the pieces need no logits)."""
    return {"logits_to_keep": 1} if _takes_logits_to_keep(type(model)) else {}


@functools.cache
def _takes_logits_to_keep(model_type: type) -> bool:
    return "logits_to_keep" in inspect.signature(model_type.forward).parameters


# ---------------------------------------------------------------------- the model_kwargs between steps
def counts_up(positions: torch.Tensor) -> bool:
    """Are these the plain positions 0, 1, 2... of an unpadded prompt (every row alike)?"""
    count = torch.arange(positions.shape[-1], dtype=positions.dtype, device=positions.device)
    return bool((positions == count).all())


def take_cache(outputs: Any, model_kwargs: dict[str, Any]) -> dict[str, Any]:
    """The step's cache (``outputs``') is the one the next step runs on."""
    model_kwargs[CACHE_KEY] = cache_of(outputs)
    return model_kwargs


def grow_positions(model_kwargs: dict[str, Any], length: int) -> dict[str, Any]:
    """Positions continue and the attention mask opens for ``length`` new positions."""
    positions = model_kwargs.get("position_ids")
    if positions is not None:
        step = torch.arange(1, length + 1, dtype=positions.dtype, device=positions.device)
        model_kwargs["position_ids"] = torch.cat([positions, positions[..., -1:] + step], dim=-1)
    mask = model_kwargs.get("attention_mask")
    if mask is not None:
        model_kwargs["attention_mask"] = torch.cat([mask, mask.new_ones((mask.shape[0], length))], dim=-1)
    return model_kwargs


def shrink_positions(model_kwargs: dict[str, Any], length: int) -> dict[str, Any]:
    """Undo :func:`grow_positions`: forget the last ``length`` positions."""
    if model_kwargs.get("position_ids") is not None:
        model_kwargs["position_ids"] = model_kwargs["position_ids"][..., :-length]
    if model_kwargs.get("attention_mask") is not None:
        model_kwargs["attention_mask"] = model_kwargs["attention_mask"][:, :-length]
    return model_kwargs

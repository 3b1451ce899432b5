"""KV-cache arithmetic: moving cached keys to other positions, and cutting spans out of a cache.

Two jobs, both exact, both on transformers 5's ``DynamicCache`` (whose ``SinkCache`` was
removed, so cache surgery is ours):

* **Re-rotation.** RoPE models cache each key *after* rotating it by its position. A key
  computed at position ``p`` is moved to ``q`` by undoing the rotation by ``p`` and applying
  the rotation by ``q``, with the model's own rotary frequencies (and its rope scaling: a
  scaled rotation keeps its scale). :meth:`Rotary.rerotate` does it in float64 from the very
  float32 angles the model computes, so a re-rotated key equals the key a fresh forward pass
  at ``q`` would cache, to float32 precision. Sessions use it when evicted turns leave a gap
  (StreamingLLM re-assigns positions inside the cache); precomputed memory blocks use it to
  move a block computed at ``0..n-1`` to the positions it lands on.
* **Editing the cache.** :func:`drop_span` removes positions from every layer,
  :func:`crop_cache` keeps a prefix, :func:`rerotate_span` re-rotates the keys of a span in
  every layer, :func:`evict_span` does both (drop a span and close the gap), and
  :func:`cache_nbytes` measures the cache.

Full-attention ``DynamicLayer`` layers can be edited, and transformers' sliding-window
``DynamicSlidingWindowLayer`` ones as far as they still hold what the edit needs: a layer that
holds every position (a cache made by :func:`session_cache`, or one shorter than its window) is
edited like a full one; a layer that forgot the positions that left its window can only be
cropped back while the next position still sees its whole window (:func:`croppable_to`,
:func:`can_drop_last`), and anything else raises :class:`CacheEditError`. Quantized, static and other layers store positions
in their own way: editing them raises ``ValueError`` rather than corrupting them. A model without rotary embeddings (GPT-2's learned absolute positions)
cannot move a key at all: :meth:`Rotary.of` raises :class:`NoRotaryEmbeddingError`.

Example (a block of keys computed at positions ``0..n-1`` moved to ``p..p+n-1``)::

    rotary = Rotary.of(model)
    n = keys.shape[-2]
    keys = rotary.rerotate(keys, torch.arange(n), torch.arange(p, p + n))
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import torch
from transformers import DynamicCache
from transformers.cache_utils import DynamicLayer, DynamicSlidingWindowLayer

#: Rope types whose frequencies change with the sequence length: a key rotated at one length
#: cannot be moved exactly once the frequencies have changed.
_LENGTH_DEPENDENT_ROPE = frozenset({"dynamic", "longrope"})

Positions = torch.Tensor | Sequence[int] | int


class NoRotaryEmbeddingError(ValueError):
    """The model has no rotary position embedding that recall can re-rotate keys with."""


class CacheEditError(ValueError):
    """A sliding-window layer no longer holds the positions an edit of the cache needs."""


@dataclass(frozen=True, eq=False)
class Rotary:
    """A model's rotary position embedding, as needed to move cached keys between positions.

    Attributes:
        inv_freq: the inverse frequencies (``rotary_dim / 2`` of them, float32), read from the
            model's own rotary module, so rope scaling that changes the frequencies (linear,
            llama3, yarn) is included.
        rope_type: the model's ``rope_type`` ("default", "linear", "llama3", "yarn"...).
        sliced: the model's attention gives its RoPE function only the rotated channels of each
            head (Phi, StableLM): its cache is re-rotated exactly, but ``inject_mode="kv"`` falls
            back to tokens for it (its splices were not checked against tokens mode).
    """

    inv_freq: torch.Tensor
    rope_type: str = "default"
    sliced: bool = False

    @property
    def rotary_dim(self) -> int:
        """How many leading channels of each key head are rotated (the rest pass through)."""
        return 2 * self.inv_freq.shape[-1]

    @classmethod
    def of(cls, model: Any) -> Rotary:
        """The rotary embedding of ``model``, checked against the model's own RoPE code.

        Raises :class:`NoRotaryEmbeddingError` (a ``ValueError``) when the model has none
        (GPT-2), has several different ones (per-layer-type RoPE), uses frequencies that
        depend on the sequence length ("dynamic", "longrope"), or lays out its rotation in a
        way this module does not reproduce (checked numerically on a probe key).
        """
        name = type(model).__name__
        modules = [m for m in model.modules() if isinstance(getattr(m, "inv_freq", None), torch.Tensor)]
        # transformers 5 keeps Gemma 3's as one buffer per layer type (sliding_attention_inv_freq, ...)
        per_type = sorted({n.rsplit(".", 1)[-1].removesuffix("_inv_freq") for n, _ in model.named_buffers()
                           if n.endswith("_inv_freq") and not n.endswith("original_inv_freq")})  # fmt: skip
        if not modules and per_type:
            raise NoRotaryEmbeddingError(
                f"{name} has one rotary embedding per layer type ({', '.join(per_type)}): re-rotating its cache "
                "is not supported, so turns cannot be evicted from its cache; leave max_cache_tokens unset"
            )
        if not modules:
            raise NoRotaryEmbeddingError(
                f"{name} has no rotary position embedding (RoPE): its cached keys cannot be moved to other "
                "positions, so turns cannot be evicted from its cache. Use a RoPE model (Llama, Qwen, Mistral, "
                "SmolLM...) or leave max_cache_tokens unset."
            )
        first = modules[0]
        if any(m.inv_freq.shape != first.inv_freq.shape or not torch.equal(m.inv_freq, first.inv_freq) for m in modules):
            raise NoRotaryEmbeddingError(
                f"{name} uses {len(modules)} different rotary embeddings (one per layer type): "
                "re-rotating its cache is not supported"
            )
        rope_type = str(getattr(first, "rope_type", "default"))
        if rope_type in _LENGTH_DEPENDENT_ROPE:
            raise NoRotaryEmbeddingError(
                f"{name} uses rope_type={rope_type!r}, whose frequencies change with the sequence length: "
                "its cached keys cannot be moved exactly"
            )
        rotary = cls(first.inv_freq.detach().to(device="cpu", dtype=torch.float32).clone(), rope_type)
        width = rotary._check_against(model, first)
        return replace(rotary, sliced=True) if width == rotary.rotary_dim < head_dim(model) else rotary

    def angles(self, positions: Positions, device: torch.device | str | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """``(cos, sin)`` of shape ``[len(positions), rotary_dim]``, computed as the model does (float32, unscaled)."""
        positions = _positions(positions, device)
        inv_freq = self.inv_freq.to(positions.device)
        freqs = positions[:, None].float() * inv_freq[None, :]
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos(), emb.sin()

    def rerotate(self, keys: torch.Tensor, old_positions: Positions, new_positions: Positions) -> torch.Tensor:
        """Keys cached at ``old_positions`` as they would be cached at ``new_positions``.

        Args:
            keys: ``[..., L, head_dim]`` (a cache layer's ``[batch, heads, L, head_dim]``).
            old_positions: the ``L`` positions the keys were rotated by (or one int for all).
            new_positions: the ``L`` positions to rotate them to (or one int for all).

        Returns:
            A new tensor of the same shape and dtype. Channels past ``rotary_dim`` are copied.
        """
        length = keys.shape[-2]
        old = _broadcast(_positions(old_positions, keys.device), length, "old_positions")
        new = _broadcast(_positions(new_positions, keys.device), length, "new_positions")
        if keys.shape[-1] < self.rotary_dim:
            raise ValueError(f"keys have {keys.shape[-1]} channels per head, fewer than rotary_dim={self.rotary_dim}")
        if torch.equal(old, new):
            return keys.clone()
        cos_old, sin_old = (t.double() for t in self.angles(old))
        cos_new, sin_new = (t.double() for t in self.angles(new))
        rotated, rest = keys[..., : self.rotary_dim].double(), keys[..., self.rotary_dim :]
        plain = rotated * cos_old - _rotate_half(rotated) * sin_old  # undo the rotation by the old angle
        moved = plain * cos_new + _rotate_half(plain) * sin_new
        return torch.cat([moved.to(keys.dtype), rest], dim=-1) if rest.shape[-1] else moved.to(keys.dtype)

    def _check_against(self, model: Any, rotary_module: Any) -> int:
        """Re-rotate a probe key and compare it with the model's own RoPE at the new positions;
        return the probe's width (channels) the model's RoPE function took."""
        apply = getattr(inspect.getmodule(type(model)), "apply_rotary_pos_emb", None)
        whole = head_dim(model)
        # Phi and StableLM rotate part of each head: their attention gives apply_rotary_pos_emb only the
        # rotated channels, so a whole head's probe failed and they were refused (until 2026-12-07: a reviewer)
        widths = [whole] + ([self.rotary_dim] if self.rotary_dim < whole else [])
        old, new = torch.tensor([[0, 7, 31]]), torch.tensor([[5, 2, 1000]])
        failure: Exception | None = None
        for width in widths:
            try:
                at_old, at_new = self._probe(apply, rotary_module, width, old, new)
                break
            except Exception as error:  # no such function, another signature: not a layout we know
                failure = failure or error
        else:
            raise NoRotaryEmbeddingError(
                f"{type(model).__name__}'s rotary embedding could not be checked ({type(failure).__name__}: {failure}): "
                "re-rotating its cache is not supported"
            ) from failure
        moved = self.rerotate(at_old, old[0], new[0])
        if not torch.allclose(moved, at_new, atol=1e-4, rtol=1e-4):
            raise NoRotaryEmbeddingError(
                f"{type(model).__name__} lays out its rotary embedding differently (e.g. interleaved pairs): "
                "re-rotating its cache is not supported"
            )
        return width

    def _probe(self, apply: Any, rotary_module: Any, width: int, old: torch.Tensor,
               new: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
        """The model's own RoPE of a probe key of ``width`` channels, at ``old`` and at ``new``."""
        dtype, device = self.inv_freq.dtype, self.inv_freq.device
        probe = torch.randn(1, 1, 3, width, generator=torch.Generator().manual_seed(0), dtype=dtype)
        cos_old, sin_old = rotary_module(probe.to(device), old.to(device))
        cos_new, sin_new = rotary_module(probe.to(device), new.to(device))
        at_old = apply(probe, probe, cos_old.cpu().to(dtype), sin_old.cpu().to(dtype))[1]
        at_new = apply(probe, probe, cos_new.cpu().to(dtype), sin_new.cpu().to(dtype))[1]
        return at_old, at_new


def head_dim(model: Any) -> int:
    """The channels of each attention head of ``model`` (its text decoder's, for a multimodal one)."""
    config = getattr(model.config, "get_text_config", lambda **_: model.config)(decoder=True)
    return int(getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads)


def rotary_of(model: Any) -> Rotary | None:
    """:meth:`Rotary.of`, or ``None`` when the model's keys cannot be re-rotated."""
    try:
        return Rotary.of(model)
    except NoRotaryEmbeddingError:
        return None


# --------------------------------------------------------------------------- cache edits
_EDITABLE = (DynamicLayer, DynamicSlidingWindowLayer)


def cache_layers(cache: Any) -> list[DynamicLayer]:
    """The cache's layers, checked to be ``DynamicLayer`` s or ``DynamicSlidingWindowLayer`` s (editable ones)."""
    layers = getattr(cache, "layers", None)
    if layers is None:
        raise ValueError(f"expected a transformers DynamicCache, got {type(cache).__name__}")
    for index, layer in enumerate(layers):
        if type(layer) not in _EDITABLE:
            raise ValueError(
                f"layer {index} of the cache is a {type(layer).__name__}: only DynamicLayer and "
                "DynamicSlidingWindowLayer layers can be edited (quantized, static and other layers cannot)"
            )
    return list(layers)


def session_cache(model: Any) -> DynamicCache:
    """An empty ``DynamicCache`` for ``model`` whose sliding-window layers keep every position.

    transformers' sliding-window layers keep only the last ``sliding_window - 1`` positions, so
    once a conversation outgrows the window they cannot be cut back (a regenerated turn, an
    edited history) or have a span evicted. These record their past instead
    (``activate_past_recording``): attention still reads only the window, but the cache can be
    edited exactly, as a full-attention one is, for the memory of a full-attention layer.
    """
    cache = DynamicCache(config=model.config)
    keep_every_position(cache)
    return cache


def keep_every_position(cache: Any) -> bool:
    """Make ``cache`` 's sliding-window layers record their past, as :func:`session_cache` 's do,
    so that it can be edited exactly past the window. Only an empty cache (a layer that already
    forgot positions cannot get them back); returns whether it had such layers and now keeps them."""
    layers = [layer for layer in getattr(cache, "layers", []) if type(layer) is DynamicSlidingWindowLayer]
    if not layers or cache_length(cache) > 0:
        return False
    for layer in layers:
        layer.activate_past_recording()
    return True


def _held_from(layer: DynamicLayer, added: int = 0) -> int:
    """The first position a layer still holds (a sliding-window layer drops those that left its
    window), now or once ``added`` more positions are appended."""
    if type(layer) is not DynamicSlidingWindowLayer:
        return 0
    held = layer.keys.shape[-2] if layer.is_initialized and layer.keys.dim() == 4 else 0
    held += added
    if not getattr(layer, "record_past", False):  # it keeps its last sliding_window - 1 positions only
        held = min(held, int(layer.sliding_window) - 1)
    return int(layer.cumulative_length) + added - held


def croppable_to(cache: Any, added: int = 0) -> int:
    """The shortest length :func:`crop_cache` can cut ``cache`` back to exactly (0: any); with
    ``added``, once that many more positions were appended.

    A sliding-window layer that forgot its first positions can be cut back only as far as the
    next position still finds its whole window (``sliding_window - 1`` positions) in the layer.
    """
    low = 0
    for layer in cache_layers(cache):
        start = _held_from(layer, added)
        if start > 0:
            low = max(low, start + int(layer.sliding_window) - 1)
    return low


def can_drop_last(cache: Any, added: int = 0) -> bool:
    """Whether :func:`drop_last` can take the cache's last position back exactly: now, or (``added=1``)
    once the position appended next is there. Not on a sliding-window layer past its window that
    does not record its past (transformers' own caches): it forgot what the position before needs.
    Layers recall does not edit go by the cache's ``is_croppable`` (transformers' ``crop``)."""
    length = cache_length(cache) + added
    if cache is None or length == 0:
        return False
    try:
        return croppable_to(cache, added) <= length - 1
    except ValueError:  # not a layer recall edits
        return bool(getattr(cache, "is_croppable", False))


def holds_every_position(cache: Any) -> bool:
    """Whether every layer still holds every position (then spans can be dropped and re-rotated)."""
    return all(_held_from(layer) == 0 for layer in cache_layers(cache))


def kept_refusal(cache: Any, keep: int, evicts: bool) -> str | None:
    """Why ``cache`` cannot be cut back to ``keep`` positions (and, where it ``evicts``, have spans
    dropped from there on), as a session reports a fresh start; ``None`` when it can."""
    if cache is None:
        return None
    low = croppable_to(cache)
    if keep < min(low, cache_length(cache)):
        return (f"the cache's sliding-window layers can no longer be cut back to position {keep} (only to {low} "
                "or later): started afresh")  # fmt: skip
    if evicts and not holds_every_position(cache):
        return "the cache's sliding-window layers no longer hold every position, as eviction needs: started afresh"
    return None


def _full_layers(cache: Any, what: str) -> list[DynamicLayer]:
    """The cache's layers, each holding every position (else :class:`CacheEditError`)."""
    layers = cache_layers(cache)
    for index, layer in enumerate(layers):
        if _held_from(layer) > 0:
            raise CacheEditError(
                f"layer {index} of the cache is a sliding-window layer that no longer holds positions 0 to "
                f"{_held_from(layer) - 1}: it cannot {what} (make the cache with session_cache to keep them)"
            )
    return layers


def _set_length(layer: DynamicLayer, keys: torch.Tensor, values: torch.Tensor, length: int) -> None:
    """Store a layer's edited keys and values; a sliding-window layer also counts its positions."""
    layer.keys, layer.values = keys, values
    if type(layer) is DynamicSlidingWindowLayer:
        layer.cumulative_length = length


def cache_length(cache: Any) -> int:
    """Positions held by the cache (0 for ``None`` or an empty cache)."""
    return 0 if cache is None else int(cache.get_seq_length())


def cache_nbytes(cache: Any) -> int:
    """Bytes held by the keys and values of every layer."""
    if cache is None:
        return 0
    total = 0
    for layer in getattr(cache, "layers", []):
        for tensor in (getattr(layer, "keys", None), getattr(layer, "values", None)):
            if isinstance(tensor, torch.Tensor):
                total += tensor.nelement() * tensor.element_size()
    return total


def crop_cache(cache: Any, length: int) -> None:
    """Keep the first ``length`` positions of every layer (in place).

    Raises :class:`CacheEditError` when ``length`` is below :func:`croppable_to` (a sliding-window
    layer that forgot what the next position would need), before anything is changed.
    """
    current = cache_length(cache)
    if not 0 <= length <= current:
        raise ValueError(f"length must be in [0, {current}] (the cache's length), got {length}")
    low = croppable_to(cache)
    if length < low:
        raise CacheEditError(
            f"the cache cannot be cut back to {length} positions: a sliding-window layer no longer holds what "
            f"follows from position {low} on (make the cache with session_cache to keep every position)"
        )
    for layer in cache_layers(cache):
        if layer.is_initialized and layer.keys.numel():
            keep = length - _held_from(layer)
            _set_length(layer, layer.keys[..., :keep, :], layer.values[..., :keep, :], length)


def drop_last(cache: Any) -> None:
    """Drop the cache's last position: with :func:`crop_cache` where recall can edit the cache (a
    sliding-window layer that records its past keeps it: transformers' ``crop`` cuts it back to
    the window), else with the cache's own ``crop(-1)``. Ask :func:`can_drop_last` first: a
    sliding-window layer that forgot what the position before needs raises :class:`CacheEditError`."""
    try:
        crop_cache(cache, cache_length(cache) - 1)
    except CacheEditError:
        raise  # transformers' crop cannot either: it raises a RuntimeError, or cuts the window short
    except ValueError:  # a layer recall does not edit, refused before anything changed
        cache.crop(-1)  # transformers 5: a negative count of tokens to remove


def drop_span(cache: Any, start: int, end: int) -> None:
    """Remove positions ``[start, end)`` from every layer (in place). Later keys keep their rotation."""
    _check_span(cache, start, end)
    if start == end:
        return
    for layer in _full_layers(cache, "drop a span"):
        if layer.is_initialized and layer.keys.numel():
            keys = torch.cat([layer.keys[..., :start, :], layer.keys[..., end:, :]], dim=-2)
            values = torch.cat([layer.values[..., :start, :], layer.values[..., end:, :]], dim=-2)
            _set_length(layer, keys, values, keys.shape[-2])


def rerotate_span(cache: Any, rotary: Rotary, start: int, old_positions: Positions, new_positions: Positions) -> None:
    """Re-rotate the keys at cache indices ``[start, start + L)`` from ``old_positions`` to ``new_positions`` (in place)."""
    old = _positions(old_positions, None)
    if old.dim() != 1:
        raise ValueError("old_positions must list one position per key of the span")
    end = start + old.shape[0]
    _check_span(cache, start, end)
    for layer in _full_layers(cache, "re-rotate a span"):
        if layer.is_initialized and layer.keys.numel():
            moved = rotary.rerotate(layer.keys[..., start:end, :], old_positions, new_positions)
            layer.keys = torch.cat([layer.keys[..., :start, :], moved, layer.keys[..., end:, :]], dim=-2)


def evict_span(cache: Any, start: int, end: int, rotary: Rotary | None = None, position_offset: int = 0) -> None:
    """Drop positions ``[start, end)``; with ``rotary``, move every later key back by ``end - start``.

    With ``rotary`` the cache stays contiguous (StreamingLLM's re-assigned positions): the key
    at cache index ``i >= end`` was rotated by position ``i + position_offset`` and is
    re-rotated to ``i - (end - start) + position_offset``. Without it, later keys keep their
    positions and the caller must pass matching ``position_ids`` from then on.
    """
    _check_span(cache, start, end)
    length = cache_length(cache)
    if rotary is not None and end < length and end > start:
        old = torch.arange(end, length) + position_offset
        rerotate_span(cache, rotary, end, old, old - (end - start))
    drop_span(cache, start, end)


def _check_span(cache: Any, start: int, end: int) -> None:
    length = cache_length(cache)
    if not 0 <= start <= end <= length:
        raise ValueError(f"span [{start}, {end}) must lie within the cache's {length} positions")


def _positions(positions: Positions, device: torch.device | str | None) -> torch.Tensor:
    if isinstance(positions, torch.Tensor):
        tensor = positions.reshape(-1) if positions.dim() else positions
        return tensor.to(device=device or tensor.device, dtype=torch.long)
    if isinstance(positions, int):
        return torch.tensor(positions, dtype=torch.long, device=device)
    return torch.tensor(list(positions), dtype=torch.long, device=device)


def _broadcast(positions: torch.Tensor, length: int, name: str) -> torch.Tensor:
    if positions.dim() == 0:
        return positions.expand(length)
    if positions.shape[0] != length:
        raise ValueError(f"{name} has {positions.shape[0]} positions for {length} keys")
    return positions


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def repeated_rows(model: Any, cache: DynamicCache, rows: int) -> DynamicCache:
    """A new cache holding ``rows`` copies of ``cache`` 's one row."""
    copy = DynamicCache(config=model.config)
    for index, layer in enumerate(cache.layers):
        copy.update(layer.keys.expand(rows, -1, -1, -1).contiguous(), layer.values.expand(rows, -1, -1, -1).contiguous(), index)
    return copy

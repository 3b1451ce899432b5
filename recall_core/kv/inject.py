"""``inject_mode="kv"``: a recall's block spliced into the live cache from precomputed keys and values.

``tokens`` mode runs the whole block (template and notes) through the model at the recall. In
``kv`` mode the same ids are injected, but:

1. each piece of the block (:mod:`recall_core.kv.blocks`: the template's text, each note, the
   line breaks between notes) comes from the cache of memories
   (:mod:`recall_core.kv.memories`), computed once, after ``kv_prefix``;
2. its keys are re-rotated from the positions they were computed at to the positions they land
   on (exact RoPE arithmetic, :class:`~recall_core.kv.cache.Rotary`) and the block is appended
   to every layer of the live ``DynamicCache``;
3. one short forward pass computes again the tokens ``kv_recompute`` names (the first ones of
   each piece, where a block computed alone grows its attention sink, as EPIC does) and the
   block's last token, attending to the whole cache as ``tokens`` mode would; their keys and
   values replace the spliced ones, and the last token's logits give the next token.

The recomputed tokens are not contiguous, so that pass carries an explicit attention mask
(each recomputed token sees the context, the spliced tokens before it and the recomputed
tokens up to itself): a 4D additive mask, which transformers hands to ``eager`` and ``sdpa``
attention as it is. Other attention implementations (flash attention) run one pass per
contiguous run instead, with plain masks. When the recomputed tokens are only the end of the
block, one plain pass does it whatever the implementation.

The cache ends exactly as long as with ``tokens`` mode, and positions and mask are those the
loop gives, so every loop invariant holds. Models whose keys cannot be re-rotated (no RoPE,
as GPT-2) or caches whose layers cannot be edited fall back to ``tokens``
(:func:`kv_unavailable` says why; the trace records it).
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
from transformers.cache_utils import DynamicLayer

from recall_core.config import RecallConfig
from recall_core.decoding.hf_compat import CACHE_KEY, attention_implementation, cache_kwarg, cache_of
from recall_core.kv.blocks import BlockKV, BlockPlan, recompute_offsets
from recall_core.kv.cache import NoRotaryEmbeddingError, Rotary, cache_layers, cache_length
from recall_core.kv.memories import KVMemories, fetch_blocks

#: Attention implementations that take a custom 4D additive mask as it is.
_MASKABLE = frozenset({"eager", "sdpa"})
#: Inputs the recompute pass sets itself.
_OWN_INPUTS = frozenset(
    {"input_ids", "inputs_embeds", "position_ids", "attention_mask", CACHE_KEY, "use_cache", "return_dict"}
)
_ROTARIES: weakref.WeakKeyDictionary[Any, Rotary | str] = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class KVInjection:
    """What :func:`inject_kv` did.

    Attributes:
        outputs: the last forward pass's outputs: the logits of the block's last token, and the
            cache, now longer by the block.
        length: positions injected (exactly ``tokens`` mode's ids).
        recomputed: positions computed at the recall (the rest were spliced from blocks).
        reused: spliced positions whose blocks were already in the cache of memories (the
            others' blocks were computed at this recall, for the first time).
        discarded: block files found damaged or foreign on disk, removed and computed again.
    """

    outputs: Any
    length: int
    recomputed: int
    reused: int
    discarded: int = 0


def kv_unavailable(model: Any, cache: Any) -> str | None:
    """Why ``kv`` mode cannot inject into ``cache`` for ``model`` (``None``: it can)."""
    rotary = _rotary(model)
    if isinstance(rotary, str):
        return rotary
    try:
        layers = cache_layers(cache)
    except ValueError as error:
        return str(error)
    for index, layer in enumerate(layers):
        if type(layer) is not DynamicLayer:  # its blocks and masks assume every position is kept and read
            return (f"layer {index} of the cache is a {type(layer).__name__}: kv injection places blocks in "
                    "full-attention layers only")  # fmt: skip
    return None


@torch.no_grad()
def inject_kv(
    model: Any,
    tokenizer: Any,
    plan: BlockPlan,
    config: RecallConfig,
    inputs: dict[str, Any],
    kv_memories: KVMemories,
) -> KVInjection:
    """Append the block ``plan`` stands for to ``inputs[CACHE_KEY]`` from stored blocks.

    Args:
        plan: the block (:func:`~recall_core.kv.blocks.plan_block` of the chosen memories).
        inputs: what ``model.prepare_inputs_for_generation`` gives for the block's pads (the
            cache without the block; the attention mask and any ``position_ids`` with it).
        kv_memories: where the blocks are kept (and those missing are put).

    Call :func:`kv_unavailable` first: this assumes a re-rotatable model and an editable cache.
    """
    rotary = _rotary(model)
    if isinstance(rotary, str):
        raise NoRotaryEmbeddingError(rotary)
    length = len(plan.ids)
    cache = inputs[CACHE_KEY]
    context = cache_length(cache)
    device = model.device
    given = inputs.get("position_ids")
    positions = given.reshape(-1)[-length:].to(device) if given is not None else torch.arange(context, context + length, device=device)
    recompute = recompute_offsets(plan, config.kv_recompute)
    fetched = fetch_blocks(model, tokenizer, plan, config, kv_memories)
    keys, values = _placed(fetched.blocks, positions, rotary)
    ids = torch.tensor([plan.ids], device=device)
    mask = inputs.get("attention_mask")
    extra = {k: v for k, v in inputs.items() if k not in _OWN_INPUTS}
    runs = _runs(recompute)
    if len(runs) == 1 or attention_implementation(model) not in _MASKABLE:
        outputs = _run_in_order(model, cache, ids, keys, values, positions, mask, context, runs, extra)
    else:
        outputs = _run_at_once(model, cache, ids, keys, values, positions, mask, context, recompute, extra)
    return KVInjection(outputs, length, len(recompute), _reused(plan, fetched.found, recompute), len(fetched.discarded))


# --------------------------------------------------------------------------- the block's keys and values
def _placed(blocks: Sequence[BlockKV], positions: torch.Tensor, rotary: Rotary) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """Per layer, the block's keys moved to ``positions`` and its values: ``[1, heads, length, head_dim]``."""
    old = torch.cat([torch.arange(b.offset, b.offset + b.length) for b in blocks]).to(positions.device)
    layers = len(blocks[0].keys)
    keys = [torch.cat([b.keys[layer] for b in blocks], dim=-2) for layer in range(layers)]
    values = [torch.cat([b.values[layer] for b in blocks], dim=-2)[None] for layer in range(layers)]
    cos, sin = _rotation(rotary, old, positions, keys[0].dtype)
    if len({k.shape for k in keys}) == 1:  # one rotation for every layer at once
        moved = _rotate(torch.stack(keys), cos, sin, rotary.rotary_dim)
        return [moved[layer][None] for layer in range(layers)], values
    return [_rotate(k, cos, sin, rotary.rotary_dim)[None] for k in keys], values


def _rotation(rotary: Rotary, old: torch.Tensor, new: torch.Tensor, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """``cos`` and ``sin`` of the angle from ``old`` to ``new`` (the model's own float32 angles,
    composed in float64: undoing the rotation by ``old`` then rotating by ``new`` is rotating by
    their difference), in ``dtype``. :meth:`Rotary.rerotate` does the same in two float64 steps
    over the keys; one step in the keys' dtype costs a fraction and differs by rounding only."""
    cos_old, sin_old = (t.double() for t in rotary.angles(old))
    cos_new, sin_new = (t.double() for t in rotary.angles(new))
    cos = cos_new * cos_old + sin_new * sin_old
    sin = sin_new * cos_old - cos_new * sin_old
    return cos.to(dtype), sin.to(dtype)


def _rotate(keys: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, rotary_dim: int) -> torch.Tensor:
    rotated, rest = keys[..., :rotary_dim], keys[..., rotary_dim:]
    half = rotary_dim // 2
    moved = rotated * cos + torch.cat((-rotated[..., half:], rotated[..., :half]), dim=-1) * sin
    return torch.cat([moved, rest], dim=-1) if rest.shape[-1] else moved


def _append(cache: Any, keys: list[torch.Tensor], values: list[torch.Tensor], start: int, end: int) -> None:
    for layer in range(len(keys)):
        cache.update(keys[layer][..., start:end, :], values[layer][..., start:end, :], layer)


# --------------------------------------------------------------------------- the recompute pass
def _runs(offsets: Sequence[int]) -> list[tuple[int, int]]:
    """Contiguous runs ``[start, end)`` of sorted ``offsets``."""
    runs: list[tuple[int, int]] = []
    for offset in offsets:
        if runs and runs[-1][1] == offset:
            runs[-1] = (runs[-1][0], offset + 1)
        else:
            runs.append((offset, offset + 1))
    return runs


def _run_in_order(model: Any, cache: Any, ids: torch.Tensor, keys: list[torch.Tensor], values: list[torch.Tensor],
                  positions: torch.Tensor, mask: torch.Tensor | None, context: int, runs: list[tuple[int, int]],
                  extra: dict[str, Any]) -> Any:  # fmt: skip
    """Splice and compute in block order: one plain forward pass per run of recomputed tokens."""
    done, outputs = 0, None
    for start, end in runs:
        if start > done:
            _append(cache, keys, values, done, start)
        outputs = model(
            input_ids=ids[:, start:end], position_ids=positions[None, start:end], use_cache=True, **cache_kwarg(cache),
            attention_mask=None if mask is None else mask[:, : context + end], return_dict=True, **extra,
        )  # fmt: skip
        cache = cache_of(outputs)
        done = end
    return outputs


def _run_at_once(model: Any, cache: Any, ids: torch.Tensor, keys: list[torch.Tensor], values: list[torch.Tensor],
                 positions: torch.Tensor, mask: torch.Tensor | None, context: int, recompute: list[int],
                 extra: dict[str, Any]) -> Any:  # fmt: skip
    """Splice the whole block, then compute the recomputed tokens in one pass with a 4D mask, and
    put their keys and values where the spliced ones were."""
    length = ids.shape[1]
    _append(cache, keys, values, 0, length)
    device = ids.device
    chosen = torch.tensor(recompute, device=device)
    allowed = torch.zeros((len(recompute), context + length + len(recompute)), dtype=torch.bool, device=device)
    allowed[:, :context] = True if mask is None else mask[0, :context].to(device=device, dtype=torch.bool)
    offsets = torch.arange(length, device=device)
    spliced = torch.ones(length, dtype=torch.bool, device=device)
    spliced[chosen] = False
    allowed[:, context : context + length] = (offsets[None, :] < chosen[:, None]) & spliced[None, :]
    allowed[:, context + length :] = chosen[None, :] <= chosen[:, None]
    bias = torch.zeros(allowed.shape, dtype=model.dtype, device=device)
    bias = bias.masked_fill(~allowed, torch.finfo(model.dtype).min)[None, None]
    outputs = model(
        input_ids=ids[:, chosen], position_ids=positions[chosen][None], attention_mask=bias, use_cache=True,
        **cache_kwarg(cache), return_dict=True, **extra,
    )  # fmt: skip
    at = context + chosen
    for layer in cache_layers(cache_of(outputs)):
        layer.keys[..., at, :] = layer.keys[..., context + length :, :]
        layer.values[..., at, :] = layer.values[..., context + length :, :]
        layer.keys = layer.keys[..., : context + length, :]
        layer.values = layer.values[..., : context + length, :]
    return outputs


def _reused(plan: BlockPlan, found: Sequence[bool], recompute: Sequence[int]) -> int:
    """Spliced positions (not recomputed) whose piece's block was found in the cache of memories."""
    computed = set(recompute)
    return sum(
        1 for piece, hit in zip(plan.pieces, found, strict=True) if hit
        for offset in range(piece.start, piece.end) if offset not in computed
    )  # fmt: skip


def _rotary(model: Any) -> Rotary | str:
    """The model's :class:`Rotary`, or why it has none (once per model)."""
    known = _ROTARIES.get(model)
    if known is None:
        try:
            known = Rotary.of(model)
            if known.sliced:  # Phi, StableLM: their spliced blocks were not checked against tokens mode
                known = f"{type(model).__name__} rotates a slice of each head apart: its notes are injected as tokens"
        except NoRotaryEmbeddingError as error:  # its first sentence names the model and the reason
            known = f"{str(error).split(':')[0].rstrip('.')}: its blocks' keys cannot be moved to where they land"
        _ROTARIES[model] = known
    return known

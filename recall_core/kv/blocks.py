"""A recall's memory block cut into pieces whose keys and values can be computed once and reused.

The block injected at a ``<recall>`` is :func:`~recall_core.decoding.notes.memory_token_ids`: the
template's text, the notes (one per memory) and the line breaks between them. In ``kv`` mode
it is cut into **pieces**: the template's text before the notes, each note, each line break
between notes, the template's text after them. A piece's keys and values (a :class:`BlockKV`)
depend only on the model, its ids and what it was computed after (its *prefix*), so a note's
KV can be computed once (at write time, or at its first recall) and spliced into any later
recall's cache after moving its keys to the positions it lands on (exact RoPE re-rotation,
:mod:`recall_core.kv.cache`).

The pieces always add up to exactly the ids ``tokens`` mode injects: each piece is tokenized
alone and, where that differs from the block's own tokenization (a BPE merge across a piece
boundary), neighbouring pieces are merged until it does not. :func:`model_fingerprint` names
a model's weights and config, so a piece's KV is never used for another model.
"""

from __future__ import annotations

import hashlib
import json
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
from transformers import DynamicCache

from recall_core.config import RecallConfig
from recall_core.decoding.hf_compat import cache_kwarg, last_logit_only
from recall_core.decoding.notes import block_ids, note_lines, plain_ids
from recall_core.kv.cache import repeated_rows
from recall_core.types import MemoryCandidate

_SENTINEL = "\x00recall-notes\x00"
#: Pieces computed in one batched forward pass at most (bounds the padded batch's memory).
_BATCH = 16


@dataclass(frozen=True)
class Piece:
    """A run of the block's ids whose KV is computed on its own.

    Attributes:
        start: offset of its first id in the block.
        ids: its ids.
        text: the text they stand for.
        owners: ids of the memories whose words it holds (a note: its memory, and the turns
            the memory's text covers); empty for the template's text and line breaks.
        leading: it starts the block (with ``kv_prefix="shared"`` it is computed after the
            system header only, not after the template's instruction, which it holds itself).
    """

    start: int
    ids: tuple[int, ...]
    text: str
    owners: tuple[str, ...] = ()
    leading: bool = False

    @property
    def end(self) -> int:
        return self.start + len(self.ids)


@dataclass(frozen=True)
class BlockPlan:
    """The ids a recall injects (exactly ``tokens`` mode's) and the pieces that cover them in order."""

    ids: tuple[int, ...]
    pieces: tuple[Piece, ...]


@dataclass(frozen=True, eq=False)
class BlockKV:
    """One piece's keys and values, every layer, as a forward pass over ``prefix + ids`` cached them.

    Attributes:
        keys: per layer ``[kv_heads, length, head_dim]``, rotated by positions
            ``offset .. offset + length - 1``.
        values: per layer ``[kv_heads, length, head_dim]``.
        offset: the position of the piece's first key (the prefix's length).
    """

    keys: tuple[torch.Tensor, ...]
    values: tuple[torch.Tensor, ...]
    offset: int

    @property
    def length(self) -> int:
        return int(self.keys[0].shape[-2]) if self.keys else 0

    @property
    def nbytes(self) -> int:
        return sum(t.nelement() * t.element_size() for t in (*self.keys, *self.values))

    def to(self, device: torch.device | str) -> BlockKV:
        """The same block on ``device`` (itself when it is there already)."""
        if not self.keys or self.keys[0].device == torch.device(device):
            return self
        return BlockKV(tuple(k.to(device) for k in self.keys), tuple(v.to(device) for v in self.values), self.offset)


# --------------------------------------------------------------------------- the plan
def plan_block(tokenizer: Any, memories: Sequence[MemoryCandidate | str], config: RecallConfig,
               lines: Sequence[str] | None = None) -> BlockPlan:  # fmt: skip
    """The pieces of the block injected for ``memories`` (ids exactly those of ``tokens`` mode).

    ``lines``, when given, are the memories' :func:`~recall_core.decoding.notes.note_lines` already written.
    """
    lines = list(lines) if lines is not None else note_lines(tokenizer, memories, config)
    full = tuple(block_ids(tokenizer, "\n".join(lines), config))
    parts = config.block_text(_SENTINEL).split(_SENTINEL)
    if len(parts) != 2:  # {text} more than once: one piece, the whole block
        return BlockPlan(full, (Piece(0, full, config.block_text("\n".join(lines)), _all_owners(memories), True),))
    header, footer = parts
    texts: list[tuple[str, tuple[str, ...]]] = [(header, ())]
    for index, (line, memory) in enumerate(zip(lines, memories, strict=True)):
        if index:
            texts.append(("\n", ()))
        texts.append((line, _owners(memory)))
    texts.append((footer, ()))
    return BlockPlan(full, _align(tokenizer, [t for t in texts if t[0]], full))


def _align(tokenizer: Any, texts: list[tuple[str, tuple[str, ...]]], full: tuple[int, ...]) -> tuple[Piece, ...]:
    """Pieces of ``texts`` whose ids, each tokenized alone, add up to ``full``; neighbours whose
    boundary tokenizes differently together are merged (the whole text, at worst, is ``full``)."""
    ids = [tuple(plain_ids(tokenizer, text)) for text, _ in texts]
    while sum(ids, ()) != full:
        for i in range(len(texts) - 1):
            if tuple(plain_ids(tokenizer, texts[i][0] + texts[i + 1][0])) != ids[i] + ids[i + 1]:
                break
        else:  # every pair is fine yet the whole differs: one piece
            i = -1
        if i < 0 or len(texts) == 1:
            texts = [("".join(t for t, _ in texts), tuple(dict.fromkeys(o for _, os in texts for o in os)))]
            ids = [full]
            break
        texts[i : i + 2] = [(texts[i][0] + texts[i + 1][0], tuple(dict.fromkeys(texts[i][1] + texts[i + 1][1])))]
        ids[i : i + 2] = [tuple(plain_ids(tokenizer, texts[i][0]))]
    pieces, start = [], 0
    for (text, owners), piece_ids in zip(texts, ids, strict=True):
        pieces.append(Piece(start, piece_ids, text, owners, start == 0))
        start += len(piece_ids)
    return tuple(pieces)


def _owners(memory: MemoryCandidate | str) -> tuple[str, ...]:
    if isinstance(memory, str):
        return ()
    covers = str((memory.metadata or {}).get("covers") or "")
    return tuple(dict.fromkeys([memory.id, *filter(None, covers.split(","))]))


def _all_owners(memories: Sequence[MemoryCandidate | str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(o for m in memories for o in _owners(m)))


def recompute_offsets(plan: BlockPlan, recompute: int | str) -> list[int]:
    """Offsets in the block computed at the recall: the first ``recompute`` of each piece, and the last id."""
    length = len(plan.ids)
    if recompute == "all":
        return list(range(length))
    chosen = {length - 1}
    for piece in plan.pieces:
        chosen.update(range(piece.start, min(piece.end, piece.start + int(recompute))))
    return sorted(chosen)


# --------------------------------------------------------------------------- prefixes
#: Per tokenizer: the system-message header of its chat template (or its BOS token).
_SINKS: weakref.WeakKeyDictionary[Any, tuple[int, ...]] = weakref.WeakKeyDictionary()


def prefix_ids(tokenizer: Any, config: RecallConfig, leading: bool) -> tuple[int, ...]:
    """What a piece is computed after (its keys and values are dropped afterwards).

    ``kv_prefix="none"``: nothing. ``"shared"``: the chat template's system-message header
    (``"<|im_start|>system\\n"``; the tokenizer's BOS token without a chat template), where the
    block lands with the default ``recall_position``; then, for every piece but the first,
    the template's text before ``{text}``, so a note has read the instruction it follows.
    """
    if config.kv_prefix == "none":
        return ()
    sink = system_header_ids(tokenizer)
    if leading:
        return sink
    header = config.block_text(_SENTINEL).split(_SENTINEL)[0]
    return sink + tuple(plain_ids(tokenizer, header))


def system_header_ids(tokenizer: Any) -> tuple[int, ...]:
    """The ids a system message starts with in ``tokenizer``'s chat template, else its BOS token."""
    try:
        cached = _SINKS.get(tokenizer)
    except TypeError:  # not weak-referenceable
        cached = None
    if cached is not None:
        return cached
    ids: tuple[int, ...] = ()
    if getattr(tokenizer, "chat_template", None):
        try:
            text = tokenizer.apply_chat_template([{"role": "system", "content": _SENTINEL}], tokenize=False)
        except Exception:  # a template without a system role, or one that needs more messages
            text = ""
        if isinstance(text, str) and _SENTINEL in text:
            ids = tuple(tokenizer(text.split(_SENTINEL)[0], add_special_tokens=False).input_ids)
    if not ids and getattr(tokenizer, "bos_token_id", None) is not None:
        ids = (int(tokenizer.bos_token_id),)
    try:
        _SINKS[tokenizer] = ids
    except TypeError:
        pass
    return ids


# --------------------------------------------------------------------------- computing pieces
@torch.no_grad()
def compute_blocks(model: Any, prefix: Sequence[int], pieces: Sequence[Sequence[int]]) -> list[BlockKV]:
    """The KV of each of ``pieces`` computed after ``prefix`` (whose own KV is dropped).

    The prefix runs once; the pieces run together, right-padded (a causal model's real
    tokens never see the padding after them), in batches of at most 16.
    """
    device = model.device
    prefix_cache = DynamicCache(config=model.config)
    if prefix:
        model(input_ids=torch.tensor([list(prefix)], device=device), use_cache=True,
              **cache_kwarg(prefix_cache), **last_logit_only(model))  # fmt: skip
    m = len(prefix)
    out: list[BlockKV | None] = [None] * len(pieces)
    order = sorted(range(len(pieces)), key=lambda i: len(pieces[i]))  # similar lengths together: less padding
    for first in range(0, len(order), _BATCH):
        batch = order[first : first + _BATCH]
        longest = max(len(pieces[i]) for i in batch)
        ids = torch.zeros((len(batch), longest), dtype=torch.long, device=device)
        mask = torch.zeros((len(batch), m + longest), dtype=torch.long, device=device)
        mask[:, :m] = 1
        for row, i in enumerate(batch):
            ids[row, : len(pieces[i])] = torch.tensor(list(pieces[i]), device=device)
            mask[row, m : m + len(pieces[i])] = 1
        cache = repeated_rows(model, prefix_cache, len(batch)) if prefix else DynamicCache(config=model.config)
        positions = torch.arange(m, m + longest, device=device).expand(len(batch), -1)
        model(input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=True,
              **cache_kwarg(cache), **last_logit_only(model))  # fmt: skip
        for row, i in enumerate(batch):
            n = len(pieces[i])
            keys = tuple(layer.keys[row, :, m : m + n].clone() for layer in cache.layers)
            values = tuple(layer.values[row, :, m : m + n].clone() for layer in cache.layers)
            out[i] = BlockKV(keys, values, m)
    return out  # type: ignore[return-value]


# --------------------------------------------------------------------------- fingerprints
#: Per model: the state of the parameters the fingerprint sampled, and the fingerprint.
_FINGERPRINTS: weakref.WeakKeyDictionary[Any, tuple[tuple[Any, ...], str]] = weakref.WeakKeyDictionary()
_CONFIG_NOISE = ("transformers_version", "name_or_path", "_name_or_path", "_model_name_or_path", "_commit_hash")


#: The integer type of each float width, to sum a parameter's bits exactly.
_BITS = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def model_fingerprint(model: Any) -> str:
    """A stable hash of ``model``'s config, dtype, a sample of its weights and the sum of every
    weight's bits (40 hex digits).

    The same weights loaded again (another process, another path) give the same fingerprint;
    another model, another dtype or changed weights give another. Every parameter is sampled, and
    every one's in-place changes are seen (torch's version counter): until 2026-12-07 five were,
    and blocks computed before a change to any other layer were served after it (a reviewer).
    Memoized per model object.
    """
    params = list(model.named_parameters())
    state = tuple((p.data_ptr(), p._version) for _, p in params)  # _version: bumped by in-place edits
    cached = _FINGERPRINTS.get(model)
    if cached is not None and cached[0] == state:
        return cached[1]
    config = {k: v for k, v in model.config.to_dict().items() if k not in _CONFIG_NOISE}
    digest = hashlib.sha256()
    digest.update(json.dumps([type(model).__name__, str(model.dtype), config], sort_keys=True, default=str).encode())
    for name, param in params:
        digest.update(f"{name}{tuple(param.shape)}{param.dtype}".encode())
        if param.device.type == "meta":  # offloaded to disk by a device_map: no data here (a third review)
            continue
        flat = param.detach().reshape(-1)
        step = max(1, flat.numel() // 1024)
        digest.update(flat[::step][:1024].float().cpu().numpy().tobytes())
        # and every value, its bits summed as integers (exact, whatever the order: the same in every
        # process): an edit off the sample (one token's embedding row, a slice of a projection) kept the
        # fingerprint until 2026-12-07, and old blocks were served (a reviewer). About 0.2 s for 135M.
        bits = _BITS.get(flat.element_size())
        if bits is not None:  # in pieces: torch sums through an int64 copy (4x a float16 weight at once)
            whole = flat.contiguous().view(bits)
            total = sum(int(torch.sum(piece, dtype=torch.int64)) for piece in whole.split(1 << 22))
            digest.update(str(total).encode())
    fingerprint = digest.hexdigest()[:40]
    _FINGERPRINTS[model] = (state, fingerprint)
    return fingerprint


def content_hash(piece: Piece, prefix: Sequence[int]) -> str:
    """A hash of what a piece's KV depends on besides the model: its text, its ids and its prefix."""
    payload = json.dumps([piece.text, list(piece.ids), list(prefix)], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()

"""The two recall tokens: their names, adding them to a model, and finding their ids.

Also what the recall loop needs to know about a tokenizer (turn boundaries, and the ids that
can close a ``<recall>`` written as text), computed once per tokenizer.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any

import torch

RECALL_TOKEN = "<recall>"
MEMORY_PAD_TOKEN = "<|memory_pad|>"
#: Norm of the ``<|memory_pad|>`` embedding relative to the mean embedding norm: it only marks
#: injected positions and is never fed to the model, so it should carry little weight.
MEMORY_PAD_NORM_RATIO = 0.1


def recall_token_ids(model: Any, tokenizer: Any) -> tuple[int, int]:
    """``(<recall> id, <|memory_pad|> id)`` from the tokenizer, else from the model's config."""
    if tokenizer is not None:
        vocab = tokenizer.get_vocab()
        if RECALL_TOKEN in vocab and MEMORY_PAD_TOKEN in vocab:
            return vocab[RECALL_TOKEN], vocab[MEMORY_PAD_TOKEN]
    ids = getattr(model.config, "recall_token_id", None), getattr(model.config, "memory_pad_token_id", None)
    if None in ids:
        raise ValueError(
            f"the model has no {RECALL_TOKEN} / {MEMORY_PAD_TOKEN} tokens: load it with recall_core.load_model() "
            "or call recall_core.add_recall_tokens(model, tokenizer) first"
        )
    return ids  # type: ignore[return-value]


@dataclass(frozen=True)
class TokenizerInfo:
    """Turn boundaries (special tokens) and the ids whose text can end a literal ``<recall>``."""

    boundary_ids: frozenset[int]
    closing_ids: frozenset[int]


#: Per tokenizer: its size when the info was computed, and the info. Weak keys: a cached
#: tokenizer is not kept alive by the cache.
_TOKENIZER_INFO: weakref.WeakKeyDictionary[Any, tuple[int, TokenizerInfo]] = weakref.WeakKeyDictionary()


def tokenizer_info(tokenizer: Any, recall_id: int, pad_id: int) -> TokenizerInfo:
    """Turn boundaries (special tokens) and ids that can end a literal ``<recall>``, once per tokenizer."""
    cached = _TOKENIZER_INFO.get(tokenizer)
    if cached is not None and cached[0] == len(tokenizer):  # a tokenizer that grew is looked at again
        return cached[1]
    boundary = frozenset(tokenizer.all_special_ids) - {recall_id, pad_id}
    pieces = tokenizer.convert_ids_to_tokens(list(range(len(tokenizer))))
    closing = frozenset(i for i, piece in enumerate(pieces) if piece and ">" in piece and i not in boundary)
    info = TokenizerInfo(boundary, closing - {recall_id, pad_id})
    _TOKENIZER_INFO[tokenizer] = (len(tokenizer), info)
    return info


def starting_rows(known: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The rows :func:`add_recall_tokens` starts ``<recall>`` and ``<|memory_pad|>`` from, given the
    embedding's known rows: the mean embedding (a neutral token the model has never seen), and a
    vector along it of :data:`MEMORY_PAD_NORM_RATIO` of the mean norm."""
    mean_vector = known.mean(dim=0)
    direction = mean_vector / mean_vector.norm().clamp_min(1e-8)
    return mean_vector, direction * known.norm(dim=-1).mean() * MEMORY_PAD_NORM_RATIO


def add_recall_tokens(model: Any, tokenizer: Any) -> tuple[int, int]:
    """Add ``<recall>`` and ``<|memory_pad|>`` as special tokens, resizing the embeddings.

    The ``<|memory_pad|>`` embedding gets 10% of the mean embedding norm (small: it is never fed to the model): it only
    marks injected positions in ``sequences`` and is never fed to the model. It is also put in
    the generation config's ``suppress_tokens`` so no decoding loop ever samples it.
    Idempotent: a model that already has the tokens is left as it is.

    Returns:
        ``(recall_token_id, memory_pad_token_id)``.
    """
    missing = [token for token in (RECALL_TOKEN, MEMORY_PAD_TOKEN) if token not in tokenizer.get_vocab()]
    if missing:
        tokenizer.add_special_tokens({"additional_special_tokens": missing}, replace_extra_special_tokens=False)
    recall_id = tokenizer.convert_tokens_to_ids(RECALL_TOKEN)
    pad_id = tokenizer.convert_tokens_to_ids(MEMORY_PAD_TOKEN)
    embeddings = model.get_input_embeddings()
    resized = embeddings.num_embeddings < len(tokenizer)
    if resized:
        model.resize_token_embeddings(len(tokenizer), mean_resizing=False)
        embeddings = model.get_input_embeddings()
    # A model that has had the tokens (its config names them: a recall-tuned model saved merged) keeps
    # its rows, trained ones included, even when its tokenizer comes without them.
    fresh = resized or (bool(missing) and getattr(model.config, "recall_token_id", None) is None)
    if fresh:
        # New rows, or a padded vocabulary's spare rows (Qwen2's): either way never trained, so both
        # start from the same neutral values, which recall_core.models.base.without_adapter restores.
        with torch.no_grad():
            embeddings.weight[recall_id], embeddings.weight[pad_id] = starting_rows(
                embeddings.weight[: min(recall_id, pad_id)])
            output = model.get_output_embeddings()
            if output is not None and output.weight.data_ptr() != embeddings.weight.data_ptr():
                output.weight[pad_id] = 0.0
                if getattr(output, "bias", None) is not None:
                    output.bias[pad_id] = 0.0
    # Kept on the config so a loop given no tokenizer still knows the two ids.
    model.config.recall_token_id = recall_id
    model.config.memory_pad_token_id = pad_id
    suppressed = list(model.generation_config.suppress_tokens or [])
    if pad_id not in suppressed:
        model.generation_config.suppress_tokens = [*suppressed, pad_id]
    return recall_id, pad_id

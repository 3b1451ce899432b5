"""What the recall loop needs to know about a tokenizer: the recall token ids, turn
boundaries, and the ids that can close a ``<recall>`` written as text. Computed once per tokenizer."""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any

from .models import MEMORY_PAD_TOKEN, RECALL_TOKEN


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

"""What gets injected for a chosen memory: token ids or embeddings, never control tokens."""

from __future__ import annotations

import logging
from typing import Any

import torch

from .config import RecallConfig

logger = logging.getLogger(__name__)
_warned_vector = False


def memory_token_ids(tokenizer: Any, text: str, config: RecallConfig) -> list[int]:
    """The ids injected in ``tokens`` mode: ``config.template`` around the memory text.

    Special tokens in the memory (``<recall>``, ``<|im_end|>``...) are split into plain
    text pieces, so a memory can never trigger a nested recall or end a turn.
    The memory text is cut to ``config.max_memory_tokens`` first.
    """
    text_ids = _plain_ids(tokenizer, text)
    if len(text_ids) > config.max_memory_tokens:
        text = tokenizer.decode(text_ids[: config.max_memory_tokens])
    return _plain_ids(tokenizer, config.template.format(text=text))


def _plain_ids(tokenizer: Any, text: str) -> list[int]:
    return list(tokenizer(text, add_special_tokens=False, split_special_tokens=True).input_ids)


@torch.no_grad()
def memory_embeddings(model: Any, tokenizer: Any, text: str, config: RecallConfig) -> torch.Tensor:
    """The ``inputs_embeds`` to feed for a memory, shape ``[1, N, hidden]``.

    ``tokens``: the embeddings of :func:`memory_token_ids` (N = their count).
    ``vector`` (experimental): one embedding, the mean of the memory's token embeddings
    rescaled to the mean embedding norm. No projector is trained yet, so the model sees
    a blurred bag of the memory's words rather than its meaning.
    """
    embed = model.get_input_embeddings()
    device = embed.weight.device
    if config.inject_mode == "tokens":
        ids = torch.tensor([memory_token_ids(tokenizer, text, config)], device=device)
        return embed(ids)
    global _warned_vector
    if not _warned_vector:
        logger.warning("inject_mode='vector' is experimental: without a trained projector it carries little meaning")
        _warned_vector = True
    ids = torch.tensor([_plain_ids(tokenizer, text)[: config.max_memory_tokens]], device=device)
    vectors = embed(ids)[0]
    mean = vectors.mean(dim=0)
    target_norm = vectors.norm(dim=-1).mean()
    return (mean / mean.norm().clamp_min(1e-8) * target_norm)[None, None, :]

"""LM-space keys for the ``hidden`` query mode.

The query is the last-layer hidden state at a ``<recall>`` token. A memory's key
is made the same way: the memory text followed by ``<recall>``, and the last-layer
hidden state at that ``<recall>``. Both are "what the model holds when it is about
to recall", so cosine between them is at least comparable.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from .models import RECALL_TOKEN


@torch.no_grad()
def lm_keys(model: Any, tokenizer: Any, texts: Sequence[str], max_tokens: int = 256) -> np.ndarray:
    """Return an array ``[len(texts), hidden_size]`` of float32 keys, one per text."""
    recall_id = tokenizer.convert_tokens_to_ids(RECALL_TOKEN)
    device = next(model.parameters()).device
    keys = []
    for text in texts:
        ids = tokenizer(text, add_special_tokens=False, split_special_tokens=True).input_ids[-max_tokens:]
        input_ids = torch.tensor([[*ids, recall_id]], device=device)
        out = model(input_ids=input_ids, output_hidden_states=True, logits_to_keep=1, return_dict=True)
        keys.append(out.hidden_states[-1][0, -1].float().cpu().numpy())
    if not keys:
        return np.zeros((0, model.config.hidden_size), dtype=np.float32)
    return np.stack(keys).astype(np.float32)

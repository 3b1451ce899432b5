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

from recall_core.tokens import RECALL_TOKEN


@torch.no_grad()
def lm_keys(model: Any, tokenizer: Any, texts: Sequence[str], max_tokens: int = 256, batch_size: int = 32) -> np.ndarray:
    """Return an array ``[len(texts), hidden_size]`` of float32 keys, one per text.

    Texts of similar length are run together, right-padded: with causal attention a token
    never sees the padding after it, so each key is what the text alone gives (tested).
    """
    recall_id = tokenizer.convert_tokens_to_ids(RECALL_TOKEN)
    device = next(model.parameters()).device
    encoded = [
        [*tokenizer(text, add_special_tokens=False, split_special_tokens=True).input_ids[-max_tokens:], recall_id]
        for text in texts
    ]
    if not encoded:
        return np.zeros((0, model.config.hidden_size), dtype=np.float32)
    keys = np.zeros((len(encoded), model.config.hidden_size), dtype=np.float32)
    order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]))
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else recall_id
    for start in range(0, len(order), max(1, batch_size)):
        rows = order[start : start + batch_size]
        width = max(len(encoded[i]) for i in rows)
        input_ids = torch.full((len(rows), width), pad_id, dtype=torch.long, device=device)
        attention = torch.zeros((len(rows), width), dtype=torch.long, device=device)
        for j, i in enumerate(rows):
            input_ids[j, : len(encoded[i])] = torch.tensor(encoded[i], device=device)
            attention[j, : len(encoded[i])] = 1
        out = model(input_ids=input_ids, attention_mask=attention, output_hidden_states=True, logits_to_keep=1, return_dict=True)
        last = torch.tensor([len(encoded[i]) - 1 for i in rows], device=device)
        hidden = out.hidden_states[-1][torch.arange(len(rows), device=device), last]
        keys[rows] = hidden.float().cpu().numpy()
    return keys

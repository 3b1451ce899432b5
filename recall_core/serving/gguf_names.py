"""llama.cpp's names for a llama model's tensors, and its rotary layout: what the GGUF writers share.

:mod:`recall_core.serving.gguf_export` writes a model's weights under these names and
:mod:`recall_core.serving.gguf_lora` an adapter's LoRA factors (``<name>.lora_a`` / ``.lora_b``).
"""

from __future__ import annotations

import numpy as np

__all__ = ["LAYER_NAMES", "permute_rotary"]

#: A llama layer's Hugging Face module names -> llama.cpp's (``blk.N.<name>.weight``).
LAYER_NAMES = {
    "input_layernorm": "attn_norm",
    "post_attention_layernorm": "ffn_norm",
    "self_attn.q_proj": "attn_q",
    "self_attn.k_proj": "attn_k",
    "self_attn.v_proj": "attn_v",
    "self_attn.o_proj": "attn_output",
    "mlp.gate_proj": "ffn_gate",
    "mlp.up_proj": "ffn_up",
    "mlp.down_proj": "ffn_down",
}


def permute_rotary(w: np.ndarray, n_head: int) -> np.ndarray:
    """Hugging Face (rotate-half) q/k rows -> llama.cpp's interleaved rotary layout."""
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)

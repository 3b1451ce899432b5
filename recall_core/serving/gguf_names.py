"""What the two GGUF writers share: llama.cpp's names for a llama model's tensors, its rotary
layout, the model's heads, and a file written whole.

:mod:`recall_core.serving.gguf_export` writes a model's weights under these names and
:mod:`recall_core.serving.gguf_lora` an adapter's LoRA factors (``<name>.lora_a`` / ``.lora_b``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from gguf import GGUFWriter

__all__ = ["LAYER_NAMES", "gguf_file", "llama_config", "permute_rotary"]

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


def llama_config(folder: Path) -> tuple[dict[str, Any], int, int]:
    """``folder``'s ``config.json``, its query heads and its key / value heads (``ValueError`` unless llama)."""
    cfg = json.loads((folder / "config.json").read_text())
    if cfg.get("model_type") != "llama":
        raise ValueError(f"only llama-architecture models are supported, got model_type={cfg.get('model_type')!r}")
    n_head = cfg["num_attention_heads"]
    return cfg, n_head, cfg.get("num_key_value_heads", n_head)


@contextmanager
def gguf_file(out: Path, name: str) -> Iterator[GGUFWriter]:
    """A llama :class:`GGUFWriter` named ``name``, writing ``out.partial``: what the block adds is
    written and the file renamed to ``out`` when it ends (an error leaves ``out`` as it was)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.name + ".partial")
    writer = GGUFWriter(partial, arch="llama")
    writer.add_name(name)
    yield writer
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    partial.replace(out)

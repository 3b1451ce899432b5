"""A recall adapter (peft LoRA) written as a llama.cpp LoRA adapter GGUF.

Why: ``RecallConfig.base_replies`` gives the replies that read no notes to the base model the
adapter was merged into. An engine serves one model, but llama.cpp's server loads LoRA
adapters beside it (``--lora``) and takes each adapter's scale per request (``"lora": [{"id":
0, "scale": s}]``). Served beside the recall-tuned model (the adapter merged), loaded
unapplied (at scale 0: ``--lora-scaled F:0``), the adapter at scale -1 takes itself out
again: ``W'x - s·BAx = Wx``, the base model's projections, with no second model in memory
(:class:`recall_core.serving.ServedRecallGenerator` sends base replies that way).

The tensors are peft's ``lora_A`` / ``lora_B`` under llama.cpp's names (``blk.N.attn_q.weight.lora_a``
...), ``lora_B``'s q / k rows permuted into llama.cpp's rotary layout as the merged weights are
(:mod:`recall_core.serving.gguf_names`), and ``adapter.lora.alpha`` so that llama.cpp scales by
``alpha / r`` as peft does. The rows the adapter trained for the recall tokens
(``trainable_token_indices``) are not a LoRA and are not written: they stay the tuned ones.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
from gguf import GGMLQuantizationType
from safetensors import safe_open

from recall_core.serving.gguf_names import LAYER_NAMES, gguf_file, llama_config, permute_rotary

__all__ = ["export_lora_gguf"]

_PEFT_NAME = re.compile(r"base_model\.model\.model\.layers\.(\d+)\.(.+)\.lora_([AB])\.weight")


def export_lora_gguf(adapter: str | Path, model_folder: str | Path, out: str | Path) -> Path:
    """Write the peft LoRA adapter folder ``adapter`` (``recall train``'s) as the llama.cpp adapter
    GGUF ``out``, for the llama model in ``model_folder`` (its ``config.json``: heads, for the
    rotary permutation). Tensors are written in float32 (a few tens of MB; exact).

    Raises:
        ValueError: not a LoRA adapter, a model that is not llama, or a module llama.cpp has no name for.
    """
    adapter, model_folder, out = Path(adapter), Path(model_folder), Path(out)
    settings = json.loads((adapter / "adapter_config.json").read_text())
    if settings.get("peft_type") != "LORA" or settings.get("use_dora") or settings.get("use_rslora"):
        raise ValueError(f"{adapter} is not a plain LoRA adapter (peft_type LORA, no DoRA / rsLoRA)")
    for key in ("alpha_pattern", "rank_pattern", "modules_to_save", "lora_bias"):
        if settings.get(key):  # one alpha and rank per file, and only the LoRA products, in llama.cpp's format
            raise ValueError(f"{adapter}: {key}={settings[key]!r} cannot be written as a llama.cpp LoRA")
    _, n_head, n_kv = llama_config(model_folder)
    with gguf_file(out, adapter.name) as writer, \
            safe_open(adapter / "adapter_model.safetensors", framework="pt") as weights:  # fmt: skip
        writer.add_string("general.type", "adapter")
        writer.add_string("adapter.type", "lora")
        writer.add_float32("adapter.lora.alpha", float(settings["lora_alpha"]))
        written = 0
        for name in sorted(weights.keys()):
            match = _PEFT_NAME.fullmatch(name)
            if match is None:
                if name.endswith("trainable_tokens_delta"):
                    continue  # trainable token rows: not a LoRA (see the module's doc)
                raise ValueError(f"{adapter}: no llama.cpp LoRA tensor for {name!r}")
            layer, module, side = match.groups()
            if module not in LAYER_NAMES:
                raise ValueError(f"no llama.cpp name for the adapted module {module!r} ({name})")
            target = f"blk.{layer}.{LAYER_NAMES[module]}.weight"
            w = weights.get_tensor(name).float().numpy()
            if side == "B" and module == "self_attn.q_proj":
                w = permute_rotary(w, n_head)
            elif side == "B" and module == "self_attn.k_proj":
                w = permute_rotary(w, n_kv)
            writer.add_tensor(f"{target}.lora_{side.lower()}", np.ascontiguousarray(w, dtype=np.float32),
                              raw_dtype=GGMLQuantizationType.F32)  # fmt: skip
            written += 1
        if not written:
            raise ValueError(f"{adapter} holds no LoRA tensors for a llama model's layers")
    return out

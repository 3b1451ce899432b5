"""A llama-architecture Hugging Face folder written as a GGUF file that llama.cpp's server loads.

Why: a serving engine (llama.cpp's ``llama-server``) runs GGUF files, and recall's default
model is a folder (the shipped Q4_1 file converted once, optionally with the recall adapter
merged). Everything comes from the folder itself, so no other GGUF is needed:

* the weights (``model.safetensors``) under llama.cpp's tensor names; ``q_proj`` / ``k_proj``
  rows are permuted into llama.cpp's rotary layout (the inverse of what transformers does when
  it reads a GGUF); tied embeddings are written once as ``token_embd.weight``;
* the hyper-parameters (``config.json``) and the chat template (``chat_template.jinja``);
* the tokenizer (``tokenizer.json``): every id keeps its Hugging Face id, special added tokens
  (``<recall>`` and ``<|memory_pad|>`` among them) are CONTROL tokens, so the ids a client
  sends mean what they mean in process;
* with ``stop_at_recall`` (the default when the folder has ``<recall>``), ``<recall>`` is the
  end-of-message token: generation stops there, which is how the served backend hands a
  model-decided recall back to the caller (llama.cpp's ``stop`` takes strings only).

``python -m recall_core.serving.gguf_export`` converts the default models into
``gguf/`` under the models folder (``$RECALL_MODELS``, else ``$RECALL_HOME/models``).
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import torch
from gguf import GGMLQuantizationType, GGUFWriter, LlamaFileType, TokenType
from gguf.quants import quantize
from safetensors import safe_open

from recall_core.serving.gguf_names import LAYER_NAMES, gguf_file, llama_config, permute_rotary
from recall_core.tokens import MEMORY_PAD_TOKEN, RECALL_TOKEN

__all__ = ["OUT_TYPES", "export_default_models", "export_gguf", "gguf_folder"]

OUT_TYPES: dict[str, tuple[GGMLQuantizationType, LlamaFileType]] = {
    "f32": (GGMLQuantizationType.F32, LlamaFileType.ALL_F32),
    "f16": (GGMLQuantizationType.F16, LlamaFileType.MOSTLY_F16),
    "q8_0": (GGMLQuantizationType.Q8_0, LlamaFileType.MOSTLY_Q8_0),
}
_GLOBAL_NAMES = {
    "model.embed_tokens.weight": "token_embd.weight",
    "model.norm.weight": "output_norm.weight",
    "lm_head.weight": "output.weight",
}
# The pre-tokenizer llama.cpp knows each supported tokenizer by (SmolLM2's is "smollm").
_PRE_TOKENIZERS = {"SmolLM2": "smollm"}


def _gguf_name(hf_name: str) -> str:
    if hf_name in _GLOBAL_NAMES:
        return _GLOBAL_NAMES[hf_name]
    match = re.fullmatch(r"model\.layers\.(\d+)\.(.+)\.weight", hf_name)
    if match is None or match.group(2) not in LAYER_NAMES:
        raise ValueError(f"no llama.cpp name for tensor {hf_name!r}")
    return f"blk.{match.group(1)}.{LAYER_NAMES[match.group(2)]}.weight"


def _write_tokenizer(writer: GGUFWriter, folder: Path, cfg: dict[str, Any], n_vocab: int, stop_at_recall: bool) -> None:
    data = json.loads((folder / "tokenizer.json").read_text())
    if data["model"].get("type") != "BPE":
        raise ValueError(f"only byte-level BPE tokenizers are supported, got {data['model'].get('type')!r}")
    by_id = {int(i): token for token, i in data["model"]["vocab"].items()}
    special: set[int] = set()
    for added in data.get("added_tokens", []):
        by_id[int(added["id"])] = added["content"]
        if added.get("special"):
            special.add(int(added["id"]))
    if sorted(by_id) != list(range(len(by_id))) or len(by_id) != n_vocab:
        raise ValueError(f"the tokenizer's {len(by_id)} ids are not 0..{n_vocab - 1} (the embedding rows)")
    tokens = [by_id[i] for i in range(n_vocab)]
    writer.add_tokenizer_model("gpt2")
    name = str(cfg.get("_model_name_or_path", ""))
    writer.add_tokenizer_pre(next((pre for key, pre in _PRE_TOKENIZERS.items() if key.lower() in name.lower()
                                   or key.lower() in folder.name.lower()), "smollm"))  # fmt: skip
    writer.add_token_list(tokens)
    writer.add_token_types([int(TokenType.CONTROL if i in special else TokenType.NORMAL) for i in range(n_vocab)])
    merges = data["model"].get("merges", [])
    writer.add_token_merges([m if isinstance(m, str) else " ".join(m) for m in merges])
    for key, setter in (("bos_token_id", writer.add_bos_token_id), ("eos_token_id", writer.add_eos_token_id),
                        ("unk_token_id", writer.add_unk_token_id), ("pad_token_id", writer.add_pad_token_id)):  # fmt: skip
        if isinstance(cfg.get(key), int):
            setter(cfg[key])
    writer.add_add_bos_token(False)  # recall sends ids; the chat template writes what it needs
    writer.add_add_space_prefix(False)
    vocab = {token: i for i, token in enumerate(tokens)}
    if stop_at_recall and RECALL_TOKEN in vocab:
        writer.add_eom_token_id(vocab[RECALL_TOKEN])
    for token, key in ((RECALL_TOKEN, "recall.recall_token_id"), (MEMORY_PAD_TOKEN, "recall.memory_pad_token_id")):
        if token in vocab:
            writer.add_uint32(key, vocab[token])


def export_gguf(folder: str | Path, out: str | Path, out_type: str = "f16", *, stop_at_recall: bool = True) -> Path:
    """Write the Hugging Face llama folder ``folder`` as the GGUF file ``out``.

    Args:
        folder: a folder with ``config.json``, ``model.safetensors``, ``tokenizer.json``.
        out: the GGUF file to write (written whole under a temporary name, then renamed).
        out_type: ``"f16"`` (default: greedy replies match float32 but for near-ties),
            ``"f32"`` (exact) or ``"q8_0"`` (smaller, more near-ties flip).
        stop_at_recall: make ``<recall>`` an end-of-generation token (see the module's doc).
    """
    if out_type not in OUT_TYPES:
        raise ValueError(f"out_type must be one of {sorted(OUT_TYPES)}, got {out_type!r}")
    folder, out = Path(folder), Path(out)
    cfg, n_head, n_kv = llama_config(folder)
    rope = cfg.get("rope_parameters") or {}
    if rope.get("rope_type", "default") != "default":
        raise ValueError(f"only default RoPE is supported, got rope_type={rope.get('rope_type')!r}")
    qtype, ftype = OUT_TYPES[out_type]
    with gguf_file(out, folder.name) as writer, safe_open(folder / "model.safetensors", framework="pt") as weights:
        n_vocab = weights.get_slice("model.embed_tokens.weight").get_shape()[0]
        writer.add_block_count(cfg["num_hidden_layers"])
        writer.add_context_length(cfg["max_position_embeddings"])
        writer.add_embedding_length(cfg["hidden_size"])
        writer.add_feed_forward_length(cfg["intermediate_size"])
        writer.add_head_count(n_head)
        writer.add_head_count_kv(n_kv)
        writer.add_rope_freq_base(float(rope.get("rope_theta", cfg.get("rope_theta", 10000.0))))
        writer.add_layer_norm_rms_eps(float(cfg["rms_norm_eps"]))
        writer.add_vocab_size(n_vocab)
        head_dim = cfg.get("head_dim") or cfg["hidden_size"] // n_head
        writer.add_rope_dimension_count(head_dim)
        if head_dim != cfg["hidden_size"] // n_head:  # llama.cpp takes hidden / heads unless told (a reviewer, 2026-12-07)
            writer.add_key_length(head_dim)
            writer.add_value_length(head_dim)
        writer.add_file_type(ftype)
        writer.add_quantization_version(2)
        _write_tokenizer(writer, folder, cfg, n_vocab, stop_at_recall)
        template = folder / "chat_template.jinja"
        if template.exists():
            writer.add_chat_template(template.read_text())
        for name in weights.keys():  # noqa: SIM118 - safe_open has keys(), not iteration
            if name == "lm_head.weight" and cfg.get("tie_word_embeddings", False):
                continue
            w = weights.get_tensor(name).to(torch.float32).numpy()
            target = _gguf_name(name)
            if target.endswith("attn_q.weight"):
                w = permute_rotary(w, n_head)
            elif target.endswith("attn_k.weight"):
                w = permute_rotary(w, n_kv)
            if w.ndim == 1 or qtype == GGMLQuantizationType.F32:  # norms stay F32, like llama.cpp's converter
                writer.add_tensor(target, w.astype(np.float32), raw_dtype=GGMLQuantizationType.F32)
            elif qtype == GGMLQuantizationType.F16:
                writer.add_tensor(target, w.astype(np.float16), raw_dtype=GGMLQuantizationType.F16)
            else:
                writer.add_tensor(target, quantize(w, qtype), raw_dtype=qtype)
    return out


def gguf_folder() -> Path:
    """Where the default models' GGUF files go: ``gguf`` under :func:`~recall_core.paths.models_dir`."""
    from recall_core.paths import models_dir

    return models_dir() / "gguf"


def export_default_models(out_type: str = "f16", *, force: bool = False) -> dict[str, Path]:
    """The default model, plain and recall-tuned (the adapter merged), as GGUF files in
    :func:`gguf_folder` (``plain.<type>.gguf``, ``recall-tuned.<type>.gguf``), and the recall
    adapter as a llama.cpp LoRA (``recall-adapter.gguf``: served unapplied beside the tuned model,
    it gives ``RecallConfig.base_replies`` the base model); existing files stay."""
    from recall_core.models.loading import DEFAULT_ADAPTER, default_model_dir, tuned_model_dir
    from recall_core.serving.gguf_lora import export_lora_gguf

    folders = {"plain": default_model_dir(), "recall-tuned": tuned_model_dir()}
    written: dict[str, Path] = {}
    for name, folder in folders.items():
        if folder is None:
            raise ValueError("the recall-tuned default model is not there: run `recall fetch-models` first")
        out = gguf_folder() / f"{name}.{out_type}.gguf"
        if force or not out.exists():
            export_gguf(folder, out, out_type)
        written[name] = out
    out = gguf_folder() / "recall-adapter.gguf"
    if force or not out.exists():
        export_lora_gguf(DEFAULT_ADAPTER, folders["plain"], out)
    written["recall-adapter"] = out
    return written


def main(argv: list[str] | None = None) -> None:
    """``python -m recall_core.serving.gguf_export [--type f16] [FOLDER OUT]``."""
    parser = argparse.ArgumentParser(description="Write recall's default models (or one folder) as GGUF files.")
    parser.add_argument("folder", nargs="?", type=Path, help="a Hugging Face llama folder (default: both default models)")
    parser.add_argument("out", nargs="?", type=Path, help="the GGUF file to write")
    parser.add_argument("--type", default="f16", choices=sorted(OUT_TYPES))
    parser.add_argument("--force", action="store_true", help="write the default models' files again")
    args = parser.parse_args(argv)
    if args.folder is not None:
        if args.out is None:
            parser.error("give OUT with FOLDER")
        print(export_gguf(args.folder, args.out, args.type))
        return
    for name, path in export_default_models(args.type, force=args.force).items():
        print(f"{name}: {path}")


if __name__ == "__main__":
    main()

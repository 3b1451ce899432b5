"""Applying a recall adapter: LoRA weights (peft, safetensors) checked against the base model they are for.

An adapter is a folder with peft's ``adapter_config.json`` and ``adapter_model.safetensors``
(stored in float16: a few MB) and ``recall_adapter.json``: the fingerprint of the base model
it was trained on, the recall token ids, and the recipe. It is applied only to that base
model: :func:`check_adapter` refuses any other, so an adapter is never silently applied to a
model it was not trained for.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import torch

from recall_core.tokens import MEMORY_PAD_TOKEN, RECALL_TOKEN

META_FILE = "recall_adapter.json"
WEIGHTS_FILE = "adapter_model.safetensors"
_CONFIG_NOISE = ("transformers_version", "name_or_path", "_name_or_path", "_model_name_or_path", "_commit_hash",
                 "torch_dtype", "dtype", "use_cache", "architectures")  # fmt: skip


def base_fingerprint(model: Any) -> str:
    """A hash of ``model``'s architecture and a sample of its weights that ignores the dtype.

    The weights are hashed at bfloat16 precision, so the same model loaded in float32 or
    bfloat16 gives the same fingerprint, and another model (or one already tuned) does not.
    """
    config = {k: v for k, v in model.config.to_dict().items() if k not in _CONFIG_NOISE}
    digest = hashlib.sha256(json.dumps([type(model).__name__, config], sort_keys=True, default=str).encode())
    params = list(model.named_parameters())
    for index in sorted({0, 1, len(params) // 2, len(params) - 2, len(params) - 1} & set(range(len(params)))):
        name, param = params[index]
        flat = param.detach().reshape(-1)
        sample = flat[:: max(1, flat.numel() // 4096)][:4096]
        digest.update(f"{name}{tuple(param.shape)}".encode())
        digest.update(sample.to(torch.bfloat16).view(torch.int16).cpu().numpy().tobytes())
    return digest.hexdigest()[:40]


def read_meta(path: str | Path) -> dict[str, Any]:
    """The ``recall_adapter.json`` of the adapter folder ``path``."""
    folder = Path(path)
    meta_file = folder / META_FILE
    if not meta_file.is_file() or not (folder / WEIGHTS_FILE).is_file():
        raise ValueError(f"{folder} is not a recall adapter: it needs {META_FILE} and {WEIGHTS_FILE} (from `recall train`)")
    try:
        return json.loads(meta_file.read_text())
    except json.JSONDecodeError as error:
        raise ValueError(f"{meta_file} is damaged: {error}") from None


def check_adapter(model: Any, tokenizer: Any, path: str | Path) -> dict[str, Any]:
    """The adapter's meta, after checking it was trained for this very base model.

    Raises:
        ValueError: another base model (fingerprint), other recall token ids, or not an adapter.
    """
    meta = read_meta(path)
    found = base_fingerprint(model)
    if meta.get("base_fingerprint") != found:
        raise ValueError(
            f"the adapter in {path} was trained for another base model ({meta.get('base_model', '?')}, fingerprint "
            f"{meta.get('base_fingerprint')}); this model's fingerprint is {found}. Train one for this model with "
            "`recall train --model ...`, or load the model without the adapter."
        )
    vocab = tokenizer.get_vocab()
    ids = {"recall_token_id": vocab.get(RECALL_TOKEN), "memory_pad_token_id": vocab.get(MEMORY_PAD_TOKEN)}
    for key, value in ids.items():
        if meta.get(key) != value:
            raise ValueError(f"the adapter in {path} has {key}={meta.get(key)}, this tokenizer {value}")
    return meta


#: The attribute :func:`apply_adapter` sets on the model it returns: the adapter's folder, where
#: ``recall train-head --out`` saves the query head trained on the merged weights
#: (:func:`recall_core.models.query_head.saved_query_head` looks there).
ADAPTER_FOLDER = "recall_adapter_folder"


def apply_adapter(model: Any, tokenizer: Any, path: str | Path) -> Any:
    """``model`` with the adapter at ``path`` merged into its weights (no runtime cost).

    The fingerprint is checked first (:func:`check_adapter`). Returns the merged model
    (a plain ``transformers`` model again), in eval mode, with the folder it came from as
    :data:`ADAPTER_FOLDER`.
    """
    from peft import PeftModel

    check_adapter(model, tokenizer, path)
    merged = PeftModel.from_pretrained(model, str(path), is_trainable=False).merge_and_unload()
    setattr(merged, ADAPTER_FOLDER, str(Path(path).expanduser().resolve()))
    return merged.eval()

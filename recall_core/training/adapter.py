"""Saving a trained recall adapter: float16 LoRA weights and their meta, moved into place whole.

Reading, checking and applying adapters is the runtime's job (:mod:`recall_core.models.lora`).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from recall_core.models.lora import META_FILE, WEIGHTS_FILE


def replace_folder(path: str | Path, write: Callable[[Path], None]) -> Path:
    """Fill ``path`` whole: ``write(staging)`` fills a sibling folder, which then takes ``path``'s place.

    A run killed or failing inside ``write`` leaves whatever was at ``path`` as it was and no
    staging folder behind; files of an older folder at ``path`` never mix with the new ones.
    """
    folder = Path(path)
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
    try:
        write(staging)
        old = folder.with_name(f".{folder.name}-replaced")
        if folder.exists():
            shutil.rmtree(old, ignore_errors=True)
            folder.rename(old)
        staging.rename(folder)
        shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return folder


def save_adapter(peft_model: Any, path: str | Path, meta: dict[str, Any],
                 extra: dict[str, str] | None = None) -> Path:
    """Save a trained peft model's adapter in ``path`` (float16 weights) with ``meta``.

    ``extra`` maps further file names to their text (the training log). Everything is written
    into a sibling folder first and moved into place at the end (:func:`replace_folder`), so a
    run killed while saving never leaves a half-written adapter under ``path`` (an older adapter
    there stays whole until the new one replaces it).
    """
    from safetensors.torch import load_file, save_file

    def write(staging: Path) -> None:
        # Only the adapters and the trained token rows: peft would also save both whole embedding
        # matrices (~113 MB) because the vocabulary grew by the two recall tokens.
        peft_model.save_pretrained(str(staging), safe_serialization=True, save_embedding_layers=False)
        weights = staging / WEIGHTS_FILE
        tensors = {k: v.to(torch.float16).contiguous() for k, v in load_file(str(weights)).items()}
        save_file(tensors, str(weights), metadata={"format": "pt"})
        (staging / "README.md").unlink(missing_ok=True)  # peft's empty model card template
        for name, text in (extra or {}).items():
            (staging / name).write_text(text)
        (staging / META_FILE).write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")

    return replace_folder(path, write)

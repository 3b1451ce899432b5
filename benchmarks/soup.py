"""A uniform soup of recall adapters: the exact mean of their LoRA weight deltas, as one adapter.

Draws of one recipe answer 72 to 91 of the same 212 development facts, and agree on few of them
(``benchmarks.draws``). Averaging the weights of fine-tunes that start from one base model (a
"model soup", Wortsman et al. 2022) is the usual way to spend several draws on one model that
costs no more to run. This builds that model for LoRA adapters, without approximation: the mean
of n deltas ``s * B_i @ A_i`` (``s = alpha / r``) is one LoRA of rank ``n r`` with
``A = [A_1; ...; A_n]``, ``B = [B_1 ... B_n] / n`` and ``alpha = n alpha``, so ``s`` is kept.
The two trained token rows (``<recall>`` and the memory pad) are the mean of the draws' rows.
The mean is computed in float32 and stored in the draws' dtype (float16 from ``recall train``): a
soup is ``n`` times the size of one adapter, and the mean of its merged weights is exact up to
float16 rounding.

Measured on the development families (fiftieth session, docs/benchmarks/recall-tuning.md): the
soup of ``make adapter``'s three draws answers 80 of 212, the draws' mean (80.3), not their best
(91, the shipped adapter); nothing of it ships. This module is how those figures are made again.

Usage:
    python -m benchmarks.soup OUT ADAPTER ADAPTER [ADAPTER ...]
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

import torch

from recall_core.models.lora import META_FILE, WEIGHTS_FILE, read_meta
from recall_core.training.adapter import replace_folder

CONFIG_FILE = "adapter_config.json"
#: What every draw must share for the soup to be their mean: the same base model and recall
#: tokens (the meta), and the same LoRA shape and scaling (peft's config).
SAME_META = ("base_fingerprint", "recall_token_id", "memory_pad_token_id")
SAME_CONFIG = ("r", "lora_alpha", "target_modules", "trainable_token_indices", "use_rslora", "use_dora")


def _shared(values: Sequence[dict], keys: Sequence[str], what: str, folders: Sequence[Path]) -> None:
    for key in keys:
        seen = [v.get(key) if key != "target_modules" else sorted(v.get(key) or []) for v in values]
        if any(s != seen[0] for s in seen):
            found = ", ".join(f"{f}: {s}" for f, s in zip(folders, seen, strict=True))
            raise ValueError(f"adapters: every adapter needs the same {what} {key!r}; found {found}")


def soup(out: str | Path, adapters: Sequence[str | Path]) -> Path:
    """Write the uniform soup of ``adapters`` (folders from ``recall train``) into ``out``.

    Raises:
        ValueError: fewer than two adapters, or adapters that differ in base model, recall
            tokens, LoRA rank, alpha, targets or trained tokens, or use DoRA or rsLoRA (where the
            mean is not a LoRA of this form).
    """
    from safetensors.torch import load_file, save_file

    folders = [Path(a) for a in adapters]
    if len(folders) < 2:
        raise ValueError(f"adapters: a soup needs at least 2 adapters, got {len(folders)}")
    metas = [read_meta(f) for f in folders]
    configs = [json.loads((f / CONFIG_FILE).read_text()) for f in folders]
    _shared(metas, SAME_META, "meta", folders)
    _shared(configs, SAME_CONFIG, "LoRA setting", folders)
    if configs[0].get("use_dora") or configs[0].get("use_rslora"):
        raise ValueError("adapters: DoRA and rsLoRA adapters are not supported (their mean is not a plain LoRA)")
    states = [load_file(str(f / WEIGHTS_FILE)) for f in folders]
    if any(set(s) != set(states[0]) for s in states):
        raise ValueError("adapters: every adapter needs the same weight names (the same targets and layers)")
    n = len(folders)
    mixed: dict[str, torch.Tensor] = {}
    for name in states[0]:
        dtype = states[0][name].dtype
        parts = [s[name].float() for s in states]
        if ".lora_A." in name:
            mixed[name] = torch.cat(parts, dim=0)  # (n r, in)
        elif ".lora_B." in name:
            mixed[name] = torch.cat(parts, dim=1) / n  # (out, n r): the mean of the deltas
        else:
            mixed[name] = torch.stack(parts).mean(dim=0)  # trained token rows (their values)
        mixed[name] = mixed[name].to(dtype).contiguous()
    config = dict(configs[0], r=configs[0]["r"] * n, lora_alpha=configs[0]["lora_alpha"] * n)
    meta = dict(metas[0], soup=[{"adapter": str(f), "seed": m.get("recipe", {}).get("seed")}
                                for f, m in zip(folders, metas, strict=True)])  # fmt: skip
    meta.pop("checks", None)  # the first draw's checks are not the soup's

    def write(staging: Path) -> None:
        save_file(mixed, str(staging / WEIGHTS_FILE), metadata={"format": "pt"})
        (staging / CONFIG_FILE).write_text(json.dumps(config, indent=2) + "\n")
        (staging / META_FILE).write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")

    # Whole or not at all: a soup's rank differs from its draws', so its weights beside an older
    # folder's config (or an older query head) would load as a wrong model.
    return replace_folder(out, write)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="the folder to write the soup into")
    parser.add_argument("adapters", nargs="+", help="adapter folders written by `recall train`")
    args = parser.parse_args(argv)
    try:
        folder = soup(args.out, args.adapters)
    except ValueError as error:
        parser.error(str(error))
    print(f"wrote {folder}: the mean of {len(args.adapters)} adapters")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The training log of a recall adapter as a table and a plot (loss per step).

Usage:
    python -m benchmarks.training_report                       # the shipped adapter
    python -m benchmarks.training_report --adapter DIR --out docs/figures/recall_tuning_loss.png
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from benchmarks.common.plotting import pyplot, save

ROOT = Path(__file__).resolve().parents[1]


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--adapter", type=Path, default=ROOT / "recall_core" / "models" / "weights" / "smollm2-135m-recall")
    p.add_argument("--out", type=Path, default=ROOT / "docs" / "figures" / "recall_tuning_loss.png")
    p.add_argument("--every", type=int, default=25, help="steps per row of the table")
    args = p.parse_args(argv)
    log = json.loads((args.adapter / "training_log.json").read_text())
    losses = log["losses"]
    print(f"adapter: {args.adapter}  steps: {len(losses)}  seconds: {log['seconds']}")
    print("examples:", ", ".join(f"{k} {v}" for k, v in log["counts"].items()))
    print("| steps | mean loss |\n| --- | --- |")
    for start in range(0, len(losses), args.every):
        chunk = losses[start : start + args.every]
        print(f"| {start + 1}-{start + len(chunk)} | {sum(chunk) / len(chunk):.3f} |")
    print("checks:", json.dumps(log.get("checks", {})))

    plt = pyplot()
    window = 10
    smooth = [sum(losses[max(0, i - window + 1) : i + 1]) / len(losses[max(0, i - window + 1) : i + 1])
              for i in range(len(losses))]  # fmt: skip
    fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.plot(range(1, len(losses) + 1), losses, color="tab:gray", alpha=0.4, label="loss per step")
    ax.plot(range(1, len(losses) + 1), smooth, color="tab:green", label=f"mean of {window}")
    ax.set_yscale("log")
    ax.set_xlabel("step (8 examples)")
    ax.set_ylabel("weighted cross-entropy")
    ax.set_title(f"recall tuning of {log.get('base_model', '?')} (seed {log['recipe']['seed']})")
    ax.legend()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    save(fig, args.out)
    print(f"written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Can a write find the older memory a new user turn supersedes by similarity? (No: measured here.)

Issue 19 asks the memory to know, at write time, that a newer turn states a new value for
something said before (mark the older memory superseded, or "(earlier)"). The cheap way is
the encoder: when a new user turn's nearest earlier user turn is closer than a threshold, call
the older one superseded. This script measures that rule on the conversation families, whose
turns name the facts they state (``Turn.facts``): for each user turn, its nearest earlier user
turn by cosine (the same encoder as the memory), and whether the two state the same fact.

Per threshold: how many turns the rule would mark (``fired``), how many of those marks are
right (same fact: ``precision``), and how many of the turns that do restate an earlier fact
it finds (``recall``). Questions (turns ending in "?") are left out, as a writer would.

Usage:
    python -m benchmarks.supersede                 # training seed 1000, 3 users per family
    python -m benchmarks.supersede --users 5 --seed 1001
Writes benchmarks/out/supersede/supersede.json and .md.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402

from benchmarks.common.args import OUT as OUT_ROOT  # noqa: E402
from benchmarks.common.results import machine, write_results  # noqa: E402
from recall_core.training.families import FAMILIES, generate  # noqa: E402

OUT = OUT_ROOT / "supersede"
THRESHOLDS = (0.5, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9)


def pairs(encoder: Any, seed: int, users: int) -> dict[str, list[tuple[float, bool, bool]]]:
    """Per family, one row per user turn after the first: (cosine to its nearest earlier user
    turn, that turn states the same fact, some earlier turn states the same fact)."""
    out: dict[str, list[tuple[float, bool, bool]]] = {}
    for family in FAMILIES:
        rows = out.setdefault(family, [])
        for user in generate(family, seed, users=users):
            turns = [t for t in user.turns if t.role == "user" and not t.content.rstrip().endswith("?")]
            if len(turns) < 2:
                continue
            vectors = np.asarray(encoder.encode([t.content for t in turns]), dtype=np.float32)
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True).clip(min=1e-12)
            similar = vectors @ vectors.T
            for j in range(1, len(turns)):
                i = int(np.argmax(similar[j, :j]))
                facts = set(turns[j].facts)
                restates = bool(facts) and any(facts & set(turns[k].facts) for k in range(j))
                rows.append((float(similar[j, i]), bool(facts & set(turns[i].facts)), restates))
    return out


def scores(rows: list[tuple[float, bool, bool]]) -> list[dict[str, Any]]:
    """Fired, precision and recall of the rule "nearest earlier turn above the threshold"."""
    positives = sum(r[2] for r in rows)
    table = []
    for threshold in THRESHOLDS:
        fired = [r for r in rows if r[0] >= threshold]
        right = sum(r[1] for r in fired)
        table.append({"threshold": threshold, "fired": len(fired), "right": right, "positives": positives,
                      "precision": right / len(fired) if fired else None,
                      "recall": right / positives if positives else None})  # fmt: skip
    return table


def markdown(result: dict[str, Any]) -> str:
    lines = ["| threshold | fired | right (same fact) | precision | recall |", "| --- | --- | --- | --- | --- |"]
    for row in result["all"]:
        precision = "-" if row["precision"] is None else f"{row['precision']:.2f}"
        recall = "-" if row["recall"] is None else f"{row['recall']:.2f} ({row['right']}/{row['positives']})"
        lines.append(f"| {row['threshold']} | {row['fired']} | {row['right']} | {precision} | {recall} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    from recall_core.memory.encoders import default_encoder

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seed", type=int, default=1000, help="family seed (1000 and up: the training seeds)")
    p.add_argument("--users", type=int, default=3)
    p.add_argument("--out", type=Path, default=OUT)
    args = p.parse_args(argv)
    by_family = pairs(default_encoder(), args.seed, args.users)
    everyone = [r for rows in by_family.values() for r in rows]
    result = {"seed": args.seed, "users": args.users, "machine": machine(),
              "all": scores(everyone), "families": {f: scores(rows) for f, rows in by_family.items()}}  # fmt: skip
    table = markdown(result)
    write_results(args.out, "supersede", result, table)
    print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Training draws of recipes, read together: what one recipe gives across seeds, beside another's.

One training run of a candidate against the shipped adapter's one run, by the sign test over
questions (:mod:`benchmarks.paired`), measures the evaluation's noise, not the training's: two
seeds of ``make adapter``'s own recipe answered 91 and 72 of the same 212 development facts
(p = 0.007 by that test; forty-eighth session). A recipe decision needs several draws a side,
read as draws. Each ``--recipe NAME SPEC [SPEC ...]`` names one recipe and its draws, each
``PATH@METHOD`` of a ``benchmarks.heldout`` run; every draw of every recipe must be asked the
same questions (one seed, the same families and users), which is checked.

For each measure of :data:`benchmarks.paired.PER_RUN_MEASURES` the table gives each draw's count, and
each recipe's mean and range. Two readings across recipes:

* **draws**: the exact permutation test of the difference in mean counts, over every way of
  splitting the pooled draws into groups of the recipes' sizes (two recipes only). With two or
  three draws a side its smallest possible p is 0.1 (three against two or three) to 0.33 (two
  against two): it says how little a few draws can tell, which is the point;
* **questions**: how many questions k of a recipe's n draws answer (``facts``), so "the draws
  agree" is a count, not an impression.

Usage:
    python -m benchmarks.draws --recipe adapter S0/heldout.json@recall:s0 S1/heldout.json@recall:s1 \
        --recipe chat C0/heldout.json@recall:c0 C1/heldout.json@recall:c1
Writes benchmarks/out/draws/draws.json, .md and .png.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.common.args import OUT
from benchmarks.common.plotting import pyplot, save
from benchmarks.common.results import write_results
from benchmarks.paired import PER_RUN_MEASURES, Row, rows_of, run_pairs, short_name

Rows = Mapping[tuple[str, str], Row]


def counts(rows: Rows, keys: Sequence[tuple[str, str]]) -> dict[str, dict[str, int]]:
    """Each measure of one draw on ``keys``: hits and the questions counted."""
    out = {}
    for m in PER_RUN_MEASURES:
        counted = [k for k in keys if m.counted(rows[k])]
        out[m.name] = {"hits": sum(m.hit(rows[k]) for k in counted), "of": len(counted)}
    return out


def permutation_p(a: Sequence[float], b: Sequence[float]) -> float:
    """The exact two-sided permutation test of mean(a) - mean(b): the share of the ways of
    splitting the pooled values into groups of ``len(a)`` and ``len(b)`` whose difference is at
    least as far from zero as the one observed (1.0 when either side is empty)."""
    if not a or not b:
        return 1.0
    pooled = [*a, *b]
    observed = abs(statistics.fmean(a) - statistics.fmean(b))
    splits = list(itertools.combinations(range(len(pooled)), len(a)))
    extreme = 0
    for chosen in splits:
        left = [pooled[i] for i in chosen]
        right = [pooled[i] for i in range(len(pooled)) if i not in chosen]
        extreme += abs(statistics.fmean(left) - statistics.fmean(right)) >= observed - 1e-9
    return extreme / len(splits)


def agreement(draws: Sequence[Rows], keys: Sequence[tuple[str, str]]) -> dict[int, int]:
    """Memory questions by how many of ``draws`` answer them: ``{k: questions}`` for k = 0..n."""
    memory = [k for k in keys if draws[0][k]["kind"] == "memory"]
    answered = Counter(sum(bool(d[k]["correct"]) for d in draws) for k in memory)
    return {k: answered.get(k, 0) for k in range(len(draws) + 1)}


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Read every recipe's draws, on the questions they were all asked; refuse draws asked
    different questions (another seed, family or user count), naming the first one."""
    names = [recipe[0] for recipe in args.recipe]
    if len(set(names)) != len(names):
        raise ValueError(f"--recipe names must differ, got {names}")
    if any(len(recipe) < 2 for recipe in args.recipe):
        raise ValueError("--recipe takes a NAME and at least one PATH@METHOD draw")
    draws = {name: {spec: rows_of(spec) for spec in specs} for name, *specs in args.recipe}
    every = [(spec, rows) for recipe in draws.values() for spec, rows in recipe.items()]
    keys = sorted(every[0][1])
    for spec, rows in every[1:]:
        if set(rows) != set(keys):
            raise ValueError(f"{spec} was asked other questions than {every[0][0]} "
                             f"({len(set(rows) ^ set(keys))} differ): draws must share seed, families and users")  # fmt: skip
    recipes = []
    for name, recipe in draws.items():
        per_draw = {spec: counts(rows, keys) for spec, rows in recipe.items()}
        summary = {}
        for m in PER_RUN_MEASURES:
            hits = [c[m.name]["hits"] for c in per_draw.values()]
            summary[m.name] = {"mean": statistics.fmean(hits), "min": min(hits), "max": max(hits),
                               "of": next(iter(per_draw.values()))[m.name]["of"]}  # fmt: skip
        recipes.append({"name": name, "draws": per_draw, "summary": summary,
                        "agreement": agreement(list(recipe.values()), keys)})  # fmt: skip
    result: dict[str, Any] = {"benchmark": "draws", "schema_version": 1, "questions": len(keys), "recipes": recipes}
    if len(recipes) == 2:
        result["between"] = {m.name: permutation_p([c[m.name]["hits"] for c in recipes[0]["draws"].values()],
                                                   [c[m.name]["hits"] for c in recipes[1]["draws"].values()])
                             for m in PER_RUN_MEASURES}  # fmt: skip
    write_results(args.out, "draws", result, markdown(result), plot)
    return result


def markdown(result: Mapping[str, Any]) -> str:
    """Per recipe: each draw's counts, then mean and range; the permutation p and the agreement."""
    head = "| recipe · draw | " + " | ".join(m.name + (" ↑" if m.more_is_better else " ↓") for m in PER_RUN_MEASURES) + " |"
    lines = [head, "|" + " --- |" * (len(PER_RUN_MEASURES) + 1)]
    for recipe in result["recipes"]:
        for spec, c in recipe["draws"].items():
            lines.append(f"| {recipe['name']} · {short_name(spec)} | "
                         + " | ".join(f"{c[m.name]['hits']} / {c[m.name]['of']}" for m in PER_RUN_MEASURES) + " |")  # fmt: skip
        s = recipe["summary"]
        lines.append(f"| **{recipe['name']}: mean (range)** | "
                     + " | ".join(f"**{s[m.name]['mean']:.1f}** ({s[m.name]['min']}-{s[m.name]['max']})" for m in PER_RUN_MEASURES)
                     + " |")  # fmt: skip
    if "between" in result:
        first, second = (r["name"] for r in result["recipes"])
        lines.append(f"| {first} against {second}: permutation p over draws | "
                     + " | ".join(f"{result['between'][m.name]:.3f}" for m in PER_RUN_MEASURES) + " |")  # fmt: skip
    lines += ["", "Facts answered by k of a recipe's n draws (memory questions):", ""]
    for recipe in result["recipes"]:
        lines.append(f"- {recipe['name']}: " + ", ".join(f"{k} of {len(recipe['draws'])}: {n}"
                                                        for k, n in recipe["agreement"].items()))  # fmt: skip
    lines += ["", f"{result['questions']} questions, the same for every draw. ↑ more is better, ↓ fewer is better."]
    return "\n".join(lines) + "\n"


def plot(result: Mapping[str, Any], path: Path) -> Path:
    """Facts per draw, one column per recipe, with each recipe's mean as a bar."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(max(4.0, 1.6 * len(result["recipes"])), 3.4))
    for x, recipe in enumerate(result["recipes"]):
        hits = [c["facts"]["hits"] for c in recipe["draws"].values()]
        ax.scatter([x] * len(hits), hits, zorder=3)
        ax.hlines(recipe["summary"]["facts"]["mean"], x - 0.25, x + 0.25, colors="black")
    ax.set_xticks(range(len(result["recipes"])), [r["name"] for r in result["recipes"]])
    ax.set_xlim(-0.6, len(result["recipes"]) - 0.4)
    ax.set_ylabel(f"facts answered (of {result['recipes'][0]['summary']['facts']['of']})")
    ax.set_title("training draws: each dot one seed, the line the mean", fontsize=9)
    return save(fig, path)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--recipe", nargs="+", action="append", required=True, metavar="NAME_OR_DRAW",
                   help="a recipe's name, then its draws, each PATH@METHOD of a heldout.json (repeat per recipe)")  # fmt: skip
    p.add_argument("--out", type=Path, default=OUT / "draws")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    return run_pairs("draws", parse_args(argv), run, markdown)


if __name__ == "__main__":
    sys.exit(main())

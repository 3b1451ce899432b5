"""Two methods of ``benchmarks.heldout``, question by question: what each got that the other did not.

A count like "stale 8 / 44 against the recipe's 7 / 44" does not say whether the two differ beyond
chance; the questions one method gets and the other does not do. Each ``--pair`` names two
methods of ``heldout.json`` runs as ``PATH@METHOD`` (one run twice, or two runs of the same seed,
families and users); their rows pair by family and key, which for one seed is the same question,
system message and earlier turns. For each measure the table gives both counts, the questions only
the first or only the second has, and a two-sided exact sign test on those; the last row pools
every pair (the sets are disjoint, so the pooled test is the sign test over all of them).

Measures (``benchmarks.heldout``'s row fields):

* ``facts``: memory questions answered (``correct``), more is better;
* ``long_facts``: ``facts`` again, on the questions whose answer takes three words or more in each
  of its forms (``answers``: "a thriller set in Lagos", not "Lagos"), more is better. A model that
  keeps one word of a long value ("Thriller.") loses these and no others; the fifty-sixth session
  found the default answered 3 of ``circle``'s 14 against the recipe's 7;
* ``stale``: an earlier value of a changed fact (``stale``, of the rows with ``stale_possible``), fewer is better;
* ``idk_with_answer``: "I don't know." with the answer among the notes (``unknown_with_answer``), fewer is better;
* ``right_idk``: "I don't know." to a question whose answer was never said (``correct`` of ``unanswerable`` rows), more is better;
* ``stale_of_valued``: ``stale`` again, on the changed facts that *both* methods answered with one
  of the fact's values (the current or an earlier one), fewer is better. A method that names no
  value is never stale, so ``stale`` alone favours the one that answers fewer changed facts; this
  one asks which of the two, when both gave a value, gave the old one. It reads beside the goal's
  count, and does not replace it.

Usage:
    python -m benchmarks.paired --pair RUN/heldout.json@recall RUN/heldout.json@langchain
    python -m benchmarks.paired --pair DEV/heldout.json@recall DEVLC/heldout.json@langchain \
        --pair FRESH/heldout.json@recall FRESH/heldout.json@langchain --out benchmarks/out/paired
Writes benchmarks/out/paired/paired.json, .md and .png.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.common.args import OUT
from benchmarks.common.plotting import pyplot, save
from benchmarks.common.results import report, write_results
from recall_core.training.families import base

Row = Mapping[str, Any]


@dataclass(frozen=True)
class Measure:
    """One count of a run: the rows it is counted on, what counts, and which way is better."""

    name: str
    counted: Callable[[Row], bool]
    hit: Callable[[Row], bool]
    more_is_better: bool


#: The words an answer needs for ``long_facts``.
LONG_ANSWER_WORDS = 3


def answer_words(r: Row) -> int:
    """The words of the row's shortest answer form (articles counted; 0 where it has none)."""
    return min((len(base.normal(a).split()) for a in r.get("answers") or ()), default=0)


def _long_answer(r: Row) -> bool:
    """A memory question whose every answer form takes :data:`LONG_ANSWER_WORDS` words or more."""
    return r["kind"] == "memory" and answer_words(r) >= LONG_ANSWER_WORDS


def _changed_fact(r: Row) -> bool:
    """A memory question about a fact that changed: the rows a stale answer is counted on."""
    return r["kind"] == "memory" and bool(r.get("stale_possible"))


#: The measures one run's rows decide alone (:mod:`benchmarks.draws` counts each draw with them).
PER_RUN_MEASURES = (
    Measure("facts", lambda r: r["kind"] == "memory", lambda r: bool(r["correct"]), True),
    Measure("long_facts", _long_answer, lambda r: bool(r["correct"]), True),
    Measure("stale", _changed_fact, lambda r: bool(r["stale"]), False),
    Measure("idk_with_answer", lambda r: r["kind"] == "memory", lambda r: bool(r["unknown_with_answer"]), False),
    Measure("right_idk", lambda r: r["kind"] == "unanswerable", lambda r: bool(r["correct"]), True),
)
#: ``stale_of_valued``'s questions depend on both methods' replies, so it is only read in a pair.
MEASURES = (
    *PER_RUN_MEASURES,
    Measure("stale_of_valued", lambda r: _changed_fact(r) and bool(r["correct"] or r["stale"]), lambda r: bool(r["stale"]), False),
)


def sign_test(only_a: int, only_b: int) -> float:
    """The two-sided exact sign test of ``only_a`` against ``only_b`` discordant pairs (1.0 with none)."""
    n = only_a + only_b
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(only_a, only_b) + 1)) / 2**n
    return min(1.0, 2 * tail)


def parts(spec: str) -> tuple[str, str]:
    """``PATH@METHOD`` as ``(PATH, METHOD)``; ``ValueError`` for a spec without both."""
    path, sep, method = spec.rpartition("@")
    if not sep or not path or not method:
        raise ValueError(f"--pair takes PATH@METHOD (a heldout.json and one of its methods), not {spec!r}")
    return path, method


def rows_of(spec: str) -> dict[tuple[str, str], Row]:
    """The rows of ``PATH@METHOD``, by (family, key). Raises ``ValueError`` for a spec without a
    method, or a method the run does not hold (naming those it does)."""
    path, method = parts(spec)
    run = json.loads(Path(path).read_text(encoding="utf-8"))
    rows = {(r["family"], r["key"]): r for r in run["rows"] if r["method"] == method}
    if not rows:
        methods = sorted({r["method"] for r in run["rows"]})
        raise ValueError(f"{path} holds no rows of method {method!r}; it holds {methods}")
    return rows


def compare(a: Mapping[tuple[str, str], Row], b: Mapping[tuple[str, str], Row]) -> dict[str, Any]:
    """Each measure on the questions both ``a`` and ``b`` answered: counts, the denominator, the
    discordant questions and the sign test's p."""
    keys = sorted(set(a) & set(b))
    for k in keys:  # one question asked two ways is not a pair (until 2026-12-06 it was taken as one)
        differ = [f for f in ("question", "system", "earlier") if f in a[k] and f in b[k] and a[k][f] != b[k][f]]
        if differ:
            raise ValueError(f"question {k[1]!r} of {k[0]!r} was asked differently in the two runs ({', '.join(differ)}): "
                             "compare runs made with the same --system-messages and questions")
    out: dict[str, Any] = {"paired": len(keys), "only_in_a": len(set(a) - set(b)), "only_in_b": len(set(b) - set(a))}
    for m in MEASURES:
        counted = [k for k in keys if m.counted(a[k]) and m.counted(b[k])]
        hits_a = {k for k in counted if m.hit(a[k])}
        hits_b = {k for k in counted if m.hit(b[k])}
        only_a, only_b = len(hits_a - hits_b), len(hits_b - hits_a)
        out[m.name] = {"a": len(hits_a), "b": len(hits_b), "of": len(counted), "only_a": only_a, "only_b": only_b,
                       "p": sign_test(only_a, only_b)}  # fmt: skip
    return out


def pooled(comparisons: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The counts of several comparisons added up, with the sign test over all their discordant questions."""
    out: dict[str, Any] = {k: sum(c[k] for c in comparisons) for k in ("paired", "only_in_a", "only_in_b")}
    for m in MEASURES:
        total = {k: sum(c[m.name][k] for c in comparisons) for k in ("a", "b", "of", "only_a", "only_b")}
        out[m.name] = {**total, "p": sign_test(total["only_a"], total["only_b"])}
    return out


def markdown(result: Mapping[str, Any]) -> str:
    """The table: per pair and pooled, each measure as ``A · B / of (only A · only B, p)``."""
    head = "| pair (A against B) | " + " | ".join(m.name + (" ↑" if m.more_is_better else " ↓") for m in MEASURES) + " |"
    lines = [head, "|" + " --- |" * (len(MEASURES) + 1)]
    for label, c in [*((p["label"], p["comparison"]) for p in result["pairs"]), ("**pooled**", result["pooled"])]:
        cells = [f"{c[m.name]['a']} · {c[m.name]['b']} / {c[m.name]['of']} ({c[m.name]['only_a']} · "
                 f"{c[m.name]['only_b']}, p {_p(c[m.name]['p'])})" for m in MEASURES]  # fmt: skip
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    lines += ["", "Each cell: A's count · B's count / questions counted (only A · only B, two-sided exact sign test). "
              "↑ more is better, ↓ fewer is better."]  # fmt: skip
    return "\n".join(lines) + "\n"


def plot(result: Mapping[str, Any], path: Path) -> Path:
    """Pooled, per measure: the questions only A and only B have (the discordant pairs the test reads)."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 3.2))
    names = [m.name for m in MEASURES]
    ys = range(len(names))
    pooled_ = result["pooled"]
    ax.barh([y + 0.2 for y in ys], [pooled_[n]["only_a"] for n in names], height=0.4, label="only A")
    ax.barh([y - 0.2 for y in ys], [pooled_[n]["only_b"] for n in names], height=0.4, label="only B")
    ax.set_yticks(list(ys), [f"{n}\np {_p(pooled_[n]['p'])}" for n in names])
    ax.set_xlabel("questions (pooled over pairs)")
    ax.set_title(f"A: {result['a']}  ·  B: {result['b']}", fontsize=9)
    ax.legend()
    return save(fig, path)


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Compare every ``--pair`` and pool them. A run file in two pairs is refused: pooled sets must
    be different questions (keys repeat across seeds and families, so only the files can tell)."""
    files = [path for pair in args.pair for path in {parts(spec)[0] for spec in pair}]
    if len(files) != len(set(files)):
        raise ValueError("a run file is named in two --pair: the pooled sets must be different questions")
    pairs = []
    for spec_a, spec_b in args.pair:
        pairs.append({"a": spec_a, "b": spec_b, "label": f"{short_name(spec_a)} against {short_name(spec_b)}",
                      "comparison": compare(rows_of(spec_a), rows_of(spec_b))})  # fmt: skip
    result = {"benchmark": "paired", "schema_version": 1, "a": parts(args.pair[0][0])[1], "b": parts(args.pair[0][1])[1],
              "pairs": pairs, "pooled": pooled([p["comparison"] for p in pairs])}  # fmt: skip
    write_results(args.out, "paired", result, markdown(result), plot)
    return result


def _p(p: float) -> str:
    """A p-value as the table prints it: ``= 0.061``, or ``< 0.001``."""
    return "< 0.001" if p < 0.001 else f"= {p:.3f}"


def short_name(spec: str) -> str:
    """``FOLDER@METHOD`` of a spec: the run's folder names the set."""
    path, method = parts(spec)
    return f"{Path(path).parent.name}@{method}"


def pairs_parser(doc: str, out: Path, pair_help: str) -> argparse.ArgumentParser:
    """The command line of a study of ``--pair A B`` heldout runs (this one, :mod:`benchmarks.standing`)."""
    p = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    p.add_argument("--pair", nargs=2, action="append", required=True, metavar=("A", "B"), help=pair_help)
    p.add_argument("--out", type=Path, default=out)
    return p


def run_pairs(name: str, args: argparse.Namespace, run: Callable[[argparse.Namespace], Any],
              markdown: Callable[[Any], str]) -> int:  # fmt: skip
    """``run(args)`` and print its table; a bad run file or spec is exit code 2, said on stderr."""
    try:
        result = run(args)
    except (ValueError, OSError, KeyError) as error:
        print(f"{name}: error: {error}", file=sys.stderr)
        return 2
    return report(markdown(result), args.out)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    return pairs_parser(__doc__, OUT / "paired", "two methods to compare, each PATH@METHOD of a heldout.json "
                        "(repeat for more sets; pooled at the end)").parse_args(argv)  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    return run_pairs("paired", parse_args(argv), run, markdown)


if __name__ == "__main__":
    sys.exit(main())

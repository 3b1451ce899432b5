"""What eviction costs: a bounded session streamed far past the model's window, against the unbounded cache.

Streams LoCoMo conversations as ONE chat, far longer than the model's context window, into a
bounded :class:`recall_core.RecallSession` (sinks + the newest exchanges; evicting re-assigns
the kept positions, StreamingLLM's way: mode ``shift``) and into an unbounded one for as long
as the chat fits the window (mode ``full``), and measures on the same stream:

* **perplexity** of every message's words given the cache (``RecallSession.append`` with
  ``return_logprobs``), overall and split at the model's context window (tokens streamed
  before / after it);
* **answer quality** on LoCoMo questions (categories 1-4) asked while all their evidence is
  still in the cache (``--delay`` messages after the last evidence turn), scored with the
  official token F1. With ``--recompute`` the same questions are also answered by a fresh
  prefill of exactly the cached messages (StreamingLLM's "sliding window with
  re-computation", the quality a bounded window can reach).

No recall here (no memory): this isolates what the cache does. BENCHMARKS.md also keeps the
figures of a retired third mode, ``keep`` (evicted tokens' positions left as they were),
whose perplexity rose a hundredfold past the window. Timing is not reported (a shared
machine's timings mean little); the lead measures speed with ``benchmarks/sessions.py``.

    flock /tmp/recall-heavy.lock python -m benchmarks.session_positions \\
        --data ../shared/data/locomo_dev.json --tokens 24000 --cache 2048 --recompute

Writes ``session_positions.json`` and ``session_positions.png`` to ``--out``.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.common.args import OUT as OUT_ROOT
from benchmarks.common.locomo_data import Conversation, Question, load_locomo, resolve_data
from benchmarks.common.locomo_metrics import mean, qa_score
from benchmarks.common.plotting import pyplot, save
from benchmarks.common.progress import progress
from benchmarks.common.results import cell, write_results

OUT = OUT_ROOT / "session_positions"
SYSTEM = "A long chat log between pairs of friends, session by session. Answer questions about it in a few words."
TEMPORAL_HINT = " Use the dates of the conversation to answer with an approximate date."


# --------------------------------------------------------------------------- the stream
def stream_messages(conversations: Sequence[Conversation]) -> list[tuple[dict[str, str], str]]:
    """``(message, dia_id key)`` for every turn, conversation after conversation.

    The first speaker of each conversation is the "user", the other the "assistant"; a
    session's first turn carries the session date, a conversation's first turn who talks.
    """
    out = []
    for conversation in conversations:
        session = None
        for index, turn in enumerate(conversation.turns):
            text = f"{turn.speaker}: {turn.text}" + (f" [shares an image: {turn.caption}]" if turn.caption else "")
            if turn.session != session:
                session = turn.session
                text = f"[{turn.date}] {text}"
            if index == 0:
                text = f"(A new conversation between {conversation.speaker_a} and {conversation.speaker_b}.) {text}"
            role = "user" if turn.speaker == conversation.speaker_a else "assistant"
            out.append(({"role": role, "content": text}, f"{conversation.sample_id}/{turn.dia_id}"))
    return out


def content_span(ids: Sequence[int], content: Sequence[int]) -> tuple[int, int] | None:
    """Where the message's own words sit among the ids appended for it (the last match)."""
    for start in range(len(ids) - len(content), -1, -1):
        if list(ids[start : start + len(content)]) == list(content):
            return start, start + len(content)
    return None


def question_schedule(conversations: Sequence[Conversation], keys: Sequence[str], delay: int,
                      limit: int) -> dict[int, list[Question]]:  # fmt: skip
    """Which questions to ask after which message: ``delay`` messages after their last evidence turn."""
    at = {key: i for i, key in enumerate(keys)}
    due: dict[int, list[Question]] = {}
    candidates = []
    for conversation in conversations:
        for question in conversation.questions:
            where = [at.get(f"{conversation.sample_id}/{e}") for e in question.evidence]
            if question.category in (1, 2, 3, 4) and where and None not in where:
                candidates.append((max(where) + delay, question))  # type: ignore[type-var]
    candidates = [c for c in candidates if c[0] < len(keys)]
    step = max(1, len(candidates) // limit) if limit else 1
    for ask, question in sorted(candidates, key=lambda c: c[0])[::step][:limit]:
        due.setdefault(ask, []).append(question)
    return due


# --------------------------------------------------------------------------- one run
def run_mode(generator: Any, items: list[tuple[dict[str, str], str]], due: dict[int, list[Question]],
             mode: str, args: argparse.Namespace, show: bool) -> dict[str, Any]:  # fmt: skip
    """Stream every message into a session; score words and answer the due questions."""
    from recall_core import RecallSession

    tokenizer, window = generator.tokenizer, generator.context_window
    bounded = mode != "full"
    session = RecallSession(generator, max_cache_tokens=args.cache if bounded else None, memory=None)
    conversation = [{"role": "system", "content": SYSTEM}]
    session.append(conversation)
    streamed, nll_before, nll_after, words = 0, [], [], []
    answers, peak = [], 0
    bar = progress(None, f"{mode}", show, total=len(items), mininterval=5)
    for index, (message, _key) in enumerate(items):
        conversation.append(message)
        try:
            result = session.append(list(conversation), return_logprobs=True)
        except ValueError:
            if bounded:
                raise
            break  # the unbounded reference stops at the context window
        own = tokenizer(message["content"], add_special_tokens=False).input_ids
        span = content_span(result.token_ids, own)
        if span is not None and result.logprobs is not None and span[0] >= 1:
            scores = (-result.logprobs[span[0] - 1 : span[1] - 1]).tolist()
            (nll_before if streamed < window else nll_after).extend(scores)
            words.append((streamed, sum(scores) / max(1, len(scores))))
        streamed += len(result.token_ids)
        peak = max(peak, session.cache_tokens)
        for question in due.get(index, []):
            answers.append(_ask(generator, session, conversation, question, streamed, args))
        bar.update(1)
        if streamed >= args.tokens:
            break
    bar.close()
    ppl = _ppl(nll_before + nll_after)
    return {
        "mode": mode, "streamed_tokens": streamed, "messages": index + 1, "peak_cache_tokens": peak,
        "evicted_messages": session.evicted_messages, "perplexity": ppl,
        "perplexity_before_window": _ppl(nll_before), "perplexity_after_window": _ppl(nll_after),
        "scored_tokens": len(nll_before) + len(nll_after), "curve": words, "answers": answers,
        "f1": mean(a["score"] for a in answers), "recompute_f1": mean(a["recompute_score"] for a in answers
                                                                        if a.get("recompute_score") is not None),
    }  # fmt: skip


def _ask(generator: Any, session: Any, conversation: list[dict[str, str]], question: Question, streamed: int,
         args: argparse.Namespace) -> dict[str, Any]:  # fmt: skip
    text = question.question + (TEMPORAL_HINT if question.category == 2 else "") + " Answer in a few words."
    asked = [*conversation, {"role": "user", "content": text}]
    cached = session.messages  # what the cache holds: the window a re-computation would see
    result = session.reply(asked, max_new_tokens=args.max_new_tokens, do_sample=False)
    answer = _first_line(result.text)
    row = {"key": question.key, "category": question.category, "streamed": streamed, "answer": answer,
           "truth": question.answer, "score": qa_score(answer, question.answer, question.category),
           "cache_tokens": result.session.cache_tokens}  # fmt: skip
    if args.recompute:
        fresh = generator.generate([*cached, {"role": "user", "content": text}], memory=None,
                                   max_new_tokens=args.max_new_tokens, do_sample=False)  # fmt: skip
        row["recompute_answer"] = _first_line(fresh.text)
        row["recompute_score"] = qa_score(row["recompute_answer"], question.answer, question.category)
    return row


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[0] if lines else ""


def _ppl(nll: Sequence[float]) -> float | None:
    return math.exp(sum(nll) / len(nll)) if nll else None


# --------------------------------------------------------------------------- report
def markdown(result: dict[str, Any]) -> str:
    rows = ["| mode | streamed tokens | perplexity (all) | before the window | after the window | answers F1 (n) |"
            " F1 re-computed window |", "| --- | --- | --- | --- | --- | --- | --- |"]  # fmt: skip
    for run in result["runs"]:
        rows.append(
            f"| {run['mode']} | {run['streamed_tokens']:,} | {cell(run['perplexity'], 2)} | "
            f"{cell(run['perplexity_before_window'], 2)} | {cell(run['perplexity_after_window'], 2)} | "
            f"{cell(run['f1'], 3)} ({len(run['answers'])}) | {cell(run['recompute_f1'], 3)} |"
        )
    return "\n".join(rows)


def plot(result: dict[str, Any], out: Path) -> Path:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 4))
    size, plotted = 40, False
    for run in result["runs"]:
        points = run["curve"]
        size = min(40, max(1, len(points) // 4))  # messages per point: a rolling mean
        if not points:
            continue
        plotted = True
        xs = [points[i][0] for i in range(size - 1, len(points))]
        ys = [math.exp(sum(p[1] for p in points[i - size + 1 : i + 1]) / size) for i in range(size - 1, len(points))]
        ax.plot(xs, ys, label=run["mode"])
    ax.axvline(result["context_window"], color="grey", linestyle=":", label="context window")
    if plotted:
        ax.set_yscale("log")
    ax.set_xlabel("tokens streamed")
    ax.set_ylabel(f"perplexity (rolling, {size} messages)")
    ax.set_title(f"One {result['runs'][0]['streamed_tokens']:,}-token LoCoMo stream, cache {result['cache']} tokens")
    ax.legend()
    return save(fig, out / "session_positions.png")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", default=None, help="LoCoMo file (default: ../shared/data/locomo_dev.json)")
    p.add_argument("--model", default=None, help="model id or folder (default: the embedded SmolLM2-135M)")
    p.add_argument("--tokens", type=int, default=24000, help="stop after streaming this many tokens")
    p.add_argument("--cache", type=int, default=2048, help="max_cache_tokens of the bounded session")
    p.add_argument("--modes", default="shift,full", help="shift (bounded), full (unbounded, up to the window)")
    p.add_argument("--questions", type=int, default=60, help="most questions asked per mode")
    p.add_argument("--delay", type=int, default=4, help="messages between the last evidence turn and the question")
    p.add_argument("--recompute", action="store_true", help="also answer from a fresh prefill of the cached window")
    p.add_argument("--max-new-tokens", type=int, default=24)
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--out", default=str(OUT))
    p.add_argument("--no-progress", action="store_true")
    return p.parse_args(argv)


def run(args: argparse.Namespace, generator: Any = None) -> dict[str, Any]:
    import torch

    from recall_core import RecallGenerator

    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    conversations = load_locomo(resolve_data(args.data))
    items = stream_messages(conversations)
    generator = generator or RecallGenerator.from_pretrained(args.model)
    # Only questions the stream reaches: messages within --tokens (each with its template's few tokens).
    reach, total = 0, 0
    for message, _ in items:
        total += len(generator.tokenizer(message["content"], add_special_tokens=False).input_ids) + 5
        if total > args.tokens:
            break
        reach += 1
    due = question_schedule(conversations, [k for _, k in items[:reach]], args.delay, args.questions)
    started = time.perf_counter()
    runs = []
    for mode in [m for m in args.modes.split(",") if m]:
        # Questions go to the bounded session only: the unbounded one stops at the window.
        runs.append(run_mode(generator, items, {} if mode == "full" else due, mode, args, not args.no_progress))
    return {"model": args.model or "SmolLM2-135M-Instruct (embedded)", "context_window": generator.context_window,
            "cache": args.cache, "tokens": args.tokens, "delay": args.delay, "seconds": time.perf_counter() - started,
            "runs": runs}  # fmt: skip


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    result = run(args)
    out = write_results(Path(args.out), "session_positions", result)
    figure = plot(result, out)
    print(markdown(result))
    print(f"\nwrote {out / 'session_positions.json'} and {figure}")


if __name__ == "__main__":
    main()

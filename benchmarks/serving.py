"""Recall where models are served: many users at once, in-process against a llama.cpp server.

Simulated users ask memory questions, each over its own memory (the held-out "templated" family,
evaluation seed; one ``chroma run`` server holds every memory). At each level of concurrency U
(1, 8, 32; ``--gpu`` adds 128), U users ask at once, one question each, and every method answers
the same questions, in one run:

* ``in-process``: ``RecallGenerator`` (transformers, float32) shared by U threads;
* ``served``: ``ServedRecallGenerator`` over the engine (the recall-tuned model as F16 GGUF,
  ``--parallel`` slots, continuous batching), ``recall_policy="auto"``;
* ``served-model``: the same with ``recall_policy="model"`` (the model decides; the continuation
  after ``<recall>`` should reuse the engine's cached prefix);
* ``served-model-check-off``: ``served-model`` with ``ask_on_abstention=False``: what the
  one-token decision request (and the check request on the abstention's opening) costs;
* ``served-abstain-off``: ``served`` with ``abstain_threshold=0``: what the default's check of a
  weak "I don't know." costs (a dropped request and a re-ask of that step, counted per answer);
* ``langchain``: the LangChain recipe over the same engine: ``ChatOpenAI`` pointed at its
  OpenAI-compatible endpoint + a ``langchain-chroma`` retriever (k=4) on the same Chroma server;
* ``none``: no memory, over the same engine.

Reported per method and level: answers/s and generated tokens/s (wall), time to first token
p50/p95 (from the call, search included), facts answered, and for the served methods the
engine's prefix-cache hit rate (``cache_n`` / prompt tokens over all requests) and, after a
model-decided ``<recall>``, the share of continuations whose cached tokens cover everything the
engine had computed. Ratios are of one run, on the same questions. The engine is
started again before each served method at each level, so no method finds prompts cached by the
one before (until 2026-11-28 it was not: a later method could read an earlier one's cache).

Usage (the engine from ``make engine``; ``langchain-openai`` from the bench extra)::

    python -m benchmarks.serving                       # 1, 8, 32 users
    python -m benchmarks.serving --levels 1,8 --methods served,in-process
Writes benchmarks/out/serving/serving.json, .md and .png.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from benchmarks.common.args import OUT as OUT_ROOT  # noqa: E402
from benchmarks.common.methods import PEER_K  # noqa: E402
from benchmarks.common.peers import LANGCHAIN_SYSTEM, exchanges  # noqa: E402
from benchmarks.common.plotting import pyplot, save  # noqa: E402
from benchmarks.common.progress import progress  # noqa: E402
from benchmarks.common.results import cell, load_average, machine, report, write_results  # noqa: E402
from recall_core.training.families import base, generate  # noqa: E402

OUT = OUT_ROOT / "serving"
EVAL_SEED = 20261124
METHODS = ("in-process", "served", "served-model", "served-model-check-off", "served-abstain-off", "langchain", "none")


# -- one answer ---------------------------------------------------------------------------------


def _answer_recall(generator: Any, question: base.Question, memory: Any, config: Any, max_new: int) -> dict[str, Any]:
    started = time.perf_counter()
    first: float | None = None
    stream = generator.stream([{"role": "user", "content": question.text}], memory=memory, config=config,
                              max_new_tokens=max_new)  # fmt: skip
    pieces = []
    for piece in stream:
        if first is None:
            first = time.perf_counter() - started
        pieces.append(piece)
    result = stream.result
    row: dict[str, Any] = {"text": "".join(pieces), "ttft_s": first, "total_s": time.perf_counter() - started,
                           "generated": result.usage.generated_tokens,
                           "fired": any(r.length > 0 for r in result.recalls)}  # fmt: skip
    requests = getattr(result.output, "requests", None)
    row["dropped"] = len(getattr(result.output, "dropped", ()))  # weak "I don't know."s asked again
    if requests and not any(r.trigger == "model" and r.length > 0 for r in result.recalls):
        requests = requests[:1]  # continuations after a <recall> that injected nothing are not counted
    if requests:
        row["engine"] = [(r.prompt_tokens, r.cached_tokens, len(r.tokens)) for r in requests]
    return row


class LangChainOverEngine:
    """The recipe a LangChain user writes: ChatOpenAI at the engine + a langchain-chroma retriever."""

    def __init__(self, engine_url: str, chroma_port: int, encoder_path: str, users: Sequence[base.User], max_new: int) -> None:
        import chromadb
        from langchain_chroma import Chroma
        from langchain_huggingface import HuggingFaceEmbeddings
        from langchain_openai import ChatOpenAI

        self.chat = ChatOpenAI(base_url=f"{engine_url}/v1", api_key="none", model="recall-tuned", temperature=0,
                               max_completion_tokens=max_new, timeout=120, max_retries=0)  # fmt: skip
        embeddings = HuggingFaceEmbeddings(model_name=encoder_path)
        client = chromadb.HttpClient(host="127.0.0.1", port=chroma_port)
        self.stores: dict[str, Any] = {}
        for i, user in enumerate(users):
            store = Chroma(collection_name=f"lc-{i}", embedding_function=embeddings, client=client,
                           collection_metadata={"hnsw:space": "cosine"})  # fmt: skip
            texts = exchanges(user)
            store.add_texts([t for t, _, _ in texts], metadatas=[{"session": s} for _, _, s in texts])
            self.stores[user.user_id] = store
        self.lock = threading.Lock()

    def answer(self, question: base.Question) -> dict[str, Any]:
        from langchain_core.messages import HumanMessage, SystemMessage

        started = time.perf_counter()
        docs = self.stores[question.user_id].as_retriever(search_kwargs={"k": PEER_K}).invoke(question.text)
        system = LANGCHAIN_SYSTEM.format(context="\n\n".join(d.page_content for d in docs))
        first, pieces, generated = None, [], 0
        for chunk in self.chat.stream([SystemMessage(system), HumanMessage(question.text)], stream_usage=True):
            if chunk.content and first is None:
                first = time.perf_counter() - started
            pieces.append(str(chunk.content))
            if chunk.usage_metadata:
                generated = chunk.usage_metadata.get("output_tokens", 0)
        return {"text": "".join(pieces), "ttft_s": first, "total_s": time.perf_counter() - started,
                "generated": generated}  # fmt: skip


# -- a level of concurrency ---------------------------------------------------------------------


def run_level(method: str, answer: Any, questions: Sequence[base.Question], show: bool) -> dict[str, Any]:
    """``len(questions)`` users at once, one question each; the method's figures."""
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=len(questions)) as pool:
        rows = list(progress(pool.map(answer, questions), f"{method} x{len(questions)}", show,
                             total=len(questions), unit="answer"))  # fmt: skip
    wall = time.perf_counter() - started
    for row, question in zip(rows, questions, strict=True):
        row["correct"] = base.score(question, row["text"])["correct"]
        row["question"], row["answers"] = question.text, list(question.answers)
    ttfts = sorted(r["ttft_s"] for r in rows if r["ttft_s"] is not None)
    summary: dict[str, Any] = {
        "users": len(questions), "wall_s": wall, "answers_per_s": len(rows) / wall,
        "tokens_per_s": sum(r["generated"] for r in rows) / wall,
        "ttft_p50_s": statistics.median(ttfts) if ttfts else None,
        "ttft_p95_s": ttfts[min(len(ttfts) - 1, round(0.95 * (len(ttfts) - 1)))] if ttfts else None,
        "facts": sum(r["correct"] for r in rows), "questions": len(rows), "load": load_average(),
        "dropped": sum(r.get("dropped", 0) for r in rows),
    }  # fmt: skip
    engine = [req for r in rows for req in r.get("engine", [])]
    if engine:
        summary["prefix_hit_rate"] = sum(c for _, c, _ in engine) / max(1, sum(p for p, _, _ in engine))
        continuations = [(r["engine"][i], r["engine"][i + 1]) for r in rows if "engine" in r for i in range(len(r["engine"]) - 1)]
        if continuations:
            reused = [after[1] >= before[0] for before, after in continuations]  # the whole computed prefix
            summary["continuations"] = len(reused)
            summary["continuation_prefix_reused"] = sum(reused) / len(reused)
    return {"summary": summary, "rows": rows}


# -- the run ------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--levels", default="1,8,32", help="concurrent users per level (comma separated)")
    parser.add_argument("--gpu", action="store_true", help="add the 128-user level")
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--family", default="templated")
    parser.add_argument("--max-new-tokens", type=int, default=32)
    parser.add_argument("--parallel", type=int, default=None,
                        help="engine slots (llama-server -np; default: the most users of a level, so that a "
                             "continuation after <recall> finds its slot as it left it)")
    parser.add_argument("--slot-prompt-similarity", type=float, default=0.1,
                        help="llama-server -sps (llama.cpp's default 0.1: a request, a continuation after <recall> "
                             "too, goes to the slot whose cached prompt it shares the most of; continuations are "
                             "not pinned to a slot since 2026-12-07, and 0 would reuse none)")
    parser.add_argument("--threads", type=int, default=1, help="engine threads (1 on a shared 2-core box)")
    parser.add_argument("--gguf", type=Path, default=None, help="the served GGUF (default: the recall-tuned F16, exported)")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--no-progress", action="store_true")
    return parser.parse_args(argv)


def _questions(family: str, count: int) -> tuple[list[base.User], list[base.Question]]:
    """``count`` users, and one memory question of each."""
    users = generate(family, EVAL_SEED, users=count)
    questions = [next(q for q in u.questions if q.kind == "memory") for u in users]
    return users, questions


def run(args: argparse.Namespace) -> dict[str, Any]:
    import torch

    from recall_core import RecallConfig, RecallGenerator
    from recall_core.memory import MemoryStore, MemoryWriter
    from recall_core.memory.chroma_server import ChromaServer
    from recall_core.memory.encoders import default_encoder, default_encoder_path
    from recall_core.models.loading import tuned_model_dir
    from recall_core.serving import EngineServer, ServedRecallGenerator, export_gguf

    torch.set_num_threads(args.threads)
    levels = [int(x) for x in args.levels.split(",") if x.strip()] + ([128] if args.gpu else [])
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    bad = sorted(set(methods) - set(METHODS))
    if bad:
        raise SystemExit(f"unknown methods {bad}; choose from {', '.join(METHODS)}")
    users, questions = _questions(args.family, max(levels))
    folder = tempfile.TemporaryDirectory(prefix="recall-serving-")
    root = Path(folder.name)
    gguf = args.gguf or export_gguf(tuned_model_dir(), root / "recall-tuned.f16.gguf", "f16")  # type: ignore[arg-type]
    chroma = ChromaServer(root / "chroma").start()
    args.parallel = args.parallel or max(levels)
    engine = EngineServer(gguf, parallel=args.parallel, threads=args.threads, log_path=root / "engine.log",
                          slot_prompt_similarity=args.slot_prompt_similarity).start()
    results: dict[str, Any] = {}
    try:
        encoder = default_encoder()
        store = MemoryStore.server(port=chroma.port, encoder=encoder, journal_path=root / "journal.sqlite3")
        MemoryWriter(store).add_turns([
            {"user_id": u.user_id, "role": t.role, "content": t.content, "session_id": f"session-{t.session}",
             "timestamp": t.date, "turn_index": t.index} for u in users for t in u.turns])  # fmt: skip
        in_process = RecallGenerator.from_pretrained() if "in-process" in methods else None
        served = ServedRecallGenerator(engine.url, timeout=300)
        model_policy, no_memory = RecallConfig(recall_policy="model"), RecallConfig(recall_policy="explicit")
        abstain_off = RecallConfig(abstain_threshold=0.0)
        check_off = model_policy.replace(ask_on_abstention=False)
        memory = store.for_user
        answers = {
            "in-process": lambda q: _answer_recall(in_process, q, memory(q.user_id), None, args.max_new_tokens),
            "served": lambda q: _answer_recall(served, q, memory(q.user_id), None, args.max_new_tokens),
            "served-model": lambda q: _answer_recall(served, q, memory(q.user_id), model_policy, args.max_new_tokens),
            "served-model-check-off": lambda q: _answer_recall(served, q, memory(q.user_id), check_off,
                                                               args.max_new_tokens),
            "served-abstain-off": lambda q: _answer_recall(served, q, memory(q.user_id), abstain_off, args.max_new_tokens),
            "none": lambda q: _answer_recall(served, q, None, no_memory, args.max_new_tokens),
        }
        if "langchain" in methods:
            recipe = LangChainOverEngine(engine.url, chroma.port, str(default_encoder_path()), users, args.max_new_tokens)
            answers["langchain"] = recipe.answer
        for level in levels:
            for method in methods:  # the same questions for every method, levels in turn
                if method != "in-process":  # each starts cold: no prompt cached by the one before
                    engine.stop()
                    engine.start()
                results.setdefault(method, {})[str(level)] = run_level(method, answers[method], questions[:level],
                                                                       not args.no_progress)  # fmt: skip
        store.close()
    finally:
        engine.stop()
        chroma.stop()
        folder.cleanup()
    result = {"benchmark": "serving", "schema_version": 1, "family": args.family, "seed": EVAL_SEED,
              "levels": levels, "methods": methods, "max_new_tokens": args.max_new_tokens,
              "engine": {"kind": "llama.cpp server (xllamacpp)" if not os.environ.get("RECALL_LLAMA_SERVER")
                         else "llama-server (native)", "parallel": args.parallel, "threads": args.threads, "sps": args.slot_prompt_similarity,
                         "gguf": gguf.name},
              "command": "python -m benchmarks.serving " + " ".join(sys.argv[1:]), "machine": machine(),
              "summary": {m: {lv: r["summary"] for lv, r in by.items()} for m, by in results.items()},
              "rows": {m: {lv: r["rows"] for lv, r in by.items()} for m, by in results.items()}}  # fmt: skip
    write_results(args.out, "serving", result, markdown(result), plot)
    return result


# -- reporting ----------------------------------------------------------------------------------


def markdown(result: Mapping[str, Any]) -> str:
    lines = ["| method | users | answers/s | tokens/s | TTFT p50 s | TTFT p95 s | facts | prefix hit | continuation reuse | "
             "weak openings asked again | load |", "|---|---|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for method, by in result["summary"].items():
        for level, s in by.items():
            reuse = s.get("continuation_prefix_reused")
            reused = "-" if reuse is None else f"{reuse:.2f} of {s['continuations']}"
            lines.append(
                f"| {method} | {level} | {cell(s['answers_per_s'])} | {cell(s['tokens_per_s'], 1)} | "
                f"{cell(s['ttft_p50_s'])} | {cell(s['ttft_p95_s'])} | {s['facts']}/{s['questions']} | "
                f"{cell(s.get('prefix_hit_rate'), 2)} | "
                f"{reused} | {s.get('dropped', 0)} | "
                f"{s['load'][0] if s['load'] else '-'} |"
            )
    lines += ["", "Ratios (one run, same questions):", ""]
    summary = result["summary"]
    for level in map(str, result["levels"]):
        pairs = (("served", "in-process", "TTFT p50", "ttft_p50_s"), ("served", "in-process", "answers/s", "answers_per_s"),
                 ("served", "in-process", "facts", "facts"), ("served", "langchain", "TTFT p50", "ttft_p50_s"),
                 ("served", "langchain", "facts", "facts"), ("served", "none", "answers/s", "answers_per_s"),
                 # what each check costs: the method against the same run without it
                 *((a, b, label, key) for a, b in (("served", "served-abstain-off"), ("served-model", "served-model-check-off"))
                   for label, key in (("answers/s", "answers_per_s"), ("TTFT p50", "ttft_p50_s"), ("facts", "facts"))))  # fmt: skip
        for a, b, label, key in pairs:
            x, y = summary.get(a, {}).get(level, {}).get(key), summary.get(b, {}).get(level, {}).get(key)
            if x is not None and y:
                lines.append(f"- {level} users: {a} / {b} {label} = {x / y:.2f}")
    return "\n".join(lines) + "\n"


def plot(result: Mapping[str, Any], path: Path) -> Path:
    plt = pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(14, 4))
    for method, by in result["summary"].items():
        levels = [int(lv) for lv in by]
        axes[0].plot(levels, [s["answers_per_s"] for s in by.values()], marker="o", label=method)
        axes[1].plot(levels, [s["ttft_p50_s"] for s in by.values()], marker="o", label=method)
        axes[2].plot(levels, [s["facts"] / s["questions"] for s in by.values()], marker="o", label=method)
    for ax, title in zip(axes, ("answers/s", "TTFT p50 (s)", "facts answered"), strict=True):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("concurrent users")
        ax.set_title(title)
    axes[0].legend()
    fig.suptitle(f"recall served vs in-process ({result['engine']['kind']}, {result['engine']['parallel']} slots)")
    return save(fig, path)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    result = run(args)
    return report(markdown(result), args.out)


if __name__ == "__main__":
    raise SystemExit(main())

"""LoCoMo: recall against prompt stuffing, on a real long-term conversation benchmark.

Every conversation is written through the real ``MemoryWriter`` into a real (temporary)
``MemoryStore``, one user per conversation, session dates in the metadata. Then:

* **Retrieval, every question with evidence:** is an evidence turn among the top 1/5/10
  memories? Per category and over categories 1-4, for the question through the store's
  sentence encoder (``text/vector``) and through the hybrid lexical+vector search of
  ``retrieval_methods.py`` (``text/hybrid``). The hidden query, through the model's query
  head, is measured by ``hidden_query.py``.
* **Answers, a fixed seeded category-stratified sample** (``--sample``, or ``--all``), on one
  model, by five methods: (a) no memory; (b) the most recent turns that fit
  ``--history-tokens`` stuffed into the prompt; (c) RAG: the top ``--rag-k`` memories stuffed
  as text; (d) recall, ``tokens`` injection at ``<recall>``; (f) recall, ``kv`` injection (the
  same block from precomputed keys and values, ``RecallConfig`` 's ``kv_*`` defaults); (g) the
  LangChain recipe on the plain model, the held-out benchmark's peer (``benchmarks.locomo.peer``:
  ``ChatHuggingFace`` + a ``langchain-chroma`` retriever over the dated exchanges, k=4). The
  letters are those of the tables in BENCHMARKS.md, where (e), the retired ``vector``
  injection, stays. Scored with LoCoMo's token F1 (categories 1-4) and, for category 5, the
  share of answers that say the conversation holds no such information.
  Cost per question and method: prompt tokens, injected tokens, time to first token, total.

Outputs (``--out``, default ``benchmarks/out``): ``locomo.json`` (every number and every
answer), ``locomo.md`` (tables), ``locomo_f1_tokens.png``, ``locomo_hits.png``.

Usage:
    recall bench locomo                                   # the default sample, embedded model
    python -m benchmarks.locomo --retrieval-only          # retrieval metrics only (no answers)
    python -m benchmarks.locomo --conversations 1 --sample 20 --methods none,rag,recall
    python -m benchmarks.locomo --model Qwen/Qwen2.5-0.5B-Instruct --device cuda --all
    python -m benchmarks.locomo --methods recall --adapter CANDIDATE   # a trained candidate, merged on load
    python -m benchmarks.locomo --methods recall,langchain             # the tuned default against the LangChain recipe
"""

from __future__ import annotations

import argparse
import platform
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.common.args import OUT, parse_variant
from benchmarks.common.locomo_data import (
    CATEGORIES,
    Conversation,
    load_locomo,
    resolve_data,
    stratified_sample,
    subset_file,
)
from benchmarks.common.locomo_memory import FORMATS
from benchmarks.common.locomo_memory import ingest as write_formatted
from benchmarks.common.locomo_metrics import STEMMER
from benchmarks.common.results import load_average, write_results
from benchmarks.locomo.answers import DEFAULT_METHODS, METHODS, answer_rows, answer_summary
from benchmarks.locomo.bench import Bench
from benchmarks.locomo.prompts import CONTEXT_TEMPLATE, history_block, history_budget
from benchmarks.locomo.report import markdown, plot
from benchmarks.locomo.retrieval import retrieval_rows, retrieval_summary


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="recall bench locomo", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--data", default=None, help="LoCoMo JSON; relative paths from the repository root "
                   "(default ../shared/data/locomo_dev.json)")
    p.add_argument("--model", default=None, help="HF model id or folder (default: the embedded SmolLM2-135M-Instruct)")
    p.add_argument("--adapter", default=None,
                   help="a recall adapter (a `recall train --out` folder) merged on load into --model, or into the "
                        "plain default: a trained candidate, without merging it into a folder first")
    p.add_argument("--device", default=None, help="cpu, cuda, ... (default: cuda if available)")
    p.add_argument("--encoder", default=None, help="memory encoder (default all-MiniLM-L6-v2; 'hash' for tests)")
    p.add_argument("--conversations", type=int, default=None, help="only the first N conversations")
    p.add_argument("--sample", type=int, default=200, help="questions answered (seeded, stratified by category)")
    p.add_argument("--all", action="store_true", help="answer every question instead of a sample")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--methods", default=",".join(DEFAULT_METHODS),
                   help=f"comma-separated, of {', '.join(METHODS)} (default: all but langchain)")
    p.add_argument("--retrieval-only", action="store_true", help="retrieval metrics only: no answers")
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
    p.add_argument("--memories", type=int, default=10, help="(d)/(f): RecallConfig.memories, injected at one <recall>")
    p.add_argument("--unit", choices=["turn", "window", "exchange"], default="exchange",
                   help="(d)/(f): what a recalled memory holds (the store's unit; recall's default: turn)")
    p.add_argument("--top-k", type=int, default=16, help="(d)/(f): RecallConfig.top_k, candidates to choose among")
    p.add_argument("--min-score", type=float, default=0.2, help="(d)/(f): RecallConfig.min_score")
    p.add_argument("--template", default=CONTEXT_TEMPLATE,
                   help="(d): RecallConfig.template; the default writes the notes where (c) writes its excerpts")
    p.add_argument("--recall-position", choices=["system", "user_start", "user_end", "assistant_start"],
                   default="user_start", help="(d)/(f): RecallConfig.recall_position")
    p.add_argument("--recall-policy", choices=["auto", "ask", "model"], default="auto",
                   help="(d)/(f): RecallConfig.recall_policy ('ask', 'model': the model decides)")
    p.add_argument("--abstain-threshold", type=float, default=None,
                   help="(d)/(f): RecallConfig.abstain_threshold, a weak \"I don't know.\" after notes masked "
                        "(default: RecallConfig's)")
    p.add_argument("--order", choices=["newest_first", "oldest_first", "relevance"], default=None,
                   help="(d)/(f): RecallConfig.order, the notes' order (default: RecallConfig's)")
    p.add_argument("--note-template", default=None,
                   help="(d)/(f): RecallConfig.note_template (default: the engine's, with date and speaker)")
    p.add_argument("--set", dest="config_changes", action="append", default=[], metavar="FIELD=VALUE",
                   help="(d)/(f): any other RecallConfig field, e.g. match_names=False (repeatable; Python literals)")
    p.add_argument("--categories", default=None,
                   help="answer only the sampled questions of these categories, e.g. 5 or 1,2 (the sample is drawn first)")
    p.add_argument("--no-info-place", choices=["drawn", "a", "b", "both"], default="drawn",
                   help="category 5: where \"No information available\" goes: drawn per question (the protocol), "
                        "always (a) or (b), or both (each question asked twice; its rate is then free of a letter's bias)")
    p.add_argument("--max-new-tokens", type=int, default=24, help="answers are a few words; most stop at a line break")
    p.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's choice)")
    p.add_argument("--out", default=str(OUT), help="output folder")
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)
    args.k = [int(x) for x in str(args.k).split(",") if x]
    from recall_core import RecallConfig

    try:
        args.config_changes = dict(parse_variant("set:" + ",".join(args.config_changes))[1])
        RecallConfig(**args.config_changes)
    except (TypeError, ValueError) as error:
        p.error(f"--set: {error}")
    args.methods = [m for m in str(args.methods).split(",") if m]
    if args.categories:
        args.categories = [int(x) for x in str(args.categories).split(",") if x]
        if not set(args.categories) <= set(CATEGORIES):
            p.error(f"--categories: choose from {', '.join(map(str, CATEGORIES))}")
    if "langchain" in args.methods and not args.retrieval_only:
        from benchmarks.locomo.peer import encoder_path

        try:
            encoder_path(args.encoder)
        except ValueError as error:
            p.error(f"--methods langchain: {error}")
    unknown = [m for m in args.methods if m not in METHODS]
    if unknown:
        p.error(f"unknown methods {unknown}: choose from {', '.join(METHODS)}")
    return args


def ingest(
    store: Any, data_path: Path, conversations: Sequence[Conversation], args: argparse.Namespace, folder: Path,
    progress: bool,
) -> dict[str, Any]:
    """Write the conversations through the real ``MemoryWriter``.

    ``--memory-format writer`` uses ``MemoryWriter.ingest`` on the file (a temporary subset
    file for a slice): what the writer does today. The other formats write the same turns
    with ``MemoryWriter.add_turns`` and the memory text of ``common.locomo_memory.memory_text``.
    """  # fmt: skip
    from recall_core.memory import MemoryWriter

    own = {} if args.memory_format == "writer" else {"dated": False, "window": False, "speakers": False}
    writer = MemoryWriter(store, **own)
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
            "memories": sum(store.for_user(u).count() for u in users), "users": users,
            "format": args.memory_format}  # fmt: skip


def load_generator(args: argparse.Namespace) -> Any:
    """The generator of ``--model`` (default: the shipped tuned model), or, with ``--adapter``, of
    ``--model`` (default: the plain embedded model) with that adapter merged in."""
    from recall_core import RecallGenerator

    if args.adapter is None:
        return RecallGenerator.from_pretrained(args.model, device=args.device)
    tuned = {} if args.model else {"tuned": False}  # the shipped adapter is merged in the tuned default already
    return RecallGenerator.from_pretrained(args.model, device=args.device, adapter=args.adapter, **tuned)


def model_label(args: argparse.Namespace) -> str:
    """The model as ``locomo.json`` names it."""
    if args.adapter is None:
        return args.model or "SmolLM2-135M-Instruct (embedded)"
    return f"{args.model or 'SmolLM2-135M-Instruct (embedded, plain)'} + adapter {args.adapter}"


def run(args: argparse.Namespace, generator: Any = None) -> dict[str, Any]:
    """The whole benchmark; returns what goes into ``locomo.json``."""
    import torch

    from recall_core.memory import MemoryStore

    if args.threads:
        torch.set_num_threads(args.threads)
    progress = not args.no_progress
    started, load_start = time.perf_counter(), load_average()
    data_path = resolve_data(args.data)
    conversations = load_locomo(data_path, args.conversations)
    questions = [q for c in conversations for q in c.questions]
    generator = generator or load_generator(args)
    model_name = model_label(args)
    sample = questions if args.all else stratified_sample(questions, args.sample, args.seed)
    if args.categories:  # after the draw, so the questions kept are the full sample's
        sample = [q for q in sample if q.category in args.categories]
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
            result["ingest"] = ingest(store, data_path, conversations, args, Path(folder), progress)
            bench = Bench(args, generator, store, {c.sample_id: c for c in conversations})
            if "langchain" in args.methods and not args.retrieval_only:
                from benchmarks.locomo.peer import load_recipe

                bench.peer = load_recipe(conversations, args.max_new_tokens, args.encoder, generator.model.device)
                result["config"]["langchain_model"] = str(bench.peer.chat.llm.model_id)
            result["retrieval"], result["retrieval_rows"] = {}, {}
            for retrieval in ("vector", "hybrid"):
                rows = retrieval_rows(bench, questions, retrieval, max(args.k), progress)
                result["retrieval"][f"text/{retrieval}"] = retrieval_summary(rows, args.k)
                result["retrieval_rows"][f"text/{retrieval}"] = rows
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


def main(argv: Sequence[str] | None = None, generator: Any = None) -> int:
    args = parse_args(argv)
    result = run(args, generator)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    result["plots"] = plot(result, out)  # before the JSON, which lists them
    table = markdown(result)
    write_results(out, "locomo", result, table)
    print(table)
    print(f"total {result['seconds']:.0f} s; wrote {out / 'locomo.json'}, {out / 'locomo.md'}, "
          + ", ".join(result["plots"]))
    return 0

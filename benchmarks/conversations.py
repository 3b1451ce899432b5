"""Conversational memory, side by side: recall against the RAG recipes its users would otherwise write.

Users state personal facts over four dated sessions (``recall_core.training.conversations``: small talk,
near-miss distractors, facts updated later); then each fact is asked about in a fresh session.
Every method answers with the same model (the embedded SmolLM2-135M-Instruct unless
``--model``), the same encoder (all-MiniLM-L6-v2) and the same greedy decoding:

* ``none``: no memory, the question alone;
* ``history``: the whole history in the prompt (every session's messages, then the question);
* ``langchain``: the LangChain recipe, ``ChatHuggingFace(HuggingFacePipeline)`` with a
  ``langchain-chroma`` retriever (k=4) over the exchanges (a user turn with its reply, one
  document each), the retrieved notes in the system message (LangChain's RAG prompt);
* ``llamaindex``: LlamaIndex's ``HuggingFaceLLM`` with ``Memory`` and its ``VectorMemoryBlock``
  (ChromaVectorStore, ``HuggingFaceEmbedding``, top 4): past messages flushed from the
  short-term queue into the block, which puts what it retrieves in the system message;
* ``recall``: ``ChatRecall`` over a ``MemoryStore`` with its defaults (and ``recall:NAME``
  variants given with ``--variant``); the default model is the recall-tuned one
  (``load_model()``), ``recall-untuned`` the same with the plain model (``tuned=False``).
  The peers always run the plain model.

Scores per method: facts answered (the answer names the current value), stale answers (it
names the old value of an updated fact instead), processed tokens (prompt plus injected
memory), time to first streamed text and total time, and retrieval hit@1 / hit@4 (the turn
that states the fact is inside one of the first 1 / 4 texts the method's search returned:
recall's memories as its store returns them, LangChain's documents, LlamaIndex's block).

Usage:
    python -m benchmarks.conversations                          # every method, the eval seed
    python -m benchmarks.conversations --seed dev --users 4 --methods recall,langchain
    python -m benchmarks.conversations --variant "user_end:recall_position=user_end"
Writes benchmarks/out/conversations/conversations.json, .md and .png.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from benchmarks.common.args import OUT as OUT_ROOT  # noqa: E402
from benchmarks.common.args import parse_variant, seed_of  # noqa: E402
from benchmarks.common.methods import Method, PlainMethod, RecallMethod, run_method, summarize  # noqa: E402
from benchmarks.common.peers import LangChainMethod, LlamaIndexMethod  # noqa: E402
from benchmarks.common.plotting import pyplot, save  # noqa: E402
from benchmarks.common.results import machine, report, write_results  # noqa: E402
from recall_core.training.conversations import SEEDS, as_dict, generate  # noqa: E402

OUT = OUT_ROOT / "conversations"
METHODS = ("none", "history", "langchain", "llamaindex", "recall", "recall-untuned")
#: Variant settings that belong to the store (what a search returns), not to RecallConfig.
STORE_OPTIONS = ("unit", "retrieval")


def markdown(result: dict[str, Any]) -> str:
    head = ("| method | facts answered | stale answers | processed tokens (prompt + injected) | "
            "TTFT p50 | total p50 | hit@1 | hit@4 |\n| --- | --- | --- | --- | --- | --- | --- | --- |")
    lines = [head]
    for name, s in result["summary"].items():
        def f(v: Any, digits: int = 2, unit: str = "") -> str:
            return "" if v is None else f"{v:.{digits}f}{unit}"

        lines.append(
            f"| {name} | {s['facts_answered']} / {s['questions']} | {s['stale']} / {s['updated_questions']} | "
            f"{f(s['processed_tokens'], 0)} ({f(s['prompt_tokens'], 0)} + {f(s['injected_tokens'], 0)}) | "
            f"{f(s['ttft_s_p50'], 2, ' s')} | {f(s['total_s_p50'], 2, ' s')} | {f(s['hit@1'])} | {f(s['hit@4'])} |"
        )
    return "\n".join(lines) + "\n"


def plot(result: dict[str, Any], path: Path) -> Path:
    plt = pyplot()
    summary = result["summary"]
    names = list(summary)
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    answered = [summary[n]["facts_answered"] / max(summary[n]["questions"], 1) for n in names]
    stale = [summary[n]["stale"] / max(summary[n]["questions"], 1) for n in names]
    colours = ["tab:green" if n.startswith("recall") else "tab:gray" for n in names]
    left.barh(names, answered, color=colours, label="fact answered")
    left.barh(names, stale, left=answered, color="tab:red", alpha=0.6, label="stale value")
    left.set_xlim(0, 1)
    left.set_xlabel("share of questions")
    left.invert_yaxis()
    left.legend(loc="lower right", fontsize=8)
    left.set_title("Facts answered")
    for name, colour in zip(names, colours, strict=True):
        s = summary[name]
        right.scatter(s["processed_tokens"], s["facts_answered"] / max(s["questions"], 1), color=colour, s=40)
        right.annotate(name, (s["processed_tokens"], s["facts_answered"] / max(s["questions"], 1)), fontsize=8,
                       xytext=(4, 3), textcoords="offset points")
    right.set_xscale("log")
    right.set_xlabel("processed tokens per question (prompt + injected, log)")
    right.set_ylabel("facts answered")
    right.set_title("Quality against cost")
    fig.suptitle(f"{result['model']} · {result['questions']} questions, {result['users']} users (seed {result['seed']})",
                 fontsize=10)
    return save(fig, path)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seed", default="eval", help=f"a name in {sorted(SEEDS)} or an integer (default: eval)")
    p.add_argument("--users", type=int, default=12)
    p.add_argument("--facts", type=int, default=17, help="facts per user (one question each)")
    p.add_argument("--limit", type=int, default=None, help="answer only the first N questions")
    p.add_argument("--methods", default=",".join(METHODS), help=f"comma-separated, from {', '.join(METHODS)}")
    p.add_argument("--variant", action="append", default=[],
                   help='also run recall with RecallConfig changes (and the store\'s unit= / retrieval=): '
                        '"NAME:field=value,..." (repeatable)')
    p.add_argument("--max-new-tokens", type=int, default=48)
    p.add_argument("--model", default=None, help="HF model folder (default: the embedded SmolLM2-135M-Instruct)")
    p.add_argument("--out", type=Path, default=OUT)
    p.add_argument("--no-progress", action="store_true")
    return p.parse_args(argv)


def build_methods(args: argparse.Namespace, generator: Any, encoder: Any, encoder_path: str | None,
                  peer_model: Callable[[], tuple[Any, Any]]) -> list[Method]:
    """The methods asked for; the peers get their own copy of the model, without recall's tokens."""
    from recall_core import RecallConfig

    names = [m.strip() for m in args.methods.split(",") if m.strip()]
    unknown = sorted(set(names) - set(METHODS))
    if unknown:
        raise SystemExit(f"unknown method(s) {unknown}; choose from {', '.join(METHODS)}")
    options = {"max_new_tokens": args.max_new_tokens}
    methods: list[Method] = []
    for name in names:
        if name in ("none", "history"):
            methods.append(PlainMethod(name, generator, options))
        elif name == "recall":
            methods.append(RecallMethod("recall", generator, {"max_tokens": args.max_new_tokens}, encoder))
        elif name == "recall-untuned":
            from recall_core import RecallGenerator

            plain = RecallGenerator.from_pretrained(args.model, device="cpu", tuned=False, config=generator.config)
            methods.append(RecallMethod(name, plain, {"max_tokens": args.max_new_tokens}, encoder))
        elif name in ("langchain", "llamaindex"):
            if encoder_path is None:
                raise SystemExit(f"{name} needs the real encoder (a sentence-transformers folder)")
            model, tokenizer = peer_model()
            cls = LangChainMethod if name == "langchain" else LlamaIndexMethod
            methods.append(cls(model, tokenizer, encoder_path, args.max_new_tokens))
    base = generator.config
    for text in args.variant:
        name, changes = parse_variant(text)
        store_options = {key: changes.pop(key) for key in STORE_OPTIONS if key in changes}
        methods.append(RecallMethod(name, generator, {"max_tokens": args.max_new_tokens}, encoder,
                                    config=RecallConfig(**{**base.to_dict(), **changes}), store_options=store_options))
    return methods


def run(args: argparse.Namespace, generator: Any = None, encoder: Any = None) -> dict[str, Any]:
    """Generate the conversations, run every method, return the result (also written under ``args.out``)."""
    seed = seed_of(args.seed)
    users = generate(seed, users=args.users, facts=args.facts)
    questions = [q for u in users for q in u.questions][: args.limit]
    encoder_path: str | None = None
    if encoder is None:
        from recall_core.memory.encoders import default_encoder, default_encoder_path

        encoder, encoder_path = default_encoder(), str(default_encoder_path())
    if generator is None:
        from recall_core import RecallGenerator

        generator = RecallGenerator.from_pretrained(args.model, device="cpu")

    def peer_model() -> tuple[Any, Any]:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        from recall_core.models.loading import default_model_dir

        source = args.model or str(default_model_dir())
        return AutoModelForCausalLM.from_pretrained(source).eval(), AutoTokenizer.from_pretrained(source)

    methods = build_methods(args, generator, encoder, encoder_path, peer_model)
    rows: list[dict[str, Any]] = []
    try:
        for method in methods:
            rows.extend(run_method(method, users, questions, not args.no_progress))
    finally:
        for method in methods:
            method.close()
    summary = {m.name: summarize([r for r in rows if r["method"] == m.name]) for m in methods}
    result = {
        "benchmark": "conversations", "schema_version": 1, "seed": seed, "users": len(users),
        "questions": len(questions), "model": str(args.model or "SmolLM2-135M-Instruct"),
        "encoder": getattr(encoder, "name", str(encoder)), "max_new_tokens": args.max_new_tokens,
        "recall_config": generator.config.to_dict(),
        "machine": machine(),
        "summary": summary, "rows": rows, "data": as_dict(users),
    }  # fmt: skip
    write_results(args.out, "conversations", result, markdown(result), plot)
    return result


def main(argv: Sequence[str] | None = None, generator: Any = None, encoder: Any = None) -> int:
    args = parse_args(argv)
    return report(markdown(run(args, generator=generator, encoder=encoder)), args.out)


if __name__ == "__main__":
    sys.exit(main())

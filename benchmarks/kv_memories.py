"""KV memories (``inject_mode="kv"``): what a recall costs, against ``tokens`` mode and RAG stuffing.

``cost``: one chat prompt (a system message with ``<recall>`` at its end, where the default
``recall_position`` puts it, and a question) answered with one token, so the time is time to
first token (TTFT), for 1, 4 and 10 memories of about 30-40 tokens each. Arms, alternating
in every round (machine noise hits all alike), median over ``--rounds``:

* ``none``: no memory (the marker is dropped): the floor;
* ``rag``: the same block written into the system message as text (prompt stuffing: what
  ``tokens`` mode is equivalent to), one prefill;
* ``tokens``: recall, ``inject_mode="tokens"``: the block runs through the model at the recall;
* ``kv``: recall, ``inject_mode="kv"`` with the memories' blocks already in the cache (as
  ``MemoryWriter(precompute_kv=...)`` leaves them): spliced, only a few tokens computed;
* ``kv_cold``: the same with an empty cache of memories: the blocks are computed at the recall.

The memory is an in-process list (no encoder, no store), so the figures are the injection's
own cost; retrieval (about 10 ms to encode the query and search, decode_overhead.py) is the
same for every recall arm. Ratios of the same run: the extra time of a recall
(``mode - none``) of ``tokens`` over ``kv`` (goal: >= 5x at 4 memories), and TTFT of
``rag`` over ``kv`` (goal: >= 3x at 4 memories). Bytes per memory block are reported too.

``quality``: runs ``benchmarks/conversations.py`` with recall in ``tokens`` mode and in ``kv``
mode with several block settings (``--kv-variants``), and prints each kv variant's facts
answered as a share of ``tokens`` mode's (goal: >= 95%). Other arguments go to conversations.py.

    python -m benchmarks.kv_memories cost --rounds 10
    python -m benchmarks.kv_memories cost --device cuda --rounds 20
    python -m benchmarks.kv_memories quality --seed eval

Writes ``--out`` (default ``benchmarks/out/kv_memories``): ``cost.json``, ``cost.md``, ``cost.png``
(``quality.json`` for ``quality``, beside conversations.py's own files).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from benchmarks.common.args import OUT as OUT_ROOT
from benchmarks.common.plotting import pyplot, save
from benchmarks.common.progress import progress
from benchmarks.common.results import machine, write_results

OUT = OUT_ROOT / "kv_memories"
SYSTEM = "You are a helpful assistant."
QUESTION = "What did I tell you about my dog and where do I live?"
#: Ten personal facts of 30-40 tokens each, dated a week apart.
FACTS = (
    "On Saturday I adopted a brown beagle called Zorblax from the Lisbon shelter, and I walk him every morning at seven.",
    "I moved to a small flat in Porto last spring, two streets away from the river and the old bookshop.",
    "My sister Ana works as a nurse at the children's hospital and plays the cello in an amateur orchestra.",
    "I am allergic to peanuts and shellfish, so I always check the ingredients before ordering at a restaurant.",
    "My favourite band is Radiohead; I saw them live in Barcelona in 2017 and still have the ticket framed.",
    "I started learning Japanese in January with an app and a tutor on Thursday evenings, and I can read hiragana now.",
    "My car is a green 2009 Lada Niva that I bought from my uncle; it breaks down every winter.",
    "I work as a data engineer at a logistics company, mostly building pipelines in Python and SQL.",
    "My birthday is on the 14th of March and I usually celebrate with a dinner at my parents' house in Braga.",
    "I run a half marathon every October and my best time so far is one hour and forty-seven minutes.",
)
ARMS = ("none", "rag", "tokens", "kv", "kv_cold")


class Notes:
    """A memory that returns fixed candidates (best first), each dated and said by the user."""

    def __init__(self, count: int) -> None:
        from recall_core.types import MemoryCandidate

        self.candidates = [
            MemoryCandidate(f"fact-{i}", 0.9 - 0.01 * i, FACTS[i], None,
                            {"timestamp": f"2024-05-{1 + 3 * i:02d}T10:00:00+00:00", "role": "user"})
            for i in range(count)
        ]  # fmt: skip

    def search(self, query: Any, k: int) -> list[Any]:
        return self.candidates[:k]


def _median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


# --------------------------------------------------------------------------- cost
def cost(generator: Any, args: argparse.Namespace) -> dict[str, Any]:
    """TTFT of every arm for each count of memories (see the module docstring)."""
    import torch

    from recall_core import RecallConfig
    from recall_core.decoding.notes import notes_text
    from recall_core.kv.memories import KVMemories, KVPrecompute, kv_bytes_per_token

    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": QUESTION}]
    base = RecallConfig(min_score=0.0, max_recalls=1)
    results: dict[str, Any] = {}
    for count in args.memories:
        memory = Notes(count)
        tokens = base.replace(memories=count, top_k=max(8, count))
        kv = tokens.replace(inject_mode="kv", kv_prefix=args.kv_prefix, kv_recompute=args.kv_recompute)
        warm = KVMemories(max_bytes=1 << 34)
        KVPrecompute(generator.model, generator.tokenizer, kv, warm).memories(memory.candidates)
        block = tokens.block_text(notes_text(generator.tokenizer, _chosen(memory, tokens), tokens))
        stuffed = [{"role": "system", "content": f"{SYSTEM}\n\n{block}"}, messages[1]]
        calls = _arms(generator, messages, stuffed, memory, tokens, kv, warm)
        checks = {arm: calls[arm]() for arm in ARMS}  # warm-up, and what each arm processes
        recall = checks["kv"].recalls[0]
        assert recall.inject_mode == "kv" and recall.kv_reused > 0, f"kv did not reuse its blocks: {recall}"
        times: dict[str, list[float]] = {arm: [] for arm in ARMS}
        for round_ in progress(range(args.rounds), f"{count} memories", not args.no_progress, unit="round"):
            order = ARMS if round_ % 2 == 0 else ARMS[::-1]
            for arm in order:
                started = time.perf_counter()
                calls[arm]()
                times[arm].append(time.perf_counter() - started)
        medians = {arm: _median(times[arm]) for arm in ARMS}
        extra = {arm: medians[arm] - medians["none"] for arm in ("tokens", "kv", "kv_cold")}
        stats = warm.stats()
        results[str(count)] = {
            "memories": count,
            "injected_tokens": checks["tokens"].usage.injected_tokens,
            "recomputed_tokens": recall.kv_recomputed,
            "prompt_tokens": {arm: checks[arm].usage.prompt_tokens for arm in ARMS},
            "ttft_s": times,
            "ttft_s_median": medians,
            "extra_s_median": extra,
            "extra_ratio_tokens_over_kv": extra["tokens"] / extra["kv"] if extra["kv"] > 0 else float("inf"),
            "ttft_ratio_rag_over_kv": medians["rag"] / medians["kv"],
            "ttft_ratio_tokens_over_kv": medians["tokens"] / medians["kv"],
            "block_bytes_per_memory": stats["bytes_per_memory"],
            "blocks_bytes": stats["bytes"],
        }
    return {
        "benchmark": "kv_memories", "schema_version": 1, "model": args.model or "SmolLM2-135M-Instruct (embedded)",
        "device": str(generator.model.device), "dtype": str(generator.model.dtype), "threads": torch.get_num_threads(),
        "kv_prefix": args.kv_prefix, "kv_recompute": args.kv_recompute, "rounds": args.rounds,
        "kv_bytes_per_token": kv_bytes_per_token(generator.model),
        "machine": machine(),
        "results": results,
    }  # fmt: skip


def _arms(generator: Any, messages: list[dict[str, str]], stuffed: list[dict[str, str]], memory: Notes, tokens: Any,
          kv: Any, warm: Any) -> dict[str, Callable[[], Any]]:  # fmt: skip
    """One call per arm, each answering with one token."""
    from recall_core import RecallConfig
    from recall_core.kv.memories import KVMemories

    one = {"max_new_tokens": 1, "min_new_tokens": 1, "do_sample": False}
    plain = RecallConfig(recall_policy="explicit")

    def cold() -> Any:
        return generator.generate(messages, memory=memory, config=kv, recall_kv_memories=KVMemories(), **one)

    return {
        "none": partial(generator.generate, messages, memory=None, config=tokens, **one),
        "rag": partial(generator.generate, stuffed, memory=None, config=plain, **one),
        "tokens": partial(generator.generate, messages, memory=memory, config=tokens, **one),
        "kv": partial(generator.generate, messages, memory=memory, config=kv, recall_kv_memories=warm, **one),
        "kv_cold": cold,
    }


def _chosen(memory: Notes, config: Any) -> list[Any]:
    """The memories the loop injects, in its order (the ``rag`` arm stuffs the same block)."""
    from recall_core.decoding.select import choose_candidates

    return choose_candidates(memory.search(None, config.top_k), config)[0]


def cost_markdown(result: dict[str, Any]) -> str:
    lines = [
        "| memories | injected tokens | recomputed | TTFT none | rag | tokens | kv | kv cold | extra tokens / kv "
        "| rag / kv TTFT | bytes per memory |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for row in result["results"].values():
        m = row["ttft_s_median"]
        lines.append(
            f"| {row['memories']} | {row['injected_tokens']} | {row['recomputed_tokens']} | "
            + " | ".join(f"{1000 * m[arm]:.1f} ms" for arm in ARMS)
            + f" | {row['extra_ratio_tokens_over_kv']:.2f}x | {row['ttft_ratio_rag_over_kv']:.2f}x "
            f"| {row['block_bytes_per_memory'] / 2**20:.2f} MiB |"
        )
    return "\n".join(lines) + "\n"


def cost_plot(result: dict[str, Any], path: Path) -> Path:
    plt = pyplot()
    rows = list(result["results"].values())
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    width = 0.35
    xs = range(len(rows))
    labels = [str(r["memories"]) for r in rows]
    left.bar([x - width / 2 for x in xs], [1000 * r["extra_s_median"]["tokens"] for r in rows], width, label="tokens")
    left.bar([x + width / 2 for x in xs], [1000 * r["extra_s_median"]["kv"] for r in rows], width, label="kv (warm)")
    left.set_xticks(list(xs), labels)
    left.set_xlabel("memories per recall")
    left.set_ylabel("extra time of a recall (ms, median)")
    left.legend()
    for i, arm in enumerate(("rag", "tokens", "kv")):
        right.bar([x + (i - 1) * 0.27 for x in xs], [1000 * r["ttft_s_median"][arm] for r in rows], 0.27, label=arm)
    right.set_xticks(list(xs), labels)
    right.set_xlabel("memories")
    right.set_ylabel("time to first token (ms, median)")
    right.legend()
    fig.suptitle(f"KV memories, {result['model']} on {result['device']}")
    return save(fig, path)


# --------------------------------------------------------------------------- quality
DEFAULT_KV_VARIANTS = (
    "kv:inject_mode='kv'",  # the defaults: shared prefix, nothing recomputed but the last token
    "kv-shared-2:inject_mode='kv',kv_prefix='shared',kv_recompute=2",
    "kv-none-0:inject_mode='kv',kv_prefix='none',kv_recompute=0",
    "kv-none-4:inject_mode='kv',kv_prefix='none',kv_recompute=4",
    "kv-shared-8:inject_mode='kv',kv_prefix='shared',kv_recompute=8",
)


def quality(args: argparse.Namespace, rest: Sequence[str], generator: Any = None, encoder: Any = None) -> dict[str, Any]:
    """conversations.py's recall (``tokens``) against each kv variant; facts answered as a share of tokens mode's."""
    from benchmarks import conversations

    variants = list(args.kv_variants or DEFAULT_KV_VARIANTS)
    out = args.out / "conversations"
    argv = ["--methods", "recall", "--out", str(out), *[a for v in variants for a in ("--variant", v)], *rest]
    if args.no_progress:
        argv.append("--no-progress")
    result = conversations.run(conversations.parse_args(argv), generator=generator, encoder=encoder)
    summary = result["summary"]
    base = summary["recall"]["facts_answered"]
    shares = {
        name: {"facts_answered": s["facts_answered"], "share_of_tokens": s["facts_answered"] / base if base else None,
               "processed_tokens": s.get("processed_tokens"), "ttft_s_p50": s.get("ttft_s_p50")}
        for name, s in summary.items()
    }  # fmt: skip
    return {"benchmark": "kv_memories.quality", "questions": result["questions"], "variants": variants, "methods": shares}


# --------------------------------------------------------------------------- command line
def parse_args(argv: Sequence[str] | None) -> tuple[argparse.Namespace, list[str]]:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("what", choices=["cost", "quality"])
    p.add_argument("--model", default=None, help="HF model folder or id (default: the embedded SmolLM2-135M-Instruct)")
    p.add_argument("--device", default=None, help="cpu, cuda ... (default: the loader's choice)")
    p.add_argument("--memories", default="1,4,10", help="cost: memories per recall, comma-separated")
    p.add_argument("--rounds", type=int, default=10, help="cost: timed rounds per arm")
    p.add_argument("--kv-prefix", default="shared", choices=["shared", "none"], help="cost: RecallConfig.kv_prefix")
    p.add_argument("--kv-recompute", default="0", help="cost: RecallConfig.kv_recompute (an int or 'all')")
    p.add_argument("--kv-variants", action="append", default=None,
                   help="quality: conversations.py --variant specs (repeatable; default: five kv settings)")
    p.add_argument("--out", type=Path, default=OUT)
    p.add_argument("--no-progress", action="store_true")
    args, rest = p.parse_known_args(argv)
    args.memories = [int(m) for m in args.memories.split(",") if m.strip()]
    args.kv_recompute = args.kv_recompute if args.kv_recompute == "all" else int(args.kv_recompute)
    if args.what == "cost" and rest:
        p.error(f"unrecognized arguments: {' '.join(rest)}")
    if any(m < 1 or m > len(FACTS) for m in args.memories):
        p.error(f"--memories must be between 1 and {len(FACTS)}")
    return args, rest


def main(argv: Sequence[str] | None = None, generator: Any = None, encoder: Any = None) -> int:
    args, rest = parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.what == "quality":
        result = quality(args, rest, generator=generator, encoder=encoder)
        write_results(args.out, "quality", result)
        for name, row in result["methods"].items():
            share = row["share_of_tokens"]
            print(f"{name:16s} facts answered {row['facts_answered']}  of tokens mode's: "
                  f"{'-' if share is None else f'{100 * share:.0f}%'}")  # fmt: skip
        print(f"written to {args.out}")
        return 0
    if generator is None:
        from recall_core import RecallGenerator

        generator = RecallGenerator.from_pretrained(args.model, device=args.device)
    result = cost(generator, args)
    write_results(args.out, "cost", result, cost_markdown(result), cost_plot)
    print(cost_markdown(result))
    print(f"KV bytes per token: {result['kv_bytes_per_token']}; written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

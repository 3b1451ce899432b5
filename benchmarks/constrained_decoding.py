"""What constrained decoding adds to the time per token, on the default model, in one run.

Each round decodes the same chat prompt through ``RecallGenerator.generate`` (the recall
loop) without a constraint and with one (a JSON schema whose array cannot close before
the budget, so both runs decode exactly ``--tokens`` tokens). The time per token is
``(time for N tokens - time for 1 token) / (N - 1)``: the prefill cancels out. Rounds
alternate plain and constrained so load on the machine hits both alike; the figure is the
median over rounds. The goal: at most 10% more time per token.

``--engines`` also times the grammar engines that were compared when one was picked,
through their own transformers logits processors in the same loop, when installed
(xgrammar, outlines-core); recall uses llguidance.

    python -m benchmarks.constrained_decoding                       # the figure for BENCHMARKS.md
    python -m benchmarks.constrained_decoding --tokens 16 --rounds 1  # a quick check
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

import torch

from benchmarks.common.progress import progress
from recall_core import RecallGenerator
from recall_core.structured.constrained import JSON_OPTIONS, Constraint, json_schema_grammar, strict_schema

PROMPT = [{"role": "user", "content": "List the animals you know, as JSON."}]
#: An object whose array must hold more items than the budget can write: the grammar never ends early.
SCHEMA = {
    "type": "object",
    "properties": {"animals": {"type": "array", "items": {"type": "string"}, "minItems": 1000}},
    "required": ["animals"],
}


def processor_factories(generator: RecallGenerator, engines: list[str]) -> dict[str, Callable[[], list[Any]] | None]:
    """Per engine, a function that makes a fresh logits processor list (``None``: not installed)."""
    factories: dict[str, Callable[[], list[Any]] | None] = {"plain": lambda: []}
    constraint = Constraint(generator.tokenizer, json_schema_grammar(SCHEMA), vocab_size=generator.vocab_size)
    factories["llguidance"] = lambda: [constraint.logits_processor()]
    schema_text = json.dumps(strict_schema(SCHEMA))
    if "xgrammar" in engines:
        try:
            import xgrammar as xgr
            import xgrammar.contrib.hf  # noqa: F401

            info = xgr.TokenizerInfo.from_huggingface(generator.tokenizer, vocab_size=generator.vocab_size)
            compiled = xgr.GrammarCompiler(info).compile_json_schema(
                schema_text, any_whitespace=False, separators=(JSON_OPTIONS["item_separator"], JSON_OPTIONS["key_separator"])
            )
            factories["xgrammar"] = lambda: [xgr.contrib.hf.LogitsProcessor(compiled)]
        except ImportError:
            factories["xgrammar"] = None
    if "outlines" in engines:
        try:
            import outlines
            from outlines.backends import get_json_schema_logits_processor

            steerable = outlines.from_transformers(generator.model, generator.tokenizer)
            get_json_schema_logits_processor("outlines_core", steerable, schema_text)  # builds the index once
            factories["outlines-core"] = lambda: [get_json_schema_logits_processor("outlines_core", steerable, schema_text)]
        except ImportError:
            factories["outlines-core"] = None
    return factories


def decode_seconds(generator: RecallGenerator, processors: list[Any], tokens: int) -> float:
    start = time.perf_counter()
    result = generator.generate(
        PROMPT, memory=None, max_new_tokens=tokens, min_new_tokens=tokens, do_sample=False, logits_processor=processors
    )
    elapsed = time.perf_counter() - start
    if result.usage.generated_tokens != tokens:
        raise RuntimeError(f"expected {tokens} tokens, got {result.usage.generated_tokens}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=128, help="tokens per timed generation (default 128)")
    parser.add_argument("--rounds", type=int, default=7, help="alternating rounds; the median is reported (default 7)")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    parser.add_argument("--engines", default="", help="also time these engines, if installed: xgrammar,outlines")
    parser.add_argument("--json", dest="json_path", default=None, help="write the figures to this JSON file")
    args = parser.parse_args()
    if args.tokens < 2 or args.rounds < 1:
        raise ValueError("--tokens must be >= 2 and --rounds >= 1")
    if args.threads:
        torch.set_num_threads(args.threads)

    generator = RecallGenerator.from_pretrained()
    factories = processor_factories(generator, [e.strip() for e in args.engines.split(",") if e.strip()])
    runnable = {name: make for name, make in factories.items() if make is not None}
    for name in sorted(set(factories) - set(runnable)):
        print(f"{name}: not installed, skipped")
    for make in runnable.values():  # warm-up: first-call costs (tokenizer tables, kernels) are not per token
        decode_seconds(generator, make(), 2)

    per_token: dict[str, list[float]] = {name: [] for name in runnable}
    for _ in progress(range(args.rounds), "rounds", True):
        for name, make in runnable.items():
            one = decode_seconds(generator, make(), 1)
            many = decode_seconds(generator, make(), args.tokens)
            per_token[name].append((many - one) / (args.tokens - 1))

    plain = statistics.median(per_token["plain"])
    figures = {}
    print(f"\nSmolLM2-135M-Instruct, {args.tokens} tokens x {args.rounds} rounds, torch threads {torch.get_num_threads()}")
    print(f"{'decoding':<16}{'ms / token':>12}{'ratio':>8}")
    for name, times in per_token.items():
        median = statistics.median(times)
        figures[name] = {"ms_per_token": 1000 * median, "ratio": median / plain}
        print(f"{name:<16}{1000 * median:>12.2f}{median / plain:>8.3f}")
    overhead = figures["llguidance"]["ratio"] - 1
    print(f"\nconstrained decoding (llguidance) adds {100 * overhead:+.1f}% per token (goal: at most +10%)")
    if args.json_path:
        with open(args.json_path, "w") as handle:
            json.dump({"tokens": args.tokens, "rounds": args.rounds, "threads": torch.get_num_threads(),
                       "figures": figures}, handle, indent=2)  # fmt: skip


if __name__ == "__main__":
    main()

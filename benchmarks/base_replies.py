"""What ``RecallConfig.base_replies`` costs: the base model's memory, its first load, and a chat's turns.

A chat with no memory attached (``--turns`` user messages: one LoCoMo speaker's turns, the
replies the model's own), answered turn by turn by two :class:`recall_core.RecallSession` s of
the recall-tuned default: one with the defaults (the tuned model writes every reply) and one
with ``base_replies=True`` (the base model writes them, in a session of its own, and the tuned
model then runs each reply on its cache). With ``--loaded-base``, a third session does the same
with the base model loaded again as a model of its own (``RecallGenerator(base_model=...)``, what
``load_model`` did until 2026-12-05) instead of the tuned model less its adapter, which shares the
tuned model's weights (:func:`recall_core.models.base.without_adapter`). Per turn: time to the
first token and to the end of the call (wall and CPU seconds), prompt and prefilled tokens;
once: the resident memory (RSS) before and after each base model is made, and how long the call
that makes it takes.

    python -m benchmarks.base_replies --turns 20 --loaded-base --data ../shared/data/locomo_dev.json

Speed figures need a quiet machine. Writes ``base_replies.json``, ``.md`` and ``.png`` to ``--out``
(default ``benchmarks/out/base_replies``) and prints the table.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from benchmarks.common.args import OUT as OUT_ROOT
from benchmarks.common.locomo_data import resolve_data
from benchmarks.common.plotting import pyplot, save
from benchmarks.common.progress import progress
from benchmarks.common.results import cell, machine, report, write_results
from benchmarks.common.timing import FirstToken
from benchmarks.sessions import SYSTEM, _rss, user_lines

OUT = OUT_ROOT / "base_replies"
MODES = ("tuned", "base_replies")
LOADED = "base_loaded"  # base_replies with the base model loaded again (--loaded-base)


def _turn(session: Any, messages: list[dict[str, str]], tokens: int) -> tuple[Any, dict[str, float | None]]:
    """One greedy reply of ``session`` to ``messages``: the result, and its first-token and total seconds."""
    streamer = FirstToken()
    start, start_cpu = time.perf_counter(), time.process_time()
    result = session.reply(list(messages), streamer=streamer, do_sample=False, max_new_tokens=tokens)
    end, end_cpu = time.perf_counter(), time.process_time()
    first = None if streamer.first is None else streamer.first - start
    return result, {"ttft": first, "total": end - start, "cpu": end_cpu - start_cpu}


def run(generator: Any, lines: Sequence[str], tokens: int, show: bool,
        load_base: Callable[[], Any] | None = None) -> dict[str, Any]:  # fmt: skip
    """The sessions through the same user messages, turn by turn, each on its own replies.

    ``load_base`` (optional) loads the base model as a model of its own: a third session replies
    with it, made after the first turn of the other two so that each one's memory is seen apart.
    """
    from recall_core import RecallConfig, RecallGenerator, RecallSession

    on = RecallConfig(base_replies=True)
    sessions = {"tuned": RecallSession(generator, memory=None),
                "base_replies": RecallSession(generator, memory=None, recall_config=on)}  # fmt: skip
    modes = (*MODES, LOADED) if load_base is not None else MODES
    talks = {mode: [{"role": "system", "content": SYSTEM}] for mode in modes}
    rows: list[dict[str, Any]] = []
    rss = {"before": _rss()}
    for turn, line in enumerate(progress(lines, "turns", show), start=1):
        row: dict[str, Any] = {"turn": turn}
        for mode in modes:
            loading = 0.0
            if mode not in sessions:  # the base loaded again, after the others' memory was read
                start = time.perf_counter()
                loaded = RecallGenerator(generator.model, generator.tokenizer, config=generator.config,
                                         query_head=generator.query_head, base_model=load_base())  # fmt: skip
                loading = time.perf_counter() - start  # counted in its first call, as the others' making is
                sessions[mode] = RecallSession(loaded, memory=None, recall_config=on)
            talks[mode].append({"role": "user", "content": line})
            result, times = _turn(sessions[mode], talks[mode], tokens)
            times["total"] += loading
            times["cpu"] += loading
            if turn == 1:
                rss[f"after_{mode}"] = _rss()
            talks[mode].append({"role": "assistant", "content": result.text})
            row[mode] = {**times, "prompt_tokens": result.usage.prompt_tokens,
                         "prefilled": result.usage.prompt_tokens - result.usage.cached_tokens,
                         "generated": result.usage.generated_tokens, "reply": result.text}  # fmt: skip
        rows.append(row)
    later = rows[1:] or rows
    summary = {mode: {key: statistics.median(r[mode][key] for r in later) for key in ("ttft", "total", "cpu")}
               for mode in modes}  # fmt: skip
    return {"turns": rows, "rss": rss, "median_after_turn_1": summary,
            "first_call_s": {mode: rows[0][mode]["total"] for mode in modes},
            "cache_bytes": {mode: sessions[mode].cache_bytes for mode in modes}}  # fmt: skip


SERVED = ("tuned", "lora", "base_engine")  # --served: the tuned model; base replies by its adapter at -1; on a plain engine


def run_served(engines: dict[str, Any], memory: Any, lines: Sequence[str], tokens: int, show: bool,
               **served: Any) -> dict[str, Any]:  # fmt: skip
    """``--served``: the same chat sent whole at each turn (what the adapters send a stateless served
    generator), with a user's memory attached, by three :class:`ServedRecallGenerator` s: the tuned
    model; ``base_replies`` by the engine's recall adapter at scale -1; ``base_replies`` on an
    engine serving the plain model (``engines``: ``"plain"``, ``"tuned"``, and the tuned engine of
    each other mode, ``"lora"`` with the adapter at scale 0, ``"base_engine"``; a missing one is
    ``"tuned"``).
    Per turn: the whole call, and the prompt tokens the engine computed and took from its cache.
    ``served`` goes to each generator (``tokenizer=``...)."""
    from recall_core import RecallConfig
    from recall_core.serving import ServedRecallGenerator

    on = RecallConfig(base_replies=True)
    # Each mode on engines of its own (given, else shared): on a shared one-slot engine the modes'
    # conversations would take each other's cached prefixes.
    own = {mode: engines.get(mode, engines["tuned"]) for mode in SERVED}
    generators = {"tuned": (ServedRecallGenerator(own["tuned"], **served), RecallConfig()),
                  "lora": (ServedRecallGenerator(own["lora"], **served), on),
                  "base_engine": (ServedRecallGenerator(own["base_engine"], base_engine=engines["plain"], **served), on)}  # fmt: skip
    talks = {mode: [{"role": "system", "content": SYSTEM}] for mode in SERVED}
    rows: list[dict[str, Any]] = []
    for turn, line in enumerate(progress(lines, "turns", show), start=1):
        row: dict[str, Any] = {"turn": turn}
        for mode, (generator, config) in generators.items():
            talks[mode].append({"role": "user", "content": line})
            start = time.perf_counter()
            result = generator.generate(list(talks[mode]), memory=memory, config=config, do_sample=False,
                                        max_new_tokens=tokens)  # fmt: skip
            total = time.perf_counter() - start
            talks[mode].append({"role": "assistant", "content": result.text})
            requests = result.output.requests
            row[mode] = {"total": total, "prompt_tokens": result.usage.prompt_tokens, "reply": result.text,
                         "computed": sum(r.computed_tokens for r in requests),
                         "cached": sum(r.cached_tokens for r in requests)}  # fmt: skip
        rows.append(row)
    later = rows[1:] or rows
    summary = {mode: {key: statistics.median(r[mode][key] for r in later) for key in ("total", "computed")}
               for mode in SERVED}  # fmt: skip
    return {"served": True, "turns": rows, "median_after_turn_1": summary}


def served_markdown(result: dict[str, Any]) -> str:
    median = result["median_after_turn_1"]
    names = {"tuned": "tuned (default)", "lora": "base_replies: the adapter at -1", "base_engine": "base_replies: a plain engine"}
    lines = ["| | " + " | ".join(names[m] for m in SERVED) + " |", "| --- " * (len(SERVED) + 1) + "|"]
    for key, name in (("total", "whole call, median of turns 2+ (s)"), ("computed", "prompt tokens computed, median")):
        a = median["tuned"][key]
        lines.append(f"| {name} | " + " | ".join(
            f"{cell(median[m][key], 3)}" + ("" if m == "tuned" or not a else f" ({median[m][key] / a:.2f}x)")
            for m in SERVED) + " |")  # fmt: skip
    return "\n".join(lines)


def markdown(result: dict[str, Any]) -> str:
    median, first, rss = result["median_after_turn_1"], result["first_call_s"], result["rss"]
    loaded = LOADED in median
    head = "| | tuned (default) | base_replies | ratio |" + (" base_replies, the base loaded again | ratio |" if loaded else "")
    lines = [head, "| --- " * (6 if loaded else 4) + "|"]
    modes = ("base_replies", LOADED) if loaded else ("base_replies",)
    for key, name in (("ttft", "first token, median of turns 2+ (s)"), ("total", "whole call, median (s)"),
                      ("cpu", "CPU of the call, median (s)")):  # fmt: skip
        a = median["tuned"][key]
        cells = "".join(f" {cell(median[m][key], 3)} | {cell(median[m][key] / a if a else None, 2)}x |" for m in modes)
        lines.append(f"| {name} | {cell(a, 3)} |{cells}")
    lines.append(f"| first call (s; base_replies: makes the base model) | {cell(first['tuned'], 2)} |"
                 + "".join(f" {cell(first[m], 2)} | |" for m in modes))
    cache = result["cache_bytes"]
    lines.append(f"| KV cache at the end (MB) | {cache['tuned'] / 2**20:.1f} |"
                 + "".join(f" {cache[m] / 2**20:.1f} | |" for m in modes))
    steps = ["before", *(f"after_{mode}" for mode in ("tuned", *modes))]
    grown = [f"{name}'s first call +{(rss[b] - rss[a]) / 2**20:.0f} MB" for name, a, b in
             zip(("tuned", *modes), steps, steps[1:], strict=False)]  # fmt: skip
    lines.append(f"\nresident memory: {rss['before'] / 2**20:.0f} MB before; {'; '.join(grown)} "
                 f"(each session's first call, in this order; the base model is made at base_replies' first)")
    return "\n".join(lines)


def plotted_modes(result: dict[str, Any]) -> list[str]:
    """The modes a result holds, each once, in the tables' order."""
    return [mode for mode in dict.fromkeys((*MODES, LOADED, *SERVED)) if mode in result["turns"][0]]


def plot(result: dict[str, Any], path: Path) -> None:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 3.6))
    turns = [r["turn"] for r in result["turns"]]
    for mode, style in zip(plotted_modes(result), ("-o", "-s", "-^"), strict=False):
        ax.plot(turns, [r[mode]["total"] for r in result["turns"]], style, ms=3, label=f"{mode}: whole call")
        if "ttft" in result["turns"][0][mode]:
            ax.plot(turns, [r[mode]["ttft"] for r in result["turns"]], style, ms=2, alpha=0.5,
                    label=f"{mode}: first token")  # fmt: skip
    ax.set_xlabel("turn (served: the whole chat sent, a new user's memory)" if result.get("served")
                  else "turn (a chat with no memory, in a session)")  # fmt: skip
    ax.set_ylabel("seconds")
    ax.set_title("base_replies: the base model writes the replies that read no notes")
    ax.legend(fontsize=7)
    save(fig, path)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=20, help="user messages (at least 2)")
    parser.add_argument("--max-new-tokens", type=int, default=32)
    parser.add_argument("--data", type=Path, default=None, help="LoCoMo dev JSON (default: ../shared/data)")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--loaded-base", action="store_true",
                        help="also a session whose base model is loaded again (a model of its own)")
    parser.add_argument("--served", action="store_true",
                        help="on llama.cpp's server: the adapter at -1 against a second engine with the plain model")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    if args.turns < 2:
        raise ValueError(f"--turns must be at least 2, got {args.turns}")
    if args.max_new_tokens < 1:
        raise ValueError(f"--max-new-tokens must be at least 1, got {args.max_new_tokens}")
    if args.served:
        return _main_served(args)
    from recall_core import RecallGenerator, load_model

    generator = RecallGenerator.from_pretrained()
    load_base = (lambda: load_model(tuned=False)[0]) if args.loaded_base else None
    result = run(generator, user_lines(resolve_data(args.data), args.turns), args.max_new_tokens,
                 not args.no_progress, load_base)  # fmt: skip
    result["machine"] = machine()
    table = markdown(result)
    write_results(args.out, "base_replies", result, table, plot)
    return report(table, args.out)


def _main_served(args: argparse.Namespace) -> int:
    """Four engines (one thread each, one slot): the tuned model for each mode, one of them with the
    recall adapter at scale 0, and the plain model; a new user's memory (empty, a temporary local store)."""
    import tempfile

    from recall_core.memory import MemoryStore
    from recall_core.serving import EngineServer, export_default_models

    files = export_default_models("f16")
    lines = user_lines(resolve_data(args.data), args.turns)
    with tempfile.TemporaryDirectory(prefix="recall-bench-") as tmp, MemoryStore.local(Path(tmp)) as store, \
            EngineServer(files["recall-tuned"]) as tuned, \
            EngineServer(files["recall-tuned"], lora=files["recall-adapter"]) as lora, \
            EngineServer(files["recall-tuned"]) as beside, EngineServer(files["plain"]) as plain:  # fmt: skip
        engines = {"tuned": tuned.url, "lora": lora.url, "base_engine": beside.url, "plain": plain.url}
        result = run_served(engines, store.for_user("bench"), lines, args.max_new_tokens, not args.no_progress)
    result["machine"] = machine()
    table = served_markdown(result)
    write_results(args.out, "base_replies_served", result, table, plot)
    return report(table, args.out)


if __name__ == "__main__":
    raise SystemExit(main())

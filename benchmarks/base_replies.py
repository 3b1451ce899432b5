"""What ``RecallConfig.base_replies`` costs: the base model's memory, its first load, and a chat's turns.

A chat with no memory attached (``--turns`` user messages: one LoCoMo speaker's turns, the
replies the model's own), answered turn by turn by two :class:`recall_core.RecallSession` s of
the recall-tuned default: one with the defaults (the tuned model writes every reply) and one
with ``base_replies=True`` (the base model writes them, in a session of its own, and the tuned
model then runs each reply on its cache). Per turn: time to the first token and to the end of
the call (wall and CPU seconds), prompt and prefilled tokens; once: the resident memory (RSS)
before and after the base model is loaded, and how long the call that loads it takes.

    python -m benchmarks.base_replies --turns 20 --data ../shared/data/locomo_dev.json

Speed figures need a quiet machine. Writes ``base_replies.json``, ``.md`` and ``.png`` to ``--out``
(default ``benchmarks/out/base_replies``) and prints the table.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Sequence
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


def _turn(session: Any, messages: list[dict[str, str]], tokens: int) -> tuple[Any, dict[str, float | None]]:
    """One greedy reply of ``session`` to ``messages``: the result, and its first-token and total seconds."""
    streamer = FirstToken()
    start, start_cpu = time.perf_counter(), time.process_time()
    result = session.reply(list(messages), streamer=streamer, do_sample=False, max_new_tokens=tokens)
    end, end_cpu = time.perf_counter(), time.process_time()
    first = None if streamer.first is None else streamer.first - start
    return result, {"ttft": first, "total": end - start, "cpu": end_cpu - start_cpu}


def run(generator: Any, lines: Sequence[str], tokens: int, show: bool) -> dict[str, Any]:
    """Both sessions through the same user messages, turn by turn, each on its own replies."""
    from recall_core import RecallConfig, RecallSession

    sessions = {"tuned": RecallSession(generator, memory=None),
                "base_replies": RecallSession(generator, memory=None, recall_config=RecallConfig(base_replies=True))}  # fmt: skip
    talks = {mode: [{"role": "system", "content": SYSTEM}] for mode in MODES}
    rows: list[dict[str, Any]] = []
    rss = {"before": _rss()}
    for turn, line in enumerate(progress(lines, "turns", show), start=1):
        row: dict[str, Any] = {"turn": turn}
        for mode in MODES:
            talks[mode].append({"role": "user", "content": line})
            result, times = _turn(sessions[mode], talks[mode], tokens)
            talks[mode].append({"role": "assistant", "content": result.text})
            row[mode] = {**times, "prompt_tokens": result.usage.prompt_tokens,
                         "prefilled": result.usage.prompt_tokens - result.usage.cached_tokens,
                         "generated": result.usage.generated_tokens, "reply": result.text}  # fmt: skip
        if turn == 1:
            rss["after_base_loaded"] = _rss()
        rows.append(row)
    later = rows[1:] or rows
    summary = {mode: {key: statistics.median(r[mode][key] for r in later) for key in ("ttft", "total", "cpu")}
               for mode in MODES}  # fmt: skip
    return {"turns": rows, "rss": rss, "median_after_turn_1": summary,
            "first_call_s": {mode: rows[0][mode]["total"] for mode in MODES},
            "cache_bytes": {mode: sessions[mode].cache_bytes for mode in MODES}}  # fmt: skip


def markdown(result: dict[str, Any]) -> str:
    median, first, rss = result["median_after_turn_1"], result["first_call_s"], result["rss"]
    lines = ["| | tuned (default) | base_replies | ratio |", "| --- | --- | --- | --- |"]
    for key, name in (("ttft", "first token, median of turns 2+ (s)"), ("total", "whole call, median (s)"),
                      ("cpu", "CPU of the call, median (s)")):  # fmt: skip
        a, b = median["tuned"][key], median["base_replies"][key]
        lines.append(f"| {name} | {cell(a, 3)} | {cell(b, 3)} | {cell(b / a if a else None, 2)}x |")
    lines.append(f"| first call (s; base_replies: loads the base model) | {cell(first['tuned'], 2)} | "
                 f"{cell(first['base_replies'], 2)} | |")
    cache = result["cache_bytes"]
    lines.append(f"| KV cache at the end (MB) | {cache['tuned'] / 2**20:.1f} | {cache['base_replies'] / 2**20:.1f} | |")
    grown = (rss["after_base_loaded"] - rss["before"]) / 2**20
    lines.append(f"\nresident memory: {rss['before'] / 2**20:.0f} MB before, {rss['after_base_loaded'] / 2**20:.0f} MB "
                 f"after the first turn of both sessions (+{grown:.0f} MB: the base model and two caches)")
    return "\n".join(lines)


def plot(result: dict[str, Any], path: Path) -> None:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 3.6))
    turns = [r["turn"] for r in result["turns"]]
    for mode, style in zip(MODES, ("-o", "-s"), strict=True):
        ax.plot(turns, [r[mode]["total"] for r in result["turns"]], style, ms=3, label=f"{mode}: whole call")
        ax.plot(turns, [r[mode]["ttft"] for r in result["turns"]], style, ms=2, alpha=0.5, label=f"{mode}: first token")
    ax.set_xlabel("turn (a chat with no memory, in a session)")
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
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    if args.turns < 2:
        raise ValueError(f"--turns must be at least 2, got {args.turns}")
    if args.max_new_tokens < 1:
        raise ValueError(f"--max-new-tokens must be at least 1, got {args.max_new_tokens}")
    from recall_core import RecallGenerator

    generator = RecallGenerator.from_pretrained()
    result = run(generator, user_lines(resolve_data(args.data), args.turns), args.max_new_tokens, not args.no_progress)
    result["machine"] = machine()
    table = markdown(result)
    write_results(args.out, "base_replies", result, table, plot)
    return report(table, args.out)


if __name__ == "__main__":
    raise SystemExit(main())

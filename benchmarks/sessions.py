"""Sessions: time to first token per turn with and without a kept KV cache, and memory over a long stream.

``ttft``: a chat of ``--turns`` turns (the user's messages are one LoCoMo speaker's turns,
the replies are the model's own). Each turn is answered by a :class:`recall_core.RecallSession`
(only the new message is prefilled) and, on the very same messages, by a fresh
:meth:`RecallGenerator.generate` (the whole conversation prefilled, what the adapters did
before sessions). Time to first token is measured the same way for both: from the call to
the first generated token reaching a streamer. Goal: with sessions, turn 50 takes
at most 1.2x turn 2; without, it grows with the history. Both curves go in one plot.

``memory``: streams ``--tokens`` tokens of LoCoMo conversations (100k by default: the whole dev
file) through one bounded session (``--cache`` positions), appending every message and
replying to every ``--reply-every``-th, and records the cache's bytes and the process's
resident memory (RSS) as it goes: with a bounded cache both must stay flat.

    python -m benchmarks.sessions ttft --turns 50 --data ../shared/data/locomo_dev.json
    python -m benchmarks.sessions memory --tokens 100000 --cache 2048 --data ../shared/data/locomo_dev.json

Speed figures need a quiet machine: run ``ttft`` where nothing else runs. Each command writes a
JSON and a PNG to ``--out`` (default ``benchmarks/out/sessions``) and prints a table.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.common.args import OUT as OUT_ROOT
from benchmarks.common.locomo_data import load_locomo, resolve_data
from benchmarks.common.plotting import pyplot, save
from benchmarks.common.progress import progress
from benchmarks.common.results import cell, write_results
from benchmarks.common.timing import FirstToken

OUT = OUT_ROOT / "sessions"
SYSTEM = "You are a friendly assistant. Answer in one or two sentences."


def user_lines(data: Path, count: int) -> list[str]:
    """``count`` user messages: the first speaker's turns of the LoCoMo conversations, in order."""
    lines = []
    for conversation in load_locomo(data):
        lines += [t.text for t in conversation.turns if t.speaker == conversation.speaker_a and t.text.strip()]
    if len(lines) < count:
        raise ValueError(f"the data holds {len(lines)} user turns, fewer than the {count} asked for")
    return lines[:count]


# --------------------------------------------------------------------------- ttft
def ttft(generator: Any, args: argparse.Namespace) -> dict[str, Any]:
    """Time to first token of every turn on the same messages: a session, a bounded session, a fresh prefill.

    The unbounded session's replies make the conversation; the bounded session (``--cache``)
    is given the same messages (once it has evicted, its own replies differ from those, so
    it prefills the reply it is sent back too: ``prefilled_bounded`` counts it).
    """
    from recall_core import RecallSession

    session = RecallSession(generator, memory=None)
    bounded = RecallSession(generator, max_cache_tokens=args.cache, memory=None) if args.cache else None
    messages: list[dict[str, str]] = [{"role": "system", "content": SYSTEM}]
    rows = []
    lines = user_lines(resolve_data(args.data), args.turns)
    for turn, line in enumerate(progress(lines, "turns", not args.no_progress, mininterval=5), start=1):
        messages.append({"role": "user", "content": line})
        result, with_session, cpu_session = _timed(session.reply, messages, max_new_tokens=args.max_new_tokens)
        _, without, cpu_fresh = _timed(generator.generate, messages, memory=None, max_new_tokens=1)
        row = {"turn": turn, "prompt_tokens": result.usage.prompt_tokens, "ttft_session": with_session,
               "prefilled_session": result.session.prefilled_tokens, "ttft_fresh": without,
               "cpu_session": cpu_session, "cpu_fresh": cpu_fresh}  # fmt: skip
        if bounded is not None:
            small, row["ttft_bounded"], row["cpu_bounded"] = _timed(bounded.reply, messages,
                                                                    max_new_tokens=args.max_new_tokens)  # fmt: skip
            row["prefilled_bounded"] = small.session.prefilled_tokens
            row["cache_bounded"] = small.session.cache_tokens
        rows.append(row)
        messages.append({"role": "assistant", "content": result.text})
    first, last = rows[min(1, len(rows) - 1)], rows[-1]
    return {
        "turns": rows,
        "ratio_session": _ratio(last["ttft_session"], first["ttft_session"]),
        "ratio_bounded": _ratio(last.get("ttft_bounded"), first.get("ttft_bounded")),
        "ratio_fresh": _ratio(last["ttft_fresh"], first["ttft_fresh"]),
        "speedup_last_turn": _ratio(last["ttft_fresh"], last["ttft_session"]),
        "cpu_ratio_session": _ratio(last["cpu_session"], first["cpu_session"]),
        "cpu_ratio_bounded": _ratio(last.get("cpu_bounded"), first.get("cpu_bounded")),
        "cpu_ratio_fresh": _ratio(last["cpu_fresh"], first["cpu_fresh"]),
        "compared": [first["turn"], last["turn"]],
    }


def _timed(call: Any, messages: list[dict[str, str]], **kwargs: Any) -> tuple[Any, float | None, float | None]:
    """``call(messages)`` greedily with a :class:`FirstToken` streamer: the result, and the wall and
    CPU seconds to its first token."""
    streamer = FirstToken()
    start, start_cpu = time.perf_counter(), time.process_time()
    result = call(list(messages), streamer=streamer, do_sample=False, **kwargs)
    if streamer.first is None:
        return result, None, None
    return result, streamer.first - start, streamer.first_cpu - start_cpu  # type: ignore[operator]


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a and b else None


# --------------------------------------------------------------------------- memory
def memory(generator: Any, args: argparse.Namespace) -> dict[str, Any]:
    """Stream LoCoMo through one bounded session; cache bytes and RSS as the tokens go by."""
    from recall_core import RecallSession

    session = RecallSession(generator, max_cache_tokens=args.cache, memory=None)
    session.append([{"role": "system", "content": SYSTEM}])
    streamed, rows, index = 0, [], 0
    turns = [t for c in load_locomo(resolve_data(args.data)) for t in c.turns]
    bar = progress(None, "tokens", not args.no_progress, total=args.tokens, mininterval=5)
    while streamed < args.tokens:
        turn = turns[index % len(turns)]  # past the end of the data, round again
        index += 1
        # One new message per call: the caller keeps no history, the session holds what fits.
        message = {"role": "user" if index % 2 else "assistant", "content": f"{turn.speaker}: {turn.text}"}
        added = len(session.append(message).token_ids)
        if index % args.reply_every == 0:
            result = session.reply("Say something about that.", max_new_tokens=8, do_sample=False)
            added += result.session.prefilled_tokens + result.usage.generated_tokens
        streamed += added
        bar.update(added)
        rows.append({"tokens": streamed, "cache_tokens": session.cache_tokens, "cache_bytes": session.cache_bytes,
                     "rss_bytes": _rss(), "evicted_messages": session.evicted_messages})  # fmt: skip
    bar.close()
    tenth = rows[len(rows) // 10]
    return {
        "rows": rows,
        "peak_rss_bytes": max(_peak_rss(), max(r["rss_bytes"] for r in rows)),
        "max_cache_bytes": max(r["cache_bytes"] for r in rows),
        "max_cache_tokens": max(r["cache_tokens"] for r in rows),
        "rss_at_10_percent": tenth["rss_bytes"],
        "rss_at_end": rows[-1]["rss_bytes"],
        "streamed_tokens": streamed,
    }


def _rss() -> int:
    """Resident memory of this process now (Linux ``/proc``; else the peak)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return _peak_rss()


def _peak_rss() -> int:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


# --------------------------------------------------------------------------- output
def markdown(kind: str, result: dict[str, Any]) -> str:
    if kind == "ttft":
        a, b = result["compared"]
        rows = ["| turn | prompt tokens | TTFT fresh prefill (s) | TTFT session (s) | prefilled | "
                "TTFT bounded session (s) | prefilled | its cache |", "| --- | --- | --- | --- | --- | --- | --- | --- |"]
        for row in result["turns"]:
            if row["turn"] in (1, 2, 5, 10, 20, 30, 40, 50) or row is result["turns"][-1]:
                rows.append(f"| {row['turn']} | {row['prompt_tokens']} | {cell(row['ttft_fresh'])} | "
                            f"{cell(row['ttft_session'])} | {row['prefilled_session']} | {cell(row.get('ttft_bounded'))} | "
                            f"{row.get('prefilled_bounded', '-')} | {row.get('cache_bounded', '-')} |")  # fmt: skip
        rows.append(f"\nturn {b} / turn {a}: session {cell(result['ratio_session'], 2)}x, bounded session "
                    f"{cell(result['ratio_bounded'], 2)}x (goal <= 1.2x), fresh prefill {cell(result['ratio_fresh'], 2)}x; "
                    f"at turn {b} the session is {cell(result['speedup_last_turn'], 1)}x faster to the first token\n"
                    f"in CPU time: session {cell(result['cpu_ratio_session'], 2)}x, bounded session "
                    f"{cell(result['cpu_ratio_bounded'], 2)}x, fresh prefill {cell(result['cpu_ratio_fresh'], 2)}x")
        return "\n".join(rows)
    mib = 1 << 20
    return (f"streamed {result['streamed_tokens']:,} tokens; cache at most {result['max_cache_tokens']:,} tokens / "
            f"{result['max_cache_bytes'] / mib:.1f} MiB; RSS {result['rss_at_10_percent'] / mib:.0f} MiB at 10% of the "
            f"stream, {result['rss_at_end'] / mib:.0f} MiB at the end; peak RSS {result['peak_rss_bytes'] / mib:.0f} MiB")


def plot(kind: str, result: dict[str, Any], out: Path) -> Path:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4))
    if kind == "ttft":
        turns = [r["turn"] for r in result["turns"]]
        ax.plot(turns, [r["ttft_fresh"] for r in result["turns"]], label="fresh prefill of the conversation")
        ax.plot(turns, [r["ttft_session"] for r in result["turns"]], label="RecallSession (new message only)")
        if result["turns"] and "ttft_bounded" in result["turns"][0]:
            ax.plot(turns, [r["ttft_bounded"] for r in result["turns"]],
                    label=f"RecallSession, max_cache_tokens={result['cache']}")  # fmt: skip
        ax.set_xlabel("turn")
        ax.set_ylabel("time to first token (s)")
    else:
        mib = 1 << 20
        tokens = [r["tokens"] for r in result["rows"]]
        ax.plot(tokens, [r["rss_bytes"] / mib for r in result["rows"]], label="process RSS")
        ax.plot(tokens, [r["cache_bytes"] / mib for r in result["rows"]], label="KV cache")
        ax.set_xlabel("tokens streamed")
        ax.set_ylabel("MiB")
    ax.legend()
    return save(fig, out / f"sessions_{kind}.png")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("kind", choices=["ttft", "memory"])
    p.add_argument("--data", default=None, help="LoCoMo file (default: ../shared/data/locomo_dev.json)")
    p.add_argument("--model", default=None, help="model id or folder (default: the embedded SmolLM2-135M)")
    p.add_argument("--turns", type=int, default=50, help="ttft: turns of the chat")
    p.add_argument("--max-new-tokens", type=int, default=32, help="ttft: length of the session's replies")
    p.add_argument("--tokens", type=int, default=100_000, help="memory: tokens to stream")
    p.add_argument("--cache", type=int, default=None,
                   help="max_cache_tokens of the bounded session (default: ttft 1024, memory 2048; ttft 0: no bounded arm)")
    p.add_argument("--reply-every", type=int, default=10, help="memory: reply after every N-th message")
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--out", default=str(OUT))
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)
    if args.cache is None:
        args.cache = 2048 if args.kind == "memory" else 1024
    return args


def run(args: argparse.Namespace, generator: Any = None) -> dict[str, Any]:
    import torch

    from recall_core import RecallGenerator

    if args.threads:
        torch.set_num_threads(args.threads)
    generator = generator or RecallGenerator.from_pretrained(args.model)
    generator.generate([{"role": "user", "content": "Hello"}], max_new_tokens=2)  # warm up
    started = time.perf_counter()
    result = ttft(generator, args) if args.kind == "ttft" else memory(generator, args)
    result.update({"kind": args.kind, "model": args.model or "SmolLM2-135M-Instruct (embedded)", "cache": args.cache,
                   "threads": torch.get_num_threads(), "load": list(os.getloadavg()),
                   "seconds": time.perf_counter() - started})  # fmt: skip
    return result


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    result = run(args)
    out = write_results(Path(args.out), f"sessions_{args.kind}", result)
    figure = plot(args.kind, result, out)
    print(markdown(args.kind, result))
    print(f"\nwrote {out / f'sessions_{args.kind}.json'} and {figure}")


if __name__ == "__main__":
    main()

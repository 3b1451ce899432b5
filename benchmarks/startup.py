"""Start-up and threads: how long a user waits before anything happens, and invoke against stream.

1. Start-up, each figure the median wall time of ``--repeats`` fresh processes (interpreter
   start included, as a user waits): ``import recall_core``, ``import langchain_recall``,
   ``import llamaindex_recall``, ``recall --help``, and import to first answer (the default
   model, a local memory store with the default encoder, one turn written, one question
   answered with recall). ``import torch`` alone is the floor they are compared with.
   Goals (issue 22): ``recall --help`` < 1 s, ``import recall_core`` < 1.5 s, first answer < 10 s.
2. Threads: the same greedy reply generated on the caller's thread (what ``invoke`` does) and
   through ``stream`` (a worker thread), alternating in one process, with torch's default
   intra-op threads (one per core) and with recall's default for a small model (1), on the
   machine as it is ("quiet": no load of ours) and with ``--load-procs`` busy processes
   started by this script ("loaded"), all in one run.

Usage: python -m benchmarks.startup [--repeats 5] [--tokens 24] [--rounds 2] [--load-procs 2]
Writes benchmarks/out/startup/startup.json and .md. Record ``uptime`` with the figures: the
machine may be shared.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

from benchmarks.common.args import OUT
from benchmarks.common.progress import progress
from benchmarks.common.results import load_average, machine, write_results

ROOT = Path(__file__).resolve().parents[1]

FIRST_ANSWER = """
import tempfile
from recall_core import MemoryStore, MemoryWriter, RecallGenerator, load_model
model, tokenizer = load_model()
with tempfile.TemporaryDirectory() as folder:
    store = MemoryStore.local(folder)
    MemoryWriter(store).add_turn("ada", "user", "My dog is called Zorblax.")
    generator = RecallGenerator(model, tokenizer, memory=store.for_user("ada"))
    print(generator.generate([{"role": "user", "content": "What is my dog called?"}], max_new_tokens=16).text)
    store.close()
"""
STARTUP = {
    "import torch (the floor)": "import torch",
    "import recall_core": "import recall_core",
    "import langchain_recall": "import langchain_recall",
    "import llamaindex_recall": "import llamaindex_recall",
    "recall --help": "import sys; sys.argv = ['recall', '--help']\nfrom recall_core.cli import main\nmain()",
    "import to first answer": FIRST_ANSWER,
}
GOALS = {"recall --help": 1.0, "import recall_core": 1.5, "import to first answer": 10.0}

THREADS = """
import json, statistics, sys, time, torch
from recall_core import RecallGenerator, load_model
threads, tokens, rounds = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
model, tokenizer = load_model(threads=threads)
generator = RecallGenerator(model, tokenizer)
prompt = [{"role": "user", "content": "Write a short story about a lighthouse keeper and a storm."}]
options = dict(memory=None, max_new_tokens=tokens, min_new_tokens=tokens, do_sample=False)
generator.generate(prompt, **{**options, "max_new_tokens": 2, "min_new_tokens": 2})  # warm up
times = {"invoke (caller's thread)": [], "stream (worker thread)": []}
for _ in range(rounds):
    start = time.perf_counter(); generator.generate(prompt, **options)
    times["invoke (caller's thread)"].append(time.perf_counter() - start)
    start = time.perf_counter(); "".join(generator.stream(prompt, **options))
    times["stream (worker thread)"].append(time.perf_counter() - start)
print(json.dumps({"threads": torch.get_num_threads(), **{k: statistics.median(v) for k, v in times.items()}}))
"""


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    return {**env, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}


def _python(code: str, *args: str, timeout: float = 900) -> tuple[float, str]:
    """Wall time of a fresh interpreter running ``code``, and its last line of output."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], capture_output=True, text=True,
                          cwd=ROOT, env=_env(), timeout=timeout)  # fmt: skip
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{code.strip().splitlines()[0]!r} failed:\n{done.stderr[-2000:]}")
    return wall, (done.stdout.strip().splitlines() or [""])[-1]


def startup(repeats: int, show: bool) -> dict[str, Any]:
    _python(FIRST_ANSWER)  # the default model converted and the page cache warm: later runs are "later starts"
    walls: dict[str, list[float]] = {name: [] for name in STARTUP}
    bar = progress(None, "start-up (fresh processes)", show, total=repeats * len(STARTUP))
    for _ in range(repeats):  # interleaved: machine noise hits every figure alike
        for name, code in STARTUP.items():
            walls[name].append(_python(code)[0])
            bar.update()
    bar.close()
    return {name: {"median_s": round(statistics.median(w), 3), "runs_s": [round(x, 3) for x in w],
                   "goal_s": GOALS.get(name)} for name, w in walls.items()}  # fmt: skip


def threads(tokens: int, rounds: int, load_procs: int, show: bool) -> list[dict[str, Any]]:
    cores = os.cpu_count() or 1
    rows = []
    bar = progress(None, "invoke vs stream", show, total=4)
    for loaded in (False, True):
        busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(load_procs if loaded else 0)]
        try:
            time.sleep(2 if busy else 0)
            for count in (cores, 1):
                before = load_average()
                _, line = _python(THREADS, str(count), str(tokens), str(rounds), timeout=3600)
                rows.append({"machine": f"loaded (+{load_procs} busy processes)" if loaded else "as it is",
                             "load_before": before, "load_after": load_average(), **json.loads(line)})  # fmt: skip
                bar.update()
        finally:
            for process in busy:  # only the processes this run started, by their own handle
                process.kill()
                process.wait()
    bar.close()
    return rows


def markdown(result: dict[str, Any]) -> str:
    lines = ["| start-up | median (s) | goal (s) | runs (s) |", "| --- | ---: | ---: | --- |"]
    for name, row in result["startup"].items():
        goal = row["goal_s"] if row["goal_s"] is not None else ""
        lines.append(f"| {name} | {row['median_s']:.2f} | {goal} | {', '.join(f'{x:.2f}' for x in row['runs_s'])} |")
    if result.get("threads"):
        lines += ["", "| machine | intra-op threads | invoke (s) | stream (s) | invoke / stream | load before -> after |",
                  "| --- | ---: | ---: | ---: | ---: | --- |"]  # fmt: skip
        for row in result["threads"]:
            invoke, stream = row["invoke (caller's thread)"], row["stream (worker thread)"]
            lines.append(f"| {row['machine']} | {row['threads']} | {invoke:.2f} | {stream:.2f} | {invoke / stream:.2f}x "
                         f"| {row['load_before']} -> {row['load_after']} |")  # fmt: skip
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5, help="fresh processes per start-up figure")
    parser.add_argument("--tokens", type=int, default=24, help="tokens per reply in the threads comparison")
    parser.add_argument("--rounds", type=int, default=2, help="invoke/stream pairs per threads setting")
    parser.add_argument("--load-procs", type=int, default=2, help="busy processes for the loaded machine")
    parser.add_argument("--skip-threads", action="store_true")
    parser.add_argument("--out", type=Path, default=OUT / "startup")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    show = not args.no_progress
    result: dict[str, Any] = {"machine": machine(), "startup": startup(args.repeats, show)}
    if not args.skip_threads:
        result["threads"] = threads(args.tokens, args.rounds, args.load_procs, show)
    result["load_after"] = load_average()
    text = markdown(result)
    print(text)
    write_results(args.out, "startup", result, markdown=text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

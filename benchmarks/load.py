"""Load, soak and crash figures of the memory and the adapters (issue 23, item 8).

``users``: ``--users`` users x ``--turns`` turns written to one embedded store, one user at a
time (``MemoryWriter.add_turns``), sampling every ``--every`` users the write rate, the
process's open file handles and its resident memory (RSS); then the store is closed and
opened again (the open time at that many users), and every user's count is checked.

``server``: ``--writers`` writer and ``--readers`` reader processes through one ``chroma run``
server (``recall_core.memory.chroma_server``) for ``--seconds``: errors, write and search
latency (p50/p95), and lost acknowledged turns (a turn whose ``add_turn`` returned and that a
fresh client cannot read back afterwards; goal 0).

``evict-kill``: a process answers a chat through a bounded ``RecallSession`` that writes the
turns it evicts to memory, and is SIGKILLed inside its ``--kill-at``-th eviction write, after
the journal committed it and before the index got it. On the next open: every acknowledged
eviction is there, and the turns of the killed write are under the session's user after
``repair`` (never under another user).

``threads``: ``--threads`` threads, each on its own ``ChatRecall`` session (its own
``thread_id``), stream ``--turns`` replies at the same time; the same calls run one after the
other as the baseline. Each token's time is kept: whether the threads' tokens interleave
(overlap) or come one thread at a time (a lock), and the concurrent wall time against the
sequential one (what running them together buys).

    python -m benchmarks.load users --users 2000 --turns 5
    python -m benchmarks.load server --writers 4 --readers 4 --seconds 60
    python -m benchmarks.load evict-kill --trials 5
    python -m benchmarks.load threads --threads 8

Each command writes JSON, Markdown and (``users``, ``threads``) a PNG to ``--out`` (default
``benchmarks/out/load``) and prints its table. The machine's load average goes with every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.common.args import OUT as OUT_ROOT
from benchmarks.common.plotting import pyplot, save
from benchmarks.common.progress import progress
from benchmarks.common.results import load_average, write_results

OUT = OUT_ROOT / "load"
RAW = {"dated": False, "window": False, "speakers": False}


def open_handles() -> int:
    """File descriptors this process holds now (Linux: ``/proc/self/fd``)."""
    return len(os.listdir("/proc/self/fd"))


def rss_mib() -> float:
    """This process's resident memory now, in MiB (``VmRSS``)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q``-th percentile (nearest rank) of ``values``, ``None`` for none."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered) + 0.5) - 1))]


def _encoder(name: str) -> Any:
    from recall_core.memory import HashEncoder

    return HashEncoder(64) if name == "hash" else None  # None: the store's default (MiniLM)


# --------------------------------------------------------------------------- users
def users(n_users: int, turns: int, every: int, folder: Path, encoder: str = "default", show: bool = True) -> dict[str, Any]:
    """Write ``n_users`` x ``turns`` turns to one embedded store; samples, open time, counts."""
    from recall_core.memory import MemoryStore, MemoryWriter

    path = folder / "memory"
    start = time.perf_counter()
    store = MemoryStore.local(path, encoder=_encoder(encoder))
    opened_empty = time.perf_counter() - start
    writer = MemoryWriter(store, **RAW)
    samples = [{"users": 0, "seconds": 0.0, "turns_per_s": None, "handles": open_handles(), "rss_mib": rss_mib()}]
    began = last_time = time.perf_counter()
    for u in progress(range(n_users), "users", show, unit="user"):
        writer.add_turns([{"user_id": f"user-{u:05d}", "role": "user" if t % 2 == 0 else "assistant",
                           "content": f"user {u} turn {t}: I keep {u * 7 + t} kites in shed {t}", "session_id": "s"}
                          for t in range(turns)])  # fmt: skip
        if (u + 1) % every == 0 or u + 1 == n_users:
            now = time.perf_counter()
            written = (u + 1 - samples[-1]["users"]) * turns
            samples.append({"users": u + 1, "seconds": round(now - began, 3), "turns_per_s": round(written / (now - last_time), 1),
                            "handles": open_handles(), "rss_mib": round(rss_mib(), 1)})  # fmt: skip
            last_time = now
    write_seconds = time.perf_counter() - began
    store.close()
    handles_closed = open_handles()
    start = time.perf_counter()
    store = MemoryStore.local(path, encoder=_encoder(encoder))
    reopen = time.perf_counter() - start
    start = time.perf_counter()
    first = store.for_user(f"user-{n_users // 2:05d}").search("how many kites", 3)
    first_search = time.perf_counter() - start
    counted = {u: store.for_user(u).count() for u in store.users()}
    store.close()
    wrong = sorted(u for u, c in counted.items() if c != turns)
    return {
        "users": n_users, "turns": turns, "encoder": encoder, "open_empty_s": round(opened_empty, 3),
        "write_s": round(write_seconds, 1), "turns_per_s": round(n_users * turns / write_seconds, 1),
        "reopen_s": round(reopen, 3), "first_search_s": round(first_search, 3), "first_search_hits": len(first),
        "users_found": len(counted), "users_with_wrong_count": wrong[:20], "handles_after_close": handles_closed,
        "samples": samples, "load": load_average(),
    }  # fmt: skip


def users_markdown(r: dict[str, Any]) -> str:
    first, last = r["samples"][1] if len(r["samples"]) > 1 else r["samples"][0], r["samples"][-1]
    peak = max(r["samples"], key=lambda s: s["rss_mib"])
    return "\n".join([
        f"| {r['users']:,} users x {r['turns']} turns ({r['encoder']} encoder) | figure |", "| --- | --- |",
        f"| open, empty store | {r['open_empty_s']:.2f} s |",
        f"| writes, end to end | {r['turns_per_s']:,.0f} turns/s ({r['write_s']:.0f} s); first window "
        f"{first['turns_per_s']} turns/s, last window {last['turns_per_s']} turns/s |",
        f"| open file handles | {r['samples'][0]['handles']} before, {first['handles']} after {first['users']} users, "
        f"{last['handles']} after {last['users']}; {r['handles_after_close']} after close |",
        f"| RSS | {r['samples'][0]['rss_mib']:.0f} MiB before, {first['rss_mib']:.0f} after {first['users']} users, "
        f"{last['rss_mib']:.0f} after {last['users']} (peak {peak['rss_mib']:.0f}) |",
        f"| open again at {r['users_found']:,} users | {r['reopen_s']:.2f} s; first search {r['first_search_s'] * 1000:.0f} ms |",
        f"| users whose count is not {r['turns']} | {len(r['users_with_wrong_count'])} |",
        f"| load average (1/5/15 min, at the end) | {r['load']} |",
    ]) + "\n"  # fmt: skip


def users_plot(r: dict[str, Any], path: Path) -> None:
    plt = pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    xs = [s["users"] for s in r["samples"]]
    axes[0].plot(xs[1:], [s["turns_per_s"] for s in r["samples"][1:]], marker=".")
    axes[0].set(title="write rate", xlabel="users written", ylabel="turns/s")
    axes[1].plot(xs, [s["handles"] for s in r["samples"]], marker=".")
    axes[1].set(title="open file handles", xlabel="users written")
    axes[2].plot(xs, [s["rss_mib"] for s in r["samples"]], marker=".")
    axes[2].set(title="resident memory (MiB)", xlabel="users written")
    for ax in axes:
        ax.set_ylim(bottom=0)
    fig.suptitle(f"{r['users']:,} users x {r['turns']} turns, one embedded store ({r['encoder']} encoder)")
    save(fig, path)


# --------------------------------------------------------------------------- server
_WORKER = """
import importlib.util, json, random, sys, time, types
# recall_core as an empty package over its folder: the memory alone, without the engine's torch (seconds to import)
_spec = importlib.util.find_spec("recall_core")
_package = types.ModuleType("recall_core")
_package.__path__ = list(_spec.submodule_search_locations)
sys.modules["recall_core"] = _package
spec = json.loads(sys.argv[1])
from recall_core.memory import HashEncoder, MemoryStore, MemoryWriter
store = MemoryStore.server(port=spec["port"], encoder=HashEncoder(64), journal_path=spec["journal"])
writer = MemoryWriter(store, dated=False, window=False, speakers=False)
rng = random.Random(spec["seed"])
acked, latencies, errors, n = [], [], [], 0
store.for_user("warm-up").search("warm up", 1)  # the connection and the client's first calls
print("ready", flush=True)
while not __import__("os").path.exists(spec["go"]):
    time.sleep(0.01)
deadline = time.monotonic() + spec["seconds"]
while time.monotonic() < deadline:
    user = f"{spec['prefix']}-{rng.randrange(spec['users'])}" if spec["role"] == "writer" else \
        f"w{rng.randrange(spec['writers'])}-{rng.randrange(spec['users'])}"
    start = time.perf_counter()
    try:
        if spec["role"] == "writer":
            ids = writer.add_turn(user, "user", f"{spec['prefix']} note {n}: the kite is {rng.random():.6f}", session_id="soak")
            acked.append([user, ids])
        else:
            store.for_user(user).search("what colour is the kite", 4)
        latencies.append(time.perf_counter() - start)
    except Exception as error:
        errors.append(f"{type(error).__name__}: {error}"[:300])
        time.sleep(0.05)
    n += 1
store.close()
json.dump({"acked": acked, "latencies": latencies, "errors": errors}, open(spec["result"], "w"))
"""


def server(writers: int, readers: int, seconds: float, folder: Path, users_per_writer: int = 20) -> dict[str, Any]:
    """Writers and readers in processes of their own through one ``chroma run``; then every ack is read back."""
    from recall_core.memory import HashEncoder, MemoryStore
    from recall_core.memory.chroma_server import ChromaServer

    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "worker.py"
    script.write_text(_WORKER)
    go = folder / "go"
    go.unlink(missing_ok=True)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": os.pathsep.join([str(Path.cwd()), os.environ.get("PYTHONPATH", "")])}
    with ChromaServer(folder / "server-data") as chroma:
        children = []
        for role, count in (("writer", writers), ("reader", readers)):
            for n in range(count):
                spec = {"port": chroma.port, "journal": str(folder / "journal.sqlite3"), "go": str(go), "seconds": seconds,
                        "role": role, "prefix": f"w{n}", "users": users_per_writer, "writers": max(writers, 1), "seed": n,
                        "result": str(folder / f"{role}-{n}.json")}  # fmt: skip
                children.append((role, spec, subprocess.Popen([sys.executable, str(script), json.dumps(spec)], env=env,
                                                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)))  # fmt: skip
        for role, spec, process in children:  # every process has opened its store before the clock starts
            if process.stdout.readline().strip() != "ready":
                raise RuntimeError(f"{role} {spec['prefix']} did not start: {process.stderr.read()[-2000:]}")
        go.touch()
        results: dict[str, list[dict[str, Any]]] = {"writer": [], "reader": []}
        crashed = []
        for role, spec, process in children:
            _, stderr = process.communicate(timeout=seconds + 300)
            if process.returncode != 0:
                crashed.append(f"{role} {spec['prefix']}: exit {process.returncode}: {stderr[-500:]}")
                continue
            results[role].append(json.loads(Path(spec["result"]).read_text()))
        check = MemoryStore.server(port=chroma.port, encoder=HashEncoder(64), journal_path=folder / "journal.sqlite3")
        by_user: dict[str, list[str]] = {}
        for result in results["writer"]:
            for user, ids in result["acked"]:
                by_user.setdefault(user, []).extend(ids)
        lost = []
        for user, ids in by_user.items():
            found = {record.id for record in check.for_user(user).get_many(ids)}
            lost += [i for i in ids if i not in found]
        check.close()
    write_lat = [x for r in results["writer"] for x in r["latencies"]]
    read_lat = [x for r in results["reader"] for x in r["latencies"]]
    errors = [e for rs in results.values() for r in rs for e in r["errors"]]
    ms = lambda v: None if v is None else round(v * 1000, 1)  # noqa: E731
    return {
        "writers": writers, "readers": readers, "seconds": seconds, "acknowledged": sum(len(v) for v in by_user.values()),
        "writes": len(write_lat), "searches": len(read_lat), "errors": len(errors), "error_samples": errors[:10],
        "crashed": crashed, "lost": len(lost), "lost_samples": lost[:10],
        "write_ms": {"p50": ms(percentile(write_lat, 50)), "p95": ms(percentile(write_lat, 95)), "max": ms(max(write_lat, default=None))},
        "search_ms": {"p50": ms(percentile(read_lat, 50)), "p95": ms(percentile(read_lat, 95)), "max": ms(max(read_lat, default=None))},
        "load": load_average(),
    }  # fmt: skip


def server_markdown(r: dict[str, Any]) -> str:
    return "\n".join([
        f"| {r['writers']} writers + {r['readers']} readers, one `chroma run`, {r['seconds']:.0f} s | figure |", "| --- | --- |",
        f"| writes acknowledged | {r['acknowledged']:,} ({r['writes'] / r['seconds']:.0f}/s) |",
        f"| searches | {r['searches']:,} ({r['searches'] / r['seconds']:.0f}/s) |",
        f"| write latency p50 / p95 / max | {r['write_ms']['p50']} / {r['write_ms']['p95']} / {r['write_ms']['max']} ms |",
        f"| search latency p50 / p95 / max | {r['search_ms']['p50']} / {r['search_ms']['p95']} / {r['search_ms']['max']} ms |",
        f"| errors | {r['errors']} |", f"| processes that crashed | {len(r['crashed'])} |",
        f"| acknowledged turns lost (goal 0) | {r['lost']} |",
        f"| load average (1/5/15 min, at the end) | {r['load']} |",
    ]) + "\n"  # fmt: skip


# --------------------------------------------------------------------------- evict-kill
_EVICTING = """
import os, signal, sys
sys.path.insert(0, os.getcwd())
from recall_core import RecallGenerator, RecallSession
from recall_core.memory import HashEncoder, MemoryStore, MemoryWriter
from recall_core.memory.writer import MemoryWriter as W
from tests.helpers.tiny import tiny_model
import torch
torch.set_num_threads(1)  # a tiny model: a second thread only waits (and on busy cores, waits long)
path, user, kill_at = sys.argv[1], sys.argv[2], int(sys.argv[3])
store = MemoryStore.local(path, encoder=HashEncoder(64))
evictions = {"n": 0, "turn": -1, "counted": -1}
index = W.index
def index_or_die(self, rows):
    if evictions["n"] >= kill_at:  # in the kill_at-th eviction write (or the first after it that writes anything new):
        # the journal holds the rows, the index never gets them
        print("killed " + " ".join(r.id for r in rows), flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    return index(self, rows)
W.index = index_or_die
model, tokenizer = tiny_model("llama")
generator = RecallGenerator(model, tokenizer, memory=None)
session = RecallSession(generator, store=store, user_id=user, max_cache_tokens=160, sink_tokens=4)
write = session.writer
def counted(messages):  # the session writes an eviction's messages one at a time: count evictions
    if evictions["counted"] != evictions["turn"]:
        evictions["counted"] = evictions["turn"]
        evictions["n"] += 1
    return write(messages)
session.writer = counted
messages = []
for turn in range(200):
    evictions["turn"] = turn
    messages.append({"role": "user", "content": f"turn {turn}: my kite number {turn} is red and blue"})
    result = session.reply(messages, max_new_tokens=6)
    messages.append({"role": "assistant", "content": result.text})
    written = session.last_report.memory_written
    if written:
        print("acked " + " ".join(written), flush=True)
print("done", flush=True)
"""


def evict_kill(trials: int, folder: Path, kill_at: Sequence[int] = (1, 3, 6)) -> dict[str, Any]:
    """SIGKILL inside a session's eviction write, ``trials`` times; what the next open finds."""
    from recall_core.memory import HashEncoder, MemoryStore, doctor, repair

    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "evicting.py"
    script.write_text(_EVICTING)
    runs = []
    for trial in range(trials):
        path, at = folder / f"memory-{trial}", kill_at[trial % len(kill_at)]
        with MemoryStore.local(path, encoder=HashEncoder(64)) as store:  # another user, already there
            store.writer.add_turn("bob", "user", "bob's own kite is green")
        process = subprocess.run([sys.executable, str(script), str(path), "ada", str(at)], capture_output=True,
                                 text=True, timeout=600, env={**os.environ, "HF_HUB_OFFLINE": "1"})  # fmt: skip
        lines = process.stdout.split("\n")
        # A session written again from a fresh prefill writes the same ids again (idempotent): count each once.
        acked = list(dict.fromkeys(i for line in lines if line.startswith("acked ") for i in line.split()[1:]))
        killed = [i for line in lines if line.startswith("killed ") for i in line.split()[1:]]
        store = MemoryStore.local(path, encoder=HashEncoder(64))
        ada = store.for_user("ada")
        journaled = {row.id for row in store.journal.rows("ada")}
        before_repair = {r.id for r in ada.get_many(acked + killed)}
        health = doctor(store)
        repair(store)
        after = {r.id for r in ada.get_many(acked + killed)}
        bob = {r.text for r in store.for_user("bob").all()}
        runs.append({
            "kill_at": at, "exit": process.returncode, "acked": len(acked), "killed_write": len(killed),
            "acked_lost": len([i for i in acked if i not in before_repair]),
            "killed_in_journal": len([i for i in killed if i in journaled]),
            "killed_indexed_before_repair": len([i for i in killed if i in before_repair]),
            "doctor_ok_before_repair": health.ok, "killed_under_ada_after_repair": len([i for i in killed if i in after]),
            "bob_unchanged": bob == {"bob's own kite is green"}, "doctor_ok_after": doctor(store).ok,
            "stderr": process.stderr[-400:] if process.returncode not in (-signal.SIGKILL,) else "",
        })  # fmt: skip
        store.close()
    return {"trials": runs, "load": load_average()}


def evict_kill_markdown(r: dict[str, Any]) -> str:
    rows = ["| kill in eviction write | exit | acknowledged evicted turns | lost | killed write: journaled / indexed before repair / "
            "under the user after repair | other user unchanged | doctor before / after repair |",
            "| --- | --- | --- | --- | --- | --- | --- |"]  # fmt: skip
    for t in r["trials"]:
        rows.append(f"| #{t['kill_at']} | {t['exit']} | {t['acked']} | {t['acked_lost']} | {t['killed_in_journal']}/{t['killed_write']} / "
                    f"{t['killed_indexed_before_repair']} / {t['killed_under_ada_after_repair']} | {t['bob_unchanged']} | "
                    f"{'ok' if t['doctor_ok_before_repair'] else 'reports it'} / {'ok' if t['doctor_ok_after'] else 'NOT ok'} |")  # fmt: skip
    return "\n".join(rows) + f"\n\nLoad average at the end: {r['load']}.\n"


# --------------------------------------------------------------------------- threads
def threads(n_threads: int, turns: int, max_tokens: int, tiny: bool, torch_threads: int | None, folder: Path) -> dict[str, Any]:
    """``n_threads`` ChatRecall sessions streaming at once, against the same calls one after another."""
    import torch

    from langchain_recall import ChatRecall
    from recall_core import RecallGenerator
    from recall_core.memory import HashEncoder, MemoryStore

    if torch_threads:
        torch.set_num_threads(torch_threads)
    if tiny:
        from tests.helpers.tiny import tiny_model

        generator = RecallGenerator(*tiny_model("llama"))
    else:
        generator = RecallGenerator.from_pretrained()
    folder.mkdir(parents=True, exist_ok=True)
    store = MemoryStore.local(Path(tempfile.mkdtemp(dir=folder)) / "memory", encoder=HashEncoder(64))
    for n in range(n_threads):
        store.writer.add_turn(f"user-{n}", "user", f"My dog is called Dog{n} and I live in town {n}.")
    chat = ChatRecall(generator=generator, store=store, user_id="user-0", max_tokens=max_tokens, write_memory=False)
    questions = ["What is my dog called?", "Where do I live?", "Tell me something about dogs.", "What should I cook?"]
    t0 = time.perf_counter()

    def run(n: int, tag: str, events: list[tuple[float, int]]) -> None:
        config = {"configurable": {"thread_id": f"{tag}-{n}", "user_id": f"user-{n}"}}
        history: list[Any] = []
        for turn in range(turns):
            history.append(("human", questions[(n + turn) % len(questions)]))
            text = ""
            for chunk in chat.stream(history, config=config):
                events.append((time.perf_counter() - t0, n))
                text += chunk.content
            history.append(("ai", text))

    for n in range(n_threads):  # first-call costs (each user's collection, lazy imports) out of both timings
        run(n, "warm-up", [])
    sequential: list[tuple[float, int]] = []
    start = time.perf_counter()
    for n in range(n_threads):
        run(n, "seq", sequential)
    sequential_s = time.perf_counter() - start
    chat.reset()
    concurrent: list[tuple[float, int]] = []
    lock = threading.Lock()

    def logged(n: int) -> None:
        mine: list[tuple[float, int]] = []
        run(n, "par", mine)
        with lock:
            concurrent.extend(mine)

    workers = [threading.Thread(target=logged, args=(n,)) for n in range(n_threads)]
    start = time.perf_counter()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    concurrent_s = time.perf_counter() - start
    store.close()
    concurrent = sorted((t - (start - t0), n) for t, n in concurrent)  # seconds since the threads started
    switches = sum(1 for a, b in zip(concurrent, concurrent[1:], strict=False) if a[1] != b[1])
    spans = {n: (min(t for t, m in concurrent if m == n), max(t for t, m in concurrent if m == n)) for n in range(n_threads)}
    overlap = _overlap(list(spans.values()))
    return {
        "threads": n_threads, "turns": turns, "max_tokens": max_tokens, "model": "tiny" if tiny else "default",
        "torch_threads": torch.get_num_threads(), "sequential_s": round(sequential_s, 2), "concurrent_s": round(concurrent_s, 2),
        "speedup": round(sequential_s / concurrent_s, 2), "tokens": len(concurrent),
        "thread_switches": switches, "switch_ratio": round(switches / max(1, len(concurrent) - 1), 3),
        "mean_threads_active": round(overlap, 2),
        "spans": {str(n): [round(a, 2), round(b, 2)] for n, (a, b) in spans.items()},
        "events": [[round(t, 3), n] for t, n in concurrent], "load": load_average(),
    }  # fmt: skip


def _overlap(spans: list[tuple[float, float]]) -> float:
    """Mean number of threads between their first and last token, over the run's span."""
    begin, end = min(a for a, _ in spans), max(b for _, b in spans)
    return sum(b - a for a, b in spans) / (end - begin) if end > begin else 1.0


def threads_markdown(r: dict[str, Any]) -> str:
    return "\n".join([
        f"| {r['threads']} threads x {r['turns']} turns, own ChatRecall session each ({r['model']} model, "
        f"torch threads {r['torch_threads']}) | figure |", "| --- | --- |",
        f"| sequential, the same calls | {r['sequential_s']:.1f} s |",
        f"| concurrent | {r['concurrent_s']:.1f} s (speed-up {r['speedup']:.2f}x) |",
        f"| tokens streamed | {r['tokens']} |",
        f"| consecutive tokens from different threads | {r['thread_switches']} ({r['switch_ratio']:.0%}; one thread at a time would be "
        f"{r['threads'] * r['turns'] - 1} switches at most) |",
        f"| mean threads active between their first and last token | {r['mean_threads_active']} of {r['threads']} |",
        f"| load average (1/5/15 min, at the end) | {r['load']} |",
    ]) + "\n"  # fmt: skip


def threads_plot(r: dict[str, Any], path: Path) -> None:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(10, 3.2))
    for t, n in r["events"]:
        ax.plot([t, t], [n - 0.35, n + 0.35], color=f"C{n % 10}", linewidth=0.8)
    ax.set(xlabel="seconds since the threads started", ylabel="thread", title=f"tokens streamed by {r['threads']} concurrent ChatRecall sessions "
           f"(speed-up {r['speedup']:.2f}x over one after another)")  # fmt: skip
    save(fig, path)


# --------------------------------------------------------------------------- command line
def main(argv: Sequence[str] | None = None) -> int:
    """Run one of the load benchmarks and write its files."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.load", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--no-progress", action="store_true")
    parser.add_argument("--keep", action="store_true", help="keep the stores and logs written (a temporary folder)")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("users")
    p.add_argument("--users", type=int, default=2000)
    p.add_argument("--turns", type=int, default=5)
    p.add_argument("--every", type=int, default=100)
    p.add_argument("--encoder", choices=["default", "hash"], default="default")
    p = sub.add_parser("server")
    p.add_argument("--writers", type=int, default=4)
    p.add_argument("--readers", type=int, default=4)
    p.add_argument("--seconds", type=float, default=60.0)
    p = sub.add_parser("evict-kill")
    p.add_argument("--trials", type=int, default=3)
    p = sub.add_parser("threads")
    p.add_argument("--threads", type=int, default=8)
    p.add_argument("--turns", type=int, default=2)
    p.add_argument("--max-tokens", type=int, default=16)
    p.add_argument("--tiny", action="store_true", help="a tiny random model instead of the default one")
    p.add_argument("--torch-threads", type=int, default=None)
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix=f"load-{args.command}-"))
    random.seed(0)
    if args.command == "users":
        result = users(args.users, args.turns, args.every, work, args.encoder, show=not args.no_progress)
        stem, markdown, plot = "users", users_markdown(result), users_plot
    elif args.command == "server":
        result = server(args.writers, args.readers, args.seconds, work)
        stem, markdown, plot = "server", server_markdown(result), None
    elif args.command == "evict-kill":
        result = evict_kill(args.trials, work)
        stem, markdown, plot = "evict_kill", evict_kill_markdown(result), None
    else:
        result = threads(args.threads, args.turns, args.max_tokens, args.tiny, args.torch_threads, work)
        stem = f"threads_{'tiny' if args.tiny else 'default'}_t{result['torch_threads']}"
        markdown, plot = threads_markdown(result), threads_plot
    result["command"] = "python -m benchmarks.load " + " ".join(sys.argv[1:] if argv is None else argv)
    write_results(args.out, stem, result, markdown, plot)
    if args.keep:
        print(f"stores and logs kept in {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    print(markdown)
    print(f"written to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

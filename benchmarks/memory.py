"""Memory benchmarks: write throughput, query latency by size, and per-user vs shared collections.

1. Write throughput, end to end (check, chunk, journal, encode with all-MiniLM-L6-v2,
   index): turns/s through ``MemoryWriter.add_turns`` on synthetic chat turns, on an
   embedded store and on a ``chroma run`` server; plus the encoder alone on the same turns
   for reference, and LoCoMo turns when the file is there.
2. Query latency p50/p95 of ``UserMemory.search(RecallQuery(text), k)`` for one user
   holding 1k, 10k and 100k memories, embedded and on the server: the default hybrid
   search, and ``retrieval="vector"``. The time includes encoding the query; the vector
   index part alone is reported beside it. To fill 100k quickly
   the memories get precomputed vectors (mixtures of real MiniLM embeddings, so the index
   sees a realistic, clustered distribution) through the store's own journal + index
   path; only the encoding is skipped.
3. The design choice: each user's own collection against one shared collection filtered
   with ``where={"user_id": ...}``, at the same total number of memories.

Usage:
    python -m benchmarks.memory                       # defaults: about 6-9 minutes on 2 cores
    python -m benchmarks.memory --sizes 1000,10000 --write-turns 500 --no-server   # quick
Writes benchmarks/out/memory.json and benchmarks/out/memory.png.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from benchmarks.common.args import OUT  # noqa: E402
from benchmarks.common.locomo_data import DEFAULT_DATA as DEFAULT_LOCOMO  # noqa: E402
from benchmarks.common.plotting import pyplot, save  # noqa: E402
from benchmarks.common.results import write_results  # noqa: E402
from benchmarks.common.timing import timed  # noqa: E402
from recall_core.memory import MemoryStore, MemoryWriter, default_encoder  # noqa: E402
from recall_core.memory.chroma_server import ChromaServer  # noqa: E402
from recall_core.memory.index import MEMORIES  # noqa: E402
from recall_core.memory.journal import JournalRow  # noqa: E402
from recall_core.memory.search import search_vector  # noqa: E402
from recall_core.types import RecallQuery  # noqa: E402

PEOPLE = ["my sister", "my boss", "our neighbour", "my friend Tom", "the doctor", "my daughter", "Grandpa"]
PLACES = ["Porto", "the office", "the gym", "Lisbon", "the school", "the harbour", "the market", "Berlin"]
THINGS = ["a new bike", "the cello", "peanut allergy", "a job offer", "the garden", "a trip", "a beagle"]
VERBS = ["talked about", "went to", "is worried about", "bought", "asked about", "dreams of", "forgot"]


def synthetic_turns(n: int, seed: int = 0) -> list[str]:
    """Chat-like turns of 8-40 words (median ~20), varied enough not to be deduplicated."""
    rng = np.random.default_rng(seed)
    turns = []
    for i in range(n):
        parts = [
            f"{rng.choice(PEOPLE).capitalize()} {rng.choice(VERBS)} {rng.choice(THINGS)} at {rng.choice(PLACES)}"
            for _ in range(int(rng.integers(1, 4)))
        ]
        turns.append(f"{'; '.join(parts)} (note {i}, day {int(rng.integers(1, 365))}).")
    return turns


def questions(n: int, seed: int = 1) -> list[str]:
    rng = np.random.default_rng(seed)
    return [f"What did {rng.choice(PEOPLE)} say about {rng.choice(THINGS)}?" for _ in range(n)]


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q))


def stats_ms(values: list[float]) -> dict[str, float]:
    ms = [v * 1000 for v in values]
    return {"p50_ms": round(pct(ms, 50), 3), "p95_ms": round(pct(ms, 95), 3), "mean_ms": round(float(np.mean(ms)), 3)}


# -- 1. write throughput ---------------------------------------------------------------------


#: MemoryWriter options for the bare-turn run: each turn searched by its own words only.
BARE = {"dated": False, "window": False, "speakers": False}


def write_throughput(store: MemoryStore, texts: list[str], user: str, options: dict[str, Any] | None = None) -> dict[str, Any]:
    """Turns/s through ``MemoryWriter(store, **options).add_turns`` (defaults: date, speaker, window)."""
    writer = MemoryWriter(store, **(options or {}))
    turns = [{"user_id": user, "role": "user" if i % 2 == 0 else "assistant", "content": t, "session_id": f"s{i // 50}"}
             for i, t in enumerate(texts)]  # fmt: skip
    writer.add_turns(turns[:32])  # warm-up: loads the encoder, creates the collection
    rest = turns[32:]
    clock = timed(lambda: writer.add_turns(rest))
    return {"turns": len(rest), "seconds": round(clock.wall, 3), "turns_per_s": round(len(rest) / clock.wall, 1),
            "cpu_seconds": round(clock.cpu, 3), "turns_per_cpu_s": round(len(rest) / clock.cpu, 1)}  # fmt: skip


def encoder_throughput(texts: list[str]) -> dict[str, Any]:
    encoder = default_encoder()
    encoder.encode(texts[:32])
    clock = timed(lambda: encoder.encode(texts, batch_size=64))
    return {"sentences": len(texts), "sentences_per_s": round(len(texts) / clock.wall, 1),
            "sentences_per_cpu_s": round(len(texts) / clock.cpu, 1)}  # fmt: skip


def locomo_texts(path: Path, limit: int) -> list[str]:
    data = json.loads(path.read_text())
    texts = []
    for sample in data:
        conversation = sample["conversation"]
        for key, turns in conversation.items():
            if key.startswith("session_") and isinstance(turns, list):
                texts.extend(f"{t['speaker']}: {t['text']}" for t in turns)
    return texts[:limit]


# -- 2. query latency ------------------------------------------------------------------------


class VectorPool:
    """Realistic vectors without encoding 100k texts: mixtures of real MiniLM embeddings."""

    def __init__(self, encoder: Any, seed: int = 2) -> None:
        self.rng = np.random.default_rng(seed)
        self.base = encoder.encode(synthetic_turns(1500, seed=seed), batch_size=64)

    def take(self, n: int) -> np.ndarray:
        a = self.base[self.rng.integers(0, len(self.base), n)]
        b = self.base[self.rng.integers(0, len(self.base), n)]
        v = a + 0.5 * b + 0.05 * self.rng.normal(size=a.shape).astype(np.float32)
        return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def fill(store: MemoryStore, user: str, start: int, stop: int, pool: VectorPool, texts: list[str]) -> float:
    """Add memories start..stop through the journal and the index (vectors given); return items/s."""
    began = time.perf_counter()
    step = 5000
    for s in range(start, stop, step):
        e = min(stop, s + step)
        vectors = pool.take(e - s)
        rows = [
            JournalRow(id=f"{user}-{i}", user_id=user, session_id=f"s{i // 100}", role="user",
                       text=texts[i % len(texts)], timestamp="2024-01-01T00:00:00", turn_index=i % 100,
                       chunk_index=0, n_chunks=1, embedding=vectors[i - s], encoder=store.encoder.name)
            for i in range(s, e)
        ]  # fmt: skip
        store.journal.insert(rows)
        store.journal.set_vectors([r.id for r in rows], vectors, store.encoder.name)
        stored = store.journal.get_many([r.id for r in rows])
        store.writer.index(stored)
    return (stop - start) / (time.perf_counter() - began)


def query_latency(store: MemoryStore, user: str, queries: list[str], k: int) -> dict[str, Any]:
    memory = store.for_user(user)
    encoder = store.encoder
    for q in queries[:10]:
        memory.search(RecallQuery(q), k)  # warm-up
    timings: dict[str, list[float]] = {name: [] for name in ("search", "search_vector", "encode_query", "index_only")}
    cpu: dict[str, list[float]] = {name: [] for name in timings}
    vectors = encoder.encode(queries)
    for q, vector in zip(queries, vectors, strict=True):
        for name, fn in (
            ("search", lambda q=q: memory.search(RecallQuery(q), k)),  # the default: hybrid
            ("search_vector", lambda q=q: memory.search(RecallQuery(q), k, retrieval="vector")),
            ("encode_query", lambda q=q: encoder.encode([q])),
            ("index_only", lambda v=vector: search_vector(store.index, user, MEMORIES, v, k)),
        ):
            clock = timed(fn)
            timings[name].append(clock.wall)
            cpu[name].append(clock.cpu)
    result: dict[str, Any] = {name: stats_ms(values) for name, values in timings.items()}
    result["cpu"] = {name: stats_ms(values) for name, values in cpu.items()}
    return result


def scaling(store: MemoryStore, sizes: list[int], pool: VectorPool, queries: list[str], k: int, label: str) -> list[dict]:
    user = f"bench-{label}"
    texts = synthetic_turns(5000, seed=3)
    results, have = [], 0
    for size in sizes:
        rate = fill(store, user, have, size, pool, texts)
        have = size
        assert store.for_user(user).count() == size
        result = {"backend": label, "memories": size, "fill_items_per_s": round(rate, 1)}
        result.update(query_latency(store, user, queries, k))
        results.append(result)
        s, c = result["search"], result["cpu"]["search"]
        v = result["search_vector"]
        print(f"  {label:8s} {size:>7,} memories: search (hybrid) p50 {s['p50_ms']:.2f} ms  p95 {s['p95_ms']:.2f} ms  "
              f"vector p50 {v['p50_ms']:.2f} p95 {v['p95_ms']:.2f}  (encode p50 {result['encode_query']['p50_ms']:.2f}, index p50 {result['index_only']['p50_ms']:.2f}; "
              f"CPU p50 {c['p50_ms']:.2f} p95 {c['p95_ms']:.2f}; filled at {rate:,.0f}/s)", flush=True)  # fmt: skip
    return results


# -- 3. per-user collections vs one shared collection ----------------------------------------


def shared_vs_per_user(total: int, users: int, pool: VectorPool, queries: list[str], k: int) -> dict[str, Any]:
    """Same data twice: `users` collections of total/users memories, and one collection of `total`."""
    import chromadb
    from chromadb.config import Settings

    per_user = total // users
    with tempfile.TemporaryDirectory() as tmp:
        client = chromadb.PersistentClient(tmp, settings=Settings(anonymized_telemetry=False))
        cosine = {"hnsw": {"space": "cosine"}}
        shared = client.create_collection("shared-all", configuration=cosine, embedding_function=None)
        own = [client.create_collection(f"own-{u:04d}", configuration=cosine, embedding_function=None) for u in range(users)]
        began = time.perf_counter()
        for u in range(users):
            vectors = pool.take(per_user)
            ids = [f"{u}-{i}" for i in range(per_user)]
            meta = [{"user_id": f"user-{u}", "role": "user"} for _ in range(per_user)]
            docs = [f"memory {i} of user {u}" for i in range(per_user)]
            shared.add(ids=ids, embeddings=vectors, metadatas=meta, documents=docs)
            own[u].add(ids=ids, embeddings=vectors, metadatas=meta, documents=docs)
        fill_s = time.perf_counter() - began
        vectors = pool.take(len(queries))
        rng = np.random.default_rng(4)
        include = ["documents", "metadatas", "distances"]
        names = ("per_user_collection", "shared_where_user", "shared_unfiltered")
        timings: dict[str, list[float]] = {name: [] for name in names}
        cpu: dict[str, list[float]] = {name: [] for name in names}
        for vector in vectors:
            u = int(rng.integers(0, users))
            for name, fn in (
                ("per_user_collection", lambda u=u, v=vector: own[u].query(query_embeddings=[v], n_results=k, include=include)),
                ("shared_where_user", lambda u=u, v=vector: shared.query(
                    query_embeddings=[v], n_results=k, where={"user_id": f"user-{u}"}, include=include)),
                ("shared_unfiltered", lambda v=vector: shared.query(query_embeddings=[v], n_results=k, include=include)),
            ):  # fmt: skip
                clock = timed(fn)
                timings[name].append(clock.wall)
                cpu[name].append(clock.cpu)
        client.close()
    result = {"total_memories": total, "users": users, "per_user": per_user, "fill_seconds_both": round(fill_s, 1)}
    result.update({name: stats_ms(values) for name, values in timings.items()})
    result["cpu"] = {name: stats_ms(values) for name, values in cpu.items()}
    ratio = result["shared_where_user"]["p50_ms"] / max(result["per_user_collection"]["p50_ms"], 1e-9)
    result["where_filter_slowdown_p50"] = round(ratio, 1)
    print(f"  {users} users x {per_user:,}: own collection p50 {result['per_user_collection']['p50_ms']:.2f} ms, "
          f"shared + where p50 {result['shared_where_user']['p50_ms']:.2f} ms ({ratio:.1f}x), "
          f"shared unfiltered p50 {result['shared_unfiltered']['p50_ms']:.2f} ms", flush=True)  # fmt: skip
    return result


# -- report ----------------------------------------------------------------------------------


def plot(result: dict[str, Any], path: Path) -> None:
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    ax = axes[0]
    for backend in sorted({r["backend"] for r in result["latency"]}):
        rows = [r for r in result["latency"] if r["backend"] == backend]
        sizes = [r["memories"] for r in rows]
        ax.plot(sizes, [r["search"]["p50_ms"] for r in rows], "o-", label=f"{backend} p50")
        ax.plot(sizes, [r["search"]["p95_ms"] for r in rows], "s--", label=f"{backend} p95")
    ax.axhline(15, color="grey", lw=0.8, ls=":", label="goal p95 15 ms")
    ax.set_xscale("log")
    ax.set_xlabel("memories of one user")
    ax.set_ylabel("search latency incl. query encoding (ms)")
    ax.set_title(f"UserMemory.search, k={result['args']['k']}")
    ax.legend(fontsize=8)
    ax = axes[1]
    if result.get("isolation"):
        iso = result["isolation"]
        names = ["per_user_collection", "shared_where_user", "shared_unfiltered"]
        ax.bar(range(3), [iso[n]["p50_ms"] for n in names], color=["tab:green", "tab:red", "tab:grey"])
        ax.set_xticks(range(3), ["own collection", "shared + where", "shared, no filter"], fontsize=8)
        ax.set_ylabel("index query p50 (ms)")
        ax.set_title(f"{iso['users']} users x {iso['per_user']:,} memories")
    save(fig, path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000,100000", help="memories of one user to query at")
    parser.add_argument("--queries", type=int, default=200, help="queries per size")
    parser.add_argument("--k", type=int, default=4)
    parser.add_argument("--write-turns", type=int, default=2000, help="turns for the write-throughput run")
    parser.add_argument("--locomo", type=Path, default=DEFAULT_LOCOMO, help="LoCoMo JSON for a real-turns write run")
    parser.add_argument("--isolation-total", type=int, default=100_000, help="memories in the shared-vs-own test (0: skip)")
    parser.add_argument("--isolation-users", type=int, default=100)
    parser.add_argument("--no-server", action="store_true", help="skip the chroma run server runs")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's choice)")
    args = parser.parse_args()
    sizes = sorted(int(s) for s in args.sizes.split(","))
    args.out.mkdir(parents=True, exist_ok=True)
    # Stopped with SIGTERM: unwind through the finally blocks so the chroma server is stopped too.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    load = os.getloadavg()[0]
    if load > 0.5:
        print(f"warning: load average {load:.1f} before starting; other processes will skew the timings", flush=True)

    result: dict[str, Any] = {
        "args": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
        "machine": {"cpus": os.cpu_count(), "torch_threads": torch.get_num_threads(), "python": platform.python_version(),
                    "load_avg_start": os.getloadavg()},  # fmt: skip
        "write": [],
        "latency": [],
    }
    began = time.perf_counter()
    texts = synthetic_turns(args.write_turns, seed=5)
    queries = questions(args.queries)
    backends = ["embedded"] + ([] if args.no_server else ["server"])
    with tempfile.TemporaryDirectory() as tmp:
        server = None if args.no_server else ChromaServer(Path(tmp) / "server-data").start()
        try:

            def open_store(label: str, name: str) -> MemoryStore:
                if label == "embedded":
                    return MemoryStore.local(Path(tmp) / name)
                assert server is not None
                return MemoryStore.server(port=server.port, journal_path=Path(tmp) / f"{name}.sqlite3")

            print("write throughput (MiniLM encoder, end to end):", flush=True)
            result["encoder_only"] = encoder_throughput(texts)
            enc = result["encoder_only"]
            print(f"  encoder alone: {enc['sentences_per_s']:.0f} sentences/s, "
                  f"{enc['sentences_per_cpu_s']:.0f} per CPU-second", flush=True)  # fmt: skip
            for label in backends:
                store = open_store(label, "write")
                data = [("synthetic", texts)]
                if args.locomo and Path(args.locomo).exists():
                    data.append(("locomo", locomo_texts(Path(args.locomo), args.write_turns)))
                if label == "embedded":  # what the searched context (date, speaker, window) costs
                    data.append(("synthetic, bare", data[0][1]))
                for name, items in data:
                    options = BARE if name.endswith("bare") else None
                    row = {"backend": label, "data": name,
                           **write_throughput(store, items, f"writer-{name.replace(', ', '-')}", options)}
                    result["write"].append(row)
                    print(f"  {label:8s} {name:9s}: {row['turns_per_s']:.0f} turns/s, {row['turns_per_cpu_s']:.0f} "
                          f"turns per CPU-second ({row['turns']} turns)", flush=True)  # fmt: skip
                store.close()

            print(f"query latency (k={args.k}, {args.queries} queries, including query encoding):", flush=True)
            for label in backends:
                store = open_store(label, "latency")
                pool = VectorPool(store.encoder)
                result["latency"].extend(scaling(store, sizes, pool, queries, args.k, label))
                store.close()
        finally:
            if server is not None:
                server.stop()

    if args.isolation_total:
        print("own collection per user vs one shared collection with a where filter (embedded):", flush=True)
        pool = VectorPool(default_encoder())
        result["isolation"] = shared_vs_per_user(args.isolation_total, args.isolation_users, pool, queries, args.k)
    result["machine"]["load_avg_end"] = os.getloadavg()
    result["seconds"] = round(time.perf_counter() - began, 1)
    write_results(args.out, "memory", result, plot=plot, indent=2)
    print(f"done in {result['seconds']:.0f} s; wrote {args.out / 'memory.json'} and memory.png")


if __name__ == "__main__":
    main()

"""What checking a local index costs when a store is opened, and what ``doctor``'s probe costs.

A local store that was closed cleanly leaves a fingerprint of its index folder; the next open
only compares it (a ``stat`` per file). A store that was not (a crash, a copy, a hand edit)
is checked at open: every HNSW file is checked without loading it (segments.py), then each
user's count in the index is compared with the journal (which opens the Chroma client, as
the first search would anyway). ``recall doctor`` also reads every collection in a child
process (probe.py). This measures each, for stores of USERS x MEMORIES (384-dimensional
vectors, the MiniLM size, written through the store's own journal and index; no encoder):

* ``open_trusted_ms``: ``MemoryStore.local`` + ``close`` when the fingerprint matches;
* ``open_checked_ms``: the same after the fingerprint was removed (the full check);
* ``file_check_ms``: :func:`check_index_files` alone; ``fingerprint_ms``: the fingerprint alone;
* ``probe_ms``: :func:`probe_collections` over every collection (one child process).

Usage:
    python -m benchmarks.open_check                                   # 1x1000, 1x20000, 200x50; 5 repeats
    python -m benchmarks.open_check --layouts 1x100000,2000x10 --repeats 3
Writes benchmarks/out/open_check.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from benchmarks.common.args import OUT  # noqa: E402
from benchmarks.common.progress import progress  # noqa: E402
from benchmarks.common.timing import median_ms  # noqa: E402
from recall_core.memory import HashEncoder, MemoryStore  # noqa: E402
from recall_core.memory.journal import INDEXED, JournalRow  # noqa: E402
from recall_core.memory.upkeep.health import CHECKED_FILE, fingerprint  # noqa: E402
from recall_core.memory.upkeep.probe import probe_collections  # noqa: E402
from recall_core.memory.upkeep.segments import check_index_files  # noqa: E402

DIM = 384


def fill(path: Path, users: int, memories: int, seed: int = 0) -> None:
    """``users`` users of ``memories`` memories each, with random unit vectors, journaled and indexed."""
    rng = np.random.default_rng(seed)
    encoder = HashEncoder(DIM, name="bench-384")  # named only: the vectors are given
    with MemoryStore.local(path, encoder=encoder) as store:
        for u in progress(range(users), f"fill {users}x{memories}", users >= 10, unit="user"):
            for start in range(0, memories, 5000):
                n = min(5000, memories - start)
                vectors = rng.standard_normal((n, DIM)).astype(np.float32)
                vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
                rows = [
                    JournalRow(
                        id=f"u{u}-{start + i}", user_id=f"user-{u}", session_id="s", role="user",
                        text=f"memory {start + i} of user {u}", timestamp="2024-01-01", turn_index=start + i,
                        chunk_index=0, n_chunks=1, embedding=vectors[i], encoder=encoder.name,
                    )  # fmt: skip
                    for i in range(n)
                ]
                store.journal.insert(rows)
                written = store.index.write(rows, encoder.name)
                store.journal.mark([r.id for r in written], INDEXED)


def measure(path: Path, repeats: int) -> dict[str, float]:
    chroma = path / "chroma"
    encoder = HashEncoder(DIM, name="bench-384")

    def open_close() -> None:
        MemoryStore.local(path, encoder=encoder).close()

    def open_checked() -> None:
        (path / CHECKED_FILE).unlink(missing_ok=True)
        store = MemoryStore.local(path, encoder=encoder)
        assert store.open_check.checked and store.open_check.ok, store.open_check
        store.close()

    open_close()  # leaves the fingerprint
    return {
        "open_trusted_ms": median_ms(open_close, repeats),
        "open_checked_ms": median_ms(open_checked, repeats),
        "file_check_ms": median_ms(lambda: check_index_files(chroma), repeats),
        "fingerprint_ms": median_ms(lambda: fingerprint(chroma), repeats),
        "probe_ms": median_ms(lambda: probe_collections(chroma), max(1, repeats // 2)),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layouts", default="1x1000,1x20000,200x50", help="USERSxMEMORIES, comma separated")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", type=Path, default=OUT / "open_check.json")
    args = parser.parse_args(argv)
    results = []
    for layout in args.layouts.split(","):
        users, memories = (int(x) for x in layout.lower().split("x"))
        with tempfile.TemporaryDirectory(prefix="recall-open-check-") as folder:
            path = Path(folder) / "mem"
            fill(path, users, memories)
            row = {"users": users, "memories_per_user": memories, **measure(path, args.repeats)}
        results.append(row)
        print(
            f"{users:>5} users x {memories:>6} memories: open trusted {row['open_trusted_ms']:8.1f} ms | "
            f"open checked {row['open_checked_ms']:8.1f} ms (file check {row['file_check_ms']:7.1f} ms) | "
            f"fingerprint {row['fingerprint_ms']:6.1f} ms | doctor probe {row['probe_ms']:8.1f} ms",
            flush=True,
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    meta = {"python": sys.version.split()[0], "machine": platform.machine(), "cpus": os.cpu_count()}
    args.out.write_text(json.dumps({"meta": meta, "results": results}, indent=2))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What trusting and forgetting KV block files costs (issue 23).

``read``: a block file read back by a fresh :class:`~recall_core.kv.memories.KVMemories` (the
SHA-256 of its tensors checked, :func:`~recall_core.kv.memories.tensor_digest`), against the same
file loaded with ``safetensors`` alone (no check): the peer, alternating in each round. Blocks
have the shape of the default model's (SmolLM2-135M: 30 layers, 3 key-value heads of 64, float32)
and ``--tokens`` positions, a 40-token note by default (about 1.8 MB); the values are random, as
the cost depends only on the bytes.

``forget``: a local store of ``--users`` x ``--turns`` memories (hash encoder: the encoder is not
what is measured) and one block file per memory under ``$RECALL_HOME/kv_memories``; one user is
forgotten, then the store is closed. Since 2026-12-07 a forget's scrub of the Chroma files (the
user's folder removed, hnswlib's unused bytes zeroed, ``chroma.sqlite3`` vacuumed) runs at the
close, when no Chroma client of the store writes: so both steps are timed. Arms, alternating:
``scrub`` (what ships) and ``no_scrub`` (the same close without the scrub). Each round builds
both stores afresh in a temporary ``RECALL_HOME``.

    python -m benchmarks.kv_files --rounds 5

Writes ``--out`` (default ``benchmarks/out/kv_files``): ``kv_files.json``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import torch

from benchmarks.common.args import OUT as OUT_ROOT
from benchmarks.common.progress import progress
from benchmarks.common.results import load_average, write_results

OUT = OUT_ROOT / "kv_files"
LAYERS, HEADS, HEAD_DIM = 30, 3, 64


def _block(tokens: int, seed: int) -> Any:
    from recall_core.kv.blocks import BlockKV

    generator = torch.Generator().manual_seed(seed)
    shape = (HEADS, tokens, HEAD_DIM)
    keys = tuple(torch.randn(shape, generator=generator) for _ in range(LAYERS))
    values = tuple(torch.randn(shape, generator=generator) for _ in range(LAYERS))
    return BlockKV(keys, values, 10)


def read_arms(rounds: int, tokens: int, files: int, show: bool) -> dict[str, Any]:
    """Median ms to read one block file: checked (shipped) and unchecked (safetensors alone)."""
    from safetensors.torch import load_file

    from recall_core.kv.memories import BlockKey, KVMemories

    times: dict[str, list[float]] = {"checked": [], "unchecked": []}
    with tempfile.TemporaryDirectory() as folder:
        keys = [BlockKey("model", "prefix", (f"m{i}",), f"c{i}") for i in range(files)]
        writer = KVMemories(disk=Path(folder) / "kv")
        for i, key in enumerate(keys):
            writer.put(key, _block(tokens, i))
        paths = [writer._path(key) for key in keys]
        size = paths[0].stat().st_size
        for _ in progress(range(rounds), "read rounds", show):
            for arm in ("checked", "unchecked"):
                reader = KVMemories(disk=Path(folder) / "kv")
                start = time.perf_counter()
                if arm == "checked":
                    found = [reader.get(key) for key in keys]
                    assert all(block is not None for block in found)
                else:
                    for path in paths:
                        load_file(path)
                times[arm].append((time.perf_counter() - start) * 1000 / files)
    checked, unchecked = (statistics.median(times[a]) for a in ("checked", "unchecked"))
    return {"file_bytes": size, "tokens": tokens, "files": files, "checked_ms": checked, "unchecked_ms": unchecked,
            "ratio": checked / unchecked}  # fmt: skip


def _store(home: Path, users: int, turns: int) -> None:
    from recall_core.memory import HashEncoder, MemoryStore, MemoryWriter
    from recall_core.paths import derived_tag

    with MemoryStore.local(home / "memory", encoder=HashEncoder(64)) as store:
        writer = MemoryWriter(store)
        rows = [{"user_id": f"u{u}", "role": "user", "content": f"Fact {i} of user {u}: " + "words " * 20}
                for u in range(users) for i in range(turns)]  # fmt: skip
        writer.add_turns(rows, progress=False)
        folder = home / "kv_memories" / "model"
        folder.mkdir(parents=True)
        for user in range(users):
            for row in store.journal.rows(f"u{user}"):
                (folder / f"{derived_tag(row.id)}-{row.id}.safetensors").write_bytes(b"\0" * 4096)


def forget_arms(rounds: int, users: int, turns: int, show: bool) -> dict[str, Any]:
    """Median seconds of one user's forget and of the store's close after it, with the close's scrub
    (what ships) and without it."""
    times: dict[str, list[float]] = {f"{arm}_{step}": [] for arm in ARMS for step in ("forget", "close")}
    sizes = []
    home_before = os.environ.get("RECALL_HOME")
    try:
        _forget_rounds(rounds, users, turns, show, times, sizes)
    finally:
        if home_before is None:
            os.environ.pop("RECALL_HOME", None)
        else:
            os.environ["RECALL_HOME"] = home_before
    median = {name: statistics.median(values) for name, values in times.items()}
    shipped = median["scrub_forget"] + median["scrub_close"]
    bare = median["no_scrub_forget"] + median["no_scrub_close"]
    return {"users": users, "turns": turns, "database_bytes": statistics.median(sizes),
            "forget_s": median["scrub_forget"], "close_s": median["scrub_close"],
            "no_scrub_forget_s": median["no_scrub_forget"], "no_scrub_close_s": median["no_scrub_close"],
            "shipped_s": shipped, "no_scrub_s": bare, "ratio": shipped / bare}  # fmt: skip


#: ``scrub``: what ships (the forgotten user's folder removed, hnswlib's unused bytes zeroed and
#: ``chroma.sqlite3`` vacuumed at the close); ``no_scrub``: the same close without that step.
ARMS = ("scrub", "no_scrub")


def _forget_rounds(rounds: int, users: int, turns: int, show: bool, times: dict[str, list[float]],
                   sizes: list[int]) -> None:  # fmt: skip
    from unittest import mock

    from recall_core.memory import HashEncoder, MemoryStore, MemoryWriter
    from recall_core.memory import store as store_module

    for _ in progress(range(rounds), "forget rounds", show):
        for arm in ARMS:
            with tempfile.TemporaryDirectory() as folder:
                home = Path(folder)
                os.environ["RECALL_HOME"] = str(home)
                _store(home, users, turns)
                sizes.append((home / "memory" / "chroma" / "chroma.sqlite3").stat().st_size)
                store = MemoryStore.local(home / "memory", encoder=HashEncoder(64))
                start = time.perf_counter()
                assert MemoryWriter(store).forget("u0") == turns
                forgot = time.perf_counter()
                with mock.patch.object(store_module, "scrub_if_due", lambda root: None) if arm == "no_scrub" else nullcontext():
                    store.close()
                times[f"{arm}_forget"].append(forgot - start)
                times[f"{arm}_close"].append(time.perf_counter() - forgot)
                due = (home / "memory" / "chroma.scrub-due").exists()
                assert due == (arm == "no_scrub"), f"the scrub {'ran' if not due else 'did not run'} in arm {arm}"
                left = sum(1 for _ in (home / "kv_memories").rglob("*.safetensors"))
                assert left == (users - 1) * turns, left


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tokens", type=int, default=40, help="positions per block (a note of about 40 tokens)")
    parser.add_argument("--files", type=int, default=20, help="block files read per round")
    parser.add_argument("--users", type=int, default=32)
    parser.add_argument("--turns", type=int, default=100, help="memories per user (32 x 100: the probe's 3,200)")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    show = not args.no_progress
    before = load_average()
    read = read_arms(args.rounds, args.tokens, args.files, show)
    forget = forget_arms(args.rounds, args.users, args.turns, show)
    result = {"read": read, "forget": forget, "load_before": before, "load_after": load_average()}
    print(f"read one block file ({read['file_bytes'] / 1e6:.2f} MB): {read['checked_ms']:.2f} ms checked, "
          f"{read['unchecked_ms']:.2f} ms unchecked: {read['ratio']:.2f}x")  # fmt: skip
    print(f"forget one of {forget['users']} users x {forget['turns']} memories (chroma.sqlite3 "
          f"{forget['database_bytes'] / 1e6:.1f} MB, {forget['turns']} block files of {forget['users'] * forget['turns']}), "
          f"then close: {forget['forget_s']:.3f} s + {forget['close_s']:.3f} s with the close's scrub, "
          f"{forget['no_scrub_forget_s']:.3f} s + {forget['no_scrub_close_s']:.3f} s without: {forget['ratio']:.2f}x")  # fmt: skip
    print(f"load average before {before}, after {result['load_after']}")
    write_results(args.out, "kv_files", result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""What a memory is searched by: the writer's ``window`` modes compared on retrieval alone.

``MemoryWriter(window=...)`` decides when a memory is embedded and word-indexed with the end
of the turn before it: ``"always"``, ``"questions"`` (only when that turn asks something, the
default) or ``"never"``. No model answers here; each mode writes the same conversations into a
fresh embedded store (MiniLM, hybrid search) and the searches are scored:

* the conversations generator (``recall_core.training.conversations``, the **dev** seed unless ``--seed``):
  is the turn that states the fact among the first 1 / 2 / 4 texts returned (the store's
  default unit, the turn), and among the notes recall's default config would inject;
* LoCoMo dev (categories 1-4, questions with evidence): an evidence turn among the top 1 / 5 / 10.

Usage:
    python -m benchmarks.search_text                              # dev conversations (6 users) and LoCoMo dev
    python -m benchmarks.search_text --skip-locomo --users 12
Writes benchmarks/out/search_text.json.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.common.args import OUT, seed_of
from benchmarks.common.locomo_data import ANSWERABLE, load_locomo, resolve_data
from benchmarks.common.locomo_metrics import hit_at_k
from benchmarks.common.methods import memory_turns
from benchmarks.common.results import write_results
from recall_core.training.conversations import generate

MODES = ("always", "questions", "never")


def conversations_hits(encoder: Any, seed: int, users: int, window: str) -> dict[str, float]:
    """Where the fact turn ranks for each generated question, with the writer's ``window``."""
    from recall_core import RecallConfig
    from recall_core.decoding.select import choose_candidates
    from recall_core.memory import MemoryStore, MemoryWriter

    people = generate(seed, users=users)
    config = RecallConfig()
    counts = {"hit@1": 0, "hit@2": 0, "hit@4": 0, "in_notes": 0}
    n = 0
    with tempfile.TemporaryDirectory() as folder, MemoryStore.local(folder, encoder=encoder) as store:
        store.writer = MemoryWriter(store, window=window)
        store.writer.add_turns(memory_turns(people))
        for user in people:
            memory = store.for_user(user.user_id)
            by_position = {(t.session, t.index): t.content for t in user.turns}
            for question in user.questions:
                fact = by_position[question.evidence]
                found = memory.search(question.text, config.top_k)
                texts = [c.text for c in found]
                chosen, _ = choose_candidates(found, config)
                n += 1
                counts["hit@1"] += fact in texts[:1]
                counts["hit@2"] += fact in texts[:2]
                counts["hit@4"] += fact in texts[:4]
                counts["in_notes"] += any(c.text == fact for c in chosen)
    return {key: round(value / n, 3) for key, value in counts.items()} | {"questions": n}


def locomo_hits(encoder: Any, data: Path, window: str, ks: Sequence[int] = (1, 5, 10)) -> dict[str, float]:
    """An evidence turn among the top k, LoCoMo categories 1-4, with the writer's ``window``."""
    from recall_core.memory import MemoryStore, MemoryWriter

    conversations = load_locomo(data)
    hits: dict[int, list[bool]] = {k: [] for k in ks}
    with tempfile.TemporaryDirectory() as folder, MemoryStore.local(folder, encoder=encoder) as store:
        store.writer = MemoryWriter(store, window=window)
        store.writer.ingest(data, progress=False)
        for conversation in conversations:
            memory = store.for_user(conversation.sample_id)
            for question in conversation.questions:
                if question.category not in ANSWERABLE or not question.evidence:
                    continue
                found = memory.search(question.question, max(ks))
                ranked = [(str(c.metadata.get("dia_id")),) for c in found]
                for k in ks:
                    hits[k].append(hit_at_k(ranked, question.evidence, k))
    return {f"hit@{k}": round(sum(v) / len(v), 3) for k, v in hits.items()} | {"questions": len(hits[ks[0]])}


def main(argv: Sequence[str] | None = None) -> int:
    from recall_core.memory.encoders import default_encoder

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seed", default="dev", help="conversations seed: a name in SEEDS or an integer")
    p.add_argument("--users", type=int, default=6)
    p.add_argument("--data", default=None, help="LoCoMo JSON (default ../shared/data/locomo_dev.json)")
    p.add_argument("--skip-locomo", action="store_true")
    p.add_argument("--out", type=Path, default=OUT)
    args = p.parse_args(argv)
    seed = seed_of(args.seed)
    encoder = default_encoder()
    result: dict[str, Any] = {"benchmark": "search_text", "seed": seed, "users": args.users, "modes": {}}
    print("| window | conv. hit@1 | hit@2 | hit@4 | in the notes | LoCoMo hit@1 | hit@5 | hit@10 | s |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for window in MODES:
        start = time.perf_counter()
        row = {"conversations": conversations_hits(encoder, seed, args.users, window)}
        if not args.skip_locomo:
            row["locomo"] = locomo_hits(encoder, resolve_data(args.data), window)
        row["seconds"] = round(time.perf_counter() - start, 1)
        result["modes"][window] = row
        c, lo = row["conversations"], row.get("locomo", {})
        print(f"| {window} | {c['hit@1']:.3f} | {c['hit@2']:.3f} | {c['hit@4']:.3f} | {c['in_notes']:.3f} | "
              f"{lo.get('hit@1', float('nan')):.3f} | {lo.get('hit@5', float('nan')):.3f} | "
              f"{lo.get('hit@10', float('nan')):.3f} | {row['seconds']} |", flush=True)
    write_results(args.out, "search_text", result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

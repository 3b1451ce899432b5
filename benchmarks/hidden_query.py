"""The hidden query against the text query, on retrieval alone (no generation).

Each question is asked where the model would recall when it decides to (the chat template of
the system prompt and the question, the generation prompt, ``<recall>``). Its ``text`` query is
the question embedded by the store's encoder; its ``hidden`` query is the ``<recall>`` hidden
state mapped into the encoder's space by the model's query head (:mod:`recall_core.models.query_head`).
Both search the same store, by ``vector`` (cosine alone) and by ``hybrid`` (cosine + BM25 over
the question's words, the store's default). BENCHMARKS.md also keeps the figures of the retired
hidden path without a head (the last-layer state against LM-space keys of every memory).

* LoCoMo dev (categories 1-4, questions with evidence): an evidence turn among the top 1 / 5;
* the conversations generator on its **eval** seed: the turn that states the fact among the top 1 / 5.

The goal: hidden hit@5 at least 90% of the text query's on both.

Usage:
    python -m benchmarks.hidden_query                         # embedded default model, the head in its folder
    python -m benchmarks.hidden_query --model DIR --head DIR2
Writes benchmarks/out/hidden_query/hidden_query.{json,md,png}.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from benchmarks.common.args import OUT as OUT_ROOT
from benchmarks.common.args import seed_of
from benchmarks.common.locomo_data import ANSWERABLE, load_locomo, resolve_data, subset_file
from benchmarks.common.locomo_metrics import hit_at_k
from benchmarks.common.methods import memory_turns
from benchmarks.common.plotting import pyplot, save
from benchmarks.common.progress import progress
from benchmarks.common.results import write_results
from recall_core.training.conversations import generate

OUT = OUT_ROOT / "hidden_query"
KS = (1, 5)
RETRIEVALS = ("vector", "hybrid")


class Queries:
    """The text and head queries of a list of questions."""

    def __init__(self, model: Any, tokenizer: Any, head: Any, texts: Sequence[str], progress: bool):
        from recall_core.training.head import recall_features

        features = recall_features(model, tokenizer, texts, list(head.meta.layers),
                                   system_prompt=head.meta.system_prompt, progress=progress)  # fmt: skip
        self.texts = list(texts)
        self.vectors = head.vectors(features)
        self.space = head.encoder_name

    def methods(self) -> dict[str, Callable[[int], Any]]:
        """``name -> (question index -> (RecallQuery, retrieval))``."""
        from recall_core.types import RecallQuery

        out: dict[str, Callable[[int], Any]] = {}
        for retrieval in RETRIEVALS:
            out[f"text/{retrieval}"] = lambda i, r=retrieval: (RecallQuery(self.texts[i]), r)
            out[f"head/{retrieval}"] = lambda i, r=retrieval: (
                RecallQuery(self.texts[i], mode="hidden", vector=self.vectors[i].tolist(), vector_space=self.space), r
            )
        return out


def _rates(hits: dict[str, dict[int, list[bool]]], n: int) -> dict[str, Any]:
    return {name: {f"hit@{k}": round(sum(v) / max(len(v), 1), 3) for k, v in by_k.items()} for name, by_k in hits.items()} | {
        "questions": n
    }


def _queries(model: Any, tokenizer: Any, head: Any, texts: list[str], args: argparse.Namespace) -> tuple[Any, dict[str, Any], dict[str, dict[int, list[bool]]]]:
    """What the training texts share with ``texts``, each query method, and its empty hit lists."""
    queries = Queries(model, tokenizer, head, texts, args.progress)
    methods = queries.methods()
    return seen_in_training(queries.texts, head.meta.recipe), methods, {m: {k: [] for k in KS} for m in methods}


def _store(folder: str, encoder: Any) -> Any:
    """A store in ``folder`` with the writer's defaults."""
    from recall_core.memory import MemoryStore

    return MemoryStore.local(folder, encoder=encoder)


def locomo(model: Any, tokenizer: Any, head: Any, encoder: Any, data: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Evidence among the top k, LoCoMo categories 1-4."""
    conversations = load_locomo(data, args.conversations)
    asked = [(c.sample_id, q) for c in conversations for q in c.questions if q.category in ANSWERABLE and q.evidence]
    seen, methods, hits = _queries(model, tokenizer, head, [q.question for _, q in asked], args)
    with tempfile.TemporaryDirectory() as folder, _store(folder, encoder) as store:
        if args.conversations is None:
            store.writer.ingest(data, progress=args.progress)
        else:
            store.writer.ingest(subset_file(data, [c.sample_id for c in conversations], Path(folder) / "subset.json"),
                                progress=args.progress)  # fmt: skip
        for i, (sample_id, question) in enumerate(progress(asked, "LoCoMo questions", args.progress, unit="q")):
            memory = store.for_user(sample_id)
            for name, make in methods.items():
                query, retrieval = make(i)
                found = memory.search(query, max(KS), retrieval=retrieval)
                ranked = [(str(c.metadata.get("dia_id")),) for c in found]
                for k in KS:
                    hits[name][k].append(hit_at_k(ranked, question.evidence, k))
    return _rates(hits, len(asked)) | {"seen_in_training": seen}


def conversations(model: Any, tokenizer: Any, head: Any, encoder: Any, args: argparse.Namespace) -> dict[str, Any]:
    """The fact turn among the top k, generated conversations (eval seed)."""
    people = generate(args.seed, users=args.users)
    asked = [(u, q) for u in people for q in u.questions]
    seen, methods, hits = _queries(model, tokenizer, head, [q.text for _, q in asked], args)
    with tempfile.TemporaryDirectory() as folder, _store(folder, encoder) as store:
        store.writer.add_turns(memory_turns(people))
        for i, (user, question) in enumerate(progress(asked, "conversation questions", args.progress, unit="q")):
            memory = store.for_user(user.user_id)
            fact = {(t.session, t.index): t.content for t in user.turns}[question.evidence]
            for name, make in methods.items():
                query, retrieval = make(i)
                texts = [c.text for c in memory.search(query, max(KS), retrieval=retrieval)]
                for k in KS:
                    hits[name][k].append(fact in texts[:k])
    return _rates(hits, len(asked)) | {"seen_in_training": seen}


def seen_in_training(texts: Sequence[str], recipe: dict[str, Any]) -> float | None:
    """The share of ``texts`` that are also training texts of the head (the conversations
    generator's templates repeat across seeds), when the head was trained on ``head_texts``."""
    data = recipe.get("data") or {}
    if not str(data.get("source", "")).endswith("head_texts") or not texts:
        return None
    from recall_core.training.head_texts import head_texts

    seen = set(head_texts(int(data.get("seed", 0)), vocabulary_n=int(data.get("vocabulary_n", 0)))[0])
    return round(sum(t in seen for t in texts) / len(texts), 3)


def ratios(part: dict[str, Any]) -> dict[str, float | None]:
    """hidden hit@k / text hit@k for each retrieval and k."""
    out: dict[str, float | None] = {}
    for retrieval in RETRIEVALS:
        for k in KS:
            text, head = part[f"text/{retrieval}"][f"hit@{k}"], part[f"head/{retrieval}"][f"hit@{k}"]
            out[f"{retrieval}/hit@{k}"] = round(head / text, 3) if text else None
    return out


def markdown(result: dict[str, Any]) -> str:
    lines = ["| benchmark | query | hit@1 | hit@5 | hidden / text (hit@5) |", "| --- | --- | --- | --- | --- |"]
    for bench in ("locomo", "conversations"):
        part = result.get(bench)
        if not part:
            continue
        for name, row in part.items():
            if not isinstance(row, dict) or "hit@1" not in row:
                continue
            retrieval = name.split("/")[-1]
            ratio = part["ratios"].get(f"{retrieval}/hit@5") if name.startswith("head/") else None
            shown = "" if ratio is None else f"{ratio:.3f}"
            lines.append(f"| {bench} ({part['questions']} q., {part['seen_in_training']} seen in training) | {name} | {row['hit@1']:.3f} | {row['hit@5']:.3f} | {shown} |")
    return "\n".join(lines) + "\n"


def plot(result: dict[str, Any], path: Path) -> None:
    plt = pyplot()
    benches = [b for b in ("locomo", "conversations") if result.get(b)]
    fig, axes = plt.subplots(1, len(benches), figsize=(5.5 * len(benches), 3.8), squeeze=False)
    for ax, bench in zip(axes[0], benches, strict=True):
        part = result[bench]
        names = [n for n, row in part.items() if isinstance(row, dict) and "hit@5" in row]
        colours = ["tab:blue" if n.startswith("text") else "tab:green" for n in names]
        ax.barh(names, [part[n]["hit@5"] for n in names], color=colours)
        for n in names:
            if n.startswith("text"):
                ax.axvline(0.9 * part[n]["hit@5"], color="tab:red", lw=0.8, ls=":")
        ax.set_xlim(0, 1)
        ax.set_xlabel("hit@5 (dotted: 90% of a text query's)")
        ax.set_title(f"{bench}: {part['questions']} questions")
    save(fig, path)


def main(argv: Sequence[str] | None = None, model: Any = None, tokenizer: Any = None) -> int:
    from recall_core import load_model
    from recall_core.memory.encoders import load_encoder
    from recall_core.models.query_head import RecallQueryHead, model_folder

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default=None, help="model folder (default: the embedded default)")
    p.add_argument("--head", default=None, help="query head folder (default: the one in the model folder)")
    p.add_argument("--encoder", default=None, help="memory encoder (default: all-MiniLM-L6-v2)")
    p.add_argument("--data", default=None, help="LoCoMo JSON (default ../shared/data/locomo_dev.json)")
    p.add_argument("--conversations", type=int, default=None, help="only the first N LoCoMo conversations")
    p.add_argument("--seed", default="eval", help="conversations seed: a name in SEEDS or an integer (default eval)")
    p.add_argument("--users", type=int, default=6)
    p.add_argument("--skip-locomo", action="store_true")
    p.add_argument("--no-progress", dest="progress", action="store_false")
    p.add_argument("--out", type=Path, default=OUT)
    args = p.parse_args(argv)
    args.seed = seed_of(args.seed)
    if model is None:
        model, tokenizer = load_model(args.model)
    encoder = load_encoder(args.encoder)
    head_folder = args.head or model_folder(args.model)
    head = RecallQueryHead.load(head_folder, model=model, encoder=encoder)
    result: dict[str, Any] = {"benchmark": "hidden_query", "model": args.model or "default", "head": str(head_folder),
                              "encoder": encoder.name, "layers": head.meta.layers, "seed": args.seed,
                              "users": args.users, "recipe": head.meta.recipe}  # fmt: skip
    start = time.perf_counter()
    if not args.skip_locomo:
        result["locomo"] = locomo(model, tokenizer, head, encoder, resolve_data(args.data), args)
        result["locomo"]["ratios"] = ratios(result["locomo"])
    result["conversations"] = conversations(model, tokenizer, head, encoder, args)
    result["conversations"]["ratios"] = ratios(result["conversations"])
    result["seconds"] = round(time.perf_counter() - start, 1)
    table = markdown(result)
    write_results(args.out, "hidden_query", result, table, plot)
    print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The held-out benchmark's memory (:mod:`benchmarks.heldout`): what it writes, the store and writer
options a variant may set, and ``--retrieval-only``, which answers nothing and counts, per family,
the questions whose notes (chosen as the loop chooses them) hold the answer, for recall's
defaults, each variant and the LangChain recipe's four documents.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.common.args import parse_variant
from benchmarks.common.methods import PEER_K
from benchmarks.common.peers import exchanges
from benchmarks.common.progress import progress
from recall_core.training.families import base
from recall_core.training.family_data import memory_turns as turns_of

#: Variant settings that belong to the store or the writer, not to RecallConfig.
STORE_OPTIONS = ("unit", "retrieval", "roles")
WRITER_OPTIONS = ("chunk_tokens", "window", "dated", "speakers")


def memory_turns(users: Sequence[base.User]) -> list[dict[str, Any]]:
    """Every user's turns as the writer takes them (a named speaker kept: training's own conversion)."""
    return [turn for user in users for turn in turns_of(user)]


class CountedSearches:
    """A user's memory that counts its searches (the question's, and ``follow_updates``' by names)."""

    def __init__(self, memory: Any) -> None:
        self.memory = memory
        self.calls = 0

    def search(self, query: Any, k: int) -> Any:
        self.calls += 1
        return self.memory.search(query, k)


def memory_questions(data: Mapping[str, Sequence[base.User]], encoder: Any, show: bool = True,
                     label: str = "users") -> Iterator[tuple[str, Any, base.Question]]:  # fmt: skip
    """Every user's memory questions, each with its family and the user's memory: every user's turns
    written by the default writer into a fresh local store, open until the iteration ends."""
    from recall_core.memory import MemoryWriter

    everyone = [u for users in data.values() for u in users]
    family_of = {u.user_id: f for f, users in data.items() for u in users}
    with tempfile.TemporaryDirectory(prefix="recall-heldout-questions-") as folder, open_store(folder, encoder, False) as store:
        MemoryWriter(store).add_turns(memory_turns(everyone))
        for user in progress(everyone, label, show, unit="user"):
            memory = store.for_user(user.user_id)
            for question in user.questions:
                if question.kind == "memory":
                    yield family_of[user.user_id], memory, question


@contextlib.contextmanager
def open_store(folder: str, encoder: Any, server: bool, **options: Any) -> Iterator[Any]:
    """A store in ``folder``: embedded, or (``server``) on a ``chroma run`` server started there and
    stopped after, so that each search and each search by names is a round trip."""
    from recall_core.memory import MemoryStore
    from recall_core.memory.chroma_server import ChromaServer

    if not server:
        with MemoryStore.local(folder, encoder=encoder, **options) as store:
            yield store
        return
    with ChromaServer(Path(folder) / "server") as running:
        journal = Path(folder) / "journal.sqlite3"
        with MemoryStore.server(port=running.port, encoder=encoder, journal_path=journal, **options) as store:
            yield store


def retrieval_only(args: argparse.Namespace, data: Mapping[str, Sequence[base.User]], encoder: Any,
                   encoder_path: str) -> dict[str, Any]:
    """Notes that hold the answer, per family, for recall's defaults, each variant and the LangChain recipe."""
    from recall_core import RecallConfig
    from recall_core.decoding.select import search_memory
    from recall_core.memory import MemoryWriter
    from recall_core.types import RecallQuery

    everyone = [u for users in data.values() for u in users]
    family_of = {u.user_id: f for f, users in data.items() for u in users}
    specs = [("recall", {})] + [parse_variant(v) for v in args.variant]
    out: dict[str, Any] = {}
    # per question: the ids of the notes chosen and whether they hold the answer (None: never said)
    picked: dict[str, dict[str, tuple[tuple[str, ...], bool | None]]] = {}
    for name, changes in specs:
        changes = dict(changes)
        changes.pop("model", None)
        changes.pop("adapter", None)
        store_options = {k: changes.pop(k) for k in STORE_OPTIONS if k in changes}
        writer_options = {k: changes.pop(k) for k in WRITER_OPTIONS if k in changes}
        config = RecallConfig(**changes)
        held: dict[str, list[int]] = {f: [0, 0] for f in data}
        # questions about a changed fact: notes naming an earlier value and not the current one;
        # notes naming an earlier value at all; questions
        stale = [0, 0, 0]
        tokens: list[int] = []
        seconds: list[float] = []  # per question: the search and the choice (search_memory), all kinds
        searches: list[int] = []  # per question: the memory's searches
        with tempfile.TemporaryDirectory(prefix="recall-heldout-notes-") as folder:
            with open_store(folder, encoder, args.server, **store_options) as store:
                MemoryWriter(store, **writer_options).add_turns(memory_turns(everyone))
                for user in progress(everyone, name, not args.no_progress, unit="user"):
                    memory = CountedSearches(store.for_user(user.user_id))
                    for q in user.questions:
                        started = time.perf_counter()
                        chosen, _, _ = search_memory(memory, RecallQuery(text=q.text), config)
                        seconds.append(time.perf_counter() - started)
                        searches.append(memory.calls)
                        memory.calls = 0
                        text = "\n".join(c.text for c in chosen)
                        holds = base.names_any(text, q.answers) if q.kind == "memory" else None
                        picked.setdefault(name, {})[q.key] = (tuple(c.id for c in chosen), holds)
                        if q.kind != "memory":
                            continue
                        tokens.append(len(text.split()))
                        held[family_of[user.user_id]][0] += holds
                        held[family_of[user.user_id]][1] += 1
                        if q.stale:
                            earlier = base.names_any(text, q.stale)
                            stale[0] += earlier and not holds
                            stale[1] += earlier
                            stale[2] += 1
        out[name] = {"held": held, "earlier_values": stale, "words": sum(tokens) / max(1, len(tokens)),
                     "search_ms": 1000 * statistics.median(seconds) if seconds else None,
                     "search_ms_p90": 1000 * statistics.quantiles(seconds, n=10)[-1] if len(seconds) > 1 else None,
                     "searches": statistics.mean(searches) if searches else None,
                     "settings": {**store_options, **writer_options, **changes}}  # fmt: skip
        if name != "recall":
            out[name]["against_default"] = against(picked["recall"], picked[name])
    if "langchain" in args.methods:
        from langchain_chroma import Chroma
        from langchain_huggingface import HuggingFaceEmbeddings

        embeddings = HuggingFaceEmbeddings(model_name=encoder_path)
        held = {f: [0, 0] for f in data}
        for n, user in enumerate(everyone):
            store = Chroma(collection_name=f"lc-notes-{n}", embedding_function=embeddings,
                           collection_metadata={"hnsw:space": "cosine"})  # fmt: skip
            texts = exchanges(user)
            store.add_texts([t for t, _, _ in texts])
            for q in user.questions:
                if q.kind == "memory":
                    docs = store.as_retriever(search_kwargs={"k": PEER_K}).invoke(q.text)
                    text = "\n".join(d.page_content for d in docs)
                    held[family_of[user.user_id]][0] += base.names_any(text, q.answers)
                    held[family_of[user.user_id]][1] += 1
            store.delete_collection()
        out["langchain"] = {"held": held, "words": None, "settings": {"k": PEER_K}}
    return out


def against(default: Mapping[str, tuple[tuple[str, ...], bool | None]],
            variant: Mapping[str, tuple[tuple[str, ...], bool | None]]) -> dict[str, int]:
    """How a variant's notes differ from the default's, question by question: on how many memory
    and never-answered questions it chose other notes, and how many lost or gained the answer."""
    changed = [key for key in default if set(default[key][0]) != set(variant[key][0])]
    memory = [key for key in changed if default[key][1] is not None]
    return {"changed_memory": len(memory), "changed_unanswerable": len(changed) - len(memory),
            "lost": sum(1 for key in memory if default[key][1] and not variant[key][1]),
            "gained": sum(1 for key in memory if variant[key][1] and not default[key][1])}


def notes_markdown(result: Mapping[str, Any]) -> str:
    families = result["families"]
    lines = ["| notes of | " + " | ".join(families) + " | all | words | changed facts: an earlier value only · at all "
             "| search ms: median · p90 | searches per question |", "| --- |" + " --- |" * (len(families) + 5)]  # fmt: skip
    for name, row in result["notes"].items():
        held = row["held"]
        total = [sum(held[f][0] for f in families), sum(held[f][1] for f in families)]
        words = "" if row["words"] is None else f"{row['words']:.0f}"
        ms = "" if row.get("search_ms") is None else f"{row['search_ms']:.1f}"
        if row.get("search_ms_p90") is not None:
            ms += f" · {row['search_ms_p90']:.1f}"
        searches = "" if row.get("searches") is None else f"{row['searches']:.2f}"
        lines.append(f"| {name} | " + " | ".join(f"{held[f][0]}/{held[f][1]}" for f in families)
                     + f" | **{total[0]}/{total[1]}** | {words} | {_stale_cell(row.get('earlier_values'))} | {ms} | {searches} |")
    for name, row in result["notes"].items():
        if "against_default" in row:
            d = row["against_default"]
            lines.append(f"\n{name} against the default: other notes on {d['changed_memory']} memory questions "
                         f"and {d['changed_unanswerable']} never answered; its notes lose the answer the "
                         f"default's held on {d['lost']}, and hold it where the default's did not on {d['gained']}.")
    return "\n".join(lines) + "\n"


def _stale_cell(stale: Sequence[int] | None) -> str:
    return "" if not stale else f"{stale[0]}/{stale[2]} · {stale[1]}/{stale[2]}"

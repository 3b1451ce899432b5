"""Choosing recall's defaults on the *dev* conversations (never the eval seed the figures are reported on).

Each grid row is a store unit (what a found memory's text holds) and ``RecallConfig`` changes
(where the notes go, how they are wrapped, how many). Every row answers the same questions
with the same model through ``ChatRecall``; the table is facts answered, stale answers and
processed tokens. The rows were written before any of them was run, from the placements and
wrappings a RAG user would try, not from answers.

Usage:
    python -m benchmarks.conversations_tune                     # the whole grid, dev seed, 3 users
    python -m benchmarks.conversations_tune --rows rag-system,old-default --users 2
Writes benchmarks/out/conversations/tune.json and tune.md.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.common.args import seed_of
from benchmarks.common.methods import RecallMethod, run_method, summarize
from benchmarks.common.results import write_results
from benchmarks.conversations import OUT
from recall_core.training.conversations import SEEDS, generate

RAG_SYSTEM = (
    "You are an assistant for question-answering tasks. Use the following notes from past conversations with "
    "the user to answer the question. If you don't know the answer, say that you don't know. Keep the answer concise."
)
NOTES = "Notes from past conversations with the user, oldest first:\n{text}\n"
NOTES_NEWEST = "Notes from past conversations with the user, newest first:\n{text}\n"
SAID = "[{date}] {speaker}: {text}"
INSTRUCTED_NEWEST = (
    "Use the following notes from past conversations with the user to answer the question. If you don't know "
    "the answer, say that you don't know. Keep the answer concise.\n\nNotes, newest first:\n{text}\n"
)
LATEST_WINS = " When notes disagree, the most recent one is right."
#: The instruction travels with the notes (the system message around them is the caller's, or plain).
INSTRUCTED = (
    "Use the following notes from past conversations with the user to answer the question. If you don't know "
    "the answer, say that you don't know. Keep the answer concise.\n\nNotes, oldest first:\n{text}\n"
)
#: name -> (store options, RecallConfig changes)
GRID: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "old-default": ({"unit": "turn"}, {"recall_position": "assistant_start", "template": "Memory: {text}\n\n",
                                        "memories": 1, "top_k": 4, "note_template": "{text}"}),
    "rag-system": ({"unit": "exchange"}, {"recall_position": "system", "system_prompt": RAG_SYSTEM, "template": NOTES}),
    "rag-system-turn": ({"unit": "turn"}, {"recall_position": "system", "system_prompt": RAG_SYSTEM, "template": NOTES}),
    "rag-system-window": ({"unit": "window"}, {"recall_position": "system", "system_prompt": RAG_SYSTEM, "template": NOTES}),
    "rag-system-2": ({"unit": "exchange"}, {"recall_position": "system", "system_prompt": RAG_SYSTEM, "template": NOTES,
                                            "memories": 2}),
    "rag-system-undated": ({"unit": "exchange"}, {"recall_position": "system", "system_prompt": RAG_SYSTEM,
                                                  "template": NOTES, "note_template": "{text}"}),
    "plain-system": ({"unit": "exchange"}, {"recall_position": "system", "system_prompt": "You are a helpful assistant.",
                                            "template": NOTES}),
    "user-start": ({"unit": "exchange"}, {"recall_position": "user_start",
                                          "template": "Notes from our past conversations, oldest first:\n{text}\n\nQuestion: "}),
    "user-end": ({"unit": "exchange"}, {"recall_position": "user_end",
                                        "template": "\n\nNotes from our past conversations, oldest first:\n{text}\n"}),
    "assistant-start": ({"unit": "exchange"}, {"recall_position": "assistant_start",
                                               "template": "Notes from our past conversations, oldest first:\n{text}\n\n"}),
    # Second round, around the first round's best (the RAG instruction in the system message).
    "turn-2": ({"unit": "turn"}, {"recall_position": "system", "system_prompt": RAG_SYSTEM, "template": NOTES,
                                  "memories": 2}),
    "turn-3-newest": ({"unit": "turn"}, {"recall_position": "system", "system_prompt": RAG_SYSTEM,
                                         "template": NOTES_NEWEST, "memories": 3, "order": "newest_first"}),
    "turn-4-newest": ({"unit": "turn"}, {"recall_position": "system", "system_prompt": RAG_SYSTEM,
                                         "template": NOTES_NEWEST, "order": "newest_first"}),
    "turn-4-role": ({"unit": "turn"}, {"recall_position": "system", "system_prompt": RAG_SYSTEM, "template": NOTES,
                                       "note_template": "[{date}] {role}: {text}"}),
    "exchange-2-newest": ({"unit": "exchange"}, {"recall_position": "system", "system_prompt": RAG_SYSTEM,
                                                 "template": NOTES_NEWEST, "memories": 2, "order": "newest_first"}),
    "turn-4-instructed-block": ({"unit": "turn"}, {"recall_position": "system", "template": INSTRUCTED}),
    "turn-4-latest-wins": ({"unit": "turn"}, {"recall_position": "system", "system_prompt": RAG_SYSTEM + LATEST_WINS,
                                              "template": NOTES}),
    # Third round: the second round's gains together (fewer notes, newest first, who said each).
    "turn-2-speaker": ({"unit": "turn"}, {"recall_position": "system", "system_prompt": RAG_SYSTEM, "template": NOTES,
                                          "memories": 2, "note_template": SAID}),
    "turn-2-newest-speaker": ({"unit": "turn"}, {"recall_position": "system", "system_prompt": RAG_SYSTEM,
                                                 "template": NOTES_NEWEST, "memories": 2, "order": "newest_first",
                                                 "note_template": SAID}),
    "turn-3-newest-speaker": ({"unit": "turn"}, {"recall_position": "system", "system_prompt": RAG_SYSTEM,
                                                 "template": NOTES_NEWEST, "memories": 3, "order": "newest_first",
                                                 "note_template": SAID}),
    "exchange-2-newest-speaker": ({"unit": "exchange"}, {"recall_position": "system", "system_prompt": RAG_SYSTEM,
                                                         "template": NOTES_NEWEST, "memories": 2,
                                                         "order": "newest_first", "note_template": SAID}),
    "block-2-newest-speaker": ({"unit": "turn"}, {"recall_position": "system", "template": INSTRUCTED_NEWEST,
                                                  "memories": 2, "order": "newest_first", "note_template": SAID}),
    "block-3-newest-speaker": ({"unit": "turn"}, {"recall_position": "system", "template": INSTRUCTED_NEWEST,
                                                  "memories": 3, "order": "newest_first", "note_template": SAID}),
}


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seed", default="dev", help="a name in SEEDS or an integer (never the eval seed)")
    p.add_argument("--users", type=int, default=3)
    p.add_argument("--rows", default=",".join(GRID), help="comma-separated grid rows")
    p.add_argument("--max-new-tokens", type=int, default=40)
    p.add_argument("--out", type=Path, default=OUT)
    p.add_argument("--no-progress", action="store_true")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    from recall_core import RecallConfig, RecallGenerator
    from recall_core.memory.encoders import default_encoder

    args = parse_args(argv)
    seed = seed_of(args.seed)
    if seed == SEEDS["eval"]:
        raise SystemExit("the eval seed is for reporting, not for choosing settings: use --seed dev")
    users = generate(seed, users=args.users)
    questions = [q for u in users for q in u.questions]
    generator = RecallGenerator.from_pretrained(device="cpu")
    encoder = default_encoder()
    summaries = {}
    for name in [r.strip() for r in args.rows.split(",") if r.strip()]:
        store_options, changes = GRID[name]
        method = RecallMethod(name, generator, {"max_tokens": args.max_new_tokens}, encoder,
                              config=RecallConfig(**changes), store_options=store_options)
        try:
            rows = run_method(method, users, questions, not args.no_progress)
        finally:
            method.close()
        summaries[name] = summarize(rows)
        s = summaries[name]
        print(f"{name:22s} facts {s['facts_answered']:3d}/{s['questions']}  stale {s['stale']}/{s['updated_questions']}"
              f"  tokens {s['processed_tokens']:.0f}  hit@4 {s['hit@4']:.2f}", flush=True)
    lines = ["| row | facts answered | stale | processed tokens | hit@4 |", "| --- | --- | --- | --- | --- |"]
    lines += [f"| {n} | {s['facts_answered']} / {s['questions']} | {s['stale']} / {s['updated_questions']} | "
              f"{s['processed_tokens']:.0f} | {s['hit@4']:.2f} |" for n, s in summaries.items()]
    write_results(args.out, "tune", {"seed": seed, "users": args.users, "summary": summaries}, "\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())

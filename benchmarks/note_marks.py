"""Does the recall-tuned model read a mark on an older note? A run's notes read again, the older ones marked.

Issue 19 (item 4) suggests keeping an updated fact's older memory with "an '(earlier)' mark in the
note". Before any rule decides which note to mark (``benchmarks/supersede_rules.py`` measures
those), this asks whether the shipped model heeds a mark at all. It takes a held-out run's calls
(``python -m benchmarks.heldout``, its ``heldout.json``) whose notes were two or more, and answers
each again, greedily, with the run's notes as they were and with every note but the newest marked
(the notes are newest first, so every later one is older). The marks:

- ``outdated``: in the date label, ``[19 March 2024, outdated] User: ...``;
- ``earlier``: after the speaker, ``[19 March 2024] User (earlier, may have changed since): ...``.

Marking every older note is the most a rule could mark; a mark the model does not read on these
changes no reply. ``--changed-only`` keeps the questions about a fact that changed.

Usage (the families and users of the run):
    python -m benchmarks.note_marks --run OUT/heldout.json --families handwritten,handwritten-changes,handwritten-revisions \\
        --users 8 --changed-only
Writes benchmarks/out/note_marks/note_marks.json and .md.
"""

from __future__ import annotations

import argparse
import os
import re
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from benchmarks import heldout  # noqa: E402
from benchmarks.common.args import OUT as OUT_ROOT  # noqa: E402
from benchmarks.common.progress import progress  # noqa: E402
from benchmarks.common.results import machine, write_results  # noqa: E402
from benchmarks.notes_apart import NOTE_START, reading, run_calls  # noqa: E402

OUT = OUT_ROOT / "note_marks"
#: A note's label: ``[date] speaker:``.
_LABEL = re.compile(r"^\[([^\]]+)\] ([^:\n]+):")

MARKS: dict[str, Callable[[str], str]] = {
    "outdated": lambda note: _LABEL.sub(lambda m: f"[{m.group(1)}, outdated] {m.group(2)}:", note, count=1),
    "earlier": lambda note: _LABEL.sub(lambda m: f"[{m.group(1)}] {m.group(2)} (earlier, may have changed since):", note, count=1),
}


def marked(notes: Sequence[str], mark: Callable[[str], str]) -> list[str]:
    """``notes`` (newest first) with every note but the first marked by ``mark``."""
    return [*notes[:1], *(mark(n) for n in notes[1:])]


def tally(records: Sequence[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Per reading (``as_run`` and each mark): questions, right, stale, "I don't know."."""
    out: dict[str, Counter] = {}
    for record in records:
        for name, r in record["readings"].items():
            t = out.setdefault(name, Counter())
            t["questions"] += 1
            t["correct"] += r["correct"]
            t["stale"] += r["stale"]
            t["abstained"] += r["abstained"]
    return {name: dict(t) for name, t in out.items()}


def markdown(result: dict[str, Any]) -> str:
    lines = ["| notes | questions | right | stale | \"I don't know.\" | replies changed |", "| --- | --- | --- | --- | --- | --- |"]
    for name, t in result["tally"].items():
        changed = sum(r["readings"][name]["text"] != r["readings"]["as_run"]["text"] for r in result["records"])
        lines.append(f"| {name} | {t['questions']} | {t['correct']} | {t['stale']} | {t['abstained']} | {changed} |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--run", type=Path, required=True, help="a held-out run's heldout.json")
    p.add_argument("--method", default="recall", help="the run's method whose notes are read")
    p.add_argument("--families", type=heldout.family_names, required=True)
    p.add_argument("--users", type=int, required=True, help="the run's users per family")
    p.add_argument("--seed", type=int, default=heldout.EVAL_SEED)
    p.add_argument("--system-messages", choices=tuple(heldout.SYSTEM_MESSAGES), default="personas")
    p.add_argument("--changed-only", action="store_true", help="only questions about a fact that changed")
    p.add_argument("--max-new-tokens", type=int, default=48)
    p.add_argument("--out", type=Path, default=OUT)
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)
    from recall_core import RecallGenerator

    generator = RecallGenerator.from_pretrained(device="cpu", tuned=True)
    pairs = run_calls(args.run, args.method, args.families, args.users, args.seed, args.system_messages)
    records = []
    for call, row in progress(pairs, "marked notes", not args.no_progress, unit="question"):
        if row["kind"] != "memory" or (args.changed_only and not call.question.stale):
            continue
        notes = NOTE_START.split(row["notes"])
        if len(notes) < 2:
            continue
        readings = {"as_run": reading(generator, call, notes, args.max_new_tokens)}
        for name, mark in MARKS.items():
            readings[name] = reading(generator, call, marked(notes, mark), args.max_new_tokens)
        records.append({"family": call.family, "key": call.question.key, "run_reply": row["reply"], "readings": readings})
    result = {"benchmark": "note_marks", "run": str(args.run), "method": args.method, "families": args.families,
              "users": args.users, "seed": args.seed, "changed_only": args.changed_only, "machine": machine(),
              "tally": tally(records), "same_as_run": sum(r["readings"]["as_run"]["text"] == r["run_reply"] for r in records),
              "records": records}  # fmt: skip
    text = markdown(result)
    print(text)
    print(f"replies with the notes as run equal to the run's: {result['same_as_run']} of {len(records)}")
    write_results(args.out, "note_marks", result, text)
    return result


if __name__ == "__main__":
    main()

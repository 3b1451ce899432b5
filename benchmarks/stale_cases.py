"""Where each stale answer of a ``benchmarks.heldout`` run came from: the search, or the reading.

A stale answer names an earlier value of a changed fact and not the current one. The count alone
("16 / 99") does not say what to fix. For each stale reply this study looks at the notes the method
read (recall's injected notes, the recipe's retrieved documents, in the order given) and puts it
in one of five cases:

* ``current not in the notes``: no note names the current value. The search (or the writer)
  lost it: no reading could have answered.
* ``both in one note``: the note that names the current value names the earlier one too (the
  turn that says the change: "it moved to the 19th, because of the wedding on the 12th").
* ``earlier value in a later note``: the current value's note comes first, and the reply took the
  value of a note after it (for recall's notes, newest first: an older note).
* ``earlier value in an earlier note``: a note before the current value's names the earlier value.
* ``earlier value in no note``: the reply's earlier value is not in the notes (the session's
  earlier turns, the system message, or the model's guess).

The earlier values come from the families' questions, generated again for the run's seed and
users. Notes are split where the engine's dated notes start (``[3 June 2024] ...``) for recall
methods, into the documents it retrieved for LangChain's (each an exchange of the user's, as the
recipe wrote it: a reply's own blank lines stay in it), and between the retrieved message batches
(``</message>`` then a blank line) for LlamaIndex's; a row whose split is unsure (a recall row
with not as many notes as scores, a LangChain row whose text is not the user's exchanges) is
counted as ``unsplit``.

Usage:
    python -m benchmarks.stale_cases RUN/heldout.json [RUN2/heldout.json ...]
Writes benchmarks/out/stale_cases/stale_cases.json and .md.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.common.args import OUT
from benchmarks.common.peers import exchanges
from benchmarks.common.results import report, write_results
from benchmarks.heldout import asked_families
from recall_core.training.families import base

CASES = (
    "current not in the notes",
    "both in one note",
    "earlier value in a later note",
    "earlier value in an earlier note",
    "earlier value in no note",
)
LLAMAINDEX_BATCH = re.compile(r"(?<=</message>)\n\n(?=<message role=)")  # between its retrieved batches
DATED_NOTE = re.compile(r"\n(?=\[[^\]\n]{4,40}\] )")  # a line that opens with the note template's date


def split_notes(row: Mapping[str, Any], documents: Collection[str] = ()) -> list[str] | None:
    """The notes one row's method read, in order; ``None`` when the split is unsure.

    ``documents`` are the texts LangChain's recipe could have retrieved for the row's user (its
    exchanges, :func:`benchmarks.common.peers.exchanges`), which its notes join a blank line apart.
    """
    text = row.get("notes") or ""
    if not text:
        return []
    if row["method"].startswith("llamaindex"):  # a message's own blank lines stay inside it
        return LLAMAINDEX_BATCH.split(text)
    if row["method"].startswith("langchain"):
        return _documents(text, documents)
    notes = DATED_NOTE.split(text)
    scores = row.get("note_scores")
    return notes if scores is None or len(scores) == len(notes) else None


def _documents(text: str, documents: Collection[str]) -> list[str] | None:
    """``text`` cut back into the ``documents`` it joins with blank lines (the longest that fits at
    each place), or ``None`` when it is not made of them."""
    notes, at = [], 0
    while at < len(text):
        fits = (d for d in documents if text.startswith(d, at) and text.startswith("\n\n", at + len(d)) or text[at:] == d)
        document = max(fits, key=len, default=None)
        if document is None:
            return None
        notes.append(document)
        at += len(document) + len("\n\n")
    return notes


def first_naming(notes: Sequence[str], values: Sequence[str]) -> int | None:
    """The place of the first note that names one of ``values``, or ``None``."""
    return next((i for i, note in enumerate(notes) if base.names_any(note, values)), None)


def case_of(notes: Sequence[str], current: Sequence[str], earlier: Sequence[str], reply: str) -> str:
    """Which of :data:`CASES` a stale ``reply`` is, given the notes read and the fact's values."""
    named = [v for v in earlier if base.names(reply, v)] or list(earlier)
    at_current, at_earlier = first_naming(notes, current), first_naming(notes, named)
    if at_current is None:
        return CASES[0]
    if at_earlier is None:
        return CASES[4]
    if base.names_any(notes[at_current], named):
        return CASES[1]
    return CASES[2] if at_earlier > at_current else CASES[3]


def asked_questions(run: Mapping[str, Any]) -> dict[tuple[str, str], tuple[tuple[str, ...], frozenset[str]]]:
    """``(family, key)`` -> the earlier values of that question's fact and its user's exchanges (what
    LangChain's recipe retrieves from), from the families generated again."""
    out = {}
    for f, users in asked_families(run["families"], run["seed"], run["users"]).items():
        for user in users:
            documents = frozenset(text for text, _, _ in exchanges(user))  # one set for all of a user's questions
            out.update({(f, q.key): (tuple(q.stale), documents) for q in user.questions})
    return out


def study(run: Mapping[str, Any]) -> dict[str, Any]:
    """Per method of ``run``: its stale replies by case, each with its question, reply and case."""
    asked = asked_questions(run)
    out: dict[str, Any] = {}
    for method in dict.fromkeys(r["method"] for r in run["rows"]):
        rows = [r for r in run["rows"] if r["method"] == method and r["kind"] == "memory" and r.get("stale_possible")]
        cases, listed = Counter(), []
        for row in rows:
            if not row["stale"]:
                continue
            earlier, documents = asked[(row["family"], row["key"])]
            notes = split_notes(row, documents)
            case = "unsplit" if notes is None else case_of(notes, row["answers"], earlier, row["reply"])
            cases[case] += 1
            listed.append({"family": row["family"], "key": row["key"], "question": row["question"],
                           "reply": row["reply"], "case": case})  # fmt: skip
        out[method] = {"changed_facts": len(rows), "current": sum(r["correct"] for r in rows),
                       "stale": len(listed), "cases": dict(cases), "rows": listed}  # fmt: skip
    return out


def markdown(result: Mapping[str, Any]) -> str:
    columns = [*CASES, "unsplit"]
    lines = ["| run · method | changed facts asked | current value | stale | " + " | ".join(columns) + " |",
             "| --- | --- | --- | --- | " + " | ".join("---" for _ in columns) + " |"]  # fmt: skip
    for run, methods in result["runs"].items():
        for method, m in methods.items():
            cells = " | ".join(str(m["cases"].get(c, 0)) for c in columns)
            lines.append(f"| {run} · {method} | {m['changed_facts']} | {m['current']} | **{m['stale']}** | {cells} |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("runs", nargs="+", type=Path, help="heldout.json files of benchmarks.heldout")
    p.add_argument("--out", type=Path, default=OUT / "stale_cases")
    args = p.parse_args(argv)
    runs = {}
    for path in args.runs:
        run = json.loads(path.read_text(encoding="utf-8"))
        if run.get("benchmark") != "heldout":
            p.error(f"{path} is not a benchmarks.heldout run")
        runs[f"{path.parent.name}/{path.name}"] = study(run)
    result = {"benchmark": "stale_cases", "schema_version": 1, "runs": runs}
    table = markdown(result)
    write_results(args.out, "stale_cases", result, table)
    return report(table, args.out)


if __name__ == "__main__":
    raise SystemExit(main())

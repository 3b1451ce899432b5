"""Does the model acknowledge what a user tells it about themselves, or answer a question nobody asked?

A chatbot's user mostly *tells* it things ("I adopted a cat yesterday."). A recall-tuned model
that learned "I don't know." for questions no note answers can say it to news as well, or write
``<recall>`` and stop. This benchmark counts, for each model:

* **acknowledged**: the reply has at least two words and does not say it does not know (what the
  base model does);
* **"I don't know."**: the reply says it does not know (:data:`benchmarks.new_user.DONT_KNOW`, the
  new-user benchmark's test);
* **recalled**: the model itself wrote ``<recall>`` (a statement needs no memory);
* **ran on**: the reply went on into a new turn of the chat template (a line that is only
  ``user``, ``assistant`` or ``system``: the end of its turn was written and its text skipped);
* **apology**: the reply opens with an apology, a disclaimer or a hedge
  (:data:`recall_core.decoding.abstain.REFUSALS`: "I'm sorry", "Unfortunately", "As an AI"...).
  It is counted beside *acknowledged*, not taken out of it: "I'm sorry to hear that." can be the
  right reply to bad news, but "I'm sorry for your loss." to a wedding, or "I'm sorry for any
  misunderstanding, but as a text-based AI, I ..." to a plan, is not, and on users' own turns the
  recall-tuned default opened over half its acknowledged replies so (2026-12-04; read the replies).

Two sets of statements, neither trained on:

* ``heldout``: :func:`recall_core.training.prompts.statement_prompts` ``("heldout")``: templates and
  values kept out of the training split;
* ``handwritten``: the first user turn of every session of the hand-written families
  (:mod:`benchmarks.handwritten`) that does not end in "?": users' own openings, in their voices.

Each is said under three memories: none; a new user's empty memory; and (``handwritten`` only)
the user's own earlier sessions, written as the writer writes them (a returning user, so the
``"auto"`` default puts their notes before the statement; sessions after the first only).

Usage:
    python -m benchmarks.statements [--models tuned,plain] [--adapter DIR] [--tokens 16] [--families A,B]
        [--turn 0-6[,...]] [--memories none,new user,earlier sessions] [--variant NAME:field=value,...]
Writes benchmarks/out/statements/statements.json, .md and .png.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.common.args import OUT as OUT_ROOT  # noqa: E402
from benchmarks.common.args import names_in, parse_variant  # noqa: E402
from benchmarks.common.plotting import grouped_bars, pyplot, save  # noqa: E402
from benchmarks.common.progress import progress  # noqa: E402
from benchmarks.common.results import machine, report, write_results  # noqa: E402
from benchmarks.new_user import DONT_KNOW  # noqa: E402
from recall_core.decoding.abstain import REFUSALS  # noqa: E402

OUT = OUT_ROOT / "statements"
HANDWRITTEN = ("handwritten", "handwritten-changes")  # benchmarks.handwritten.FAMILIES
MEMORIES = ("none", "new user", "earlier sessions")
#: A line of its own that names a chat role: the reply wrote its turn's end and went on.
RAN_ON = re.compile(r"^(?:user|assistant|system)$", re.MULTILINE)
#: A reply that opens with an apology, a disclaimer or a hedge (whole words: not "Sorrowful").
APOLOGY = re.compile(r"^\s*(?:" + "|".join(re.escape(r) for r in REFUSALS) + r")(?![\w])")
#: The marks :func:`judged` gives a reply that :func:`summarize` counts.
MARKS = ("acknowledged", "unknown", "recalled", "ran_on", "apology")


def handwritten_openings(families: Sequence[str] = HANDWRITTEN, turn_index: int = 0) -> list[tuple[str, int, str]]:
    """``(user, session index, text)`` for each session's first user turn that is not a question,
    in the hand-written ``families`` (``turn_index`` 1: the second user turn instead, said after the
    session's first exchange, which the call does not see; 2 the third, and so on)."""
    from benchmarks.handwritten import FAMILIES

    out = []
    for name in families:
        for user in FAMILIES[name].raw_users():
            for index, session in enumerate(user["sessions"]):
                said = [t for t in session["turns"] if t["role"] == "user"]
                turn = said[turn_index] if len(said) > turn_index else None
                if turn and not turn["content"].rstrip().endswith("?"):
                    out.append((f"{name}:{user['user_id']}", index, turn["content"]))
    return out


def turn_indices(text: str) -> list[int]:
    """``--turn``: comma-separated user-turn indices, each 0 to 6; others refused with the range."""
    try:
        turns = [int(t) for t in text.split(",") if t.strip()]
    except ValueError:
        turns = []
    if not turns or any(not 0 <= t <= 6 for t in turns):
        raise argparse.ArgumentTypeError(f"--turn must be user-turn indices from 0 to 6, comma-separated, got {text!r}")
    return list(dict.fromkeys(turns))


def memory_names(text: str) -> list[str]:
    """``--memories``: comma-separated names of :data:`MEMORIES`; others refused by name."""
    return names_in(text, MEMORIES, "--memories", "memories")


def handwritten_names(text: str) -> list[str]:
    """``--families``: comma-separated hand-written families (:mod:`benchmarks.handwritten`); others refused by name."""
    from benchmarks.handwritten import FAMILIES

    return names_in(text, FAMILIES, "--families", "hand-written families")


def session_turns(user_key: str, upto: int) -> list[dict[str, Any]]:
    """The memory turns of ``user_key`` 's sessions before ``upto`` (what a returning user has said)."""
    from benchmarks.handwritten import FAMILIES

    name, _, user_id = user_key.partition(":")
    user = next(u for u in FAMILIES[name].raw_users() if u["user_id"] == user_id)
    turns = []
    for index, session in enumerate(user["sessions"][:upto]):
        for i, turn in enumerate(session["turns"]):
            turns.append({"user_id": user_key, "session_id": f"s{index}", "role": turn["role"],
                          "content": turn["content"], "turn_index": i, "timestamp": f"{session['date']}T10:00:00"})  # fmt: skip
    return turns


def judged(text: str, recalled: bool) -> dict[str, Any]:
    """One reply's marks (see the module docstring)."""
    unknown = bool(DONT_KNOW.search(text))
    words = [w for w in text.split() if any(c.isalnum() for c in w)]
    return {"reply": text, "acknowledged": len(words) >= 2 and not unknown, "unknown": unknown, "recalled": recalled,
            "ran_on": bool(RAN_ON.search(text)), "apology": bool(APOLOGY.match(text.replace("\u2019", "'")))}


def cases(statements: Sequence[str], openings: Sequence[tuple[str, int, str]],
          memories: Sequence[str] = MEMORIES) -> Iterator[tuple[str, str, str, str, int]]:  # fmt: skip
    """``(set, memory, text, user, session)`` for every statement under every memory of ``memories`` it is said with."""
    for memory in (m for m in MEMORIES[:2] if m in memories):
        for text in statements:
            yield "heldout", memory, text, "", 0
    for memory in (m for m in MEMORIES if m in memories):
        for user, index, text in openings:
            if memory != "earlier sessions" or index > 0:  # a first session has nothing earlier
                yield "handwritten", memory, text, user, index


def run_model(label: str, model: Any, tokenizer: Any, todo: Sequence[tuple[str, str, str, str, int]], tokens: int,
              show: bool, changes: dict[str, Any] | None = None) -> list[dict[str, Any]]:  # fmt: skip
    """Every case's reply from one model, under the engine's defaults with ``changes`` (a ``--variant``'s)."""
    from recall_core import RecallConfig, RecallGenerator
    from recall_core.memory import MemoryStore

    rows = []
    with tempfile.TemporaryDirectory() as folder, MemoryStore.local(folder) as store:
        written: set[tuple[str, int]] = set()
        generator = RecallGenerator(model, tokenizer, config=RecallConfig(**(changes or {})))
        for kind, memory, text, user, index in progress(todo, f"{label} statements", show):
            if memory == "none":
                target = None
            elif memory == "new user":
                target = store.for_user("newcomer")
            else:
                if (user, index) not in written:  # a fresh user id per (user, session): only earlier sessions
                    store.writer.add_turns([dict(t, user_id=f"{user}#{index}") for t in session_turns(user, index)])
                    written.add((user, index))
                target = store.for_user(f"{user}#{index}")
            result = generator.generate([{"role": "user", "content": text}], memory=target, max_new_tokens=tokens)
            recalled = any(r.trigger == "model" for r in result.recalls)
            rows.append({"model": label, "set": kind, "memory": memory, "statement": text, **judged(result.text, recalled)})
    return rows


def summarize(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Counts per model, set and memory."""
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault((row["model"], row["set"], row["memory"]), []).append(row)
    return [{"model": m, "set": s, "memory": mem, "statements": len(g),
             **{k: sum(r[k] for r in g) for k in MARKS}}
            for (m, s, mem), g in groups.items()]  # fmt: skip


def markdown(summary: Sequence[dict[str, Any]]) -> str:
    lines = ["| model | statements | memory | acknowledged | \"I don't know.\" | wrote `<recall>` | ran on "
             "| opens with an apology |", "| --- | --- | --- | --- | --- | --- | --- | --- |"]  # fmt: skip
    for s in summary:
        n = s["statements"]
        lines.append(f"| {s['model']} | {s['set']} | {s['memory']} | {s['acknowledged']}/{n} | {s['unknown']}/{n} "
                     f"| {s['recalled']}/{n} | {s['ran_on']}/{n} | {s['apology']}/{n} |")  # fmt: skip
    return "\n".join(lines) + "\n"


def plot(result: dict[str, Any], path: Path) -> None:
    plt = pyplot()
    summary = result["summary"]
    models = list(dict.fromkeys(s["model"] for s in summary))
    slices = list(dict.fromkeys((s["set"], s["memory"]) for s in summary))
    fig, ax = plt.subplots(figsize=(9, 4))
    counts = {(s["model"], s["set"], s["memory"]): s for s in summary}
    shares = {model: [row["acknowledged"] / row["statements"] if row else 0.0
                      for row in (counts.get((model, kind, memory)) for kind, memory in slices)]
              for model in models}  # fmt: skip
    grouped_bars(ax, [f"{k}\n{mem}" for k, mem in slices], shares, fontsize=8)
    ax.set_ylabel("share acknowledged")
    ax.set_ylim(0, 1.05)
    ax.set_title("A user's statement about themselves: acknowledged, not 'I don't know.'")
    ax.legend()
    save(fig, path)


def main(argv: Sequence[str] | None = None, models: Sequence[tuple[str, Any, Any]] | None = None) -> int:
    """Run the benchmark; ``models`` (``(label, model, tokenizer)``, for tests) replaces ``--models``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="tuned,plain", help="comma-separated: tuned (shipped), plain (release)")
    parser.add_argument("--adapter", default=None, help="also a candidate adapter folder (recall train --out)")
    parser.add_argument("--tokens", type=int, default=16, help="reply length limit")
    parser.add_argument("--limit", type=int, default=None, help="at most this many statements of each set")
    parser.add_argument("--families", type=handwritten_names, default=list(HANDWRITTEN),
                        help="the hand-written families whose session openings are said (default: %(default)s)")
    parser.add_argument("--turn", type=turn_indices, default=[0], metavar="0-6[,0-6...]",
                        help="which user turns of each session are said: 0 its opening, 1 the second, ... "
                             "(comma-separated; sessions without that many user turns are left out)")
    parser.add_argument("--memories", type=memory_names, default=list(MEMORIES),
                        help="comma-separated, which memories each statement is said under (default: all three)")
    parser.add_argument("--variant", type=parse_variant, action="append", default=[],
                        help="also each model under RecallConfig changes, NAME:field=value,... (repeatable)")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    if args.tokens < 1:
        raise ValueError(f"--tokens must be >= 1, got {args.tokens}")
    from recall_core import load_model
    from recall_core.training.prompts import statement_prompts

    statements = statement_prompts("heldout")[: args.limit]
    openings = [o for turn in args.turn for o in handwritten_openings(args.families, turn)][: args.limit]
    todo = list(cases(statements, openings, args.memories))
    loads = {"tuned": {"tuned": True}, "plain": {"tuned": False}}
    names = list(filter(None, args.models.split(","))) if models is None else []
    if set(names) - set(loads):
        raise ValueError(f"--models takes tuned and plain, got {sorted(set(names) - set(loads))}")
    chosen = [(name, loads[name]) for name in names]
    if args.adapter:
        chosen.append((f"candidate ({Path(args.adapter).name})", {"tuned": False, "adapter": args.adapter}))
    rows = []
    configs = [("", {}), *((name.removeprefix("recall:"), changes) for name, changes in args.variant)]
    for label, model, tokenizer in models or ((label, *load_model(**options)) for label, options in chosen):
        for name, changes in configs:
            rows += run_model(f"{label} · {name}" if name else label, model, tokenizer, todo, args.tokens,
                              not args.no_progress, changes)  # fmt: skip
    summary = summarize(rows)
    result = {"summary": summary, "rows": rows, "tokens": args.tokens, "machine": machine(),
              "command": "python -m benchmarks.statements " + " ".join(argv if argv is not None else sys.argv[1:])}  # fmt: skip
    table = markdown(summary)
    write_results(args.out, "statements", result, table, plot)
    return report(table, args.out)


if __name__ == "__main__":
    raise SystemExit(main())

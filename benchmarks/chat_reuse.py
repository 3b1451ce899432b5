"""A returning user's sessions played as the adapters play them: how much of each turn a session reuses.

Each hand-written session after a user's first (:mod:`benchmarks.handwritten`) is played through
one :class:`recall_core.RecallSession` whose memory holds the user's earlier sessions (written as
:func:`benchmarks.statements.session_turns` writes them). Every call sends the whole conversation,
as the LangChain and LlamaIndex adapters do; the replies are the model's own. Per turn it records
whether the user's message asks (:func:`recall_core.memory.text.questions.asks`), the tokens
reused from the cache and prefilled, whether the cache started afresh, and whether notes were
injected. The defaults run, and beside them each ``--variant`` (``RecallConfig`` changes).

What it is for: a turn that runs under another recall policy than the one before it (a user's
news under ``ask_on_statements``) must not make the next turn prefill the conversation again.

Usage:
    python -m benchmarks.chat_reuse [--families A,B] [--sessions 2] [--turns N] [--tokens 16] [--variant NAME:field=value,...]
Writes benchmarks/out/chat_reuse/chat_reuse.json, .md and .png.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.common.args import OUT as OUT_ROOT  # noqa: E402
from benchmarks.common.args import parse_variant  # noqa: E402
from benchmarks.common.plotting import grouped_bars, pyplot, save  # noqa: E402
from benchmarks.common.progress import progress  # noqa: E402
from benchmarks.common.results import machine, report, write_results  # noqa: E402
from benchmarks.statements import HANDWRITTEN, handwritten_names, session_turns  # noqa: E402

OUT = OUT_ROOT / "chat_reuse"


def returning_sessions(families: Sequence[str], per_family: int, turns: int | None = None) -> list[tuple[str, int, list[str]]]:
    """``(user key, session index, the user's messages)`` for the first ``per_family`` sessions after a
    user's first in each family (users taken in turn, so that several users are played), each
    session's first ``turns`` user messages (``None``: all)."""
    from benchmarks.handwritten import FAMILIES

    out = []
    for name in families:
        later = [(user, index, session) for user in FAMILIES[name].raw_users()
                 for index, session in enumerate(user["sessions"]) if index > 0]  # fmt: skip
        later.sort(key=lambda item: item[1])  # each user's second session first, then third...
        for user, index, session in later[:per_family]:
            said = [t["content"] for t in session["turns"] if t["role"] == "user"]
            out.append((f"{name}:{user['user_id']}", index, said[:turns]))
    return out


def play(label: str, generator: Any, store: Any, todo: Sequence[tuple[str, int, list[str]]], tokens: int,
         show: bool) -> list[dict[str, Any]]:  # fmt: skip
    """Every session of ``todo`` played through a fresh session on ``generator``; one row per turn."""
    from recall_core import RecallSession
    from recall_core.memory.text.questions import asks

    rows = []
    for user, index, said in progress(todo, f"{label} sessions", show):
        session = RecallSession(generator, memory=store.for_user(f"{user}#{index}"))
        chat: list[dict[str, str]] = []
        for turn, text in enumerate(said):
            chat.append({"role": "user", "content": text})
            result = session.reply(list(chat), max_new_tokens=tokens, do_sample=False)
            chat.append({"role": "assistant", "content": result.text})
            report_ = result.session
            rows.append({"config": label, "user": user, "session": index, "turn": turn, "asks": asks(text),
                         "reused": report_.reused_tokens, "prefilled": report_.prefilled_tokens,
                         "restarted": turn > 0 and (report_.fresh_prefill or report_.reused_tokens == 0),
                         "differed": turn > 0 and report_.reason is not None,
                         "injected": any(r.memory_id is not None for r in result.recalls),
                         "reason": report_.reason, "reply": result.text})  # fmt: skip
    return rows


def summarize(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per config: turns, news among them, restarts after a session's first turn, tokens reused and prefilled."""
    out = []
    for label in dict.fromkeys(r["config"] for r in rows):
        mine = [r for r in rows if r["config"] == label]
        later = [r for r in mine if r["turn"] > 0]
        reused, prefilled = sum(r["reused"] for r in later), sum(r["prefilled"] for r in later)
        out.append({"config": label, "turns": len(mine), "news": sum(not r["asks"] for r in mine),
                    "later_turns": len(later), "restarted": sum(r["restarted"] for r in later),
                    "differed": sum(r["differed"] for r in later),
                    "reused": reused, "prefilled": prefilled, "injected": sum(r["injected"] for r in mine),
                    "reused_share": reused / (reused + prefilled) if reused + prefilled else 0.0})  # fmt: skip
    return out


def markdown(summary: Sequence[dict[str, Any]]) -> str:
    lines = ["| config | turns (news) | turns after a session's first | cache differed · restarted afresh | tokens reused "
             "| tokens prefilled | reused share | turns with notes |", "| --- | --- | --- | --- | --- | --- | --- | --- |"]  # fmt: skip
    for s in summary:
        lines.append(f"| {s['config']} | {s['turns']} ({s['news']}) | {s['later_turns']} | {s['differed']} · {s['restarted']} | "
                     f"{s['reused']:,} | {s['prefilled']:,} | {s['reused_share']:.2f} | {s['injected']} |")  # fmt: skip
    return "\n".join(lines) + "\n"


def plot(result: dict[str, Any], path: Path) -> None:
    """Tokens prefilled at each turn of a session, on average, per config."""
    plt = pyplot()
    rows = result["rows"]
    labels = list(dict.fromkeys(r["config"] for r in rows))
    turns = sorted({r["turn"] for r in rows})
    fig, ax = plt.subplots(figsize=(8, 4))
    prefilled: dict[tuple[str, int], list[int]] = {}
    for row in rows:
        prefilled.setdefault((row["config"], row["turn"]), []).append(row["prefilled"])
    means = {label: [sum(at) / len(at) if at else 0.0 for at in (prefilled.get((label, t), []) for t in turns)]
             for label in labels}  # fmt: skip
    grouped_bars(ax, [str(t + 1) for t in turns], means)
    ax.set_xlabel("user turn of the session")
    ax.set_ylabel("tokens prefilled (mean)")
    ax.set_title("A returning user's sessions, the whole conversation sent each call")
    ax.legend()
    save(fig, path)


def main(argv: Sequence[str] | None = None, generator: Any = None, encoder: Any = None) -> int:
    """Run the benchmark; ``generator`` and ``encoder`` (for tests) replace the shipped default's."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--families", type=handwritten_names, default=list(HANDWRITTEN),
                        help="the hand-written families whose sessions are played (default: %(default)s)")
    parser.add_argument("--sessions", type=int, default=2, help="sessions played per family")
    parser.add_argument("--turns", type=int, default=None, help="at most this many user turns of each session")
    parser.add_argument("--tokens", type=int, default=16, help="reply length limit")
    parser.add_argument("--variant", type=parse_variant, action="append", default=[],
                        help="also under RecallConfig changes, NAME:field=value,... (repeatable)")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    for name in ("sessions", "turns", "tokens"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            raise ValueError(f"--{name} must be >= 1, got {getattr(args, name)}")
    from recall_core import RecallConfig, RecallGenerator
    from recall_core.memory import MemoryStore

    todo = returning_sessions(args.families, args.sessions, args.turns)
    base = generator or RecallGenerator.from_pretrained()
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as folder, MemoryStore.local(folder, encoder=encoder) as store:
        for user, index, _ in todo:  # a fresh user id per (user, session): only earlier sessions
            store.writer.add_turns([dict(t, user_id=f"{user}#{index}") for t in session_turns(user, index)])
        for name, changes in [("default", {}), *((n.removeprefix("recall:"), c) for n, c in args.variant)]:
            generator_ = RecallGenerator(base.model, base.tokenizer, config=RecallConfig(**changes),
                                         query_head=base.query_head)  # fmt: skip
            rows += play(name, generator_, store, todo, args.tokens, not args.no_progress)
    summary = summarize(rows)
    result = {"summary": summary, "rows": rows, "tokens": args.tokens, "machine": machine(),
              "command": "python -m benchmarks.chat_reuse " + " ".join(argv if argv is not None else sys.argv[1:])}  # fmt: skip
    table = markdown(summary)
    write_results(args.out, "chat_reuse", result, table, plot)
    return report(table, args.out)


if __name__ == "__main__":
    raise SystemExit(main())

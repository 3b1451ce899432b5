"""Evicted facts are not lost: the conversations benchmark run as one long session per user.

The users and questions of ``benchmarks/conversations.py`` (facts stated over four
dated sessions, small talk, near-miss distractors, updated facts). Here each user's whole
history goes through ONE :class:`recall_core.RecallSession` whose cache is smaller than the
conversation (``--cache``): old exchanges are evicted and written to the user's (initially
empty) memory as they leave, with their dates. Each question is then asked at the end of that
session, in the same session (the question and its answer are cut from the cache before the
next question: the next call's conversation does not have them). Compared, on the same
questions, with the whole history in the prompt (``history``, as conversations.py runs it) and
with ``recall`` as conversations.py runs it (every turn written beforehand, a fresh session).

The goal: facts stated in evicted turns are answered at least as often as with the
full history in the prompt. The table reports every question and, apart, the questions whose
evidence turn had been evicted when they were asked.

    flock /tmp/recall-heavy.lock python -m benchmarks.session_conversations --cache 1024 --threads 1

Writes ``session_conversations.json`` and ``.md`` to ``--out``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.common.args import OUT as OUT_ROOT
from benchmarks.common.args import seed_of
from benchmarks.common.methods import Answer, Method, PlainMethod, RecallMethod, run_method, summarize
from benchmarks.common.results import report, write_results
from recall_core.training.conversations import Question, User, generate

OUT = OUT_ROOT / "session_conversations"
SYSTEM = "You are a helpful assistant who remembers what the user tells you."


class SessionMethod(Method):
    """One bounded ``RecallSession`` per user: the history streamed through it, evicted turns written
    to the user's memory, the questions asked at its end."""

    name = "session"

    def __init__(self, generator: Any, options: dict[str, Any], encoder: Any, cache: int) -> None:
        self.generator = generator
        self.options = options
        self.encoder = encoder
        self.cache = cache
        self.folder = tempfile.TemporaryDirectory(prefix="recall-session-conv-")
        self.store: Any = None
        self.sessions: dict[str, Any] = {}
        self.histories: dict[str, list[dict[str, Any]]] = {}
        self.users: dict[str, User] = {}
        #: question key -> was its evidence turn evicted when it was asked?
        self.evicted: dict[str, bool] = {}

    def prepare(self, users: Sequence[User]) -> None:
        from recall_core import RecallSession
        from recall_core.memory import MemoryStore

        self.store = MemoryStore.local(Path(self.folder.name) / "store", encoder=self.encoder)
        self.users = {u.user_id: u for u in users}
        for user in users:
            session = RecallSession(self.generator, max_cache_tokens=self.cache, store=self.store, user_id=user.user_id)
            history: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}]
            for turn in user.turns:
                history.append({"role": turn.role, "content": turn.content, "timestamp": turn.date,
                                "session_id": f"session-{turn.session}", "turn_index": turn.index})  # fmt: skip
                session.append(list(history))
            self.sessions[user.user_id] = session
            self.histories[user.user_id] = history

    def answer(self, question: Question) -> Answer:
        session = self.sessions[question.user_id]
        evidence = next(t.content for t in self.users[question.user_id].turns if (t.session, t.index) == question.evidence)
        self.evicted[question.key] = evidence not in {m["content"] for m in session.messages}
        asked = [*self.histories[question.user_id], {"role": "user", "content": question.text}]
        memory = self.store.for_user(question.user_id)
        started = time.perf_counter()
        result = session.reply(asked, memory=memory, **self.options)
        total = time.perf_counter() - started
        retrieved = [c.text for c in memory.search(question.text, 4)]
        return Answer(result.text, result.usage.prompt_tokens, result.usage.injected_tokens, None, total, retrieved)

    def close(self) -> None:
        for session in self.sessions.values():
            session.close()
        if self.store is not None:
            self.store.close()
        self.folder.cleanup()


def markdown(result: dict[str, Any]) -> str:
    rows = ["| method | facts answered (all) | stale | facts answered, evidence evicted | processed tokens |",
            "| --- | --- | --- | --- | --- |"]  # fmt: skip
    for name, summary in result["summary"].items():
        evicted = result["evicted_summary"].get(name, {})
        rows.append(f"| {name} | {summary['facts_answered']} / {summary['questions']} | {summary['stale']} | "
                    f"{evicted.get('facts_answered', '-')} / {evicted.get('questions', '-')} | "
                    f"{summary['processed_tokens']:.0f} |")  # fmt: skip
    return "\n".join(rows)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seed", default="eval", help="a name of recall_core.training.conversations.SEEDS or an integer (default: eval)")
    p.add_argument("--users", type=int, default=12)
    p.add_argument("--facts", type=int, default=17)
    p.add_argument("--cache", type=int, default=1024, help="max_cache_tokens of each user's session")
    p.add_argument("--methods", default="session,history,recall", help="session, history, recall")
    p.add_argument("--max-new-tokens", type=int, default=48)
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--out", type=Path, default=OUT)
    p.add_argument("--no-progress", action="store_true")
    return p.parse_args(argv)


def run(args: argparse.Namespace, generator: Any = None, encoder: Any = None) -> dict[str, Any]:
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    users = generate(seed_of(args.seed), users=args.users, facts=args.facts)
    questions = [q for u in users for q in u.questions]
    if encoder is None:
        from recall_core.memory.encoders import default_encoder

        encoder = default_encoder()
    if generator is None:
        from recall_core import RecallGenerator

        generator = RecallGenerator.from_pretrained(device="cpu")
    names = [m.strip() for m in args.methods.split(",") if m.strip()]
    methods: dict[str, Method] = {}
    for name in names:
        if name == "session":
            methods[name] = SessionMethod(generator, {"max_new_tokens": args.max_new_tokens}, encoder, args.cache)
        elif name == "history":
            methods[name] = PlainMethod("history", generator, {"max_new_tokens": args.max_new_tokens})
        elif name == "recall":
            methods[name] = RecallMethod("recall", generator, {"max_tokens": args.max_new_tokens}, encoder)
        else:
            raise SystemExit(f"unknown method {name!r}: choose from session, history, recall")
    rows: list[dict[str, Any]] = []
    evicted: set[str] = set()
    try:
        for method in methods.values():
            rows.extend(run_method(method, users, questions, not args.no_progress))
            if isinstance(method, SessionMethod):
                evicted = {key for key, gone in method.evicted.items() if gone}
    finally:
        for method in methods.values():
            method.close()
    summary = {name: summarize([r for r in rows if r["method"] == name]) for name in methods}
    evicted_summary = {name: summarize([r for r in rows if r["method"] == name and r["key"] in evicted])
                       for name in methods} if evicted else {}  # fmt: skip
    result = {"benchmark": "session_conversations", "seed": seed_of(args.seed), "users": len(users),
              "questions": len(questions), "cache": args.cache, "evicted_questions": sorted(evicted),
              "recall_config": generator.config.to_dict(), "summary": summary, "evicted_summary": evicted_summary,
              "rows": rows}  # fmt: skip
    write_results(args.out, "session_conversations", result, markdown(result), default=str)
    return result


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    return report(markdown(run(args)), args.out)


if __name__ == "__main__":
    raise SystemExit(main())

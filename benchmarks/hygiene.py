"""What a live chat should write to memory: answers after the chat's own turns were written back.

A chat model with memory writes each exchange as it happens (``ChatRecall``'s default). The
questions a user asks and the small model's replies, often "I don't know." or an invented
answer, then become memories too, and the next time the user asks, they come back as notes
that match the question better than the turn that holds the fact (issue 22, item 2).

Each family's conversation (:mod:`recall_core.training.families`, evaluation seed) is written
to a fresh store, then every question is asked twice through ``ChatRecall``, as a user of the
adapter asks it, each call perturbed as in :mod:`benchmarks.heldout` (the caller's system
message, small talk before the question). Between the rounds, what the first round's calls
wrote is in memory. Per write policy (``ChatRecall.write_roles`` and ``write_questions``;
"nothing": nothing written from the chat), the second round's figures are those to compare. The
first round's differ too, as the memory grows during it: an earlier question written takes a
note's place, often a near miss's.

Usage:
    python -m benchmarks.hygiene                                  # every family, 1 user each
    python -m benchmarks.hygiene --families passing,dates --policies "user+assistant,user"
Writes benchmarks/out/hygiene/hygiene.json, .md and .png.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from benchmarks.common.args import OUT as OUT_ROOT  # noqa: E402
from benchmarks.common.plotting import grouped_bars, pyplot, save  # noqa: E402
from benchmarks.common.progress import progress  # noqa: E402
from benchmarks.common.results import machine, write_results  # noqa: E402
from benchmarks.common.timing import timed_stream  # noqa: E402
from benchmarks.heldout import EVAL_SEED, Call, Reply, calls_of, score_reply, summarize  # noqa: E402
from benchmarks.heldout_memory import memory_turns  # noqa: E402
from recall_core.training.families import FAMILIES, base  # noqa: E402

OUT = OUT_ROOT / "hygiene"
#: Write policies: the roles of each chat exchange written to memory, and whether a user message
#: that only asks is written (``ChatRecall.write_questions``).
POLICIES: dict[str, tuple[tuple[str, ...], bool]] = {
    "user+assistant": (("user", "assistant"), True),  # the adapters' default until 2026-11-25
    "user": (("user",), True),
    "assistant": (("assistant",), True),
    "nothing": ((), True),
    "no-questions": (("user", "assistant"), False),  # the default since: questions left out
}


class ChatPolicy:
    """``ChatRecall`` over a store holding the conversation, writing each call's exchange by ``roles``."""

    def __init__(self, name: str, policy: tuple[tuple[str, ...], bool], generator: Any, encoder: Any,
                 max_new_tokens: int) -> None:  # fmt: skip
        self.name, (self.roles, self.questions), self.generator, self.encoder = name, policy, generator, encoder
        self.max_new_tokens = max_new_tokens
        self.folder = tempfile.TemporaryDirectory(prefix="recall-hygiene-")
        self.store: Any = None

    def prepare(self, users: Sequence[base.User]) -> None:
        from recall_core.memory import MemoryStore, MemoryWriter

        self.store = MemoryStore.local(Path(self.folder.name) / "store", encoder=self.encoder)
        MemoryWriter(self.store).add_turns(memory_turns(users))

    def reply(self, call: Call, thread: str) -> Reply:
        from langchain_recall import ChatRecall

        chat = ChatRecall(generator=self.generator, store=self.store, user_id=call.question.user_id,
                          write_memory=bool(self.roles), write_roles=self.roles or ("user",),
                          write_questions=self.questions, max_tokens=self.max_new_tokens)  # fmt: skip
        last: Any = None

        def pieces() -> Any:
            nonlocal last
            for chunk in chat.stream(call.messages(), config={"configurable": {"thread_id": thread}}):
                last = chunk  # the last one carries the usage and the recalls
                yield str(chunk.content)

        text, ttft, total = timed_stream(pieces())
        recalls = (last.response_metadata or {}).get("recalls", []) if last is not None else []
        notes = "\n".join(str(r.get("text", "")) for r in recalls if isinstance(r, Mapping))
        return Reply(text, notes, None, int(last.usage_metadata["input_tokens"]) if last is not None else 0, ttft, total)

    def close(self) -> None:
        if self.store is not None:
            self.store.close()
        self.folder.cleanup()


def markdown(result: Mapping[str, Any]) -> str:
    families = result["families"]
    lines = ["| written from the chat | round | " + " | ".join(families) + " | all | unknown w/ answer | memories added |",
             "| --- | --- | " + " | ".join("---" for _ in families) + " | --- | --- | --- |"]  # fmt: skip
    for name, rounds in result["summary"].items():
        for number, per in rounds.items():
            cells = [f"{per[f]['answered']}/{per[f]['memory_questions']}" for f in families]
            a = per["all"]
            lines.append(f"| {name} | {number} | " + " | ".join(cells)
                         + f" | **{a['answered']}/{a['memory_questions']}** · {a['abstained_unanswerable']}/"
                         f"{a['unanswerable']} | {a['unknown_with_answer']} | {result['added'][name]} |")  # fmt: skip
    lines.append("")
    lines.append("Cells: facts answered / memory questions (all: · \"don't know\" / questions never answered).")
    return "\n".join(lines) + "\n"


def plot(result: Mapping[str, Any], path: Path) -> Path:
    plt = pyplot()
    families = [*result["families"], "all"]
    names = list(result["summary"])
    fig, ax = plt.subplots(figsize=(max(7, 1.2 * len(families) + 2), 4))
    second = {name: result["summary"][name]["2"] for name in names}
    grouped_bars(ax, families, {name: [per[f]["answered"] / max(1, per[f]["memory_questions"]) for f in families]
                                for name, per in second.items()})  # fmt: skip
    ax.set_ylim(0, 1)
    ax.set_ylabel("facts answered, second round")
    ax.legend(fontsize=8, title="written from the chat")
    ax.set_title(f"After the chat wrote its own turns · seed {result['seed']} · {result['users']} user(s) each", fontsize=10)
    return save(fig, path)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--families", default=",".join(FAMILIES), help=f"comma-separated, from {', '.join(FAMILIES)}")
    p.add_argument("--users", type=int, default=1, help="users per family (about 20 questions each)")
    p.add_argument("--seed", type=int, default=EVAL_SEED)
    p.add_argument("--policies", default=",".join(POLICIES), help=f"comma-separated, from {', '.join(POLICIES)}")
    p.add_argument("--max-new-tokens", type=int, default=48)
    p.add_argument("--out", type=Path, default=OUT)
    p.add_argument("--no-progress", action="store_true")
    return p.parse_args(argv)


def run(args: argparse.Namespace) -> dict[str, Any]:
    from recall_core import RecallGenerator
    from recall_core.memory.encoders import default_encoder

    families = [f.strip() for f in args.families.split(",") if f.strip()]
    names = [p.strip() for p in args.policies.split(",") if p.strip()]
    bad = sorted(set(families) - set(FAMILIES)) + sorted(set(names) - set(POLICIES))
    if bad:
        raise SystemExit(f"unknown families or policies {bad}: families {', '.join(FAMILIES)}; policies {', '.join(POLICIES)}")
    encoder = default_encoder()
    generator = RecallGenerator.from_pretrained(device="cpu")
    data = {f: FAMILIES[f].generate(args.seed, users=args.users) for f in families}
    calls = [c for f, users in data.items() for c in calls_of(f, users, args.seed)]
    rows: list[dict[str, Any]] = []
    added: dict[str, int] = {}
    for name in names:
        policy = ChatPolicy(name, POLICIES[name], generator, encoder, args.max_new_tokens)
        try:
            policy.prepare([u for users in data.values() for u in users])
            before = sum(policy.store.for_user(u.user_id).count() for users in data.values() for u in users)
            for number in (1, 2):
                for i, call in enumerate(progress(calls, f"{name} round {number}", not args.no_progress, unit="question")):
                    row = score_reply(call, policy.reply(call, thread=f"round-{number}-{i}"))
                    rows.append({"policy": name, "round": number, **row})
            added[name] = sum(policy.store.for_user(u.user_id).count() for users in data.values() for u in users) - before
        finally:
            policy.close()
    summary = {
        name: {str(n): {**{f: summarize([r for r in rows if r["policy"] == name and r["round"] == n and r["family"] == f])
                           for f in families},
                        "all": summarize([r for r in rows if r["policy"] == name and r["round"] == n])}
               for n in (1, 2)}
        for name in names
    }  # fmt: skip
    result = {"benchmark": "hygiene", "schema_version": 1, "seed": args.seed, "users": args.users, "families": families,
              "machine": machine(), "summary": summary, "added": added, "rows": rows}  # fmt: skip
    write_results(args.out, "hygiene", result, markdown(result), plot)
    return result


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    print(markdown(run(args)))
    print(f"written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A new user's personal questions: what does the model say when the memory has nothing yet?

Every question of ``recall_core.training.conversations`` (the eval seed unless ``--seed``) is
asked in a fresh chat by a user with no memories in a real ``MemoryStore`` (MiniLM, embedded
Chroma), so every recall finds nothing. The right answer is that the model does not know. Each
config is a ``--variant NAME:field=value,...`` of ``RecallConfig`` on the chosen model:

* ``default``: the defaults (``recall_policy="auto"``, ``empty_notes="(none)"``);
* ``bare``: ``empty_notes=None``, the loop before empty notes existed: a ``<recall>`` the
  model wrote itself that finds nothing is left bare and the model goes on from it;
* ``model``: ``recall_policy="model"``.

Reported per config: the share of replies that say they do not know (``DONT_KNOW``), the share
of replies where the model's own ``<recall>`` fired, and a few replies to read. ``--general N``
also asks N held-out prompts that need no memory, which should get an answer: a rule that makes
a new user's personal questions say "I don't know." must not make their other questions say
it. Run it on the tuned default (``--model`` unset) and on the plain release (``--plain``), or
on a candidate adapter (``--adapter DIR``, merged into the plain default).

Those questions come from a training family's generator: an in-distribution figure.
``--families`` asks the questions of other families instead (the held-out ones of
:mod:`benchmarks.heldout`, at its evaluation seed, e.g. ``passing,dates,paraphrase,handwritten``),
which no training saw. Why: on 2026-11-30 a candidate said "I don't know." to the generator's
questions but gave a new user's "What is the name of my parrot?" a made-up name.

Usage:
    python -m benchmarks.new_user [--plain | --adapter DIR] [--users 4] [--families A,B] [--variant NAME:field=value,...]
Writes benchmarks/out/new_user/new_user{,_plain,_candidate}.json, .md and .png (the shares as bars).
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.common.args import OUT as OUT_ROOT
from benchmarks.common.args import parse_variant, seed_of
from benchmarks.common.plotting import pyplot, save
from benchmarks.common.progress import progress
from benchmarks.common.results import write_results
from recall_core import RecallConfig, RecallGenerator, load_model
from recall_core.memory import MemoryStore
from recall_core.training.conversations import SEEDS, generate
from recall_core.training.prompts import general_prompts

OUT = OUT_ROOT / "new_user"
#: How a reply says it does not know (the tuned model's "I don't know.", the plain model's
#: "I'm unable to provide information about ...").
DONT_KNOW = re.compile(
    r"\b(?:don't|do not|doesn't|does not) (?:know|have (?:any |that |this )?(?:information|access|details|record))"
    r"|\b(?:unable|not able|can't|cannot) (?:to )?(?:provide|access|know|tell|recall|remember)"
    r"|\bno (?:information|record|notes?)\b",
    re.IGNORECASE,
)
DEFAULT_VARIANTS = ("default:", "bare:empty_notes=None", "model:recall_policy=model")


def _variant(text: str) -> tuple[str, dict[str, Any]]:
    """``parse_variant`` for ``argparse``: a malformed item or a bad field or value
    is named now, not after the model loads."""
    for item in filter(None, text.partition(":")[2].split(",")):
        if "=" not in item:
            raise argparse.ArgumentTypeError(f"--variant field must be field=value, got {item!r}")
    name, options = parse_variant(text)
    if name == "recall:":
        raise argparse.ArgumentTypeError(f"--variant must be NAME:field=value,..., got {text!r}")
    try:
        RecallConfig(**options)
    except (TypeError, ValueError) as error:
        raise argparse.ArgumentTypeError(f"--variant {text!r}: {error}") from None
    return name.removeprefix("recall:"), options


def questions_of(args: argparse.Namespace) -> list[str]:
    """The questions asked: of the training generator's ``--seed``, or of ``--families`` at the held-out
    benchmark's evaluation seed (every question: for a new user none has an answer)."""
    if args.families:
        from benchmarks.heldout import EVAL_SEED, family

        users = [u for name in args.families for u in family(name).generate(EVAL_SEED, users=args.users)]
    else:
        try:
            seed = seed_of(str(args.seed))
        except ValueError:
            raise ValueError(f"--seed must be a name in {sorted(SEEDS)} or an integer, got {args.seed!r}") from None
        users = generate(seed, users=args.users)
    return [q.text for user in users for q in user.questions][: args.limit]


def model_name(args: argparse.Namespace) -> str:
    return "candidate" if args.adapter else "plain" if args.plain else "tuned"


def asked(generator: Any, memory: Any, config: RecallConfig, texts: Sequence[str], label: str,
          args: argparse.Namespace) -> dict[str, Any]:
    """Each of ``texts`` asked in a fresh chat under ``config``: the replies, and the shares that say
    they do not know and where the model's own ``<recall>`` fired."""
    replies = []
    for text in progress(texts, label, not args.no_progress, unit="question"):
        result = generator.generate([{"role": "user", "content": text}], memory=memory, config=config,
                                    max_new_tokens=args.max_new_tokens)  # fmt: skip
        replies.append({"question": text, "reply": result.text, "asked": any(r.trigger == "model" for r in result.recalls),
                        "dont_know": bool(DONT_KNOW.search(result.text)),
                        "injected_tokens": result.usage.injected_tokens})  # fmt: skip
    n = max(1, len(replies))
    return {"questions": len(replies), "dont_know": sum(r["dont_know"] for r in replies) / n,
            "asked": sum(r["asked"] for r in replies) / n, "replies": replies}  # fmt: skip


def run(args: argparse.Namespace, generator: Any = None, encoder: Any = None) -> dict[str, Any]:
    if generator is None:
        tuned = not (args.plain or args.adapter)
        generator = RecallGenerator(*load_model(tuned=tuned, adapter=args.adapter))
    questions = questions_of(args)
    general = general_prompts("heldout", n=args.general) if args.general else []
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as folder, MemoryStore.local(folder, encoder=encoder) as store:
        memory = store.for_user("newcomer")
        for name, options in args.variant:
            config = RecallConfig(**options)
            results[name] = {"options": options, **asked(generator, memory, config, questions, name, args)}
            if general:  # what the same new user's prompts that need no memory get: an answer, not "I don't know."
                results[name]["general"] = asked(generator, memory, config, general, f"{name} general", args)
    return {"model": model_name(args), "adapter": args.adapter, "seed": args.seed, "families": args.families,
            "users": args.users, "results": results}  # fmt: skip


def markdown(report: dict[str, Any], examples: int = 3) -> str:
    asked = f"families {', '.join(report['families'])}" if report.get("families") else f"{report['seed']} seed"
    lines = [f"New user, {report['model']} model ({asked}, {report['users']} users)", "",
             "| config | questions | says it does not know | its own <recall> fired | general prompts: "
             "says it does not know · <recall> fired |", "| --- | --- | --- | --- | --- |"]  # fmt: skip
    for name, r in report["results"].items():
        g = r.get("general")
        other = f"{g['dont_know']:.0%} · {g['asked']:.0%} of {g['questions']}" if g else "-"
        lines.append(f"| {name} | {r['questions']} | {r['dont_know']:.0%} | {r['asked']:.0%} | {other} |")
    for name, r in report["results"].items():
        lines += ["", f"{name}:"] + [f"- {x['question']} -> {x['reply'][:100]!r}" for x in r["replies"][:examples]]
    return "\n".join(lines) + "\n"


def plot(report: dict[str, Any], path: Path) -> Path:
    """Bars per config: the share of the new user's personal questions answered "I don't know."
    (right) and, with ``--general``, of their general prompts answered so (wrong)."""
    plt = pyplot()
    names = list(report["results"])
    fig, ax = plt.subplots(figsize=(max(4.0, 1.6 * len(names) + 1.5), 3.2))
    width = 0.38
    personal = [100 * report["results"][n]["dont_know"] for n in names]
    general = [100 * report["results"][n].get("general", {}).get("dont_know", 0.0) for n in names]
    xs = range(len(names))
    ax.bar([x - width / 2 for x in xs], personal, width, label="personal questions (right)")
    if any("general" in report["results"][n] for n in names):
        ax.bar([x + width / 2 for x in xs], general, width, label="general prompts (wrong)")
    ax.set_xticks(list(xs), names)
    ax.set_ylim(0, 100)
    ax.set_ylabel('says "I don\'t know." (%)')
    ax.set_title(f"A new user, {report['model']} model", fontsize=10)
    ax.legend(fontsize=8, loc="center right")
    return save(fig, path)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    from benchmarks.heldout import family_names

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--plain", action="store_true", help="the plain release instead of the recall-tuned default")
    p.add_argument("--adapter", default=None, help="a candidate adapter folder (recall train --out), merged into the "
                   "plain default")  # fmt: skip
    p.add_argument("--families", type=family_names, default=None,
                   help="ask these families' questions (comma-separated; e.g. passing,dates,paraphrase,handwritten: "
                   "held out from training) instead of the training generator's")  # fmt: skip
    p.add_argument("--variant", type=_variant, action="append", default=None,
                   help=f"NAME:field=value,... of RecallConfig (default: {' '.join(DEFAULT_VARIANTS)})")  # fmt: skip
    p.add_argument("--seed", default="eval", help=f"a name in {sorted(SEEDS)} or an integer (default: eval)")
    p.add_argument("--users", type=int, default=4)
    p.add_argument("--limit", type=int, default=None, help="ask only the first N questions")
    p.add_argument("--max-new-tokens", type=int, default=32)
    p.add_argument("--general", type=int, default=0, help="also ask N held-out prompts that need no memory "
                   "(recall_core.training.prompts, held-out split): they should get an answer, not \"I don't know.\"")  # fmt: skip
    p.add_argument("--out", type=Path, default=OUT)
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)
    args.variant = args.variant or [_variant(v) for v in DEFAULT_VARIANTS]
    if args.users < 1:
        p.error(f"--users must be >= 1, got {args.users}")
    if args.general < 0:
        p.error(f"--general must be >= 0, got {args.general}")
    if args.plain and args.adapter:
        p.error("--plain and --adapter exclude each other (an adapter is merged into the plain default)")
    return args




def main(argv: Sequence[str] | None = None, generator: Any = None, encoder: Any = None) -> int:
    args = parse_args(argv)
    report = run(args, generator=generator, encoder=encoder)
    text = markdown(report)
    name = {"tuned": "new_user"}.get(report["model"], f"new_user_{report['model']}")
    write_results(args.out, name, report, text, plot=plot)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

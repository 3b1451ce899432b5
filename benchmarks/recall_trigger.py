"""Trigger quality: does recall fire on the questions that need a memory, and only on those?

With ``recall_policy="model"`` the model's own ``<recall>`` decides when to recall (a
recall-tuned model emits it); with ``"uncertainty"`` the loop recalls before a content token
whose next-token entropy exceeds a threshold (an untrained baseline, FLARE/DRAGIN-style). Both
are asked:

* **memory questions**: the questions of ``recall_core.training.conversations`` (the eval seed
  unless ``--seed``), each in a fresh chat, with that user's turns written to a
  ``MemoryStore`` as ``benchmarks/conversations.py`` writes them;
* **general prompts**: ``recall_core.training.prompts.general_prompts("heldout")``, which need
  no memory, asked with the first user's memory present (so a recall that fires finds notes).

Reported per policy (and per threshold for ``uncertainty``): the share of memory questions on
which a recall fired (and fired before the reply's first token), the share of general prompts
on which one fired, facts answered on the memory questions (``conversations.score``), and the
mean processed tokens (prompt + injected memory). The goal of the recall tuning:
with ``"model"``, at least 90% of memory questions and at most 10% of general prompts.
``--policies auto`` adds the placed marker as a reference (it always fires).

``--profile`` also measures, without recall, the entropy of every step of the model's greedy
replies (after the logits processors, as the uncertainty trigger sees it) and reports, per
threshold, the share of content tokens above it and of replies where it would fire (anywhere,
within the first 8 tokens, at the first): how ``RecallConfig.uncertainty_threshold``'s default
was chosen.

Usage:
    python -m benchmarks.recall_trigger                                   # the embedded default model
    python -m benchmarks.recall_trigger --model PATH --thresholds 2.5,3,3.5 --users 12 --general 64
Writes benchmarks/out/recall_trigger/recall_trigger.json, .md and .png.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from benchmarks.common.args import OUT as OUT_ROOT  # noqa: E402
from benchmarks.common.args import seed_of  # noqa: E402
from benchmarks.common.methods import memory_turns  # noqa: E402
from benchmarks.common.plotting import pyplot, save  # noqa: E402
from benchmarks.common.progress import progress  # noqa: E402
from benchmarks.common.results import machine, report, write_results  # noqa: E402
from recall_core.training.conversations import SEEDS, generate, score  # noqa: E402
from recall_core.training.prompts import general_prompts  # noqa: E402

OUT = OUT_ROOT / "recall_trigger"
POLICIES = ("model", "uncertainty", "auto")
GOAL_MEMORY, GOAL_GENERAL = 0.90, 0.10


def configurations(base: Any, policies: Sequence[str], thresholds: Sequence[float]) -> dict[str, Any]:
    """``{name: RecallConfig}``: one per policy, one per threshold for ``uncertainty``."""
    configs = {}
    for policy in policies:
        if policy == "uncertainty":
            for threshold in thresholds:
                configs[f"uncertainty@{threshold:g}"] = base.replace(recall_policy=policy, uncertainty_threshold=threshold)
        elif policy == "auto":  # the reference: its marker before every reply, news too
            configs[policy] = base.replace(recall_policy=policy, ask_on_statements=False)
        else:
            configs[policy] = base.replace(recall_policy=policy)
    return configs


def marker_index(recall: Any) -> int:
    """Where the ``<recall>`` stood in ``sequences`` (a marker the loop took back is traced at its own place)."""
    taken_back = recall.trigger == "uncertainty" and not recall.injected
    return recall.position if taken_back else recall.position - 1


def ask(generator: Any, text: str, memory: Any, config: Any, max_new_tokens: int) -> dict[str, Any]:
    """One question in a fresh chat: what fired, where, and what it cost."""
    result = generator.generate([{"role": "user", "content": text}], memory=memory, config=config,
                                max_new_tokens=max_new_tokens, do_sample=False)  # fmt: skip
    usage = result.usage
    fired = [r for r in result.recalls if config.recall_policy == "auto" or r.trigger != "prompt"]
    return {
        "text": result.text,
        "fired": bool(fired),
        # Before the reply's first token (a prompt marker counts: it is before the reply too).
        "fired_first": any(r.in_prompt or marker_index(r) == usage.prompt_tokens for r in fired),
        "recalls": len(fired),
        "injected": sum(r.injected for r in fired),
        "triggers": [r.trigger for r in fired],
        "entropies": [r.entropy for r in fired if r.entropy is not None],
        "prompt_tokens": usage.prompt_tokens,
        "injected_tokens": usage.injected_tokens,
        "processed_tokens": usage.prompt_tokens + usage.injected_tokens,
        "generated_tokens": usage.generated_tokens,
    }


def summarize(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    memory = [r for r in rows if r["kind"] == "memory"]
    general = [r for r in rows if r["kind"] == "general"]

    def share(items: Sequence[dict[str, Any]], key: str) -> float | None:
        return sum(bool(r[key]) for r in items) / len(items) if items else None

    def mean(items: Sequence[dict[str, Any]], key: str) -> float | None:
        return statistics.fmean(r[key] for r in items) if items else None

    return {
        "memory_questions": len(memory),
        "fired_memory": share(memory, "fired"),
        "fired_first_memory": share(memory, "fired_first"),
        "general_prompts": len(general),
        "fired_general": share(general, "fired"),
        "fired_first_general": share(general, "fired_first"),
        "facts_answered": sum(r["correct"] for r in memory),
        "recalls_per_memory_question": mean(memory, "recalls"),
        "processed_tokens_memory": mean(memory, "processed_tokens"),
        "processed_tokens_general": mean(general, "processed_tokens"),
    }


def run(args: argparse.Namespace, generator: Any = None, encoder: Any = None) -> dict[str, Any]:
    """Ask every question and prompt under every configuration; return the result (also written under ``args.out``)."""
    from recall_core.memory import MemoryStore

    seed = seed_of(args.seed)
    users = generate(seed, users=args.users)
    questions = [q for u in users for q in u.questions][: args.limit]
    prompts = general_prompts("heldout", args.general)
    if encoder is None:
        from recall_core.memory.encoders import default_encoder

        encoder = default_encoder()
    if generator is None:
        from recall_core import RecallGenerator

        generator = RecallGenerator.from_pretrained(args.model)
    configs = configurations(generator.config, args.policies, args.thresholds)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="recall-trigger-") as folder:
        store = MemoryStore.local(Path(folder) / "store", encoder=encoder)
        try:
            store.writer.add_turns(memory_turns(users))
            work = [("memory", q.text, q.user_id, q) for q in questions]
            work += [("general", p, users[0].user_id, None) for p in prompts]
            for name, config in configs.items():
                for kind, text, user_id, question in progress(work, name, not args.no_progress, unit="prompt"):
                    row = ask(generator, text, store.for_user(user_id), config, args.max_new_tokens)
                    row.update(config=name, kind=kind, question=text, user_id=user_id,
                               correct=score(question, row["text"])["correct"] if question else None)  # fmt: skip
                    rows.append(row)
        finally:
            store.close()
    summary = {name: summarize([r for r in rows if r["config"] == name]) for name in configs}
    profile = None
    if args.profile:
        texts = {"memory": [q.text for q in questions], "general": prompts}
        profile = entropy_profile(generator, texts, args.thresholds, args.max_new_tokens, not args.no_progress)
    result = {
        "benchmark": "recall_trigger", "schema_version": 1, "seed": seed, "users": len(users),
        "model": str(args.model or "SmolLM2-135M-Instruct (embedded default)"),
        "encoder": getattr(encoder, "name", str(encoder)), "max_new_tokens": args.max_new_tokens,
        "goal": {"fired_memory_at_least": GOAL_MEMORY, "fired_general_at_most": GOAL_GENERAL},
        "configs": {name: config.to_dict() for name, config in configs.items()},
        "machine": machine(load=False),
        "summary": summary, "rows": rows, "entropy_profile": profile,
    }  # fmt: skip
    write_results(args.out, "recall_trigger", result, markdown(result), plot)
    return result


def entropy_profile(generator: Any, texts: dict[str, list[str]], thresholds: Sequence[float], max_new_tokens: int,
                    show: bool) -> dict[str, Any]:  # fmt: skip
    """Per kind of prompt and threshold: how often the uncertainty trigger would fire on the plain greedy replies."""
    import torch

    from recall_core import RecallConfig
    from recall_core.decoding.triggers import content_ids

    plain = RecallConfig(recall_policy="model")  # the same prompt as both policies, and no memory: plain generate()
    content = content_ids(generator.tokenizer)
    profile: dict[str, Any] = {}
    for kind, prompts in texts.items():
        steps: list[list[tuple[float, bool]]] = []  # per reply: (entropy, most likely token is content)
        for text in progress(prompts, f"profile {kind}", show, unit="prompt"):
            result = generator.generate([{"role": "user", "content": text}], memory=None, config=plain,
                                        max_new_tokens=max_new_tokens, do_sample=False, output_scores=True,
                                        return_dict_in_generate=True)  # fmt: skip
            reply = []
            for scores in result.output.scores:
                top = int(scores[0].argmax())
                entropy = float(torch.special.entr(torch.softmax(scores[0], dim=-1)).sum())
                reply.append((entropy, top < len(content) and bool(content[top])))
            steps.append(reply)
        tokens = [e for reply in steps for e, c in reply if c]
        first = [reply[0][0] for reply in steps if reply]
        profile[kind] = {
            "replies": len(steps),
            "first_token_entropy_median": statistics.median(first) if first else None,
            "thresholds": {
                f"{t:g}": {
                    "content_tokens_above": sum(e > t for e in tokens) / max(len(tokens), 1),
                    "fires": sum(any(e > t and c for e, c in r) for r in steps) / max(len(steps), 1),
                    "fires_within_8": sum(any(e > t and c for e, c in r[:8]) for r in steps) / max(len(steps), 1),
                    "fires_at_first": sum(bool(r) and r[0][0] > t and r[0][1] for r in steps) / max(len(steps), 1),
                }
                for t in thresholds
            },
        }
    return profile


def markdown(result: dict[str, Any]) -> str:
    lines = [
        "| policy | fired on memory questions (at the first token) | fired on general prompts (at the first token) "
        "| facts answered | recalls per memory question | processed tokens (memory / general) |",
        "| --- | --- | --- | --- | --- | --- |",
    ]

    def pct(v: float | None) -> str:
        return "" if v is None else f"{100 * v:.0f}%"

    def num(v: float | None) -> str:
        return "" if v is None else f"{v:.0f}" if v >= 10 else f"{v:.2f}"

    for name, s in result["summary"].items():
        lines.append(
            f"| {name} | {pct(s['fired_memory'])} ({pct(s['fired_first_memory'])}) | "
            f"{pct(s['fired_general'])} ({pct(s['fired_first_general'])}) | "
            f"{s['facts_answered']} / {s['memory_questions']} | {num(s['recalls_per_memory_question'])} | "
            f"{num(s['processed_tokens_memory'])} / {num(s['processed_tokens_general'])} |"
        )
    profile = result.get("entropy_profile")
    if profile:
        lines += ["", "Entropy of the plain greedy replies (no recall): share above each threshold", "",
                  "| threshold (nats) | kind | content tokens above | replies firing | within 8 tokens | at the first |",
                  "| --- | --- | --- | --- | --- | --- |"]  # fmt: skip
        for kind, p in profile.items():
            for t, v in p["thresholds"].items():
                lines.append(f"| {t} | {kind} | {pct(v['content_tokens_above'])} | {pct(v['fires'])} | "
                             f"{pct(v['fires_within_8'])} | {pct(v['fires_at_first'])} |")  # fmt: skip
    return "\n".join(lines) + "\n"


def plot(result: dict[str, Any], path: Path) -> Path:
    plt = pyplot()
    summary = result["summary"]
    names = list(summary)
    series = [
        ("fired on memory questions", "fired_memory", "tab:green"),
        ("at their first token", "fired_first_memory", "tab:olive"),
        ("fired on general prompts", "fired_general", "tab:red"),
        ("facts answered", None, "tab:blue"),
    ]
    width = 0.8 / len(series)
    fig, ax = plt.subplots(figsize=(max(6.0, 1.6 * len(names) + 2), 4.2))
    for i, (label, key, colour) in enumerate(series):
        values = [
            (summary[n][key] or 0.0) if key else summary[n]["facts_answered"] / max(summary[n]["memory_questions"], 1)
            for n in names
        ]
        ax.bar([x + (i - (len(series) - 1) / 2) * width for x in range(len(names))], values, width, label=label,
               color=colour)  # fmt: skip
    ax.axhline(GOAL_MEMORY, color="tab:green", linestyle=":", linewidth=1)
    ax.axhline(GOAL_GENERAL, color="tab:red", linestyle=":", linewidth=1)
    ax.set_xticks(range(len(names)), names, fontsize=8)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("share")
    ax.legend(fontsize=8, loc="upper right")
    ax.set_title(f"Recall trigger · {result['model']} · dotted: goals (>= {GOAL_MEMORY:.0%} memory, "
                 f"<= {GOAL_GENERAL:.0%} general)", fontsize=9)  # fmt: skip
    return save(fig, path)


def _floats(text: str) -> list[float]:
    try:
        values = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--thresholds must be comma-separated numbers, got {text!r}") from None
    if not values or any(not v > 0 for v in values):
        raise argparse.ArgumentTypeError(f"--thresholds must be numbers > 0 (nats), got {text!r}")
    return values


def _policies(text: str) -> list[str]:
    names = [p.strip() for p in text.split(",") if p.strip()]
    unknown = sorted(set(names) - set(POLICIES))
    if not names or unknown:
        raise argparse.ArgumentTypeError(f"--policies must be comma-separated, from {', '.join(POLICIES)}; got {text!r}")
    return names


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default=None, help="HF model folder (default: the embedded SmolLM2-135M-Instruct)")
    p.add_argument("--policies", type=_policies, default=["model", "uncertainty"],
                   help=f"comma-separated, from {', '.join(POLICIES)} (default: model,uncertainty)")
    p.add_argument("--thresholds", type=_floats, default=[2.5, 3.0, 3.5],
                   help="entropy thresholds (nats) for the uncertainty policy (default: 2.5,3,3.5)")
    p.add_argument("--seed", default="eval", help=f"a name in {sorted(SEEDS)} or an integer (default: eval)")
    p.add_argument("--users", type=int, default=12)
    p.add_argument("--limit", type=int, default=None, help="ask only the first N memory questions")
    p.add_argument("--general", type=int, default=64, help="held-out general prompts to ask (default: 64)")
    p.add_argument("--max-new-tokens", type=int, default=48)
    p.add_argument("--profile", action="store_true", help="also measure the entropies of the plain greedy replies")
    p.add_argument("--out", type=Path, default=OUT)
    p.add_argument("--no-progress", action="store_true")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None, generator: Any = None, encoder: Any = None) -> int:
    args = parse_args(argv)
    return report(markdown(run(args, generator=generator, encoder=encoder)), args.out)


if __name__ == "__main__":
    sys.exit(main())

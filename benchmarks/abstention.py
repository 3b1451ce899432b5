"""How sure is the tuned model when it says "I don't know." after notes? ``abstain_threshold`` swept.

For every question of the given families (evaluation seed, the held-out benchmark's calls:
caller system messages, earlier exchanges), the shipped default answers once under ``"auto"``
and the probability it gave the abstention's opening ("I") at the reply's first token is
recorded. Each reply that opens with it is answered again with the opening masked
(``abstain_threshold`` just under 1), which is what any threshold above that probability does.
From the two runs the figures of every threshold follow (greedy decoding: a threshold changes a
reply only where the opening was the most likely first token and below it):

* facts answered, "I don't know." with the answer among the notes, right "I don't know." to a
  question never answered, stale answers;
* the opening's probability for the replies that abstained, by whether the notes held the
  answer, the notes did not, or the question was never answered (the plot's left panel).

Usage:
    python -m benchmarks.abstention --families passing,dates,paraphrase --users 2
Writes benchmarks/out/abstention/abstention.json, .md and .png.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402
from transformers import LogitsProcessor  # noqa: E402

from benchmarks import heldout  # noqa: E402
from benchmarks.common.args import OUT as OUT_ROOT  # noqa: E402
from benchmarks.common.plotting import pyplot, save  # noqa: E402
from benchmarks.common.progress import progress  # noqa: E402
from benchmarks.common.results import machine, write_results  # noqa: E402

OUT = OUT_ROOT / "abstention"
THRESHOLDS = (0.0, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
ALWAYS = 0.999  # masks every opening the model was not all but certain of


class FirstStep(LogitsProcessor):
    """Records the probability of ``token`` at the first step it sees (the reply's first token)."""

    def __init__(self, token: int) -> None:
        self.token, self.p = token, None

    def __call__(self, input_ids, scores):
        if self.p is None:
            self.p = float(torch.softmax(scores[0].float(), -1)[self.token])
        return scores


def answer(generator: Any, store: Any, call: heldout.Call, config: Any, opening: int, tokens: int) -> dict[str, Any]:
    """One call's scored row, with the opening's first-token probability (``p_opening``)."""
    first = FirstStep(opening)
    result = generator.generate(call.messages(), memory=store.for_user(call.question.user_id), config=config,
                                max_new_tokens=tokens, logits_processor=[first])  # fmt: skip
    notes = "\n".join(r.text for r in result.recalls if r.length > 0)
    row = heldout.score_reply(call, heldout.Reply(result.text, notes))
    ids = generator.tokenizer.encode(result.text, add_special_tokens=False)
    return {**row, "p_opening": first.p, "opens": bool(ids) and ids[0] == opening,
            "stale_possible": bool(call.question.stale)}  # fmt: skip


def sweep(rows: Sequence[Mapping[str, Any]], masked: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The held-out counts at each threshold, from the plain run and the masked replies."""
    out = []
    for threshold in THRESHOLDS:
        chosen = [masked[r["key"]] if r["opens"] and r["p_opening"] < threshold else r for r in rows]
        summary = heldout.summarize(chosen)
        out.append({"threshold": threshold, **{k: summary[k] for k in (
            "memory_questions", "answered", "unknown_with_answer", "unanswerable", "abstained_unanswerable",
            "stale", "stale_possible")}})  # fmt: skip
    return out


def markdown(result: Mapping[str, Any]) -> str:
    lines = ["| abstain_threshold | facts | \"I don't know.\" with the answer | right \"I don't know.\" | stale | facts + right |",
             "| --- | --- | --- | --- | --- | --- |"]  # fmt: skip
    for s in result["sweep"]:
        lines.append(f"| {s['threshold']} | {s['answered']}/{s['memory_questions']} | {s['unknown_with_answer']} | "
                     f"{s['abstained_unanswerable']}/{s['unanswerable']} | {s['stale']}/{s['stale_possible']} | "
                     f"{s['answered'] + s['abstained_unanswerable']} |")  # fmt: skip
    lines.append("")
    for group, values in result["abstained"].items():
        shown = ", ".join(f"{v:.2f}" for v in sorted(values))
        lines.append(f"- opening's probability, replies that said \"I don't know.\", {group}: {shown or '-'}")
    return "\n".join(lines) + "\n"


def plot(result: Mapping[str, Any], path: Path) -> Path:
    plt = pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    for i, values in enumerate(result["abstained"].values()):
        left.scatter(values, [i] * len(values), alpha=0.6)
    left.set_yticks(range(len(result["abstained"])), list(result["abstained"]))
    left.set_xlabel('probability of "I" at the first token after the notes')
    left.set_title("Replies that said \"I don't know.\"")
    xs = [s["threshold"] for s in result["sweep"]]
    for key, label in (("answered", "facts"), ("unknown_with_answer", '"I don\'t know." with the answer'),
                       ("abstained_unanswerable", 'right "I don\'t know."'), ("stale", "stale")):  # fmt: skip
        right.plot(xs, [s[key] for s in result["sweep"]], marker="o", label=label)
    right.set_xlabel("abstain_threshold")
    right.set_ylabel("questions")
    right.set_title(", ".join(result["families"]))
    right.legend(fontsize=8)
    return save(fig, path)


def run(args: argparse.Namespace) -> dict[str, Any]:
    from recall_core import RecallGenerator
    from recall_core.decoding.abstain import abstention_opening
    from recall_core.memory.encoders import default_encoder

    families = args.families
    data = heldout.asked_families(families, args.seed, args.users)
    generator = RecallGenerator.from_pretrained(device="cpu", tuned=True)
    opening = abstention_opening(generator.tokenizer)
    base = generator.config.replace(abstain_threshold=0.0)
    method = heldout.RecallMethod("recall", generator, args.max_new_tokens, default_encoder())
    method.prepare([u for users in data.values() for u in users])
    try:
        calls = [c for f in families for c in heldout.calls_of(f, data[f], args.seed)]
        rows = [answer(generator, method.store, c, base, opening, args.max_new_tokens)
                for c in progress(calls, "answers", not args.no_progress, unit="question")]  # fmt: skip
        again = [c for c, r in zip(calls, rows, strict=True) if r["opens"]]
        masked = {c.question.key: answer(generator, method.store, c, base.replace(abstain_threshold=ALWAYS), opening,
                                         args.max_new_tokens)
                  for c in progress(again, "opening masked", not args.no_progress, unit="question")}  # fmt: skip
    finally:
        method.close()
    said = [r for r in rows if r["abstained"]]
    abstained = {
        "notes held the answer": [r["p_opening"] for r in said if r["kind"] == "memory" and r["notes_hold_answer"]],
        "notes did not": [r["p_opening"] for r in said if r["kind"] == "memory" and not r["notes_hold_answer"]],
        "never answered": [r["p_opening"] for r in said if r["kind"] != "memory"],
    }
    result = {"benchmark": "abstention", "seed": args.seed, "users": args.users, "families": families,
              "machine": machine(), "sweep": sweep(rows, masked), "abstained": abstained,
              "rows": rows, "masked": list(masked.values())}  # fmt: skip
    write_results(args.out, "abstention", result, markdown(result), plot)
    return result


def main(argv: Sequence[str] | None = None) -> int:
    p = heldout.study_parser(__doc__, OUT, families="passing,dates,paraphrase", users=2)
    p.add_argument("--max-new-tokens", type=int, default=48)  # as benchmarks.heldout
    args = p.parse_args(argv)
    print(markdown(run(args)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

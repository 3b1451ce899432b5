"""Each note read apart: would the reply be right more often if the model read one note at a time?

The 135M model reads the wrong one of two notes, or the wrong span of one (docs/benchmarks/heldout.md).
This script takes a held-out run's calls (``python -m benchmarks.heldout``, its ``heldout.json``) and
answers each question again with the same notes, both together (the shipped reply, as a check) and
each alone, greedily, keeping every reply's token log-probabilities (the processed scores the loop
samples from). It then scores rules that pick one of the replies:

- ``both``: the reply with both notes (what ships);
- ``confident``: of the one-note replies that are not "I don't know.", the one whose tokens have the
  highest mean log-probability (else the first);
- ``confident_3``: the same over each reply's first 3 tokens;
- ``newest_answers``: the reply of the newest note (the notes are newest first) that is not "I don't
  know." (else the first);
- ``agreement``: a one-note reply that the other readings repeat (case and punctuation ignored), else ``both``;
- ``pmi``: of the readings (both notes and each alone) that are not "I don't know.", the one whose tokens
  the notes raise most over the same tokens after the question with no notes (mean log-probability
  with the notes less mean log-probability without: pointwise mutual information, the reply's
  support in its notes; the ``prior`` of each reading). With the notes the scores are the loop's
  processed ones (masks applied), without them the model's raw ones on the reply's text re-encoded;
- ``any`` (an oracle, not a rule): some reading is right.

``--rescore RESULT`` adds the ``prior`` of every reading to an earlier result file (the same
``--run``, families and users) and tallies again, without reading the notes again.

Only questions whose run injected notes are asked; a run's notes are split at their date labels, so
undated notes count as one.

Usage (from the repository root; the families and users of the run):
    python -m benchmarks.notes_apart --run OUT/heldout.json --families handwritten,handwritten-changes \\
        --users 8 --method recall --out benchmarks/out/notes_apart
    python -m benchmarks.notes_apart --figure docs/figures/notes_apart.png A/notes_apart.json B/notes_apart.json
    python -m benchmarks.notes_apart --run OUT/heldout.json --families ... --users 8 --rescore A/notes_apart.json
The second form draws several runs' memory questions side by side, one group of bars per run.
"""

from __future__ import annotations

import argparse
import json
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402

from benchmarks import heldout  # noqa: E402
from benchmarks.common.args import OUT as OUT_ROOT  # noqa: E402
from benchmarks.common.plotting import pyplot, save  # noqa: E402
from benchmarks.common.progress import progress  # noqa: E402
from benchmarks.common.results import machine, write_results  # noqa: E402
from benchmarks.common.scoring import continuation_log_probs  # noqa: E402
from recall_core.training.families import base  # noqa: E402
from recall_core.types import MemoryCandidate, RecallQuery  # noqa: E402

OUT = OUT_ROOT / "notes_apart"
#: Where one note ends and the next begins in a run's notes: a line that opens with a date label.
NOTE_START = re.compile(r"\n(?=\[\d{1,2} [A-Z][a-z]+ \d{4}\] )")
ABSTENTION = "I don't know"
RULES = ("both", "confident", "confident_3", "newest_answers", "agreement", "pmi", "any")


class Pinned:
    """A memory that returns the given notes (already rendered, so :func:`note` keeps them as they are)."""

    def __init__(self, notes: Sequence[str]) -> None:
        self.notes = list(notes)

    def search(self, query: RecallQuery, k: int) -> list[MemoryCandidate]:
        return [MemoryCandidate(id=f"n{i}", score=0.9 - 0.01 * i, text=t) for i, t in enumerate(self.notes)][:k]


def reading(generator: Any, call: heldout.Call, notes: Sequence[str], max_new_tokens: int) -> dict[str, Any]:
    """The greedy reply to ``call`` with ``notes``, its score and its tokens' log-probabilities."""
    result = generator.generate(call.messages(), memory=Pinned(notes), max_new_tokens=max_new_tokens,
                                return_dict_in_generate=True, output_scores=True)  # fmt: skip
    scores = result.output.scores
    new = result.sequences[0][-len(scores):] if scores else []
    log_p = [float(torch.log_softmax(s[0].float(), dim=-1)[t]) for s, t in zip(scores, new, strict=True)]
    return {"text": result.text, "log_p": log_p, **base.score(call.question, result.text)}


def prior(generator: Any, call: heldout.Call, reply: dict[str, Any]) -> list[float]:
    """The log-probabilities of ``reply``'s tokens (as many as it scored) after ``call``'s messages
    with no notes (:func:`plain_prompt`), scored in one pass."""
    ids = generator.tokenizer.encode(reply["text"], add_special_tokens=False)[: max(1, len(reply["log_p"]))]
    return continuation_log_probs(generator.model, [plain_prompt(generator, call)], ids)[0]


def plain_prompt(generator: Any, call: heldout.Call) -> list[int]:
    """The ids the engine reads for ``call`` when nothing is injected: the caller's messages as its
    recall policy renders them (its system prompt where the call has none), through the chat template."""
    from recall_core.prompt import decorate, render_chat_ids

    return render_chat_ids(generator.tokenizer, decorate(call.messages(), generator.config))


def support(reply: dict[str, Any]) -> float:
    """How much the notes raise ``reply``: its mean token log-probability with them less without them,
    over the tokens both scored (``-inf`` with none)."""
    n = min(len(reply["log_p"]), len(reply.get("prior", [])))
    return mean(reply["log_p"][:n]) - mean(reply["prior"][:n]) if n else float("-inf")


def run_calls(run_path: Path, method: str, families: Sequence[str], users: int, seed: int, system_messages: str,
              limit: int | None = None) -> list[tuple[heldout.Call, dict[str, Any]]]:  # fmt: skip
    """A held-out run's calls rebuilt (the same families, users, seed and callers' messages), each
    with the run's row for ``method``, where the run has one that injected notes."""
    run = {(r["family"], r["key"]): r for r in json.loads(run_path.read_text())["rows"] if r["method"] == method}
    systems = heldout.SYSTEM_MESSAGES[system_messages]
    calls = [c for f in families
             for c in heldout.asked_calls(f, heldout.family(f).generate(seed, users=users), seed, 0, systems)[:limit]]  # fmt: skip
    rows = ((call, run.get((call.family, call.question.key))) for call in calls)
    return [(call, row) for call, row in rows if row is not None and row["notes"]]


def read_call(generator: Any, call: heldout.Call, row: dict[str, Any], max_new_tokens: int,
              earlier: dict[tuple[str, str], dict[str, Any]] | None = None) -> dict[str, Any]:  # fmt: skip
    """One question's record: its readings (both notes, each alone), or ``earlier``'s for it when
    rescoring, each with its ``prior``; ``row`` is the run's row for the call."""
    if earlier is not None:  # result files from before the run's reply was kept lack it
        if (call.family, call.question.key) not in earlier:
            raise ValueError(f"--rescore: the earlier result has no reading of {call.family} {call.question.key}; "
                             "give the --families, --users and --limit it was made with")  # fmt: skip
        record = {"run_reply": row["reply"], **earlier[(call.family, call.question.key)]}
    else:
        notes = NOTE_START.split(row["notes"])
        both = reading(generator, call, notes, max_new_tokens)
        apart = [reading(generator, call, [n], max_new_tokens) for n in notes] if len(notes) > 1 else []
        record = {"family": call.family, "key": call.question.key, "kind": row["kind"],
                  "run_reply": row["reply"], "both": both, "apart": apart}  # fmt: skip
    for one in (record["both"], *record["apart"]):
        one["prior"] = prior(generator, call, one)
    return record


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else float("-inf")


def pick(rule: str, both: dict[str, Any], apart: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The reading ``rule`` picks (``apart``: the one-note readings, newest note first)."""
    if rule == "both" or not apart:
        return both
    answers = [r for r in apart if not r["text"].startswith(ABSTENTION)]
    if rule in ("confident", "confident_3"):
        n = 3 if rule == "confident_3" else None
        return max(answers, key=lambda r: mean(r["log_p"][:n])) if answers else apart[0]
    if rule == "newest_answers":
        return answers[0] if answers else apart[0]
    if rule == "pmi":
        readings = [r for r in (both, *apart) if not r["text"].startswith(ABSTENTION)]
        return max(readings, key=support) if readings else both
    if rule == "agreement":
        texts = [base.normal(r["text"]) for r in (both, *apart)]  # case and punctuation ignored, as the scorer does
        for i, r in enumerate(apart, start=1):
            if r in answers and texts[i].strip() and texts.count(texts[i]) > 1:
                return r
        return both
    raise ValueError(f"rule must be one of {RULES}, got {rule!r}")


def tally(records: Sequence[dict[str, Any]]) -> dict[str, dict[str, dict[str, int]]]:
    """Per question kind and rule: right replies, stale ones, abstentions."""
    out: dict[str, dict[str, dict[str, int]]] = {}
    for kind in ("memory", "unanswerable"):
        rows = [r for r in records if r["kind"] == kind]
        table = out[kind] = {"questions": {"n": len(rows)}}
        for rule in RULES:
            if rule == "pmi" and not all("prior" in r["both"] for r in records):
                continue  # a result file from before the priors: --rescore adds them
            if rule == "any":
                right = sum(r["both"]["correct"] or any(a["correct"] for a in r["apart"]) for r in rows)
                table[rule] = {"correct": right}
                continue
            chosen = [pick(rule, r["both"], r["apart"]) for r in rows]
            table[rule] = {k: sum(bool(c[k]) for c in chosen) for k in ("correct", "stale", "abstained")}
    return out


def markdown(result: dict[str, Any]) -> str:
    lines = ["| rule | " + " | ".join(f"{k} (of {v['questions']['n']}): right · stale · \"I don't know.\"" for k, v in result["tally"].items()) + " |",
             "| --- | --- | --- |"]  # fmt: skip
    for rule in (r for r in RULES if r in next(iter(result["tally"].values()))):
        cells = []
        for table in result["tally"].values():
            t = table[rule]
            cells.append(f"{t['correct']}" if rule == "any" else f"{t['correct']} · {t['stale']} · {t['abstained']}")
        lines.append(f"| {rule} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def plot(results: Sequence[dict[str, Any]], path: Path) -> Path:
    """Per run (a group of bars, named by its families), the memory questions each rule gets right
    (the oracle ``any`` as an outline) and, below, its stale replies."""
    plt = pyplot()
    rules = [r for r in RULES if r != "any" and all(r in res["tally"]["memory"] for res in results)]
    fig, (right, stale) = plt.subplots(2, 1, figsize=(2.6 + 2.4 * len(results), 6.0), sharex=True,
                                       gridspec_kw={"height_ratios": [2, 1]})  # fmt: skip
    width = 0.8 / len(rules)
    for g, result in enumerate(results):
        table = result["tally"]["memory"]
        for i, rule in enumerate(rules):
            x = g + (i - (len(rules) - 1) / 2) * width
            right.bar(x, table[rule]["correct"], width, color=f"C{i}", label=rule if g == 0 else None)
            stale.bar(x, table[rule]["stale"], width, color=f"C{i}")
        right.bar(g, table["any"]["correct"], 0.86, fill=False, edgecolor="black", linestyle="--",
                  label="some reading right" if g == 0 else None)  # fmt: skip
    stale.set_xticks(range(len(results)), [f"{', '.join(r['families'])}\n(of {r['tally']['memory']['questions']['n']})"
                                           for r in results], fontsize=7)  # fmt: skip
    right.set_ylabel("memory questions right")
    stale.set_ylabel("stale replies")
    right.set_title("Each note read apart: the reply each rule picks")
    right.legend(fontsize=7, ncol=3)
    return save(fig, path)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--figure", type=Path, default=None, help="draw the given results (notes_apart.json files) to this PNG")
    p.add_argument("results", nargs="*", type=Path, help="with --figure: runs' notes_apart.json")
    p.add_argument("--run", type=Path, help="a held-out run's heldout.json")
    p.add_argument("--method", default="recall", help="the run's method whose notes are read")
    p.add_argument("--families", type=heldout.family_names)
    p.add_argument("--users", type=int, help="the run's users per family")
    p.add_argument("--seed", type=int, default=heldout.EVAL_SEED)
    p.add_argument("--system-messages", choices=tuple(heldout.SYSTEM_MESSAGES), default="personas")
    p.add_argument("--max-new-tokens", type=int, default=48)
    p.add_argument("--limit", type=int, default=None, help="at most N questions per family")
    p.add_argument("--rescore", type=Path, default=None, help="an earlier notes_apart.json: add each reading's prior and tally again")
    p.add_argument("--out", type=Path, default=OUT)
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)
    if args.figure is not None:
        results = [json.loads(path.read_text()) for path in args.results]
        plot(results, args.figure)
        return {"figure": str(args.figure), "runs": len(results)}
    if args.run is None or args.families is None or args.users is None:
        p.error("--run, --families and --users are required (or --figure with result files)")
    from recall_core import RecallGenerator

    generator = RecallGenerator.from_pretrained(device="cpu", tuned=True)
    pairs = run_calls(args.run, args.method, args.families, args.users, args.seed, args.system_messages, args.limit)
    earlier = {(r["family"], r["key"]): r for r in json.loads(args.rescore.read_text())["records"]} if args.rescore else None
    records = [read_call(generator, call, row, args.max_new_tokens, earlier)
               for call, row in progress(pairs, "notes apart", not args.no_progress, unit="question")
               if row["kind"] in ("memory", "unanswerable")]  # fmt: skip
    result = {"benchmark": "notes_apart", "run": str(args.run), "method": args.method, "families": args.families,
              "users": args.users, "seed": args.seed, "machine": machine(), "tally": tally(records),
              "same_as_run": sum(r["both"]["text"] == r["run_reply"] for r in records), "records": records}  # fmt: skip
    text = markdown(result)
    print(text)
    print(f"replies with both notes equal to the run's: {result['same_as_run']} of {len(records)}")
    write_results(args.out, "notes_apart", result, text)
    return result


if __name__ == "__main__":
    main()

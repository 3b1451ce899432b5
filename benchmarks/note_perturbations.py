"""Does the model read the fact whatever the notes around it? Issue 19's perturbations of the notes.

Issue 19 asks that every evaluation perturb, besides the caller's system message and the earlier
turns of the session (which :mod:`benchmarks.heldout` does), the notes themselves: with and
without dates and speakers, 1 to 6 notes, the fact's place among them, and irrelevant notes
only. The held-out benchmark cannot: its notes are whatever the search finds. This one fixes
them. For each memory question of the given families (the held-out benchmark's calls, each
under its caller's system message and earlier turns), the memory's own search (the default store
and writer, 16 candidates, less those that repeat one before, as the engine passes them over) gives:

* the **fact note**: the best-ranked candidate that names the answer (a question whose
  candidates do not is left out, and counted);
* the **other notes**: the best-ranked candidates that name neither the answer nor an earlier
  value of it: the search's hard negatives, on the question's topic, near misses included.

Each question is then answered greedily by the shipped default under each :data:`CONDITIONS`,
the notes injected exactly as given, in the given order (a memory that returns them; no note is
dropped or swapped, as the notes are the experiment). The notes are rendered by the engine's
own note template, or by the same template without ``{date}``, without ``{speaker}``, or
without both. Scored as the held-out benchmark scores: the fact, an earlier value (stale),
"I don't know." with the fact among the notes; with the other notes only, "I don't know." is
right.

Usage:
    python -m benchmarks.note_perturbations --families passing,dates,paraphrase,circle --users 2
    python -m benchmarks.note_perturbations --families handwritten-updates,handwritten-errands --users 2 --plain
    python -m benchmarks.note_perturbations --users 1 --no-tuned --adapter CANDIDATE   # a trained candidate alone
Writes benchmarks/out/note_perturbations/note_perturbations.json, .md and .png.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from benchmarks import heldout  # noqa: E402
from benchmarks.common.args import OUT as OUT_ROOT  # noqa: E402
from benchmarks.common.plotting import grouped_bars, pyplot, save  # noqa: E402
from benchmarks.common.progress import progress  # noqa: E402
from benchmarks.common.results import machine, write_results  # noqa: E402
from benchmarks.notes_apart import Pinned  # noqa: E402
from recall_core.training.families import base  # noqa: E402

OUT = OUT_ROOT / "note_perturbations"
#: Candidates the search is asked for: the default ``RecallConfig.top_k``'s order of magnitude.
SEARCHED = 16
#: Note templates by what they show: the engine's (date and speaker) and three with less.
TEMPLATES = {
    "dated": "[{date}] {speaker}: {text}",
    "undated": "{speaker}: {text}",
    "no speaker": "[{date}] {text}",
    "text only": "{text}",
}


@dataclass(frozen=True)
class Condition:
    """One way of giving the notes: how many, where the fact sits, which template."""

    name: str
    notes: int  # how many notes in all
    fact_at: str | None  # "first", "last", or None: the other notes only
    template: str = "dated"

    def arrange(self, fact: str | None, others: Sequence[str]) -> list[str] | None:
        """The notes in order, or ``None`` where there are too few other notes for this condition."""
        wanted = self.notes if self.fact_at is None else self.notes - 1
        if len(others) < wanted or (self.fact_at is not None and fact is None):
            return None
        chosen = list(others[:wanted])
        if self.fact_at == "first":
            return [fact, *chosen]
        if self.fact_at == "last":
            return [*chosen, fact]
        return chosen


CONDITIONS = (
    Condition("1 note", 1, "first"),
    Condition("2, fact first", 2, "first"),
    Condition("2, fact last", 2, "last"),
    Condition("4, fact first", 4, "first"),
    Condition("4, fact last", 4, "last"),
    Condition("6, fact first", 6, "first"),
    Condition("6, fact last", 6, "last"),
    Condition("2, fact first, undated", 2, "first", "undated"),
    Condition("2, fact first, no speaker", 2, "first", "no speaker"),
    Condition("2, fact first, text only", 2, "first", "text only"),
    Condition("2 other notes only", 2, None),
)


def split_candidates(question: base.Question, candidates: Sequence[Any]) -> tuple[Any | None, list[Any]]:
    """The best-ranked candidate naming an answer (``None``: none does), and those naming neither
    an answer nor an earlier value, in the search's order."""
    def names_any(candidate: Any, values: Sequence[str]) -> bool:
        return base.names_any(candidate.text, values)

    fact = next((c for c in candidates if names_any(c, question.answers)), None)
    others = [c for c in candidates if not names_any(c, question.answers) and not names_any(c, question.stale)]
    return fact, others


def distinct(candidates: Sequence[Any], config: Any) -> list[Any]:
    """``candidates`` in the search's order less those that repeat one before (the same text, or
    covering the same turns), as the engine passes them over: its own choice, with no cap, no
    score floor and neither rule that drops or swaps a note."""
    from recall_core.decoding.select import choose_candidates

    every = config.replace(memories=len(candidates) or 1, top_k=len(candidates) or 1, min_score=-1.0,
                           order="relevance", match_names=False, newest_wins=False, follow_updates=False)  # fmt: skip
    return choose_candidates(candidates, every)[0]


def rendered(candidate: Any, template: str, config: Any) -> str:
    """``candidate`` as the engine writes its note, with ``template`` (of :data:`TEMPLATES`)."""
    from recall_core.decoding.notes import note

    return note(candidate, config.replace(note_template=TEMPLATES[template]))


def answer(generator: Any, call: heldout.Call, notes: Sequence[str], config: Any, tokens: int) -> dict[str, Any]:
    """The greedy reply to ``call`` with exactly ``notes`` injected, scored."""
    result = generator.generate(call.messages(), memory=Pinned(notes), config=config, max_new_tokens=tokens)
    return {"reply": result.text, **base.score(call.question, result.text)}


def tally(records: Sequence[Mapping[str, Any]], model: str) -> list[dict[str, Any]]:
    """Per condition: questions, facts, stale, "I don't know." (with the fact among the notes, or
    right, with the other notes only)."""
    out = []
    for condition in CONDITIONS:
        readings = [r["readings"][model][condition.name] for r in records if condition.name in r["readings"][model]]
        out.append({"condition": condition.name, "questions": len(readings),
                    "facts": sum(x["correct"] for x in readings), "stale": sum(x["stale"] for x in readings),
                    "abstained": sum(x["abstained"] for x in readings), "fact_given": condition.fact_at is not None})  # fmt: skip
    return out


def markdown(result: Mapping[str, Any]) -> str:
    models = list(result["tallies"])
    head = " | ".join(f"{m}: facts · stale · \"I don't know.\"" for m in models)
    lines = [f"| notes | questions | {head} |", "| --- | --- |" + " --- |" * len(models)]
    for i, condition in enumerate(CONDITIONS):
        cells = []
        for m in models:
            t = result["tallies"][m][i]
            idk = f"{t['abstained']}" + ("" if t["fact_given"] else " (right)")
            cells.append(f"{t['facts']} · {t['stale']} · {idk}")
        lines.append(f"| {condition.name} | {result['tallies'][models[0]][i]['questions']} | {' | '.join(cells)} |")
    lines.append("")
    lines.append(f"Questions whose 16 candidates name no answer (left out): {result['no_fact_note']} of "
                 f"{result['memory_questions']}. Facts: the reply names the answer; stale: an earlier value "
                 "and not the answer; \"I don't know.\": with the fact among the notes (a miss), or, with the "
                 "other notes only, right.")  # fmt: skip
    return "\n".join(lines) + "\n"


def plot(result: Mapping[str, Any], path: Path) -> Path:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(10, 4.5))
    names = [c.name for c in CONDITIONS]
    shares = {model: [(r["facts"] if r["fact_given"] else r["abstained"]) / max(1, r["questions"]) for r in rows]
              for model, rows in result["tallies"].items()}  # fmt: skip
    grouped_bars(ax, names, shares, rotation=35, ha="right", fontsize=8)
    ax.set_ylabel("share answered with the fact\n(other notes only: right \"I don't know.\")")
    ax.set_title(f"The same questions, the notes perturbed · {', '.join(result['families'])}", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return save(fig, path)


def run(args: argparse.Namespace) -> dict[str, Any]:
    from recall_core import RecallGenerator
    from recall_core.memory.encoders import default_encoder
    from recall_core.types import RecallQuery

    data = heldout.asked_families(args.families, args.seed, args.users)
    models = {} if args.no_tuned else {"tuned": RecallGenerator.from_pretrained(device="cpu", tuned=True)}
    if args.plain:
        models["plain"] = RecallGenerator.from_pretrained(device="cpu", tuned=False)
    if args.adapter is not None:  # a candidate: the plain model with that adapter merged in
        models["adapter"] = RecallGenerator.from_pretrained(device="cpu", tuned=False, adapter=str(args.adapter))
    first = next(iter(models.values()))  # every model has the default RecallConfig: the search is the same
    search = heldout.RecallMethod("search", first, args.max_new_tokens, default_encoder())
    search.prepare([u for users in data.values() for u in users])
    asked = {f: [c for c in heldout.calls_of(f, data[f], args.seed) if c.question.kind == "memory"] for f in args.families}
    calls = [c for f in args.families for c in asked[f][: args.limit]]
    records, no_fact = [], 0
    total = len(calls) * len(models) * len(CONDITIONS)
    bar = progress(None, "perturbed notes", not args.no_progress, unit="reading", total=total)
    try:
        for call in calls:
            found = search.store.for_user(call.question.user_id).search(RecallQuery(call.question.text), SEARCHED)
            fact, others = split_candidates(call.question, distinct(found, first.config))
            if fact is None:
                no_fact += 1
                bar.update(len(models) * len(CONDITIONS))
                continue
            record: dict[str, Any] = {"family": call.family, "key": call.question.key, "question": call.question.text,
                                      "answers": list(call.question.answers), "readings": {}}  # fmt: skip
            for name, generator in models.items():
                readings = {}
                for condition in CONDITIONS:
                    config = generator.config.replace(memories=condition.notes, top_k=max(condition.notes, 1),
                                                      min_score=0.0, match_names=False, newest_wins=False)  # fmt: skip
                    chosen = condition.arrange(fact, others)
                    if chosen is not None:
                        notes = [rendered(c, condition.template, config) for c in chosen]
                        readings[condition.name] = {"notes": notes, **answer(generator, call, notes, config,
                                                                             args.max_new_tokens)}  # fmt: skip
                    bar.update(1)
                record["readings"][name] = readings
            records.append(record)
    finally:
        bar.close()
        search.close()
    result = {"benchmark": "note_perturbations", "seed": args.seed, "users": args.users, "families": args.families,
              "machine": machine(), "memory_questions": len(calls), "no_fact_note": no_fact,
              "tallies": {m: tally(records, m) for m in models}, "records": records}  # fmt: skip
    write_results(args.out, "note_perturbations", result, markdown(result), plot)
    return result


def main(argv: Sequence[str] | None = None) -> int:
    p = heldout.study_parser(__doc__, OUT, families="passing,dates,paraphrase,circle", users=2)
    p.add_argument("--limit", type=int, default=None, help="only the first N memory questions of each family")
    p.add_argument("--plain", action="store_true", help="the plain model too, with recall's defaults")
    p.add_argument("--adapter", type=Path, default=None,
                   help="a candidate: the plain model with this recall adapter (a `recall train --out` folder) too")
    p.add_argument("--no-tuned", action="store_true", help="leave out the shipped tuned model (with --plain or --adapter)")
    p.add_argument("--max-new-tokens", type=int, default=48)  # as benchmarks.heldout
    args = p.parse_args(argv)
    if args.no_tuned and not (args.plain or args.adapter):
        p.error("--no-tuned needs --plain or --adapter: no model would be left to read the notes")
    print(markdown(run(args)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

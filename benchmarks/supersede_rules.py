"""Looser ``newest_wins`` rules, and a mark instead of a drop, measured on the chosen notes alone.

Issue 19 (item 4) asks the memory to know when a newer turn gives a new value for something said
before: "mark the older memory as superseded, or keep the date and an '(earlier)' mark in the
note". The default ``newest_wins`` drops a chosen note that a newer candidate updates, under
narrow conditions (both name a day or a time; a sentence of the newer one says a change and names
what the question and the older note are about: :func:`recall_core.decoding.supersede.updates`).
On the hand-written families it rarely acts: people state new values in words those conditions
miss. This script asks, of the notes the default search chooses (no model is run):

1. **drop**: with a looser rule in place of ``updates``, on how many questions would the notes
   lose the answer, gain it, or name an earlier value of a changed fact and not the current one?
2. **mark**: if the older of two chosen notes were kept and marked instead (the newer one chosen
   too, so that the model reads what replaced it), would the mark fall on a note that holds an
   earlier value and not the answer (``good``), or on the only note that holds the answer
   (``harmful``: the mark would steer the model away from it)?

The rules (each also needs the newer note strictly newer, by the same speaker):

- ``newest_wins``: the engine's own :func:`~recall_core.decoding.supersede.updates`;
- ``any_change``: no day or time needed; the newer note says a change anywhere (a change word such
  as "now" or a phrase of change) and names a subject word of the question and the older note;
- ``change_phrase``: the same with the phrases of change only ("moved to", "switched", "fell through");
- ``change_with_context``: ``newest_wins`` with the subject named in the sentence that says the
  change or in the one before it.

Whether the model reads a mark at all is ``benchmarks/note_marks.py``'s question.

Usage:
    python -m benchmarks.supersede_rules --families handwritten,handwritten-changes,handwritten-revisions --users 8
    python -m benchmarks.supersede_rules --families templated,passing,people,changes,dates,paraphrase,interview,circle \
        --users 6 --seed 1000
Writes benchmarks/out/supersede_rules/supersede_rules.json and .md.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from benchmarks import heldout  # noqa: E402
from benchmarks.common.args import OUT as OUT_ROOT  # noqa: E402
from benchmarks.common.results import machine, write_results  # noqa: E402
from benchmarks.heldout_memory import memory_questions  # noqa: E402
from recall_core.config import RecallConfig  # noqa: E402
from recall_core.decoding.change_phrases import CHANGE_PHRASES  # noqa: E402
from recall_core.decoding.select import _moment, _unique, choose_candidates, eligible_candidates  # noqa: E402
from recall_core.decoding.supersede import (  # noqa: E402
    _APOSTROPHES,
    UpdateTest,
    asked_words,
    later_by_same_speaker,
    may_update,
    newest_versions,
    says_change,
    subject_words,
    updates,
)
from recall_core.memory.text.chunking import sentences  # noqa: E402
from recall_core.memory.text.lexical import query_words  # noqa: E402
from recall_core.training.families import base  # noqa: E402
from recall_core.types import MemoryCandidate, RecallQuery  # noqa: E402

OUT = OUT_ROOT / "supersede_rules"

Rule = UpdateTest


def _names_subject(newer: MemoryCandidate, older: MemoryCandidate, question: set[str]) -> bool:
    return bool(subject_words(question, older.text) & set(query_words(newer.text)))


def any_change(newer: MemoryCandidate, older: MemoryCandidate, question: set[str], when: Callable[[MemoryCandidate], Any]) -> bool:
    """``newest_wins`` without the day-or-time condition, the change said anywhere in the newer note."""
    return later_by_same_speaker(newer, older, when) and says_change(newer.text) and _names_subject(newer, older, question)


def change_phrase(newer: MemoryCandidate, older: MemoryCandidate, question: set[str], when: Callable[[MemoryCandidate], Any]) -> bool:
    """:func:`any_change` with the phrases of change only (not "now", "new", "actually")."""
    said = CHANGE_PHRASES.search(newer.text.translate(_APOSTROPHES)) is not None
    return later_by_same_speaker(newer, older, when) and said and _names_subject(newer, older, question)


def change_with_context(newer: MemoryCandidate, older: MemoryCandidate, question: set[str],
                        when: Callable[[MemoryCandidate], Any]) -> bool:  # fmt: skip
    """``newest_wins`` with the subject named in the sentence that says the change *or the one
    before it* ("They've had to put my operation back. I'm to go in on the 3rd of June, not in May
    after all."): a change is often said in the sentence after the one that names its subject."""
    if not may_update(newer, older, when):
        return False
    subject = subject_words(question, older.text)
    said = sentences(newer.text)
    return any(says_change(sentence) and subject & set(query_words(" ".join(said[max(0, i - 1): i + 1])))
               for i, sentence in enumerate(said))  # fmt: skip


RULES: dict[str, Rule] = {"newest_wins": updates, "any_change": any_change, "change_phrase": change_phrase,
                          "change_with_context": change_with_context}  # fmt: skip


def holds(notes: Iterable[MemoryCandidate], values: Sequence[str]) -> bool:
    """Whether one of ``notes`` names one of ``values`` (the families' own test of an answer)."""
    text = "\n".join(n.text for n in notes)
    return base.names_any(text, values)


def dropped(candidates: Sequence[MemoryCandidate], question: str, rule: Rule, config: RecallConfig) -> list[MemoryCandidate]:
    """The notes chosen with ``rule`` in place of ``newest_wins``' own test, in the engine's order of
    steps (chosen in rank order, swapped, repeats dropped; the final sort by date does not matter here)."""
    chosen, _ = choose_candidates(candidates, config.replace(newest_wins=False, order="relevance"), question=question)
    return _unique(newest_versions(chosen, eligible_candidates(candidates, config), question, _moment, rule=rule))


def marks(chosen: Sequence[MemoryCandidate], question: str, rule: Rule) -> list[MemoryCandidate]:
    """The chosen notes that another chosen note updates by ``rule``: those a mark would fall on.

    Only pairs inside ``chosen`` (the default's notes, after its own ``newest_wins``) count: a mark
    can only point the model to a newer version it reads in the same block. So these are not the
    same events as :func:`dropped`'s, which looks for the newer version among every eligible candidate."""
    words = asked_words(question)
    return [o for o in chosen if any(rule(n, o, words, _moment) for n in chosen if n is not o)]


def count(question: base.Question, default: Sequence[MemoryCandidate], notes: Sequence[MemoryCandidate],
          marked: Sequence[MemoryCandidate], tally: Counter) -> None:  # fmt: skip
    """Add one memory question's figures to ``tally``."""
    before, after = holds(default, question.answers), holds(notes, question.answers)
    tally["questions"] += 1
    tally["holds"] += after
    tally["changed"] += {n.id for n in notes} != {n.id for n in default}
    tally["lost"] += before and not after
    tally["gained"] += after and not before
    if question.stale:
        tally["changed_facts"] += 1
        tally["earlier_only"] += holds(notes, question.stale) and not after
    for note in marked:
        answer = holds([note], question.answers)
        elsewhere = holds([n for n in default if n is not note], question.answers)
        earlier = bool(question.stale) and holds([note], question.stale)
        tally["marked"] += 1
        tally["mark_good" if earlier and not answer else "mark_harmful" if answer and not elsewhere
              else "mark_answer_elsewhere" if answer else "mark_neutral"] += 1  # fmt: skip


def measure(data: dict[str, Sequence[base.User]], encoder: Any, show: bool = True) -> dict[str, dict[str, Counter]]:
    """Per rule and family, the tally of :func:`count` over every memory question."""
    config = RecallConfig()
    out: dict[str, dict[str, Counter]] = {name: {f: Counter() for f in data} for name in RULES}
    for family, memory, q in memory_questions(data, encoder, show):
        candidates = list(memory.search(RecallQuery(text=q.text), config.top_k))
        default, _ = choose_candidates(candidates, config, question=q.text)
        for name, rule in RULES.items():
            notes = dropped(candidates, q.text, rule, config)
            count(q, default, notes, marks(default, q.text, rule), out[name][family])
    return out


def markdown(result: dict[str, Any]) -> str:
    lines = ["| rule | notes hold the answer | notes changed | answer lost | answer gained | changed facts: earlier value only "
             "| marks | marks: earlier value, not the answer | marks: the only note with the answer | marks: answer in another note too | marks: neither |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]  # fmt: skip
    for name, t in result["all"].items():
        lines.append(f"| `{name}` | {t['holds']} / {t['questions']} | {t['changed']} | {t['lost']} | {t['gained']} "
                     f"| {t['earlier_only']} / {t['changed_facts']} | {t['marked']} | {t['mark_good']} | {t['mark_harmful']} "
                     f"| {t['mark_answer_elsewhere']} | {t['mark_neutral']} |")  # fmt: skip
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    from recall_core.memory.encoders import default_encoder

    args = heldout.study_parser(__doc__, OUT).parse_args(argv)
    data = heldout.asked_families(args.families, args.seed, args.users)
    by_rule = measure(data, default_encoder(), not args.no_progress)
    every = {name: sum(per.values(), Counter()) for name, per in by_rule.items()}
    keys = ("questions", "holds", "changed", "lost", "gained", "changed_facts", "earlier_only", "marked", "mark_good",
            "mark_harmful", "mark_answer_elsewhere", "mark_neutral")  # fmt: skip
    result = {"benchmark": "supersede_rules", "seed": args.seed, "users": args.users, "families": args.families,
              "machine": machine(), "all": {n: {k: t[k] for k in keys} for n, t in every.items()},
              "per_family": {n: {f: {k: t[k] for k in keys} for f, t in per.items()} for n, per in by_rule.items()}}  # fmt: skip
    text = markdown(result)
    print(text)
    write_results(args.out, "supersede_rules", result, text)
    return result


if __name__ == "__main__":
    main()

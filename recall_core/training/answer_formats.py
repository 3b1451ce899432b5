"""A caller's answer format: the question asks for one, and the reply to learn keeps it.

Why: the recall-tuned default learned short answers that use a note ("Your cat is called X."),
and with them it stopped following a format the caller asks for. Given two options and asked to
pick one, the plain model writes a letter; the tuned default answered the question in its own
words on 21 and 28 of 48 LoCoMo category-5 questions (docs/benchmarks/locomo.md), which scores
nothing whatever the notes hold, and it picked the "no information" option only when it happened
to write its words. A memory question here is sometimes asked with a format:

* **options** (:func:`with_options`): two to four answers labelled ``(a)``, ``A.``, ``1)``...,
  inline or one per line, after or before an instruction to reply with the label. The options are
  the right value when a note holds it, values the same kind of fact has for other users (a
  cat's name for a cat's name), and often an option that says it was never said ("Not
  mentioned", "None of these"...). The reply is the right option's label and words; when no note
  holds the answer, the option that says so (always among the options then). The right value
  may be among the options too: an option is not evidence, a note is;
* **short** (:func:`short_answer`): "Just the answer, please." The reply is the value alone.

The wordings are written here for the purpose, plain English in several shapes; none is taken
from LoCoMo (its option "No information available" and its instruction sentence are left out on
purpose, so that LoCoMo stays a check of the skill, not of the wording).

Measured (docs/benchmarks/locomo.md): a candidate trained with ``--format-share 0.25`` picked an
option on every category-5 question, but the deed its notes told (someone else's) on most, so
the shipped recipe keeps the share at 0.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

from recall_core.training.families import base
from recall_core.training.family_data import UNKNOWN_REPLY, Asked

#: Labels of up to four options, by style.
LABELS: tuple[tuple[str, ...], ...] = (
    ("(a)", "(b)", "(c)", "(d)"),
    ("a)", "b)", "c)", "d)"),
    ("A.", "B.", "C.", "D."),
    ("A)", "B)", "C)", "D)"),
    ("1.", "2.", "3.", "4."),
    ("(1)", "(2)", "(3)", "(4)"),
)
#: An option that says the answer was never given.
NOT_SAID = (
    "Not mentioned", "None of these", "I never said", "Unknown", "Not stated", "Can't tell from what I said",
    "Nothing was said about it", "You weren't told", "Not in our chats", "No idea: never came up",
)  # fmt: skip
#: What the caller asks for; ``{kind}`` is "letter" or "number".
ASK_LABEL = (
    "Reply with the {kind} of the right option.", "Answer with the {kind} only.", "Which one? Give me its {kind}.",
    "Pick one and write its {kind}.", "Choose the correct option.", "One of these is right.",
    "Just the {kind}, please.", "Tell me which option, by {kind}.",
)  # fmt: skip
ASK_SHORT = (
    "Just the answer, please.", "One or two words is fine.", "Keep it short: only the answer.",
    "No full sentence needed, only the answer.", "Answer in as few words as you can.",
)  # fmt: skip


def distractor_pool(items: Sequence[Asked]) -> dict[tuple[str, str], list[str]]:
    """The values each kind of fact takes across a family's users: ``{(family, fact kind): [values]}``,
    where the kind is the fact id's last part ("stepdad.birthday" -> "birthday")."""
    pool: dict[tuple[str, str], list[str]] = {}
    for item in items:
        if item.question.answers:
            values = pool.setdefault((item.family, _kind_of(item.question.fact)), [])
            if item.question.answers[0] not in values:
                values.append(item.question.answers[0])
    return pool


def formatted(item: Asked, holds: bool, reply: str, pool: dict[tuple[str, str], list[str]], rng: random.Random) -> tuple[str, str]:
    """``(question, reply)`` for ``item`` asked with options (70%) or for the bare answer; the
    question as it was and ``reply`` unchanged when the item has nothing to build options from."""
    if rng.random() < 0.7:
        return with_options(item, holds, reply, pool, rng)
    return short_answer(item, holds, rng)


def with_options(item: Asked, holds: bool, reply: str, pool: dict[tuple[str, str], list[str]], rng: random.Random) -> tuple[str, str]:
    """The question with two to four labelled options and an instruction to pick one (module docstring)."""
    question = item.question
    value = question.answers[0] if holds and question.answers else None
    wrong = _distractors(item, pool, rng)
    count = rng.choice((2, 2, 3, 4))
    not_said = rng.choice(NOT_SAID) if not holds or rng.random() < 0.5 else None
    options = ([value] if value else []) + ([not_said] if not_said else [])
    if not holds and question.answers and rng.random() < 0.3:
        options.append(question.answers[0])  # shown, but no note says it: still not the answer
    options += wrong[: max(0, count - len(options))]
    if len(options) < 2 or (value is None and not_said is None):
        return question.text, reply
    rng.shuffle(options)
    labels = rng.choice(LABELS)[: len(options)]
    kind = "number" if any(ch.isdigit() for ch in labels[0]) else "letter"
    ask = rng.choice(ASK_LABEL).format(kind=kind)
    listed = [f"{label} {option}" for label, option in zip(labels, options, strict=True)]
    shown = "\n".join(listed) if rng.random() < 0.4 else " ".join(listed)
    text = f"{question.text} {shown}. {ask}" if rng.random() < 0.7 else f"{ask} {question.text}\n{shown}"
    right = value if value is not None else not_said
    return text, f"{labels[options.index(right)]} {right}."


def short_answer(item: Asked, holds: bool, rng: random.Random) -> tuple[str, str]:
    """The question with a request for the bare answer: the value alone, or "I don't know."."""
    question = item.question
    text = f"{question.text} {rng.choice(ASK_SHORT)}"
    if holds and question.answers:
        return text, f"{question.answers[0][:1].upper()}{question.answers[0][1:]}."
    return text, UNKNOWN_REPLY


def _distractors(item: Asked, pool: dict[tuple[str, str], list[str]], rng: random.Random) -> list[str]:
    """The question's decoys first (what the notes say of someone else: the near miss a reader
    must not take), then other users' values of the same kind of fact; none naming one of this
    question's values."""
    own = (*item.question.answers, *item.question.stale)
    kind = (item.family, _kind_of(item.question.fact))
    decoys = [v for v in item.question.decoys if not any(_same(v, o) for o in own)]
    values = [v for v in pool.get(kind, []) if not any(_same(v, o) for o in (*own, *decoys))]
    return decoys + rng.sample(values, min(3, len(values)))


def _same(a: str, b: str) -> bool:
    return base.names(a, b) or base.names(b, a)


def _kind_of(fact: str) -> str:
    return re.split(r"[.:]", fact)[-1]

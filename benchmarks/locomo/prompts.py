"""What each LoCoMo question asks the model: the official protocol's wording, and the memory as text.

The system prompt names the two speakers; category 2 gets a hint to answer with a date,
category 5 an (a)/(b) choice. (b) stuffs the most recent turns that fit a token budget, (c)
the retrieved memories as dated lines; both go where (d) writes its notes: before the
question, in the user turn.
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from benchmarks.common.locomo_data import Conversation, DialogTurn, Question
from recall_core.memory.text.composition import day_label

SYSTEM = (
    "You answer questions about a long conversation between {a} and {b}. "
    "Write a short answer in a few words, using exact words from the conversation when possible."
)
#: Category 2 gets the official protocol's hint to answer with a date.
TEMPORAL_HINT = " Use the dates of the conversation to answer with an approximate date."
NO_INFO = "No information available"


@dataclass(frozen=True)
class Prompt:
    """What one question asks the model: system text, user turn, and category-5 options."""

    system: str
    user: str
    options: dict[str, str] | None = None


def build_prompt(question: Question, conversation: Conversation, seed: int, no_info_place: str | None = None) -> Prompt:
    """The official protocol's wording: a date hint for category 2, an (a)/(b) choice for category 5.

    The category-2 hint follows the question. The order of the two category-5 options is drawn per question from ``seed`` (the official
    code draws it at random), unless ``no_info_place`` (``"a"`` or ``"b"``) says where "No information
    available" goes: asked in both places, a model that always writes the same letter scores 0.5
    whatever the draw.
    """
    if no_info_place not in (None, "a", "b"):
        raise ValueError(f"no_info_place must be 'a', 'b' or None (drawn), not {no_info_place!r}")
    system = SYSTEM.format(a=conversation.speaker_a, b=conversation.speaker_b)
    if question.category == 2:
        # After the question, not in the system prompt: every prompt of a conversation then
        # starts alike, which (b)'s shared history cache needs.
        return Prompt(system, question.question + TEMPORAL_HINT)
    if question.category != 5:
        return Prompt(system, question.question)
    other = question.adversarial_answer or question.answer or "Yes"
    rng = random.Random(f"{seed}:{question.key}")
    first = rng.random() < 0.5 if no_info_place is None else no_info_place == "a"
    options = {"a": NO_INFO, "b": other} if first else {"a": other, "b": NO_INFO}
    user = f"{question.question} (a) {options['a']} (b) {options['b']}. Select the correct answer by writing (a) or (b)."
    return Prompt(system, user, options)


def final_answer(text: str, options: dict[str, str] | None) -> str:
    """The first non-empty line; for category 5 the option it names ("(a)" anywhere in that line
    picks a, else "(b)" picks b), else its own text.

    Not the official code's mapping (:func:`official_answer`), which maps only a reply that is
    exactly a letter or "(a)"/"(b)" and scores any longer one on its text alone (until 2026-12-07
    this docstring said it was the official mapping: a reviewer). Both are reported.
    """
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    answer = lines[0] if lines else ""
    if options is None:
        return answer
    lowered = answer.lower()
    if "(a)" in lowered:
        return options["a"]
    if "(b)" in lowered:
        return options["b"]
    return answer


def official_answer(text: str, options: dict[str, str] | None) -> str:
    """The answer as LoCoMo's own evaluation maps it (``get_cat_5_answer``): for category 5, the
    whole reply, stripped and lower-cased, is option a when it is one character holding "a" (else
    b), or three characters holding "(a)" (else b); any other reply is its own text."""
    if options is None:
        return final_answer(text, None)
    reply = text.strip().lower()
    if len(reply) == 1:
        return options["a"] if "a" in reply else options["b"]
    if len(reply) == 3:
        return options["a"] if "(a)" in reply else options["b"]
    return reply


def turn_line(turn: DialogTurn) -> str:
    return f"{turn.speaker}: {turn.text}" + (f" [shares an image: {turn.caption}]" if turn.caption else "")


def history_block(conversation: Conversation, tokenizer: Any, budget: int) -> tuple[str, int]:
    """The most recent turns whose text fits ``budget`` tokens, by session with its date.

    Returns the block and how many turns it holds. Counted with the model's tokenizer.
    """
    lines: list[str] = []
    used, kept, session = 0, 0, None
    for turn in reversed(conversation.turns):
        line = turn_line(turn)
        cost = len(tokenizer(line + "\n", add_special_tokens=False).input_ids)
        header_cost = 0 if session == turn.session else 12
        if used + cost + header_cost > budget:
            break
        if session is not None and session != turn.session:
            lines.append(f"DATE: {day_label(_date_of(conversation, session))}")
        lines.append(line)
        used, kept, session = used + cost + header_cost, kept + 1, turn.session
    if session is not None:
        lines.append(f"DATE: {day_label(_date_of(conversation, session))}")
    return "\n".join(reversed(lines)), kept


def _date_of(conversation: Conversation, session: int) -> str:
    return next(t.date for t in conversation.turns if t.session == session)


def excerpt_block(candidates: Sequence[Any]) -> str:
    """Retrieved memories as dated lines, in conversation order."""
    def order(c: Any) -> tuple[int, int]:
        meta = c.metadata
        session = str(meta.get("session_id", "session_0")).rsplit("_", 1)[-1]
        return (int(session) if session.isdigit() else 0, int(meta.get("turn_index", 0)))

    return "\n".join(c.text for c in sorted(candidates, key=order))


#: (d)'s notes where (c) writes its excerpts: before the question, in the user turn.
CONTEXT_TEMPLATE = "Conversation:\n{text}\n\nQuestion: "


def context_user(context: str, question_text: str) -> str:
    return CONTEXT_TEMPLATE.format(text=context) + question_text


def messages_for(prompt: Prompt, user: str | None = None) -> list[dict[str, str]]:
    return [{"role": "system", "content": prompt.system}, {"role": "user", "content": user or prompt.user}]


def history_budget(args: argparse.Namespace, generator: Any) -> int:
    """(b)'s history tokens: ``--history-tokens``, at most the context window less room for the question and answer."""
    room = generator.context_window - args.max_new_tokens - 200
    return room if args.history_tokens is None else min(args.history_tokens, room)

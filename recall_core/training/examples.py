"""Training examples for recall tuning, built through the loop's own injection path.

Each example is one reply to learn, as token ids and labels (``-100`` where nothing is
learned). The notes a tuned model reads are made exactly as the decode loop makes them at a
``<recall>`` in ``tokens`` mode (:func:`recall_core.decoding.notes.memory_token_ids`, the same
template, note format and order), and they sit where the loop puts them, so what the model
learns from is what it will see:

* ``recall``: a question about a fact the user stated; the reply starts with ``<recall>``, the
  notes follow (not learned: the loop injects them), then an answer that uses them.
* ``unknown``: the same, but the notes do not hold the fact: the answer says so.
* ``general``: a prompt that needs no memory (:mod:`recall_core.training.prompts`); the
  reply is the base model's own greedy reply (self-distillation) and starts without ``<recall>``.
* ``auto-*``: the same three with the notes already in the system message, where
  ``recall_policy="auto"`` puts them, so a tuned model also reads notes it did not ask for.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from recall_core.config import RecallConfig
from recall_core.decoding.notes import memory_token_ids, plain_ids
from recall_core.prompt import apply_chat_template, chat_prompt_ids
from recall_core.tokens import RECALL_TOKEN
from recall_core.training import conversations as conv
from recall_core.types import MemoryCandidate

IGNORE = -100
#: What a tuned model says when its notes do not hold what was asked (the RAG instruction's words).
UNKNOWN_REPLY = "I don't know."
KINDS = ("recall", "unknown", "general", "auto-recall", "auto-unknown", "auto-general")


@dataclass(frozen=True)
class Example:
    """One reply to learn: ``labels[i]`` is the id to predict at ``i`` (``-100``: not learned).

    ``labels`` are aligned with ``input_ids`` (not shifted): the trainer shifts them.
    """

    kind: str
    input_ids: list[int]
    labels: list[int]
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if len(self.input_ids) != len(self.labels):
            raise ValueError("input_ids and labels must have the same length")


@dataclass(frozen=True)
class Mixture:
    """How many examples of each kind ``build_examples`` makes (see the module docstring)."""

    recall: int = 900
    unknown: int = 220
    general: int = 420
    auto_recall: int = 260
    auto_unknown: int = 60
    auto_general: int = 140

    def counts(self) -> dict[str, int]:
        return {"recall": self.recall, "unknown": self.unknown, "general": self.general,
                "auto-recall": self.auto_recall, "auto-unknown": self.auto_unknown,
                "auto-general": self.auto_general}  # fmt: skip

    def __post_init__(self) -> None:
        for kind, count in self.counts().items():
            if not isinstance(count, int) or count < 0:
                raise ValueError(f"mixture count for {kind!r} must be an int >= 0, got {count!r}")


# --------------------------------------------------------------------------- answers
_SWAPS = {
    "i'm": "you're", "i've": "you've", "i'll": "you'll", "i'd": "you'd", "i am": "you are", "i was": "you were",
    "i": "you", "me": "you", "my": "your", "mine": "yours", "myself": "yourself", "we're": "you're",
    "we've": "you've", "we": "you", "us": "you", "our": "your", "ours": "yours",
}
_SWAP = re.compile(r"\b(" + "|".join(sorted((re.escape(k) for k in _SWAPS), key=len, reverse=True)) + r")\b", re.I)


def second_person(text: str) -> str:
    """``"I live in Porto."`` -> ``"You live in Porto."``: a user's words said back to them."""
    swapped = _SWAP.sub(lambda m: _SWAPS[m.group(0).lower()], text)
    return swapped[:1].upper() + swapped[1:]


def answer_from(statement: str, value: str) -> str:
    """A short reply that names ``value``: the clause of the user's ``statement`` that holds it, said back.

    ``"Big news: we moved to Ghent."`` -> ``"You moved to Ghent."``. Falls back to the value
    alone when no clause names it (scored with :func:`conversations.contains`).
    """
    clauses = [c.strip() for c in re.split(r"[:;!?]\s+|,\s+|\.\s+", statement) if c.strip()]
    for clause in clauses:
        reply = second_person(clause.rstrip(".!"))
        if conv.contains(reply, value):
            return reply + "."
    return f"{value}."


# --------------------------------------------------------------------------- notes
def candidate(turn: conv.Turn, user_id: str) -> MemoryCandidate:
    """A generated turn as the memory store returns it (``unit="turn"``): text, role and timestamp."""
    return MemoryCandidate(
        id=f"{user_id}:{turn.session}:{turn.index}", score=1.0, text=turn.content,
        metadata={"role": turn.role, "timestamp": turn.date, "session_id": f"session-{turn.session}",
                  "turn_index": turn.index},
    )  # fmt: skip


def _ordered(turns: list[conv.Turn], order: str, first: conv.Turn | None) -> list[conv.Turn]:
    if order == "relevance":
        return sorted(turns, key=lambda t: t is not first)
    newest = order == "newest_first"
    return sorted(turns, key=lambda t: (t.date, t.index), reverse=newest)


def _notes_for(rng: random.Random, user: conv.User, question: conv.Question, holds_answer: bool,
               memories: int) -> tuple[list[conv.Turn], conv.Turn | None]:
    """The turns a search for ``question`` would plausibly return: the evidence (when
    ``holds_answer``) and near misses (the stale version, a look-alike, another fact)."""
    evidence = next(t for t in user.turns if (t.session, t.index) == question.evidence)
    stale = [t for t in user.turns if t.fact == question.slot and t.version == 1 and t is not evidence]
    alike = [t for t in user.turns if t.distractor == question.slot]
    others = [t for t in user.turns if t.role == "user" and t.fact not in (None, question.slot)]
    small = [t for t in user.turns if t.role == "assistant" and t.index > 1]
    pool: list[conv.Turn] = []
    for group, chance in ((stale, 0.8), (alike, 0.6), (small, 0.15)):
        if group and rng.random() < chance:
            pool.append(rng.choice(group))
    rng.shuffle(others)
    pool += others
    if not holds_answer:
        # Without the fact: its older version must not be offered as the answer either.
        pool = [t for t in pool if t.fact != question.slot]
    chosen = ([evidence] if holds_answer else []) + [t for t in pool if t is not evidence]
    count = memories if rng.random() < 0.85 else max(1, memories - 1)
    return chosen[:count], evidence if holds_answer else None


# --------------------------------------------------------------------------- builder
class ExampleBuilder:
    """Renders examples for one tokenizer and recall configuration.

    Args:
        tokenizer: the model's tokenizer, with ``<recall>`` (``recall_core.add_recall_tokens``)
            and a chat template.
        config: the :class:`RecallConfig` whose template, note format, order and number of
            memories the notes follow (default: the defaults).
        system_prompt: the system message of every example (the one ``recall_policy="model"``
            and ``"auto"`` put first).
    """

    def __init__(self, tokenizer: Any, config: RecallConfig | None = None, system_prompt: str | None = None) -> None:
        if not getattr(tokenizer, "chat_template", None):
            raise ValueError("the tokenizer has no chat template: recall training needs a chat model "
                             "(its replies are learned after the template's assistant header)")  # fmt: skip
        if RECALL_TOKEN not in tokenizer.get_vocab():
            raise ValueError(f"the tokenizer has no {RECALL_TOKEN} token: call recall_core.add_recall_tokens first")
        self.tokenizer = tokenizer
        self.config = config or RecallConfig()
        self.system_prompt = self.config.system_prompt if system_prompt is None else system_prompt
        self.recall_id = tokenizer.convert_tokens_to_ids(RECALL_TOKEN)
        self.end_ids = self._end_ids()

    def _end_ids(self) -> list[int]:
        """What ends a reply in this template (``<|im_end|>``...): the ids between a reply's text
        and the next message, found by rendering a reply."""
        messages = [{"role": "user", "content": "x"}, {"role": "assistant", "content": "Zq"}]
        text = self.tokenizer.apply_chat_template(messages, tokenize=False)
        after = text[text.rindex("Zq") + 2 :]
        eos = self.tokenizer.eos_token or ""
        end = after[: after.index(eos) + len(eos)] if eos and eos in after else after.rstrip("\n")
        # The end is the template's own special tokens: tokenized as such, not split into text.
        return list(self.tokenizer(end, add_special_tokens=False).input_ids) if end else []

    def _reply_ids(self, reply: str | Sequence[int], truncated: bool) -> list[int]:
        """A reply's ids (text, or ids as the base model generated them), then the template's
        end of turn unless the reply was cut at the length limit."""
        ids = plain_ids(self.tokenizer, reply) if isinstance(reply, str) else list(reply)
        return ids if truncated else ids + self.end_ids

    def _messages(self, question: str) -> list[dict[str, str]]:
        return [{"role": "system", "content": self.system_prompt}, {"role": "user", "content": question}]

    def block(self, notes: Sequence[MemoryCandidate]) -> list[int]:
        """The ids the loop injects for ``notes`` (``tokens`` mode)."""
        return memory_token_ids(self.tokenizer, list(notes), self.config)

    def model_example(self, kind: str, question: str, reply: str | Sequence[int], notes: Sequence[MemoryCandidate] | None,
                      meta: dict[str, Any] | None = None, truncated: bool = False) -> Example:
        """The model asks: the reply starts with ``<recall>`` when ``notes`` is given (``recall_policy="model"``)."""
        prompt = apply_chat_template(self.tokenizer, self._messages(question))
        reply_ids = self._reply_ids(reply, truncated)
        if notes is None:
            return Example(kind, prompt + reply_ids, [IGNORE] * len(prompt) + reply_ids, meta or {})
        block = self.block(notes)
        ids = [*prompt, self.recall_id, *block, *reply_ids]
        labels = [IGNORE] * len(prompt) + [self.recall_id] + [IGNORE] * len(block) + reply_ids
        return Example(kind, ids, labels, meta or {})

    def auto_example(self, kind: str, question: str, reply: str | Sequence[int], notes: Sequence[MemoryCandidate],
                     meta: dict[str, Any] | None = None, truncated: bool = False) -> Example:
        """The notes are in the system message already (``recall_policy="auto"``, position ``"system"``)."""
        marked = chat_prompt_ids(self.tokenizer, self._messages(question), "auto", "system", self.system_prompt)
        at = marked.index(self.recall_id) + 1
        prompt = [*marked[:at], *self.block(notes), *marked[at:]]
        reply_ids = self._reply_ids(reply, truncated)
        return Example(kind, prompt + reply_ids, [IGNORE] * len(prompt) + reply_ids, meta or {})


def memory_examples(builder: ExampleBuilder, users: Sequence[conv.User], kind: str, count: int,
                    rng: random.Random) -> list[Example]:
    """``count`` examples of ``kind`` (``recall``/``unknown``, ``auto-`` or not) from the users' questions."""
    pairs = [(u, q) for u in users for q in u.questions]
    if not pairs:
        raise ValueError("no generated questions to build memory examples from")
    holds = kind.endswith("recall")
    out: list[Example] = []
    while len(out) < count:
        user, question = pairs[rng.randrange(len(pairs))]
        turns, evidence = _notes_for(rng, user, question, holds, builder.config.memories)
        if not turns:
            continue
        turns = _ordered(turns, builder.config.order, evidence)
        notes = [candidate(t, user.user_id) for t in turns]
        reply = answer_from(evidence.content, question.answer) if evidence is not None else UNKNOWN_REPLY
        meta = {"question": question.text, "answer": question.answer, "user_id": user.user_id}
        make = builder.auto_example if kind.startswith("auto-") else builder.model_example
        out.append(make(kind, question.text, reply, notes, meta))
    return out


def general_examples(builder: ExampleBuilder, replies: Sequence[tuple[str, Sequence[int], bool]], kind: str, count: int,
                     rng: random.Random, users: Sequence[conv.User] = ()) -> list[Example]:
    """``count`` examples that need no memory, from ``(prompt, base reply ids, reply was cut)`` triples.

    ``auto-general`` puts two notes of a generated user before the prompt (the search finds
    something whatever is asked): the reply stays the base model's.
    """
    if not replies:
        raise ValueError("no base replies to build general examples from")
    out: list[Example] = []
    order = list(range(len(replies)))
    while len(out) < count:
        rng.shuffle(order)
        for i in order[: count - len(out)]:
            prompt, reply, cut = replies[i]
            meta = {"question": prompt}
            if kind == "auto-general":
                user = users[rng.randrange(len(users))]
                turns = rng.sample([t for t in user.turns if t.role == "user"], builder.config.memories)
                notes = [candidate(t, user.user_id) for t in _ordered(turns, builder.config.order, None)]
                out.append(builder.auto_example(kind, prompt, reply, notes, meta, truncated=cut))
            else:
                out.append(builder.model_example(kind, prompt, reply, None, meta, truncated=cut))
    return out

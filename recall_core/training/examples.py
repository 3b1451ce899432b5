"""Training examples for recall tuning, built through the loop's own injection path.

Each example is one reply to learn, as token ids and labels (``-100`` where nothing is
learned). The notes a tuned model reads are made exactly as the decode loop makes them at a
``<recall>`` in ``tokens`` mode (:func:`recall_core.decoding.notes.memory_token_ids`, the same
template, note format and order), and they sit where the loop puts them, so what the model
learns from is what it will see:

* ``recall``: a question about the user; the reply starts with ``<recall>`` (or writes it after
  a few words: a mid-answer recall), the notes follow (not learned: the loop injects them), then
  a reply that uses them, or says it does not know when they do not hold the answer;
* ``auto``: the same with the notes already in the system message, where
  ``recall_policy="auto"`` puts them, so a tuned model also reads notes it did not ask for;
* ``general`` / ``auto-general``: a prompt that needs no memory (:mod:`recall_core.training.prompts`);
  the reply is the base model's own greedy reply under the same system message
  (self-distillation), and starts without ``<recall>``.

The questions, notes and replies come from :mod:`recall_core.training.family_data`.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from recall_core.config import NoteOrder, RecallConfig
from recall_core.decoding.notes import block_ids, memory_token_ids, plain_ids
from recall_core.memory.text.composition import speaker_of
from recall_core.prompt import chat_prompt_ids
from recall_core.tokens import RECALL_TOKEN
from recall_core.training.families import base
from recall_core.training.family_data import UNKNOWN_REPLY, Asked, messages_for
from recall_core.types import MemoryCandidate

IGNORE = -100
KINDS = ("recall", "auto", "general", "auto-general")


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


#: ``Mixture.chat_openings``: which base replies to a user's own messages are learned.
CHAT_OPENINGS = ("any", "not-abstention")


@dataclass(frozen=True)
class Mixture:
    """How the examples are made: how often each question is used, under which policy, and how
    many general prompts there are (see the module docstring)."""

    repeats: int = 2  # examples per question (each with its own system message and policy)
    auto_share: float = 0.35  # of memory examples: the notes in the system message
    mid_share: float = 0.15  # of the model-policy ones: <recall> after a few words of the reply
    general: int = 500
    auto_general: int = 150
    # Examples of a user telling something about themselves (``prompts.statement_prompts``): the
    # base model's acknowledgement is learned, half with notes in the system message.
    statements: int = 0
    # Examples of a user's own messages from the training families' conversations (one to three
    # turns said together, ``family_data.chat_messages``), answered with the base model's reply,
    # half with notes in the system message: a user's turn is often several sentences with a
    # request in it, and the tuned model answered such turns with one word taken from them.
    chat: int = 0
    # Which of those base replies are learned: "any"; or "not-abstention", only replies that do not
    # open with the abstention's first token (``decoding.abstain.abstention_opening``, "I" in
    # SmolLM2's vocabulary). The base model opens 87 of 200 with "I'm sorry ..." and a candidate
    # trained on them gave that opening more probability after notes, past ``abstain_threshold``
    # (docs/benchmarks/recall-tuning.md, the ``--chat 200`` candidate). Messages are drawn until
    # ``chat`` replies are kept, or the messages run out.
    chat_openings: str = "any"
    vary_share: float = 0.5  # of memory examples: notes varied (count, place, irrelevant only, undated)
    fill_share: float = 0.75  # of search misses: the deeper note naming the answer shown instead (family_data.asked)
    unknown_share: float = 1.0  # of memory examples whose reply is "I don't know.": the share kept
    passing_share: float = 0.0  # of memory examples whose notes hold the answer: the fact buried in small talk (in_passing)
    empty_share: float = 0.0  # of memory examples: no notes at all (a new user; a search that found nothing)
    # Of memory examples with dated notes: the notes oldest first, under a header that says so. The
    # model otherwise learns to read the note nearest the question, whatever its date.
    oldest_share: float = 0.0
    # Of memory examples: the question asks for an answer format (labelled options to pick from,
    # or the bare answer) and the reply keeps it (:mod:`recall_core.training.answer_formats`).
    format_share: float = 0.0
    # Of memory examples: notes that carry a chat assistant's long replies around the user's words
    # (``with_replies``), as notes of a chat with an assistant that answers at length do.
    reply_share: float = 0.0
    # Of memory examples whose notes hold the answer: the answering line said together with the
    # user's other statements of fact (``in_company``), so that a line holds values not asked for.
    company_share: float = 0.0
    # Of memory examples whose notes hold the answer: one more example of the same question with
    # every note that names its current or an earlier value taken out, so that what is left is the
    # search's near misses (another person's job, another pet's name), and the reply is "I don't
    # know." (``near_misses``). Kept whatever ``unknown_share`` says: these are the hard negatives.
    near_miss_share: float = 0.0
    # Of memory examples whose notes hold the answer: the answering note shown among one to five of
    # the same user's memories nearest the question that do not hold it (``among_neighbours``), at
    # any place, so that the fact is read second or sixth behind near misses, not only first.
    neighbour_share: float = 0.0

    def __post_init__(self) -> None:
        for name in ("repeats", "general", "auto_general", "statements", "chat"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"mixture {name} must be an int >= 0, got {value!r}")
        if self.chat_openings not in CHAT_OPENINGS:
            raise ValueError(f"mixture chat_openings must be one of {', '.join(CHAT_OPENINGS)}, got {self.chat_openings!r}")
        for name in ("auto_share", "mid_share", "vary_share", "fill_share", "unknown_share", "passing_share",
                     "empty_share", "oldest_share", "format_share", "reply_share", "company_share",
                     "near_miss_share", "neighbour_share"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not 0 <= value <= 1:
                raise ValueError(f"mixture {name} must be in [0, 1], got {value!r}")


# --------------------------------------------------------------------------- builder
class ExampleBuilder:
    """Renders examples for one tokenizer and recall configuration.

    Args:
        tokenizer: the model's tokenizer, with ``<recall>`` (``recall_core.add_recall_tokens``)
            and a chat template.
        config: the :class:`RecallConfig` whose template, note format and order the notes follow,
            and whose ``system_prompt`` goes first when a chat has no system message (as
            ``recall_policy="model"`` and ``"auto"`` do).
    """

    def __init__(self, tokenizer: Any, config: RecallConfig | None = None) -> None:
        if not getattr(tokenizer, "chat_template", None):
            raise ValueError("the tokenizer has no chat template: recall training needs a chat model "
                             "(its replies are learned after the template's assistant header)")  # fmt: skip
        if RECALL_TOKEN not in tokenizer.get_vocab():
            raise ValueError(f"the tokenizer has no {RECALL_TOKEN} token: call recall_core.add_recall_tokens first")
        self.tokenizer = tokenizer
        self.config = config or RecallConfig()
        self.system_prompt = self.config.system_prompt
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

    def block(self, notes: Sequence[MemoryCandidate], order: NoteOrder | None = None) -> list[int]:
        """The ids the loop injects for ``notes`` (``tokens`` mode); for none, what it injects when
        the model's own ``<recall>`` finds nothing (``config.empty_notes``).

        ``order`` is what the block's header says of the notes' order (default: ``config.order``);
        the notes are taken as given, already in that order.
        """
        config = self.config if order is None or order == self.config.order else self.config.replace(order=order)
        if not notes and config.empty_notes is not None:
            return block_ids(self.tokenizer, config.empty_notes, config)
        return memory_token_ids(self.tokenizer, list(notes), config)

    def model_example(self, kind: str, messages: Sequence[Mapping[str, str]], reply: str | Sequence[int],
                      notes: Sequence[MemoryCandidate] | None, meta: dict[str, Any] | None = None,
                      truncated: bool = False, lead_in: str = "", order: NoteOrder | None = None) -> Example:
        """The model asks (``recall_policy="model"``): with ``notes``, the reply writes ``<recall>``
        first, or after ``lead_in`` (learned too), and the loop's block follows (not learned;
        its header says ``order``, :meth:`block`)."""
        prompt = chat_prompt_ids(self.tokenizer, messages, "model", "system", self.system_prompt)
        reply_ids = self._reply_ids(reply, truncated)
        if notes is None:
            return Example(kind, prompt + reply_ids, [IGNORE] * len(prompt) + reply_ids, meta or {})
        lead = plain_ids(self.tokenizer, lead_in) if lead_in else []
        block = self.block(notes, order)
        ids = [*prompt, *lead, self.recall_id, *block, *reply_ids]
        labels = [IGNORE] * len(prompt) + [*lead, self.recall_id] + [IGNORE] * len(block) + reply_ids
        return Example(kind, ids, labels, meta or {})

    def auto_example(self, kind: str, messages: Sequence[Mapping[str, str]], reply: str | Sequence[int],
                     notes: Sequence[MemoryCandidate], meta: dict[str, Any] | None = None,
                     truncated: bool = False, order: NoteOrder | None = None) -> Example:
        """The notes are in the system message already (``recall_policy="auto"``, position ``"system"``);
        with no notes the marker is dropped, as the loop drops a prompt's marker that found nothing."""
        marked = chat_prompt_ids(self.tokenizer, messages, "auto", "system", self.system_prompt)
        at = marked.index(self.recall_id) + 1
        prompt = [*marked[:at], *self.block(notes, order), *marked[at:]] if notes else [*marked[: at - 1], *marked[at:]]
        reply_ids = self._reply_ids(reply, truncated)
        return Example(kind, prompt + reply_ids, [IGNORE] * len(prompt) + reply_ids, meta or {})


def memory_examples(builder: ExampleBuilder, items: Sequence[Asked], mixture: Mixture, rng: random.Random,
                    systems: Sequence[str | None], order_rng: random.Random | None = None,
                    format_rng: random.Random | None = None, replies: Sequence[str] = (),
                    reply_rng: random.Random | None = None,
                    company_rng: random.Random | None = None,
                    near_rng: random.Random | None = None,
                    neighbour_rng: random.Random | None = None) -> list[Example]:
    """``mixture.repeats`` examples per question: each with a system message drawn from ``systems``,
    its earlier exchanges, and a policy (``auto``, or the model's own recall, at the start or mid-answer).

    ``order_rng`` draws which dated examples get their notes oldest first (``mixture.oldest_share``),
    and ``format_rng`` which questions ask for an answer format (``mixture.format_share``); each is
    separate from ``rng`` so that a share changes only what it is about, not which examples are
    made (default: ones seeded from nothing, ``random.Random(0)``). ``reply_rng`` likewise draws
    which examples' notes carry one of ``replies`` (:func:`with_replies`, ``mixture.reply_share``),
    and ``company_rng`` which answering lines are said with the user's other facts (:func:`in_company`,
    ``mixture.company_share``). ``near_rng`` draws which answered questions get a near-miss
    "I don't know." example as well (:func:`near_misses`, ``mixture.near_miss_share``), and
    ``neighbour_rng`` which answering notes are shown among the user's near misses
    (:func:`among_neighbours`, ``mixture.neighbour_share``).
    """
    from recall_core.training.answer_formats import distractor_pool, formatted
    from recall_core.training.family_data import LEAD_INS

    order_rng = order_rng or random.Random(0)
    format_rng = format_rng or random.Random(0)
    reply_rng = reply_rng or random.Random(0)
    company_rng = company_rng or random.Random(0)
    near_rng = near_rng or random.Random(0)
    neighbour_rng = neighbour_rng or random.Random(0)
    if mixture.reply_share and not replies:
        raise ValueError("mixture reply_share needs replies to put in the notes")
    pool = distractor_pool(items)
    out: list[Example] = []
    for item in items:
        others = [i.notes for i in items if i.user_id != item.user_id and i.notes]
        for _ in range(mixture.repeats):
            # A conversation with its own callers (two named friends' chats) is asked about under
            # their system messages most of the time. Drawn only for such items, so that the other
            # families' examples stay as they were.
            own = bool(item.systems) and rng.random() < 0.7
            messages = messages_for(item, rng.choice(item.systems if own else systems), item.earlier)
            notes, holds = perturbed_notes(item, others, mixture, rng)
            if neighbour_rng.random() < mixture.neighbour_share and holds:  # drawn for every example, as the order is
                notes = among_neighbours(notes, item, neighbour_rng)
            if near_rng.random() < mixture.near_miss_share and holds:  # drawn for every example, as the order is
                out.extend(_near_miss_example(builder, item, messages, notes, mixture, near_rng))
            if mixture.passing_share and holds and item.small_talk and rng.random() < mixture.passing_share:
                notes = in_passing(notes, item, rng)
            if company_rng.random() < mixture.company_share and holds:  # drawn for every example, as the order is
                notes = in_company(notes, item, company_rng)
            if reply_rng.random() < mixture.reply_share:  # drawn for every example, as the order is
                notes = with_replies(notes, replies, reply_rng)
            empty = bool(mixture.empty_share) and rng.random() < mixture.empty_share
            if empty:  # nothing found: "auto" drops its marker, the model's own <recall> reads empty_notes
                notes, holds = (), False
            reply = item.reply if holds == item.holds else UNKNOWN_REPLY
            if reply == UNKNOWN_REPLY and not empty and rng.random() >= mixture.unknown_share:
                continue  # fewer "I don't know." replies: the model learned to abstain with the answer in front of it
            notes, order = oldest_first(notes, builder.config.order, mixture.oldest_share, order_rng)
            answer_format = format_rng.random() < mixture.format_share  # drawn for every example, as the order is
            if answer_format:
                question, reply = formatted(item, holds, reply, pool, format_rng)
                messages = [*messages[:-1], {"role": "user", "content": question}]
            meta = _meta(item, messages, holds, notes, order, answer_format)
            if rng.random() < mixture.auto_share:
                out.append(builder.auto_example("auto", messages, reply, notes, meta, order=order))
                continue
            lead_in = rng.choice(LEAD_INS) + " " if rng.random() < mixture.mid_share else ""
            out.append(builder.model_example("recall", messages, reply, notes, meta, lead_in=lead_in, order=order))
    return out


def _meta(item: Asked, messages: Sequence[Mapping[str, str]], holds: bool, notes: Sequence[MemoryCandidate],
          order: NoteOrder, answer_format: bool) -> dict[str, Any]:
    """What a memory example records of itself (``Example.meta``): its question, whether a note holds
    the answer, how many notes and in which order, whether it asks for an answer format."""
    return {"family": item.family, "question": messages[-1]["content"], "key": item.question.key, "holds": holds,
            "user_id": item.user_id, "notes": len(notes), "order": order, "format": answer_format}


def _near_miss_example(builder: ExampleBuilder, item: Asked, messages: Sequence[Mapping[str, str]],
                       notes: Sequence[MemoryCandidate], mixture: Mixture, rng: random.Random) -> list[Example]:
    """One "I don't know." example for ``item`` from its notes less those that name the answer
    (:func:`near_misses`), under the same messages; none when no note is left."""
    left = near_misses(notes, item)
    if not left:
        return []
    meta = {**_meta(item, messages, False, left, builder.config.order, False), "near_miss": True}
    if rng.random() < mixture.auto_share:
        return [builder.auto_example("auto", messages, UNKNOWN_REPLY, left, meta)]
    return [builder.model_example("recall", messages, UNKNOWN_REPLY, left, meta)]


def near_misses(notes: Sequence[MemoryCandidate], item: Asked) -> tuple[MemoryCandidate, ...]:
    """``notes`` less every one that names ``item``'s current or an earlier value: what a search
    returns when the answer was never said, the question's neighbours (the same user's other
    people, pets and places) kept.

    Why: the rank-32 adapter says "I don't know." to 8 of 96 held-out questions whose answer was
    never said (fresh seed, 2026-12-02) and answers the rest from a neighbour's note; the training
    families' own never-said questions are few and mostly far from every note. An earlier value is
    taken out too, or it would be the right answer.
    """
    return tuple(_foreign(notes, item))


def perturbed_notes(item: Asked, others: Sequence[Sequence[MemoryCandidate]], mixture: Mixture,
                    rng: random.Random) -> tuple[tuple[MemoryCandidate, ...], bool]:
    """The notes of one example, varied as callers' memories vary: ``(notes, a note holds the answer)``.

    With probability ``mixture.vary_share`` the searched notes are changed: another user's
    notes are added (one to six notes in all, the answering note anywhere among them), or only
    another user's notes are kept (irrelevant notes only: the reply becomes "I don't know."),
    and some notes lose their date and speaker (a caller's own undated notes).
    Another user's notes that name this question's values (families draw values from shared
    pools) are left out, so the reply stays right.
    """
    notes = list(item.notes)
    if not others or rng.random() >= mixture.vary_share:
        return tuple(notes), item.holds
    holds = item.holds
    extra = _foreign(rng.choice(others), item)
    if not extra:
        return tuple(notes), item.holds
    if rng.random() < 0.15:  # irrelevant notes only
        notes, holds = extra[: rng.randint(1, len(extra))], False
    else:
        while len(notes) + len(extra) < 6 and rng.random() < 0.5:
            extra += _foreign(rng.choice(others), item)
        notes += extra[: rng.randint(0, max(0, 6 - len(notes)))]
        if len(notes) > 1 and rng.random() < 0.3:  # fewer notes: keep the answering one
            keep = [n for n in notes if _holds(n, item)] or notes[:1]
            notes = keep[:1] + rng.sample([n for n in notes if n not in keep[:1]], rng.randint(0, 1))
    rng.shuffle(notes)
    if rng.random() < 0.4:  # undated: the caller's own notes, or a writer with dated=False
        notes = [MemoryCandidate(n.id, n.score, n.text, None, {}) for n in notes]
    else:  # dated notes are injected in time order, as the loop orders them
        notes.sort(key=_said_at, reverse=True)
    seen: set[str] = set()
    unique = [n for n in notes if not (n.id in seen or seen.add(n.id))]
    return tuple(unique), holds


def among_neighbours(notes: Sequence[MemoryCandidate], item: Asked,
                     rng: random.Random) -> tuple[MemoryCandidate, ...]:
    """The first of ``notes`` that names the answer, among one to five of ``item.deeper`` (the same
    user's memories nearest the question) that name neither the answer nor an earlier value.

    Why: the tuned model reads the first of its notes. With the fact alone it answered 43 of 57
    held-out questions, with one near miss before it 31, with five 12 (``benchmarks/note_perturbations.py``,
    2026-12-03). Training's other notes are the search's top two or *another* user's notes
    (:func:`perturbed_notes`), which share no subject with the question; the search's deeper
    candidates do: another relative's name, another pet. When the answering note is dated, half of
    the time the notes keep their dates and are put newest first, as the loop puts them (the
    fact's place follows its date); else they are undated, in a random order. Unchanged when there
    is no answering note or no such neighbour.
    """
    answering = next((n for n in notes if _holds(n, item)), None)
    shown = {n.id for n in notes}
    pool = [n for n in _foreign(item.deeper, item) if n.id not in shown]
    if answering is None or not pool:
        return tuple(notes)
    out = [answering, *rng.sample(pool, min(len(pool), rng.randint(1, 5)))]
    if rng.random() < 0.5 and all(_said_at(n) for n in out):
        out.sort(key=_said_at, reverse=True)
    else:
        rng.shuffle(out)
        out = [MemoryCandidate(n.id, n.score, n.text, None, {}) for n in out]
    return tuple(out)


def oldest_first(notes: Sequence[MemoryCandidate], order: NoteOrder, share: float,
                 rng: random.Random) -> tuple[tuple[MemoryCandidate, ...], NoteOrder]:
    """``(notes, order)``: with probability ``share``, dated ``notes`` put oldest first (``order``
    ``"oldest_first"``, which the block's header then says); else ``notes`` as they are, in ``order``.

    Notes are dated when every one has a timestamp: undated notes have no order to state. The draw
    is made for every example, dated or not, so that the examples after it do not depend on which
    were dated.
    """
    draw = rng.random()
    dated = bool(notes) and all((n.metadata or {}).get("timestamp") for n in notes)
    if not dated or draw >= share:
        return tuple(notes), order
    return tuple(sorted(notes, key=_said_at)), "oldest_first"


def _said_at(note: MemoryCandidate) -> str:
    """The sort key of dated notes: the timestamp as written (ISO, so it sorts in time order)."""
    return str((note.metadata or {}).get("timestamp", ""))


def in_passing(notes: Sequence[MemoryCandidate], item: Asked, rng: random.Random) -> tuple[MemoryCandidate, ...]:
    """``notes`` with the line that holds the answer buried among things the same user
    said that state no fact (``item.small_talk``, two to four of them): a fact said in passing inside a
    long, chatty turn.

    The training families state most facts in short turns; users' conversations often do not, and
    the model must learn to pick one clause out of a paragraph rather than where a fact usually
    sits. Only the first note that names the answer is changed; its id, date and speaker stay.
    """
    pieces = rng.sample(list(item.small_talk), min(len(item.small_talk), rng.randint(2, 4)))
    return _buried(notes, item, pieces, rng)


def in_company(notes: Sequence[MemoryCandidate], item: Asked, rng: random.Random) -> tuple[MemoryCandidate, ...]:
    """``notes`` with the line that holds the answer said together with one or two of the same
    user's other statements of fact (``item.statements``): one line with several values, of which
    the question asks one.

    Why: the training families state most facts one per turn (``people``'s chatty turns aside),
    so the value in the answering line is nearly always the one asked; a user's own turns often
    say several at once ("I work as a lighthouse keeper on Berlenga", "we moved to Mount Pleasant
    and the rent is 1,400"), and the tuned model answered with the line's other value ("Lighthouse keeper." to "Where do I work?"). A statement
    that names this question's answer or an earlier value of it is left out, so the reply stays
    right. Only the first note that names the answer is changed; its id, date and speaker stay.
    Unchanged when the user said nothing else usable.
    """
    values = (*item.question.answers, *item.question.stale)
    usable = [s for s in item.statements if not base.names_any(s, values)]
    if not usable:
        return tuple(notes)
    return _buried(notes, item, rng.sample(usable, min(len(usable), rng.randint(1, 2))), rng)


def _buried(notes: Sequence[MemoryCandidate], item: Asked, pieces: Sequence[str],
            rng: random.Random) -> tuple[MemoryCandidate, ...]:
    """``notes`` with the first line that names the answer said among ``pieces``, at a random place."""
    out = list(notes)
    for n, note in enumerate(out):
        lines = note.text.split("\n")
        at = next((i for i, line in enumerate(lines) if base.names_any(line, item.question.answers)), None)
        if at is None:
            continue
        label, body = "", lines[at]
        if len(lines) > 1:  # a note of several turns labels each ("User: ..."): keep the label in front
            head, colon, rest = body.partition(": ")
            if colon and len(head) <= 40:
                label, body = f"{head}: ", rest
        said = list(pieces)
        said.insert(rng.randint(0, len(said)), body)
        lines[at] = label + " ".join(p.strip() for p in said)
        out[n] = MemoryCandidate(note.id, note.score, "\n".join(lines), note.embedding, note.metadata)
        break
    return tuple(out)


def with_replies(notes: Sequence[MemoryCandidate], replies: Sequence[str],
                 rng: random.Random) -> tuple[MemoryCandidate, ...]:
    """``notes`` as a chat with an assistant that answers at length makes them: each note, with
    probability one half (at least one), gets one of ``replies`` as the assistant's words around it.

    The training families' assistants say a few words ("Congratulations!"); a chat assistant's
    reply is a paragraph or a list, and the ``"answered"`` unit puts it in the note with the user's
    turn (after it, or before it when it asked the question the turn answers). The model must
    learn to find the user's fact among the assistant's words, not to read the longest line.
    A note of one unlabelled turn becomes two labelled lines, the reply after it or before it; a
    note that has an assistant's line gets the reply added to that line. A named speaker's note
    (a chat between people) has no assistant, and stays. Ids, scores and metadata are kept.
    """
    chosen = [rng.random() < 0.5 for _ in notes]
    if notes and not any(chosen):
        chosen[rng.randrange(len(notes))] = True
    assistant = speaker_of("assistant", {})
    out = []
    for note, change in zip(notes, chosen, strict=True):
        meta = note.metadata or {}
        if not change or meta.get("speaker"):
            out.append(note)
            continue
        reply = " ".join(rng.choice(replies).split())  # one line: a note's lines are its turns
        lines = note.text.split("\n")
        at = next((i for i, line in enumerate(lines) if line.startswith(f"{assistant}: ")), None)
        if at is not None:
            lines[at] = f"{lines[at]} {reply}"
        elif len(lines) == 1 and meta.get("role", "user") == "user":
            user = f"{speaker_of('user', {})}: {note.text}"
            lines = [user, f"{assistant}: {reply}"] if rng.random() < 0.5 else [f"{assistant}: {reply}", user]
        else:
            out.append(note)
            continue
        out.append(MemoryCandidate(note.id, note.score, "\n".join(lines), note.embedding, note.metadata))
    return tuple(out)


def _holds(note: MemoryCandidate, item: Asked, values: Sequence[str] | None = None) -> bool:
    return base.names_any(note.text, item.question.answers if values is None else values)


def _foreign(notes: Sequence[MemoryCandidate], item: Asked) -> list[MemoryCandidate]:
    """Another user's notes, less those that name this question's current or earlier values."""
    values = (*item.question.answers, *item.question.stale)
    return [n for n in notes if not _holds(n, item, values)]


def general_examples(builder: ExampleBuilder, replies: Sequence[tuple[str, str | None, Sequence[int], bool]], kind: str,
                     count: int, rng: random.Random, notes: Sequence[Sequence[MemoryCandidate]] = (),
                     family: str = "general") -> list[Example]:
    """``count`` examples that need no memory, from ``(prompt, system message, base reply ids, cut)``.

    ``auto-general`` puts notes a search returned (for another question: ``notes``) in the
    system message (the search finds something whatever is asked): the reply stays the base model's.
    ``family`` is what ``meta["family"]`` says the prompts are (``"statement"``: a user's own news).
    """
    if not replies:
        raise ValueError("no base replies to build general examples from")
    if kind == "auto-general" and not any(notes):
        raise ValueError("auto-general examples need notes to put before the prompt")
    usable = [n for n in notes if n]
    out: list[Example] = []
    order = list(range(len(replies)))
    while len(out) < count:
        rng.shuffle(order)
        for i in order[: count - len(out)]:
            prompt, system, reply, cut = replies[i]
            messages = messages_for(prompt, system)
            meta = {"question": prompt, "family": family}
            if kind == "auto-general":
                out.append(builder.auto_example(kind, messages, reply, usable[rng.randrange(len(usable))], meta, truncated=cut))
            else:
                out.append(builder.model_example(kind, messages, reply, None, meta, truncated=cut))
    return out

"""`RecallConfig`: every knob of the recall loop, checked when it is made."""

from __future__ import annotations

import math
import string
from dataclasses import asdict, dataclass, fields, replace
from typing import Any, Literal, get_args

from recall_core.settings import RANGES, Range, check_utf8, in_range, int_at_least, one_of, plain_number
from recall_core.types import QueryMode

InjectMode = Literal["tokens", "kv"]
KVPrefix = Literal["shared", "none"]
OnMemoryError = Literal["warn", "raise"]
RecallPolicy = Literal["auto", "explicit", "model", "ask", "uncertainty", "off"]
#: Policies under which no marker is placed: the loop recalls when the model asks (its own
#: ``<recall>``) or when it is unsure. (``"ask"`` renders its first pass this way; a chat call
#: then runs as ``"auto"`` or without recall: :mod:`recall_core.decoding.ask`.)
UNMARKED_POLICIES = frozenset({"model", "ask", "uncertainty"})
#: Policies under which the model may not ask for a recall: its ``<recall>`` is masked out of the
#: next-token scores (a recall-tuned model writes one on its own), so only the prompt's markers
#: recall (``"explicit"``), or nothing does (``"off"``).
NO_MODEL_RECALL_POLICIES = frozenset({"explicit", "off"})
RecallPosition = Literal["system", "user_start", "user_end", "assistant_start"]
NoteOrder = Literal["oldest_first", "newest_first", "relevance"]

#: The block injected at a ``<recall>``: ``{text}`` is the notes, one per line, and ``{order}``
#: says how they are ordered (:data:`ORDER_WORDS`). It carries its own instruction (LangChain's
#: RAG wording), so it reads the same in the caller's system message or in recall's own; the
#: 135M default answered far fewer facts without one (BENCHMARKS.md).
DEFAULT_TEMPLATE = (
    "Use the following notes from past conversations with the user to answer the question. If you don't know "
    "the answer, say that you don't know. Keep the answer concise.\n\nNotes, {order}:\n{text}\n"
)
#: What ``{order}`` says in a block template, per ``RecallConfig.order``.
ORDER_WORDS = {"newest_first": "newest first", "oldest_first": "oldest first", "relevance": "most relevant first"}
#: One note: a memory's text with the day it was said (``{date}``) and who said it (``{speaker}``:
#: the speaker's name when the memory has one, else its role); a memory without them is ``{text}``
#: alone. Also ``{role}`` (the raw role).
DEFAULT_NOTE_TEMPLATE = "[{date}] {speaker}: {text}"
#: The system message put around the notes with ``recall_position="system"`` when the
#: conversation has none of its own.
DEFAULT_SYSTEM_PROMPT = "You are a helpful assistant."
NOTE_FIELDS = ("text", "date", "speaker", "role")
_COSINE = Range("in [-1, 1] (a cosine)", lambda v: -1 <= v <= 1)
_POSITIVE = Range("a number of nats > 0", lambda v: 0 < v < float("inf"))
_CONTRAST = Range("in [0, 10] (0: off)", lambda v: 0 <= v <= 10)
_SCORE_GATE = Range("in [0, 1] (a cosine; 0 turns it off)", lambda v: 0 <= v <= 1)
_PROBABILITY = Range("in [0, 1) (a probability)", lambda v: 0 <= v < 1)


@dataclass(frozen=True)
class RecallConfig:
    """How the loop searches, chooses and injects memories at ``<recall>``.

    The defaults were chosen on the dev conversations and LoCoMo; what each option was measured
    to do is in BENCHMARKS.md.

    Args:
        query_mode: ``"text"`` (default) embeds the query text with the memory's encoder;
            ``"hidden"`` maps the ``<recall>`` hidden states into the encoder's space with the
            model's trained query head (``recall train-head``; the recall-tuned default ships one).
        query_window: what a ``<recall>`` searches with: ``None`` the current turn (for a chat
            prompt, the last user message), an int the last N tokens of that (of a text prompt,
            the text before the marker).
        inject_mode: ``"tokens"`` (default) injects the notes' token embeddings wrapped in
            ``template``; ``"kv"`` injects the same block from precomputed keys and values,
            re-rotated to where it lands (:mod:`recall_core.kv.inject`). A model without rotary
            positions falls back to ``"tokens"``, and the trace says so.
        template: the injected block: a format string whose ``{text}`` is the notes, one per line;
            ``{order}``, if used, says how they are ordered ("newest first" by default).
        note_template: one note: ``{text}`` and optionally ``{date}`` (the day it was said),
            ``{speaker}`` (who said it) and ``{role}``.
        memories: most memories injected at one ``<recall>``, as one block; duplicates (the same
            text, or texts that cover the same turns) count once.
        order: the notes' order: ``"newest_first"`` (the current version of a fact that changed
            is read first), ``"oldest_first"`` or ``"relevance"``.
        newest_wins: a chosen candidate that a newer candidate updates for the search's question
            (both name a day or time, and one sentence of the newer one says that something
            changed, "moved", "instead", "no longer"..., naming a word of the question that the
            older one names) is swapped for the newer one, and its place is not filled again
            (:mod:`recall_core.decoding.supersede`). ``False`` injects the candidates as ranked.
        follow_updates: a chosen note that names something (a capitalised word that does not
            open a sentence: "my Skoda Octavia") is searched for by those names, and a newer turn
            found so that says in one sentence that something changed, naming one of them and a
            new name ("I traded in my Skoda Octavia ... a Volvo V70"), takes its place
            (:mod:`recall_core.decoding.follow`). One more search per such note. Off by default:
            it changed the notes of the generated families, whose traces its conditions were
            written from, and of no question in three hand-written families (one written after
            it) and 1 in 200 on LoCoMo, while making 1.7 to 2 searches per question
            (docs/benchmarks/heldout.md).
        match_names: when the search's question names someone or something (a capitalised word
            that does not open a sentence: "What's Yusuf's job?") and a candidate says that name,
            a chosen note that does not say it but names someone else gives its place to the next
            candidate that says it, or leaves it empty (:mod:`recall_core.decoding.names`).
            ``False`` injects the candidates as ranked.
        top_k: how many candidates are fetched to choose among.
        temperature: of the choice among the candidates' scores; 0 picks the best.
        top_p: nucleus cut over the candidates' softmax, in (0, 1].
        min_score: a candidate whose cosine score is below this is never injected.
        max_recalls: most recalls in one call; later ``<recall>`` tokens stay as they are and the
            model is kept from emitting more.
        max_memory_tokens: a memory longer than this (in tokens) is cut.
        plain_notes: a note shows a memory's markdown as plain text (``**Rent:** £650`` as
            ``Rent: £650``; headings, rules, code ticks and link addresses off, every word kept:
            :func:`recall_core.memory.text.markup.plain_text`), before ``max_memory_tokens`` cuts it.
            Chat assistants' replies are markdown; the recall-tuned model was trained on plain notes.
        on_memory_error: ``"warn"`` goes on without recall (the trace says why); ``"raise"`` raises.
        recall_policy: who decides when to recall. ``"auto"`` (chat prompts): ``<recall>`` goes
            where ``recall_position`` says; ``"explicit"``: the prompt carries its own markers, and
            only they recall (the model cannot write ``<recall>``); ``"off"``: no recall at all, not
            even at a marker in the prompt (the trace says ``"recall off"``);
            ``"model"``: the model's own ``<recall>``, at the start of its reply or mid-answer (a
            recall-tuned model writes one; with ``ask_on_abstention`` a reply that would be
            "I don't know." without memory opens with one, chat prompts with a memory);
            ``"ask"``: the model decides once, at the start of its reply (``<recall>`` its most
            likely first token, with at least ``recall_threshold``), and when it asks, the notes go where ``"auto"`` puts them;
            when it does not, the reply has no recall (chat prompts with a memory; a string
            prompt runs as ``"model"``: :mod:`recall_core.decoding.ask`; see also
            ``ask_on_abstention``); ``"uncertainty"``: a baseline for untrained models
            (FLARE/DRAGIN-style) that writes ``<recall>`` before a content token whose next-token
            entropy exceeds ``uncertainty_threshold``, never under a constraint, and takes back a
            recall that injects nothing. Under the last two a chat prompt without a system message
            gets ``system_prompt``, and a ``<recall>`` in the reply searches with the last user
            message followed by what the reply has said so far.
        recall_position: with ``"auto"``: ``"system"`` (the end of the system message),
            ``"user_start"`` or ``"user_end"`` (before or after the last user message's words), or
            ``"assistant_start"`` (right after the assistant header). The query is the last user
            message wherever the marker is.
        system_prompt: the system message made when the conversation has none and one is needed
            (``recall_position="system"``, the ``"model"`` and ``"uncertainty"`` policies).
        kv_prefix: ``inject_mode="kv"``: what each piece of the block is computed after.
            ``"shared"``: a fixed prefix whose keys and values are then dropped (the chat
            template's system header, and for a note the template's instruction), so that a note's
            first token is not an attention sink of its own (APE); ``"none"``: each piece alone,
            from position 0 (Block-attention).
        kv_recompute: ``inject_mode="kv"``: how many tokens at the start of each piece are computed
            again at the recall, attending to the whole context (EPIC); the block's last token
            always is. ``"all"`` computes every token: ``"tokens"`` mode, with no saving.
        uncertainty_threshold: the ``"uncertainty"`` policy's entropy (nats) of the next-token
            distribution, after the logits processors, above which the loop recalls.
        ask_on_abstention: ``"ask"``: the model also asks when its reply without memory would open
            with ``"I don't know."`` (greedy decoding, ``<recall>`` masked): giving up before
            looking is the sign that it needs its memory. ``"model"``: such a reply opens with
            ``<recall>`` instead, where the model's own first marker would stand (chat prompts
            with a memory). Either recall is traced ``trigger="abstention"``. Not checked under a
            constraint (tools, ``response_format``) or where the abstention would not fit in the
            context window. Under callers' task-style system messages the recall-tuned default
            said "I don't know." on 26 of the 34 held-out memory questions it did not ask on, and
            on 2 of 64 general prompts (docs/benchmarks/heldout.md).
        ask_after_openers: with ``ask_on_abstention`` (nothing without it), the abstention also
            counts after sentences or clauses of at most six words each ("Of course. I don't
            know.", "Sure, I don't know."): the reply without memory is decoded greedily, one id at
            a time, until its text tells, at most 24 ids (served: one greedy request of 24 tokens);
            where 24 ids would not fit in the context window, only the reply's start is checked.
            Off by default: on the held-out families it raised ``"ask"``'s recalls on memory
            questions from 278 to 281 and 280 of 283 on a seed nobody read, with no fact gained,
            and cost 1.2x per call on general prompts (7 greedy steps on average;
            docs/benchmarks/heldout.md).
        ask_on_refusal: with ``ask_on_abstention`` (nothing without it), a reply that would open
            with an apology or a disclaimer counts as giving up too ("I'm sorry for any confusion,
            but as a travel company's help desk, ...", "Unfortunately", "As an AI", "I'm not sure":
            :data:`recall_core.decoding.abstain.REFUSALS`), where the abstention would (after openers
            too with ``ask_after_openers``). The reply without memory is then decoded greedily, one
            id at a time, until its first words tell, at most 8 ids (served: one greedy request of
            8 tokens), only when its first id can open one of them. Asked about their own life
            under a caller's role-play system message, the recall-tuned default said such an
            apology instead of asking. Under ``"model"`` it raised the recalls on the generated
            held-out families' memory questions from 273 to 280 of 286 and on three hand-written
            ones from 193 to 198 of 205, with no fact lost and the general prompts' replies
            unchanged (docs/benchmarks/heldout.md).
        ask_on_names: ``"ask"`` and ``"model"``: the engine also asks when the last user message
            names someone or something (a capitalised word inside a sentence:
            :func:`recall_core.decoding.names.names`; in a message typed in lower case, a word
            of it that the candidates say so: :func:`recall_core.decoding.names.asked_names`)
            that one of the memory's eligible search
            candidates (the first ``top_k``, at least ``min_score``) names too, capitalised or as
            its speaker (:func:`recall_core.decoding.names.says_any`), whatever the model's first
            token; under ``"model"`` the reply opens with ``<recall>`` as with
            ``ask_on_abstention``. Traced ``trigger="names"``. The check is one search, made when
            the model did not ask (under ``"model"`` without the abstention's check, on every
            call whose question has names, as no first pass says whether the model would ask);
            the recall it places searches again. Asked about a named friend, the recall-tuned
            default answered with made-up text instead of asking ("What does Ingrid keep?"); on
            LoCoMo, whose questions nearly all name a speaker, ``"ask"`` asked on 120 of 200 questions
            without it and on 198 with it (docs/benchmarks/heldout.md, docs/benchmarks/locomo.md).
        ask_on_score: ``"ask"`` and ``"model"``: above 0, the engine also asks when one of the
            memory's eligible search candidates for the last user message (the first ``top_k``, at
            least ``min_score``) scores at least this cosine, whatever the model's first token;
            under ``"model"`` the reply opens with ``<recall>`` as with ``ask_on_abstention``.
            Traced ``trigger="score"``. It shares ``ask_on_names``' one search (made on every
            call with a memory where the model did not ask). The default 0.4 was chosen on the
            development families, where the rank-32 default under ``"model"`` made answers up
            without asking ("The vet is called Dr. Elena."): it recalls there on 201 / 212 memory
            questions (188 without), on 197 / 205 of three hand-written families nobody read (182)
            and 285 / 286 generated held-out ones (280), with 5, 2 and 2 more facts and none lost;
            on 1 of 64 general prompts on two of the three sets, whose replies then read the notes
            ("Tell me a short story about friendship." -> "Morag."; docs/benchmarks/heldout.md).
            The scale is the encoder's: 0.4 suits the default encoder (all-MiniLM-L6-v2); with
            another, measure its scores on prompts that need no memory first. 0 turns it off.
        recall_threshold: the least probability the model must give its own ``<recall>`` for the
            recall to run (``"model"``, ``"ask"``'s decision, ``"uncertainty"``; ``"auto"`` has
            ``auto_recall_threshold``). Below
            it the token is masked at that step and the reply goes on with the next most likely
            token (greedy) or a sample without it; once ``<recall>`` was the most likely token and
            fell short (served: was sampled and fell short), it stays masked for the rest of that
            reply, so that a wish the model had once is judged once, not again at every later
            step until it passes. The default 0.5 asks for the recall to be more
            likely than everything else together: on held-out prompts that need no memory the
            shipped adapter put ``<recall>`` first at probabilities up to 0.55, on memory
            questions mostly above 0.5 (docs/benchmarks/heldout.md). ``0`` runs every
            ``<recall>`` the model writes.
        auto_recall_threshold: the same for a ``<recall>`` the model writes itself under
            ``"auto"`` while the reply has no notes yet: the prompt's recall ran and found nothing,
            so the model's own marker asks for what that search did not find, and the loop tells
            it so (``empty_notes``). The default 0 runs it whenever the model writes it. Once a
            recall of the reply injected notes, ``recall_threshold`` judges a further one. (A
            reply ``"ask"`` placed notes for runs as ``"auto"`` but keeps ``recall_threshold``:
            there the model's decision was judged by it.) Why: a new user's personal questions on
            the held-out families got a made-up answer ("The new flat is $1500.") on 27 of 172
            with 0.5; on 14 of them ``<recall>`` was the most likely first token, below 0.5, and
            was masked; with 0, 13 of 172. After notes, 0 let weak second recalls put other
            notes nearest the reply, which it then read (the held-out families' selection seed:
            12 such recalls, 2 facts lost, none gained; docs/benchmarks/recall-tuning.md).
        ask_on_statements: under ``"auto"``, a user's message that asks nothing (no question mark
            and no question word: news, "switched gyms. crunch now, closer to office.") runs as
            ``"ask"`` on the model's own decision: no notes unless the model writes ``<recall>``
            first (``recall_threshold``). The engine's own reasons to ask (``ask_on_abstention``,
            ``ask_on_refusal``, ``ask_on_names``, ``ask_on_score``) read a question and are off for
            it. Questions are not touched. The turn is rendered as ``"auto"`` renders the
            conversation, less its marker, so a session (the adapters keep one per thread) reuses
            its cache across news and questions. Why: given notes with a returning user's news,
            the recall-tuned default answers it with one word read from them ("£720.",
            "Fitness."). On each session's third user turn in the seven hand-written families
            (held out for this default), a returning user's message was acknowledged 82 times of
            105 with it, 60 without ("I don't know." 5 against 7); a new user's replies, a new
            user's 172 held-out questions and 64 general prompts were the same. What replaces the
            word read from the notes is mostly a stock opening ("I'm sorry for any confusion.
            I'm here to help you ..."), as the model writes with no memory
            (docs/benchmarks/recall-tuning.md).
        own_recall_on_statements: under ``"auto"``, whether a ``<recall>`` the model writes itself
            while the reply has no notes yet runs when the user's last message asks nothing (no
            question mark and no question word: "morning. tryna learn rust on weekends";
            :func:`recall_core.memory.text.questions.asks`). There the prompt's recall found
            nothing (a new user), so the model's own one finds nothing either and the empty notes
            it reads make it say "I don't know." to news. ``False`` (the default) masks it on such
            a message, and the reply is the one the model writes without it; questions are not
            touched. On the session openings of five hand-written families no rule was written
            from, a new user's news got "I don't know." 14 times of 93 with it off, 19 with it on,
            acknowledged 79 against 73; a new user's 172 held-out questions and 64 general prompts
            got the same replies (docs/benchmarks/recall-tuning.md).
        abstain_threshold: the least probability the model must give the opening of its
            ``"I don't know."`` at the first token it decides after notes were injected. Below it
            that token is masked at that step, as ``recall_threshold`` masks ``<recall>``, and the
            reply opens with the next most likely token: a weak abstention with the notes in front
            of the model becomes an answer read from them, a confident one stands. Calls without
            notes are never touched. The default 0.5 asks the abstention to be more likely than
            everything else together, as ``recall_threshold`` asks of ``<recall>``: on LoCoMo it
            raised F1 1-4 from 0.130 to 0.166 and category 5 from 0.250 to 0.438; on the held-out
            families most masked abstentions became guesses (right "I don't know." to never-said
            questions 7 to 1 of 24). ``0`` lets every abstention through
            (:mod:`recall_core.decoding.abstain`, docs/benchmarks/heldout.md).
        abstain_contrast: with ``abstain_threshold``: when the weak abstention's opening is
            masked, the token taken instead is the one the notes raise most over the sequence
            without them, scored ``(1 + w) log p(t | notes) - w log p(t | no notes)`` (context-aware
            decoding, Shi et al. 2023; ``w`` is this weight), not merely the next most likely one.
            The sequence without notes is run from scratch once, only at that step. ``0`` takes
            the next most likely token. The in-process backend only (docs/benchmarks/heldout.md).
        empty_notes: what the notes say when a ``<recall>`` the model wrote itself finds nothing,
            so that it reads it has no note and can say it does not know (past a bare ``<recall>``
            it was never trained on, it writes nonsense); ``None`` injects nothing there. Prompt
            markers and the uncertainty trigger's are taken back instead.
        base_replies: a chat reply that reads no notes is written by the base model the
            recall-tuned one was made from (its adapter off), as ``generate()`` on that model
            writes it: a call with no memory attached, and an ``"ask"`` call (a statement under
            ``"auto"`` with ``ask_on_statements`` too) the engine decided not to recall for. The
            decision is still the tuned model's. Why: the adapter was trained to read notes, and
            with none it answers users' news with a stock apology ("I'm sorry for any
            confusion ..."): with no memory, 101 of 269 of users' third and fourth turns in the
            hand-written families got a reply in their own turn without one, against the plain
            release's 194 (docs/benchmarks/recall-tuning.md). Needs the base model: one loaded by
            :func:`recall_core.load_model` with its adapter (the default, or ``adapter=``) makes
            it at the first such reply from the tuned model, its weights shared and the adapter
            run at scale -1 (a few tens of MB), or pass ``RecallGenerator(base_model=...)``. In a
            :class:`~recall_core.RecallSession` (the adapters keep one per thread) the base model
            keeps a session of its own, which prefills the turns since its last reply and evicts
            by the same bounds on its own; the tuned
            model then runs the new message and the reply on the session's cache. Served
            (llama.cpp): the recall adapter served unapplied is sent at scale -1, or
            ``ServedRecallGenerator(base_engine=)`` sends those replies to an engine serving the
            plain model; with neither, ``ValueError`` (docs/serving.md). Off by default.
    """

    query_mode: QueryMode = "text"
    query_window: int | None = None
    inject_mode: InjectMode = "tokens"
    template: str = DEFAULT_TEMPLATE
    note_template: str = DEFAULT_NOTE_TEMPLATE
    memories: int = 2
    order: NoteOrder = "newest_first"
    newest_wins: bool = True
    follow_updates: bool = False
    match_names: bool = True
    top_k: int = 8
    temperature: float = 0.0
    top_p: float = 1.0
    min_score: float = 0.2
    max_recalls: int = 4
    max_memory_tokens: int = 256
    plain_notes: bool = False
    on_memory_error: OnMemoryError = "warn"
    recall_policy: RecallPolicy = "auto"
    recall_position: RecallPosition = "system"
    system_prompt: str = DEFAULT_SYSTEM_PROMPT
    kv_prefix: KVPrefix = "shared"
    kv_recompute: int | Literal["all"] = 0
    uncertainty_threshold: float = 3.0
    ask_on_abstention: bool = True
    ask_after_openers: bool = False
    ask_on_refusal: bool = True
    ask_on_names: bool = True
    ask_on_score: float = 0.4
    recall_threshold: float = 0.5
    auto_recall_threshold: float = 0.0
    ask_on_statements: bool = True
    own_recall_on_statements: bool = False
    abstain_threshold: float = 0.5
    abstain_contrast: float = 0.0
    empty_notes: str | None = "(none)"
    base_replies: bool = False

    def __post_init__(self) -> None:
        _plain_numbers(self)
        one_of("query_mode", self.query_mode, get_args(QueryMode))
        one_of("inject_mode", self.inject_mode, get_args(InjectMode))
        one_of("on_memory_error", self.on_memory_error, get_args(OnMemoryError))
        one_of("recall_policy", self.recall_policy, get_args(RecallPolicy))
        one_of("recall_position", self.recall_position, get_args(RecallPosition))
        one_of("order", self.order, get_args(NoteOrder))
        one_of("kv_prefix", self.kv_prefix, get_args(KVPrefix))
        if self.kv_recompute != "all":
            try:
                int_at_least("kv_recompute", self.kv_recompute, 0)
            except ValueError:
                raise ValueError(f"kv_recompute must be an int >= 0 or 'all', got {self.kv_recompute!r}") from None
        if self.query_window is not None:
            try:
                int_at_least("query_window", self.query_window, 1)
            except ValueError:
                raise ValueError(f"query_window must be None or an int >= 1, got {self.query_window!r}") from None
        _check_template("template", self.template, ("text", "order"))
        _check_template("note_template", self.note_template, NOTE_FIELDS)
        for flag in ("newest_wins", "follow_updates", "match_names", "ask_on_abstention", "ask_after_openers", "ask_on_refusal",
                     "ask_on_names", "plain_notes", "own_recall_on_statements", "ask_on_statements", "base_replies"):
            if not isinstance(getattr(self, flag), bool):
                raise ValueError(f"{flag} must be True or False, got {getattr(self, flag)!r}")
        if self.empty_notes is not None and not isinstance(self.empty_notes, str):
            raise ValueError(f"empty_notes must be a string or None, got {self.empty_notes!r}")
        if not isinstance(self.system_prompt, str):
            raise ValueError(f"system_prompt must be a string, got {self.system_prompt!r}")
        for name in ("template", "note_template", "system_prompt", "empty_notes"):
            if getattr(self, name) is not None:
                check_utf8(getattr(self, name), name)
        int_at_least("top_k", self.top_k, 1)
        int_at_least("memories", self.memories, 1)
        int_at_least("max_recalls", self.max_recalls, 0)
        int_at_least("max_memory_tokens", self.max_memory_tokens, 1)
        in_range("temperature", self.temperature, RANGES["temperature"])  # same ranges as sampling
        in_range("top_p", self.top_p, RANGES["top_p"])
        in_range("min_score", self.min_score, _COSINE)
        in_range("uncertainty_threshold", self.uncertainty_threshold, _POSITIVE)
        in_range("ask_on_score", self.ask_on_score, _SCORE_GATE)
        in_range("recall_threshold", self.recall_threshold, _PROBABILITY)
        in_range("auto_recall_threshold", self.auto_recall_threshold, _PROBABILITY)
        in_range("abstain_threshold", self.abstain_threshold, _PROBABILITY)
        in_range("abstain_contrast", self.abstain_contrast, _CONTRAST)

    def own_recall_threshold(self, notes_found: bool, states: bool = False) -> float:
        """The threshold a ``<recall>`` the model writes itself must pass: ``auto_recall_threshold``
        under ``"auto"`` while no recall of the reply has injected notes (``notes_found`` false),
        else ``recall_threshold``. Infinite (never passed) in that first case when the user's
        message asks nothing (``states``) and ``own_recall_on_statements`` is off."""
        if self.recall_policy == "auto" and not notes_found:
            return math.inf if states and not self.own_recall_on_statements else self.auto_recall_threshold
        return self.recall_threshold

    def block_text(self, notes: str) -> str:
        """``template`` around already written ``notes``, its ``{order}`` saying how they are ordered."""
        return self.template.format(text=notes, order=ORDER_WORDS[self.order])

    def replace(self, **changes: Any) -> RecallConfig:
        """A copy with ``changes`` applied (and checked)."""
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _plain_numbers(config: Any) -> None:
    """A frozen config's NumPy numbers (``np.int64(5)``) as the Python numbers they hold, before its
    checks: until 2026-12-07 they were refused as "must be an int" (a reviewer), where ``generate()``'s
    options took them."""
    for field in fields(config):
        value = getattr(config, field.name)
        if plain_number(value) is not value:
            object.__setattr__(config, field.name, plain_number(value))


def checked_config(config: object, name: str = "config") -> RecallConfig | None:
    """``config`` if it is a :class:`RecallConfig` or ``None``, else ``TypeError`` naming ``name``
    (a dict was taken and failed deep inside the first call)."""
    if config is not None and not isinstance(config, RecallConfig):
        raise TypeError(f"{name} must be a recall_core.RecallConfig (or None), got {type(config).__name__}")
    return config


def _check_template(name: str, template: object, fields: tuple[str, ...]) -> None:
    """``template`` is a format string with ``{text}`` and no field outside ``fields``."""
    if not isinstance(template, str) or "{text}" not in template:
        raise ValueError(f"{name} must be a string containing '{{text}}', got {template!r}")
    allowed = ", ".join("{" + f + "}" for f in fields)
    try:
        # Each field must be one of ``fields`` as it is: "{date.year}" or "{order.upper}" would
        # reach into the value (an AttributeError at the first call, or a method's repr in the prompt).
        used = [field for _, field, _, _ in string.Formatter().parse(template) if field is not None]
        if any(field not in fields for field in used):
            raise KeyError(next(field for field in used if field not in fields))
        if "text" not in used:  # "{{text}}" holds the substring but prints a literal {text}
            raise ValueError(f"{name} must contain a '{{text}}' field, got {template!r}")
        template.format(**{f: "" for f in fields})
    except (KeyError, IndexError, ValueError, AttributeError, TypeError) as error:
        raise ValueError(f"{name} may only use {allowed} (and '{{{{' / '}}}}' for braces): {error!r} in {template!r}") from None


@dataclass(frozen=True)
class SessionConfig:
    """How a :class:`~recall_core.RecallSession` keeps its KV cache, and how many sessions an adapter keeps.

    Args:
        max_cache_tokens: most positions one session's cache holds between turns (``None``:
            no bound, up to the model's context window). Before a turn, whole old exchanges are
            evicted (oldest first, a user turn with its replies together) until the cache, the
            new messages and ``max_new_tokens`` fit; memories injected during the reply may
            take it past the bound until the reply ends, when old exchanges are evicted again.
            The kept keys are re-rotated to close the gap (as StreamingLLM does), so positions
            stay inside the trained window: a model with rotary embeddings (RoPE) is needed.
        sink_tokens: the first positions that are never evicted (StreamingLLM's attention
            sinks), rounded up to whole messages and to the next user turn, so the system
            message and the start of the conversation always stay.
        max_sessions: adapters keep at most this many sessions (least recently used go first).
        max_bytes: adapters keep sessions whose caches hold at most this many bytes in all
            (``None``: no bound).
    """

    max_cache_tokens: int | None = None
    sink_tokens: int = 4
    max_sessions: int = 16
    max_bytes: int | None = 1 << 30

    def __post_init__(self) -> None:
        _plain_numbers(self)
        int_at_least("sink_tokens", self.sink_tokens, 0)
        if self.max_cache_tokens is not None:
            int_at_least("max_cache_tokens", self.max_cache_tokens, 2)
            if self.max_cache_tokens <= self.sink_tokens:
                raise ValueError(
                    f"max_cache_tokens ({self.max_cache_tokens}) must be larger than sink_tokens ({self.sink_tokens})"
                )
        int_at_least("max_sessions", self.max_sessions, 1)  # SessionPool's range: sessions=None keeps none
        if self.max_bytes is not None:
            int_at_least("max_bytes", self.max_bytes, 1)

    def replace(self, **changes: Any) -> SessionConfig:
        """A copy with ``changes`` applied (and checked)."""
        return replace(self, **changes)

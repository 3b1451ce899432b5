"""``recall_policy="ask"``: the model decides at the start of its reply, and reads the notes where ``"auto"`` puts them.

A recall-tuned model decides well whether a question needs its memory (its own ``<recall>`` as
the first token of the reply), but reads the notes worse after that ``<recall>``, in its own
reply, than in the system message where ``"auto"`` puts them (docs/benchmarks/heldout.md). This
policy takes the decision and the reading each from where they work:

1. the prompt is rendered as ``"model"`` renders it (no marker) and run once: the probability
   of ``<recall>`` as the reply's first token is the decision (asked: at least
   ``recall_threshold``, and ``<recall>`` the most likely token);
2. asked: the call runs as ``"auto"`` (the notes where ``recall_position`` says); the ids
   before the marker, which both renderings share, are not computed again;
3. not asked: the call runs as ``"model"`` with no recall at all (``max_recalls=0``) from the
   cache of step 1, so a prompt that needs no memory costs one prefill, as before.

With ``RecallConfig.ask_on_abstention`` (the default) the model also asks when its reply without
memory would open with ``"I don't know."`` (greedy, ``<recall>`` masked): giving up before looking
is its sign that it needs its memory. Under callers' task-style system messages the tuned default
wrote ``<recall>`` first on 88% of held-out memory questions, and 26 of the 34 others were that
reply (docs/benchmarks/heldout.md). The check is greedy whatever the sampling, and is not made
under a constraint (tools, ``response_format``: such a reply cannot be the abstention) or where
the abstention's ids would not fit in the context window. It costs nothing unless the reply's
greedy first token is the abstention's: then the abstention's ids are run once, teacher-forced,
on the first pass's cache (served: one greedy request as long as the abstention, which a declined
``<recall>`` as the first token also costs). That is the check with ``ask_on_refusal`` off; with it
(the default) the reply is read as text instead, below.

With ``RecallConfig.ask_after_openers`` (off by default) the abstention also counts after short
sentences ("Of course. I don't know.": :func:`recall_core.decoding.abstain.gives_up`): a reply
that does not open with the abstention's first id is decoded greedily on the first pass's cache,
one id at a time, until its text tells (most answers after a few ids: a sentence longer than an
opener), the reply ends, or ``GIVES_UP_TOKENS`` ids; served, one greedy request of
``GIVES_UP_TOKENS`` tokens (an engine cannot be stopped on the text). Room for those ids in the
context window is then needed too.

With ``RecallConfig.ask_on_refusal`` (the default) a reply that would open with an apology or a
disclaimer ("I'm sorry for any confusion, but as a hotel's front desk, ...":
:data:`recall_core.decoding.abstain.REFUSALS`) gives up too. The reply without memory is read the
same way, greedily, but only when its first id can open one of them or the abstention, and at most
``REFUSAL_TOKENS`` ids (served: one greedy request of as many tokens); with ``ask_after_openers``
too, a refusal counts after openers as the abstention does.

Under ``"model"`` the same check (``ask_on_abstention``) opens a reply that would be the abstention
with ``<recall>`` (:func:`opening_marker`): the model still writes its own markers wherever it
wants one (the opening one counts against ``max_recalls``), and the notes of the opening one are
where the model's own first ``<recall>`` would have put them. An opening marker that finds
nothing is dropped, as a prompt's is, and the reply is then the one the model would have written
without it (for the abstention's check: the abstention). A
recall so placed is traced with ``trigger="abstention"`` (:func:`placed_recall`), as is the
recall of an ``"ask"`` call that asked upon the abstention.

With ``RecallConfig.ask_on_names`` (the default) both policies also recall when the question names
someone or something that one of the memory's search candidates names too (:func:`names_memory`), traced
``trigger="names"``. That test needs no model: asked about a named friend, the tuned default
wrote made-up text and neither ``<recall>`` nor the abstention ("What does Ingrid keep?" ->
"Ingrid is a 2018 British-American fantasy series"), and on LoCoMo, whose questions nearly all
name a speaker, ``"ask"`` asked on 120 of 200 questions without it.

With ``RecallConfig.ask_on_score`` above 0 the same search also asks when one of its eligible
candidates scores at least that (a cosine), traced ``trigger="score"``: asked "whats the vet's
name" or "how much is my rent a week", the recall-tuned default under ``"model"`` made an answer up
("The vet is called Dr. Elena.", "A week is 7 days.") where a note said it.

A served backend takes the decision from a one-token request (:mod:`recall_core.serving.generator`);
the engine's prefix cache then holds the prompt for the call. A :class:`~recall_core.RecallSession`
decides on its cache the same way; when asked, the notes go at the start of the new user message
(the system message is cached already), as its ``"auto"`` turns after the first put them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

import torch

from recall_core.config import RecallConfig
from recall_core.decoding.abstain import GIVES_UP_TOKENS, REFUSAL_TOKENS, gives_up
from recall_core.decoding.hf_compat import CACHE_KEY, last_logit_only
from recall_core.decoding.names import asked_names, names, says_any, typed_in_lower_case
from recall_core.decoding.select import eligible_candidates, fetch_candidates
from recall_core.decoding.triggers import below_threshold
from recall_core.kv.cache import crop_cache, keep_every_position
from recall_core.memory.text.questions import asks
from recall_core.types import Memory, Recall, RecallQuery, RecallResult

#: Why the engine asked where the model did not: the reply without memory would have been
#: "I don't know." (``ask_on_abstention``), the question names what the memory says (``ask_on_names``),
#: or the memory holds a close match for it (``ask_on_score``).
Placed = Literal["abstention", "names", "score"]


@dataclass(frozen=True)
class Decision:
    """What the first pass said: ``<recall>``'s probability there and whether that is a recall."""

    probability: float
    asked: bool
    #: Asked by the engine, not the model, and why (``None``: the model's own decision).
    placed: Placed | None = None

    @property
    def abstained(self) -> bool:
        """Asked because the reply without memory would have been ``"I don't know."`` (``ask_on_abstention``)."""
        return self.placed == "abstention"

    @classmethod
    def of(cls, first: int | None, log_p: float | None, recall_id: int, threshold: float) -> Decision:
        """From the reply's most likely first token and ``<recall>``'s log-probability there
        (``None``: unknown, as an engine reports only its top candidates): asked when ``<recall>``
        comes first with at least ``threshold``."""
        known = -math.inf if log_p is None else log_p
        return cls(math.exp(known), first == recall_id and not below_threshold(known, threshold))

    @classmethod
    def unread(cls) -> Decision:
        """No first pass was run: the model's decision is unknown, and not a recall."""
        return cls(math.nan, False)

    def upon(self, placed: Placed) -> Decision:
        """This decision, asked by the engine for the reason ``placed``: the reply without memory
        would be the abstention, or the memory's search says so (:func:`memory_asks`)."""
        return replace(self, asked=True, placed=placed)

    def upon_abstention(self) -> Decision:
        """This decision, asked: the reply without memory would be the abstention."""
        return self.upon("abstention")

    def config(self, config: RecallConfig) -> RecallConfig:
        """The config the call runs under: ``"auto"`` when asked, else ``"model"`` without recalls.
        Asked, the reply keeps ``recall_threshold`` for the model's own later ``<recall>``
        (:func:`asked_config`), not ``"auto"``'s own threshold."""
        if self.asked:
            return asked_config(config)
        return config.replace(recall_policy="model", max_recalls=0)


def statement_config(config: RecallConfig, question: str | None) -> RecallConfig:
    """The config of a call whose last user message is ``question``: under ``"auto"`` with
    ``ask_on_statements``, a message that asks nothing (:func:`recall_core.memory.text.questions.asks`)
    runs as ``"ask"`` on the model's own decision alone (the engine's reasons to ask, which read a
    question, off). Otherwise ``config`` as it is.

    Such a turn is still rendered as ``"auto"`` renders the conversation, less this turn's marker
    (:func:`is_statement`, :func:`without_marker`): the model decides on the prompt ``"auto"`` would
    have run, and a conversation whose turns take either path keeps one rendering, so a session
    (or an engine's prefix cache) reuses it from turn to turn."""
    if config.recall_policy != "auto" or not config.ask_on_statements or question is None or asks(question):
        return config
    return config.replace(recall_policy="ask", ask_on_abstention=False, ask_on_refusal=False, ask_on_names=False,
                          ask_on_score=0.0)  # fmt: skip


def is_statement(base: RecallConfig, config: RecallConfig) -> bool:
    """Whether ``config`` is ``base``'s for a message that asks nothing (:func:`statement_config`
    turned ``"auto"`` into ``"ask"``): the call is rendered as ``base`` renders it."""
    return base.recall_policy == "auto" and config.recall_policy == "ask"


def without_marker(ids: torch.LongTensor, recall_id: int) -> torch.LongTensor:
    """Prompt ids ``[1, L]`` less their ``<recall>`` ids: ``"auto"``'s rendering with nothing
    marked (a message's typed ``<recall>`` is text, never that id)."""
    return ids[:, ids[0] != recall_id]


def asked_config(config: RecallConfig, **changes: Any) -> RecallConfig:
    """The config of a reply ``"ask"`` placed notes for (in a call or a session): ``"auto"``,
    with ``recall_threshold`` still judging the model's own ``<recall>``. ``"auto"``'s own threshold
    (``auto_recall_threshold``, 0 by default) is for a prompt whose search ran unasked; here the
    model's decision was judged by ``recall_threshold``, and its later wishes are judged alike."""
    return config.replace(recall_policy="auto", auto_recall_threshold=config.recall_threshold, **changes)


def decide(log_probs: torch.Tensor, recall_id: int, threshold: float) -> Decision:
    """The decision from one step's log-probabilities (``[vocab]``): ``<recall>`` first and at least ``threshold``."""
    return Decision.of(int(log_probs.argmax()), float(log_probs[recall_id]), recall_id, threshold)


def decide_logits(logits: torch.Tensor, recall_id: int, pad_id: int, threshold: float) -> Decision:
    """The decision from the logits of the reply's first step (``[vocab]``).

    Pads are never a reply's first token, so they are left out of the distribution, as the
    loop masks them.
    """
    logits = logits.float().clone()
    logits[pad_id] = -float("inf")
    return decide(torch.log_softmax(logits, dim=-1), recall_id, threshold)


def unrecalled_token(logits: torch.Tensor, recall_id: int, pad_id: int) -> int:
    """The greedy token of a step (``[vocab]`` logits) of a reply with no recall: ``<recall>`` and pads masked."""
    logits = logits.float().clone()
    logits[[recall_id, pad_id]] = -float("inf")
    return int(logits.argmax())


def checks_abstention(config: RecallConfig, abstention: Sequence[int], constrained: bool, length: int,
                      window: int) -> bool:  # fmt: skip
    """Whether the first pass (``"ask"``'s, ``"model"``'s) checks for ``abstention`` (its ids):
    ``ask_on_abstention``, a recall allowed (``max_recalls`` above 0), a reply that can be the
    abstention (not ``constrained`` by tools or ``response_format``), and room for its ids after
    the prompt's ``length`` tokens in the context ``window``."""
    return (config.ask_on_abstention and config.max_recalls > 0 and bool(abstention) and not constrained
            and length + len(abstention) - 1 < window)  # fmt: skip


def reads_text(config: RecallConfig, length: int, window: int) -> bool:
    """Whether a checked abstention is read as text (:class:`ReplyReader`): ``ask_after_openers`` or
    ``ask_on_refusal``, and room for :func:`read_limit` ids after the prompt's ``length`` tokens in
    the context ``window`` (without it the abstention is still checked at the reply's start)."""
    limit = read_limit(config)
    return limit > 0 and length + limit - 1 < window


def read_limit(config: RecallConfig) -> int:
    """The most ids of the reply without memory read as text: ``GIVES_UP_TOKENS`` with
    ``ask_after_openers``, ``REFUSAL_TOKENS`` with ``ask_on_refusal`` alone, ``0`` (not read as text,
    the abstention's ids only) with neither."""
    if config.ask_after_openers:
        return GIVES_UP_TOKENS
    return REFUSAL_TOKENS if config.ask_on_refusal else 0


@dataclass(frozen=True)
class ReplyReader:
    """What reading a reply's first words as text needs (:func:`reads_abstention` past openers or for
    refusals): the tokenizer's ``decode``, the ids that end a reply, and what counts as giving up
    (:func:`recall_core.decoding.abstain.gives_up`'s ``openers`` and ``refusals``) within ``limit`` ids."""

    decode: Callable[[Sequence[int]], str]
    ends: frozenset[int] = frozenset()
    openers: bool = True
    refusals: bool = False
    limit: int = GIVES_UP_TOKENS

    @classmethod
    def of(cls, tokenizer: Any, ends: Collection[int], config: RecallConfig) -> ReplyReader:
        """The reader of ``tokenizer``'s text (special tokens left out), a reply ending on ``ends``,
        reading what ``config`` asks (``ask_after_openers``, ``ask_on_refusal``)."""
        return cls(lambda ids: tokenizer.decode(list(ids), skip_special_tokens=True), frozenset(ends),
                   config.ask_after_openers, config.ask_on_refusal, read_limit(config))  # fmt: skip

    @classmethod
    def wanted(cls, tokenizer: Any, ends: Collection[int], config: RecallConfig) -> ReplyReader | None:
        """:meth:`of` where ``config`` reads the reply as text (:func:`read_limit`), else ``None``."""
        return cls.of(tokenizer, ends, config) if read_limit(config) else None

    def verdict(self, ids: Sequence[int]) -> bool | None:
        """Whether the reply that begins with ``ids`` gives up (``None``: too short to tell)."""
        return gives_up(self.decode(ids), openers=self.openers, refusals=self.refusals)


def reads_abstention(logits: torch.Tensor, run: Callable[[list[int]], torch.Tensor], abstention: Sequence[int],
                     recall_id: int, pad_id: int, reader: ReplyReader | None = None) -> bool:  # fmt: skip
    """Whether greedy decoding with no recall gives up: writes ``abstention`` from the reply's start
    or, with a ``reader``, what it reads as giving up: the abstention after short sentences ("Of
    course. I don't know."), a refusal ("I'm sorry for any confusion, but ..."):
    :func:`recall_core.decoding.abstain.gives_up`.

    ``logits`` are the reply's first step's (``[vocab]``). ``run`` runs ids on the prompt's cache
    (after those it ran before) and returns their logits (``[n, vocab]``); the caller crops the cache
    or rolls it back. Without a ``reader``, only when the greedy first token is the abstention's
    first id are the abstention's ids but the last run at once, teacher-forced. With a ``reader``
    the reply is decoded greedily one id at a time until its text tells (a first word that opens
    nothing the reader looks for, or a sentence of more than ``OPENER_WORDS`` words before the
    abstention, stops it at once), the end of the reply, or the reader's ``limit`` ids, whatever its
    first token: "I'm sorry. I don't know." opens with the abstention's first id too.
    """
    if not abstention:
        return False
    first = unrecalled_token(logits, recall_id, pad_id)
    if reader is not None:
        return _gives_up_greedily(first, run, reader, recall_id, pad_id)
    if first != abstention[0]:
        return False
    rest = abstention[1:]
    if not rest:
        return True
    later = run(list(abstention[:-1]))
    return all(unrecalled_token(later[i], recall_id, pad_id) == token for i, token in enumerate(rest))


def _gives_up_greedily(first: int, run: Callable[[list[int]], torch.Tensor], reader: ReplyReader, recall_id: int,
                       pad_id: int) -> bool:  # fmt: skip
    ids = [first]
    while True:
        verdict = reader.verdict(ids)
        if verdict is not None:
            return verdict
        if ids[-1] in reader.ends or len(ids) >= reader.limit:
            return False
        ids.append(unrecalled_token(run([ids[-1]])[-1], recall_id, pad_id))


@torch.no_grad()
def first_pass(model: Any, ids: torch.LongTensor, recall_id: int, pad_id: int, threshold: float,
               abstention: Sequence[int] = (), reader: ReplyReader | None = None) -> tuple[Decision, Any]:  # fmt: skip
    """Run ``ids`` (``[1, L]``, the prompt as ``"model"`` renders it) and decide.

    Returns the decision (:func:`decide_logits`; asked too when the reply without memory would give
    up with ``abstention``'s ids, at its start or after an opener read by ``reader``:
    :func:`reads_abstention`; ``()``: not checked) and a ``DynamicCache`` of
    the first ``L - 1`` ids (the last one is run again by the generation that follows, which needs
    its logits).
    """
    from transformers import DynamicCache

    cache = DynamicCache(config=model.config)
    keep_every_position(cache)  # cropped back below: a sliding-window layer must keep its past (a crash before 2026-12-06)
    out = model(input_ids=ids, use_cache=True, **{CACHE_KEY: cache}, **last_logit_only(model))
    logits = out.logits[0, -1]
    decision = decide_logits(logits, recall_id, pad_id, threshold)

    def run(forced: list[int]) -> torch.Tensor:  # the reply's ids after the prompt, on the same cache
        return model(input_ids=torch.tensor([forced], device=ids.device), use_cache=True, **{CACHE_KEY: cache}).logits[0]

    if not decision.asked and reads_abstention(logits, run, abstention, recall_id, pad_id, reader):
        decision = decision.upon_abstention()
    crop_cache(cache, ids.shape[1] - 1)
    return decision, cache


def memory_asks(question: str | None, memory: Memory | None, config: RecallConfig) -> Placed | None:
    """Why the memory's own search says the engine should ask where the model did not, with one search
    for both checks: ``"names"`` (``ask_on_names``: :func:`names_memory`'s test), else ``"score"``
    (``ask_on_score``: the best of the eligible candidates scores at least that), else ``None``.

    Nothing is searched when neither check can say yes: ``ask_on_score`` 0 (or an empty message) and a
    question without names (or ``ask_on_names`` off), ``max_recalls`` 0 or no memory. The search uses the question's
    text whatever ``query_mode``: it decides whether to recall, and the recall searches as
    configured. A memory error raises under ``on_memory_error="raise"``; otherwise it is warned and
    the checks say no.
    """
    text = question or ""
    # a question without capitals or typed in lower case has no word that can be a name
    check_names = config.ask_on_names and (bool(names(text)) or typed_in_lower_case(text))
    check_score = config.ask_on_score > 0 and bool(text.strip())  # an empty message matches nothing
    if not ((check_names or check_score) and config.max_recalls > 0 and memory is not None):
        return None
    candidates, _ = fetch_candidates(memory, RecallQuery(text=text), config,
                                     "the ask_on_names and ask_on_score checks were skipped, the reply goes on "
                                     "as the model decided")  # fmt: skip
    eligible = eligible_candidates(candidates, config)
    if check_names:
        asked = asked_names(text, eligible)
        if any(says_any(candidate, asked, capitalised=True) for candidate in eligible):
            return "names"
    if check_score and any(candidate.score >= config.ask_on_score for candidate in eligible):
        return "score"
    return None


def names_memory(question: str | None, memory: Memory | None, config: RecallConfig) -> bool:
    """``ask_on_names``: whether ``question`` names someone or something (:func:`recall_core.decoding.names.names`:
    a capitalised word inside a sentence) that one of ``memory``'s eligible candidates for it (the
    first ``top_k``, at least ``min_score``: those a recall may inject) names too
    (:func:`recall_core.decoding.names.says_any` with ``capitalised``: or as its speaker).

    A question about a named person or thing the user has talked about needs the memory whatever the
    model's first token says: asked "What does Ingrid keep?", the recall-tuned default wrote neither
    ``<recall>`` nor the abstention but made-up encyclopedia text ("Ingrid is a 2018 ... series").
    A question typed in lower case ("what does kim do") names the words of it that the candidates say
    as names (:func:`recall_core.decoding.names.asked_names`), so it is searched even without capitals.
    Nothing is searched for another question without names, with ``max_recalls`` 0 or without a memory.
    A note's first word is capitalised whatever it is, so "Great job!" names a question's "Great
    Wall": a false recall, never a missed one. (:func:`memory_asks` with ``ask_on_score`` off.)
    """
    return memory_asks(question, memory, config.replace(ask_on_score=0.0)) == "names"


def with_memory_search(decision: Decision, question: str | None, memory: Memory | None, config: RecallConfig) -> Decision:
    """``decision``, asked upon the memory's search (:func:`memory_asks`: the question's names, then
    the best candidate's score) when it was not asked and the search says so."""
    if decision.asked:
        return decision
    placed = memory_asks(question, memory, config)
    return decision if placed is None else decision.upon(placed)


def opening_marker(ids: torch.LongTensor, decision: Decision, recall_id: int) -> tuple[torch.LongTensor, Placed | None]:
    """``"model"``: the prompt ``ids`` (``[1, L]``) with ``<recall>`` after them when the engine took
    ``decision`` (upon the abstention or the question's names), so that the reply opens with the
    recall the model did not ask for; and why it was placed (``None``: not). A decision the model
    took itself (its own ``<recall>`` first) adds nothing: the loop's decoding writes that marker."""
    if decision.placed is None:
        return ids, None
    return torch.cat([ids, ids.new_full((1, 1), recall_id)], dim=-1), decision.placed


def placed_recall(recall: Recall, trigger: Placed) -> Recall:
    """``recall`` traced as placed by the engine (``trigger``: ``"abstention"``, ``"names"``, ``"score"``) when it is
    the call's prompt marker; a recall the model asked for in its reply keeps its trigger."""
    return replace(recall, trigger=trigger) if recall.in_prompt and recall.trigger == "prompt" else recall


def placed_result(result: RecallResult, trigger: Placed) -> RecallResult:
    """``result`` with its recalls as :func:`placed_recall` traces them, in its ``output`` too
    (``return_dict_in_generate``)."""
    recalls = [placed_recall(r, trigger) for r in result.recalls]
    if getattr(result.output, "recalls", None) is not None:
        result.output.recalls = list(recalls)
    return replace(result, recalls=recalls)


def traced_as(on_recall: Callable[[Recall], None] | None, trigger: Placed) -> Callable[[Recall], None] | None:
    """``on_recall`` handed each recall as :func:`placed_recall` traces it (``None`` stays ``None``)."""
    if on_recall is None:
        return None
    return lambda recall: on_recall(placed_recall(recall, trigger))


def shared_cache(cache: Any, first: torch.LongTensor, then: torch.LongTensor) -> Any | None:
    """``cache`` (of ``first``'s ids) cut to the ids ``then`` starts with too, or ``None`` if there are none.

    At least the last id of ``then`` is left to run (the generation needs its logits).
    """
    a, b = first[0].tolist(), then[0].tolist()
    shared = 0
    limit = min(len(a) - 1, len(b) - 1)
    while shared < limit and a[shared] == b[shared]:
        shared += 1
    if shared == 0:
        return None
    crop_cache(cache, shared)
    return cache

"""Reading and planning a session's call: which messages are new, which cached ids stay, what is prefilled.

Before :class:`~recall_core.RecallSession` touches its cache, a call is read (the whole
conversation, or only what is new), rendered with the chat template as the generator would
(tools, this turn's ``<recall>``), compared with the text the cache stands for
(:mod:`recall_core.session.units`), and turned into a :class:`Plan`: the cached units that
stay and the new ids, in units, to prefill. Planning changes nothing; the session then cuts,
evicts (:mod:`recall_core.session.evict`), prefills and commits.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from recall_core.config import RecallConfig
from recall_core.prompt import (
    check_messages,
    checked_spans,
    decorate,
    last_user_text,
    marker_offset,
    marker_tokens,
    place_marker,
    render_chat_text,
)
from recall_core.session.evict import Eviction
from recall_core.session.units import (
    EXTRA,
    TEXT,
    Message,
    Part,
    Tokens,
    Unit,
    common_prefix,
    digest,
    drop_last_text_part,
    last_text_part,
    matching_units,
    message_ends,
    tile,
)
from recall_core.session.units import tokenize as tokenize_text
from recall_core.structured.outputs import OutputPlan
from recall_core.tokens import RECALL_TOKEN

__all__ = ["CacheState", "Continued", "Conversation", "Input", "Plan", "SessionPlanner", "View", "check_input", "continued", "user_text"]

Input = str | Mapping[str, Any] | Sequence[Mapping[str, Any]]


@dataclass(frozen=True)
class Continued:
    """A whole conversation of which only the messages after the first ``len(digests) - len(tail)``
    are given: those are known by their digests (a session that saw them, and may have evicted
    them, goes on from there). How a recall session feeds the base model's session
    (``RecallConfig.base_replies``), whose conversation it holds only in part."""

    digests: tuple[bytes, ...]
    tail: tuple[dict[str, Any], ...]
Conversation = list[tuple[int, dict[str, Any]]]  # (index in the conversation, message)
_RETRIES = 4  # how many parts a boundary check may step back before starting afresh


@dataclass
class Plan:
    """One call, worked out before the cache is touched."""

    units: list[Unit]  # the cached units that stay (the last may be the pending reply, cut short)
    keep: int  # cache positions that stay (before eviction)
    new_units: list[Unit]  # what is prefilled (the first may continue units[-1])
    digests: list[bytes]
    fresh: bool = False
    reason: str | None = None
    evicted_before: int = 0  # a fresh start: messages that stay evicted
    eviction: Eviction = field(default_factory=Eviction)
    output: OutputPlan | None = None  # tools / structured output, for the generator
    query: str | None = None  # what this turn's recall searches with: the last user message
    messages: list[dict[str, Any]] = field(default_factory=list)  # the conversation the call renders (cached and new)
    before: list[Unit] = field(default_factory=list)  # the units the session held when the call was planned

    @property
    def ids(self) -> list[int]:
        return [i for u in self.new_units for i in u.ids]


@dataclass
class View:
    """A call's conversation as rendered: the messages shown, their text, and where this turn's
    ``<recall>`` may go (in order of preference)."""

    messages: list[dict[str, Any]]
    text: str
    tools: list[dict[str, Any]] | None
    output: OutputPlan | None
    markers: list[int]
    query: str | None
    spans: list[tuple[int, int]] = field(default_factory=list)  # the messages' contents, tokenized as text
    keep: tuple[str, ...] = ()  # control tokens the contents may carry (``<recall>`` under "explicit")

    def marker_after(self, keep_text: int) -> int | None:
        """The first place for the marker after the cached text (``None``: none is). Not right at
        its end: the first id prefilled cannot be a marker (the loop needs the logits before it)."""
        return next((at for at in self.markers if at > keep_text), None)


@dataclass(frozen=True)
class CacheState:
    """What a session's cache stands for, as the planner reads it (the session owns and changes it)."""

    units: Sequence[Unit]
    digests: Sequence[bytes]
    sinks: int | None  # units never evicted (``None``: no eviction yet)
    evicted: int  # messages evicted (they follow the sinks)
    last_text: str  # the last reply's text as it was returned
    turn: int


class SessionPlanner:
    """What :class:`~recall_core.RecallSession` does before it touches its cache: read a call and
    work out its :class:`Plan` from a :class:`CacheState`. Planning changes nothing."""

    def __init__(self, generator: Any, recall_id: int, pad_id: int) -> None:
        self.generator = generator
        self.tokenizer = generator.tokenizer
        self.recall_id = recall_id
        self.pad_id = pad_id

    # ------------------------------------------------------------------ reading a call
    def read(self, state: CacheState, messages: Input | Continued,
             config: RecallConfig) -> tuple[list[bytes], list[dict[str, Any]], int]:  # fmt: skip
        """``(digests of the call's whole conversation, its messages from index start, start)``.

        A list is the whole conversation; one message or a string is what follows the
        session's own conversation (its last reply confirmed as it was returned). The
        conversation is taken as the recall policy renders it (:func:`decorate`); a
        :class:`Continued` one is taken as it was rendered already.
        """
        if isinstance(messages, Continued):
            tail = [dict(m) for m in messages.tail]
            return list(messages.digests), tail, len(messages.digests) - len(tail)
        if isinstance(messages, str):
            messages = {"role": "user", "content": messages}
        if isinstance(messages, Mapping):
            tail = [dict(messages)]
            check_messages(tail)
            if state.units and state.units[-1].pending:
                tail.insert(0, {"role": "assistant", "content": state.last_text})
            if not state.digests:
                tail = decorate(tail, config)
            return [*state.digests, *(digest(m) for m in tail)], tail, len(state.digests)
        check_input(messages)
        full = [dict(m) if isinstance(m, Mapping) else m for m in messages]
        check_messages(full)
        full = decorate(full, config)
        return [digest(m) for m in full], full, 0

    # ------------------------------------------------------------------ planning
    def plan(self, state: CacheState, digests: list[bytes], tail: list[dict[str, Any]], start: int, *, generate: bool,
             config: RecallConfig, outputs: Mapping[str, Any] | None = None, asked: bool = False,
             afresh: str | None = None) -> Plan:  # fmt: skip
        """Work out what to keep and what to prefill; changes nothing.

        ``asked``: a ``recall_policy="ask"`` turn whose decision was to recall: its ``<recall>``
        goes at the start of the new user message (the conversation is rendered as ``"ask"``
        renders it, so the cached part stays the same from turn to turn). ``afresh``: start
        afresh, for this reason (the cache cannot be cut back where the plan would keep it).
        """
        if afresh is not None:
            return self._fresh_plan(state, digests, tail, start, generate, config, outputs, afresh, asked)
        known = common_prefix(digests, state.digests)
        reason = None
        if known < len(state.digests):
            reason = f"the messages differ from the session's conversation from message {known} on"
            if known < _frozen_messages(state):
                return self._fresh_plan(state, digests, tail, start, generate, config, outputs, reason, asked)
        units = [u for u in state.units if (u.index + len(u.messages) <= known and not u.pending)
                 or (u.pending and known == len(state.digests))]  # fmt: skip
        cached: Conversation = [(u.index + i, m.message) for u in units for i, m in enumerate(u.messages)]
        first_new = cached[-1][0] + 1 if cached else (units[0].index if units else 0)
        if first_new < start:  # a call of new messages only, on a cache that lost older ones: start afresh
            return self._fresh_plan(state, digests, tail, start, generate, config, outputs, reason, asked)
        conversation = cached + [(i, tail[i - start]) for i in range(first_new, len(digests))]
        view = self._render(conversation, generate, config, outputs, asked)
        kept, keep_text = matching_units(units, view.text)
        found = self._suffix_tokens(kept, keep_text, view)
        if found is None or not _keeps_sinks(state, found[0]):
            reason = reason or "the chat template renders the cached conversation differently"
            return self._fresh_plan(state, digests, tail, start, generate, config, outputs, reason, asked)
        kept, tokens, keep_text = found
        if reason is None and keep_text < len("".join(u.text for u in units if not u.pending)):
            reason = "the chat template renders the earlier messages differently: they are prefilled again"
        if reason is None and any(u.messages and not u.parts for u in units):
            reason = "a call that failed took earlier messages out of the cache: they are prefilled again"
        held = sum(len(u.messages) for u in kept)
        new_units = self._split(conversation, view, held, tokens, keep_text, generate,
                                continues=bool(kept) and kept[-1].pending)  # fmt: skip
        keep = sum(u.length for u in kept)
        # Kept nothing (a cache that lost every message, :func:`~recall_core.session.units.lost_units`):
        # a fresh start, with the messages left out of the conversation still evicted.
        return Plan(kept, keep, new_units, digests, keep == 0 and state.turn > 0, reason,
                    evicted_before=len(digests) - len(conversation), output=view.output, query=view.query,
                    messages=[m for _, m in conversation])  # fmt: skip

    def _fresh_plan(self, state: CacheState, digests: list[bytes], tail: list[dict[str, Any]], start: int, generate: bool,
                    config: RecallConfig, outputs: Mapping[str, Any] | None, reason: str | None,
                    asked: bool = False) -> Plan:  # fmt: skip
        """Start the cache afresh from the messages at hand (a whole conversation, or what the session holds)."""
        if start == 0:
            conversation: Conversation = list(enumerate(tail))
        else:  # new messages only: the ones still cached, then the new ones
            held = [(u.index + i, m.message) for u in state.units for i, m in enumerate(u.messages)]
            conversation = held + [(start + i, m) for i, m in enumerate(tail)]
        view = self._render(conversation, generate, config, outputs, asked)
        tokens = self._tokens(view, 0, view.marker_after(-1))
        new_units = self._split(conversation, view, 0, tokens, 0, generate)
        evicted = 0 if start == 0 else state.evicted
        return Plan([], 0, new_units, digests, True, reason or "started afresh", evicted,
                     output=view.output, query=view.query, messages=[m for _, m in conversation])  # fmt: skip

    def _render(self, conversation: Conversation, generate: bool, config: RecallConfig,
                outputs: Mapping[str, Any] | None, asked: bool = False) -> View:  # fmt: skip
        """The conversation as this call renders it: tools (:meth:`RecallGenerator.plan`), the
        chat template, and where the recall policy puts this turn's ``<recall>``."""
        messages = [m for _, m in conversation]
        output = self.generator.plan(messages, **(outputs or {})) if generate else None
        shown = list(output.prompt) if output is not None else messages
        tools = output.template_tools if output is not None else None
        text = render_chat_text(self.tokenizer, shown, add_generation_prompt=generate, tools=tools)
        keep = marker_tokens(config.recall_policy)
        spans = checked_spans(self.tokenizer, shown, text, add_generation_prompt=generate, tools=tools, keep=keep)
        markers: list[int] = []
        if generate and (config.recall_policy == "auto" or asked):
            # Where the config puts it; when that is cached already (the system message after
            # the first turn), at the start of the new user message instead. An "ask" turn that
            # asked puts it there always: its decision pass has the system message in the cache.
            positions = [config.recall_position, "user_start"] if config.recall_policy == "auto" else ["user_start"]
            for position in dict.fromkeys(positions):
                if position == "assistant_start":
                    markers.append(len(text))
                    continue
                marked = place_marker(shown, position, config.system_prompt)
                rendered = render_chat_text(self.tokenizer, marked, add_generation_prompt=True, tools=tools)
                at = marker_offset(text, rendered, RECALL_TOKEN)
                if at is not None:
                    markers.append(at)
        return View(shown, text, tools, output, markers, last_user_text(messages), spans, keep)

    def _suffix_tokens(self, units: list[Unit], keep_text: int, view: View) -> tuple[list[Unit], Tokens, int] | None:
        """The ids of the text after ``keep_text``, checked to join the kept ones as one tokenization would.

        The last kept text part is tokenized again together with the new text; when the ids
        come out different (a reply the model tokenized its own way, a boundary inside a
        word), that part is dropped too and the check steps one part further back.
        """
        units = [replace(u, parts=list(u.parts)) for u in units]
        for _ in range(_RETRIES):
            mark = view.marker_after(keep_text)
            alone = self._tokens(view, keep_text, mark)
            overlap = last_text_part(units)
            if overlap is None:
                return (units, alone, keep_text) if alone.ids else None
            if alone.ids:
                joint = self._tokens(view, keep_text - len(overlap.text), mark)
                if self.plain(joint.ids) == self.plain(overlap.ids) + self.plain(alone.ids):
                    return units, alone, keep_text
            units, keep_text = drop_last_text_part(units)
        return None

    def _tokens(self, view: View, start: int, marker: int | None) -> Tokens:
        """Ids of the view's ``text[start:]``, with this turn's ``<recall>`` inserted at ``marker``
        (an offset in the text); the messages' contents tokenized as text."""
        text, spans, keep = view.text, view.spans, view.keep
        if marker is None:
            return tokenize_text(self.tokenizer, text[start:], start, spans, keep)
        before = tokenize_text(self.tokenizer, text[start:marker], start, spans, keep)
        after = tokenize_text(self.tokenizer, text[marker:], marker, spans, keep)
        return before + Tokens([self.recall_id], [marker]) + after

    def _split(self, conversation: Conversation, view: View, held: int, tokens: Tokens, keep_text: int,
               generate: bool, continues: bool = False) -> list[Unit]:  # fmt: skip
        """The ids to prefill, as units: the rest of a pending reply, each new message, the new reply's header.

        ``continues``: the cache ends with a pending reply, which the first unit confirms. That unit is
        kept with no ids of its own too (a reply that ended with end-of-sequence is whole in the cache):
        until 2026-12-07 it was dropped, and the reply left the session's conversation (its parity
        with ``generate()`` and the write of it at its eviction went with it; a reviewer)."""
        text = view.text
        spans: list[tuple[int, int, int]] = []  # (first and last conversation position, end of their text)
        first = held
        ends = message_ends(self.tokenizer, view.messages, held, text, generate, view.tools)
        if len(view.messages) != len(conversation):  # the tools' plan rewrote the messages: one unit for the new ones
            ends = [(len(conversation) - 1, ends[-1][1])] if ends else []
        for last, end in ends:
            spans.append((first, last, end))
            first = last + 1
        if generate:
            spans.append((len(conversation), len(conversation), len(text) + 1))  # the reply's header, the marker
        elif spans:
            spans[-1] = (*spans[-1][:2], len(text) + 1)
        texts = tile(tokens, keep_text, len(text), text)
        units, cursor = [], 0
        for first, last, end in spans:
            if first < len(conversation):
                unit = Unit(conversation[first][0], [Message(m, index=i) for i, m in conversation[first : last + 1]])
            else:
                unit = Unit(conversation[-1][0] + 1 if conversation else 0, pending=True)
            while cursor < len(tokens.ids) and tokens.starts[cursor] < end:
                token, piece = tokens.ids[cursor], texts[cursor]
                kind = EXTRA if token == self.recall_id else TEXT
                if kind == TEXT and unit.parts and unit.parts[-1].kind == TEXT:
                    unit.parts[-1].ids.append(token)
                    unit.parts[-1].text += piece
                else:
                    unit.parts.append(Part(kind, [token], piece))
                cursor += 1
            if unit.parts or unit.pending or (continues and first == held):
                units.append(unit)
        return units

    def plain(self, ids: Sequence[int]) -> list[int]:
        return [i for i in ids if i != self.recall_id and i != self.pad_id]


# -- the sinks a plan must keep --------------------------------------------------------------


def _frozen_messages(state: CacheState) -> int:
    """Messages a call can no longer cut back to: the sinks and the evicted ones (once something was evicted)."""
    if state.sinks is None:
        return 0
    return sum(len(u.messages) for u in state.units[: state.sinks]) + state.evicted


def _keeps_sinks(state: CacheState, units: list[Unit]) -> bool:
    """Whether ``units`` begin with the session's sinks, unchanged (evicted sessions must keep them)."""
    if state.sinks is None:
        return True
    return len(units) >= state.sinks and all(
        a.parts == b.parts for a, b in zip(units[: state.sinks], state.units[: state.sinks], strict=True)
    )


def check_input(messages: object) -> None:
    """``ValueError`` unless ``messages`` is a call's input: a list of messages, one message or a string."""
    if not isinstance(messages, (str, Mapping, Sequence, Continued)):
        raise ValueError(f"messages must be a list of messages, one message or a string, got {type(messages).__name__}")


def user_text(messages: Input) -> str | None:
    """The last user message's text of a call's ``messages`` (a string is one): what its recall asks with."""
    if isinstance(messages, str):
        return messages
    if isinstance(messages, Mapping):
        return str(messages.get("content") or "") if messages.get("role") == "user" else None
    return last_user_text(messages)


def continued(plan: Plan, seen: Sequence[bytes], given: Sequence[bytes]) -> Input | Continued:
    """What a session that was given the messages of ``plan``'s conversation whose digests are
    ``given`` (its start), and holds ``seen`` (their digests as it took them), is given to go on
    with it: the messages after those, behind its own digests, so that it keeps its own cache and evicts by its own bounds (the
    base model's session, with ``RecallConfig.base_replies``). Before 2026-12-07 it was given the
    conversation the recall session holds, and from that session's first eviction on (messages gone
    from the middle) it started afresh every turn. Where a message it was not given is evicted
    already, the conversation is another, or it holds nothing, it is given the conversation held
    (and goes on from that)."""
    new = len(plan.digests) - len(given)
    if not seen or list(plan.digests[: len(given)]) != list(given) or not 0 < new <= len(plan.messages):
        return plan.messages
    tail = plan.messages[len(plan.messages) - new :]
    if [digest(m) for m in tail] != plan.digests[len(given) :]:
        return plan.messages
    return Continued((*seen, *plan.digests[len(given) :]), tuple(tail))

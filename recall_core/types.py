"""Plain data types shared by the engine, the memory store and the adapters.

Nothing here imports torch models or Chroma: these are the words the parts of
recall use to talk to each other.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

QueryMode = Literal["text", "hidden"]


@dataclass(frozen=True)
class RecallQuery:
    """What the decode loop asks the memory at a ``<recall>``.

    Attributes:
        text: the text before ``<recall>`` (the current turn, or the last N tokens).
        mode: ``"text"`` (the memory embeds ``text``) or ``"hidden"`` (it searches with ``vector``).
        vector: a ``"hidden"`` query: the ``<recall>`` hidden states mapped into the memory
            encoder's space by a trained query head (:mod:`recall_core.models.query_head`).
        vector_space: the name of the encoder ``vector`` is in (a memory refuses another).
    """

    text: str
    mode: QueryMode = "text"
    vector: Sequence[float] | None = None
    vector_space: str | None = None


@dataclass(frozen=True)
class MemoryCandidate:
    """One search hit.

    Attributes:
        id: stable memory id.
        score: cosine similarity to the query, higher is closer (in [-1, 1]).
        text: the memory text that is injected.
        embedding: the stored vector the score was computed against, if the store returns it.
        metadata: whatever the store keeps beside the text (role, session, timestamp, ...).
    """

    id: str
    score: float
    text: str
    embedding: Sequence[float] | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Memory(Protocol):
    """What the recall loop needs from a long-term memory: one method."""

    def search(self, query: RecallQuery, k: int) -> list[MemoryCandidate]:
        """Return up to ``k`` candidates, best first."""
        ...


def check_memory(memory: object, name: str = "memory") -> None:
    """Refuse (``TypeError`` naming ``name``) a memory that cannot be searched: anything but ``None``
    without a ``search(query, k)`` method. The store itself is the usual slip (a user's memory is
    ``store.for_user(user_id)``): until 2026-12-07 a generator or a session took it, and every recall
    was skipped with a warning (a reviewer)."""
    if memory is None or callable(getattr(memory, "search", None)):
        return
    hint = " (a user's memory is store.for_user(user_id))" if callable(getattr(memory, "for_user", None)) else ""
    raise TypeError(f"{name} must have a search(query, k) method, got {type(memory).__name__}{hint}")


@dataclass(frozen=True)
class Recall:
    """One ``<recall>`` event in a generation, injected or not.

    Attributes:
        position: index in the returned ``sequences`` where the injected span starts
            (the token right after ``<recall>``).
        score: similarity of the first injected memory, ``None`` when nothing was injected.
        memory_id: id of the first injected memory, ``None`` when nothing was injected.
        text: the injected notes, one memory per line ("" when nothing was injected;
            ``RecallConfig.empty_notes`` when the model's own ``<recall>`` found nothing).
        query: the query text used for the search.
        length: number of embeddings injected (``<|memory_pad|>`` ids in ``sequences``).
        reason: why nothing was injected ("no memory", "below min_score",
            "max_recalls reached", "memory error: ..."), ``None`` when something was. Set
            too when the block said only ``RecallConfig.empty_notes`` (``length`` > 0 then).
        candidates: ``(memory_id, score)`` of every candidate that was considered.
        in_prompt: the ``<recall>`` was in the prompt (not generated). When nothing was
            injected there, the marker was dropped: ``position`` is where it stood and the
            prompt ran as if it were absent.
        memories: ``(memory_id, score)`` of every injected memory, in the order of the notes.
        inject_mode: how the block was injected (``"tokens"`` or ``"kv"``), ``None``
            when nothing was. ``"tokens"`` where ``"kv"`` was asked for means it fell back.
        kv_fallback: why ``inject_mode="kv"`` fell back to ``"tokens"`` (a model without rotary
            positions, a cache whose layers cannot be edited), else ``None``.
        kv_recomputed: in ``kv`` mode, positions of the block computed at the recall.
        kv_reused: in ``kv`` mode, positions spliced from blocks that were already in the cache
            of memories (the rest of the spliced ones were computed at this recall, once).
        kv_discarded: in ``kv`` mode, block files found on disk damaged (tensors that do not
            match their digest), unreadable or foreign: each was removed, counted as a miss, and
            its block computed again.
        trigger: what placed the ``<recall>``: ``"prompt"`` (a marker in the prompt),
            ``"model"`` (the model generated it) or ``"uncertainty"`` (the loop wrote it before
            an uncertain token, ``recall_policy="uncertainty"``; when nothing was injected it was
            taken back, and ``position`` is where it stood) or ``"abstention"`` (the engine placed it
            because the reply without memory would have been "I don't know.",
            ``RecallConfig.ask_on_abstention``: under ``"model"`` at the reply's start, under
            ``"ask"`` where ``"auto"`` puts it) or ``"names"`` (placed so because the question names
            someone or something the memory says, ``RecallConfig.ask_on_names``) or ``"score"`` (placed
            so because a memory scored at least ``RecallConfig.ask_on_score`` for the question).
        entropy: for ``"uncertainty"``, the entropy (nats) of the next-token distribution that
            fired it; else ``None``.
    """

    position: int
    score: float | None
    memory_id: str | None
    text: str
    query: str
    length: int = 0
    reason: str | None = None
    candidates: tuple[tuple[str, float], ...] = ()
    in_prompt: bool = False
    memories: tuple[tuple[str, float], ...] = ()
    inject_mode: str | None = None
    kv_fallback: str | None = None
    kv_recomputed: int = 0
    kv_reused: int = 0
    kv_discarded: int = 0
    trigger: Literal["prompt", "model", "uncertainty", "abstention", "names", "score"] = "prompt"
    entropy: float | None = None

    @property
    def injected(self) -> bool:
        return self.memory_id is not None


@dataclass(frozen=True)
class Usage:
    """Token counts of one generation.

    Attributes:
        prompt_tokens: ids of the prompt (with a session: the whole cached conversation plus
            the new messages), less a prompt ``<recall>`` where nothing was injected: it is
            dropped, and ``sequences`` holds the prompt without it.
        generated_tokens: new tokens sampled.
        injected_tokens: memory embeddings injected by this generation's recalls, and the
            ``<recall>`` markers the loop wrote itself and kept (``recall_policy="uncertainty"``).
        cached_tokens: of ``prompt_tokens``, how many were read from a session's cache rather
            than computed (OpenAI's ``cached_tokens``, LangChain's ``cache_read``).
    """

    prompt_tokens: int
    generated_tokens: int
    injected_tokens: int
    cached_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        """Every position the model processed: prompt, injected memory and generated tokens."""
        return self.prompt_tokens + self.generated_tokens + self.injected_tokens


@dataclass(frozen=True)
class SessionReport:
    """What a :class:`~recall_core.RecallSession` did with its KV cache on one call.

    Attributes:
        turn: how many calls the session has served, this one included.
        reused_tokens: cache positions kept from earlier calls (not computed again).
        prefilled_tokens: prompt positions computed in this call (the new messages, and
            whatever had to be computed again).
        evicted_tokens: positions evicted from the cache in this call.
        evicted_messages: messages evicted in this call.
        cache_tokens: positions in the cache after the call.
        cache_bytes: bytes of the cache's keys and values after the call.
        fresh_prefill: nothing was reused: the conversation was prefilled from its start.
        reason: why the cache was not reused in full (an edited history, a reply that came
            back different, a template that rewrote earlier turns); ``None`` when the
            messages extended the session's conversation.
        memory_written: ids of the memories written for evicted messages.
        memory_write_error: why writing evicted messages failed (they are retried at the next
            eviction), ``None`` when it did not fail.
    """

    turn: int
    reused_tokens: int
    prefilled_tokens: int
    evicted_tokens: int
    evicted_messages: int
    cache_tokens: int
    cache_bytes: int
    fresh_prefill: bool = False
    reason: str | None = None
    memory_written: tuple[str, ...] = ()
    memory_write_error: str | None = None


@dataclass(frozen=True)
class RecallResult:
    """What :meth:`recall_core.RecallGenerator.generate` returns.

    Attributes:
        text: the new text only, special tokens removed (stop strings cut).
        sequences: full ids like ``model.generate()``: prompt + injected pads + new tokens, shape ``[1, L]``.
        recalls: every ``<recall>`` event, in order.
        usage: token counts.
        finish_reason: "stop" (eos or stop string), "length" (``max_new_tokens``, or ``max_length``,
            reached), "tool_calls" (complete calls), "time" (``max_time`` ran out, or a constrained
            reply was closed early by it) or "cancelled" (a stream left early, a cancelled call).
        output: with ``return_dict_in_generate=True``, the full ``RecallGenerateOutput``
            (scores, logits, attentions, hidden states, cache, recalls).
        session: from a :class:`~recall_core.RecallSession`, what it did with its cache.
        tool_calls: with ``tools=``, the calls the reply makes (:class:`recall_core.structured.tools.ToolCall`);
            ``text`` is then the reply without them.
        invalid_tool_calls: calls the model started but wrote wrong
            (:class:`recall_core.structured.tools.InvalidToolCall`: raw text and why).
    """

    text: str
    sequences: Any
    recalls: list[Recall]
    usage: Usage
    finish_reason: str = "stop"
    output: Any = None
    session: SessionReport | None = None
    tool_calls: tuple[Any, ...] = ()
    invalid_tool_calls: tuple[Any, ...] = ()

"""`RecallConfig`: every knob of the recall loop, checked when it is made."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any, Literal, get_args

from .settings import RANGES, Range, in_range, int_at_least, one_of
from .types import QueryMode

InjectMode = Literal["tokens", "vector"]
OnMemoryError = Literal["warn", "raise"]
RecallPolicy = Literal["auto", "explicit"]
RecallPosition = Literal["assistant_start", "user_end"]

#: The wrapper around a memory's text in ``tokens`` injection mode. Measured on
#: SmolLM2-135M-Instruct with 8 made-up personal facts (the fact's keyword in the answer):
#: at the start of the assistant turn this template got 7/8; the best of six templates at
#: the end of the user turn got 5/8 (see BENCHMARKS.md).
DEFAULT_TEMPLATE = "Memory: {text}\n\n"
_COSINE = Range("in [-1, 1] (a cosine)", lambda v: -1 <= v <= 1)


@dataclass(frozen=True)
class RecallConfig:
    """How the loop searches, chooses and injects memories at ``<recall>``.

    Args:
        query_mode: ``"text"`` encodes the text before ``<recall>`` with the memory's
            sentence encoder (default, works untrained); ``"hidden"`` compares the
            ``<recall>`` hidden state with LM-space keys written by the memory writer.
        query_window: ``None`` uses the current turn (the text after the last special
            token before ``<recall>``); an int uses the last N tokens instead.
        inject_mode: ``"tokens"`` injects the memory text's token embeddings wrapped in
            ``template`` (default); ``"vector"`` injects one embedding per memory
            (experimental: useful only with a trained projector).
        template: format string with ``{text}``, used by ``"tokens"`` mode.
        top_k: how many candidates to fetch and choose among.
        temperature: temperature of the choice among candidates' scores; 0 picks the best.
        top_p: nucleus cut over the candidates' softmax, in (0, 1].
        min_score: candidates whose cosine score is below this are never injected.
        max_recalls: most recalls in one generation call; further ``<recall>`` tokens are
            left as they are and the model is kept from emitting more.
        max_memory_tokens: a memory longer than this (in tokens) is cut.
        on_memory_error: ``"warn"`` goes on without recall (the trace says why);
            ``"raise"`` raises.
        recall_policy: for chat prompts, ``"auto"`` puts ``<recall>`` where
            ``recall_position`` says; ``"explicit"`` leaves it to the prompt.
        recall_position: with ``recall_policy="auto"``: ``"assistant_start"`` (default, right
            after the assistant header, so the reply begins from the memory) or
            ``"user_end"`` (at the end of the last user message).
    """

    query_mode: QueryMode = "text"
    query_window: int | None = None
    inject_mode: InjectMode = "tokens"
    template: str = DEFAULT_TEMPLATE
    top_k: int = 4
    temperature: float = 0.0
    top_p: float = 1.0
    min_score: float = 0.2
    max_recalls: int = 4
    max_memory_tokens: int = 256
    on_memory_error: OnMemoryError = "warn"
    recall_policy: RecallPolicy = "auto"
    recall_position: RecallPosition = "assistant_start"

    def __post_init__(self) -> None:
        one_of("query_mode", self.query_mode, get_args(QueryMode))
        one_of("inject_mode", self.inject_mode, get_args(InjectMode))
        one_of("on_memory_error", self.on_memory_error, get_args(OnMemoryError))
        one_of("recall_policy", self.recall_policy, get_args(RecallPolicy))
        one_of("recall_position", self.recall_position, get_args(RecallPosition))
        if self.query_window is not None and (not isinstance(self.query_window, int) or self.query_window < 1):
            raise ValueError(f"query_window must be None or an int >= 1, got {self.query_window!r}")
        if "{text}" not in self.template:
            raise ValueError(f"template must contain '{{text}}', got {self.template!r}")
        int_at_least("top_k", self.top_k, 1)
        int_at_least("max_recalls", self.max_recalls, 0)
        int_at_least("max_memory_tokens", self.max_memory_tokens, 1)
        in_range("temperature", self.temperature, RANGES["temperature"])  # same ranges as sampling
        in_range("top_p", self.top_p, RANGES["top_p"])
        in_range("min_score", self.min_score, _COSINE)

    def replace(self, **changes: Any) -> RecallConfig:
        """A copy with ``changes`` applied (and checked)."""
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)



SessionPositions = Literal["shift", "keep"]


@dataclass(frozen=True)
class SessionConfig:
    """How a :class:`~recall_core.RecallSession` keeps its KV cache, and how many sessions an adapter keeps.

    Args:
        max_cache_tokens: most positions one session's cache may hold (``None``: no bound, up
            to the model's context window). Before a turn, whole old turns are evicted (oldest
            first, a user turn with its replies together) until the cache, the new messages
            and the most the turn can add (``max_new_tokens`` plus ``max_recalls`` memories
            of ``max_memory_tokens``) fit. Needs a model with rotary embeddings (RoPE).
        sink_tokens: the first positions that are never evicted (StreamingLLM's attention
            sinks), rounded up to whole messages and to the next user turn, so the system
            message and the start of the conversation always stay.
        positions: after an eviction, ``"shift"`` re-assigns positions inside the cache (the
            kept keys are re-rotated to close the gap, as StreamingLLM does), ``"keep"`` lets
            every token keep the position it was computed at, so positions grow past the
            trained window (seed 003's reading). Measured in BENCHMARKS.md.
        max_sessions: adapters keep at most this many sessions (least recently used go first).
        max_bytes: adapters keep sessions whose caches hold at most this many bytes in all
            (``None``: no bound).
    """

    max_cache_tokens: int | None = None
    sink_tokens: int = 4
    positions: SessionPositions = "shift"
    max_sessions: int = 16
    max_bytes: int | None = 1 << 30

    def __post_init__(self) -> None:
        int_at_least("sink_tokens", self.sink_tokens, 0)
        if self.max_cache_tokens is not None:
            int_at_least("max_cache_tokens", self.max_cache_tokens, 2)
            if self.max_cache_tokens <= self.sink_tokens:
                raise ValueError(
                    f"max_cache_tokens ({self.max_cache_tokens}) must be larger than sink_tokens ({self.sink_tokens})"
                )
        one_of("positions", self.positions, get_args(SessionPositions))
        int_at_least("max_sessions", self.max_sessions, 0)
        if self.max_bytes is not None:
            int_at_least("max_bytes", self.max_bytes, 1)

    def replace(self, **changes: Any) -> SessionConfig:
        """A copy with ``changes`` applied (and checked)."""
        return replace(self, **changes)

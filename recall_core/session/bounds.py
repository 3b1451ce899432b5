"""How a :class:`~recall_core.RecallSession` keeps its cache within ``max_cache_tokens``.

Before a turn the cache is cut back to what the call's plan keeps and whole old exchanges are
evicted after the attention sinks (:mod:`recall_core.session.evict` chooses them); evicted
messages are written to long-term memory once (:mod:`recall_core.session.writes`). After a
reply, memories injected in it may have taken the cache past its bound: :meth:`SessionBounds._trim`
makes room again. A mixin of :class:`~recall_core.RecallSession`: it uses the session's cache,
units and writes.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

from recall_core.kv.cache import cache_length, crop_cache, evict_span
from recall_core.session.evict import Choice, Eviction, choose_eviction
from recall_core.session.plan import Plan
from recall_core.session.units import Message
from recall_core.session.writes import caller_level

__all__ = ["CALL_ARGUMENTS", "SessionBounds"]

#: generate() keyword arguments of a reply that are not generation options.
CALL_ARGUMENTS = ("memory", "config", "stop", "on_recall", "streamer", "stopping_criteria")


class SessionBounds:
    """Cutting, evicting and trimming a session's cache (see the module docstring)."""

    config: Any
    generator: Any
    rotary: Any
    _cache: Any
    _units: list[Any]
    _sinks: int | None
    _evicted: int
    _writes: Any
    _warned_over: bool

    def _reserve(self, kwargs: Mapping[str, Any]) -> int:
        """What a reply adds to a bounded cache besides its memories: its new tokens."""
        if self.config.max_cache_tokens is None:
            return 0
        given = {k: v for k, v in kwargs.items() if k not in CALL_ARGUMENTS}
        options = self.generator.options_for(given)
        config = options.get("generation_config") or self.generator.model.generation_config
        # an upper bound; a config's max_length counts as a keyword's does (until 2026-12-07 it was refused, a reviewer)
        new = options.get("max_new_tokens") or config.max_new_tokens or options.get("max_length") or (
            config.max_length if options.get("generation_config") is not None else None)
        if not new:
            raise ValueError("a session with max_cache_tokens needs max_new_tokens (to know what a reply may add)")
        return int(new)

    def _trim(self, plan: Plan) -> None:
        """After a reply: memories injected in it may have taken the cache past its bound; old
        exchanges make room again (the exchange just answered stays).

        Never raises (the reply is committed): an exchange just answered that is itself past the
        bound stays until the next turn evicts it; a ``RuntimeWarning`` (once per session) says so.
        Before 2026-12-06 the bound's ``ValueError`` was raised here, and the reply was lost."""
        limit = self.config.max_cache_tokens
        if limit is None or self.cache_tokens <= limit:
            return
        choice = choose_eviction(self._units, [], self._sinks, self.config.sink_tokens, limit, 0, best_effort=True)
        if choice is not None:
            before = plan.eviction
            self._evict(plan, choice)
            plan.eviction = before.then(plan.eviction)
        if self.cache_tokens > limit and not self._warned_over:
            self._warned_over = True
            warnings.warn(f"the memories injected in this reply took the session's cache to {self.cache_tokens} positions, "
                          f"past max_cache_tokens ({limit}), and the exchange just answered cannot be evicted yet: it "
                          "is evicted at the next turn. Raise max_cache_tokens, or lower max_recalls / max_memory_tokens",
                          RuntimeWarning, stacklevel=caller_level())  # fmt: skip

    # ------------------------------------------------------------------ sinks, cut and eviction
    def _prepare(self, plan: Plan, reserve: int, generate: bool = True) -> list[int]:
        """Cut the cache back to what the plan keeps, evict what the bound asks for; return the cached ids.

        Whatever can fail (the bound, the context window) is checked before the cache is touched.
        """
        limit = self.config.max_cache_tokens
        sinks = None if plan.fresh or not plan.units else self._sinks
        choice = None
        if limit is not None:
            choice = choose_eviction(plan.units, plan.new_units, sinks, self.config.sink_tokens, limit, reserve,
                                     split=not generate)  # fmt: skip
        elif plan.keep + len(plan.ids) >= self.generator.context_window:
            raise ValueError(
                f"the conversation is {plan.keep + len(plan.ids)} tokens, as long as the model's context window of "
                f"{self.generator.context_window} or longer: give the session max_cache_tokens= to evict old turns"
            )
        if plan.fresh or not plan.units:
            self._cache, self._sinks = None, None
            if plan.fresh:
                self._evicted = plan.evicted_before
        elif plan.keep < cache_length(self._cache):
            crop_cache(self._cache, plan.keep)
        self._units = plan.units
        if choice is not None:
            self._evict(plan, choice)
        return self._cache_ids()

    def _evict(self, plan: Plan, choice: Choice) -> None:
        """Evict the chosen exchanges, from the cache and from what is about to be prefilled; write them."""
        self._sinks = choice.sinks
        gone = self._units[choice.cached_from : choice.cached_to]
        start = sum(u.length for u in self._units[: choice.cached_from])
        end = start + sum(u.length for u in gone)
        if end > start:
            evict_span(self._cache, start, end, self.rotary)
        continues = bool(self._units and self._units[-1].pending and plan.new_units
                         and plan.new_units[0].index == self._units[-1].index)  # fmt: skip
        if continues and plan.new_units[0].messages:  # the confirmed reply keeps its written flag
            plan.new_units[0].messages[0].written = self._units[-1].written
        dropped = set(choice.new_indices)
        new_gone = [plan.new_units[j] for j in choice.new_indices]
        unread = [m for j in choice.new_indices if not (continues and j == 0) for m in plan.new_units[j].messages]
        self._units = self._units[: choice.cached_from] + self._units[choice.cached_to :]
        plan.new_units = [u for j, u in enumerate(plan.new_units) if j not in dropped]
        messages = [m for u in gone + new_gone for m in u.messages]
        self._evicted += len(messages)
        written, error = self._write([m for m in messages if not m.written and m.role in self.write_roles])
        plan.eviction = Eviction(end - start, messages, len(unread), written, error)
        if unread and plan.reason is None:
            plan.reason = f"{len(unread)} new message(s) did not fit in the cache: evicted before they were read"

    def _write(self, messages: list[Message], warn: bool = True) -> tuple[list[str], str | None]:
        """Write evicted messages (and any that failed before) to long-term memory, one at a time
        (:mod:`recall_core.session.writes`); never raises."""
        written = self._writes.write(messages, warn)
        for message in messages:
            message.written = message.written or message.key in self._writes.log
        return written.ids, written.error

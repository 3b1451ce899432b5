"""How a :class:`~recall_core.RecallSession` decides, on its own cache, whether a reply recalls.

``"ask"`` (and a statement under ``"auto"``) prefills the new ids and reads the model's first
step; ``"model"`` may open the reply with ``<recall>`` where the model would give up without
memory or the question names what the memory says (:mod:`recall_core.decoding.ask`, where the
one-shot generator's versions of these checks live). A mixin of :class:`RecallSession`: it uses
the session's cache, planner and generator.
"""

from __future__ import annotations

from typing import Any

import torch

from recall_core.config import RecallConfig
from recall_core.decoding.abstain import abstention_ids
from recall_core.decoding.ask import (
    Decision,
    Placed,
    ReplyReader,
    asked_config,
    checks_abstention,
    decide_logits,
    reads_abstention,
    reads_text,
    with_memory_search,
)
from recall_core.kv.cache import crop_cache
from recall_core.session.plan import Input, Plan

__all__ = ["SessionDecisions"]


class SessionDecisions:
    """The decision steps of a session's reply (see the module docstring)."""

    generator: Any
    recall_id: int
    pad_id: int
    _cache: Any

    def _ask(self, messages: Input, config: RecallConfig, outputs: dict[str, Any], reserve: int,
             memory: Any, rendered: RecallConfig) -> tuple[Plan, list[int], RecallConfig, Placed | None, bool]:  # fmt: skip
        """``recall_policy="ask"`` in a session: the new ids are prefilled on the cache and the model decides.

        Not asked: the cache keeps them (less the last id, whose logits the reply needs) and the
        reply runs as ``"model"`` with no recall. Asked: the cache goes back to before them and the
        turn is planned again with ``<recall>`` at the start of the new user message, where the
        reply runs as ``"auto"``; only the new message is computed twice (recall_core.decoding.ask).
        Returns the plan, the cached ids, the config the reply runs under, why the engine asked
        where the model did not (``None``: it did not, or the model asked), and whether it asked. The conversation is
        rendered as ``rendered`` renders it (a statement under ``"auto"``: as ``"auto"`` does).
        """
        plan = self._plan_for(messages, rendered, generate=True, config=config, outputs=outputs)
        prefix = self._prepare(plan, reserve=reserve)
        decision = self._first_step(plan, prefix, config, self._checks_abstention(config, plan, len(prefix)), memory)
        if not decision.asked:
            crop_cache(self._cache, len(prefix) + len(plan.ids) - 1)
            return plan, prefix, decision.config(config), None, False
        # Back to the conversation before the call (the messages the plan prefilled again included:
        # the replan prefills them again, or evicts them), its evictions done and reported with the replan's.
        self._rollback(plan, prefix, failed=False)
        first, plan = plan, self._plan_for(messages, rendered, generate=True, config=config, outputs=outputs, asked=True)
        plan.reason = first.reason or plan.reason  # why the first plan prefilled what it did (a fresh start: the same)
        prefix = self._prepare(plan, reserve=reserve)
        plan.eviction = first.eviction.then(plan.eviction)
        return plan, prefix, asked_config(config, recall_position="user_start"), decision.placed, True

    def _opens_with_recall(self, plan: Plan, prefix: list[int], config: RecallConfig, memory: Any) -> Placed | None:
        """``"model"``: whether the reply opens with ``<recall>`` the model did not write, and why:
        without memory it would be ``"I don't know."`` (``ask_on_abstention``), or the question names
        what the memory says (``ask_on_names``; :func:`recall_core.decoding.ask.opening_marker`).
        For the first, the plan's ids are prefilled and kept, less the last one (the reply needs its
        logits); nothing is run where that check cannot be made (:meth:`_checks_abstention`)."""
        if not self._checks_abstention(config, plan, len(prefix)):
            try:  # nothing was run; a failed search still leaves the session as a failed reply does
                return with_memory_search(Decision.unread(), plan.query, memory, config).placed
            except BaseException:
                self._rollback(plan, prefix)
                raise
        decision = self._first_step(plan, prefix, config, True, memory)
        crop_cache(self._cache, len(prefix) + len(plan.ids) - 1)
        return decision.placed

    def _first_step(self, plan: Plan, prefix: list[int], config: RecallConfig, check_abstention: bool,
                    memory: Any) -> Decision:  # fmt: skip
        """Prefill the plan's ids on the cache and decide (:meth:`_decide`, then, where
        ``check_abstention`` (:meth:`_checks_abstention`), :meth:`_abstains`, then the question's
        names and the best score against ``memory``: :func:`~recall_core.decoding.ask.with_memory_search`); the cache holds
        them after, and goes back to ``prefix`` if anything fails."""
        try:
            logits = self._forward(plan.ids, last_only=True)[0, -1]
            decision = self._decide(logits, config)
            if not decision.asked and check_abstention and self._abstains(logits, config, len(prefix) + len(plan.ids)):
                decision = decision.upon_abstention()
            decision = with_memory_search(decision, plan.query, memory, config)
        except BaseException:
            self._rollback(plan, prefix)
            raise
        return decision

    def _decide(self, logits: torch.Tensor, config: RecallConfig) -> Decision:
        """``"ask"``'s decision from the logits of the reply's first step (``[vocab]``)."""
        return decide_logits(logits, self.recall_id, self.pad_id, config.recall_threshold)

    def _abstains(self, logits: torch.Tensor, config: RecallConfig, length: int) -> bool:
        """``ask_on_abstention``: would the reply without memory give up? (``logits``: its first
        step's; ``length``: the ids on the cache.) Read on the cache by
        :func:`~recall_core.decoding.ask.reads_abstention`, as text (past openers, refusals) where
        :func:`~recall_core.decoding.ask.reads_text`; the caller crops the cache or rolls it back."""
        generator = self.generator
        reads = reads_text(config, length, generator.context_window)
        reader = ReplyReader.of(generator.tokenizer, generator.eos_token_ids, config) if reads else None
        forward = lambda forced: self._forward(forced)[0]  # noqa: E731
        return reads_abstention(logits, forward, abstention_ids(generator.tokenizer), self.recall_id, self.pad_id, reader)

    def _checks_abstention(self, config: RecallConfig, plan: Plan, cached: int) -> bool:
        """Whether the abstention is checked for this plan (:func:`recall_core.decoding.ask.checks_abstention`):
        not under a constraint (tools, ``response_format``), nor where its ids would not fit in the
        context window after the ``cached`` ids and the plan's (reading past openers needs more
        room: :meth:`_abstains`)."""
        constrained = plan.output is not None and plan.output.constraint is not None
        return checks_abstention(config, abstention_ids(self.generator.tokenizer), constrained, cached + len(plan.ids),
                                 self.generator.context_window)  # fmt: skip

"""How a reply's ids become a :class:`~recall_core.types.RecallResult`: its text (special tokens and
stop strings cut, tool calls parsed), its usage and why it ended, as transformers reads the call.

:class:`ReplyResults` is a part of :class:`~recall_core.generator.RecallGenerator` (and of the served
generator, which reads an engine's reply the same way and says why it ended in its own terms).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch
from transformers import StoppingCriteriaList, StopStringCriteria

from recall_core.decoding.loop import RecallGenerateOutput
from recall_core.reply import finish_text
from recall_core.structured.outputs import OutputPlan
from recall_core.structured.tools import special_ids
from recall_core.tokens import MEMORY_PAD_TOKEN
from recall_core.types import RecallResult, Usage


class ReplyResults:
    """Reading a finished reply into a :class:`~recall_core.types.RecallResult` (a mixin: the class
    using it has ``model``, ``tokenizer`` and ``eos_token_ids``)."""

    model: Any
    tokenizer: Any
    eos_token_ids: set[int]

    def _decode(self, ids: list[int], keep: Sequence[str]) -> str:
        """Text of ``ids`` without special tokens, except the ``keep`` ones (tool-call markers)."""
        if not keep:
            return self.tokenizer.decode(ids, skip_special_tokens=True)
        vocab = self.tokenizer.get_vocab()
        dropped = special_ids(self.tokenizer) - {vocab[token] for token in keep if token in vocab}
        return self.tokenizer.decode([i for i in ids if i not in dropped], skip_special_tokens=False)

    def _finish_reason(
        self, kwargs: Mapping[str, Any], new_ids: list[int], generated: int, length: int, elapsed: float, hit_stop: bool,
        cancelled: bool = False,
    ) -> str:
        """Why decoding ended, by what the call asked as transformers reads it: its own ``eos_token_id``
        (else the model's), ``max_new_tokens`` (else ``max_length``, a whole sequence's ``length``),
        ``max_time`` (seconds of ``elapsed``); each a keyword, else the call's config, else the model's.
        ``"cancelled"`` where a :class:`~recall_core.streaming.CancelCriteria` stopped it before the reply
        ended (a stream left early, a cancelled call; before 2026-12-06 that said ``"stop"``)."""
        configs = [kwargs.get("generation_config"), getattr(self.model, "generation_config", None)]

        def setting(name: str) -> Any:
            return next((v for v in (kwargs.get(name), *(getattr(c, name, None) for c in configs)) if v is not None), None)

        eos = kwargs.get("eos_token_id", getattr(configs[0], "eos_token_id", None))
        eos_ids = id_set(eos) if eos is not None else self.eos_token_ids
        if hit_stop or (new_ids and new_ids[-1] in eos_ids):
            return "stop"
        if cancelled:
            return "cancelled"
        max_new = setting("max_new_tokens")
        if max_new:
            cut = generated >= max_new
        else:  # transformers' max_length counts the whole sequence
            max_length = setting("max_length")
            cut = bool(max_length) and length >= max_length
        if cut:
            return "length"
        max_time = setting("max_time")
        return "time" if max_time is not None and elapsed >= max_time else "stop"

    def _stopping_criteria(self, stop_strings: list[str]) -> StoppingCriteriaList:
        if not stop_strings:
            return StoppingCriteriaList()
        return StoppingCriteriaList([StopStringCriteria(self.tokenizer, stop_strings)])

    def _result(
        self,
        input_ids: torch.LongTensor,
        output: RecallGenerateOutput,
        stop_strings: list[str],
        kwargs: Mapping[str, Any],
        plan: OutputPlan,
        cached: int = 0,
        elapsed: float = 0.0,
        cancelled: bool = False,
    ) -> RecallResult:
        prompt_length = input_ids.shape[1]
        sequences, trace = output.sequences, list(output.recalls or [])
        pad_id = self.tokenizer.convert_tokens_to_ids(MEMORY_PAD_TOKEN)
        new_ids = [i for i in sequences[0, output.generated_start :].tolist() if i != pad_id]
        # What recall added: the notes' pads, and a <recall> the loop wrote itself and kept (policy "uncertainty";
        # until 2026-12-07 in no count, and the counts fell short of the sequence: a reviewer). Neither is generated.
        in_prompt = sum(r.length for r in trace if r.in_prompt)
        written = sum(r.length + (r.trigger == "uncertainty" and r.injected) for r in trace if not r.in_prompt)
        injected = in_prompt + written
        generated = sequences.shape[1] - output.generated_start - written
        # the prompt that ran: a prompt's <recall> where nothing was injected was dropped, not run (until
        # 2026-12-07 a chat prompt's usage counted it: a reviewer); the notes injected inside it are not prompt
        ran = output.generated_start - in_prompt
        raw = self._decode(new_ids, plan.keep_tokens())
        text, hit_stop = finish_text(raw, stop_strings)
        calls: dict[str, Any] = {}
        if plan.tool_format is not None:
            parsed = plan.tool_format.parse(text)
            text = parsed.content
            calls = {"tool_calls": parsed.tool_calls, "invalid_tool_calls": parsed.invalid_tool_calls}
            if plan.one_call:  # the first call the reply makes, valid if any is: the others are not made
                valid = tuple(parsed.tool_calls)[:1]
                calls = {"tool_calls": valid, "invalid_tool_calls": () if valid else tuple(parsed.invalid_tool_calls)[:1]}
        # max_length counts the prompt as given (its marker cropped later) and the generated ids, not injected pads
        finish_reason = self._finish_reason(kwargs, new_ids, generated, prompt_length + generated, elapsed, hit_stop,
                                            cancelled)  # fmt: skip
        if calls.get("tool_calls") and not calls.get("invalid_tool_calls"):
            finish_reason = "tool_calls"  # OpenAI's word for a reply that hands over to tools (complete calls)
        return RecallResult(
            text=text,
            sequences=sequences,
            recalls=trace,
            usage=Usage(
                prompt_tokens=ran, generated_tokens=generated, injected_tokens=injected, cached_tokens=cached
            ),
            finish_reason=finish_reason,
            **calls,
        )


def id_set(ids: int | Sequence[int] | torch.Tensor | None) -> set[int]:
    """An ``eos_token_id`` as transformers takes it (an id, a list, a tensor, ``None``) as a set of ids."""
    if isinstance(ids, torch.Tensor):
        ids = ids.tolist()
    return set(ids if isinstance(ids, (list, tuple)) else [ids]) - {None}

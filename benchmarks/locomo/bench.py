"""Model, store and settings that every LoCoMo question shares, and one timed generation.

:class:`Bench` hands each method its memory (ranked by the store, dated for (c)), the
``RecallConfig`` of recall's arms, and a generation timed to its first token that stops at
the answer's first line; (b) continues a KV cache of its conversation's history instead of
prefilling it again for every question.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass, field
from typing import Any

from benchmarks.common.locomo_data import Conversation
from benchmarks.common.locomo_memory import RankedMemory
from benchmarks.common.timing import FirstToken
from recall_core.config import DEFAULT_NOTE_TEMPLATE
from recall_core.decoding.hf_compat import cache_kwarg
from recall_core.memory.text.composition import day_label


class DatedMemory:
    """Wraps a memory so each candidate's text starts with its session day and its speaker:
    ``"[8 May, 2023] Caroline: ..."``.

    The session date is in the metadata the writer keeps; without it a memory cannot answer
    "when" questions. The writer's memories already start with their speaker; a text without one
    is labelled from the metadata, so a memory always says who did what (category 5 asks about
    one speaker what the other did). (c) and (d) both see the same dated, labelled text: (d)
    through the engine's default ``note_template``, which labels an exchange's first turn too.
    """

    def __init__(self, inner: Any, dated: bool = True, speakers: bool = True) -> None:
        self.inner = inner
        self.dated = dated
        self.speakers = speakers

    def search(self, query: Any, k: int = 4) -> list[Any]:
        from recall_core.types import MemoryCandidate

        out = []
        for c in self.inner.search(query, k):
            out.append(MemoryCandidate(c.id, c.score, labelled(c, self.dated, self.speakers), c.embedding, dict(c.metadata)))
        return out


def labelled(candidate: Any, dated: bool = True, speakers: bool = True) -> str:
    """``candidate``'s text as ``"[day] Speaker: text"``: no day without a session date or with
    ``dated=False``, no label with ``speakers=False``, when the text already starts with its
    speaker, or when it has none."""
    text = candidate.text
    speaker = str(candidate.metadata.get("speaker") or "") if speakers else ""
    if speaker and not text.startswith(f"{speaker}:"):
        text = f"{speaker}: {text}"
    date = day_label(str(candidate.metadata.get("session_date") or "")) if dated else ""
    return f"[{date}] {text}" if date else text


class FirstLineStop:
    """Stops once the new text holds a line break after some non-blank text.

    A plain ``stop=["\\n"]`` would end an answer that starts with a blank line before it
    says anything; answers are scored on their first non-empty line anyway.
    """

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self.start: int | None = None

    def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
        import torch

        if self.start is None:  # first call: one token has been generated
            self.start = input_ids.shape[1] - 1
        text = self.tokenizer.decode(input_ids[0, self.start :], skip_special_tokens=True)
        done = "\n" in text.lstrip()
        return torch.full((input_ids.shape[0],), done, dtype=torch.bool, device=input_ids.device)


@dataclass
class Bench:
    """Model, store and settings shared by every question."""

    args: argparse.Namespace
    generator: Any
    store: Any
    conversations: dict[str, Conversation]
    history: dict[str, tuple[str, int]] = field(default_factory=dict)
    fitted: int = 0
    #: (b): per conversation, the token ids in the KV cache (system prompt + history) and the cache
    prefixes: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    #: (b): seconds spent prefilling each conversation's history once
    prefill_s: dict[str, float] = field(default_factory=dict)
    #: (g): the LangChain recipe (:class:`benchmarks.locomo.peer.LocomoLangChain`), when asked for
    peer: Any = None

    def memory(self, sample_id: str, retrieval: str | None = None, unit: str = "turn") -> Any:
        """The searchable memory of a conversation, ranked by ``hybrid`` (the store's default) or
        ``vector``, each memory holding ``unit`` (its turn, by default)."""
        return RankedMemory(self.store.for_user(sample_id), retrieval or self.args.retrieval, unit)

    def answer_memory(self, sample_id: str) -> Any:
        """What (c) stuffs: dated turns, by the memory itself or by :class:`DatedMemory`."""
        memory = self.memory(sample_id)
        # The writer's memories return the turn's own words (date and speaker are only searched by).
        dated = self.args.memory_dates and not self.args.memory_format.startswith("dated")
        # The other formats write "Speaker: text" themselves.
        return DatedMemory(memory, dated=dated, speakers=self.args.memory_format == "writer")

    def recall_memory(self, sample_id: str) -> Any:
        """What (d) and (f) search: the memory as recall sees it, each memory holding ``--unit``
        (the engine puts the date in front of each note)."""
        return self.memory(sample_id, unit=self.args.unit)

    def recall_config(self, inject_mode: str) -> Any:
        from recall_core import RecallConfig

        a = self.args
        return RecallConfig(
            inject_mode=inject_mode, template=a.template, memories=a.memories, top_k=max(a.top_k, a.memories),
            min_score=a.min_score, recall_position=a.recall_position, recall_policy=getattr(a, "recall_policy", "auto"),
            # Flags left unset keep RecallConfig's default.
            **{f: getattr(a, f) for f in ("abstain_threshold", "order") if getattr(a, f, None) is not None},
            # The engine's default notes ("[{date}] {speaker}: {text}"), which the tuned default was
            # trained on; --note-template measures another.
            note_template=a.note_template or (DEFAULT_NOTE_TEMPLATE if a.memory_dates else "{speaker}: {text}"),
            **getattr(a, "config_changes", {}),  # --set FIELD=VALUE
        )  # fmt: skip

    def generate(self, messages: list[dict[str, str]] | str, memory: Any, config: Any) -> dict[str, Any]:
        """One generation, timed; ``started`` may be moved earlier by the caller (retrieval before it)."""
        timer = FirstToken()
        started = time.perf_counter()
        result = self.generator.generate(
            messages, memory=memory, config=config, streamer=timer, max_new_tokens=self.args.max_new_tokens,
            stopping_criteria=[FirstLineStop(self.generator.tokenizer)],
        )  # fmt: skip
        ended = time.perf_counter()
        usage = result.usage
        return {
            "text": result.text,
            "prompt_tokens": usage.prompt_tokens,
            "injected_tokens": usage.injected_tokens,
            "processed_tokens": usage.prompt_tokens + usage.injected_tokens,
            "generated_tokens": usage.generated_tokens,
            "ttft_s": (timer.first or ended) - started,
            "total_s": ended - started,
            "recalls": [
                {"score": r.score, "memory_id": r.memory_id, "length": r.length, "reason": r.reason,
                 "text": r.text[:300]}
                for r in result.recalls
            ],
        }  # fmt: skip


    def generate_cached(self, sample_id: str, messages: list[dict[str, str]]) -> dict[str, Any]:
        """(b): plain ``model.generate`` continuing a KV cache of the conversation's history.

        Every (b) prompt of a conversation starts with the same system prompt and history
        (thousands of tokens); they are prefilled once (``prefill_s``) and each question only
        adds its own tokens. The cost columns still count every prompt token as processed,
        since the model reads them all; the times are per question, without the shared prefill.
        """
        import torch

        from recall_core import RecallConfig

        model = self.generator.model
        ids = self.generator.encode(messages, config=RecallConfig(recall_policy="explicit")).to(model.device)
        cached = self.prefixes.get(sample_id)
        if cached is None:
            started = time.perf_counter()
            cache = _new_cache(model)
            with torch.no_grad():
                model(input_ids=ids[:, :-1], use_cache=True, logits_to_keep=1, **cache_kwarg(cache))
            self.prefill_s[sample_id] = time.perf_counter() - started
            cached = (ids[0, :-1], cache)
        prefix_ids, cache = cached
        n = min(len(prefix_ids), ids.shape[1] - 1)
        differ = (prefix_ids[:n] != ids[0, :n]).nonzero()
        common = n if differ.numel() == 0 else int(differ[0, 0])
        _crop_to(cache, common)
        timer = FirstToken()
        started = time.perf_counter()
        with torch.no_grad():
            output = model.generate(
                input_ids=ids, attention_mask=torch.ones_like(ids), do_sample=False, **cache_kwarg(cache),
                max_new_tokens=self.args.max_new_tokens, streamer=timer,
                stopping_criteria=[FirstLineStop(self.generator.tokenizer)],
            )  # fmt: skip
        ended = time.perf_counter()
        _crop_to(cache, common)
        self.prefixes[sample_id] = (ids[0, :common], cache)
        new = output[0, ids.shape[1] :]
        text = self.generator.tokenizer.decode(new, skip_special_tokens=True)
        return {
            "text": text, "prompt_tokens": int(ids.shape[1]), "injected_tokens": 0,
            "processed_tokens": int(ids.shape[1]), "generated_tokens": int(new.shape[0]),
            "ttft_s": (timer.first or ended) - started, "total_s": ended - started, "recalls": [],
            "cached_prefix_tokens": common,
        }  # fmt: skip


def _crop_to(cache: Any, length: int) -> None:
    """Keep the first ``length`` positions of ``cache`` (transformers 5 crops by a negative count)."""
    extra = cache.get_seq_length() - length
    if extra > 0:
        cache.crop(-extra)


def _new_cache(model: Any) -> Any:
    from transformers import DynamicCache

    return DynamicCache(config=model.config)

"""The held-out benchmark's calls and the methods that answer them (:mod:`benchmarks.heldout`).

A :class:`Call` is one question as a caller asks it (their system message, a few earlier
exchanges); a :class:`Method` writes every user's turns into its memory once (``prepare``) and
answers one call at a time (:class:`Reply`: the text, what it read, what it cost). The methods:
recall over a ``MemoryStore`` (:class:`RecallMethod`, and :class:`PerFamilyRecall` for the
leave-one-family-out adapters), no memory (:class:`NoMemory`), and the two peers, the recipes a
framework user writes in ten lines with the same model and encoder: LangChain's
(:class:`LangChainRecipe`) and LlamaIndex's (:class:`LlamaIndexRecipe`), each taking the caller's
system message and earlier exchanges as that framework takes them.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.common.methods import Answer
from benchmarks.common.peers import LangChainMethod, LlamaIndexMethod
from benchmarks.common.timing import timed_stream
from benchmarks.heldout_memory import memory_turns
from recall_core.training.families import base

__all__ = ["Call", "LangChainRecipe", "LlamaIndexRecipe", "Method", "NoMemory", "PerFamilyRecall", "RecallMethod", "Reply"]


@dataclass(frozen=True)
class Call:
    """One question as it is asked: the caller's system message and the exchanges before it."""

    family: str
    question: base.Question
    system: str | None
    earlier: tuple[dict[str, str], ...] = ()

    def messages(self) -> list[dict[str, str]]:
        head = [{"role": "system", "content": self.system}] if self.system else []
        return [*head, *self.earlier, {"role": "user", "content": self.question.text}]


@dataclass
class Reply:
    """One method's reply to one call, with what it read and what it cost."""

    text: str
    notes: str = ""  # everything the method put before the model from memory
    fired: bool | None = None  # recall: whether a <recall> ran (prompt marker or the model's own)
    processed_tokens: int = 0
    ttft_s: float | None = None
    total_s: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)


class Method:
    name = "method"

    def prepare(self, users: Sequence[base.User]) -> None:  # noqa: B027 - some need nothing
        """Write what each user said into this method's memory."""

    def reply(self, call: Call) -> Reply:
        raise NotImplementedError

    def close(self) -> None:  # noqa: B027
        """Release what ``prepare`` opened."""


class RecallMethod(Method):
    """The engine over a ``MemoryStore`` with the given config, store and writer options."""

    def __init__(self, name: str, generator: Any, max_new_tokens: int, encoder: Any, config: Any = None,
                 store_options: Mapping[str, Any] | None = None, writer_options: Mapping[str, Any] | None = None) -> None:
        self.name, self.generator, self.max_new_tokens, self.encoder = name, generator, max_new_tokens, encoder
        self.config = config
        self.store_options, self.writer_options = dict(store_options or {}), dict(writer_options or {})
        self.folder = tempfile.TemporaryDirectory(prefix="recall-heldout-")
        self.store: Any = None

    def prepare(self, users: Sequence[base.User]) -> None:
        from recall_core.memory import MemoryStore, MemoryWriter

        self.store = MemoryStore.local(Path(self.folder.name) / "store", encoder=self.encoder, **self.store_options)
        MemoryWriter(self.store, **self.writer_options).add_turns(memory_turns(users))

    def reply(self, call: Call) -> Reply:
        memory = self.store.for_user(call.question.user_id)
        stream = self.generator.stream(call.messages(), memory=memory, config=self.config,
                                       max_new_tokens=self.max_new_tokens)  # fmt: skip
        text, ttft, total = timed_stream(iter(stream))
        result = stream.result
        injected = [r for r in result.recalls if r.length > 0]
        notes = "\n".join(r.text for r in injected)
        usage = result.usage
        policy = (self.config or self.generator.config).recall_policy
        # Whether the model asked for its memory (a prompt marker is not the model's decision, except
        # under "ask", where the marker is placed only when the model asked: any recall at all).
        if policy == "ask":
            fired: bool | None = bool(result.recalls)
        else:
            fired = any(r.trigger != "prompt" for r in result.recalls) if policy in ("model", "uncertainty") else None
        # Each injected note's cosine, in the notes' order: what a rule on the scores (how many
        # notes, a gap between them) is read against afterwards, without searching again.
        scores = [round(score, 4) for r in injected for _, score in r.memories]
        return Reply(text, notes, fired, usage.prompt_tokens + usage.injected_tokens, ttft, total,
                     {"triggers": [r.trigger for r in result.recalls], "note_scores": scores})  # fmt: skip

    def close(self) -> None:
        if self.store is not None:
            self.store.close()
        self.folder.cleanup()


class PerFamilyRecall(RecallMethod):
    """``recall-lofo``: each family answered by the generator of the adapter trained without it."""

    def __init__(self, name: str, generators: Mapping[str, Any], max_new_tokens: int, encoder: Any) -> None:
        super().__init__(name, None, max_new_tokens, encoder)
        self.generators = dict(generators)

    def reply(self, call: Call) -> Reply:
        self.generator = self.generators[call.family]
        return super().reply(call)


class NoMemory(Method):
    name = "none"

    def __init__(self, generator: Any, max_new_tokens: int) -> None:
        from recall_core import RecallConfig

        self.generator, self.max_new_tokens = generator, max_new_tokens
        self.plain = RecallConfig(recall_policy="explicit")

    def reply(self, call: Call) -> Reply:
        stream = self.generator.stream(call.messages(), memory=None, config=self.plain, max_new_tokens=self.max_new_tokens)
        text, ttft, total = timed_stream(iter(stream))
        return Reply(text, "", None, stream.result.usage.prompt_tokens, ttft, total)


class LangChainRecipe(LangChainMethod, Method):
    """The LangChain recipe: ``ChatHuggingFace`` + a ``langchain-chroma`` retriever (k=4) over the
    exchanges (written as :class:`~benchmarks.common.peers.LangChainMethod` writes them); the notes
    in the system message, after the caller's own system message."""

    def reply(self, call: Call) -> Reply:
        return _reply(self.respond(call.question.user_id, call.question.text, call.system, call.earlier))


class LlamaIndexRecipe(LlamaIndexMethod, Method):
    """LlamaIndex's recipe: ``HuggingFaceLLM`` + ``Memory`` with a ``VectorMemoryBlock`` (Chroma,
    the same encoder, top 4), each user's conversation flushed into the block as
    :class:`~benchmarks.common.peers.LlamaIndexMethod` writes it. A call is a fresh session
    (:meth:`~benchmarks.common.peers.LlamaIndexMethod.respond`): the earlier exchanges and the
    question go into a new ``Memory``, the caller's system message before the one ``get()`` writes.
    The notes are that retrieved system message."""

    name = "llamaindex"

    def reply(self, call: Call) -> Reply:
        return _reply(self.respond(call.question.user_id, call.question.text, call.system, call.earlier))


def _reply(answer: Answer) -> Reply:
    """A peer's :class:`~benchmarks.common.methods.Answer` as a :class:`Reply`: its retrieved texts,
    a blank line apart (LangChain's documents; LlamaIndex's one system message), as the notes."""
    return Reply(answer.text, "\n\n".join(answer.retrieved), None, answer.processed_tokens, answer.ttft_s, answer.total_s)

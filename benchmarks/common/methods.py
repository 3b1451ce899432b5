"""Ways of answering the generated users' fact questions from their past conversations, and the scoring.

A :class:`Method` writes what each user said into its memory (``prepare``), then answers one
question at a time (:class:`Answer`: the text, its cost, what it retrieved). Here: the engine
with no memory or the whole history in the prompt (:class:`PlainMethod`) and recall over a
``MemoryStore`` (:class:`RecallMethod`); the LangChain and LlamaIndex recipes are in
:mod:`benchmarks.common.peers`. :func:`run_method` asks every question, :func:`summarize`
counts facts answered, stale answers, tokens, times and hit@k.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.common.progress import progress
from benchmarks.common.timing import timed_stream
from recall_core.training.conversations import Question, User, score

#: The retriever depth of both peers (LangChain's default k, and the same for LlamaIndex).
PEER_K = 4
#: The methods with no retrieval: their rows get hit@k only if they retrieved something.
PLAIN = ("none", "history")


@dataclass
class Answer:
    """One method's answer to one question, with its cost and what it retrieved."""

    text: str
    prompt_tokens: int
    injected_tokens: int = 0
    ttft_s: float | None = None
    total_s: float = 0.0
    #: The texts the method retrieved, best first (empty for methods without retrieval).
    retrieved: list[str] = field(default_factory=list)

    @property
    def processed_tokens(self) -> int:
        return self.prompt_tokens + self.injected_tokens


def history_messages(user: User) -> list[dict[str, str]]:
    return [{"role": t.role, "content": t.content} for t in user.turns]


class Method:
    """A way of answering from past conversations: ``prepare`` once per user, then ``answer``."""

    name = "method"

    def prepare(self, users: Sequence[User]) -> None:  # noqa: B027 - most methods need nothing
        """Write what each user said into this method's memory."""

    def answer(self, question: Question) -> Answer:
        raise NotImplementedError

    def close(self) -> None:  # noqa: B027
        """Release what ``prepare`` opened."""


class PlainMethod(Method):
    """``none`` and ``history``: the engine with no memory (exactly ``model.generate()``)."""

    def __init__(self, name: str, generator: Any, options: dict[str, Any]) -> None:
        from recall_core import RecallConfig

        self.name = name
        self.generator = generator
        self.options = options
        self.users: dict[str, User] = {}
        #: The caller's messages as they are: no marker, no system message added.
        self.plain = RecallConfig(recall_policy="explicit")

    def prepare(self, users: Sequence[User]) -> None:
        self.users = {u.user_id: u for u in users}

    def answer(self, question: Question) -> Answer:
        past = history_messages(self.users[question.user_id]) if self.name == "history" else []
        messages = self.fit([*past, {"role": "user", "content": question.text}])
        stream = self.generator.stream(messages, memory=None, config=self.plain, **self.options)
        text, ttft, total = timed_stream(iter(stream))
        usage = stream.result.usage
        return Answer(text, usage.prompt_tokens, usage.injected_tokens, ttft, total)


    def fit(self, messages: list[dict[str, str]]) -> list[dict[str, str]]:
        """The most recent messages whose prompt fits the context window with room for the answer."""
        room = self.generator.context_window - self.options.get("max_new_tokens", 0)
        while len(messages) > 1:
            try:
                if self.generator.encode(messages, config=self.plain).shape[1] <= room:
                    break
            except ValueError:  # longer than the whole window
                pass
            messages = messages[2:]  # the oldest exchange goes first
        return messages


def memory_turns(users: Sequence[User]) -> list[Any]:
    """Every turn of ``users`` as the ``Turn`` a ``MemoryWriter`` takes (a session per dated session)."""
    from recall_core.memory import Turn

    return [
        Turn(user_id=u.user_id, role=t.role, content=t.content, session_id=f"session-{t.session}",
             timestamp=t.date, turn_index=t.index)
        for u in users for t in u.turns
    ]  # fmt: skip


class RecallMethod(Method):
    """``ChatRecall`` over a ``MemoryStore``: every turn written with ``MemoryWriter``, recalled at ``<recall>``."""

    def __init__(self, name: str, generator: Any, options: dict[str, Any], encoder: Any, config: Any = None,
                 store_options: dict[str, Any] | None = None) -> None:
        self.name = name
        self.generator = generator
        self.options = options
        self.encoder = encoder
        self.config = config
        self.store_options = store_options or {}
        self.folder = tempfile.TemporaryDirectory(prefix="recall-conv-")
        self.store: Any = None

    def prepare(self, users: Sequence[User]) -> None:
        from recall_core.memory import MemoryStore

        self.store = MemoryStore.local(Path(self.folder.name) / "store", encoder=self.encoder, **self.store_options)
        self.store.writer.add_turns(memory_turns(users))

    def chat(self, user_id: str) -> Any:
        from langchain_recall import ChatRecall

        return ChatRecall(
            generator=self.generator, store=self.store, user_id=user_id, write_memory=False,
            recall_config=self.config, **self.options,
        )  # fmt: skip

    def answer(self, question: Question) -> Answer:
        chat = self.chat(question.user_id)
        last: Any = None

        def pieces() -> Iterator[str]:
            nonlocal last
            for chunk in chat.stream(question.text):
                last = chunk
                yield str(chunk.content)

        text, ttft, total = timed_stream(pieces())
        usage = last.usage_metadata
        injected = int(usage["input_token_details"].get("recall_injected", 0))
        # What the memory found, as the texts it returns (its unit): the same search the loop ran.
        retrieved = [c.text for c in self.store.for_user(question.user_id).search(question.text, PEER_K)]
        return Answer(text, usage["input_tokens"] - injected, injected, ttft, total, retrieved)

    def close(self) -> None:
        if self.store is not None:
            self.store.close()
        self.folder.cleanup()


def evidence_text(users: dict[str, User], question: Question) -> str:
    session, index = question.evidence
    return next(t.content for t in users[question.user_id].turns if (t.session, t.index) == (session, index))


def hits(answer: Answer, evidence: str, ks: Sequence[int] = (1, PEER_K)) -> dict[str, bool]:
    """hit@k: the turn that states the fact is inside one of the first k retrieved texts."""
    return {f"hit@{k}": any(evidence in text for text in answer.retrieved[:k]) for k in ks}


def run_method(method: Method, users: Sequence[User], questions: Sequence[Question], show: bool) -> list[dict[str, Any]]:
    by_id = {u.user_id: u for u in users}
    began = time.perf_counter()
    method.prepare(users)
    prepare_s = time.perf_counter() - began
    rows = []
    for question in progress(questions, method.name, show, unit="question"):
        answer = method.answer(question)
        rows.append({
            "method": method.name, "key": question.key, "slot": question.slot, "question": question.text,
            "expected": question.answer, "stale_value": question.stale, "answer": answer.text,
            **score(question, answer.text), "prompt_tokens": answer.prompt_tokens,
            "injected_tokens": answer.injected_tokens, "processed_tokens": answer.processed_tokens,
            "ttft_s": answer.ttft_s, "total_s": answer.total_s, "retrieved": answer.retrieved[:PEER_K],
            **(hits(answer, evidence_text(by_id, question)) if answer.retrieved or method.name not in PLAIN else {}),
            "prepare_s": prepare_s,
        })  # fmt: skip
    return rows


def summarize(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Facts answered and stale (counts and rates), mean tokens, median times, hit rates."""

    def median(key: str) -> float | None:
        values = [r[key] for r in rows if r.get(key) is not None]
        return statistics.median(values) if values else None

    n = len(rows)
    out: dict[str, Any] = {
        "questions": n,
        "facts_answered": sum(r["correct"] for r in rows),
        "stale": sum(r["stale"] for r in rows),
        "updated_questions": sum(1 for r in rows if r["stale_value"]),
        "processed_tokens": statistics.fmean(r["processed_tokens"] for r in rows) if rows else None,
        "prompt_tokens": statistics.fmean(r["prompt_tokens"] for r in rows) if rows else None,
        "injected_tokens": statistics.fmean(r["injected_tokens"] for r in rows) if rows else None,
        "ttft_s_p50": median("ttft_s"),
        "total_s_p50": median("total_s"),
        "prepare_s": rows[0]["prepare_s"] if rows else None,
    }
    for k in (1, PEER_K):
        flagged = [r[f"hit@{k}"] for r in rows if f"hit@{k}" in r]
        out[f"hit@{k}"] = statistics.fmean(flagged) if flagged else None
    return out

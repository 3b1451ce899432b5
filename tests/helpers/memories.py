"""A small in-test memory implementing the engine's ``Memory`` protocol."""

from __future__ import annotations

from recall_core.types import MemoryCandidate, RecallQuery


class ListMemory:
    """Scores by word overlap (Jaccard), so tests can reason about which memory wins."""

    def __init__(self, texts: dict[str, str], fail: Exception | None = None) -> None:
        self.texts = texts
        self.fail = fail
        self.queries: list[RecallQuery] = []

    def search(self, query: RecallQuery, k: int) -> list[MemoryCandidate]:
        self.queries.append(query)
        if self.fail is not None:
            raise self.fail
        words = set(query.text.lower().split())
        scored = []
        for memory_id, text in self.texts.items():
            other = set(text.lower().split())
            score = len(words & other) / max(1, len(words | other))
            scored.append(MemoryCandidate(id=memory_id, score=score, text=text))
        scored.sort(key=lambda c: c.score, reverse=True)
        return scored[:k]


class FixedMemory:
    """Always returns the same candidates (score 1.0 first)."""

    def __init__(self, *texts: str) -> None:
        self.candidates = [MemoryCandidate(id=f"m{i}", score=1.0 - i * 0.1, text=t) for i, t in enumerate(texts)]
        self.queries: list[RecallQuery] = []

    def search(self, query: RecallQuery, k: int) -> list[MemoryCandidate]:
        self.queries.append(query)
        return self.candidates[:k]


#: ``MemoryWriter`` options that store each turn's text exactly as given (no date, speaker or
#: window): for the tests of storage mechanics, which compare texts and brute-force rankings.
RAW_TEXT = {"dated": False, "window": False, "speakers": False}

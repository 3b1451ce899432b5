"""LoCoMo metrics: token-level answer F1 as the official evaluation computes it, adversarial
accuracy, and retrieval hit@k.

Answer F1 follows snap-research/LoCoMo ``task_eval/evaluation.py``: the text is lowercased,
commas and punctuation are removed, the words ``a``, ``an``, ``the`` and ``and`` are
dropped, whitespace is collapsed, and every word is Porter-stemmed (nltk's
``PorterStemmer``; when nltk is not installed no stemming is done, and ``STEMMER`` says so).
Categories 2, 3, 4 score one F1 against the whole answer; category 1 (multi-hop) splits
prediction and answer at commas and averages, over the answer's parts, the best F1 of any
predicted part. Category 5 (adversarial) counts an answer as right when it says
"no information available" or "not mentioned".
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from statistics import fmean

try:
    from nltk.stem import PorterStemmer

    _stem: Callable[[str], str] = PorterStemmer().stem
    STEMMER = "nltk PorterStemmer"
except ImportError:  # pragma: no cover - nltk is a dependency of the dev environment
    _stem = str
    STEMMER = "none (nltk not installed)"

_ARTICLES = re.compile(r"\b(a|an|the|and)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)
#: What the official evaluation accepts as "the conversation does not say" (category 5).
NO_INFO_PATTERNS = ("no information available", "not mentioned")


def normalize_answer(text: str) -> str:
    """Lowercase, drop commas and punctuation, drop a/an/the/and, collapse whitespace."""
    text = str(text).replace(",", "").lower().translate(_PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def answer_tokens(text: str) -> list[str]:
    """Normalized, stemmed tokens of an answer."""
    return [_stem(word) for word in normalize_answer(text).split()]


def token_f1(prediction: str, truth: str) -> float:
    """Harmonic mean of token precision and recall (bag of stemmed words)."""
    predicted, gold = answer_tokens(prediction), answer_tokens(truth)
    same = sum((Counter(predicted) & Counter(gold)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(predicted), same / len(gold)
    return 2 * precision * recall / (precision + recall)


def multi_answer_f1(prediction: str, truth: str) -> float:
    """Category 1: mean over the answer's comma-separated parts of the best part-wise F1."""
    predictions = [p.strip() for p in str(prediction).split(",")]
    truths = [t.strip() for t in str(truth).split(",")]
    return fmean(max(token_f1(p, t) for p in predictions) for t in truths)


def says_no_information(prediction: str) -> bool:
    """Category 5: does the answer say the conversation holds no such information?"""
    lowered = str(prediction).lower()
    return any(pattern in lowered for pattern in NO_INFO_PATTERNS)


def qa_score(prediction: str, truth: str, category: int) -> float:
    """The official per-question score: F1 for categories 1-4, 0/1 for category 5."""
    if category == 5:
        return float(says_no_information(prediction))
    if category == 1:
        return multi_answer_f1(prediction, truth)
    if category in (2, 3, 4):
        return token_f1(prediction, truth)
    raise ValueError(f"unknown LoCoMo category {category!r} (expected 1-5)")


def hit_at_k(ranked: Sequence[Iterable[str]], evidence: Iterable[str], k: int) -> bool:
    """Is an evidence turn among the first ``k`` retrieved memories?

    ``ranked[i]`` holds the dia_ids that memory ``i`` contains (one for a single turn, more
    for a window of turns).
    """
    wanted = set(evidence)
    return any(wanted.intersection(ids) for ids in ranked[:k])


def first_hit_rank(ranked: Sequence[Iterable[str]], evidence: Iterable[str]) -> int | None:
    """1-based rank of the first memory that holds an evidence turn, ``None`` if none does."""
    wanted = set(evidence)
    for rank, ids in enumerate(ranked, start=1):
        if wanted.intersection(ids):
            return rank
    return None


def mean(values: Iterable[float]) -> float | None:
    """Mean, or ``None`` for no values (a category absent from a slice)."""
    items = list(values)
    return fmean(items) if items else None


def by_category(rows: Sequence[Mapping], value: Callable[[Mapping], float], categories: Iterable[int]) -> dict[str, float | None]:
    """``{"1": mean, ..., "1-4": mean over the answerable categories}`` of ``value(row)``."""
    out: dict[str, float | None] = {}
    for category in categories:
        out[str(category)] = mean(value(r) for r in rows if r["category"] == category)
    out["1-4"] = mean(value(r) for r in rows if r["category"] in (1, 2, 3, 4))
    return out


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q``-th percentile (linear interpolation), ``None`` for no values."""
    items = sorted(values)
    if not items:
        return None
    position = (len(items) - 1) * q / 100
    low = int(position)
    high = min(low + 1, len(items) - 1)
    return items[low] + (items[high] - items[low]) * (position - low)

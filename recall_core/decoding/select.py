"""Choosing the memories to inject among the search candidates.

The first ``top_k`` candidates in the memory's own order (best first: a hybrid memory
ranks by cosine plus word score, so its order need not follow ``score``), less those below
``min_score`` (a cosine). Temperature 0 takes them in that order; above 0 they are drawn
without replacement from a temperature + top-p softmax over their scores. Either way a
candidate that repeats one already chosen (the same text, or a text covering the same turns:
``metadata["covers"]``, the ids whose words it holds) is passed over, until ``memories`` are
chosen. With the search's question, two rules follow. A chosen note about someone else than a
name the question says ("When's Rohan's birthday?" and a note on Odile's) gives its place to the
next candidate that says the name, if one does (:mod:`recall_core.decoding.names`). Then a chosen
candidate that a newer eligible one updates ("moved", "instead", "now"... about the same thing,
both naming a day or time) is swapped for the newer one, and its place is not filled again
(:mod:`recall_core.decoding.supersede`). The chosen ones are then put in the order they were
said (oldest or newest first), or kept best first.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from typing import Any

import torch

from recall_core.config import RecallConfig
from recall_core.dates import parse_moment
from recall_core.decoding.follow import FOLLOW_K, follow_updates
from recall_core.decoding.names import keep_named
from recall_core.decoding.supersede import newest_versions
from recall_core.types import Memory, MemoryCandidate, RecallQuery

NO_MEMORY = "no memory"
BELOW_MIN_SCORE = "below min_score"
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def choose_candidates(
    candidates: Sequence[MemoryCandidate],
    config: RecallConfig,
    generator: torch.Generator | None = None,
    question: str | None = None,
    search: Callable[[str], Sequence[MemoryCandidate]] | None = None,
) -> tuple[list[MemoryCandidate], str | None]:
    """Return ``(chosen, None)`` (at least one, at most ``config.memories``) or ``([], reason)``.

    The draw uses torch's global RNG (or ``generator``), so ``torch.manual_seed`` /
    ``transformers.set_seed`` make a sampled recall reproducible together with the text.
    With ``question`` (the search's text), ``config.match_names`` gives the place of a note about
    someone else than the question's names to a candidate that says one
    (:mod:`recall_core.decoding.names`), and ``config.newest_wins`` the place of a candidate that a
    newer eligible one updates for that question to it (:mod:`recall_core.decoding.supersede`).
    With ``search`` too (a text to the memory's candidates), ``config.follow_updates`` searches a
    chosen note's names for a newer turn that replaces it (:mod:`recall_core.decoding.follow`).
    """
    if not candidates:
        return [], NO_MEMORY
    eligible = eligible_candidates(candidates, config)
    if not eligible:
        return [], BELOW_MIN_SCORE
    chosen = _unique(_draw_order(eligible, config, generator))[: config.memories]
    if config.match_names and question:  # a note about someone else gives its place to one about the asked name
        chosen = _unique(keep_named(chosen, eligible, question))
    if config.newest_wins and question:  # an older version gives its place to the newer one, unfilled
        chosen = _unique(newest_versions(chosen, eligible, question, _moment))
    if config.follow_updates and question and search is not None:  # and newer turns found by its names
        chosen = _unique(follow_updates(chosen, question, search, _moment))
    if config.order != "relevance":  # stable: equal moments keep their rank order
        chosen.sort(key=_moment, reverse=config.order == "newest_first")
    return chosen, None


def search_memory(
    memory: Memory | None, query: RecallQuery, config: RecallConfig
) -> tuple[list[MemoryCandidate], str | None, list[Any]]:
    """One recall's search: ``(chosen candidates, why none, every candidate)``.

    A memory error raises when ``config.on_memory_error == "raise"``; otherwise it warns (the
    warning points at the loop's caller: call this from the loop's step method) and the recall
    goes on without memory. Both decode loops (in process and served) search this way.
    """
    if memory is None:
        return [], NO_MEMORY, []
    candidates, error = fetch_candidates(memory, query, config, "recall skipped, generation goes on without memory")
    if error is not None:
        return [], error, []
    # config.follow_updates' searches by a note's names, at least FOLLOW_K deep (one config per call)
    deep = config.replace(top_k=max(config.top_k, FOLLOW_K)) if config.follow_updates else config

    def by_names(text: str) -> list[MemoryCandidate]:
        return fetch_candidates(memory, RecallQuery(text=text), deep, "a note's newer version not searched")[0]

    chosen, reason = choose_candidates(candidates, config, question=query.text, search=by_names)
    return chosen, reason, candidates


def fetch_candidates(memory: Memory, query: RecallQuery, config: RecallConfig,
                     skipped: str) -> tuple[list[MemoryCandidate], str | None]:  # fmt: skip
    """The memory's first ``config.top_k`` candidates for ``query``, and ``None``; on a memory error
    ``([], reason)``, after a warning that says what was ``skipped``, or the error itself when
    ``config.on_memory_error == "raise"``. The warning points at the caller of the function that
    called the caller of this one (the loop's step method's caller, :func:`search_memory`'s)."""
    try:
        return list(memory.search(query, config.top_k)), None
    except Exception as error:  # any backend failure: the config says whether to go on
        if config.on_memory_error == "raise":
            raise
        reason = f"memory error: {type(error).__name__}: {error}"
        warnings.warn(f"{skipped} ({reason})", RuntimeWarning, stacklevel=5)
        return [], reason


def eligible_candidates(candidates: Sequence[MemoryCandidate], config: RecallConfig) -> list[MemoryCandidate]:
    """The candidates a recall may inject: the first ``config.top_k``, each at least ``config.min_score``."""
    return [c for c in candidates[: config.top_k] if c.score >= config.min_score]


def choose_candidate(
    candidates: Sequence[MemoryCandidate],
    config: RecallConfig,
    generator: torch.Generator | None = None,
) -> tuple[MemoryCandidate | None, str | None]:
    """One memory: ``(chosen, None)`` or ``(None, reason)`` (:func:`choose_candidates` with one memory)."""
    chosen, reason = choose_candidates(candidates, config.replace(memories=1), generator)
    return (chosen[0] if chosen else None), reason


def _draw_order(
    eligible: list[MemoryCandidate], config: RecallConfig, generator: torch.Generator | None
) -> list[MemoryCandidate]:
    """The eligible candidates in the order they are tried: as ranked, or drawn without replacement."""
    if config.temperature == 0 or len(eligible) == 1:
        return eligible
    scores = torch.tensor([c.score for c in eligible], dtype=torch.float64)
    probs = torch.softmax(scores / config.temperature, dim=0)
    if config.top_p < 1.0:
        # Keep the smallest best-first prefix whose mass reaches top_p (always at least one).
        keep = (probs.cumsum(0) - probs) < config.top_p
        probs = torch.where(keep, probs, torch.zeros_like(probs))
        probs = probs / probs.sum()
    draws = int((probs > 0).sum())
    order = torch.multinomial(probs, draws, replacement=False, generator=generator).tolist()
    return [eligible[i] for i in order]


def _unique(candidates: Sequence[MemoryCandidate]) -> list[MemoryCandidate]:
    """``candidates`` less each one that repeats an earlier one (the same text, or covering the same turns)."""
    out: list[MemoryCandidate] = []
    covered: set[str] = set()
    texts: set[str] = set()
    for candidate in candidates:
        covers = _covers(candidate)
        text = " ".join(candidate.text.split()).lower()
        if covers & covered or text in texts:
            continue
        out.append(candidate)
        covered |= covers
        texts.add(text)
    return out


def _covers(candidate: MemoryCandidate) -> set[str]:
    covers = candidate.metadata.get("covers") if candidate.metadata else None
    ids = {candidate.id}
    if isinstance(covers, str) and covers:
        ids.update(covers.split(","))
    return ids


def _moment(candidate: MemoryCandidate) -> tuple[datetime, float, int, int]:
    """When a memory was said: its timestamp, else when it was written; at the same moment (two
    sessions dated the same day), when it was written; then its place in its session. (Until
    2026-12-07 the place came before when it was written, and turn 2 of one session outranked turn
    0 of a later session written the same day: the older value came first, a reviewer.)"""
    meta = candidate.metadata or {}
    written = meta.get("written_at")
    written = float(written) if isinstance(written, (int, float)) and not isinstance(written, bool) else 0.0
    moment = parse_moment(meta.get("timestamp"))
    if moment is None:
        moment = datetime.fromtimestamp(written, tz=timezone.utc) if written else _EPOCH
    return moment, written, int(meta.get("turn_index", 0) or 0), int(meta.get("chunk_index", 0) or 0)

"""The checks the property tests and state machines call: what must hold after any step.

How their inputs are built is in strategies.py.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from transformers import DynamicCache

from recall_core.decoding.hf_compat import cache_kwarg
from recall_core.memory import HashEncoder, MemoryStore
from recall_core.types import MemoryCandidate


# --------------------------------------------------------------------------- the memory
def brute_force(encoder: HashEncoder, query: str, items: dict[str, str], k: int) -> list[tuple[str, float]]:
    """Top-k by exact cosine with numpy: the reference for the index's answer."""
    if not items:
        return []
    ids = sorted(items)
    matrix = encoder.encode([items[i] for i in ids])
    q = encoder.encode([query])[0]
    scores = matrix @ q / (np.linalg.norm(matrix, axis=1) * np.linalg.norm(q))
    order = np.argsort(-scores, kind="stable")[:k]
    return [(ids[i], float(scores[i])) for i in order]


def assert_same_top_k(got: list[MemoryCandidate], expected: list[tuple[str, float]], items: dict[str, str]) -> None:
    """Same scores in the same order; ids may differ only between equal scores."""
    assert len(got) == len(expected)
    assert [round(c.score, 4) for c in got] == pytest.approx([round(s, 4) for _, s in expected], abs=2e-4)
    if expected:
        cutoff = expected[-1][1] - 2e-4
        for candidate in got:
            assert candidate.id in items
            assert candidate.text == items[candidate.id]
        strictly_better = {i for i, s in expected if s > cutoff + 4e-4}
        assert strictly_better <= {c.id for c in got}


def assert_store_matches_model(store: MemoryStore, model: dict[str, dict[str, tuple[str, str, str, int]]]) -> None:
    """Each user of ``model`` (user -> id -> (text, role, session, turn index)) has exactly those
    memories in the index, no duplicate, none of another user's, and the journal agrees."""
    for user, expected in model.items():
        memory = store.for_user(user)
        records = memory.all()
        ids = [r.id for r in records]
        assert len(ids) == len(set(ids)), "duplicate memories"
        assert memory.count() == len(expected)
        assert {r.id: (r.text, r.role, r.session_id, r.turn_index) for r in records} == expected
        assert all(r.user_id == user for r in records)
        # The journal agrees with the index.
        assert store.journal.count(user) == len(expected)


# --------------------------------------------------------------------------- a session's cache
def assert_cache_holds_the_units(session) -> None:
    """The cache holds exactly what the session thinks it holds: its units, token for token."""
    assert session.cache_tokens == sum(u.length for u in session._units) == len(session._cache_ids())


def assert_cache_equals_a_fresh_prefill(session, model) -> None:
    """After evictions (re-rotated keys), the cache equals a prefill of the ids it holds."""
    ids = torch.tensor([session._cache_ids()])
    fresh = DynamicCache(config=model.config)
    with torch.no_grad():
        model(input_ids=ids, **cache_kwarg(fresh), use_cache=True)
    torch.testing.assert_close(session._cache.layers[0].keys, fresh.layers[0].keys, atol=2e-5, rtol=1e-4)

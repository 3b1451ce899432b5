"""The nearest neighbours of a query among one collection's memories, and what was found.

Chroma's HNSW search is approximate; small collections are searched exactly here, from the
stored vectors (:func:`exact_nearest`). :func:`fetch` reads back what a search found.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import numpy as np

logger = logging.getLogger(__name__)

#: Collections up to this size are searched exactly (see :func:`nearest`): HNSW is
#: approximate, and with Chroma's defaults it missed a clear match among near-duplicate notes
#: (BENCHMARKS.md, "Memory").
EXACT_SEARCH_MAX = 2000
#: Everything a search reads back about a memory.
FETCHED = ["documents", "metadatas", "embeddings"]
#: How many items more than its counted size an exact search asks of a collection: a server
#: store's size is up to ``SIZE_TTL_S`` old (index.py), and other clients write in the meantime.
SIZE_SLACK = 64


def nearest(
    collection: Any,
    embedding: np.ndarray,
    size: int,
    k: int,
    where: Mapping[str, Any] | None,
    ids: Collection[str] | None = None,
) -> list[tuple[str, float]]:
    """The ``k`` nearest ``(id, cosine distance)`` of a collection of ``size`` items, best first:
    exact up to ``EXACT_SEARCH_MAX`` items (:func:`exact_nearest`), HNSW beyond. ``ids``: only
    among these (exactly, whatever the size)."""
    where = dict(where) if where else None
    if size > EXACT_SEARCH_MAX and ids is None:
        found = collection.query(
            query_embeddings=[embedding], n_results=min(k, size), where=where, include=["distances"]
        )  # fmt: skip
        return list(zip(found["ids"][0], found["distances"][0], strict=True))
    return exact_nearest(collection, embedding, size, k, where, ids)


def exact_nearest(
    collection: Any,
    embedding: np.ndarray,
    size: int,
    k: int,
    where: dict[str, Any] | None,
    ids: Collection[str] | None = None,
) -> list[tuple[str, float]]:
    """The ``k`` nearest ``(id, cosine distance)`` of a small collection, exactly.

    Asking HNSW for every item widens its beam (ef = n_results) to the whole graph, which is
    cheap at this size and exact only if every node is reachable; HNSW's neighbour pruning can
    leave nodes without incoming links (near-duplicate notes especially). So when fewer than
    ``size`` come back, or a ``where`` filter hides how many should, the distances are computed
    here from the stored vectors. ``ids`` limits the search to those ids (computed here too).
    """
    if ids is not None and not ids:
        return []
    if where is None and ids is None:
        # Asked for more than ``size``: an answer short of what was asked holds every item HNSW
        # reached, so another client's writes since ``size`` was counted are found too (until
        # 2026-12-06 a server store's search missed them for SIZE_TTL_S). A full answer means
        # the size is out of date by more than the slack: computed exactly below.
        asked = size + SIZE_SLACK  # (not k: past the collection it asks nothing more, and k=2**32 overflowed Chroma)
        wide = collection.query(query_embeddings=[embedding], n_results=asked, include=["distances"])
        got = len(wide["ids"][0])
        if size <= got < asked:
            return list(zip(wide["ids"][0][:k], wide["distances"][0][:k], strict=True))
        logger.debug("HNSW reached %d of %d items; computing the distances exactly", got, size)
    stored = collection.get(ids=None if ids is None else list(ids), where=where, include=["embeddings"])
    if not stored["ids"]:
        return []
    matrix = np.asarray(stored["embeddings"], dtype=np.float32)
    norms = np.maximum(np.linalg.norm(matrix, axis=1) * float(np.linalg.norm(embedding)), 1e-12)
    distances = 1.0 - matrix @ embedding / norms
    order = np.argsort(distances, kind="stable")[:k]
    return [(stored["ids"][i], float(distances[i])) for i in order]


def fetch(collection: Any, nearest: Sequence[tuple[str, float]]) -> dict[str, list[Any]] | None:
    """Texts, metadata and vectors of ``nearest`` ``(id, distance)``, in that order (``None`` if empty)."""
    if not nearest:
        return None
    got = collection.get(ids=[memory_id for memory_id, _ in nearest], include=FETCHED)
    at = {memory_id: i for i, memory_id in enumerate(got["ids"])}
    kept = [(memory_id, d, at[memory_id]) for memory_id, d in nearest if memory_id in at]  # a concurrent delete
    vectors = got.get("embeddings")
    return {
        "ids": [memory_id for memory_id, _, _ in kept],
        "distances": [d for _, d, _ in kept],
        "documents": [got["documents"][i] for _, _, i in kept],
        "metadatas": [got["metadatas"][i] for _, _, i in kept],
        "embeddings": [None if vectors is None else vectors[i] for _, _, i in kept],
    }

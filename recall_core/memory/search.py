"""Where a memory is searched: by text (hybrid, vector or lexical), or by a query head's vector.

Every search of a user's memory goes through :func:`search`:

* ``text`` queries are embedded with the store's encoder, then ranked by ``retrieval``:

  - ``"hybrid"`` (the default): the cosine of every memory of a small collection (else the
    ``FUSION_DEPTH`` nearest), plus BM25 over the journal's word index
    (:mod:`~recall_core.memory.text.lexical`), fused by :func:`~recall_core.memory.text.lexical.linear_fusion`;
  - ``"vector"``: the index's cosine ranking alone (exact up to ``EXACT_SEARCH_MAX`` memories);
  - ``"lexical"``: BM25 alone (for measuring the word half by itself);

* ``hidden`` queries carry a ``vector`` (the ``<recall>`` hidden state mapped into the encoder's
  space by a trained query head, :mod:`recall_core.models.query_head`) and are ranked like
  ``text`` queries, with that vector in place of the encoder's embedding of the text (the word
  half of ``hybrid`` and ``lexical`` still reads ``query.text``).

Candidates keep the ranking's order (the engine does too); ``score`` is always the cosine
similarity, so ``min_score`` means the same whatever the ranking. Every row is checked to
belong to the user before it is returned, and to be visible by the journal: a memory deleted
or forgotten is never returned, even while the index still holds it (``journal.Visibility``).
A user with no collection whose journal says the index had some of their memories gets
:class:`MemoryUnavailableError` (the index was lost), not an empty answer.

What a candidate's text holds is its ``unit`` (:func:`expand`): the turn's own words
(``"turn"``), the turn with the one before it (``"window"``), the exchange it belongs to, a
turn and the reply to it (``"exchange"``), or the turn after the turn it answers
(``"answered"``, the default: a reply after the user's turn, so an acknowledgement brings the
fact it acknowledges; a user's "Dutch!" after the "Which language?" it answers). A fact a user states
and an assistant merely acknowledges ("Noted!") is found by either turn, and held by the
exchange whichever was found; ``metadata["covers"]`` lists the ids of the turns a text holds,
so the engine injects an exchange once.

``roles`` keeps only the memories of some speakers as candidates (``("user",)``: what the user
said, not the assistant's replies; keyed memories are always kept). The others stay in the
memory, as the context of the turns around them, and can still be found by other searches.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from recall_core.memory.encoders import Encoder, encode_checked
from recall_core.memory.errors import MemoryUnavailableError
from recall_core.memory.index import MARK_KEPT, MARK_LOST, MEMORIES, ChromaIndex
from recall_core.memory.journal import EVERYTHING, INDEXED, PENDING, Journal, JournalRow, Visibility
from recall_core.memory.nearest import EXACT_SEARCH_MAX, FETCHED, SIZE_SLACK, fetch, nearest
from recall_core.memory.records import check_owner
from recall_core.memory.text.composition import speaker_of
from recall_core.memory.text.lexical import WordScores, linear_fusion
from recall_core.memory.text.questions import ends_asking
from recall_core.memory.upkeep.marks import KEPT_DATA
from recall_core.memory.validation import check_count, role_names
from recall_core.types import MemoryCandidate, RecallQuery

#: How ``text`` queries rank memories (see the module docstring).
RETRIEVALS = ("hybrid", "vector", "lexical")
#: How deep each ranking is read before fusing.
FUSION_DEPTH = 50
#: How deep BM25's list is read under a ``where`` filter, which it cannot apply itself: a memory
#: inside the filter lost its word credit to 50 better word hits outside it (until 2026-12-07: a
#: reviewer). Only their ids are looked up in the filter; reading their vectors cost 14 times the time.
WORDS_UNDER_FILTER = 2000
#: What a found memory's text holds (see :func:`expand`).
UNITS = ("turn", "window", "exchange", "answered")
#: Speakers a memory may have (its ``role``); ``roles`` filters candidates by them.
ROLE_NAMES = ("user", "assistant", "system", "tool")
#: With a ``roles`` filter, how many more candidates are ranked than asked for (the others are dropped).
ROLE_DEPTH = 3


def check_unit(unit: object) -> str:
    """``unit`` if it is one of :data:`UNITS`, else ``ValueError`` naming them."""
    if unit not in UNITS:
        raise ValueError(f"unit must be one of {', '.join(map(repr, UNITS))}, got {unit!r}")
    return str(unit)


def check_roles(roles: object) -> tuple[str, ...] | None:
    """``roles`` as a tuple of speaker names (``None``: every speaker), else ``ValueError`` naming them."""
    if roles is None:
        return None
    return role_names(roles, "roles", ROLE_NAMES, ("None or a sequence of", "None or a non-empty sequence of"))


def check_retrieval(retrieval: object) -> str:
    """``retrieval`` if it is one of :data:`RETRIEVALS`, else ``ValueError`` naming them."""
    if retrieval not in RETRIEVALS:
        raise ValueError(f"retrieval must be one of {', '.join(map(repr, RETRIEVALS))}, got {retrieval!r}")
    return str(retrieval)


def search(
    index: ChromaIndex,
    journal: Journal,
    encoder: Encoder,
    user_id: str,
    query: RecallQuery,
    k: int,
    retrieval: str,
    where: Mapping[str, Any] | None = None,
    unit: str = "turn",
    roles: tuple[str, ...] | None = None,
) -> list[MemoryCandidate]:
    """Up to ``k`` of ``user_id``'s memories for ``query``, best first, each holding its ``unit``,
    said by one of ``roles`` (see the module docstring)."""
    k = check_count("k", k, 1)
    check_retrieval(retrieval)
    check_unit(unit)
    roles = check_roles(roles)
    if isinstance(query.text, str) and not query.text.isascii():
        # A lone surrogate (text decoded with errors="surrogateescape", a cut JSON escape) cannot be
        # encoded: the tokenizer raised a bare TypeError and the recall was skipped (a reviewer, 2026-12-07).
        query = replace(query, text=query.text.encode("utf-8", "replace").decode("utf-8"))
    depth, vectors = (k if roles is None else k * ROLE_DEPTH), {}
    while True:
        ranked, exhausted = _ranked(index, journal, encoder, user_id, query, depth, retrieval, where, vectors)
        if roles is not None:
            ranked = [c for c in ranked if c.metadata.get("role") in roles or "key" in c.metadata]
        if len(ranked) >= k or exhausted or (roles is None and not (where and retrieval == "lexical")):
            break
        # A filter applied after the ranking (roles; where, on BM25's list) left fewer than k while
        # the ranking had more: look deeper. Until 2026-12-06 ten assistant turns about tea hid the
        # user's one turn about it from roles=("user",), and the search returned nothing.
        depth *= 4
    return expand(journal, ranked[:k], unit)


def _ranked(
    index: ChromaIndex,
    journal: Journal,
    encoder: Encoder,
    user_id: str,
    query: RecallQuery,
    k: int,
    retrieval: str,
    where: Mapping[str, Any] | None,
    vectors: dict[str, np.ndarray] | None = None,
) -> tuple[list[MemoryCandidate], bool]:
    """Up to ``k`` candidates, and whether the ranking ran out before ``k`` (a deeper one finds no
    more). ``vectors`` keeps the query's embedding between the rounds of one search."""
    where = dict(where) if where else None
    visible = journal.visibility(user_id)
    if query.mode not in ("text", "hidden"):
        raise ValueError(f"query mode must be 'text' or 'hidden', got {query.mode!r}")
    headed = query.mode == "hidden"
    if headed and query.vector is None:
        raise ValueError(
            "a 'hidden' query needs query.vector: the <recall> hidden state mapped into this memory's encoder "
            "space by a query head (recall_core.models.query_head; `recall train-head` trains one)"
        )
    if not headed and (not query.text or not query.text.strip()):
        return [], True  # nothing to search by
    vector = _head_vector(query, encoder) if headed else None
    collection = index.collection(user_id, MEMORIES)
    if collection is None and check_not_lost(journal, user_id, index):  # raises, or healed a server
        collection = index.collection(user_id, MEMORIES)
    if collection is None:
        return [], True
    index.check_dimension(user_id, collection, encoder.dimension, f"the encoder {encoder.name!r}", encoder.name)
    if vector is None:
        vectors = {} if vectors is None else vectors
        vector = vectors.get("query")
        if vector is None:
            vector = vectors["query"] = encode_checked(encoder, [query.text])[0]
    if retrieval == "vector":
        found = search_vector(index, user_id, MEMORIES, vector, k, where, visible)
        return found, len(found) < k
    word_depth = max(k, FUSION_DEPTH)
    # under a filter BM25 cannot apply, hybrid reads it deep: the filter's own best words, not the best outside it
    depth = WORDS_UNDER_FILTER if where and retrieval == "hybrid" else word_depth
    words = journal.search_words(user_id, query.text, depth) if query.text.strip() else WordScores()
    if retrieval == "lexical":  # (with ``where``, BM25's whole list: the filter comes after it)
        found = _lexical(index, user_id, vector, words.ranked if where else words.ranked[:k], where)[:k]
        return found, len(words.ranked) < word_depth if where else len(words.ranked) <= k
    found = _hybrid(index, user_id, vector, words, k, where, visible)
    return found, len(found) < k


def _head_vector(query: RecallQuery, encoder: Encoder) -> np.ndarray:
    """A query head's vector, checked: in this store's encoder's space, of its size, finite."""
    if query.vector_space != encoder.name:
        raise ValueError(
            f"query.vector is in the space of the encoder {query.vector_space!r}, but this memory is indexed "
            f"with {encoder.name!r}: use a query head trained for {encoder.name!r}"
        )
    vector = np.asarray(query.vector, dtype=np.float32).reshape(-1)
    if vector.size != encoder.dimension or not np.isfinite(vector).all():
        raise ValueError(f"query.vector must hold {encoder.dimension} finite numbers, got {vector.size}")
    return vector


def check_not_lost(journal: Journal, user_id: str, index: ChromaIndex) -> bool:
    """Raise :class:`MemoryUnavailableError` if the index has no collection for ``user_id`` although
    the journal holds memories of theirs as indexed: the index was lost, and "no memory" would be
    a wrong answer. On a server, whose mark says whether it lost its data (upkeep/marks.py), the
    lost memories are indexed again first (or another thread's heal is waited for); return
    ``True`` then: the caller looks again."""
    lost = journal.count(user_id, INDEXED)
    if not lost:  # none indexed; or a server's heal made them pending and is indexing them again now
        waits = index.await_heal is not None and journal.count(user_id, PENDING) > 0  # (a new user never waits)
        return waits and index.await_heal()  # type: ignore[misc]
    outcome = index.check_server() if index.check_server is not None else None
    if outcome == MARK_LOST:
        return True
    if outcome == MARK_KEPT:
        if index.collection(user_id, MEMORIES) is not None:  # a heal ended between the caller's look and here
            return True
        raise MemoryUnavailableError(
            f"the Chroma server at {index.location} has no collection for user {user_id!r}, though this client's "
            f"journal holds {lost} of their memories as indexed. {KEPT_DATA}"
        )
    raise MemoryUnavailableError(
        f"the memory index at {index.location} has none of the {lost} memories of user {user_id!r} that the "
        "journal holds as indexed: the index was lost or damaged. Run `recall doctor --repair` "
        "(repair(store)) to index them again from the journal"
    )


def search_vector(
    index: ChromaIndex,
    user_id: str,
    kind: str,
    vector: np.ndarray,
    k: int,
    where: dict[str, Any] | None = None,
    visible: Visibility = EVERYTHING,
) -> list[MemoryCandidate]:
    """The ``k`` memories of the ``kind`` collection (:data:`~recall_core.memory.index.MEMORIES`) nearest
    to an already computed ``vector``, among those ``visible``."""

    def run(collection: Any) -> dict[str, list[Any]] | None:
        size = index.size(user_id, kind, collection)
        # Deep enough that k remain once the deleted ones are left out.
        depth = k if visible.everything else k + len(visible.deleted)
        if size > EXACT_SEARCH_MAX and visible.only is None:  # approximate, in one request
            found = collection.query(
                # (Chroma's n_results overflows past 2**32: nearest() bounds its own the same way; a reviewer)
                query_embeddings=[vector], n_results=min(depth, size), where=where, include=[*FETCHED, "distances"]
            )  # fmt: skip
            return _visible_part({key: found[key][0] for key in ("ids", *FETCHED, "distances")}, visible, k)
        found_ids = nearest(collection, vector, size, depth, where, ids=visible.only)
        return fetch(collection, [(m, d) for m, d in found_ids if visible.allows(m)][:k])

    return _candidates(user_id, index.with_collection(user_id, kind, run))


def _visible_part(result: dict[str, list[Any]], visible: Visibility, k: int) -> dict[str, list[Any]]:
    """The first ``k`` visible items of a query result (lists keyed by field)."""
    keep = [i for i, memory_id in enumerate(result["ids"]) if visible.allows(memory_id)][:k]
    return {key: [values[i] for i in keep] for key, values in result.items()}


def _hybrid(
    index: ChromaIndex,
    user_id: str,
    vector: np.ndarray,
    words: WordScores,
    k: int,
    where: dict[str, Any] | None,
    visible: Visibility = EVERYTHING,
) -> list[MemoryCandidate]:
    """The vector and BM25 rankings fused: BM25 ``FUSION_DEPTH`` deep, the cosine of every memory
    of a small collection (else ``FUSION_DEPTH`` deep). The word half searches the journal's
    indexed rows, which are all visible; the vector half leaves out what ``visible`` hides."""
    depth = max(k, FUSION_DEPTH) + len(visible.deleted)

    def run(collection: Any) -> Any:
        size = index.size(user_id, MEMORIES, collection)
        # A small collection's exact search has every distance anyway: keep them all, so no
        # word hit needs its vector fetched.
        wanted = size + SIZE_SLACK if size <= EXACT_SEARCH_MAX else depth  # (a server's size may be old)
        cosine = {
            memory_id: 1.0 - d
            for memory_id, d in nearest(collection, vector, size, wanted, where, ids=visible.only)
            if visible.allows(memory_id)
        }
        ranked, hits_where = words.ranked, where
        if where and ranked:  # the word hits the filter keeps, FUSION_DEPTH deep
            # the filter's ids, asked alone: asked with ids (as _cosines does) an "$in" took Chroma 0.6 s for 300
            kept = set(collection.get(where=where, include=[])["ids"])
            ranked, hits_where = [(m, score) for m, score in ranked if m in kept][: max(k, FUSION_DEPTH)], None
        cosine.update(_cosines(collection, [m for m, _ in ranked if m not in cosine], vector, hits_where))
        fused = linear_fusion(cosine, dict(ranked), words.query_weight)[:k]
        return fetch(collection, [(memory_id, 1.0 - cosine[memory_id]) for memory_id, _ in fused])

    return _candidates(user_id, index.with_collection(user_id, MEMORIES, run), keep_order=True)


def _lexical(
    index: ChromaIndex, user_id: str, vector: np.ndarray, words: list[tuple[str, float]], where: dict[str, Any] | None
) -> list[MemoryCandidate]:
    """BM25's order, each memory scored by its cosine."""

    def run(collection: Any) -> Any:
        cosine = _cosines(collection, [m for m, _ in words], vector, where)
        return fetch(collection, [(m, 1.0 - cosine[m]) for m, _ in words if m in cosine])

    return _candidates(user_id, index.with_collection(user_id, MEMORIES, run), keep_order=True)


def _cosines(collection: Any, ids: list[str], vector: np.ndarray, where: dict[str, Any] | None) -> dict[str, float]:
    """The cosine of each of ``ids`` from the index's vectors; ``where`` drops the ones it excludes."""
    if not ids:
        return {}
    got = collection.get(ids=ids, where=where, include=["embeddings"])
    return {
        memory_id: _cosine(np.asarray(stored, dtype=np.float32), vector)
        for memory_id, stored in zip(got["ids"], got["embeddings"], strict=True)
    }


def expand(journal: Journal, candidates: list[MemoryCandidate], unit: str) -> list[MemoryCandidate]:
    """Each candidate's text as its ``unit``: ``"turn"`` as it is; ``"window"`` the turn before
    it (same session) and the turn; ``"exchange"`` a turn and the reply to it (a user turn and
    the next turn, or a reply and the turn before it); ``"answered"`` the turn after the turn it
    answers: a reply after the user's turn before it, a user's turn after the other speaker's
    question before it. Each turn of a longer text is labelled
    by its speaker, and ``metadata["covers"]`` lists the ids of the turns it holds. Keyed
    memories (``put``) are notes, not dialogue: they stay as they are."""
    if unit == "turn" or not candidates:
        return candidates
    rows = {row.id: row for row in journal.get_many([c.id for c in candidates])}
    out = []
    for candidate in candidates:
        row = rows.get(candidate.id)
        if row is None or "key" in row.extra:
            out.append(candidate)
            continue
        turns = _unit_rows(journal, row, unit)
        text = "\n".join(_labelled(r) for r in turns) if len(turns) > 1 else candidate.text
        metadata = {**candidate.metadata, "covers": ",".join(r.id for r in turns)}
        out.append(MemoryCandidate(candidate.id, candidate.score, text, candidate.embedding, metadata))
    return out


def _unit_rows(journal: Journal, row: JournalRow, unit: str) -> list[JournalRow]:
    previous = journal.previous_turn(row.user_id, row.session_id, row.turn_index) if row.chunk_index == 0 else None
    if unit == "window":
        return [previous, row] if previous is not None else [row]
    if unit == "answered":  # a reply with the turn it answers; a user turn with the question it answers
        if previous is None or previous.role == row.role:
            return [row]
        answers = row.role != "user" or ends_asking(previous.text)
        return [previous, row] if answers else [row]
    if row.role == "user":  # a turn and the reply to it
        following = journal.next_turn(row.user_id, row.session_id, row.turn_index) if row.chunk_index == row.n_chunks - 1 else None
        return [row, following] if following is not None and following.role != "user" else [row]
    return [previous, row] if previous is not None and previous.role == "user" else [row]


def _labelled(row: JournalRow) -> str:
    speaker = speaker_of(row.role, row.extra)
    return row.text if row.text.startswith(f"{speaker}:") else f"{speaker}: {row.text}"


def _candidates(user_id: str, result: Mapping[str, Any] | None, keep_order: bool = False) -> list[MemoryCandidate]:
    """Candidates from a fetched result, owner-checked; best cosine first unless ``keep_order``."""
    if result is None:
        return []
    candidates = []
    for memory_id, text, meta, distance, embedding in zip(
        result["ids"], result["documents"], result["metadatas"], result["distances"], result["embeddings"], strict=True
    ):  # fmt: skip
        check_owner(user_id, memory_id, meta)
        # Chroma's cosine distance is 1 - cosine; clip the float noise outside [-1, 1].
        score = float(min(1.0, max(-1.0, 1.0 - float(distance))))
        vector_out = None if embedding is None else np.asarray(embedding, dtype=np.float32).tolist()
        candidates.append(MemoryCandidate(memory_id, score, text, vector_out, dict(meta)))
    if not keep_order:
        # Equal scores by id, so that the order does not depend on the index's insertion order.
        candidates.sort(key=lambda c: (-c.score, c.id))
    return candidates


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / max(float(np.linalg.norm(a) * np.linalg.norm(b)), 1e-12))

"""Lexical search over the journal (SQLite FTS5, BM25) and its fusion with the vector ranking.

Why: a question names the people, places and things of the turn it asks about ("When did
Caroline go to the LGBTQ support group?"), and a small sentence encoder weighs those names
little. On LoCoMo, BM25 alone found the evidence more often than all-MiniLM-L6-v2 alone, and the
two fused did better than either (``benchmarks/retrieval_methods.py``, BENCHMARKS.md).

The index is an FTS5 table in the journal, kept in step with it by triggers, so every
memory the journal holds is searchable by words as soon as it is written, and a rebuilt
Chroma index needs nothing here. A search reads a word's postings (FTS5's ``instance``
vocabulary) joined to the journal's rows of the searching user: one user's search never
matches another's rows. (Each row also carries an ``owner`` token derived from its user id,
what the search matched on before; the column stays so that older journals need no migration.)

BM25 is scored here, not by FTS5's ``bm25()``, so that its statistics (how many rows, how many
of them hold a word, their mean length) are the searching user's own. FTS5's counts cover the
whole journal: one user's memories moved another user's ranking, and a name that is rare in the
store but said in every other turn of one conversation weighed as if it were rare there too.
The formula and constants are FTS5's, so a journal with one user ranks exactly as ``bm25()``
does (a test checks it), with two exceptions: above :data:`LENGTH_SAMPLE` memories the mean
length is a sample's, and two query words with one stem ("read", "reading") count once, where
FTS5 counted that stem twice. Which words are searched at all still follows the whole journal's
counts: that bounds the cost (:data:`POSTINGS_BUDGET`), not the ranking of what is found.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

#: FTS5 table, triggers and backfill: each row's search text (``context``, else ``text``) and
#: an ``owner`` token, ``'u' || hex(user_id)``: one token per user.
FTS_SCHEMA = """
CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts USING fts5(owner, text, tokenize='porter unicode61');
CREATE TRIGGER IF NOT EXISTS memories_fts_insert AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts(rowid, owner, text)
    VALUES (new.seq, 'u' || hex(new.user_id), coalesce(new.context, new.text));
END;
CREATE TRIGGER IF NOT EXISTS memories_fts_delete AFTER DELETE ON memories BEGIN
    DELETE FROM memories_fts WHERE rowid = old.seq;
END;
CREATE TRIGGER IF NOT EXISTS memories_fts_update AFTER UPDATE OF text, context ON memories BEGIN
    UPDATE memories_fts SET text = coalesce(new.context, new.text) WHERE rowid = new.seq;
END;
"""
FTS_BACKFILL = (
    "INSERT INTO memories_fts(rowid, owner, text) SELECT seq, 'u' || hex(user_id), coalesce(context, text) FROM memories"
)

#: The most (word, memory) postings one search scores: BM25 costs about 1 µs per posting, so
#: words are taken rarest first while their document counts fit; the common ones left out weigh
#: little in BM25 anyway, and the vector half still sees them. Typical queries on a conversation
#: of a few thousand turns keep every word.
POSTINGS_BUDGET = 1000
#: Scratch tables (in the connection's temp schema, never in the journal file) that let
#: SQLite itself tokenize and stem the query words, and read each stem's document count.
SCRATCH_SCHEMA = """
CREATE VIRTUAL TABLE IF NOT EXISTS temp.recall_query_words USING fts5(text, tokenize='porter unicode61');
CREATE VIRTUAL TABLE IF NOT EXISTS temp.recall_query_stems USING fts5vocab(temp, recall_query_words, 'instance');
CREATE VIRTUAL TABLE IF NOT EXISTS temp.recall_memory_stems USING fts5vocab(main, memories_fts, 'row');
CREATE VIRTUAL TABLE IF NOT EXISTS temp.recall_memory_instances USING fts5vocab(main, memories_fts, 'instance');
"""
#: BM25's constants, FTS5's own (``bm25()`` uses these).
K1 = 1.2
B = 0.75

#: Runs of letters and digits, as FTS5's unicode61 tokenizer splits them ("don't": "don", "t").
_WORD = re.compile(r"[^\W_]+")
#: English function words (the usual list, as in NLTK's): they match nearly every turn and only
#: add noise and time. Not tuned on any question.
STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have
    having he her here hers herself him himself his how i if in into is it its itself just let me more most
    my myself no nor not now of off on once only or other our ours ourselves out over own same she should
    so some such than that the their theirs them themselves then there these they this those through to too
    under until up very was we were what when where which while who whom whose why will with would you your
    yours yourself yourselves don didn doesn isn wasn aren weren haven hasn won ll ve re""".split()
)


def owner_token(user_id: str) -> str:
    """The FTS token of ``user_id``'s rows (what ``'u' || hex(user_id)`` gives in SQLite)."""
    return "u" + user_id.encode("utf-8").hex().upper()


def query_words(text: str) -> list[str]:
    """The words of ``text`` worth searching: lower-cased, unique, no function words or single letters.
    Read in Unicode NFC: a decomposed "Ñandú" (a letter, then its mark) split into "N" and "andu"
    and found nothing (until 2026-12-07: a reviewer)."""
    words = [w.lower() for w in _WORD.findall(unicodedata.normalize("NFC", text))]
    return [w for w in dict.fromkeys(words) if len(w) > 1 and w not in STOPWORDS]


def query_stems(db: Any, words: Sequence[str]) -> list[str | None]:
    """The index term of each of ``words`` (SQLite's own porter tokenizer), ``None`` for a word it drops."""
    if not words:
        return []
    db.execute("DELETE FROM temp.recall_query_words")
    db.executemany("INSERT INTO temp.recall_query_words(rowid, text) VALUES (?, ?)", list(enumerate(words)))
    stem_of = {int(row): term for term, row in db.execute("SELECT term, doc FROM temp.recall_query_stems")}
    return [stem_of.get(index) for index in range(len(words))]


def stem_counts(db: Any, words: Sequence[str]) -> list[tuple[str, str, int]]:
    """``(word, stem, how many memories of the whole journal hold the stem)`` for each of ``words``
    the tokenizer keeps, in the query's order (0: a word no memory holds)."""
    counts = []
    for word, stem in zip(words, query_stems(db, words), strict=True):
        if stem:
            found = db.execute("SELECT doc FROM temp.recall_memory_stems WHERE term = ?", (stem,)).fetchone()
            counts.append((word, stem, int(found[0]) if found else 0))
    return counts


def within_budget(counts: Sequence[tuple[str, str, int]], budget: int | None = None) -> list[tuple[str, str]]:
    """``(word, stem)`` of the rarest words of ``counts`` (:func:`stem_counts`) whose document
    counts add up to ``budget``, in the query's order; words in no memory are dropped (they
    cannot match)."""
    budget = POSTINGS_BUDGET if budget is None else budget
    kept, used = [], 0
    for count, index, word, stem in sorted((c, i, w, s) for i, (w, s, c) in enumerate(counts) if c):
        if used + count > budget:
            break
        kept.append((index, word, stem))
        used += count
    return [(word, stem) for _, word, stem in sorted(kept)]


def affordable_words(db: Any, words: Sequence[str], budget: int | None = None) -> list[str]:
    """The rarest of ``words`` whose document counts (over the whole journal) add up to
    ``budget``, in the query's order: what the search reads.

    Stems come from SQLite's own porter tokenizer, so the counts are those of the index.
    Words in no memory are dropped (they cannot match).
    """
    return [word for word, _ in within_budget(stem_counts(db, words), budget)]


def row_tokens(size: bytes) -> int:
    """The tokens of one word-index row, all columns: the sum of the varints FTS5 keeps in ``memories_fts_docsize``.

    SQLite varints, big-endian, 7 bits a byte, the high bit set on all but the last byte (exact
    below 2**56 tokens: the nine-byte form never occurs for a row's size).
    """
    total = value = 0
    for byte in size:
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            total, value = total + value, 0
    return total


#: The SQL name of :func:`row_tokens` on a journal connection (see :func:`prepare_connection`).
ROW_TOKENS_SQL = "recall_row_tokens"


def prepare_connection(db: Any, statements: Sequence[str]) -> None:
    """Make ``db`` (a journal connection) ready to search: the scratch tables (``statements``:
    :data:`SCRATCH_SCHEMA` split into statements) and :func:`row_tokens` as an SQL function."""
    for statement in statements:
        db.execute(statement)
    db.create_function(ROW_TOKENS_SQL, 1, row_tokens, deterministic=True)


#: At most this many of a user's memories give the mean memory length (all of them, below it):
#: reading every size costs about 1 µs a memory in Python (107 ms at 100k), and the mean of
#: 1,000 is within a few percent of the whole's.
LENGTH_SAMPLE = 1000


def user_statistics(db: Any, user_id: str) -> tuple[int, float]:
    """How many word-index rows ``user_id`` has (every state) and their mean length in tokens.

    The count reads the journal's index on users (about 75 ns a memory in C); the mean, the
    sizes of at most :data:`LENGTH_SAMPLE` of them, the same rows every time for the same journal.
    """
    (rows,) = db.execute("SELECT count(*) FROM memories WHERE user_id = ?", (user_id,)).fetchone()
    sampled, tokens = db.execute(
        f"""SELECT count(*), sum({ROW_TOKENS_SQL}(d.sz)) FROM
            (SELECT seq FROM memories WHERE user_id = ? LIMIT {LENGTH_SAMPLE}) AS m
            JOIN memories_fts_docsize AS d ON d.id = m.seq""",
        (user_id,),
    ).fetchone()
    return int(rows), (float(tokens) / sampled if sampled else 0.0)


def okapi(tf: int, idf: float, length: int, mean_length: float) -> float:
    """One word's BM25 term as FTS5 computes it."""
    return idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / mean_length))


def inverse_document_frequency(rows: int, holding: int) -> float:
    """FTS5's idf: ``log((N - n + 0.5) / (n + 0.5))``, and a tiny positive value where that is not positive."""
    idf = math.log((rows - holding + 0.5) / (holding + 0.5))
    return idf if idf > 0 else 1e-6


def linear_fusion(
    cosine: Mapping[str, float], bm25: Mapping[str, float], query_weight: float = 0.0
) -> list[tuple[str, float]]:
    """``cosine + bm25 / scale`` for every id in ``cosine``, best first; ``scale`` is this query's
    best BM25 score or its ``query_weight`` (:class:`WordScores`), whichever is larger.

    An id missing from ``bm25`` scores 0 there. The scale puts the lexical half in [0, 1] like a
    cosine, and the two halves weigh the same (not tuned per question). On LoCoMo this beat
    reciprocal-rank fusion (BENCHMARKS.md) because it keeps how far apart the scores are, not
    only their order. Scaling by the best score alone gave a full 1 to the best match however
    little of the query it matched: asked "What did Hollis cook?" where "cook" is in no memory
    and "Hollis" in most, the shortest memory naming Hollis ("Hollis: Night night!") won. Against
    the query's weight, a memory matching its rare words scores near 1 and one matching only a
    name said everywhere near 0.
    """
    scale = max(max(bm25.values(), default=0.0), query_weight)
    fused = {memory_id: cos + (bm25.get(memory_id, 0.0) / scale if scale > 0 else 0.0) for memory_id, cos in cosine.items()}
    return sorted(fused.items(), key=lambda item: (-item[1], item[0]))


@dataclass(frozen=True)
class WordScores:
    """A word search's result: the ranking, and the scale it is read on.

    ``query_weight`` is the BM25 score of a memory of mean length holding each query word once
    (the sum of the words' idf): the words searched, and the words no memory holds at all (idf
    as for a word in none of the user's memories). Words left out by :data:`POSTINGS_BUDGET`
    (common in the whole journal) count 0: weighing them would read the postings the budget
    saves.
    """

    ranked: list[tuple[str, float]] = field(default_factory=list)
    query_weight: float = 0.0


def bm25_search(db: Any, user_id: str, text: str, k: int, states: Sequence[str]) -> list[tuple[str, float]]:
    """``(memory id, BM25 score)`` of ``user_id``'s rows in ``states``, best first (higher is better).

    ``db`` is the journal's sqlite3 connection (the caller holds its lock); only the words
    :func:`affordable_words` keeps are searched. The statistics are ``user_id``'s rows (every
    state, as FTS5 counts every row); the scores are FTS5's ``bm25()`` over those rows.
    """
    return word_scores(db, user_id, text, k, states).ranked


def word_scores(db: Any, user_id: str, text: str, k: int, states: Sequence[str]) -> WordScores:
    """:func:`bm25_search`'s ranking with its query's weight (:class:`WordScores`)."""
    # One read snapshot for the counts and the postings: another process writing between them
    # (WAL readers see each statement's own snapshot otherwise) could make a word occur in more
    # rows than the user was counted to have.
    own_snapshot = not db.in_transaction
    if own_snapshot:
        db.execute("BEGIN")
    try:
        return _scores_in_snapshot(db, user_id, text, k, states)
    finally:
        if own_snapshot:
            db.execute("COMMIT")


def _scores_in_snapshot(db: Any, user_id: str, text: str, k: int, states: Sequence[str]) -> WordScores:
    """:func:`word_scores`' work, within one read snapshot of the journal."""
    counts = stem_counts(db, query_words(text))
    stems = sorted({stem for _, stem in within_budget(counts)})
    if not stems:
        return WordScores()
    rows, mean_length = user_statistics(db, user_id)
    if not rows:
        return WordScores()
    mean_length = mean_length or 1.0  # no row sized at all (a damaged index): lengths play no part
    unheard = {stem for _, stem, count in counts if count == 0}
    query_weight = len(unheard) * inverse_document_frequency(rows, 0)
    wanted = set(states)
    ids: dict[int, str] = {}
    postings: list[tuple[int, int, float]] = []  # (row, tf, idf)
    for stem in stems:
        # Where the word occurs in this user's text column, counted per row; FTS5 reads the
        # word's postings for every user (what the budget bounds) and the join keeps this user's.
        hits = db.execute(
            """SELECT m.seq, m.id, m.state, count(*) FROM temp.recall_memory_instances AS i
               JOIN memories AS m ON m.seq = i.doc
               WHERE i.term = ? AND i.col = 'text' AND m.user_id = ? GROUP BY m.seq""",
            (stem, user_id),
        ).fetchall()
        idf = inverse_document_frequency(rows, len(hits))
        query_weight += idf
        for seq, memory_id, state, tf in hits:
            if state in wanted:
                ids[seq] = memory_id
                postings.append((seq, int(tf), idf))
    if not postings:
        return WordScores([], query_weight)
    marks = ", ".join("?" * len(ids))
    lengths = dict(
        db.execute(f"SELECT id, {ROW_TOKENS_SQL}(sz) FROM memories_fts_docsize WHERE id IN ({marks})", list(ids))
    )
    scores: dict[int, float] = {}
    for seq, tf, idf in postings:
        # A row whose size is missing (a damaged index) counts as a memory of mean length.
        scores[seq] = scores.get(seq, 0.0) + okapi(tf, idf, lengths.get(seq) or mean_length, mean_length)
    ranked = sorted(((ids[seq], score) for seq, score in scores.items()), key=lambda item: (-item[1], item[0]))
    return WordScores(ranked[: int(k)], query_weight)

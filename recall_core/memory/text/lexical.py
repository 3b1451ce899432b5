"""Lexical search over the journal (SQLite FTS5, BM25) and its fusion with the vector ranking.

Why: a question names the people, places and things of the turn it asks about ("When did
Caroline go to the LGBTQ support group?"), and a small sentence encoder weighs those names
little. On LoCoMo, BM25 alone found the evidence more often than all-MiniLM-L6-v2 alone, and the
two fused did better than either (``benchmarks/retrieval_methods.py``, BENCHMARKS.md).

The index is an FTS5 table in the journal, kept in step with it by triggers, so every
memory the journal holds is searchable by words as soon as it is written, and a rebuilt
Chroma index needs nothing here. Each row carries an ``owner`` token derived from its user
id, and every query is ``owner AND (words)``: one user's search never matches another's rows.
BM25's document frequencies are counted over the whole journal (all users): they shape the
ranking only, never what can be returned.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
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
"""

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
    """The words of ``text`` worth searching: lower-cased, unique, no function words or single letters."""
    words = [w.lower() for w in _WORD.findall(text)]
    return [w for w in dict.fromkeys(words) if len(w) > 1 and w not in STOPWORDS]


def match_expression(user_id: str, words: Sequence[str]) -> str | None:
    """An FTS5 query for any of ``words`` within ``user_id``'s rows; ``None`` if there are none.

    Words are quoted, so nothing in them is read as FTS5 syntax.
    """
    if not words:
        return None
    terms = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
    return f'owner : "{owner_token(user_id)}" AND ({terms})'


def affordable_words(db: Any, words: Sequence[str], budget: int | None = None) -> list[str]:
    """The rarest of ``words`` whose document counts (over the whole journal) add up to ``budget``.

    Stems come from SQLite's own porter tokenizer, so the counts are those of the index.
    Words in no memory are dropped (they cannot match).
    """
    if not words:
        return []
    budget = POSTINGS_BUDGET if budget is None else budget
    db.execute("DELETE FROM temp.recall_query_words")
    db.executemany("INSERT INTO temp.recall_query_words(rowid, text) VALUES (?, ?)", list(enumerate(words)))
    stem_of = {int(row): term for term, row in db.execute("SELECT term, doc FROM temp.recall_query_stems")}
    counts = []
    for index, word in enumerate(words):
        stem = stem_of.get(index)
        found = db.execute("SELECT doc FROM temp.recall_memory_stems WHERE term = ?", (stem,)).fetchone() if stem else None
        if found:
            counts.append((int(found[0]), index, word))
    kept, used = [], 0
    for count, index, word in sorted(counts):
        if used + count > budget:
            break
        kept.append((index, word))
        used += count
    return [word for _, word in sorted(kept)]


def linear_fusion(cosine: Mapping[str, float], bm25: Mapping[str, float]) -> list[tuple[str, float]]:
    """``cosine + bm25 / (this query's best bm25)`` for every id in ``cosine``, best first.

    An id missing from ``bm25`` scores 0 there. Scaling by the best BM25 score puts the
    lexical half in [0, 1] like a cosine; the two halves weigh the same (not tuned per
    question). On LoCoMo this beat reciprocal-rank fusion (BENCHMARKS.md) because it keeps how
    far apart the scores are, not only their order.
    """
    top = max(bm25.values(), default=0.0)
    fused = {memory_id: cos + (bm25.get(memory_id, 0.0) / top if top > 0 else 0.0) for memory_id, cos in cosine.items()}
    return sorted(fused.items(), key=lambda item: (-item[1], item[0]))


def bm25_search(db: Any, user_id: str, text: str, k: int, states: Sequence[str]) -> list[tuple[str, float]]:
    """``(memory id, BM25 score)`` of ``user_id``'s rows in ``states``, best first (higher is better).

    ``db`` is the journal's sqlite3 connection (the caller holds its lock); only the words
    :func:`affordable_words` keeps are searched.
    """
    expression = match_expression(user_id, affordable_words(db, query_words(text)))
    if expression is None:
        return []
    marks = ", ".join("?" * len(states))
    # bm25() is lower-is-better; the owner column gets weight 0 so it does not score.
    rows = db.execute(
        f"""SELECT m.id, bm25(memories_fts, 0.0, 1.0) AS rank
            FROM memories_fts JOIN memories AS m ON m.seq = memories_fts.rowid
            WHERE memories_fts MATCH ? AND m.user_id = ? AND m.state IN ({marks})
            ORDER BY rank LIMIT ?""",
        (expression, user_id, *states, int(k)),
    ).fetchall()
    return [(memory_id, -float(rank)) for memory_id, rank in rows]

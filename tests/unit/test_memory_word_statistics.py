"""BM25 over one user's own statistics: scored as FTS5's bm25() scores, counted over the
searching user's rows only, so that other users' memories never move a user's ranking."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from recall_core.memory import HashEncoder, MemoryStore, MemoryWriter
from recall_core.memory.text import lexical
from recall_core.memory.text.lexical import (
    inverse_document_frequency,
    linear_fusion,
    owner_token,
    query_words,
    row_tokens,
    user_statistics,
    word_scores,
)

TEXTS = [
    "Rafe read Stoner with his book club",
    "Rafe: morning, got a sec?",
    "the book club meets on Tuesdays at the library",
    "Anouk walked the dog along the canal with Rafe",
    "reading reading reading all weekend, the same book again",
    "Stoner is a novel by John Williams",
    "we talked about the weather",
]
QUERIES = ["What book did Rafe read?", "book club library", "walked the dog", "Stoner novel", "weather"]


@pytest.fixture
def store(tmp_path: Path):
    with MemoryStore.local(tmp_path / "m", encoder=HashEncoder(16)) as s:
        yield s


def write(store: MemoryStore, user: str, texts: list[str]) -> list[str]:
    writer = MemoryWriter(store, dated=False, speakers=False, window=False)
    return [memory_id for text in texts for memory_id in writer.add_turn(user, "user", text)]


def fts5_bm25(db: sqlite3.Connection, user: str, text: str) -> list[tuple[str, float]]:
    """What FTS5's own bm25() gives, over the whole table (the search before this module)."""
    terms = " OR ".join(f'"{w}"' for w in query_words(text))
    rows = db.execute(
        """SELECT m.id, bm25(memories_fts, 0.0, 1.0) FROM memories_fts JOIN memories AS m ON m.seq = memories_fts.rowid
           WHERE memories_fts MATCH ? ORDER BY 2, 1""",
        (f'owner : "{owner_token(user)}" AND ({terms})',),
    ).fetchall()
    return [(memory_id, -rank) for memory_id, rank in rows]


@pytest.mark.parametrize("query", QUERIES)
def test_one_user_ranks_exactly_as_fts5_bm25(store: MemoryStore, query: str) -> None:
    write(store, "u", TEXTS)
    ours = store.journal.search_text("u", query, 50)
    theirs = fts5_bm25(store.journal._db, "u", query)
    assert [m for m, _ in ours] == [m for m, _ in theirs] and ours
    assert [s for _, s in ours] == pytest.approx([s for _, s in theirs], rel=1e-9)


@pytest.mark.parametrize("query", QUERIES)
def test_other_users_never_move_a_users_ranking(store: MemoryStore, query: str) -> None:
    write(store, "u", TEXTS)
    alone = store.journal.search_text("u", query, 50)
    # Other users say the same words, more often and at other lengths.
    write(store, "v", [f"book club {i}: Rafe read and read" for i in range(40)])
    write(store, "w", ["weather " * 30, "Stoner", "dog dog dog walked"])
    assert store.journal.search_text("u", query, 50) == alone
    assert {store.journal.get(m).user_id for m, _ in alone} == {"u"}


def test_a_name_in_every_other_turn_weighs_little_whatever_the_store(store: MemoryStore) -> None:
    """A speaker's name said throughout one conversation is common *there*. Counted over the
    store, where other users never say it and often say "book", the name was the query's
    heaviest word and a greeting that names him came first (it did before this module)."""
    greeting, news = write(store, "u", ["Morning Rafe, got a sec?", "My book club picked Stoner for this month"])
    write(store, "u", [f"Rafe: I said thing number {i}" for i in range(6)])
    write(store, "u", [f"Anouk: I said thing number {i}" for i in range(6)])
    for other in range(20):
        write(store, f"other{other}", [f"a book I read, number {i}" for i in range(5)])
    ranked = [m for m, _ in store.journal.search_text("u", "What book did Rafe read?", 5)]
    assert ranked[0] == news and ranked.index(greeting) > 0


def test_the_query_weight_is_the_idf_of_every_word_it_could_match(store: MemoryStore) -> None:
    """A memory of mean length holding each query word once would score the sum of their idf:
    the words searched (counted in the user's rows: "stoner" is only in another user's), and
    words no memory holds ("zzyzx") as a word in none of the user's memories."""
    write(store, "u", TEXTS)
    write(store, "v", ["Stoner again", "marmalade"])
    db = store.journal._db
    found = word_scores(db, "u", "What book did Rafe read with Stoner and zzyzx?", 50, ("indexed",))
    rows = len(TEXTS)
    # book: 3 memories of u; rafe: 3; read (stem of "read", "reading"): 2; stoner: 2; zzyzx: none
    expected = sum(inverse_document_frequency(rows, n) for n in (3, 3, 2, 2, 0))
    assert found.query_weight == pytest.approx(expected)
    assert found.ranked == store.journal.search_text("u", "What book did Rafe read with Stoner and zzyzx?", 50)
    only_elsewhere = word_scores(db, "u", "marmalade", 50, ("indexed",))  # v's word, in none of u's memories
    assert only_elsewhere.ranked == [] and only_elsewhere.query_weight == pytest.approx(inverse_document_frequency(rows, 0))


def test_words_left_out_by_the_budget_weigh_nothing(store: MemoryStore, monkeypatch: pytest.MonkeyPatch) -> None:
    write(store, "u", TEXTS)
    monkeypatch.setattr(lexical, "POSTINGS_BUDGET", 2)  # "stoner" (2 memories) fits, "book" (3) does not
    found = word_scores(store.journal._db, "u", "book Stoner", 50, ("indexed",))
    assert found.query_weight == pytest.approx(inverse_document_frequency(len(TEXTS), 2))
    assert {store.journal.get(m).text for m, _ in found.ranked} == {TEXTS[0], TEXTS[5]}


def test_a_name_said_everywhere_does_not_carry_a_greeting_past_the_answer(store: MemoryStore) -> None:
    """Asked "What did Hollis cook?" where "cook" is in no memory and "Hollis" in most, the word
    half matched only the name, and scaled by its best score it gave the shortest memory naming
    Hollis a full 1: "Hollis: Night night!" outranked the answer by 0.6 with a lower cosine
    (the duo family's misses). Against the query's weight the name adds almost nothing."""
    greeting, answer = write(store, "u", ["Hollis: Night night!", "Hollis: I made a sourdough loaf tonight and it worked"])
    write(store, "u", [f"Hollis: thing number {i} happened at work" for i in range(8)])
    write(store, "u", [f"Rafe: thing number {i} happened at home" for i in range(6)])
    found = word_scores(store.journal._db, "u", "What did Hollis cook?", 50, ("indexed",))
    words = dict(found.ranked)
    assert max(words, key=words.get) == greeting  # the shortest memory naming him: BM25's best
    cosine = {greeting: 0.37, answer: 0.40}  # as the encoder put them (duo, training seed)
    assert linear_fusion(cosine, words, found.query_weight)[0][0] == answer
    assert linear_fusion(cosine, words)[0][0] == greeting  # scaled by the best score alone: the defect


def test_statistics_count_every_state_and_only_the_users_rows(store: MemoryStore) -> None:
    write(store, "u", ["one two three", "four five"])
    write(store, "v", ["six " * 50])
    rows, mean = user_statistics(store.journal._db, "u")
    assert rows == 2 and mean == pytest.approx((1 + 3 + 1 + 2) / 2)  # the owner token counts, as in FTS5
    assert user_statistics(store.journal._db, "nobody") == (0, 0.0)


@pytest.mark.parametrize("sizes", [[1, 3], [1, 127], [1, 128], [1, 300], [1, 16384], [2, 70000, 5]])
def test_row_tokens_reads_sqlite_varints(sizes: list[int]) -> None:
    def varint(n: int) -> bytes:
        out = [n & 0x7F]
        n >>= 7
        while n:
            out.append(0x80 | (n & 0x7F))
            n >>= 7
        return bytes(reversed(out))

    assert row_tokens(b"".join(varint(n) for n in sizes)) == sum(sizes)


def test_row_tokens_agrees_with_the_index(store: MemoryStore) -> None:
    write(store, "u", ["word " * 127, "two words", "word " * 300])  # 128 tokens: a two-byte varint
    db = store.journal._db
    db.execute("CREATE VIRTUAL TABLE temp.every_token USING fts5vocab(main, memories_fts, 'instance')")
    counted = dict(db.execute("SELECT doc, count(*) FROM temp.every_token GROUP BY doc"))
    sizes = dict(db.execute("SELECT id, sz FROM memories_fts_docsize"))
    assert {seq: row_tokens(sz) for seq, sz in sizes.items()} == counted
    assert max(counted.values()) >= 128


def test_deleted_memories_leave_the_ranking_and_the_counts(store: MemoryStore) -> None:
    kept, gone = write(store, "u", ["zebra crossing", "zebra zebra zoo"])
    writer = MemoryWriter(store, dated=False, speakers=False, window=False)
    assert [m for m, _ in store.journal.search_text("u", "zebra", 5)] == [gone, kept]
    writer.delete("u", gone)
    assert [m for m, _ in store.journal.search_text("u", "zebra", 5)] == [kept]
    assert user_statistics(store.journal._db, "u")[0] == 1


def test_a_row_whose_size_is_lost_is_still_found(store: MemoryStore) -> None:
    """Fault injection: the index's size table loses rows (a damaged or partly restored
    journal). The search still returns the user's memories, sized as the mean."""
    zebra, _ = write(store, "u", ["zebra crossing near the school", "the zoo"])
    db = store.journal._db
    db.execute("DELETE FROM memories_fts_docsize")
    db.commit()
    assert [m for m, _ in store.journal.search_text("u", "zebra", 5)] == [zebra]



def test_another_process_writing_during_a_search_cannot_outcount_the_user(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fault injection: another writer (a second connection to the same journal file, as another
    process would have) adds the user's memories between the search's count of them and its read
    of the postings. The search reads one snapshot, so a word never occurs in more rows than were
    counted (that gave a ValueError from log() in the load benchmark's readers)."""
    from recall_core.memory.journal import Journal
    from recall_core.memory.text import lexical

    [first] = write(store, "u", ["zebra crossing"])
    other = Journal(store.journal.path)
    counted = lexical.user_statistics

    def count_then_another_process_writes(db: sqlite3.Connection, user_id: str) -> tuple[int, float]:
        found = counted(db, user_id)
        other.insert([store.journal.get(first).with_(id=f"late{i}", turn_index=100 + i) for i in range(5)])
        return found

    monkeypatch.setattr(lexical, "user_statistics", count_then_another_process_writes)
    found = store.journal.search_text("u", "zebra", 5, states=("indexed", "pending"))
    assert [m for m, _ in found] == [first]  # the late rows are not in this search's snapshot
    monkeypatch.undo()
    assert len(store.journal.search_text("u", "zebra", 10, states=("indexed", "pending"))) == 6  # the next one sees them
    other.close()

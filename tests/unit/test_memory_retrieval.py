"""The retrieval defaults: memory text with date, speaker and the turn before; hybrid
(vector + BM25 over the journal) search; the journal's word index kept in step."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from recall_core.memory import HashEncoder, MemoryStore, MemoryWriter
from recall_core.memory.journal import Journal
from recall_core.memory.text.composition import WINDOW_WORDS, day_label
from recall_core.memory.text.lexical import (
    affordable_words,
    linear_fusion,
    owner_token,
    query_words,
)
from recall_core.types import RecallQuery

os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture
def store(tmp_path: Path):
    with MemoryStore.local(tmp_path / "mem", encoder=HashEncoder(64)) as s:
        yield s


# -- memory text ------------------------------------------------------------------------------


def test_day_label() -> None:
    assert day_label("2023-05-08T13:56:00+00:00") == "8 May 2023"
    assert day_label("1:56 pm on 8 May, 2023") == "8 May, 2023"
    assert day_label("last spring") == "last spring"


def test_search_text_has_date_speaker_and_the_turn_before(store: MemoryStore) -> None:
    writer = MemoryWriter(store)
    # One call per turn: the turn before comes from the journal, not from the batch.
    writer.add_turn("u", "user", "Do you have pets?", session_id="s1", timestamp="2024-03-02T10:00:00")
    writer.add_turn("u", "assistant", "Yes, a beagle called Biscuit.", session_id="s1", timestamp="2024-03-02T10:01:00")
    writer.add_turn("u", "user", "I moved to Porto.", session_id="s2", timestamp="2024-04-09T09:00:00",
                    metadata={"speaker": "Ana"})  # fmt: skip
    searched = [r.search_text for r in store.journal.rows("u")]
    assert searched == [
        "[2 March 2024] User: Do you have pets?",
        "[2 March 2024] User: Do you have pets?\nAssistant: Yes, a beagle called Biscuit.",
        "[9 April 2024] Ana: I moved to Porto.",  # another session: no window; the speaker from metadata
    ]
    # What a memory holds: the turn's own words.
    assert [r.text for r in store.for_user("u").all()] == [
        "Do you have pets?", "Yes, a beagle called Biscuit.", "I moved to Porto.",
    ]  # fmt: skip
    found = store.for_user("u").search("When did I talk about my beagle Biscuit?", k=1, unit="turn")[0]
    assert found.text == "Yes, a beagle called Biscuit."


def test_a_found_memory_holds_its_unit(store: MemoryStore) -> None:
    """A fact a user states and an assistant acknowledges is held by the exchange, whichever turn is found."""
    writer = MemoryWriter(store)
    for role, text in [("user", "Any tips for sleeping?"), ("assistant", "Keep a regular schedule."),
                       ("user", "I am allergic to shellfish."), ("assistant", "Noted!")]:  # fmt: skip
        writer.add_turn("u", role, text, session_id="s1", timestamp="2024-03-02T10:00:00")
    ids = [r.id for r in store.journal.rows("u")]
    memory = store.for_user("u")
    assert store.unit == "answered"  # the default
    by_unit = {}
    for unit in ("turn", "window", "exchange", "answered"):
        found = {c.id: c for c in memory.search("allergic shellfish", k=4, unit=unit)}
        by_unit[unit] = found
    fact, ack = ids[2], ids[3]
    assert by_unit["turn"][ack].text == "Noted!" and "covers" not in by_unit["turn"][ack].metadata
    assert by_unit["exchange"][ack].text == by_unit["exchange"][fact].text == (
        "User: I am allergic to shellfish.\nAssistant: Noted!"
    )
    assert by_unit["exchange"][ack].metadata["covers"] == f"{fact},{ack}"
    # "answered": the acknowledgement comes with the fact it acknowledges; the fact stands alone
    # (the turn before it does not ask); a reply to a question comes after the question.
    assert by_unit["answered"][ack].text == "User: I am allergic to shellfish.\nAssistant: Noted!"
    assert by_unit["answered"][fact].text == "I am allergic to shellfish."
    assert by_unit["answered"][ids[1]].text == "User: Any tips for sleeping?\nAssistant: Keep a regular schedule."
    assert by_unit["window"][fact].text == "Assistant: Keep a regular schedule.\nUser: I am allergic to shellfish."
    assert by_unit["window"][fact].metadata["covers"] == f"{ids[1]},{fact}"
    # The first turn of a session has no turn before it; a reply has no reply after it.
    assert by_unit["window"][ids[0]].text == "Any tips for sleeping?"
    with pytest.raises(ValueError, match="unit must be one of"):
        memory.search("x", unit="sentence")
    # A keyed memory is a note: it stays as it is.
    key_id = memory.put("diet", "Vegetarian since 2020.")
    assert next(c for c in memory.search("vegetarian diet", k=6) if c.id == key_id).text == "Vegetarian since 2020."


def test_batch_and_single_writes_give_the_same_text(tmp_path: Path) -> None:
    turns = [{"user_id": "u", "role": r, "content": c, "session_id": "s", "timestamp": "2024-01-05T08:00:00"}
             for r, c in [("user", "hi"), ("assistant", "hello there"), ("user", "my cat is Tom")]]  # fmt: skip
    with MemoryStore.local(tmp_path / "a", encoder=HashEncoder(16)) as a, MemoryStore.local(
        tmp_path / "b", encoder=HashEncoder(16)
    ) as b:
        MemoryWriter(a).add_turns(turns)
        for turn in turns:
            MemoryWriter(b).add_turns([turn])
        assert [r.search_text for r in a.journal.rows("u")] == [r.search_text for r in b.journal.rows("u")]


def test_window_keeps_the_end_of_a_long_turn_before(store: MemoryStore) -> None:
    writer = MemoryWriter(store, dated=False, window="always")
    long_turn = " ".join(f"w{i}" for i in range(100))
    writer.add_turn("u", "user", long_turn, session_id="s")
    writer.add_turn("u", "assistant", "ok", session_id="s")
    last = list(store.journal.rows("u"))[-1].search_text
    before, _, own = last.partition("\n")
    assert own == "Assistant: ok"
    assert before == "User: ... " + " ".join(f"w{i}" for i in range(100 - WINDOW_WORDS, 100))


def test_only_the_first_chunk_carries_the_window(tmp_path: Path) -> None:
    with MemoryStore.local(tmp_path / "m", encoder=HashEncoder(16)) as store:
        writer = MemoryWriter(store, chunk_tokens=16, dated=False)
        writer.add_turn("u", "user", "first question?", session_id="s")
        ids = writer.add_turn("u", "assistant", ". ".join(f"sentence number {i} is here" for i in range(12)), session_id="s")
        assert len(ids) > 1
        texts = [row.search_text for row in store.journal.get_many(ids)]
        assert texts[0].startswith("User: first question?\nAssistant: ")
        assert all(t.startswith("Assistant: ") for t in texts[1:])


# -- lexical index ----------------------------------------------------------------------------


def test_query_words_drop_function_words_and_fts_syntax_is_never_an_operator(store: MemoryStore) -> None:
    assert query_words('What did "Caroline" do?') == ["caroline"]
    assert query_words("what is it?") == []  # only function words
    assert query_words('NEAR(zebra* -lion) "x') == ["near", "zebra", "lion"]
    [zebra] = MemoryWriter(store, dated=False, speakers=False, window=False).add_turn("u", "user", "a zebra crossing")
    # The words are looked up one by one as terms: FTS5's query syntax in them does nothing.
    assert [m for m, _ in store.journal.search_text("u", 'NEAR(zebra* -lion) "x', 5)] == [zebra]
    assert store.journal.search_text("u", 'AND OR NOT "" *', 5) == []


def test_a_decomposed_query_finds_what_its_composed_spelling_finds(store: MemoryStore) -> None:
    """"Ñandú" typed decomposed (a letter, then its combining mark, as macOS file names and some
    keyboards give it) split into "N" and "andu" and found nothing (until 2026-12-07: a reviewer)."""
    import unicodedata

    writer = MemoryWriter(store, dated=False, speakers=False, window=False)
    [bird] = writer.add_turn("u", "user", "we saw a Ñandú at the zoo")
    writer.add_turns([{"user_id": "u", "role": "user", "content": f"filler note {i}"} for i in range(10)])
    decomposed = unicodedata.normalize("NFD", "Ñandú")
    assert decomposed != "Ñandú" and query_words(decomposed) == query_words("Ñandú") == ["ñandú"]
    assert [m for m, _ in store.journal.search_text("u", decomposed, 5)] == [bird]


def test_owner_token_matches_sqlite_hex() -> None:
    db = sqlite3.connect(":memory:")
    for user in ["alice", "ünïcode ✓", "a b"]:
        assert db.execute("SELECT 'u' || hex(?)", (user,)).fetchone()[0] == owner_token(user)


def test_linear_fusion() -> None:
    fused = linear_fusion({"a": 0.5, "b": 0.3, "c": 0.1}, {"b": 4.0, "c": 2.0})
    assert fused == [("b", pytest.approx(1.3)), ("c", pytest.approx(0.6)), ("a", pytest.approx(0.5))]
    assert linear_fusion({"a": 0.5}, {}) == [("a", 0.5)]
    # Scaled by the query's weight where it is above the best score (a partial match), by the
    # best score where it is not.
    partial = linear_fusion({"a": 0.5, "b": 0.3, "c": 0.1}, {"b": 4.0, "c": 2.0}, query_weight=8.0)
    assert partial == [("b", pytest.approx(0.8)), ("a", pytest.approx(0.5)), ("c", pytest.approx(0.35))]
    assert linear_fusion({"a": 0.5, "b": 0.3, "c": 0.1}, {"b": 4.0, "c": 2.0}, query_weight=3.0) == fused


def test_word_index_follows_update_delete_and_forget(store: MemoryStore) -> None:
    writer = MemoryWriter(store, dated=False, speakers=False, window=False)
    [kept] = writer.add_turn("u", "user", "zebra crossing near the school")
    [changed] = writer.add_turn("u", "user", "zebra in the zoo")
    [other] = writer.add_turn("v", "user", "zebra stripes")

    def found(user: str, text: str) -> set[str]:
        return {memory_id for memory_id, _ in store.journal.search_text(user, text, 10)}

    assert found("u", "zebra") == {kept, changed} and found("v", "zebra") == {other}
    writer.update("u", changed, "giraffe in the zoo")
    assert found("u", "zebra") == {kept} and found("u", "giraffe") == {changed}
    writer.delete("u", kept)
    assert found("u", "zebra") == set()
    writer.forget("u")
    assert found("u", "giraffe") == set() and found("v", "zebra") == {other}


def test_version_1_journal_gets_its_word_index(tmp_path: Path) -> None:
    with MemoryStore.local(tmp_path / "m", encoder=HashEncoder(16)) as store:
        [memory_id] = MemoryWriter(store).add_turn("u", "user", "pelicans fly over the harbour")
    # Make it the version-1 layout: no word index, no content column.
    db = sqlite3.connect(tmp_path / "m" / "journal.sqlite3")
    db.executescript(
        "DROP TABLE memories_fts; DROP TRIGGER memories_fts_insert; DROP TRIGGER memories_fts_delete; "
        "DROP TRIGGER memories_fts_update; ALTER TABLE memories DROP COLUMN context; PRAGMA user_version=1;"
    )
    db.close()
    journal = Journal(tmp_path / "m" / "journal.sqlite3")
    assert journal.search_text("u", "pelicans", 5)[0][0] == memory_id
    assert journal.get(memory_id).context is None
    journal.close()


# -- hybrid search ----------------------------------------------------------------------------


def test_hybrid_finds_a_rare_name_that_the_vector_ranks_low(store: MemoryStore) -> None:
    """The hash encoder weighs every word alike; BM25 weighs the rare name far above "go"."""
    writer = MemoryWriter(store, dated=False, speakers=False, window=False)
    fillers = [f"where did you go to the party number {i}" for i in range(30)]
    writer.add_turns([{"user_id": "u", "role": "user", "content": t} for t in [*fillers, "Zorblax went home early"]])
    memory = store.for_user("u")
    query = RecallQuery("where did Zorblax go")
    by_vector = memory.search(query, k=3, retrieval="vector")
    assert "Zorblax went home early" not in [c.text for c in by_vector]
    best = memory.search(query, k=3)[0]  # the store's default: hybrid
    assert best.text == "Zorblax went home early"
    assert best.score == pytest.approx(min(c.score for c in memory.search(query, k=31, retrieval="vector")
                                           if c.text == best.text))  # score stays the cosine  # fmt: skip


def test_hybrid_respects_where(store: MemoryStore) -> None:
    writer = MemoryWriter(store, dated=False, speakers=False, window=False)
    writer.add_turn("u", "user", "Zorblax went home", session_id="a")
    writer.add_turn("u", "user", "the weather was nice", session_id="b")
    found = store.for_user("u").search("where is Zorblax", k=5, where={"session_id": "b"})
    assert [c.text for c in found] == ["the weather was nice"]


def test_hybrid_under_where_keeps_the_word_credit_of_a_memory_inside_the_filter(tmp_path: Path) -> None:
    """BM25's list, cut at 50 before the filter, held only memories outside it: the one inside the
    filter that names the zebra lost its word credit, and fillers came first (until 2026-12-07: a reviewer).
    Each text's vector is random here, so only the words can find it."""
    import zlib

    import numpy as np

    class Unrelated(HashEncoder):  # a vector per text, unrelated to its words
        def encode(self, texts, batch_size=64):
            out = np.stack([np.random.default_rng(zlib.crc32(t.encode())).normal(size=self.dimension) for t in texts])
            return (out / np.linalg.norm(out, axis=1, keepdims=True)).astype(np.float32)

    # longer than every zebra crossing: BM25 ranks it after the 80 of them
    zoo = "yesterday afternoon my sister and I walked all around the big city zoo and saw one zebra"
    turns = [{"user_id": "u", "role": "user", "content": f"the zebra crossing number {i} near the market",
              "metadata": {"topic": "roads"}} for i in range(80)]  # fmt: skip
    turns += [{"user_id": "u", "role": "user", "content": f"filler note {i} about the weather",
               "metadata": {"topic": "misc"}} for i in range(40)]  # fmt: skip
    turns.append({"user_id": "u", "role": "user", "content": zoo, "metadata": {"topic": "zoo"}})
    with MemoryStore.local(tmp_path / "mem", encoder=Unrelated(64, name="unrelated")) as store:
        store.writer.add_turns(turns)
        for where in ({"topic": {"$in": ["zoo", "misc"]}}, {"topic": {"$ne": "roads"}}):
            found = store.for_user("u").search("zebra", k=3, where=where, retrieval="hybrid")
            assert found[0].text == zoo
            assert all(c.metadata["topic"] != "roads" for c in found)


@pytest.mark.parametrize("retrieval", ["hybrid", "vector", "lexical"])
def test_a_roles_filter_finds_the_user_s_turn_among_many_better_ranked_replies(store: MemoryStore, retrieval: str) -> None:
    """Until 2026-12-06 only 3k candidates were ranked before the speakers' filter: ten assistant
    replies about tea hid the user's one turn about it, and the search returned nothing."""
    writer = MemoryWriter(store, dated=False, speakers=False, window=False)
    writer.add_turns([{"user_id": "u", "role": "assistant", "content": f"tea tea tea reply {i}"} for i in range(10)])
    writer.add_turn("u", "user", "I sometimes drink tea in the garden")
    for k in (1, 2, 3):
        found = store.for_user("u").search("tea", k=k, retrieval=retrieval, roles=("user",))
        assert [c.text for c in found] == ["I sometimes drink tea in the garden"]


def test_a_lexical_search_with_where_filters_before_it_cuts_to_k(store: MemoryStore) -> None:
    """Until 2026-12-06 BM25's list was cut to k before ``where``: better word matches outside the
    filter left nothing."""
    writer = MemoryWriter(store, dated=False, speakers=False, window=False)
    writer.add_turns([{"user_id": "u", "role": "user", "content": f"green tea green tea {i}", "session_id": "a"}
                      for i in range(60)])  # fmt: skip
    writer.add_turns([{"user_id": "u", "role": "user", "content": f"a note on tea {i}", "session_id": "b"} for i in range(2)])
    found = store.for_user("u").search("green tea", k=2, retrieval="lexical", where={"session_id": "b"})
    assert sorted(c.text for c in found) == ["a note on tea 0", "a note on tea 1"]


def test_retrieval_is_checked(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="retrieval must be one of 'hybrid', 'vector'"):
        MemoryStore.local(tmp_path / "m", retrieval="bm25")
    with MemoryStore.local(tmp_path / "m", encoder=HashEncoder(8)) as store:
        assert store.retrieval == "hybrid"
        with pytest.raises(ValueError, match="retrieval must be one of"):
            store.for_user("u").search("x", retrieval="words")


def test_common_words_are_left_out_rarest_first(tmp_path: Path) -> None:
    journal_path = tmp_path / "m"
    with MemoryStore.local(journal_path, encoder=HashEncoder(16)) as store:
        writer = MemoryWriter(store, dated=False, speakers=False, window=False)
        # "walked" in 30 memories, "parks" in 10, "zorblax" in 1 (stems: walk, park, zorblax)
        writer.add_turns([{"user_id": "u", "role": "user", "content": f"walked note {i}"} for i in range(20)])
        writer.add_turns([{"user_id": "u", "role": "user", "content": f"walked to parks {i}"} for i in range(10)])
        [rare] = writer.add_turn("u", "user", "zorblax")
        db = store.journal._db
        words = ["walking", "zorblax", "park", "nowhere"]
        assert affordable_words(db, words, budget=100) == ["walking", "zorblax", "park"]  # "nowhere": no memory
        assert affordable_words(db, words, budget=11) == ["zorblax", "park"]
        assert affordable_words(db, words, budget=1) == ["zorblax"]
        assert affordable_words(db, words, budget=0) == []
        assert [i for i, _ in store.journal.search_text("u", "walking zorblax", 5)][0] == rare


@pytest.mark.parametrize(
    ("window", "searched_with_question", "searched_with_statement"),
    [("questions", True, False), ("always", True, True), ("never", False, False), (True, True, True), (False, False, False)],
)
def test_window_says_when_the_turn_before_is_searched_too(store: MemoryStore, window, searched_with_question, searched_with_statement) -> None:
    """By default a turn is searched with the one before only when that one asks something:
    "Yes, Biscuit." is found by its question, and a fact is not diluted by an unrelated turn before it."""
    writer = MemoryWriter(store, dated=False, window=window)
    writer.add_turn("u", "user", "Do you have a dog?", session_id="s")
    writer.add_turn("u", "assistant", "Yes, Biscuit.", session_id="s")
    writer.add_turn("u", "user", "I work at the lighthouse.", session_id="s")
    rows = list(store.journal.rows("u"))
    assert rows[1].search_text.startswith("User: Do you have a dog?\n") is searched_with_question
    assert rows[2].search_text.startswith("Assistant: Yes, Biscuit.\n") is searched_with_statement
    assert writer.window == {True: "always", False: "never"}.get(window, window)


@pytest.mark.parametrize("question", ["Do you have a dog? \U0001f436", "Do you have a dog\uff1f", "(do you have a dog?)",
                                      "Do you have a dog?!", "Do you have a dog\u061f"])  # fmt: skip
def test_a_question_closed_by_an_emoji_a_bracket_or_another_script_s_mark_still_asks(store: MemoryStore, question) -> None:
    """The reply to such a question is searched with it, and the "answered" unit holds both (until
    2026-12-07 both asked ``endswith("?")``: the reply was searched and injected alone)."""
    writer = MemoryWriter(store, dated=False)
    writer.add_turn("u", "assistant", question, session_id="s")
    writer.add_turn("u", "user", "Yes, a beagle called Biscuit.", session_id="s")
    answer = list(store.journal.rows("u"))[1]
    assert answer.search_text.startswith(f"Assistant: {question}\n")
    found = {c.id: c for c in store.for_user("u").search("beagle Biscuit", k=2)}
    assert found[answer.id].text == f"Assistant: {question}\nUser: Yes, a beagle called Biscuit."


def test_window_must_be_one_of_its_modes(store: MemoryStore) -> None:
    with pytest.raises(ValueError, match="window"):
        MemoryWriter(store, window="sometimes")

"""Bad input is refused before anything is written; long turns are chunked, never dropped."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from recall_core.memory import EncoderMismatchError, HashEncoder, MemoryStore, MemoryWriter
from recall_core.memory.text.chunking import chunk_text
from recall_core.types import RecallQuery
from tests.helpers.memories import RAW_TEXT

os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture
def store(tmp_path: Path):
    with MemoryStore.local(tmp_path / "mem", encoder=HashEncoder(32)) as s:
        yield s


def assert_nothing_written(store: MemoryStore, user: str = "u") -> None:
    assert store.journal.count() == 0
    assert store.for_user(user).count() == 0


@pytest.mark.parametrize(
    ("role", "content", "message"),
    [
        ("user", "", "empty"),
        ("user", "   \n\t ", "empty"),
        ("robot", "hello", "role must be one of"),
        ("User", "hello", "role must be one of"),
        ("user", b"caf\xe9 au lait", "not valid UTF-8 .*0xe9"),
        ("user", "bad \udce9 surrogate", "not valid UTF-8"),
        ("user", 42, "must be text"),
        ("user", "nul\x00byte", "NUL"),
    ],
)
def test_bad_turns_raise_and_write_nothing(store: MemoryStore, role, content, message) -> None:
    with pytest.raises(ValueError, match=message):
        MemoryWriter(store, **RAW_TEXT).add_turn("u", role, content)
    assert_nothing_written(store)


def test_one_bad_turn_in_a_batch_writes_none(store: MemoryStore) -> None:
    turns = [{"user_id": "u", "role": "user", "content": "fine"}, {"user_id": "u", "role": "user", "content": " "}]
    with pytest.raises(ValueError, match="turn 1"):
        MemoryWriter(store, **RAW_TEXT).add_turns(turns)
    assert_nothing_written(store)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"metadata": {"user_id": "mallory"}}, "reserved"),
        ({"metadata": {"nested": {"a": 1}}}, "must be str, int, float or bool"),
        ({"session_id": "  "}, "session_id"),
        ({"turn_index": -1}, "turn_index"),
        ({"timestamp": object()}, "timestamp"),
    ],
)
def test_bad_fields_raise(store: MemoryStore, kwargs, message) -> None:
    with pytest.raises(ValueError, match=message):
        MemoryWriter(store, **RAW_TEXT).add_turn("u", "user", "hello", **kwargs)
    assert_nothing_written(store)


@pytest.mark.parametrize("user", ["", "  ", None, b"\xff"])
def test_bad_user_ids(store: MemoryStore, user) -> None:
    with pytest.raises(ValueError, match="user_id"):
        store.for_user(user)


def test_non_utf8_bytes_are_decoded_when_valid(store: MemoryStore) -> None:
    ids = MemoryWriter(store, **RAW_TEXT).add_turn("u", "user", "café au lait".encode())
    assert store.for_user("u").get(ids[0]).text == "café au lait"


def test_huge_turn_is_chunked_not_dropped(store: MemoryStore) -> None:
    words = [f"w{i}" for i in range(20_000)]
    text = ". ".join(" ".join(words[i : i + 37]) for i in range(0, len(words), 37)) + "."
    ids = MemoryWriter(store, **RAW_TEXT, chunk_tokens=64).add_turn("u", "user", text)
    records = store.for_user("u").all()
    assert len(records) == len(ids) > 20_000 // 64
    assert [r.chunk_index for r in records] == list(range(len(ids)))
    assert all(r.n_chunks == len(ids) and r.turn_index == 0 for r in records)
    joined = " ".join(r.text for r in records)
    assert joined.replace(".", "").split() == text.replace(".", "").split()  # every word kept, in order
    encoder = store.encoder
    assert max(encoder.count_tokens(r.text) for r in records) <= 64


def test_chunking_of_one_enormous_word() -> None:
    word = "x" * 1000
    chunks = chunk_text(f"start {word} end", 100, lambda t: len(t.split()) + len(t) // 10)
    assert "".join(chunks).replace(" ", "") == f"start{word}end"


def test_a_long_unbroken_string_is_chunked_by_characters(store: MemoryStore) -> None:
    """A tokenizer can count a long run without spaces as one token (WordPiece makes one
    [UNK] of any word over 100 characters); it used to become a single memory of any size."""
    blob = "".join(f"{i:x}" for i in range(40_000))  # ~150k characters, no space, one "word"
    assert store.encoder.count_tokens(blob) == 1  # what the tokenizer says
    ids = MemoryWriter(store, **RAW_TEXT).add_turn("u", "user", blob)
    records = store.for_user("u").all()
    assert len(ids) == len(records) > 100
    assert max(len(r.text) for r in records) <= 128 * 8  # chunk_tokens x CHARS_PER_TOKEN
    assert "".join(r.text for r in records) == blob  # nothing dropped, in order


def test_chunk_text_bounds_characters_whatever_the_count() -> None:
    text = "word " * 50 + "x" * 5000 + " end."
    chunks = chunk_text(text, 16, lambda t: 1, max_chars=200)  # a tokenizer that says 1 for anything
    assert max(map(len, chunks)) <= 200
    assert "".join(chunks).replace(" ", "") == text.replace(" ", "")
    assert chunk_text("short text", 16, lambda t: 1, max_chars=200) == ["short text"]


def test_a_cjk_paragraph_is_chunked_at_its_sentences() -> None:
    """CJK text writes no space after 。！？: until 2026-12-07 a Chinese paragraph was one sentence,
    cut between characters in the middle of a fact ("我丈夫" | "是医生", a reviewer)."""
    text = "我女儿叫小美，今年七岁，在附近的小学读一年级。" * 3 + "我丈夫是医生，在瑞金医院工作。" + "我们周末常去公园。" * 4
    chunks = chunk_text(text, 40, len)
    assert "".join(chunks) == text and all(chunk.endswith("。") for chunk in chunks)
    assert any("我丈夫是医生，在瑞金医院工作。" in chunk for chunk in chunks)


def test_rewriting_a_turn_does_not_duplicate(store: MemoryStore) -> None:
    writer = MemoryWriter(store, **RAW_TEXT)
    first = writer.add_turn("u", "user", "I like green tea.", session_id="s")
    again = writer.add_turn("u", "user", "I like green tea.", session_id="s")
    assert first == again and store.for_user("u").count() == 1
    positional = writer.add_turn("u", "user", "ok", session_id="s", turn_index=7)
    assert writer.add_turn("u", "user", "ok", session_id="s", turn_index=7) == positional
    assert writer.add_turn("u", "user", "ok", session_id="s", turn_index=8) != positional
    assert store.for_user("u").count() == 3
    # A deleted turn written again comes back.
    store.for_user("u").delete(first)
    assert writer.add_turn("u", "user", "I like green tea.", session_id="s") == first
    assert store.for_user("u").count() == 3


def test_turn_indices_follow_the_session(store: MemoryStore) -> None:
    writer = MemoryWriter(store, **RAW_TEXT)
    writer.add_turns([{"user_id": "u", "role": "user", "content": f"turn {i}", "session_id": "a"} for i in range(3)])
    writer.add_turn("u", "assistant", "first of b", session_id="b")
    writer.add_turn("u", "user", "turn 3", session_id="a")
    got = sorted((r.session_id, r.turn_index, r.text) for r in store.for_user("u").all())
    assert got == [("a", 0, "turn 0"), ("a", 1, "turn 1"), ("a", 2, "turn 2"), ("a", 3, "turn 3"), ("b", 0, "first of b")]


def test_dimension_mismatch_names_both_dimensions(tmp_path: Path) -> None:
    with MemoryStore.local(tmp_path, encoder=HashEncoder(32)) as store:
        MemoryWriter(store, **RAW_TEXT).add_turn("u", "user", "hello world")
    with MemoryStore.local(tmp_path, encoder=HashEncoder(16)) as store:
        with pytest.raises(EncoderMismatchError, match=r"32 dimensions.*16 dimensions"):
            store.for_user("u").search(RecallQuery("hello"), 3)
        with pytest.raises(EncoderMismatchError, match=r"32 dimensions.*16 dimensions"):
            MemoryWriter(store, **RAW_TEXT).add_turn("u", "user", "another")
        assert isinstance(EncoderMismatchError("x"), ValueError)


def test_writer_encoder_must_match_the_store(tmp_path: Path) -> None:
    with MemoryStore.local(tmp_path, encoder=HashEncoder(32)) as store:
        with pytest.raises(ValueError, match="already uses the encoder"):
            MemoryWriter(store, **RAW_TEXT, encoder=HashEncoder(16))
    with MemoryStore.local(tmp_path) as store:  # no encoder yet: the writer's becomes the store's
        MemoryWriter(store, **RAW_TEXT, encoder=HashEncoder(32))
        assert store.encoder.dimension == 32


def test_search_arguments(store: MemoryStore) -> None:
    MemoryWriter(store, **RAW_TEXT).add_turn("u", "user", "hello world")
    memory = store.for_user("u")
    assert memory.search(RecallQuery("   "), 3) == []
    assert store.for_user("nobody").search(RecallQuery("hello"), 3) == []
    for k in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="k must be"):
            memory.search(RecallQuery("hello"), k)
    with pytest.raises(ValueError, match="a 'hidden' query needs query.vector.*recall train-head"):
        memory.search(RecallQuery("hello", mode="hidden"), 3)
    space = store.encoder.name
    with pytest.raises(ValueError, match="finite"):
        memory.search(RecallQuery("", mode="hidden", vector=[float("nan")] * 32, vector_space=space), 3)
    with pytest.raises(KeyError):
        memory.update("no-such-id", "text")
    assert memory.delete("no-such-id") == 0
    scores = [c.score for c in memory.search("hello world", 1)]
    assert scores == [pytest.approx(1.0, abs=1e-5)]


# -- ingest -------------------------------------------------------------------------------


def test_ingest_jsonl(store: MemoryStore, tmp_path: Path) -> None:
    path = tmp_path / "turns.jsonl"
    lines = [
        {"role": "user", "content": "I moved to Lisbon in May.", "session_id": "s1", "timestamp": "2024-05-02T10:00:00"},
        {"role": "assistant", "content": "Lisbon in May, noted.", "session_id": "s1"},
        {"user_id": "u", "role": "user", "text": "My cat is Miso.", "metadata": {"mood": "happy"}},
    ]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n\n")
    report = MemoryWriter(store, **RAW_TEXT).ingest(path, user_id="u", progress=False)
    assert (report.format, report.turns, report.memories, report.users) == ("jsonl", 3, 3, ["u"])
    records = {r.text: r for r in store.for_user("u").all()}
    assert records["I moved to Lisbon in May."].timestamp == "2024-05-02T10:00:00"
    assert records["My cat is Miso."].metadata == {"mood": "happy"}
    again = MemoryWriter(store, **RAW_TEXT).ingest(path, user_id="u", progress=False)
    assert again.memories == 3 and store.for_user("u").count() == 3  # no duplicates


def test_ingest_rejects_bad_lines_with_their_number(store: MemoryStore, tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(
        b'{"role": "user", "content": "fine"}\n'
        b'{"role": "user", "content": "caf\xe9"}\n'
        b'{"role": "wizard", "content": "x"}\n'
        b"not json\n"
    )
    with pytest.raises(ValueError, match="line 2: not valid UTF-8"):
        MemoryWriter(store, **RAW_TEXT).ingest(path, user_id="u", progress=False)
    assert_nothing_written(store)
    report = MemoryWriter(store, **RAW_TEXT).ingest(path, user_id="u", progress=False, skip_invalid=True)
    assert report.turns == 1 and len(report.skipped) == 3
    assert sorted(s.split(":")[0] for s in report.skipped) == ["line 2", "line 3", "line 4"]


def test_ingest_refuses_other_users_lines(store: MemoryStore, tmp_path: Path) -> None:
    path = tmp_path / "mixed.jsonl"
    path.write_text(json.dumps({"user_id": "mallory", "role": "user", "content": "x"}) + "\n")
    with pytest.raises(ValueError, match="belongs to user 'mallory'"):
        MemoryWriter(store, **RAW_TEXT).ingest(path, user_id="u", progress=False)
    path.write_text(json.dumps({"role": "user", "content": "x"}) + "\n")
    with pytest.raises(ValueError, match="no user_id"):
        MemoryWriter(store, **RAW_TEXT).ingest(path, progress=False)


def locomo_sample(sample_id: str) -> dict:
    return {
        "sample_id": sample_id,
        "conversation": {
            "speaker_a": "Caroline",
            "speaker_b": "Melanie",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Caroline", "dia_id": "D1:1", "text": "I went to a support group yesterday."},
                {"speaker": "Melanie", "dia_id": "D1:2", "text": "That sounds great!", "blip_caption": "a photo of a cake"},
            ],
            "session_2_date_time": "1:14 pm on 25 May, 2023",
            "session_2": [{"speaker": "Caroline", "dia_id": "D2:1", "text": "I am researching adoption agencies."}],
        },
        "qa": [],
    }


def test_ingest_locomo(store: MemoryStore, tmp_path: Path) -> None:
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([locomo_sample("conv-1"), locomo_sample("conv-2")]))
    report = MemoryWriter(store, window="always").ingest(path, progress=False)  # dated, windowed, with speakers
    assert (report.format, report.turns, report.users) == ("locomo", 6, ["conv-1", "conv-2"])
    records = store.for_user("conv-1").all()
    assert [r.text for r in records] == [
        "Caroline: I went to a support group yesterday.",
        "Melanie: That sounds great! [shares an image: a photo of a cake]",
        "Caroline: I am researching adoption agencies.",
    ]
    # What is searched: the day, and the turn before in the same session (the speaker is not doubled).
    assert [r.search_text for r in store.journal.rows("conv-1")] == [
        "[8 May, 2023] Caroline: I went to a support group yesterday.",
        "[8 May, 2023] Caroline: I went to a support group yesterday.\n"
        "Melanie: That sounds great! [shares an image: a photo of a cake]",
        "[25 May, 2023] Caroline: I am researching adoption agencies.",  # a new session: no window
    ]
    assert [(r.role, r.session_id, r.turn_index) for r in records] == [
        ("user", "session_1", 0), ("assistant", "session_1", 1), ("user", "session_2", 0),
    ]  # fmt: skip
    assert records[0].metadata == {
        "speaker": "Caroline", "dia_id": "D1:1", "session_date": "1:56 pm on 8 May, 2023", "sample_id": "conv-1",
    }  # fmt: skip
    assert records[2].timestamp == "1:14 pm on 25 May, 2023"
    with pytest.raises(ValueError, match="2 conversations"):
        MemoryWriter(store, **RAW_TEXT).ingest(path, user_id="someone", progress=False)
    MemoryWriter(store, **RAW_TEXT).ingest(path, progress=False)
    assert store.for_user("conv-2").count() == 3  # re-ingest: positional ids, no duplicates


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"encoder": 5}, r"encoder must be None, a sentence-transformers model name or path, or an Encoder object "
                         r"\(with encode, dimension, name\), got int"),
        ({"encoder": object()}, "encoder must be None"),
        ({"path": "a\x00b"}, r"path contains a NUL character \(position 1\)"),
        ({"path": 5}, r"path must be a path \(str or os.PathLike\) or None, got int"),
        ({"path": ""}, r"path must not be empty \(None for the default\)"),  # the current folder, until 2026-12-07
        ({"encoder": " "}, r"encoder must not be empty \(None for the default\)"),  # a traceback, until 2026-12-07
    ],
)  # fmt: skip
def test_a_store_refuses_an_encoder_or_path_it_cannot_use_when_it_opens(tmp_path: Path, kwargs, message) -> None:
    """``encoder=5`` opened, and the first ``add`` raised an AttributeError; a path with NUL gave the
    OS's "embedded null byte", which does not say which argument."""
    settings = {"path": tmp_path / "mem", "encoder": HashEncoder(8), **kwargs}
    with pytest.raises(ValueError, match=message):
        MemoryStore.local(**settings)
    with pytest.raises(ValueError, match=message):
        MemoryStore.local(**settings, read_only=True)
    assert list(tmp_path.iterdir()) == []  # nothing created, no lock left
    if "encoder" in kwargs:
        with pytest.raises(ValueError, match=message):
            MemoryStore.server(journal_path=tmp_path / "j.sqlite3", encoder=kwargs["encoder"])
        with pytest.raises(ValueError, match=r"journal_path contains a NUL character"):
            MemoryStore.server(journal_path=str(tmp_path / "j\x00.sqlite3"), encoder=HashEncoder(8))
        assert list(tmp_path.iterdir()) == []


def test_opening_checks_an_encoder_object_without_computing_its_dimension(tmp_path: Path) -> None:
    """A sentence-transformers encoder loads its model to know its ``dimension``: the check made at
    opening must not ask for it (the model loads when something is first embedded)."""
    asked: list[str] = []

    class Lazy(HashEncoder):
        @property
        def dimension(self) -> int:
            asked.append("dimension")
            return super().dimension

    class Wrapped:  # an encoder that hands on what it is asked for
        def __init__(self) -> None:
            self.inner = HashEncoder(8)

        def __getattr__(self, name: str):
            return getattr(self.inner, name)

    with MemoryStore.local(tmp_path / "a", encoder=Lazy(8)) as store:
        assert asked == []
        store.for_user("u").add("hello")
        assert asked
    with MemoryStore.local(tmp_path / "b", encoder=Wrapped()) as store:
        assert store.for_user("u").add("hello")


class _TokenizingEncoder(HashEncoder):
    """Refuses what a real tokenizer refuses: text that is not UTF-8 (a lone surrogate)."""

    def _vector(self, text: str):
        text.encode("utf-8")
        return super()._vector(text)


@pytest.mark.parametrize("retrieval", ["vector", "hybrid", "lexical"])
def test_a_query_with_a_lone_surrogate_is_searched(tmp_path: Path, retrieval: str) -> None:
    # Text decoded with errors="surrogateescape" (or a cut JSON escape) reached the encoder as it
    # was: MiniLM's tokenizer raised a bare TypeError, and the recall was skipped.
    with MemoryStore.local(tmp_path / "mem", encoder=_TokenizingEncoder(32), retrieval=retrieval) as store:
        MemoryWriter(store, **RAW_TEXT).add_turn("u", "user", "my cat is called Biscuit")
        found = store.for_user("u").search(RecallQuery("what is my cat called\udcff"), 1)
        assert [c.text for c in found] == ["my cat is called Biscuit"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"session_3": "I moved to Lisbon."}, r"conv-1: session_3 must be a list of turns, got str"),
        ({"session_3": ["I moved to Lisbon."]}, r"conv-1: session_3\[0\] must be a turn object, got str"),
        ({"session_3": [{"speaker": "Caroline", "text": 5}]}, r"conv-1: session_3\[0\].text must be text, got int"),
        ({"session_3": [{"speaker": ["Caroline"], "text": "Hi"}]}, r"session_3\[0\].speaker must be text, got list"),
        ({"session_3": [{"speaker": "Caroline", "dia_id": "D3:1", "text": " "}]}, r"conv-1 D3:1: content is empty"),
    ],
)  # fmt: skip
def test_ingest_refuses_a_locomo_session_or_turn_it_cannot_read(store: MemoryStore, tmp_path: Path, change,
                                                               message) -> None:  # fmt: skip
    """A session given as a string was left out with no word (the rest ingested, rc 0), ``"text": 5``
    was remembered as "5", and a turn with no words as "Caroline: " (until 2026-12-07)."""
    sample = locomo_sample("conv-1")
    sample["conversation"].update(change)
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([sample]))
    with pytest.raises(ValueError, match=message):
        MemoryWriter(store, **RAW_TEXT).ingest(path, progress=False)
    assert store.for_user("conv-1").count() == 0  # nothing was written


def test_ingest_compares_a_line_s_user_id_in_nfc_and_reads_files_with_a_byte_order_mark(store: MemoryStore,
                                                                                     tmp_path: Path) -> None:  # fmt: skip
    """A line naming "José" decomposed was "another user" for ingest(user_id="José"), and a file saved
    with a UTF-8 byte-order mark (Notepad, PowerShell 5) was refused, a LoCoMo one read as JSONL, and
    an export so saved refused by import (until 2026-12-07: a reviewer)."""
    import unicodedata

    nfd = unicodedata.normalize("NFD", "José")
    lines = tmp_path / "turns.jsonl"
    lines.write_bytes(b"\xef\xbb\xbf" + json.dumps({"user_id": nfd, "role": "user", "content": "I live in Porto."}).encode() + b"\n")
    assert MemoryWriter(store, **RAW_TEXT).ingest(lines, user_id="José", progress=False).users == ["José"]
    locomo = tmp_path / "locomo.json"
    locomo.write_bytes(b"\xef\xbb\xbf" + json.dumps([locomo_sample("conv-9")]).encode())
    assert MemoryWriter(store, **RAW_TEXT).ingest(locomo, progress=False).format == "locomo"
    exported = tmp_path / "export.jsonl"
    store.for_user("José").export_jsonl(exported)
    exported.write_bytes(b"\xef\xbb\xbf" + exported.read_bytes())
    with MemoryStore.local(tmp_path / "other", encoder=HashEncoder(32)) as other:
        other.import_memories(exported, progress=False)
        assert other.for_user("José").count() == 1


def test_a_search_refuses_query_text_that_is_not_text_and_takes_any_k(store: MemoryStore) -> None:
    """``RecallQuery(text=123)`` raised an AttributeError, and a vector search with k=2**32 Chroma's
    OverflowError (until 2026-12-07: a reviewer)."""
    from recall_core.types import RecallQuery

    store.for_user("u").add("I keep bees in the garden.")
    for text in (123, b"bees"):
        with pytest.raises(ValueError, match="query.text must be a string"):
            store.for_user("u").search(RecallQuery(text=text), 2)  # type: ignore[arg-type]
    for retrieval in ("vector", "hybrid", "lexical"):
        found = store.for_user("u").search("bees in the garden", 2**32, retrieval=retrieval)
        assert [c.text for c in found] == ["I keep bees in the garden."]


def test_list_gives_memories_written_in_one_call_in_the_order_they_were_written(store: MemoryStore) -> None:
    """They share one write time, and the sessions' names decided (alpha before zeta; until 2026-12-07)."""
    store.writer.add_turns([{"user_id": "u", "role": "user", "content": f"{name} note", "session_id": name}
                            for name in ("zeta", "alpha", "mid")])  # fmt: skip
    assert [r.text for r in store.for_user("u").list()] == ["zeta note", "alpha note", "mid note"]
    assert [r.text for r in store.for_user("u").all()] == ["zeta note", "alpha note", "mid note"]

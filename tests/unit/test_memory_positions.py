"""A given turn position holds one turn: written again there, a turn must be the same words in the same role.

Before, another text at a taken ``turn_index`` got the old ids back as if it had been written
(its words were lost), and a longer one mixed its chunks with the old turn's.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from recall_core.memory import HashEncoder, MemoryStore, MemoryWriter

TAKEN = "turn_index 0 of session 's1' \\(user 'ada'\\) already holds another user turn"


@pytest.fixture
def store(tmp_path: Path):
    with MemoryStore.local(tmp_path / "mem", encoder=HashEncoder(32)) as store:
        yield store


def texts(store: MemoryStore, user_id: str = "ada") -> list[tuple[int, int, str]]:
    return sorted((r.turn_index, r.chunk_index, r.text) for r in store.for_user(user_id).all())


def test_the_same_turn_again_is_written_once(store):
    memory = store.for_user("ada")
    first = memory.add("My dog is called Biscuit.", session_id="s1", turn_index=0)
    assert memory.add("My dog is called   Biscuit.", session_id="s1", turn_index=0) == first  # spacing aside
    assert texts(store) == [(0, 0, "My dog is called Biscuit.")]


def test_another_text_at_a_taken_position_is_refused_and_nothing_is_written(store):
    memory = store.for_user("ada")
    memory.add("My dog is called Biscuit.", session_id="s1", turn_index=0)
    batch = [
        {"user_id": "ada", "role": "user", "content": "A new turn.", "session_id": "s1", "turn_index": 1},
        {"user_id": "ada", "role": "user", "content": "I moved to Porto.", "session_id": "s1", "turn_index": 0},
    ]
    with pytest.raises(ValueError, match=TAKEN + ".*nothing was written"):
        store.writer.add_turns(batch)
    assert texts(store) == [(0, 0, "My dog is called Biscuit.")]


def test_another_role_at_a_taken_position_is_refused(store):
    store.writer.add_turn("ada", "user", "Thanks!", session_id="s1", turn_index=0)
    with pytest.raises(ValueError, match="already holds another user turn"):
        store.writer.add_turn("ada", "assistant", "Thanks!", session_id="s1", turn_index=0)


def test_a_longer_text_at_a_taken_position_never_mixes_with_the_old_turn(store):
    writer = MemoryWriter(store, chunk_tokens=8)
    writer.add_turn("ada", "user", "I work as a nurse.", session_id="s1", turn_index=0)
    with pytest.raises(ValueError, match=TAKEN):
        writer.add_turn("ada", "user", "I work as a teacher at the school in Porto and I love it a lot.",
                        session_id="s1", turn_index=0)  # fmt: skip
    assert texts(store) == [(0, 0, "I work as a nurse.")]


def test_a_chunked_turn_written_again_is_the_same_turn(store):
    writer = MemoryWriter(store, chunk_tokens=8)
    long = "I work as a teacher at the school in Porto and I love it a lot."
    ids = writer.add_turn("ada", "user", long, session_id="s1", turn_index=0)
    assert len(ids) > 1 and writer.add_turn("ada", "user", long, session_id="s1", turn_index=0) == ids


def test_two_turns_at_one_position_in_one_batch_are_refused(store):
    batch = [{"user_id": "ada", "role": "user", "content": text, "session_id": "s1", "turn_index": 0}
             for text in ("My dog is called Biscuit.", "My cat is called Mochi.")]  # fmt: skip
    with pytest.raises(ValueError, match="already holds another user turn"):
        store.writer.add_turns(batch)
    assert texts(store) == []


def test_a_deleted_turns_position_takes_another_text(store):
    memory = store.for_user("ada")
    ids = memory.add("My dog is called Biscuit.", session_id="s1", turn_index=0)
    memory.delete(ids)
    memory.add("I moved to Porto.", session_id="s1", turn_index=0)
    assert texts(store) == [(0, 0, "I moved to Porto.")]


def test_the_same_position_in_another_session_or_user_is_free(store):
    store.writer.add_turn("ada", "user", "My dog is called Biscuit.", session_id="s1", turn_index=0)
    store.writer.add_turn("ada", "user", "I moved to Porto.", session_id="s2", turn_index=0)
    store.writer.add_turn("bo", "user", "I moved to Porto.", session_id="s1", turn_index=0)
    assert len(texts(store)) == 2 and texts(store, "bo") == [(0, 0, "I moved to Porto.")]


def test_a_turn_with_a_deleted_chunk_written_again_brings_the_chunk_back(store):
    writer = MemoryWriter(store, chunk_tokens=8)
    long = "I work as a teacher at the school in Porto and I love it a lot."
    ids = writer.add_turn("ada", "user", long, session_id="s1", turn_index=0)
    store.for_user("ada").delete(ids[1])
    assert writer.add_turn("ada", "user", long, session_id="s1", turn_index=0) == ids
    assert len(texts(store)) == len(ids)


def test_another_text_never_mixes_with_the_chunks_left_of_a_turn(store):
    writer = MemoryWriter(store, chunk_tokens=8)
    ids = writer.add_turn("ada", "user", "I work as a teacher at the school in Porto and I love it a lot.",
                          session_id="s1", turn_index=0)  # fmt: skip
    store.for_user("ada").delete(ids[0])
    with pytest.raises(ValueError, match=TAKEN):
        writer.add_turn("ada", "user", "I moved to Lisbon.", session_id="s1", turn_index=0)


def test_reingesting_a_grown_file_keeps_a_corrected_turn_and_writes_the_new_ones(store, tmp_path: Path):
    """A file's turn corrected with update() since: the file's text is reported, not written, and
    the turns added to the file are written (a ValueError would have failed the whole file)."""
    lines = ['{"role": "user", "content": "My dog is called Pluto.", "session_id": "s1", "turn_index": 0}']
    path = tmp_path / "chat.jsonl"
    path.write_text("\n".join(lines) + "\n")
    (dog,) = store.writer.ingest(path, user_id="ada", progress=False) and store.for_user("ada").all()
    store.for_user("ada").update(dog.id, "My dog is called Pluto the Second.")
    lines.append('{"role": "user", "content": "I moved to Porto.", "session_id": "s1", "turn_index": 1}')
    path.write_text("\n".join(lines) + "\n")
    with pytest.warns(RuntimeWarning, match="1 turn\\(s\\) at positions that hold another text were kept"):
        report = store.writer.ingest(path, user_id="ada", progress=False)
    assert report.skipped == [f"line 1: {report.skipped[0].split(': ', 1)[1]}"] and report.skipped[0].endswith("kept as it is")
    assert "turn_index 0 of session 's1'" in report.skipped[0]
    assert texts(store) == [(0, 0, "My dog is called Pluto the Second."), (1, 0, "I moved to Porto.")]


@pytest.mark.parametrize("positional", [False, True])
@pytest.mark.parametrize("more", [True, False, None])
@pytest.mark.parametrize("script", ["latin", "cjk"])
def test_a_turn_written_again_under_a_changed_chunker_is_the_same_turn(store, monkeypatch, positional, more, script):
    """The chunker learnt a sentence end (the Urdu "۔", 2026-12-07) between two writes of one long
    turn: its chunk boundaries moved, and it has one chunk more, fewer or as many. It is the same turn: its
    ids, nothing written. Until 2026-12-08 it was stored a second time (written without a position),
    or one chunk more was written beside it and one fewer was acknowledged without its last id (a reviewer)."""
    import recall_core.memory.text.prepared as prepared

    if script == "latin":
        text = " ".join(f"Sentence {i} of a long day, with the weather and what I ate." for i in range(40))
    else:  # chunks cut between characters, with no space (after "。", or a word too long for one)
        text = "".join(f"今天是第{i}天，我吃了米饭，天气很好。" for i in range(60))
    at = 3 if positional else None
    first = store.writer.add_turn("ada", "user", text, session_id="s1", turn_index=at)
    before = texts(store)
    chunker = prepared.chunk_text

    def moved(content, max_tokens, count):
        chunks = chunker(content, max_tokens, count)
        if more:  # the last chunk cut in two
            half = len(chunks[-1]) // 2
            return [*chunks[:-1], chunks[-1][:half].strip(), chunks[-1][half:].strip()]
        space = " " if script == "latin" else ""
        if more is None:  # as many chunks: a word (a character) moved from one to the next
            *head, word = chunks[-2].split() if space else chunks[-2]
            return [*chunks[:-2], space.join(head), word + space + chunks[-1]]
        return [*chunks[:-2], chunks[-2] + space + chunks[-1]]

    monkeypatch.setattr(prepared, "chunk_text", moved)
    assert len(first) > 2 and store.writer.add_turn("ada", "user", text, session_id="s1", turn_index=at) == first
    assert texts(store) == before


def test_a_store_with_a_stray_chunk_beside_a_turn_takes_the_turn_again(store, monkeypatch):
    """Before 2026-12-08 a turn written again at its position with one chunk more left that chunk beside
    it (n_chunks 6 beside the turn's 5). Writing the turn again, under either chunker, is the same turn;
    until then it was refused as another turn, or failed with an IndexError that stopped a session's
    later writes for good (a reviewer)."""
    text, first, more = _with_a_stray_chunk(store, monkeypatch)
    stray = texts(store)
    assert len(stray) == len(first) + 1
    assert store.writer.add_turn("ada", "user", text, session_id="s1", turn_index=3) == first
    monkeypatch.setattr("recall_core.memory.text.prepared.chunk_text", more)
    assert store.writer.add_turn("ada", "user", text, session_id="s1", turn_index=3) == first
    assert texts(store) == stray


@pytest.mark.parametrize(("said", "again"), [("Back up to /data/old backups nightly.", "Back up to /data/oldbackups nightly."),
                                             ("My daughter is Anna Bell.", "My daughter is AnnaBell.")])  # fmt: skip
def test_a_correction_that_moves_a_space_is_another_text(store, said, again):
    """Only a chunk boundary may stand for a space or none: a text with a space taken out inside a chunk
    was taken as the turn itself and the correction dropped, while acknowledged (a reviewer, 2026-12-08)."""
    memory = store.for_user("ada")
    memory.add(said, session_id="s1", turn_index=0)
    with pytest.raises(ValueError, match=TAKEN):
        memory.add(again, session_id="s1", turn_index=0)
    assert [text for _, _, text in texts(store)] == [said]


def test_one_batch_with_a_position_twice_in_other_spacing_is_refused(store):
    """Two turns at one position in one write, the same characters spaced otherwise (and so chunked
    otherwise): the second mixed a chunk of its own beside the first (a reviewer, 2026-12-08)."""
    writer = MemoryWriter(store, chunk_tokens=8)
    text = "我住在里斯本。我的狗叫饼干。"
    batch = [{"user_id": "ada", "role": "user", "content": words, "session_id": "s1", "turn_index": 0}
             for words in (text, " ".join(text))]  # fmt: skip
    with pytest.raises(ValueError, match=TAKEN):
        writer.add_turns(batch)
    assert texts(store) == []


def test_a_stray_chunk_beside_a_turn_with_a_deleted_chunk_takes_it_back(store, monkeypatch):
    """The stray chunk of a store of before 2026-12-08 beside a turn one of whose chunks was deleted:
    writing the turn again brings the chunk back, as without the stray (it was refused: a reviewer)."""
    text, first, _ = _with_a_stray_chunk(store, monkeypatch)
    whole = texts(store)
    store.for_user("ada").delete(first[1])
    assert store.writer.add_turn("ada", "user", text, session_id="s1", turn_index=3) == first
    assert texts(store) == whole


def _with_a_stray_chunk(store, monkeypatch):
    """A long turn at position 3, and the stray chunk the code before 2026-12-08 wrote beside it when the
    turn came again with one chunk more: ``(text, its ids, the chunker that makes one chunk more)``."""
    import recall_core.memory.text.new_rows as new_rows
    import recall_core.memory.text.prepared as prepared

    text = " ".join(f"Sentence {i} of a long day, with the weather and what I ate." for i in range(40))
    first = store.writer.add_turn("ada", "user", text, session_id="s1", turn_index=3)
    chunker = prepared.chunk_text

    def more(content, max_tokens, count):
        chunks = chunker(content, max_tokens, count)
        half = len(chunks[-1]) // 2
        return [*chunks[:-1], chunks[-1][:half].strip(), chunks[-1][half:].strip()]

    with monkeypatch.context() as patch:
        patch.setattr(prepared, "chunk_text", more)
        patch.setattr(new_rows, "rechunked_at", lambda *args: None)
        store.writer.add_turn("ada", "user", text, session_id="s1", turn_index=3)
    assert len(texts(store)) == len(first) + 1
    return text, first, more


def test_a_correction_that_takes_out_the_space_at_a_chunk_boundary_is_another_text(store):
    """A Latin chunk boundary stands for a space: "eight|nine" took "eightnine" (chunked otherwise) for
    the same turn, and the correction was dropped while acknowledged (a reviewer, 2026-12-08)."""
    writer = MemoryWriter(store, chunk_tokens=8)
    said = "one two three four five six seven eight nine ten eleven twelve"
    assert len(writer.add_turn("ada", "user", said, session_id="s1", turn_index=0)) == 2
    with pytest.raises(ValueError, match=TAKEN):
        writer.add_turn("ada", "user", said.replace("eight nine", "eightnine"), session_id="s1", turn_index=0)


def test_same_words_reads_a_boundary_as_a_space_or_as_a_cut_between_characters():
    from recall_core.memory.positions import same_words

    assert same_words(["a b", "c"], ["a b c"]) and same_words(["今天", "是"], ["今天是"])
    assert same_words(["x" * 20, "yy"], ["x" * 20 + "yy"]) and same_words(["a b"], ["a b", ""])
    assert not same_words(["seven eight", "nine"], ["seven eightnine"]) and not same_words(["ab", "c"], ["a", "bc"])
    assert not same_words(["old backups"], ["oldbackups"])

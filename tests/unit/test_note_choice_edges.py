"""How notes are chosen where the input is not the benchmarks' shape: questions typed without a
question mark, timestamps in other forms and zones, full-name speakers, notes cut in a character.
Each case a reviewer found wrong on 2026-12-07."""

from __future__ import annotations

import time
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from recall_core.config import RecallConfig
from recall_core.dates import parse_moment
from recall_core.decoding.ask import statement_config
from recall_core.decoding.notes import note_lines
from recall_core.decoding.select import search_memory
from recall_core.memory import MemoryStore, MemoryWriter
from recall_core.memory.encoders import HashEncoder
from recall_core.memory.text.questions import asks
from recall_core.types import RecallQuery
from tests.helpers.tiny import tiny_model

APPOINTMENT = "My dentist appointment is on Friday at 4pm."
MOVED = "My dentist appointment moved to Monday at 9am instead."
QUESTION = "When is my dentist appointment?"


@pytest.mark.parametrize(
    "text",
    ["do i have any allergies", "Is my dentist appointment on Monday", "Can you give me my wifi password",
     "List my allergies please", "ok. did we book the hotel", "我在哪里工作", "他会来吗",
     # the second version missed these (a review of it)
     "我的生日是哪天", "我的车停在哪", "我喜欢吃什么", "has my package arrived", "send me my itinerary",
     "Could you please list my allergies"],
)  # fmt: skip
def test_a_question_typed_without_its_mark_asks(text: str) -> None:
    """These ran as news under ``ask_on_statements`` (no notes), and the default made answers up."""
    assert asks(text)
    assert statement_config(RecallConfig(), text).recall_policy == "auto"


@pytest.mark.parametrize(
    "text",
    ["morning. tryna learn rust on weekends", "I need a new phone", "Had a great time at the beach",
     "Was a long day at work", "Is going to rain all week, ugh", "Showed my mom the photos", "我搬到了北京。",
     "Give me a fun fact about gravity.",  # a general request: nothing of the user's
     # news my first version took for questions (a review of it)
     "Did my first 10k run today", "had my first day at the new job today", "Was my birthday yesterday!",
     "Have my exam tomorrow", "Did it! finished the marathon", "Send my love to your family",
     "我几乎每天都跑步。", "我不怎么喜欢咖啡", "没什么特别的，就是累了", "我在吃饭呢", "哪怕下雨我也去", "我什么都吃",
     # a request for a task, not a question of memory (measured: benchmarks.statements, a returning user)
     "can you write a bash alias that opens todays notes file", "can u make me a revision timetable"],
)  # fmt: skip
def test_news_and_general_requests_still_ask_nothing(text: str) -> None:
    assert not asks(text)
    assert statement_config(RecallConfig(), text).recall_policy == "ask"


@pytest.mark.parametrize(
    ("written", "moment"),
    [("Sep 8, 2023", "2023-09-08T00:00:00+00:00"), ("8 Sep 2023", "2023-09-08T00:00:00+00:00"),
     ("Friday, September 8, 2023", "2023-09-08T00:00:00+00:00"), ("2023/09/08", "2023-09-08T00:00:00+00:00"),
     ("8 September 2023 14:00", "2023-09-08T14:00:00+00:00"), ("2023-09-08 14:00:00 UTC", "2023-09-08T14:00:00+00:00"),
     ("Fri, 08 Sep 2023 16:00:00 +0200", "2023-09-08T16:00:00+02:00"), ("2:00 pm on 8 Sept, 2023", "2023-09-08T14:00:00+00:00"),
     ("1:56 pm on 8 May, 2023", "2023-05-08T13:56:00+00:00"), ("2023-05-08T13:56:00", "2023-05-08T13:56:00+00:00"),
     # read 12 hours off by the e-mail parser, which took "pm" for an unknown zone (a review of the first version)
     ("8 May 2023 1:56 PM", "2023-05-08T13:56:00+00:00"), ("Friday, September 8, 2023 7:00 pm", "2023-09-08T19:00:00+00:00"),
     ("8 Sep 2023 12:30 am", "2023-09-08T00:30:00+00:00"), ("Fri, 08 Sep 2023 16:00:00 EST", "2023-09-08T16:00:00-05:00"),
     ("Fri, 08 Sep 2023 16:00:00 UTC", "2023-09-08T16:00:00+00:00"), ("Fri, 08 Sep 2023 16:00:00 gmt", "2023-09-08T16:00:00+00:00")],
)  # fmt: skip
def test_timestamps_written_out_are_read(written: str, moment: str) -> None:
    assert parse_moment(written) == datetime.fromisoformat(moment)


@pytest.mark.parametrize("text", ["09/08/2023", "May", "next week", "", "Mon 8 May 2023 10:00 CEST"])
def test_timestamps_of_no_one_reading_are_not_guessed(text: str) -> None:
    assert parse_moment(text) is None


def _chosen(store: MemoryStore, question: str = QUESTION, **config) -> list[str]:
    chosen, _, _ = search_memory(store.for_user("u"), RecallQuery(question), RecallConfig(min_score=0.0, **config))
    return [c.text for c in chosen]


@pytest.fixture
def store(tmp_path: Path):
    with MemoryStore.local(tmp_path / "mem", encoder=HashEncoder(64), unit="turn") as store:
        yield store


@pytest.mark.parametrize("older", ["Sep 8, 2023", "2023/09/08 14:00", "Friday, September 8, 2023"])
def test_an_update_after_a_turn_dated_in_words_is_the_one_kept(store: MemoryStore, older: str) -> None:
    """Its date unread, the older turn was ordered by when it was written (now), after the update."""
    writer = MemoryWriter(store)
    writer.add_turn("u", "user", APPOINTMENT, session_id="s1", timestamp=older)
    writer.add_turn("u", "user", MOVED, session_id="s2", timestamp="2023-09-20T10:00:00")
    assert _chosen(store)[0] == MOVED


def test_a_later_session_of_the_same_day_is_the_newer(store: MemoryStore) -> None:
    """Turn 2 of the first session outranked turn 0 of the second, written after it, dated the same day."""
    writer = MemoryWriter(store)
    for text in ("Filler turn one.", "Filler turn two.", APPOINTMENT):
        writer.add_turn("u", "user", text, session_id="s1", timestamp="2023-05-08")
    time.sleep(0.01)
    writer.add_turn("u", "user", MOVED, session_id="s2", timestamp="2023-05-08")
    assert _chosen(store)[0] == MOVED


@pytest.mark.skipif(not hasattr(time, "tzset"), reason="time.tzset: POSIX only")
def test_two_sessions_of_one_day_written_in_one_call_are_ordered_as_written(store: MemoryStore) -> None:
    """One call gave every row one write time, and the place in its own session decided again (a review)."""
    turns = [(APPOINTMENT, "s1"), ("Filler turn.", "s1"), ("Another filler turn.", "s1"), (MOVED, "s2")]
    store.writer.add_turns([{"user_id": "u", "role": "user", "content": text, "session_id": session,
                             "timestamp": "2023-05-08"} for text, session in turns])  # fmt: skip
    assert _chosen(store)[0] == MOVED


def test_sessions_interleaved_in_one_call_keep_their_order(store: MemoryStore) -> None:
    """Each session's rows of one call shared one write time, so "A second", written after "B first",
    listed and counted as older than it (a review of the second version)."""
    store.writer.add_turns([{"user_id": "u", "role": "user", "content": text, "session_id": session,
                             "timestamp": "2023-05-08"} for text, session in
                            (("A first", "A"), ("B first", "B"), ("A second", "A"))])  # fmt: skip
    assert [r.text for r in store.for_user("u").list()] == ["A first", "B first", "A second"]
    from recall_core.decoding.select import _moment

    candidates = store.for_user("u").search("first second", 3, retrieval="lexical")
    assert [c.text for c in sorted(candidates, key=_moment)] == ["A first", "B first", "A second"]


def test_a_naive_datetime_at_the_calendar_s_ends_is_kept_as_given() -> None:
    from recall_core.memory.validation import format_timestamp

    assert format_timestamp(datetime(1, 1, 1)).startswith("0001-01-01T00:00:00")
    assert format_timestamp(datetime(9999, 12, 31, 23)).startswith("9999-12-31T23:00:00")


def test_a_naive_datetime_is_local_time_beside_now(store: MemoryStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """A naive datetime was written as it was and read as UTC: in Tokyo, a turn two hours old sorted
    after one written now."""
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    try:
        writer = MemoryWriter(store)
        (old,) = writer.add_turn("u", "user", APPOINTMENT, timestamp=datetime.now() - timedelta(hours=2))
        writer.add_turn("u", "user", MOVED)  # now
        assert store.journal.get(old).timestamp.endswith("+09:00")
        assert _chosen(store)[0] == MOVED
    finally:
        monkeypatch.undo()
        time.tzset()


def test_a_speaker_labelled_with_a_full_name_says_the_first_name(store: MemoryStore) -> None:
    """``match_names`` dropped Caroline Smith's note as someone else's when asked about Caroline."""
    writer = MemoryWriter(store)
    writer.add_turn("u", "user", "I went to see Caroline about my back pain.", session_id="s1",
                    timestamp="2023-05-07T10:00:00", metadata={"speaker": "Melanie"})  # fmt: skip
    advice = "Take the blue pills twice a day and rest your back."
    writer.add_turn("u", "assistant", advice, session_id="s1", timestamp="2023-05-07T10:01:00",
                    metadata={"speaker": "Caroline Smith"})  # fmt: skip
    assert advice in _chosen(store, "What did Caroline recommend for my back pain?")


def test_a_note_cut_inside_a_character_loses_the_character_not_its_bytes() -> None:
    _, tokenizer = tiny_model("llama")
    text = "My favourite emoji is 🦜 and my cat is called 猫猫 Mochi."
    for limit in range(4, 20):
        (line,) = note_lines(tokenizer, [text], RecallConfig(max_memory_tokens=limit))
        assert "\ufffd" not in line, (limit, line)

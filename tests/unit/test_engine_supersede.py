"""The newest version wins: a candidate that a newer one updates, for the question asked, gives way to it."""

from __future__ import annotations

import random

import pytest

from recall_core import RecallConfig
from recall_core.decoding.select import _moment, choose_candidates, search_memory
from recall_core.decoding.supersede import asked_words, names_time, newest_versions, says_change, updates
from recall_core.types import MemoryCandidate, RecallQuery

QUESTION = "Remind me what time the optician appointment is?"


def _c(memory_id: str, score: float, text: str, timestamp: str | None = None, speaker: str | None = None) -> MemoryCandidate:
    meta: dict[str, object] = {"turn_index": 0}
    if timestamp:
        meta["timestamp"] = timestamp
    if speaker:
        meta["speaker"] = speaker
    return MemoryCandidate(memory_id, score, text, None, meta)


OLD = _c("old", 0.69, "Putting this here so I don't lose it: optician at 4pm on Tuesday the 7th of January.", "2024-10-05T07:52")
NEW = _c("new", 0.64, "Ugh, the optician rang and they've had to move me. Now it's Tuesday the 21st of January at 2:30.",
         "2024-11-15T12:58")  # fmt: skip
OTHER = _c("other", 0.5, "The Marrakech flight is on 31 December.", "2024-10-23T07:38")


def test_an_older_version_gives_its_place_to_the_newer_one_that_says_it_changed():
    chosen, reason = choose_candidates([OLD, OTHER, NEW], RecallConfig(memories=2), question=QUESTION)
    assert reason is None
    assert {c.id for c in chosen} == {"new", "other"}  # the newer version, ranked third, takes the first place
    # without the question, or with the setting off, the candidates go in as ranked
    assert {c.id for c in choose_candidates([OLD, OTHER, NEW], RecallConfig(memories=2))[0]} == {"old", "other"}
    off = RecallConfig(memories=2, newest_wins=False)
    assert {c.id for c in choose_candidates([OLD, OTHER, NEW], off, question=QUESTION)[0]} == {"old", "other"}


def test_the_place_of_an_older_version_is_not_filled_with_another_candidate():
    """Swapped, the two notes about the optician are one: a third candidate, on something else, stays out."""
    chosen, _ = choose_candidates([OLD, NEW, OTHER], RecallConfig(memories=2), question=QUESTION)
    assert [c.id for c in chosen] == ["new"]
    assert [c.id for c in choose_candidates([OLD, NEW, OTHER], RecallConfig(memories=2, newest_wins=False))[0]] == ["new", "old"]


def test_search_memory_passes_the_search_text_as_the_question():
    class Recorded:
        def search(self, query: RecallQuery, k: int) -> list[MemoryCandidate]:
            return [OLD, OTHER, NEW][:k]

    chosen, reason, found = search_memory(Recorded(), RecallQuery(text=QUESTION), RecallConfig(memories=2))
    assert reason is None and [c.id for c in found] == ["old", "other", "new"]
    assert "old" not in {c.id for c in chosen}


@pytest.mark.parametrize(
    "newer, why",
    [
        (_c("n", 0.6, "The optician was lovely on the 21st of January.", "2024-11-15T12:58"), "no word of change"),
        (_c("n", 0.6, "Hamish's christening moved to the 21st of January.", "2024-11-15T12:58"), "not about the optician"),
        (_c("n", 0.6, "The optician moved me, it's later now.", "2024-11-15T12:58"), "names no day or time"),
        (_c("n", 0.6, "Ugh, the optician moved me to the 21st of January.", "2024-09-01T12:58"), "older, not newer"),
        (_c("n", 0.6, "Ugh, the optician moved me to the 21st of January.", None), "undated"),
        (_c("n", 0.6, "The optician is lovely. Now I'm off to the 21st of January party.", "2024-11-15T12:58"),
         "the change is said of something else"),
    ],
)  # fmt: skip
def test_a_newer_note_that_is_not_an_update_of_the_older_one_leaves_it(newer: MemoryCandidate, why: str):
    assert newest_versions([OLD, newer], [OLD, newer], QUESTION, _moment) == [OLD, newer], why


def test_a_day_the_question_names_is_not_a_subject():
    """"What's on the 21st?" shares "21st" with a note that moved the optician to the 21st, and
    "day" with one about a cup final on the same day: neither is an update."""
    old = _c("o", 0.7, "Deadline for the dissertation draft is 21st December.", "2024-10-23T07:41")
    new = _c("n", 0.6, "The optician moved me. Now it's the 21st of January.", "2024-11-15T12:58")
    assert newest_versions([old, new], [old, new], "Am I free on December 21st? What was on that day?", _moment) == [old, new]
    old = _c("o", 0.7, "That sounds like a big day for Florian. Optician at 12:20 on 14 February.", "2023-11-07T10:00")
    new = _c("n", 0.6, "Florian's cup final is still the same day but now starts later, 2pm.", "2023-12-04T10:00")
    assert newest_versions([old, new], [old, new], "What's Ziggy's gotcha day again?", _moment) == [old, new]


def test_the_small_talk_around_a_question_is_not_its_subject():
    assert asked_words("Okay, testing my own memory here. Quick one: what is it that I collect?") == {"collect"}
    assert asked_words("When am I seeing the optician? No rush.") == {"seeing", "optician"}
    assert asked_words("Remind me of the tax return deadline") == {"remind", "tax", "return", "deadline"}
    old = _c("o", 0.7, "Okay, bit of a ramble. Got three more cacti on Sunday, my collecting hobby.", "2023-04-05T09:45")
    new = _c("n", 0.6, "Okay, the job switch is done and I started on Monday. New laptop.", "2023-04-07T09:25")
    question = "Okay, testing my own memory here. Quick one: what is it that I collect?"
    assert newest_versions([old, new], [old, new], question, _moment) == [old, new]
    assert updates(new, old, {"okay", "collect"}, _moment)  # with the small talk's "okay" as a subject, it would swap


def test_two_speakers_do_not_update_each_other():
    old = _c("o", 0.7, "My pottery class is on 3 May.", "2023-04-01T10:00", speaker="Caroline")
    new = _c("n", 0.6, "My pottery class moved to 10 May now.", "2023-04-20T10:00", speaker="Melanie")
    question = "When is the pottery class?"
    assert newest_versions([old, new], [old, new], question, _moment) == [old, new]
    same = _c("n", 0.6, new.text, "2023-04-20T10:00", speaker="Caroline")
    assert newest_versions([old, same], [old, same], question, _moment) == [same, same]


def test_a_role_is_not_a_speaker_an_assistant_s_unit_holds_the_user_s_turn():
    """A unit of the role "assistant" holds the user's turn it answers: the user's update inside it
    still updates the user's older note (reading the role as the speaker lost an answer on the
    hand-written families, 2026-12-07)."""
    said = _c("u", 0.8, "Esi's party is fixed for Saturday the 8th of June.", "2024-05-01T10:00")
    update = _c("a", 0.7, "User: We have had to move Esi's party to the 15th of June.\nAssistant: So sorry. Noted.",
                "2024-05-20T10:00")  # fmt: skip
    said.metadata["role"], update.metadata["role"] = "user", "assistant"
    question = "Which date is Esi's party?"
    assert newest_versions([said, update], [said, update], question, _moment) == [update, update]


def test_new_before_a_capital_is_a_name_not_a_change():
    flight = _c("f", 0.8, "My flight to New York is on May 3rd at 9:40.", "2024-04-01T10:00")
    hotel = _c("h", 0.7, "I booked a hotel in New York for the 4th, near Central Park.", "2024-04-02T10:00")
    assert newest_versions([flight, hotel], [flight, hotel], "When is my flight to New York?", _moment) == [flight, hotel]
    assert says_change("I got a new flight for the 9th.") and not says_change("I love New York in June.")
    # a lower-case "new" before a capital is still a change (the first fix lost these, a second review)
    assert says_change("I got a new GP appointment: May 9th at 11:00.") and says_change("My new PIN is 4321 from Monday.")
    # and "New" opening a sentence, unless a place's name (a third review)
    assert says_change("New GP appointment: May 9th at 11:00.") and not says_change("New York is lovely in May.")
    assert says_change("Bad news. New GP appointment: May 9th.") and says_change("User: New GP appointment: May 9th.")


def test_a_chain_of_updates_resolves_to_the_newest():
    first = _c("a", 0.9, "Barber booked: 11.05 on 21 August.", "2023-07-28T08:54")
    second = _c("b", 0.8, "The barber bumped me to 1 September.", "2023-08-01T08:54")
    third = _c("c", 0.7, "The barber changed it again, now 8 September at 12:20pm.", "2023-08-08T10:32")
    order = newest_versions([first, second, third], [first, second, third], "Which day am I booked in with the barber?", _moment)
    assert [c.id for c in order] == ["c", "c", "c"]
    chosen, _ = choose_candidates([first, second, third], RecallConfig(memories=2), question="When is the barber?")
    assert [c.id for c in chosen] == ["c"]  # the duplicates count once


def test_words_of_change_and_of_time():
    assert says_change("They've had to move me.") and says_change("I'm not going any more.")
    assert says_change("It got rescheduled.") and says_change("12:30pm now.")
    assert not says_change("The optician was lovely.") and not says_change("I removed the knot.")
    assert names_time("at 4pm on Tuesday the 7th of January") and names_time("11.05 on 21 August")
    assert names_time("due 2023-09-08") and names_time("in May")
    assert not names_time("I may go.") and not names_time("a sat nav in the sun")


def test_only_strictly_newer_candidates_take_a_place_property():
    """Randomised: the list keeps its length; every entry is a candidate no older than the one
    whose place it takes; an entry differs from the original only by an update."""
    rng = random.Random(0)
    subjects = ["optician", "barber", "flight", "dentist"]
    for _ in range(300):
        candidates = []
        for i in range(rng.randint(0, 6)):
            subject = rng.choice(subjects)
            change = rng.choice(["", " moved it, now", " changed it to"])
            day = rng.choice(["3 May", "the 21st of January", "a while"])
            stamp = rng.choice([None, f"2024-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}T10:00"])
            candidates.append(_c(f"m{i}", 1 - i / 10, f"The {subject}{change} {day}.", stamp))
        question = f"When is the {rng.choice(subjects)}?"
        order = newest_versions(candidates, candidates, question, _moment)
        assert len(order) == len(candidates)
        words = asked_words(question)
        for original, placed in zip(candidates, order, strict=True):
            assert placed in candidates
            if placed is not original:
                assert _moment(placed) > _moment(original)
                assert updates(placed, original, words, _moment) or any(
                    updates(placed, c, words, _moment) for c in candidates if c is not original
                )


def test_newest_wins_must_be_a_bool():
    with pytest.raises(ValueError, match="newest_wins must be True or False"):
        RecallConfig(newest_wins="yes")  # type: ignore[arg-type]


def test_an_asking_clause_that_names_only_a_time_reads_the_sentence_before_it():
    """"I need time off for the periodontist. Which date was it?": the asking clause names nothing
    but a time, so the subject is in the sentence before it, and the newer appointment wins."""
    question = "My phone died and I lost my notes, so: I need to book time off for the periodontist. Which date was it?"
    assert "periodontist" in asked_words(question)
    assert asked_words("When am I seeing the optician? No rush.") == {"seeing", "optician"}  # unchanged
    old = _c("o", 0.7, "Putting this here so I don't lose it: periodontist at 4pm on Thursday, July 11th.", "2024-02-20T10:00")
    new = _c("n", 0.6, "The periodontist rang and they've had to move me. Now it's 8th July at eight o'clock.", "2024-04-07T10:00")
    assert newest_versions([new, old], [new, old], question, _moment) == [new, new]
    # the clause alone ("which date was it") names no subject: nothing is swapped on it
    assert newest_versions([new, old], [new, old], "Which date was it?", _moment) == [new, old]


def test_phrases_of_change_listed_apart_from_the_conversations():
    for sentence in (
        "The exam has been put back a week.",
        "We\u2019re not going to Paris after all.",  # a curly apostrophe
        "Something came up, so I can't do lunch.",
        "I handed in my notice on Friday.",
        "They've brought my surgery forward to Monday.",
        "The house sale fell through.",
    ):
        assert says_change(sentence), sentence
    for sentence in ("The optician was lovely.", "I'll see you at 4pm on the 7th.", "After the exams we fly to Bali.",
                     # phrases of change in other senses, in notes that name a day (taken out in review)
                     "Dad's back on the 17th.", "Mum's hip replacement is on the 14th of June.",
                     "Left the gym at 7:30 on Thursday.", "We split the bill on Friday."):
        assert not says_change(sentence), sentence
    assert says_change("We didn\u02bct go to Paris after all.")  # a modifier-letter apostrophe
    old = _c("o", 0.7, "The operation is on the 14th of May at Woodend.", "2024-03-19T15:02")
    new = _c("n", 0.6, "They've put the operation off until Monday the 3rd of June.", "2024-04-26T10:00")
    question = "Remind me what date my operation ended up being on."
    assert newest_versions([old, new], [old, new], question, _moment) == [new, new]
    # the same change said without naming the operation leaves both: the subject must be shared
    apart = _c("n", 0.6, "I'm to go in on Monday the 3rd of June, not in May after all.", "2024-04-26T10:00")
    assert newest_versions([old, apart], [old, apart], question, _moment) == [old, apart]

"""A note whose nearest sentences another speaker says of themselves gives way (``match_speakers``).

The examples are written here, in the shape of an exchange between two people (each line labelled
with its speaker); none is taken from LoCoMo or from a conversation family.
"""

from __future__ import annotations

import random

import pytest

from recall_core import RecallConfig
from recall_core.decoding.names import keep_named, names, speaks_of_someone_else
from recall_core.decoding.select import choose_candidates
from recall_core.types import MemoryCandidate


def _c(memory_id: str, score: float, text: str, speaker: str | None, day: int = 1) -> MemoryCandidate:
    meta: dict[str, object] = {"turn_index": 0, "role": "user", "timestamp": f"2024-03-{day:02d}T09:00"}
    if speaker:
        meta["speaker"] = speaker
    return MemoryCandidate(memory_id, score, text, None, meta)


# Priya and Tomasz talk; each tells of their own week.
QUILT = _c("quilt", 0.8, "I finished a patchwork quilt for the school fair. It took three months.\n"
                         "Tomasz: That sounds amazing, Priya!", "Priya", day=1)  # fmt: skip
KAYAK = _c("kayak", 0.6, "I bought a second-hand kayak and took it out on the reservoir.\n"
                         "Priya: Brave! Was the water cold, Tomasz?", "Tomasz", day=2)  # fmt: skip
BAKE = _c("bake", 0.5, "I baked forty scones for the school fair, my arms still ache.\n"
                       "Priya: You legend.", "Tomasz", day=3)  # fmt: skip
QUESTION = "What did Tomasz make for the school fair?"
ON, OFF = RecallConfig(memories=2), RecallConfig(memories=2, match_speakers=False)


def _ids(candidates: list[MemoryCandidate], config: RecallConfig, question: str) -> set[str]:
    return {c.id for c in choose_candidates(candidates, config, question=question)[0]}


def test_another_speakers_own_deed_gives_its_place_to_the_asked_speakers():
    """Both notes name both people, so only who said the matching sentence tells them apart."""
    assert _ids([QUILT, KAYAK, BAKE], OFF, QUESTION) == {"quilt", "kayak"}
    assert _ids([QUILT, KAYAK, BAKE], ON, QUESTION) == {"kayak", "bake"}
    assert _ids([QUILT, KAYAK, BAKE], RecallConfig(memories=2, match_names=False), QUESTION) == {"quilt", "kayak"}


def test_the_same_note_stays_for_a_question_about_its_speaker():
    assert _ids([QUILT, KAYAK, BAKE], ON, "What did Priya make for the school fair?") == {"quilt", "kayak"}


@pytest.mark.parametrize(
    "text, speaker, why",
    [
        ("Priya: Tomasz made forty scones for the fair.", "Priya", "the sentence says the asked name"),
        ("Priya: You made forty scones for the fair, right?", "Priya", "said to the listener: maybe the asked one"),
        ("Priya: We made scones for the school fair together.", "Priya", "'we' may hold the asked one"),
        ("Priya: My brother made scones for the school fair.", "Priya", "about someone the speaker knows"),
        ("Priya: She made scones for the school fair.", "Priya", "a third person"),
        ("Priya: The school fair made a lot of money.", "Priya", "not in the first person"),
        ("Tomasz: I made scones for the school fair.", "Tomasz", "said by the asked speaker"),
        ("Priya: I walked the dog on the beach.", "Priya", "shares no word with the question"),
    ],
)
def test_a_note_stays(text: str, speaker: str, why: str):
    # the reply names both people, as an exchange does, so the names rule keeps every note
    reply = "\nPriya: Ha, yes." if speaker == "Tomasz" else "\nTomasz: Ha, yes."
    note = _c("n", 0.9, text + reply, speaker)
    asked = names(QUESTION)
    words = {"make", "schoo", "fair"}
    assert not speaks_of_someone_else(note, asked, set(), words), why
    assert _ids([note, KAYAK], RecallConfig(memories=1), QUESTION) == {"n"}, why


def test_a_question_about_the_asker_changes_nothing():
    """"What did I make for Tomasz?": the asker's own first-person notes are what is asked about."""
    question = "What did I make for Tomasz at the school fair?"
    assert keep_named([QUILT], [QUILT, KAYAK], question, speakers=True) == [QUILT]


def test_without_a_speaker_who_is_asked_about_nothing_changes():
    """A user's own turns ("I ...") are not about Rohan, but nobody named Rohan speaks in this memory:
    the rule is for conversations between the people asked about (the names rule covers the rest)."""
    mine = _c("mine", 0.8, "I started a new job at the bakery on Monday.", "User")
    rohan = _c("rohan", 0.5, "Rohan says hi, he is still at the bank.", "User")
    assert _ids([mine, rohan], RecallConfig(memories=1), "Where does Rohan work these days?") == {"mine"}


def test_an_unlabelled_line_is_said_by_the_speaker_of_the_line_before():
    note = _c("n", 0.9, "Tomasz: Not much.\nPriya: I made a quilt for the fair.\nIt took me months.", "Tomasz")
    assert speaks_of_someone_else(note, {"tomasz"}, set(), {"quilt", "fair", "month"})
    assert not speaks_of_someone_else(note, {"priya"}, set(), {"quilt", "fair", "month"})


def test_a_note_that_gives_way_does_not_fill_another_place():
    """The refill skips candidates that would give way themselves."""
    other = _c("other", 0.4, "I made a banner for the school fair.\nTomasz: Cool.", "Priya", day=4)
    assert _ids([QUILT, other, BAKE], RecallConfig(memories=2), QUESTION) == {"bake"}


def test_the_chosen_notes_never_grow_and_come_from_the_candidates_property():
    rng = random.Random(11)
    people = ["Priya", "Tomasz", "Odile"]
    deeds = ["I made a quilt for the fair.", "I baked scones for the fair.", "You made a kite.", "We went sailing."]
    for _ in range(300):
        candidates = [
            _c(f"c{i}", 1 - i / 10, f"{rng.choice(deeds)}\n{rng.choice(people)}: Nice, {rng.choice(people)}!",
               rng.choice(people), day=i + 1)
            for i in range(rng.randint(1, 6))
        ]  # fmt: skip
        memories = rng.randint(1, 3)
        config = RecallConfig(memories=memories, newest_wins=False)
        chosen, _ = choose_candidates(candidates, config, question=f"What did {rng.choice(people)} make for the fair?")
        assert len(chosen) <= memories and {c.id for c in chosen} <= {c.id for c in candidates}


def test_match_speakers_must_be_a_bool():
    with pytest.raises(ValueError, match="match_speakers must be True or False"):
        RecallConfig(match_speakers=1)  # type: ignore[arg-type]

"""A chosen note's names are searched for a newer turn that replaces it (``RecallConfig.follow_updates``)."""

from __future__ import annotations

import pytest

from recall_core import RecallConfig
from recall_core.decoding.follow import follow_updates, own_words, replaces, values_named
from recall_core.decoding.select import _moment, choose_candidates, search_memory
from recall_core.types import MemoryCandidate, RecallQuery

QUESTION = "Quick one: what am I driving at the minute?"
ON = RecallConfig(memories=2, follow_updates=True)


def _c(memory_id: str, text: str, timestamp: str | None, score: float = 0.5, **meta: object) -> MemoryCandidate:
    metadata: dict[str, object] = {"turn_index": 0, "role": "user", **meta}
    if timestamp:
        metadata["timestamp"] = timestamp
    return MemoryCandidate(memory_id, score, text, None, metadata)


OLD = _c("old", "Mechanic question. My Skoda Octavia has started making a squealing noise in car parks.", "2023-04-07T09:45")
NEW = _c("new", "The car saga is over. I traded in my Skoda Octavia at the weekend and drove home in a Volvo V70.",
         "2023-04-15T13:21")  # fmt: skip
OTHER = _c("other", "I'm learning the cello on Tuesday evenings.", "2023-04-01T10:00")


class Memory:
    """A memory whose question search finds the old note and the other one, and whose search by the
    old note's names finds the update too (it shares no word with the question)."""

    def __init__(self, by_names: list[MemoryCandidate] | None = None, fail: bool = False) -> None:
        self.queries: list[str] = []
        self.depths: list[int] = []
        self.by_names = [OLD, NEW] if by_names is None else by_names
        self.fail = fail

    def search(self, query: RecallQuery, k: int) -> list[MemoryCandidate]:
        self.queries.append(query.text or "")
        self.depths.append(k)
        if len(self.queries) == 1:
            return [OLD, OTHER][:k]
        if self.fail:
            raise ConnectionError("server down")
        return self.by_names[:k]


def _search(found: list[MemoryCandidate]):
    return lambda text: found


def test_a_note_gives_its_place_to_a_newer_turn_found_by_its_names():
    memory = Memory()
    chosen, reason, candidates = search_memory(memory, RecallQuery(text=QUESTION), ON)
    assert reason is None and [c.id for c in candidates] == ["old", "other"]
    assert [c.id for c in chosen] == ["new", "other"]  # newest first: the update is the newest
    # the note's sentence that says its names is what was searched for
    assert memory.queries[1] == "My Skoda Octavia has started making a squealing noise in car parks."


def test_the_search_by_names_reads_at_least_eight_deep():
    """The note's own turn and the units that hold it come first: ``top_k=1`` would find only itself."""
    memory = Memory()
    chosen, _, _ = search_memory(memory, RecallQuery(text=QUESTION), ON.replace(top_k=1, memories=1))
    assert memory.depths == [1, 8, 8] and [c.id for c in chosen] == ["new"]
    deep = Memory()
    search_memory(deep, RecallQuery(text=QUESTION), ON.replace(top_k=20))
    assert deep.depths == [20, 20, 20]  # the question, the old note, then the new one (a chain ends there)


def test_off_by_default_and_no_search_is_made():
    memory = Memory()
    chosen, _, _ = search_memory(memory, RecallQuery(text=QUESTION), RecallConfig(memories=2))
    assert [c.id for c in chosen] == ["old", "other"] and len(memory.queries) == 1
    assert not RecallConfig().follow_updates


def test_without_a_search_or_a_question_the_candidates_stay():
    assert [c.id for c in choose_candidates([OLD, OTHER], ON, question=QUESTION)[0]] == ["old", "other"]
    assert [c.id for c in choose_candidates([OLD, OTHER], ON, search=_search([NEW]))[0]] == ["old", "other"]


def test_a_note_that_names_nothing_makes_no_search():
    asked: list[str] = []
    plain = _c("plain", "my car has started making a squealing noise", "2023-04-07T09:45")

    def search(text: str) -> list[MemoryCandidate]:
        asked.append(text)
        return [NEW]

    assert follow_updates([plain], QUESTION, search, _moment) == [plain] and asked == []


@pytest.mark.parametrize(
    "newer, why",
    [
        (_c("n", "I washed my Skoda Octavia and then drove a Volvo V70 for fun.", "2023-04-15T13:21"), "no word of change"),
        (_c("n", "I traded in my Skoda Octavia for a Volvo V70.", "2023-04-01T13:21"), "older, not newer"),
        (_c("n", "I traded in my Skoda Octavia for a Volvo V70.", None), "undated"),
        (_c("n", "I traded in my Skoda Octavia for a Volvo V70.", "2023-04-15T13:21", speaker="Priya"),
         "another speaker (the older one is labelled too)"),
        (_c("n", "The Skoda Octavia is fine. I swapped my phone for a Pixel.", "2023-04-15T13:21"),
         "the change is said of something else"),
        (_c("n", "I traded in my Skoda Octavia, finally.", "2023-04-15T13:21"), "no new name: not a new value"),
        (_c("n", "User: Is my Skoda Octavia fine?\nAssistant: From the Skoda Octavia to a Volvo V70 would be a change!",
            "2023-04-15T13:21"), "the change is the assistant's words"),
    ],
)  # fmt: skip
def test_a_newer_turn_that_does_not_replace_the_note_leaves_it(newer: MemoryCandidate, why: str):
    old = _c("o", OLD.text, OLD.metadata["timestamp"], speaker="Tomasz") if "speaker" in why else OLD
    assert follow_updates([old], QUESTION, _search([old, newer]), _moment) == [old], why


def test_a_person_said_with_how_they_are_related_is_not_a_value():
    """"My cousin Matteo is learning Swahili": Matteo is who the note is about; "My cousin Matteo
    bought a Nissan Leaf and now offers lifts" is news about him, not a new version of the Swahili."""
    old = _c("o", "My cousin Matteo is learning Swahili for a work trip.", "2023-03-01T10:00")
    new = _c("n", "My cousin Matteo bought a Nissan Leaf and now offers everyone lifts.", "2023-05-01T10:00")
    assert values_named(old) == {"swahili"}
    assert follow_updates([old], "What language is my cousin learning?", _search([new]), _moment) == [old]


def test_the_question_s_own_names_are_its_subject_not_a_value():
    old = _c("o", "Anna lives in Leeds now, near the canal.", "2023-03-01T10:00")
    new = _c("n", "Anna moved her birthday party to the Ritz instead.", "2023-05-01T10:00")
    assert follow_updates([old], "Where does Anna live?", _search([new]), _moment) == [old]
    moved = _c("m", "Anna moved out of Leeds, she's in Glasgow now.", "2023-05-01T10:00")
    assert follow_updates([old], "Where does Anna live?", _search([moved]), _moment) == [moved]


def test_a_chain_of_newer_versions_is_followed_to_the_newest():
    third = _c("third", "Update: I swapped the Volvo V70 for a Kia Picanto.", "2023-06-01T10:00")
    found = {"old": [NEW], "new": [third], "third": []}
    asked: list[str] = []

    def search(text: str) -> list[MemoryCandidate]:
        asked.append(text)
        return found["old" if "Skoda Octavia has" in text else "third" if "Kia" in text else "new"]

    assert follow_updates([OLD], QUESTION, search, _moment) == [third]
    assert len(asked) == 3  # old -> new -> third, and third's own names find nothing newer


def test_the_place_of_a_note_replaced_by_one_already_chosen_is_not_filled_again():
    chosen, _ = choose_candidates([OLD, NEW, OTHER], ON, question=QUESTION, search=_search([NEW]))
    assert [c.id for c in chosen] == ["new"]


def test_what_the_assistant_said_neither_anchors_nor_changes():
    unit = _c("u", "Assistant: Lovely, the Volvo V70!\nUser: The fan on my Surface Laptop is loud.", "2023-04-15T13:21")
    assert own_words(unit) == "User: The fan on my Surface Laptop is loud." and values_named(unit) == {"surface", "laptop"}
    reply = _c("r", "From Detectorists to Frasier, good taste!", "2023-04-15T13:22", role="assistant")
    assert own_words(reply) == "" and values_named(reply) == set()
    labelled = _c("l", "Caroline: I swapped my Skoda Octavia for a Volvo V70.", "2023-04-15T13:21", speaker="Caroline")
    assert replaces(labelled, OLD, {"skoda", "octavia"}, _moment)  # a named speaker's words are a person's


def test_a_memory_error_in_the_search_by_names_keeps_the_note_and_says_why():
    with pytest.warns(RuntimeWarning, match="newer version not searched.*server down"):
        chosen, reason, _ = search_memory(Memory(fail=True), RecallQuery(text=QUESTION), ON)
    assert reason is None and [c.id for c in chosen] == ["old", "other"]
    with pytest.raises(ConnectionError):
        search_memory(Memory(fail=True), RecallQuery(text=QUESTION), ON.replace(on_memory_error="raise"))


def test_follow_updates_must_be_a_bool():
    with pytest.raises(ValueError, match="follow_updates must be True or False"):
        RecallConfig(follow_updates="yes")  # type: ignore[arg-type]


def test_a_note_that_also_says_something_else_keeps_its_place():
    """News of one of a note's two facts does not replace the note: the question may be about the other."""
    old = _c("o", "My boss's flat in Osaka has a view. And Thiago bought a Land Rover Defender.", "2023-03-01T10:00")
    new = _c("n", "Thiago finally got rid of the Land Rover Defender and bought a Fiat Panda.", "2023-05-01T10:00")
    assert follow_updates([old], "What city did my boss end up in?", _search([new]), _moment) == [old]
    one = _c("one", "Thiago bought a Land Rover Defender.", "2023-03-01T10:00")
    assert follow_updates([one], "What does Raj drive?", _search([new]), _moment) == [new]


def test_a_note_with_a_day_the_update_does_not_touch_keeps_its_place():
    """"We're now starting on 29 July" is a value too: news of who minds the dog does not replace it."""
    old = _c("o", "The reno is now starting on 29 July instead. Feeding Ned will be fun.", "2023-03-01T10:00")
    new = _c("n", "We're doing Tassie instead, and Ned's going to Dave's brother.", "2023-05-01T10:00")
    assert follow_updates([old], "When does the reno start?", _search([new]), _moment) == [old]

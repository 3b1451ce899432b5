"""A note about someone else gives way: a question that names someone keeps the notes that say the name."""

from __future__ import annotations

import random

import pytest

from recall_core import RecallConfig
from recall_core.decoding.names import (
    about_someone_else,
    asked_names,
    keep_named,
    names,
    relations,
    says,
    says_relation,
)
from recall_core.decoding.select import choose_candidates
from recall_core.types import MemoryCandidate


def _c(memory_id: str, score: float, text: str, speaker: str | None = None, role: str = "user") -> MemoryCandidate:
    meta: dict[str, object] = {"turn_index": 0, "role": role, "timestamp": f"2024-03-0{len(memory_id)}T09:00"}
    if speaker:
        meta["speaker"] = speaker
    return MemoryCandidate(memory_id, score, text, None, meta)


WREN = _c("wren", 0.71, "My friend Wren is off to Lake Bled next month, so jealous.")
YUKI = _c("yuki", 0.55, "Yuki just started at the planetarium, she loves it.")
GARDEN = _c("garden", 0.52, "I spent the whole weekend weeding the garden.")
QUESTION = "Where is Yuki going on her trip?"


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Which city is Percival in now? I feel like you'd know.", {"percival"}),
        ("Quick one about Mateo: what present did Mateo give?", {"mateo"}),
        ("What's Yusuf's job again?", {"yusuf"}),
        ("Remind me when Imogen heads off to Lisbon?", {"imogen", "lisbon"}),
        ("What's my Wi-Fi password?", {"wi-fi"}),
        # words that open a sentence or a clause, the pronoun, days and months are not names
        ("Settle something for me. Which course has Priyanka been going to?", {"priyanka"}),
        ("Okay, testing my memory. Quick one: When's our anniversary?", set()),
        ("What have I got on February 14? OK thanks.", set()),
        ("Is it on Monday or in May?", set()),
        ("What do I do on Sundays? And Wednesdays with Odile?", {"odile"}),  # a weekday's plural is a habit
        ("Caroline: I made a window.\nMelanie: Lovely, Caroline!", {"caroline"}),  # labels are not in the text's names
    ],
)
def test_names_are_capitalised_words_that_do_not_open_a_clause(text: str, expected: set[str]):
    assert names(text) == expected


def test_a_question_typed_in_lower_case_names_what_the_candidates_name():
    """No capitals to tell its names by: its words that a candidate says as a name are its names."""
    lower = "where is yuki going on her trip?"
    yuki = _c("yuki", 0.55, "My friend Yuki just started at the planetarium, she loves it.")
    assert names(lower) == set() and asked_names(lower, [WREN, GARDEN, yuki]) == {"yuki"}
    assert asked_names("where's yuki's trip to?", [yuki]) == {"yuki"}  # a possessive is dropped
    assert asked_names(lower, [WREN, GARDEN]) == set()  # no candidate says Yuki
    assert asked_names("did i weed the garden?", [GARDEN]) == set()  # the note says it in lower case: not a name
    # a capital that opens a sentence tells nothing, as in :func:`names`; a speaker's label does
    assert asked_names(lower, [YUKI]) == set()
    assert asked_names(lower, [_c("y", 0.5, "I start at the planetarium.", speaker="Yuki")]) == {"yuki"}
    # a question that opens with a capital keeps its capitals as the signal
    assert asked_names("Where is yuki going on her trip?", [yuki]) == set()
    assert asked_names(QUESTION, [yuki]) == {"yuki"}
    # only the decision to recall reads them (ask_on_names): match_names keeps to capitals, as a
    # word a note capitalises by accident ("FAFSA") would make the other notes give way
    chosen, _ = choose_candidates([WREN, GARDEN, yuki], RecallConfig(memories=2), question=lower)
    assert {c.id for c in chosen} == {"wren", "garden"}


def test_a_name_is_said_as_a_whole_word_case_aside():
    assert says("Yuki's new job", "yuki") and says("lunch with YUKI", "yuki")
    assert not says("Yukiko called", "yuki") and not says("the wi-fi-extender", "wi")


def test_a_note_about_someone_else_gives_its_place_to_one_that_says_the_name():
    chosen, reason = choose_candidates([WREN, GARDEN, YUKI], RecallConfig(memories=2), question=QUESTION)
    assert reason is None
    assert {c.id for c in chosen} == {"garden", "yuki"}  # Wren's trip gives way; the note naming nobody stays
    off = RecallConfig(memories=2, match_names=False)
    assert {c.id for c in choose_candidates([WREN, GARDEN, YUKI], off, question=QUESTION)[0]} == {"wren", "garden"}
    assert {c.id for c in choose_candidates([WREN, GARDEN, YUKI], RecallConfig(memories=2))[0]} == {"wren", "garden"}


def test_the_place_stays_empty_when_no_other_candidate_says_the_name():
    other = _c("other", 0.4, "Declan bought a telescope.")
    chosen, _ = choose_candidates([WREN, YUKI, other], RecallConfig(memories=2), question=QUESTION)
    assert [c.id for c in chosen] == ["yuki"]


@pytest.mark.parametrize(
    "candidates, question, why",
    [
        ([WREN, GARDEN], QUESTION, "no candidate says Yuki: the memory never heard the name (or the notes use a relation)"),
        ([WREN, YUKI], "Where am I going on my trip?", "the question names nobody"),
        ([GARDEN, YUKI], QUESTION, "the note that names nobody may still be about the subject"),
    ],
)
def test_nothing_changes(candidates: list[MemoryCandidate], question: str, why: str):
    assert keep_named(candidates[:1], candidates, question) == candidates[:1], why


def test_a_speaker_label_names_who_a_note_is_about():
    """LoCoMo's category 5: the note says what Caroline made; the question asks what Melanie made."""
    caroline = _c("c", 0.8, "I made a stained glass window for a local church.", speaker="Caroline")
    melanie = _c("m", 0.5, "I painted a lake sunrise last year.", speaker="Melanie")
    question = "What did Melanie make for a local church?"
    assert about_someone_else(caroline, {"melanie"}) and not about_someone_else(melanie, {"melanie"})
    assert [c.id for c in keep_named([caroline], [caroline, melanie], question)] == ["m"]
    # an exchange labelled with the asked speaker is about them too; a role is not a name
    exchange = _c("x", 0.8, "Caroline: I made a window for the church.\nMelanie: Lovely!", speaker="Caroline")
    assert not about_someone_else(exchange, {"melanie"})
    user = _c("u", 0.8, "I made a window for the church.", speaker="User")
    assert not about_someone_else(user, {"melanie"})


def test_the_chosen_notes_never_grow_and_come_from_the_candidates_property():
    rng = random.Random(7)
    people = ["Wren", "Yuki", "Declan", "Mateo"]
    for _ in range(300):
        candidates = [
            _c(f"c{i}", 1 - i / 10, f"{rng.choice(['My friend ', 'I think ', ''])}{rng.choice(people + ['it'])} "
                                    f"{rng.choice(['moved', 'bought a bike', 'is away'])}.")
            for i in range(rng.randint(1, 6))
        ]  # fmt: skip
        memories = rng.randint(1, 3)
        question = f"What did {rng.choice(people)} do?"
        chosen, _ = choose_candidates(candidates, RecallConfig(memories=memories, newest_wins=False), question=question)
        assert 1 <= len(chosen) <= memories  # a candidate that says the name is kept or fills a place
        assert {c.id for c in chosen} <= {c.id for c in candidates}
        asked = names(question)
        if any(says(c.text, n) for c in candidates for n in asked):  # the memory knows the name
            assert not any(about_someone_else(c, asked) for c in chosen)


def test_match_names_must_be_a_bool():
    with pytest.raises(ValueError, match="match_names must be True or False"):
        RecallConfig(match_names="yes")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "text, name, expected",
    [
        ("Evening! My boss Siobhan has a big birthday coming up.", "siobhan", {"boss"}),
        ("Yara, my sister, has a birthday on June 3rd.", "yara", {"sister"}),
        ("Dmitri (my cousin) flies out to Palermo on Monday.", "dmitri", {"cousin"}),
        ("It's my uncle Rohan's birthday on 1st April.", "rohan", {"uncle"}),
        ("My brother-in-law Tom left.", "tom", {"brother-in-law"}),
        ("Tom left early.", "tom", set()),
    ],
)
def test_relations_said_next_to_a_name(text: str, name: str, expected: set[str]):
    assert relations(text, name) == expected


def test_a_note_that_says_the_relation_instead_of_the_name_stays():
    """"My boss's flat in Osaka" answers a question about Siobhan when another note says "my boss Siobhan"."""
    flat = _c("flat", 0.8, "My boss's flat in Osaka has the most ridiculous view, and Thiago bought a Land Rover.")
    party = _c("party", 0.6, "Evening! My boss Siobhan has a big birthday coming up in October.")
    question = "What city did Siobhan end up in?"
    assert {c.id for c in keep_named([flat, party], [flat, party], question)} == {"flat", "party"}
    assert says_relation("my sister lives in Porto", "sister") and says_relation("My boss's flat", "boss")
    # "my friend Wren" names Wren: it is not the friend asked about
    wren = _c("wren", 0.9, "My friend Wren is off to Lake Bled next month.")
    yuki = _c("yuki", 0.5, "My friend Yuki just started at the planetarium.")
    assert [c.id for c in keep_named([wren], [wren, yuki], "Where is Yuki going on her trip?")] == ["yuki"]


def test_a_phrase_before_a_colon_is_not_a_speaker():
    note = _c("n", 0.8, "Quick question: is the garden centre open late?")
    assert not about_someone_else(note, {"yuki"})  # it names nobody: it stays
    labelled = _c("l", 0.8, "Wren: I'm off to Lake Bled.")
    assert about_someone_else(labelled, {"yuki"})


def test_a_typographic_apostrophe_does_not_make_a_name():
    """iPhones type "I’m": it was a name until 2026-12-07, and the note that held the answer gave its
    place to one that named Tom (a reviewer)."""
    assert names("For his birthday I got him a vintage watch, and honestly I’m proud of it.") == set()
    assert names("Honestly I’ve no idea, but Tom’s coming over.") == {"tom"}


def test_a_name_with_a_typographic_apostrophe_is_the_same_name():
    """"O’Neill" asked was not "O'Neill" written (a third review, 2026-12-07)."""
    from recall_core.decoding.names import says

    assert names("Where does O’Neill live?") == {"o'neill"} == names("My neighbour O'Neill lives here.")
    assert says("My neighbour O'Neill lives in Cork.", "o’neill") and says("I told O’Neill so.", "o'neill")

"""benchmarks.note_perturbations: the notes of each condition, the fact and the other notes found, the tally."""

from __future__ import annotations

import pytest

from benchmarks.note_perturbations import (
    CONDITIONS,
    TEMPLATES,
    Condition,
    distinct,
    main,
    markdown,
    rendered,
    split_candidates,
    tally,
)
from recall_core import RecallConfig
from recall_core.training.families.base import Question
from recall_core.types import MemoryCandidate

QUESTION = Question(key="q", user_id="u", fact="gym", text="Which gym am I at now?", answers=("Crunch",),
                    stale=("Planet Fitness",), evidence=((2, 0),))  # fmt: skip


def candidate(i: int, text: str, covers: str = "") -> MemoryCandidate:
    meta = {"timestamp": f"2024-0{i + 1}-01T10:00", "role": "user", **({"covers": covers} if covers else {})}
    return MemoryCandidate(id=f"m{i}", score=0.9 - 0.1 * i, text=text, metadata=meta)


def test_each_condition_places_the_fact_and_counts_its_notes():
    others = ["o1", "o2", "o3", "o4", "o5"]
    assert Condition("x", 1, "first").arrange("F", []) == ["F"]
    assert Condition("x", 4, "first").arrange("F", others) == ["F", "o1", "o2", "o3"]
    assert Condition("x", 4, "last").arrange("F", others) == ["o1", "o2", "o3", "F"]
    assert Condition("x", 2, None).arrange("F", others) == ["o1", "o2"]
    assert Condition("x", 6, "last").arrange("F", others[:4]) is None  # too few other notes: left out
    assert Condition("x", 2, "first").arrange(None, others) is None
    for condition in CONDITIONS:
        arranged = condition.arrange("F", others)
        assert arranged is not None and len(arranged) == condition.notes
        assert arranged.count("F") == (0 if condition.fact_at is None else 1)
        assert condition.template in TEMPLATES


def test_the_fact_is_the_best_note_naming_the_answer_and_the_others_name_no_value():
    found = [candidate(0, "I lift at Planet Fitness on Mondays."), candidate(1, "Switched gyms: Crunch now."),
             candidate(2, "My run plan has four days."), candidate(3, "Crunch is closer to the office."),
             candidate(4, "I swim on Fridays.")]  # fmt: skip
    fact, others = split_candidates(QUESTION, found)
    assert fact.id == "m1"
    assert [c.id for c in others] == ["m2", "m4"]  # neither the answer nor the earlier value


def test_a_candidate_covering_turns_already_found_is_passed_over_in_the_search_order():
    found = [candidate(0, "Assistant: Which gym?\nUser: Crunch now.", covers="t1,t2"),
             candidate(1, "Crunch now.", covers="t2"), candidate(2, "I swim on Fridays.")]  # fmt: skip
    assert [c.id for c in distinct(found, RecallConfig())] == ["m0", "m2"]


def test_the_templates_show_the_date_and_speaker_or_not():
    note = candidate(0, "Crunch now.")
    config = RecallConfig()
    assert rendered(note, "dated", config) == "[1 January 2024] User: Crunch now."
    assert rendered(note, "undated", config) == "User: Crunch now."
    assert rendered(note, "no speaker", config) == "[1 January 2024] Crunch now."
    assert rendered(note, "text only", config) == "Crunch now."


def test_tally_and_table_count_each_condition():
    def reading(correct=False, stale=False, abstained=False):
        return {"reply": "", "correct": correct, "stale": stale, "abstained": abstained}

    records = [{"readings": {"tuned": {"1 note": reading(correct=True), "2 other notes only": reading(abstained=True)}}},
               {"readings": {"tuned": {"1 note": reading(stale=True)}}}]  # fmt: skip
    counts = {row["condition"]: row for row in tally(records, "tuned")}
    assert counts["1 note"] == {"condition": "1 note", "questions": 2, "facts": 1, "stale": 1, "abstained": 0,
                                "fact_given": True}  # fmt: skip
    assert counts["2 other notes only"]["abstained"] == 1 and not counts["2 other notes only"]["fact_given"]
    assert counts["6, fact last"]["questions"] == 0
    table = markdown({"tallies": {"tuned": tally(records, "tuned")}, "no_fact_note": 1, "memory_questions": 3})
    assert "| 1 note | 2 | 1 · 1 · 0 |" in table
    assert "| 2 other notes only | 1 | 0 · 0 · 1 (right) |" in table
    assert "left out): 1 of 3" in table


def test_leaving_out_the_shipped_model_needs_another_reader(capsys):
    with pytest.raises(SystemExit):
        main(["--no-tuned"])
    assert "--no-tuned needs --plain or --adapter" in capsys.readouterr().err

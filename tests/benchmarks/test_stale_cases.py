"""``benchmarks.stale_cases``: each stale reply put in the case its notes show, on constructed notes
and on a constructed run of a real family (its earlier values generated again)."""

from __future__ import annotations

import json

import pytest

from benchmarks import stale_cases
from benchmarks.heldout import EVAL_SEED, asked_families
from benchmarks.stale_cases import CASES, case_of, split_notes

NEW = "[8 April 2024] User: switched gyms. crunch now, closer to office."
OLD = "[15 January 2024] User: i lift mon/wed at planet fitness 5:30am."
CHANGE = "[8 September 2024] User: Mum's do has moved to the 19th, because of a wedding on the 12th."


@pytest.mark.parametrize(
    ("notes", "reply", "case"),
    [
        ([OLD], "Planet Fitness.", CASES[0]),  # the current value never reached the notes
        ([CHANGE], "On the 12th.", CASES[1]),  # the note that says the change holds both
        ([NEW, OLD], "Planet Fitness.", CASES[2]),  # the newer note first, the older one read
        ([OLD, NEW], "Planet Fitness.", CASES[3]),
        ([NEW], "Planet Fitness.", CASES[4]),  # the earlier value from elsewhere
    ],
)
def test_each_case_is_told_by_where_the_values_sit(notes, reply, case):
    current, earlier = (["19th"], ["12th"]) if notes == [CHANGE] else (["Crunch"], ["Planet Fitness"])
    assert case_of(notes, current, earlier, reply) == case


def test_the_earlier_value_the_reply_names_is_the_one_looked_for():
    notes = [NEW, "[2 January 2024] User: before that I was at Gold's Gym.", OLD]
    assert case_of(notes, ["Crunch"], ["Gold's Gym", "Planet Fitness"], "Planet Fitness.") == CASES[2]
    assert case_of(notes, ["Crunch"], ["Gold's Gym", "Planet Fitness"], "Gold's Gym.") == CASES[2]


def test_notes_split_at_dated_notes_for_recall_and_into_what_each_recipe_retrieved():
    two = f"{NEW}\nAssistant: Nice.\n{OLD}"
    assert split_notes({"method": "recall", "notes": two, "note_scores": [0.5, 0.4]}) == [f"{NEW}\nAssistant: Nice.", OLD]
    assert split_notes({"method": "recall", "notes": two, "note_scores": [0.5]}) is None  # unsure: not guessed
    # LangChain's notes split into the exchanges it retrieved, a reply's own blank lines kept in it
    documents = {"user: a\nassistant: b\n\nuser: x", "user: a", "user: c", "user: d"}
    joined = "user: a\nassistant: b\n\nuser: x\n\nuser: c"
    assert split_notes({"method": "langchain", "notes": joined}, documents) == ["user: a\nassistant: b\n\nuser: x", "user: c"]
    assert split_notes({"method": "langchain", "notes": "user: a\n\nuser: e"}, documents) is None  # not its exchanges
    assert split_notes({"method": "recall", "notes": ""}) == []
    # LlamaIndex's notes split between its retrieved message batches; they carry no dates or scores
    block = "<memory>\n<RetrievedMessages>\n<message role='user'>a\n\nb</message>\n\n<message role='user'>c</message>"
    assert split_notes({"method": "llamaindex", "notes": block}) == [  # a message's own blank line stays in it
        "<memory>\n<RetrievedMessages>\n<message role='user'>a\n\nb</message>", "<message role='user'>c</message>"]


def test_a_run_is_read_with_its_questions_generated_again(tmp_path):
    users = asked_families(["handwritten-changes"], EVAL_SEED, 1)["handwritten-changes"]
    question = next(q for u in users for q in u.questions if q.stale)
    row = {"method": "recall", "family": "handwritten-changes", "key": question.key, "kind": "memory",
           "question": question.text, "answers": list(question.answers), "stale_possible": True,
           "notes": f"[1 May 2024] User: it is {question.answers[0]} now, not {question.stale[0]}.",
           "note_scores": [0.6]}  # fmt: skip
    stale = {**row, "reply": f"{question.stale[0]}.", "stale": True, "correct": False}
    current = {**row, "reply": f"{question.answers[0]}.", "stale": False, "correct": True}
    run = {"benchmark": "heldout", "families": ["handwritten-changes"], "seed": EVAL_SEED, "users": 1,
           "rows": [stale, current]}  # fmt: skip
    path = tmp_path / "run" / "heldout.json"
    path.parent.mkdir()
    path.write_text(json.dumps(run))
    assert stale_cases.main([str(path), "--out", str(tmp_path / "out")]) == 0
    got = json.loads((tmp_path / "out" / "stale_cases.json").read_text())["runs"]["run/heldout.json"]["recall"]
    assert (got["changed_facts"], got["current"], got["stale"], got["cases"]) == (2, 1, 1, {CASES[1]: 1})
    assert "| run/heldout.json · recall | 2 | 1 | **1** | 0 | 1 | 0 | 0 | 0 | 0 |" in (tmp_path / "out" / "stale_cases.md").read_text()

"""The statements benchmark: what counts as acknowledging, the cases it makes, and a tiny run."""

from __future__ import annotations

import json

import pytest

from benchmarks import statements
from tests.helpers.tiny import tiny_model


@pytest.mark.parametrize(
    ("reply", "acknowledged", "unknown"),
    [("That's wonderful news!", True, False), ("I don't know.", False, True), (".", False, False),
     ("Congratulations", False, False), ("I'm unable to provide information about that.", False, True)],
)  # fmt: skip
def test_what_counts_as_acknowledging(reply, acknowledged, unknown):
    marks = statements.judged(reply, recalled=False)
    assert (marks["acknowledged"], marks["unknown"]) == (acknowledged, unknown)


def test_the_handwritten_openings_are_first_turns_that_are_not_questions():
    openings = statements.handwritten_openings()
    assert len(openings) >= 30 and not any(text.rstrip().endswith("?") for _, _, text in openings)
    assert any(index > 0 for _, index, _ in openings)
    user, index = next((u, i) for u, i, _ in openings if i > 0)
    earlier = statements.session_turns(user, index)
    assert earlier and {t["session_id"] for t in earlier} == {f"s{i}" for i in range(index)}


def test_a_tiny_run_writes_every_slice(tmp_path):
    model, tokenizer = tiny_model()
    argv = ["--limit", "2", "--tokens", "2", "--out", str(tmp_path), "--no-progress"]
    assert statements.main(argv, models=[("tiny", model, tokenizer)]) == 0
    report = json.loads((tmp_path / "statements.json").read_text())
    slices = {(s["set"], s["memory"]) for s in report["summary"]}
    assert slices == {("heldout", "none"), ("heldout", "new user"), ("handwritten", "none"),
                      ("handwritten", "new user")} | ({("handwritten", "earlier sessions")} & slices)  # fmt: skip
    assert all(s["statements"] <= 2 for s in report["summary"]) and (tmp_path / "statements.png").exists()
    with pytest.raises(ValueError, match="--models"):
        statements.main(["--models", "large", "--out", str(tmp_path)])


def test_other_families_openings_and_a_variant_run_beside_the_defaults(tmp_path):
    openings = statements.handwritten_openings(["handwritten-plans"])
    assert openings and all(user.startswith("handwritten-plans:") for user, _, _ in openings)
    second = statements.handwritten_openings(["handwritten-plans"], turn_index=1)
    assert second and {t for _, _, t in second}.isdisjoint(t for _, _, t in openings)
    model, tokenizer = tiny_model()
    argv = ["--limit", "1", "--tokens", "2", "--out", str(tmp_path), "--no-progress", "--families", "handwritten-plans",
            "--variant", "stm:own_recall_on_statements=False"]  # fmt: skip
    assert statements.main(argv, models=[("tiny", model, tokenizer)]) == 0
    report = json.loads((tmp_path / "statements.json").read_text())
    assert {s["model"] for s in report["summary"]} == {"tiny", "tiny · stm"}
    with pytest.raises(SystemExit):  # argparse refuses a family that is not hand-written, by name
        statements.main(["--families", "passing", "--out", str(tmp_path)])


@pytest.mark.parametrize(
    ("reply", "apology"),
    [("I'm sorry for your loss.", True), ("I’m sorry to hear that.", True), ("  Unfortunately, no.", True),
     ("Sorrowful news indeed.", False), ("Congratulations! I'm sorry I missed it.", False), ("Sorry", True)],
)  # fmt: skip
def test_a_reply_that_opens_with_an_apology_is_marked_beside_acknowledged(reply, apology):
    marks = statements.judged(reply, recalled=False)
    assert marks["apology"] is apology
    if reply.count(" ") >= 1:  # counted beside acknowledging, not taken out of it
        assert marks["acknowledged"]


@pytest.mark.parametrize(("reply", "ran_on"), [("\nuser\nI don't know.", True), ("Great!\nassistant\nOk", True),
                                               ("The user said hi.", False), ("\n", False)])  # fmt: skip
def test_a_reply_that_goes_on_into_a_new_turn_is_marked(reply, ran_on):
    assert statements.judged(reply, recalled=False)["ran_on"] is ran_on


def test_memories_chooses_what_each_statement_is_said_under(tmp_path):
    model, tokenizer = tiny_model()
    argv = ["--limit", "1", "--tokens", "2", "--out", str(tmp_path), "--no-progress", "--memories", "none"]
    assert statements.main(argv, models=[("tiny", model, tokenizer)]) == 0
    report = json.loads((tmp_path / "statements.json").read_text())
    assert {s["memory"] for s in report["summary"]} == {"none"} and all("ran_on" in s for s in report["summary"])
    with pytest.raises(SystemExit):  # argparse refuses a memory it does not know, by name
        statements.main(["--memories", "none,everything", "--out", str(tmp_path)])


def test_turn_takes_several_indices_and_refuses_others_with_the_range():
    assert statements.turn_indices("4,5,6") == [4, 5, 6] and statements.turn_indices("2") == [2]
    for bad in ("7", "-1", "x", ""):
        with pytest.raises(Exception, match="from 0 to 6"):
            statements.turn_indices(bad)

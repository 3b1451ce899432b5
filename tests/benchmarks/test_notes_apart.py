"""benchmarks.notes_apart: a run's notes split one per note, read by the engine one at a time, and the rules' picks."""

from __future__ import annotations

import json

import pytest

from benchmarks.heldout import Call
from benchmarks.notes_apart import NOTE_START, Pinned, main, pick, reading, tally
from recall_core import RecallGenerator
from recall_core.training.families import base
from recall_core.types import RecallQuery


def _reading(text: str, log_p: list[float], correct: bool = False, stale: bool = False) -> dict:
    return {"text": text, "log_p": log_p, "correct": correct, "stale": stale, "abstained": text.startswith("I don't know")}


def test_a_runs_notes_split_at_each_date_label_only():
    notes = "[3 May 2024] User: We moved.\nAssistant: Lovely!\n[1 March 2024] User: Flat in [Leeds] for now."
    assert NOTE_START.split(notes) == ["[3 May 2024] User: We moved.\nAssistant: Lovely!",
                                       "[1 March 2024] User: Flat in [Leeds] for now."]
    assert NOTE_START.split("User: undated.\nUser: another.") == ["User: undated.\nUser: another."]


def test_pinned_returns_its_notes_in_order_up_to_k():
    found = Pinned(["a", "b", "c"]).search(RecallQuery(text="q"), k=2)
    assert [c.text for c in found] == ["a", "b"] and found[0].score > found[1].score


def test_the_rules_pick_as_documented():
    both = _reading("Leeds.", [-1.0])
    newest = _reading("York.", [-0.9, -0.9, -0.1, -0.1])  # newest note: less sure over its first 3 tokens
    oldest = _reading("Leeds.", [-0.5, -0.5, -0.5, -2.0])
    apart = [newest, oldest]
    assert pick("both", both, apart) is both
    assert pick("confident", both, apart) is newest  # mean -0.5 against -0.875
    assert pick("confident_3", both, apart) is oldest  # first 3: -0.63 against -0.5
    assert pick("newest_answers", both, apart) is newest
    assert pick("agreement", both, apart) is oldest  # "Leeds." twice
    assert pick("confident", both, []) is both  # one note: nothing read apart


def test_an_abstention_is_passed_over_unless_every_reading_abstains():
    idk, answer = _reading("I don't know.", [-0.01]), _reading("York.", [-3.0])
    assert pick("confident", answer, [idk, answer]) is answer
    assert pick("newest_answers", answer, [idk, answer]) is answer
    both_idk = [idk, _reading("I don't know.", [-0.5])]
    assert pick("confident", answer, both_idk) is both_idk[0]
    assert pick("agreement", answer, both_idk) is answer  # abstentions never agree a reply in
    with pytest.raises(ValueError, match="rule must be one of"):
        pick("loudest", answer, both_idk)


def test_tally_counts_each_rule_and_the_oracle():
    records = [
        {"kind": "memory", "both": _reading("Leeds.", [-1.0], stale=True),
         "apart": [_reading("York.", [-0.1], correct=True), _reading("Leeds.", [-0.5], stale=True)]},
        {"kind": "memory", "both": _reading("York.", [-1.0], correct=True), "apart": []},
        {"kind": "unanswerable", "both": _reading("I don't know.", [-0.2], correct=True), "apart": []},
    ]  # fmt: skip
    table = tally(records)
    assert table["memory"]["questions"] == {"n": 2}
    assert table["memory"]["both"] == {"correct": 1, "stale": 1, "abstained": 0}
    assert table["memory"]["confident"] == {"correct": 2, "stale": 0, "abstained": 0}
    assert table["memory"]["agreement"] == {"correct": 1, "stale": 1, "abstained": 0}
    assert table["memory"]["any"] == {"correct": 2}
    assert table["unanswerable"]["both"]["abstained"] == 1


def test_reading_runs_the_engine_with_the_pinned_notes_and_scores_every_token(tiny):
    model, tokenizer = tiny
    generator = RecallGenerator(model, tokenizer)
    question = base.Question(key="q0", user_id="u", fact="city", text="Where do I live?", answers=("Leeds",),
                            evidence=((0, 0),))
    call = Call("test", question, system="Be brief.")
    seen = []
    got = reading(generator, call, ["[3 May 2024] User: I live in Leeds."], max_new_tokens=5)
    result = generator.generate(call.messages(), memory=Pinned(["[3 May 2024] User: I live in Leeds."]),
                                max_new_tokens=5, on_recall=seen.append)  # fmt: skip
    assert got["text"] == result.text
    assert 1 <= len(got["log_p"]) <= 5 and all(lp <= 0 for lp in got["log_p"])
    assert seen and seen[0].text == "[3 May 2024] User: I live in Leeds."  # the note as rendered, unchanged
    assert set(got) >= {"correct", "stale", "abstained"}


def test_the_figure_draws_several_runs_from_their_result_files(tmp_path):
    records = [{"kind": "memory", "both": _reading("Leeds.", [-1.0], stale=True),
                "apart": [_reading("York.", [-0.1], correct=True), _reading("Leeds.", [-0.5], stale=True)]}]  # fmt: skip
    files = []
    for name in ("a", "b"):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps({"families": [name], "tally": tally(records)}))
        files.append(str(path))
    figure = tmp_path / "apart.png"
    assert main(["--figure", str(figure), *files]) == {"figure": str(figure), "runs": 2}
    assert figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_run_needs_its_families_and_users(capsys):
    with pytest.raises(SystemExit):
        main(["--run", "heldout.json"])
    assert "--families and --users are required" in capsys.readouterr().err

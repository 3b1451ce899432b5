"""benchmarks.notes_apart: a run's notes split one per note, read by the engine one at a time, and the rules' picks."""

from __future__ import annotations

import json

import pytest
import torch

from benchmarks.heldout import Call
from benchmarks.notes_apart import (
    NOTE_START,
    Pinned,
    main,
    markdown,
    pick,
    plain_prompt,
    prior,
    read_call,
    reading,
    support,
    tally,
)
from recall_core import RecallGenerator
from recall_core.training.families import base
from recall_core.types import RecallQuery


def _reading(text: str, log_p: list[float], correct: bool = False, stale: bool = False, prior: list[float] | None = None) -> dict:
    out = {"text": text, "log_p": log_p, "correct": correct, "stale": stale, "abstained": text.startswith("I don't know")}
    return out if prior is None else {**out, "prior": prior}


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


def test_pmi_picks_the_reading_its_notes_raise_most_over_the_question_alone():
    both = _reading("Leeds.", [-0.2, -0.1], prior=[-0.3, -0.2])  # likely anyway: support 0.1
    newest = _reading("York.", [-0.9, -0.5], prior=[-6.0, -4.0])  # unlikely without the note: support 4.3
    idk = _reading("I don't know.", [-0.01], prior=[-9.0])  # never picked
    assert support(newest) == pytest.approx(4.3)
    assert pick("pmi", both, [newest, idk]) is newest
    assert pick("pmi", both, [idk]) is both
    raised = _reading("Leeds.", [-0.1], prior=[-8.0])  # both notes together raise their reply most
    assert pick("pmi", raised, [newest, idk]) is raised
    longer = _reading("York Minster.", [-0.5, -0.5, -3.0], prior=[-5.0])  # only the token scored both ways counts
    assert support(longer) == pytest.approx(4.5)
    assert support(_reading("York.", [-1.0], prior=[])) == float("-inf")  # nothing scored both ways


def test_a_tally_without_priors_leaves_pmi_out():
    records = [{"kind": "memory", "both": _reading("Leeds.", [-1.0]), "apart": []}]
    assert "pmi" not in tally(records)["memory"]
    scored = [{"kind": "memory", "both": _reading("Leeds.", [-1.0], correct=True, prior=[-2.0]), "apart": []}]
    assert tally(scored)["memory"]["pmi"] == {"correct": 1, "stale": 0, "abstained": 0}
    assert "| pmi |" not in markdown({"tally": tally(records)}) and "| pmi |" in markdown({"tally": tally(scored)})


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


def test_prior_scores_the_reply_after_the_prompt_the_engine_reads_without_notes(tiny):
    model, tokenizer = tiny
    generator = RecallGenerator(model, tokenizer)
    question = base.Question(key="q0", user_id="u", fact="city", text="Where do I live?", answers=("Leeds",),
                            evidence=((0, 0),))
    for system in ("Be brief.", None):  # none: the engine's own system prompt, not the template's
        call = Call("test", question, system=system)
        plain = generator.generate(call.messages(), max_new_tokens=5, return_dict_in_generate=True, output_scores=True)
        prompt = plain.sequences[0][: -len(plain.output.scores)].tolist()
        assert plain_prompt(generator, call) == prompt
        ids = tokenizer.encode("Leeds.", add_special_tokens=False)
        expected = []
        for i, token in enumerate(ids):  # each token's log-probability from a pass over what comes before it alone
            with torch.no_grad():
                logits = model(input_ids=torch.tensor([prompt + ids[:i]])).logits[0, -1].float()
            expected.append(float(torch.log_softmax(logits, dim=-1)[token]))
        assert prior(generator, call, {"text": "Leeds.", "log_p": [0.0] * len(ids)}) == pytest.approx(expected, abs=1e-4)
        assert prior(generator, call, {"text": "Leeds.", "log_p": [0.0]}) == pytest.approx(expected[:1], abs=1e-4)


def test_a_call_is_read_with_both_notes_and_each_alone_or_rescored_from_an_earlier_record(tiny):
    model, tokenizer = tiny
    generator = RecallGenerator(model, tokenizer)
    question = base.Question(key="q0", user_id="u", fact="city", text="Where do I live?", answers=("Leeds",),
                            evidence=((0, 0),))
    call = Call("test", question, system=None)
    row = {"kind": "memory", "reply": "Leeds.",
           "notes": "[3 May 2024] User: We moved to York.\n[1 March 2024] User: I live in Leeds."}  # fmt: skip
    fresh = read_call(generator, call, row, max_new_tokens=3)
    assert len(fresh["apart"]) == 2 and fresh["run_reply"] == "Leeds."
    assert all("prior" in one for one in (fresh["both"], *fresh["apart"]))
    old = {"family": "test", "key": "q0", "kind": "memory", "both": _reading("York.", [-0.5]), "apart": []}
    with pytest.raises(ValueError, match="no reading of test q0"):
        read_call(generator, call, row, max_new_tokens=3, earlier={})
    again = read_call(generator, call, row, max_new_tokens=3, earlier={("test", "q0"): old})
    assert again["both"]["text"] == "York." and again["run_reply"] == "Leeds."  # not read again
    assert len(again["both"]["prior"]) == len(tokenizer.encode("York.", add_special_tokens=False)[:1])


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

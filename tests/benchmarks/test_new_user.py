"""The new-user benchmark: a tiny run of the whole pipeline, and what counts as "does not know"."""

from __future__ import annotations

import json

import pytest
from transformers import LogitsProcessor, LogitsProcessorList

from benchmarks import new_user
from recall_core.training.prompts import general_prompts
from tests.helpers.tiny import tiny_model


class _AskFirst(LogitsProcessor):
    """The reply's first token is ``<recall>``: a tiny stand-in for the tuned model's habit."""

    def __init__(self, recall_id: int) -> None:
        self.recall_id, self.start = recall_id, None

    def __call__(self, input_ids, scores):
        self.start = input_ids.shape[1] if self.start is None else self.start
        if input_ids.shape[1] == self.start:
            scores = scores.clone()
            scores[:, self.recall_id] += 1e4
        return scores


def test_a_tiny_run_asks_every_question_of_a_user_with_no_memories(tmp_path):
    from recall_core import RecallGenerator
    from recall_core.memory import HashEncoder

    model, tokenizer = tiny_model("llama")

    class Asking(RecallGenerator):
        def generate(self, messages, **kwargs):
            processors = LogitsProcessorList([_AskFirst(self.model.config.recall_token_id)])
            return super().generate(messages, logits_processor=processors, **kwargs)

    argv = ["--users", "1", "--limit", "3", "--max-new-tokens", "4", "--out", str(tmp_path), "--no-progress",
            "--general", "2"]
    assert new_user.main(argv, generator=Asking(model, tokenizer), encoder=HashEncoder(64)) == 0
    report = json.loads((tmp_path / "new_user.json").read_text())
    results = report["results"]
    assert list(results) == ["default", "bare", "model"] and report["model"] == "tuned"
    assert all(r["questions"] == 3 and r["asked"] == 1.0 for r in results.values())
    # The model's own <recall> found nothing: the empty notes went in, except where they are off.
    assert all(x["injected_tokens"] > 0 for x in results["default"]["replies"] + results["model"]["replies"])
    assert all(x["injected_tokens"] == 0 for x in results["bare"]["replies"])
    assert results["bare"]["options"] == {"empty_notes": None}
    assert "| default | 3 |" in (tmp_path / "new_user.md").read_text()
    assert (tmp_path / "new_user.png").stat().st_size > 1000  # the shares drawn
    general = results["default"]["general"]  # the new user's prompts that need no memory, asked too
    assert general["questions"] == 2 and [r["question"] for r in general["replies"]] == general_prompts("heldout", n=2)


@pytest.mark.parametrize(
    ("reply", "says"),
    [("I don't know.", True), ("I'm unable to provide information about your sister's birthday.", True),
     ("I do not have any information about that.", True), ("You play the bassoon.", False),
     ("am!am!am!", False), ("I know a lot about dogs.", False)],
)  # fmt: skip
def test_what_counts_as_saying_it_does_not_know(reply, says):
    assert bool(new_user.DONT_KNOW.search(reply)) is says


@pytest.mark.parametrize(("variant", "named"), [("x:recall_policy=sometimes", "recall_policy must be one of"),
                                               ("x:recall_policy", "field=value"), ("x:no_such=1", "no_such")])  # fmt: skip
def test_a_bad_variant_is_named_before_the_model_loads(variant, named, capsys):
    with pytest.raises(SystemExit):
        new_user.parse_args(["--variant", variant])
    assert named in capsys.readouterr().err


def test_families_ask_held_out_questions_at_the_evaluation_seed():
    """``--families``: the questions of families no training saw, not the training generator's."""
    from benchmarks.heldout import ASKED_FAMILIES, EVAL_SEED

    args = new_user.parse_args(["--families", "passing,handwritten", "--users", "1"])
    expected = [q.text for name in ("passing", "handwritten") for u in ASKED_FAMILIES[name].generate(EVAL_SEED, users=1)
                for q in u.questions]  # fmt: skip
    asked = new_user.questions_of(args)
    assert asked == expected and asked
    assert not set(asked) & set(new_user.questions_of(new_user.parse_args(["--users", "1"])))
    assert new_user.model_name(new_user.parse_args(["--adapter", "DIR"])) == "candidate"


@pytest.mark.parametrize(("argv", "named"), [(["--families", "passing,nope"], "--families must name"),
                                            (["--families", ","], "--families must name"),
                                            (["--plain", "--adapter", "DIR"], "exclude each other")])  # fmt: skip
def test_bad_families_or_models_are_named(argv, named, capsys):
    with pytest.raises(SystemExit):
        new_user.parse_args(argv)
    assert named in capsys.readouterr().err

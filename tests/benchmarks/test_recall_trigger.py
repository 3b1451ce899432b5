"""The trigger-quality benchmark: a tiny run of the whole pipeline, and its arguments."""

from __future__ import annotations

import json

import pytest

from benchmarks import recall_trigger
from tests.helpers.tiny import tiny_model


def test_a_tiny_run_writes_the_result_schema(tmp_path):
    from recall_core import RecallGenerator
    from recall_core.memory import HashEncoder

    model, tokenizer = tiny_model("llama")
    argv = ["--users", "1", "--limit", "3", "--general", "2", "--policies", "model,uncertainty,auto",
            "--thresholds", "0.01,1000", "--max-new-tokens", "4", "--profile", "--out", str(tmp_path), "--no-progress"]  # fmt: skip
    assert recall_trigger.main(argv, generator=RecallGenerator(model, tokenizer), encoder=HashEncoder(64)) == 0
    result = json.loads((tmp_path / "recall_trigger.json").read_text())
    assert result["benchmark"] == "recall_trigger" and result["schema_version"] == 1
    summary = result["summary"]
    assert list(summary) == ["model", "uncertainty@0.01", "uncertainty@1000", "auto"]
    for s in summary.values():
        assert s["memory_questions"] == 3 and s["general_prompts"] == 2
    assert len(result["rows"]) == 4 * 5
    # A threshold every step exceeds fires everywhere; one none does, nowhere; the placed marker
    # always fires before the reply.
    low, high, auto = summary["uncertainty@0.01"], summary["uncertainty@1000"], summary["auto"]
    assert low["fired_memory"] == low["fired_general"] == 1.0 and low["recalls_per_memory_question"] >= 1
    assert high["fired_memory"] == high["fired_general"] == 0.0 and high["recalls_per_memory_question"] == 0
    assert auto["fired_first_memory"] == auto["fired_first_general"] == 1.0
    assert all(r["triggers"] == ["uncertainty"] * r["recalls"] for r in result["rows"] if r["config"] == "uncertainty@0.01")
    injected = [r for r in result["rows"] if r["config"] == "uncertainty@0.01" and r["injected"]]
    assert injected and all(r["processed_tokens"] > r["prompt_tokens"] for r in injected)
    assert result["configs"]["uncertainty@0.01"]["uncertainty_threshold"] == 0.01
    profile = result["entropy_profile"]
    assert profile["memory"]["replies"] == 3 and profile["general"]["replies"] == 2
    assert profile["memory"]["thresholds"]["0.01"]["fires"] == 1.0 and profile["general"]["thresholds"]["1000"]["fires"] == 0.0
    assert (tmp_path / "recall_trigger.md").read_text().startswith("| policy |")
    assert (tmp_path / "recall_trigger.png").stat().st_size > 10_000


@pytest.mark.parametrize("argv, message", [(["--thresholds", "0"], "thresholds"), (["--thresholds", "x"], "thresholds"),
                                           (["--policies", "sometimes"], "policies")])  # fmt: skip
def test_bad_arguments_name_the_option(argv, message, capsys):
    with pytest.raises(SystemExit):
        recall_trigger.parse_args(argv)
    assert message in capsys.readouterr().err

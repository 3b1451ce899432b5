"""The ask_on_abstention cost benchmark: a tiny run of the whole script."""

from __future__ import annotations

import json

from benchmarks import ask_check
from recall_core.decoding.abstain import GIVES_UP_TOKENS
from tests.helpers.tiny import tiny_model


def test_a_tiny_run_counts_the_checks_steps_and_times_both_sides(tmp_path):
    from recall_core import RecallGenerator
    from recall_core.memory import HashEncoder

    model, tokenizer = tiny_model("llama")
    argv = ["--prompts", "3", "--new-tokens", "4", "--out", str(tmp_path), "--no-progress"]
    assert ask_check.main(argv, generator=RecallGenerator(model, tokenizer), encoder=HashEncoder(64)) == 0
    result = json.loads((tmp_path / "ask_check.json").read_text())
    assert result["prompts"] == 3 and len(result["rows"]) == 3
    for row in result["rows"]:
        # The tiny model's reply never gives up, so the check only adds greedy steps after the
        # first token: at most GIVES_UP_TOKENS - 1 (its bytes rarely make words that stop it sooner).
        assert not row["on_asked"] and not row["off_asked"]
        assert 0 < row["on_forward_calls"] - row["off_forward_calls"] <= GIVES_UP_TOKENS - 1
        assert row["on_s"] > 0 and row["off_s"] > 0
    assert result["check_steps_mean"] is not None and result["ratio"] > 0
    assert (tmp_path / "ask_check.png").stat().st_size > 0
    assert "| on |" in (tmp_path / "ask_check.md").read_text()


def test_the_refusal_option_reads_at_most_its_budget(tmp_path):
    from recall_core import RecallGenerator
    from recall_core.decoding.abstain import REFUSAL_TOKENS
    from recall_core.memory import HashEncoder

    model, tokenizer = tiny_model("llama")
    argv = ["--option", "ask_on_refusal", "--prompts", "3", "--new-tokens", "4", "--out", str(tmp_path), "--no-progress"]
    assert ask_check.main(argv, generator=RecallGenerator(model, tokenizer), encoder=HashEncoder(64)) == 0
    result = json.loads((tmp_path / "ask_check.json").read_text())
    assert result["option"] == "ask_on_refusal"
    assert all(0 <= r["on_forward_calls"] - r["off_forward_calls"] <= REFUSAL_TOKENS - 1 for r in result["rows"])
    assert "`ask_on_refusal`" in (tmp_path / "ask_check.md").read_text()

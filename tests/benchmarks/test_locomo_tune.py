"""benchmarks/locomo_tune.py at a tiny scale: the tuning questions are kept apart from the reported
sample, and every row of the grid answers them (a tiny random model, the hash encoder)."""

from __future__ import annotations

import json

import pytest

from benchmarks import locomo_tune
from benchmarks.common.locomo_data import load_locomo, stratified_sample
from recall_core import RecallGenerator
from tests.benchmarks.locomo_files import write_locomo
from tests.helpers.tiny import tiny_model


def test_the_tuning_questions_are_not_the_reported_ones(tmp_path):
    path = write_locomo(tmp_path / "locomo.json")
    questions = [q for c in load_locomo(path) for q in c.questions]
    reported = {q.key for q in stratified_sample(questions, 3, 0)}
    tuning = locomo_tune.tuning_questions(path, 2, 3, 0)
    assert len(tuning) == 2 and not reported & {q.key for q in tuning}


@pytest.mark.parametrize("grid", ["quick", "layout"])
def test_each_row_of_the_grid_answers_the_same_questions(tmp_path, capsys, grid):
    path = write_locomo(tmp_path / "locomo.json")
    argv = ["--grid", grid, "--questions", "3", "--report-sample", "2", "--data", str(path), "--encoder", "hash",
            "--max-new-tokens", "3", "--no-progress", "--out", str(tmp_path / "out")]  # fmt: skip
    assert locomo_tune.main(argv, generator=RecallGenerator(*tiny_model("llama"))) == 0
    result = json.loads((tmp_path / "out" / "locomo_tune.json").read_text())
    assert len(result["questions"]) == 3
    assert [c["config"] for c in result["configs"]] == [name for name, _, _ in locomo_tune.GRID[grid]]
    assert all(c["questions"] == 3 for c in result["configs"])
    recall_rows = [c for c in result["configs"] if c["method"] == "recall"]
    assert recall_rows and all(c["injected_tokens"]["mean"] > 0 for c in recall_rows)
    assert (tmp_path / "out" / "locomo_tune.md").read_text().startswith("| configuration |")
    printed = capsys.readouterr().out
    assert all(name in printed for name, _, _ in locomo_tune.GRID[grid])

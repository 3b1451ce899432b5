"""benchmarks.standing: issue 19's goals read family by family over several heldout runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchmarks.standing import main, parse_args, run
from tests.benchmarks.test_paired import _run


def _row(method: str, family: str, key: str, kind: str = "memory", correct: bool = False, stale: bool = False,
         stale_possible: bool = False, unknown_with_answer: bool = False) -> dict[str, Any]:  # fmt: skip
    return {"method": method, "family": family, "key": key, "kind": kind, "correct": correct, "stale": stale,
            "stale_possible": stale_possible, "unknown_with_answer": unknown_with_answer, "notes_hold_answer": True,
            "fired": None, "processed_tokens": 100 if method == "recall" else 300,
            "ttft_s": 1.0 if method == "recall" else 2.0}  # fmt: skip


# Family "x": recall answers 3, the recipe 2 (1.5x: met); recall is stale on one changed fact, the
# recipe on none (missed). Family "y": recall 2, the recipe 0; recall says "I don't know." with the
# answer on one of its 3 questions (33%: missed).
ROWS = [
    _row("recall", "x", "q1", correct=True), _row("langchain", "x", "q1", correct=True),
    _row("recall", "x", "q2", correct=True), _row("langchain", "x", "q2", correct=True),
    _row("recall", "x", "q3", correct=True, stale_possible=True), _row("langchain", "x", "q3", stale_possible=True),
    _row("recall", "x", "q4", stale=True, stale_possible=True), _row("langchain", "x", "q4", stale_possible=True),
    _row("recall", "y", "q1", correct=True), _row("langchain", "y", "q1"),
    _row("recall", "y", "q2", correct=True), _row("langchain", "y", "q2"),
    _row("recall", "y", "q3", unknown_with_answer=True), _row("langchain", "y", "q3"),
    _row("recall", "y", "u1", kind="unanswerable", correct=True), _row("langchain", "y", "u1", kind="unanswerable"),
]  # fmt: skip


def _args(*pairs: tuple[Path, Path]) -> list[str]:
    argv: list[str] = []
    for a, b in pairs:
        argv += ["--pair", f"{a}@recall", f"{b}@langchain"]
    return argv


def test_each_family_reads_the_three_goals_on_its_own_counts(tmp_path: Path):
    path = _run(tmp_path, "dev", ROWS)
    result = run(parse_args(_args((path, path))))
    x, y = result["rows"]
    assert (x["set"], x["family"], y["family"]) == ("dev", "x", "y")
    assert (x["a"]["answered"], x["b"]["answered"], x["facts_ratio"], x["facts_met"]) == (3, 2, 1.5, True)
    assert (x["a"]["stale"], x["b"]["stale"], x["stale_met"]) == (1, 0, False)
    assert (x["a"]["current_of_changed"], x["stale_paired"]["only_a"], x["stale_paired"]["of"]) == (1, 1, 2)
    assert x["stale_of_valued"]["of"] == 0  # the recipe gave no value for either changed fact
    assert (y["facts_ratio"], y["facts_met"]) == (None, True)  # the recipe answered none
    assert y["idk_share"] == pytest.approx(1 / 3) and not y["idk_met"]
    assert x["idk_met"] and y["stale_met"]


def test_the_same_questions_in_two_runs_are_pooled_as_two(tmp_path: Path):
    # The same family under another set of system messages: the same keys, other questions asked.
    first, second = _run(tmp_path, "personas", ROWS), _run(tmp_path, "other-kinds", ROWS)
    result = run(parse_args(_args((first, first), (second, second))))
    assert [r["set"] for r in result["rows"]] == ["personas", "personas", "other-kinds", "other-kinds"]
    pooled = result["pooled"]
    assert (pooled["a"]["answered"], pooled["b"]["answered"], pooled["a"]["memory_questions"]) == (10, 4, 14)
    assert (pooled["a"]["stale"], pooled["a"]["stale_possible"], pooled["stale_met"]) == (2, 4, False)
    assert pooled["facts_ratio"] == pytest.approx(2.5)


def test_main_writes_the_table_and_the_figure_and_refuses_a_missing_method(tmp_path: Path, capsys):
    path = _run(tmp_path, "dev", ROWS)
    out = tmp_path / "out"
    assert main([*_args((path, path)), "--out", str(out)]) == 0
    table = capsys.readouterr().out
    assert "| dev · x | 3 · 2 / 4 (1.50x, met)" in table
    assert "| 1 · 0 | 0 · 0 / 0 (p 1.000) | 100 · 300 |" in table  # current value, stale where both gave a value, tokens
    assert "| dev · y | 2 · 0 / 3 (-, met) | 1 (33.3%, **missed**)" in table
    assert "| **all** | 5 · 2 / 7 (2.50x, met)" in table
    assert {p.name for p in out.iterdir()} == {"standing.json", "standing.md", "standing.png"}
    assert main(["--pair", f"{path}@recall", f"{path}@nope", "--out", str(out)]) == 2
    assert "holds no rows of method 'nope'" in capsys.readouterr().err


def test_standing_counts_only_the_questions_both_methods_were_asked():
    """Until 2026-12-06 A asking 10 questions and B 5 gave a ratio of 5.0 where the shared ones give 2.5."""
    from benchmarks.standing import standing

    a = {("f", f"q{i}"): _row("recall", "f", f"q{i}", correct=i < 5) for i in range(10)}
    b = {("f", f"q{i}"): _row("langchain", "f", f"q{i}", correct=i < 2) for i in range(5)}
    for i in range(5, 10):
        a[("f", f"q{i}")]["correct"] = True
    got = standing(a, b)
    assert (got["a"]["answered"], got["b"]["answered"], got["facts_ratio"]) == (5, 2, 2.5)


def test_a_question_asked_under_another_system_message_is_not_paired():
    from benchmarks.paired import compare

    a = {("f", "q1"): {**_row("recall", "f", "q1"), "system": "You are a pirate."}}
    b = {("f", "q1"): {**_row("langchain", "f", "q1"), "system": "You are a helpful assistant."}}
    with pytest.raises(ValueError, match="asked differently in the two runs .system."):
        compare(a, b)

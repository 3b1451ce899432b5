"""benchmarks.paired: two methods of heldout runs compared question by question, per set and pooled."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks.paired import compare, main, pooled, rows_of, sign_test


def _row(method: str, key: str, kind: str = "memory", correct: bool = False, stale: bool = False,
         stale_possible: bool = False, unknown_with_answer: bool = False, family: str = "f") -> dict[str, Any]:  # fmt: skip
    return {"method": method, "family": family, "key": key, "kind": kind, "correct": correct, "stale": stale,
            "stale_possible": stale_possible, "unknown_with_answer": unknown_with_answer}  # fmt: skip


def _run(tmp_path: Path, name: str, rows: list[dict[str, Any]]) -> Path:
    path = tmp_path / name / "heldout.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"benchmark": "heldout", "rows": rows}), encoding="utf-8")
    return path


ROWS = [
    # q1: both right; q2: only recall; q3: only the recipe; q4: recall stale, the recipe right;
    # q5: the recipe "I don't know." with the answer; u1: never said, recall abstains;
    # q6: a changed fact, recall stale and the recipe naming neither value.
    _row("recall", "q1", correct=True), _row("langchain", "q1", correct=True),
    _row("recall", "q2", correct=True), _row("langchain", "q2"),
    _row("recall", "q3"), _row("langchain", "q3", correct=True),
    _row("recall", "q4", stale=True, stale_possible=True), _row("langchain", "q4", correct=True, stale_possible=True),
    _row("recall", "q5", correct=True), _row("langchain", "q5", unknown_with_answer=True),
    _row("recall", "q6", stale=True, stale_possible=True), _row("langchain", "q6", stale_possible=True),
    _row("recall", "u1", kind="unanswerable", correct=True), _row("langchain", "u1", kind="unanswerable"),
    _row("recall", "extra", correct=True),  # asked of one method only: not paired
]  # fmt: skip


def test_the_sign_test_is_the_exact_two_sided_binomial():
    assert sign_test(0, 0) == 1.0
    assert sign_test(3, 3) == 1.0
    assert sign_test(5, 0) == pytest.approx(2 / 32)
    assert sign_test(0, 5) == sign_test(5, 0)
    assert sign_test(8, 0) == pytest.approx(2 / 256)  # the thirty-fourth session's 8 gained, none lost: p = 0.008
    assert sign_test(10, 9) == 1.0


def test_each_measure_counts_the_paired_questions_and_the_discordant_ones(tmp_path: Path):
    path = _run(tmp_path, "dev", ROWS)
    c = compare(rows_of(f"{path}@recall"), rows_of(f"{path}@langchain"))
    assert (c["paired"], c["only_in_a"], c["only_in_b"]) == (7, 1, 0)
    assert {k: c["facts"][k] for k in ("a", "b", "of", "only_a", "only_b")} == {"a": 3, "b": 3, "of": 6, "only_a": 2, "only_b": 2}
    assert {k: c["stale"][k] for k in ("a", "b", "of")} == {"a": 2, "b": 0, "of": 2}
    # q6 is stale for recall only because the recipe named no value: stale_of_valued leaves it out
    assert {k: c["stale_of_valued"][k] for k in ("a", "b", "of", "only_a", "only_b")} == {"a": 1, "b": 0, "of": 1, "only_a": 1, "only_b": 0}
    assert (c["idk_with_answer"]["a"], c["idk_with_answer"]["b"]) == (0, 1)
    assert (c["right_idk"]["a"], c["right_idk"]["b"], c["right_idk"]["of"]) == (1, 0, 1)


def test_long_facts_counts_the_questions_whose_every_answer_form_takes_three_words():
    def asked(key: str, answers: list[str], recall: bool, recipe: bool) -> list[dict[str, Any]]:
        return [{**_row(m, key, correct=c), "answers": answers} for m, c in (("recall", recall), ("langchain", recipe))]

    rows = [*asked("corgi", ["a corgi puppy"], False, True),  # three words, articles counted: only the recipe
            *asked("lagos", ["a thriller set in Lagos"], True, True),
            *asked("drone", ["a drone", "drone"], True, False),  # one of its forms is short: not counted
            *asked("kyoto", ["Kyoto"], False, True)]  # fmt: skip
    recall = {(r["family"], r["key"]): r for r in rows if r["method"] == "recall"}
    recipe = {(r["family"], r["key"]): r for r in rows if r["method"] == "langchain"}
    c = compare(recall, recipe)
    assert {k: c["long_facts"][k] for k in ("a", "b", "of", "only_a", "only_b")} == {"a": 1, "b": 2, "of": 2, "only_a": 0, "only_b": 1}
    assert (c["facts"]["a"], c["facts"]["b"], c["facts"]["of"]) == (2, 3, 4)
    # rows written before answers were kept (and the unanswerable ones) count for no long answer
    lone = {("f", "x"): _row("recall", "x", correct=True)}
    assert compare(lone, lone)["long_facts"]["of"] == 0


def test_pooled_adds_the_sets_and_tests_over_all_of_them(tmp_path: Path):
    path = _run(tmp_path, "dev", ROWS)
    one = compare(rows_of(f"{path}@recall"), rows_of(f"{path}@langchain"))
    both = pooled([one, one])
    assert both["facts"]["of"] == 12 and both["facts"]["only_a"] == 4 and both["facts"]["only_b"] == 4
    assert both["facts"]["p"] == sign_test(4, 4) == 1.0
    assert both["idk_with_answer"]["only_b"] == 2 and both["idk_with_answer"]["p"] == pytest.approx(0.5)
    assert both["paired"] == 14


def test_a_bad_spec_or_an_absent_method_is_refused_by_name(tmp_path: Path):
    path = _run(tmp_path, "dev", ROWS)
    with pytest.raises(ValueError, match="PATH@METHOD"):
        rows_of(str(path))
    with pytest.raises(ValueError, match=r"no rows of method 'recall:x'.*\['langchain', 'recall'\]"):
        rows_of(f"{path}@recall:x")


def test_the_command_writes_its_table_files_and_plot(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    dev, fresh = _run(tmp_path, "dev", ROWS), _run(tmp_path, "fresh", ROWS)
    out = tmp_path / "out"
    code = main(["--pair", f"{dev}@recall", f"{dev}@langchain", "--pair", f"{fresh}@recall", f"{fresh}@langchain",
                 "--out", str(out)])  # fmt: skip
    assert code == 0
    printed = capsys.readouterr().out
    assert "| dev@recall against dev@langchain | 3 · 3 / 6 (2 · 2, p = 1.000)" in printed
    assert "| **pooled** | 6 · 6 / 12 (4 · 4, p = 1.000)" in printed
    assert "stale_of_valued ↓ |" in printed
    result = json.loads((out / "paired.json").read_text(encoding="utf-8"))
    assert result["pooled"]["stale"]["a"] == 4 and result["pooled"]["stale_of_valued"]["a"] == 2 and (out / "paired.md").exists() and (out / "paired.png").stat().st_size > 0


def test_the_command_says_what_is_wrong_instead_of_a_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    path = _run(tmp_path, "dev", ROWS)
    assert main(["--pair", f"{path}@recall", f"{path}@nobody", "--out", str(tmp_path / "out")]) == 2
    assert "no rows of method 'nobody'" in capsys.readouterr().err
    assert main(["--pair", f"{path}@recall", f"{path}@langchain", "--pair", f"{path}@recall", f"{path}@langchain",
                 "--out", str(tmp_path / "out")]) == 2  # fmt: skip
    assert "different questions" in capsys.readouterr().err

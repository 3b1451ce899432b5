"""benchmarks.draws: training draws of recipes read as draws, with the agreement over questions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks.draws import agreement, main, parse_args, permutation_p, run


def _run(tmp_path: Path, name: str, answered: list[bool], method: str = "recall", stale: int = 0) -> str:
    """A heldout.json of one method: memory questions q0.. answered as given (the first ``stale``
    of them about a changed fact and answered with the old value), and one never-said question."""
    rows: list[dict[str, Any]] = [
        {"method": method, "family": "f", "key": f"q{i}", "kind": "memory", "correct": hit, "stale": i < stale,
         "stale_possible": i < stale, "unknown_with_answer": False}
        for i, hit in enumerate(answered)
    ]  # fmt: skip
    rows.append({"method": method, "family": "f", "key": "u0", "kind": "unanswerable", "correct": True,
                 "stale": False, "stale_possible": False, "unknown_with_answer": False})  # fmt: skip
    path = tmp_path / name / "heldout.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"benchmark": "heldout", "rows": rows}), encoding="utf-8")
    return f"{path}@{method}"


def test_the_permutation_test_counts_every_split_of_the_pooled_draws():
    # [1, 2] against [3, 4]: of the 6 ways to pick two of four, {1, 2} and {3, 4} are as far apart.
    assert permutation_p([1, 2], [3, 4]) == pytest.approx(2 / 6)
    # Three draws against two: 10 splits; 9 of them are at least as far apart as 91 · 72 · 78 against 79 · 75.
    assert permutation_p([91, 72, 78], [79, 75]) == pytest.approx(0.9)
    assert permutation_p([10, 11, 12], [1, 2]) == pytest.approx(1 / 10)  # the smallest p three against two can give
    assert permutation_p([5, 5], [5, 5]) == 1.0
    assert permutation_p([10, 11], [1, 2]) == pytest.approx(2 / 6)  # the smallest p two against two can give
    assert permutation_p([], [1]) == 1.0


def test_each_draw_is_counted_and_each_recipe_summed(tmp_path: Path):
    a0 = _run(tmp_path, "a0", [True, True, False, False], stale=1)
    a1 = _run(tmp_path, "a1", [True, False, True, False], method="recall:s1", stale=1)
    b0 = _run(tmp_path, "b0", [False, False, False, True])
    result = run(parse_args(["--recipe", "a", a0, a1, "--recipe", "b", b0, "--out", str(tmp_path / "out")]))
    first, second = result["recipes"]
    assert [c["facts"]["hits"] for c in first["draws"].values()] == [2, 2]
    assert first["summary"]["facts"] == {"mean": 2.0, "min": 2, "max": 2, "of": 4}
    assert first["summary"]["stale"] == {"mean": 1.0, "min": 1, "max": 1, "of": 1}  # q0: the old value, in both draws
    assert second["summary"]["right_idk"] == {"mean": 1.0, "min": 1, "max": 1, "of": 1}
    assert first["agreement"] == {0: 1, 1: 2, 2: 1}
    assert set(result["between"]) == {"facts", "long_facts", "stale", "idk_with_answer", "right_idk"}
    assert (tmp_path / "out" / "draws.md").exists() and (tmp_path / "out" / "draws.png").exists()


def test_agreement_counts_memory_questions_by_how_many_draws_answer_them():
    draws = [{("f", "q"): {"kind": "memory", "correct": c}, ("f", "u"): {"kind": "unanswerable", "correct": True}}
             for c in (True, False, True)]  # fmt: skip
    assert agreement(draws, [("f", "q"), ("f", "u")]) == {0: 0, 1: 0, 2: 1, 3: 0}


def test_draws_asked_other_questions_are_refused_by_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    a0 = _run(tmp_path, "a0", [True, False])
    other = _run(tmp_path, "other", [True, False, True])
    assert main(["--recipe", "a", a0, "--recipe", "b", other, "--out", str(tmp_path / "out")]) == 2
    assert "other" in capsys.readouterr().err
    assert main(["--recipe", "a", a0, "--recipe", "a", a0, "--out", str(tmp_path / "out")]) == 2
    assert main(["--recipe", "a", "--out", str(tmp_path / "out")]) == 2

"""benchmarks.serving's report: the weak openings asked again are counted, and the abstention
check's cost is a ratio against ``served-abstain-off`` on the same questions."""

from __future__ import annotations

import pytest

from benchmarks.serving import METHODS, markdown


def _summary(answers_per_s: float, ttft: float, facts: int, dropped: int) -> dict:
    return {"users": 8, "wall_s": 8 / answers_per_s, "answers_per_s": answers_per_s, "tokens_per_s": 10.0,
            "ttft_p50_s": ttft, "ttft_p95_s": ttft * 2, "facts": facts, "questions": 8, "load": (1.0, 1.0, 1.0),
            "dropped": dropped}  # fmt: skip


def test_the_weak_openings_asked_again_are_counted_in_the_table():
    result = {"levels": [8], "summary": {"served": {"8": _summary(2.0, 0.5, 5, 3)},
                                         "served-abstain-off": {"8": _summary(2.5, 0.4, 4, 0)}}}  # fmt: skip
    text = markdown(result)
    assert "| served | 8 | 2.000 | 10.0 | 0.500 | 1.000 | 5/8 | - | - | 3 | 1.0 |" in text
    assert "| served-abstain-off | 8 |" in text and "| 0 | 1.0 |" in text


@pytest.mark.parametrize(("method", "without", "ttft", "ttft_ratio"), [
    ("served", "served-abstain-off", 0.5, "1.25"),  # the weak "I don't know." check after notes
    ("served-model", "served-model-check-off", 0.6, "1.20"),  # "model"'s decision request (ask_on_abstention)
])  # fmt: skip
def test_the_cost_of_a_check_is_reported_against_the_same_run_without_it(method, without, ttft, ttft_ratio):
    assert without in METHODS
    result = {"levels": [8], "summary": {method: {"8": _summary(2.0, ttft, 5, 0)},
                                         without: {"8": _summary(2.5, ttft - 0.1, 4, 0)}}}  # fmt: skip
    text = markdown(result)
    assert f"- 8 users: {method} / {without} answers/s = 0.80" in text
    assert f"- 8 users: {method} / {without} TTFT p50 = {ttft_ratio}" in text
    assert f"- 8 users: {method} / {without} facts = 1.25" in text

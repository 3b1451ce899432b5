"""benchmarks.serving's report: the weak openings asked again are counted, and the abstention
check's cost is a ratio against ``served-abstain-off`` on the same questions."""

from __future__ import annotations

from benchmarks.serving import METHODS, markdown


def _summary(answers_per_s: float, ttft: float, facts: int, dropped: int) -> dict:
    return {"users": 8, "wall_s": 8 / answers_per_s, "answers_per_s": answers_per_s, "tokens_per_s": 10.0,
            "ttft_p50_s": ttft, "ttft_p95_s": ttft * 2, "facts": facts, "questions": 8, "load": (1.0, 1.0, 1.0),
            "dropped": dropped}  # fmt: skip


def test_the_cost_of_the_abstention_check_is_reported_against_the_same_run_without_it():
    assert "served-abstain-off" in METHODS
    result = {"levels": [8], "summary": {"served": {"8": _summary(2.0, 0.5, 5, 3)},
                                         "served-abstain-off": {"8": _summary(2.5, 0.4, 4, 0)}}}  # fmt: skip
    text = markdown(result)
    assert "| served | 8 | 2.000 | 10.0 | 0.500 | 1.000 | 5/8 | - | - | 3 | 1.0 |" in text
    assert "| served-abstain-off | 8 |" in text and "| 0 | 1.0 |" in text
    assert "- 8 users: served / served-abstain-off answers/s = 0.80" in text
    assert "- 8 users: served / served-abstain-off TTFT p50 = 1.25" in text
    assert "- 8 users: served / served-abstain-off facts = 1.25" in text


def test_the_cost_of_the_models_abstention_check_is_reported_against_the_same_run_without_it():
    assert "served-model-check-off" in METHODS
    result = {"levels": [8], "summary": {"served-model": {"8": _summary(2.0, 0.6, 5, 0)},
                                         "served-model-check-off": {"8": _summary(2.5, 0.5, 4, 0)}}}  # fmt: skip
    text = markdown(result)
    assert "- 8 users: served-model / served-model-check-off answers/s = 0.80" in text
    assert "- 8 users: served-model / served-model-check-off TTFT p50 = 1.20" in text
    assert "- 8 users: served-model / served-model-check-off facts = 1.25" in text

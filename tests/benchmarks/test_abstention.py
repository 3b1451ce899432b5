"""benchmarks.abstention: every threshold's counts follow from the plain run and the masked replies."""

from __future__ import annotations

from pathlib import Path

from benchmarks.abstention import markdown, plot, sweep


def _row(key: str, kind: str, *, opens: bool, p: float, correct: bool, held: bool = False, stale: bool = False) -> dict:
    abstained = opens
    return {"key": key, "kind": kind, "family": "f", "opens": opens, "p_opening": p, "correct": correct,
            "abstained": abstained, "notes_hold_answer": held, "unknown_with_answer": held and abstained,
            "stale": stale, "stale_possible": stale, "fired": None, "processed_tokens": 0, "ttft_s": None}


ROWS = [
    _row("a", "memory", opens=True, p=0.3, correct=False, held=True),  # weak, answer in the notes
    _row("b", "memory", opens=False, p=0.01, correct=True, held=True),  # answered
    _row("c", "unanswerable", opens=True, p=0.6, correct=True),  # a confident right "I don't know."
]
MASKED = {
    "a": _row("a", "memory", opens=False, p=0.3, correct=True, held=True),
    "c": _row("c", "unanswerable", opens=False, p=0.6, correct=False),
}


def test_a_threshold_takes_the_masked_reply_only_below_it():
    table = {s["threshold"]: s for s in sweep(ROWS, MASKED)}
    assert (table[0.0]["answered"], table[0.0]["unknown_with_answer"], table[0.0]["abstained_unanswerable"]) == (1, 1, 1)
    assert (table[0.4]["answered"], table[0.4]["unknown_with_answer"], table[0.4]["abstained_unanswerable"]) == (2, 0, 1)
    assert (table[0.7]["answered"], table[0.7]["abstained_unanswerable"]) == (2, 0)


def test_markdown_and_plot(tmp_path: Path):
    result = {"families": ["f"], "sweep": sweep(ROWS, MASKED),
              "abstained": {"notes held the answer": [0.3], "notes did not": [], "never answered": [0.6]}}
    text = markdown(result)
    assert "| 0.4 | 2/2 | 0 | 1/1 | 0/0 | 3 |" in text and "never answered: 0.60" in text
    assert plot(result, tmp_path / "a.png").stat().st_size > 0

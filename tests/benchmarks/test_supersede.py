"""benchmarks.supersede: the rule's precision and recall are counted from the families' own fact ids."""

from __future__ import annotations

from benchmarks.supersede import pairs, scores
from recall_core.memory.encoders import HashEncoder


def test_scores_count_marks_right_marks_and_restatements():
    rows = [(0.95, True, True), (0.92, False, False), (0.7, False, True), (0.4, False, False)]
    table = {row["threshold"]: row for row in scores(rows)}
    assert table[0.9] == {"threshold": 0.9, "fired": 2, "right": 1, "positives": 2, "precision": 0.5, "recall": 0.5}
    assert table[0.7]["fired"] == 3 and table[0.7]["right"] == 1


def test_pairs_cover_every_family_and_leave_questions_out():
    found = pairs(HashEncoder(32), seed=1000, users=1)
    assert found and all(rows for rows in found.values())
    assert all(-1.0001 <= s <= 1.0001 for rows in found.values() for s, _, _ in rows)

"""benchmarks.word_search: both searches timed on the same journal; alone, they agree."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.word_search import main


def test_a_small_run_times_both_and_they_agree_for_a_user_alone(tmp_path: Path) -> None:
    # 9 other users, not the script's 99: the same code, a tenth of the store to build.
    assert main(["--sizes", "1000", "--others", "9", "--queries", "12", "--out", str(tmp_path), "--no-progress"]) == 0
    rows = json.loads((tmp_path / "word_search.json").read_text())["rows"]
    assert [(r["layout"], r["memories"], r["store"]) for r in rows] == [("alone", 1000, 1000), ("among 9 others", 1000, 10000)]
    alone = rows[0]
    assert alone["same_best"] == alone["queries"] == 12  # one user: the same scores as FTS5's bm25()
    assert all(r["fts5_p50"] > 0 and r["per_user_p50"] > 0 for r in rows)
    assert (tmp_path / "word_search.png").stat().st_size > 0 and (tmp_path / "word_search.md").exists()

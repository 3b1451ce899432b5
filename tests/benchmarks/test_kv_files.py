"""benchmarks/kv_files.py: a tiny run writes both figures, and the forget arm leaves every other user's files."""

from __future__ import annotations

import json

from benchmarks import kv_files


def test_a_tiny_run_writes_both_figures(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("RECALL_HOME", str(tmp_path / "home"))
    out = tmp_path / "out"
    assert kv_files.main(["--rounds", "1", "--files", "2", "--tokens", "4", "--users", "2", "--turns", "3",
                          "--no-progress", "--out", str(out)]) == 0  # fmt: skip
    result = json.loads((out / "kv_files.json").read_text())
    assert result["read"]["checked_ms"] > 0 and result["read"]["unchecked_ms"] > 0
    assert result["forget"]["forget_s"] > 0 and result["forget"]["users"] == 2
    assert result["forget"]["close_s"] > 0 and result["forget"]["no_scrub_close_s"] > 0
    assert "checked" in capsys.readouterr().out

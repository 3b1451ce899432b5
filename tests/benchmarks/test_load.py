"""benchmarks/load.py at a bounded scale (issue 23, item 8): the load, soak and crash checks as tests.

- many users on one embedded store: every turn is counted back after a reopen, handles are
  given back on close;
- writers and readers in processes of their own through one ``chroma run``: no error and no
  acknowledged turn lost (marked ``server``);
- SIGKILL inside a session's eviction write: no acknowledged eviction lost, the killed write's
  turns are in the journal under the session's user, ``doctor`` reports them and ``repair``
  indexes them there, another user is untouched;
- concurrent ChatRecall sessions: the benchmark runs and reports its timeline.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from benchmarks import load


def test_many_users_on_one_store(tmp_path: Path):
    result = load.users(12, 5, 4, tmp_path, encoder="hash", show=False)
    assert result["users_found"] == 12 and result["users_with_wrong_count"] == []
    assert [s["users"] for s in result["samples"]] == [0, 4, 8, 12]
    assert all(s["handles"] > 0 and s["rss_mib"] > 0 for s in result["samples"])
    assert result["handles_after_close"] <= result["samples"][0]["handles"] + 2  # the store gives its files back
    assert result["first_search_hits"] == 3
    load.users_plot(result, tmp_path / "users.png")
    assert (tmp_path / "users.png").stat().st_size > 0
    assert "users whose count is not 5 | 0" in load.users_markdown(result)


@pytest.mark.server
def test_writers_and_readers_through_one_server_lose_nothing(tmp_path: Path):
    result = load.server(writers=2, readers=2, seconds=4, folder=tmp_path, users_per_writer=5)
    assert result["crashed"] == [] and result["errors"] == 0, result["error_samples"]
    assert result["acknowledged"] > 0 and result["searches"] > 0
    assert result["lost"] == 0, result["lost_samples"]
    assert result["write_ms"]["p95"] is not None and result["search_ms"]["p95"] is not None


@pytest.mark.parametrize("kill_at", [3])
def test_sigkill_in_a_sessions_eviction_write(tmp_path: Path, kill_at: int):
    (run,) = load.evict_kill(1, tmp_path, kill_at=(kill_at,))["trials"]
    assert run["exit"] == -signal.SIGKILL, run["stderr"]
    assert run["killed_write"] >= 1
    if kill_at > 1:
        assert run["acked"] > 0  # evictions acknowledged before the kill
    assert run["acked_lost"] == 0
    assert run["killed_in_journal"] == run["killed_write"]  # journaled before the index was reached...
    assert run["killed_indexed_before_repair"] == 0 and not run["doctor_ok_before_repair"]  # ...reported...
    assert run["killed_under_ada_after_repair"] == run["killed_write"]  # ...and indexed under the session's user
    assert run["bob_unchanged"] and run["doctor_ok_after"]


def test_concurrent_sessions_run(tmp_path: Path):
    """The threads benchmark runs and reports; that sessions do overlap is
    tests/unit/test_concurrent_generations.py::test_sessions_of_different_threads_run_at_once."""
    result = load.threads(3, 1, 6, tiny=True, torch_threads=1, folder=tmp_path)
    assert result["tokens"] >= 3 and len(result["spans"]) == 3
    assert 0 <= result["thread_switches"] <= result["tokens"] - 1
    load.threads_plot(result, tmp_path / "threads.png")
    json.dumps(result)

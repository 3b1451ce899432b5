"""benchmarks/sessions.py and benchmarks/session_positions.py at a tiny scale: they run, and their
JSON holds what BENCHMARKS.md reports (a tiny random model, a synthetic LoCoMo-shaped file)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from benchmarks import session_conversations, session_positions, sessions
from recall_core import RecallGenerator
from tests.benchmarks.locomo_files import write_locomo
from tests.helpers.tiny import tiny_model


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    return write_locomo(tmp_path_factory.mktemp("locomo") / "synthetic.json")


@pytest.fixture(scope="module")
def generator() -> RecallGenerator:
    model, tokenizer = tiny_model("llama", positions=1024)
    return RecallGenerator(model, tokenizer)


def test_ttft_compares_the_three_arms_on_the_same_turns(data, generator, tmp_path):
    args = sessions.parse_args(["ttft", "--turns", "4", "--data", str(data), "--max-new-tokens", "4", "--cache", "160",
                                "--no-progress", "--out", str(tmp_path)])  # fmt: skip
    result = sessions.run(args, generator)
    rows = result["turns"]
    assert [r["turn"] for r in rows] == [1, 2, 3, 4] and result["compared"] == [2, 4]
    assert all(r["ttft_session"] > 0 and r["ttft_fresh"] > 0 and r["ttft_bounded"] > 0 for r in rows)
    assert rows[-1]["prompt_tokens"] > rows[0]["prompt_tokens"] > rows[-1]["prefilled_session"] > 0
    assert all(r["cache_bounded"] <= 160 for r in rows)
    assert result["ratio_session"] == pytest.approx(rows[-1]["ttft_session"] / rows[1]["ttft_session"])
    assert "goal <= 1.2x" in sessions.markdown("ttft", result)
    assert sessions.plot("ttft", result, tmp_path).stat().st_size > 1000


def test_memory_stays_within_the_bound(data, generator, tmp_path):
    args = sessions.parse_args(["memory", "--tokens", "1500", "--cache", "200", "--reply-every", "3",
                                "--data", str(data), "--no-progress", "--out", str(tmp_path)])  # fmt: skip
    result = sessions.run(args, generator)
    assert result["streamed_tokens"] >= 1500 and result["max_cache_tokens"] <= 200
    assert result["rows"][-1]["evicted_messages"] > 0 and result["peak_rss_bytes"] >= result["rss_at_end"] > 0
    assert "peak RSS" in sessions.markdown("memory", result)
    assert sessions.plot("memory", result, tmp_path).stat().st_size > 1000


def test_the_bounded_session_and_the_full_cache_see_the_same_stream(data, generator, tmp_path):
    args = session_positions.parse_args(["--data", str(data), "--tokens", "5000", "--cache", "300", "--questions", "3",
                                         "--delay", "1", "--recompute", "--max-new-tokens", "4", "--no-progress",
                                         "--out", str(tmp_path)])  # fmt: skip
    result = session_positions.run(args, generator)
    shift, full = result["runs"]
    assert [r["mode"] for r in result["runs"]] == ["shift", "full"]
    # The synthetic stream fits the tiny model's window but not the bound: only the bounded session evicts.
    assert shift["streamed_tokens"] == full["streamed_tokens"] > 300 and shift["evicted_messages"] > 0
    assert shift["peak_cache_tokens"] <= 300 and full["evicted_messages"] == 0
    assert math.isfinite(shift["perplexity"]) and math.isfinite(full["perplexity"])
    assert shift["answers"] and not full["answers"]
    assert all("recompute_score" in a for a in shift["answers"]) and shift["recompute_f1"] is not None
    assert "| shift |" in session_positions.markdown(result)
    assert session_positions.plot(result, tmp_path).stat().st_size > 1000


def test_the_stream_alternates_speakers_and_dates_sessions(data):
    from benchmarks.common.locomo_data import load_locomo

    items = session_positions.stream_messages(load_locomo(data))
    first, second = items[0][0], items[1][0]
    assert first["role"] == "user" and second["role"] == "assistant"
    assert first["content"].startswith("(A new conversation between Ada and Ben.) [")
    assert items[0][1] == "synthetic-1/D1:1"
    assert session_positions.content_span([5, 1, 2, 3, 9], [1, 2, 3]) == (1, 4)


def test_long_sessions_on_the_conversations_benchmark(generator, tmp_path):
    from recall_core.memory import HashEncoder

    args = session_conversations.parse_args(["--seed", "dev", "--users", "1", "--facts", "3", "--cache", "500",
                                             "--max-new-tokens", "4", "--no-progress", "--out", str(tmp_path)])  # fmt: skip
    result = session_conversations.run(args, generator=generator, encoder=HashEncoder(64))
    assert set(result["summary"]) == {"session", "history", "recall"} and result["questions"] == 3
    assert result["evicted_questions"] and set(result["evicted_summary"]) == {"session", "history", "recall"}
    rows = [r for r in result["rows"] if r["method"] == "session"]
    assert len(rows) == 3 and all(r["processed_tokens"] > 0 for r in rows)
    assert "| session |" in (tmp_path / "session_conversations.md").read_text()

"""The chat-reuse benchmark: returning users' sessions, the whole conversation each call, on a tiny model."""

from __future__ import annotations

import json

import pytest

from benchmarks import chat_reuse
from recall_core import RecallGenerator
from recall_core.memory import HashEncoder
from tests.helpers.tiny import tiny_model


def test_returning_sessions_are_later_sessions_of_each_family():
    todo = chat_reuse.returning_sessions(["handwritten", "handwritten-plans"], 2)
    assert len(todo) == 4 and all(index > 0 and said for _, index, said in todo)
    assert {user.split(":")[0] for user, _, _ in todo} == {"handwritten", "handwritten-plans"}


def test_news_and_questions_keep_the_cache_with_and_without_ask_on_statements(tmp_path):
    model, tokenizer = tiny_model("llama", positions=4096)  # the sessions' turns are long
    argv = ["--families", "handwritten-plans", "--sessions", "2", "--turns", "3", "--tokens", "2", "--out", str(tmp_path), "--no-progress",
            "--variant", "on:ask_on_statements=True", "--variant", "off:ask_on_statements=False"]  # fmt: skip
    assert chat_reuse.main(argv, generator=RecallGenerator(model, tokenizer), encoder=HashEncoder(64)) == 0
    result = json.loads((tmp_path / "chat_reuse.json").read_text())
    summary = {s["config"]: s for s in result["summary"]}
    assert set(summary) == {"default", "on", "off"}
    for s in summary.values():
        assert s["later_turns"] > 0 and s["news"] > 0 and s["restarted"] == 0 and s["reused_share"] > 0.5
    assert (tmp_path / "chat_reuse.png").exists() and (tmp_path / "chat_reuse.md").read_text().startswith("| config |")
    with pytest.raises(ValueError, match="--sessions"):
        chat_reuse.main(["--sessions", "0", "--out", str(tmp_path)], generator=RecallGenerator(model, tokenizer))

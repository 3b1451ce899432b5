"""``recall bench heldout --families FILE.json``: your own conversations asked of recall and of the
LangChain and LlamaIndex recipes, end to end on the real default models (the README's command, on
the docs' example)."""

from __future__ import annotations

import json
from pathlib import Path

from recall_core.cli import main

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "conversations.json"


def test_the_readmes_command_asks_your_conversations_of_recall_and_the_recipes(tmp_path, capsys):
    out = tmp_path / "run"
    # The README's command, with replies cut at 16 tokens: the recipes set no stop, so at the default 48
    # their 14 replies took most of this test's 135 s (a token takes about 0.14 s on these 2 cores).
    code = main(["bench", "heldout", "--families", str(EXAMPLE), "--users", "100", "--methods", "recall,langchain,llamaindex",
                 "--max-new-tokens", "16", "--out", str(out), "--no-progress"])  # fmt: skip
    assert code == 0
    result = json.loads((out / "heldout.json").read_text(encoding="utf-8"))
    questions = [q for user in json.loads(EXAMPLE.read_text(encoding="utf-8")) for q in user["questions"]]
    assert result["families"] == [str(EXAMPLE)]
    for method in ("recall", "langchain", "llamaindex"):
        rows = [r for r in result["rows"] if r["method"] == method]
        assert [r["question"] for r in rows] == [q["text"] for q in questions] and all(r["reply"].strip() for r in rows)
        summary = result["summary"][method]["all"]
        assert (summary["memory_questions"], summary["unanswerable"]) == (5, 2)
    # LlamaIndex's notes are what its block retrieved (its Memory's system message), the caller's own
    # system message apart, before it, as LlamaIndex's agents put a system prompt
    llamaindex = [r for r in result["rows"] if r["method"] == "llamaindex"]
    assert all(r["notes"].startswith("<memory>") for r in llamaindex)
    assert all(r["system"] not in r["notes"] for r in llamaindex if r["system"])
    replies = (out / "replies.md").read_text(encoding="utf-8").splitlines()
    assert replies[0] == "| question | answers | recall | langchain | llamaindex |" and len(replies) == 2 + len(questions)
    assert (out / "heldout.png").stat().st_size > 0

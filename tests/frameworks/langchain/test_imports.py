"""The public names of ``langchain_recall``, pinned (as LangChain's partner packages pin theirs)."""

from __future__ import annotations

import langchain_recall

EXPECTED_ALL = ["ChatRecall", "ForceToolCallMiddleware", "RecallLLM", "RecallStore"]


def test_all_imports() -> None:
    assert sorted(langchain_recall.__all__) == sorted(EXPECTED_ALL)
    missing = [name for name in langchain_recall.__all__ if not hasattr(langchain_recall, name)]
    assert not missing, f"langchain_recall.__all__ names what it does not have: {missing}"

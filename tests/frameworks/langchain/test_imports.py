"""The public names of ``langchain_recall``, pinned (as LangChain's partner packages pin theirs)."""

from __future__ import annotations

import langchain_recall

EXPECTED_ALL = ["ChatRecall", "ForceToolCallMiddleware", "RecallLLM", "RecallStore"]


def test_all_imports() -> None:
    assert sorted(langchain_recall.__all__) == sorted(EXPECTED_ALL)
    missing = [name for name in langchain_recall.__all__ if not hasattr(langchain_recall, name)]
    assert not missing, f"langchain_recall.__all__ names what it does not have: {missing}"


def test_the_promised_base_classes_stay() -> None:
    """The package promises a LangChain ``BaseLLM`` and chat model (and a LangGraph store): the base classes are pinned."""
    from langchain_core.language_models import BaseChatModel, BaseLLM
    from langgraph.store.base import BaseStore

    assert issubclass(langchain_recall.RecallLLM, BaseLLM)
    assert issubclass(langchain_recall.ChatRecall, BaseChatModel)
    assert issubclass(langchain_recall.RecallStore, BaseStore)

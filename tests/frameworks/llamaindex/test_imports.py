"""The public names of ``llamaindex_recall``, pinned (as LangChain's partner packages pin theirs)."""

from __future__ import annotations

import llamaindex_recall

EXPECTED_ALL = ["RecallLLM", "RecallMemoryBlock"]


def test_all_imports() -> None:
    assert sorted(llamaindex_recall.__all__) == sorted(EXPECTED_ALL)
    missing = [name for name in llamaindex_recall.__all__ if not hasattr(llamaindex_recall, name)]
    assert not missing, f"llamaindex_recall.__all__ names what it does not have: {missing}"


def test_the_promised_base_classes_stay() -> None:
    """The package promises a LlamaIndex ``CustomLLM`` and memory block: the base classes are pinned."""
    from llama_index.core.llms.custom import CustomLLM
    from llama_index.core.llms.function_calling import FunctionCallingLLM
    from llama_index.core.memory.memory import BaseMemoryBlock

    assert issubclass(llamaindex_recall.RecallLLM, CustomLLM)
    assert issubclass(llamaindex_recall.RecallLLM, FunctionCallingLLM)
    assert issubclass(llamaindex_recall.RecallMemoryBlock, BaseMemoryBlock)

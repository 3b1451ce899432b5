"""LlamaIndex adapters for recall: long-term memory recalled inside generation.

* :class:`RecallLLM` — a ``CustomLLM`` (chat template, recall trace in ``raw``).
* :class:`RecallMemoryBlock` — a ``BaseMemoryBlock`` for ``llama_index.core.memory.Memory``
  that writes turns to a recall ``MemoryStore`` and asks the loop to recall instead of
  pasting memory text into the prompt.

LlamaIndex is an extra of recall-llm: ``pip install "recall-llm[llamaindex]"``.
"""

try:
    import llama_index.core  # noqa: F401  (what this package adapts to)
except ImportError as error:
    raise ImportError(
        'llamaindex_recall needs LlamaIndex (llama-index-core), an extra of recall-llm: '
        'pip install "recall-llm[llamaindex]"'
    ) from error

from .llms import RecallLLM
from .memory import RecallMemoryBlock

__all__ = ["RecallLLM", "RecallMemoryBlock"]

"""LlamaIndex adapters for recall: long-term memory recalled inside generation.

* :class:`RecallLLM` — a ``CustomLLM`` (chat template, recall trace in ``raw``).
* :class:`RecallMemoryBlock` — a ``BaseMemoryBlock`` for ``llama_index.core.memory.Memory``
  that writes turns to a recall ``MemoryStore`` and asks the loop to recall instead of
  pasting memory text into the prompt.
"""

from .llms import RecallLLM
from .memory import RecallMemoryBlock

__all__ = ["RecallLLM", "RecallMemoryBlock"]

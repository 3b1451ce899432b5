"""LlamaIndex adapters for recall: long-term memory recalled inside generation.

* :class:`RecallLLM` — a ``CustomLLM`` (chat template, recall trace in ``raw``).
* :class:`RecallMemoryBlock` — a ``BaseMemoryBlock`` for ``llama_index.core.memory.Memory``
  that writes turns to a recall ``MemoryStore`` and asks the loop to recall instead of
  pasting memory text into the prompt.

LlamaIndex is an extra of recall-llm: ``pip install "recall-llm[llamaindex]"``.
"""

import importlib
import importlib.util
from typing import TYPE_CHECKING, Any

# What this package adapts to, checked without importing it (the import is left to first use).
if importlib.util.find_spec("llama_index") is None or importlib.util.find_spec("llama_index.core") is None:
    raise ImportError(
        'llamaindex_recall needs LlamaIndex (llama-index-core), an extra of recall-llm: '
        'pip install "recall-llm[llamaindex]"'
    )

#: Each public name and the module that defines it, imported on first use (PEP 562): importing
#: the package loads neither the framework nor torch.
_EXPORTS = {
    "RecallLLM": ".llms",
    "RecallMemoryBlock": ".memory",
}

if TYPE_CHECKING:
    from .llms import RecallLLM
    from .memory import RecallMemoryBlock


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'llamaindex_recall' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})


__all__ = ["RecallLLM", "RecallMemoryBlock"]

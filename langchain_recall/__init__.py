"""LangChain adapters for recall: long-term memory recalled inside generation.

* :class:`RecallLLM` — a ``BaseLLM`` (text completion).
* :class:`ChatRecall` — a ``BaseChatModel`` (chat template, writes exchanges to memory; tools,
  structured output).
* :class:`ForceToolCallMiddleware` — makes ``create_agent`` call a tool on a small model
  (needs ``langchain``).
* :class:`RecallStore` — LangGraph's long-term memory (``BaseStore``) over a ``MemoryStore``:
  what an agent stores there is what ``<recall>`` injects (needs ``langgraph``).

Both run a local Hugging Face causal LM through :class:`recall_core.RecallGenerator`; give
them a model name or path (``None``: the embedded offline default), a ``generator=``, or
build one with ``from_model(model, tokenizer)``; and a memory: ``store=`` + ``user_id=``
(a :class:`recall_core.memory.MemoryStore`) or ``memory=`` (anything with ``search``).

LangChain is an extra of recall-llm: ``pip install "recall-llm[langchain]"``.
"""

import importlib
import importlib.util
from typing import TYPE_CHECKING, Any

# What this package adapts to, checked without importing it (the import is left to first use).
if importlib.util.find_spec("langchain_core") is None:
    raise ImportError(
        'langchain_recall needs LangChain (langchain-core), an extra of recall-llm: pip install "recall-llm[langchain]"'
    )

#: Each public name and the module that defines it, imported on first use (PEP 562): importing
#: the package loads neither the framework nor torch.
_EXPORTS = {
    "ChatRecall": ".chat_models",
    "ForceToolCallMiddleware": ".agents",
    "RecallLLM": ".llms",
    "RecallStore": ".stores",
}

if TYPE_CHECKING:
    from .agents import ForceToolCallMiddleware
    from .chat_models import ChatRecall
    from .llms import RecallLLM
    from .stores import RecallStore


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'langchain_recall' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})


__all__ = ["ChatRecall", "ForceToolCallMiddleware", "RecallLLM", "RecallStore"]

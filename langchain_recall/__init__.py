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

try:
    import langchain_core  # noqa: F401  (what this package adapts to)
except ImportError as error:
    raise ImportError(
        'langchain_recall needs LangChain (langchain-core), an extra of recall-llm: pip install "recall-llm[langchain]"'
    ) from error

from .chat_models import ChatRecall
from .llms import RecallLLM

__all__ = ["ChatRecall", "ForceToolCallMiddleware", "RecallLLM", "RecallStore"]


def __getattr__(name: str):
    if name == "RecallStore":  # LangGraph is imported only by those who use its store
        from .stores import RecallStore

        return RecallStore
    if name == "ForceToolCallMiddleware":  # langchain's agents package, imported only by agents
        from .agents import ForceToolCallMiddleware

        return ForceToolCallMiddleware
    raise AttributeError(f"module 'langchain_recall' has no attribute {name!r}")

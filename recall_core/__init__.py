"""recall: a long-term memory that a local Hugging Face LM recalls *during* generation.

When ``<recall>`` appears (in the prompt or generated), the decode loop searches the memory
and injects the chosen memory as input embeddings into the KV cache, then goes on decoding.
"""

from recall_core.config import RecallConfig, SessionConfig
from recall_core.decoding.loop import RecallGenerateOutput, recall_generate
from recall_core.generator import AsyncRecallStream, RecallGenerator, RecallStream
from recall_core.models.loading import ModelLoadError, load_model
from recall_core.session.pool import SessionPool
from recall_core.session.session import AppendResult, RecallSession
from recall_core.tokens import MEMORY_PAD_TOKEN, RECALL_TOKEN, add_recall_tokens
from recall_core.types import Memory, MemoryCandidate, Recall, RecallQuery, RecallResult, SessionReport, Usage

# The memory pulls in Chroma and sentence-transformers: imported on first use only.
_MEMORY_EXPORTS = ("MemoryStore", "MemoryWriter", "UserMemory", "MemoryUnavailableError")


def __getattr__(name: str):
    if name in _MEMORY_EXPORTS:
        from recall_core import memory

        return getattr(memory, name)
    raise AttributeError(f"module 'recall_core' has no attribute {name!r}")


__all__ = [
    *_MEMORY_EXPORTS,
    "AppendResult",
    "AsyncRecallStream",
    "MEMORY_PAD_TOKEN",
    "RECALL_TOKEN",
    "Memory",
    "MemoryCandidate",
    "ModelLoadError",
    "Recall",
    "RecallConfig",
    "RecallGenerateOutput",
    "RecallGenerator",
    "RecallQuery",
    "RecallResult",
    "RecallSession",
    "RecallStream",
    "SessionConfig",
    "SessionPool",
    "SessionReport",
    "Usage",
    "add_recall_tokens",
    "load_model",
    "recall_generate",
]
__version__ = "0.1.0"

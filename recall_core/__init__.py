"""recall: a long-term memory that a local Hugging Face LM recalls *during* generation.

When ``<recall>`` appears (in the prompt or generated), the decode loop searches the memory
and injects the chosen memory as input embeddings into the KV cache, then goes on decoding.

The public names are imported on first use (PEP 562): ``import recall_core`` loads neither
torch nor transformers nor Chroma, so ``recall --help`` and an adapter's import are quick;
the engine is loaded by the first name that needs it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

#: Each public name and the module that defines it.
_EXPORTS = {
    "RecallConfig": "recall_core.config",
    "SessionConfig": "recall_core.config",
    "RecallGenerateOutput": "recall_core.decoding.loop",
    "recall_generate": "recall_core.decoding.loop",
    "AsyncRecallStream": "recall_core.generator",
    "RecallGenerator": "recall_core.generator",
    "RecallStream": "recall_core.generator",
    "ModelLoadError": "recall_core.models.loading",
    "load_model": "recall_core.models.loading",
    "SessionPool": "recall_core.session.pool",
    "AppendResult": "recall_core.session.session",
    "RecallSession": "recall_core.session.session",
    "MEMORY_PAD_TOKEN": "recall_core.tokens",
    "RECALL_TOKEN": "recall_core.tokens",
    "add_recall_tokens": "recall_core.tokens",
    "Memory": "recall_core.types",
    "MemoryCandidate": "recall_core.types",
    "Recall": "recall_core.types",
    "RecallQuery": "recall_core.types",
    "RecallResult": "recall_core.types",
    "SessionReport": "recall_core.types",
    "Usage": "recall_core.types",
    # The memory pulls in Chroma and sentence-transformers.
    "MemoryStore": "recall_core.memory",
    "MemoryWriter": "recall_core.memory",
    "UserMemory": "recall_core.memory",
    "MemoryUnavailableError": "recall_core.memory",
}

if TYPE_CHECKING:  # what type checkers and IDEs see; at run time __getattr__ imports on use
    from recall_core.config import RecallConfig, SessionConfig
    from recall_core.decoding.loop import RecallGenerateOutput, recall_generate
    from recall_core.generator import AsyncRecallStream, RecallGenerator, RecallStream
    from recall_core.memory import MemoryStore, MemoryUnavailableError, MemoryWriter, UserMemory
    from recall_core.models.loading import ModelLoadError, load_model
    from recall_core.session.pool import SessionPool
    from recall_core.session.session import AppendResult, RecallSession
    from recall_core.tokens import MEMORY_PAD_TOKEN, RECALL_TOKEN, add_recall_tokens
    from recall_core.types import (
        Memory,
        MemoryCandidate,
        Recall,
        RecallQuery,
        RecallResult,
        SessionReport,
        Usage,
    )


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'recall_core' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # the next access is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})


__all__ = [
    "AppendResult",
    "AsyncRecallStream",
    "MEMORY_PAD_TOKEN",
    "Memory",
    "MemoryCandidate",
    "MemoryStore",
    "MemoryUnavailableError",
    "MemoryWriter",
    "ModelLoadError",
    "RECALL_TOKEN",
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
    "UserMemory",
    "add_recall_tokens",
    "load_model",
    "recall_generate",
]
__version__ = "0.1.0"

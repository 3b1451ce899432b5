"""recall: a long-term memory that a local Hugging Face LM recalls *during* generation.

When ``<recall>`` appears (in the prompt or generated), the decode loop searches the memory
and injects the chosen memory as input embeddings into the KV cache, then goes on decoding.
"""

from .config import RecallConfig
from .generator import RecallGenerator, RecallStream
from .loop import RecallGenerateOutput, recall_generate
from .models import MEMORY_PAD_TOKEN, RECALL_TOKEN, ModelLoadError, add_recall_tokens, load_model
from .types import Memory, MemoryCandidate, Recall, RecallQuery, RecallResult, Usage

__all__ = [
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
    "RecallStream",
    "Usage",
    "add_recall_tokens",
    "load_model",
    "recall_generate",
]
__version__ = "0.1.0"

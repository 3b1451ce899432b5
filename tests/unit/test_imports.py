"""The public names of ``recall_core`` and ``recall_core.memory``, pinned (as LangChain's partner
packages pin theirs): a name added or dropped here is a change to the API, made on purpose.

The adapters' names are pinned in tests/frameworks/{langchain,llamaindex}/test_imports.py.
"""

from __future__ import annotations

import json

import pytest

import recall_core
import recall_core.memory
from tests.helpers.processes import run_child

EXPECTED_ALL = {
    recall_core: [
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
    ],
    recall_core.memory: [
        "DoctorReport",
        "Encoder",
        "EncoderLoadError",
        "EncoderMismatchError",
        "EncoderOutputError",
        "HashEncoder",
        "IngestReport",
        "JournalDamagedError",
        "JournalWriteError",
        "MemoryIndexWarning",
        "MemoryIsolationError",
        "MemoryLockedError",
        "MemoryReadOnlyError",
        "MemoryRecord",
        "MemoryStore",
        "MemoryStoreError",
        "MemoryUnavailableError",
        "MemoryWriter",
        "RepairReport",
        "SentenceTransformerEncoder",
        "Turn",
        "UserMemory",
        "UserReport",
        "default_encoder",
        "doctor",
        "rebuild_index",
        "repair",
    ],
}


@pytest.mark.parametrize("module", list(EXPECTED_ALL), ids=lambda module: module.__name__)
def test_all_imports(module) -> None:
    assert sorted(module.__all__) == sorted(EXPECTED_ALL[module])
    assert len(set(module.__all__)) == len(module.__all__)
    missing = [name for name in module.__all__ if not hasattr(module, name)]
    assert not missing, f"{module.__name__}.__all__ names what it does not have: {missing}"


def test_the_memory_loads_neither_torch_nor_the_engine(tmp_path) -> None:
    """``recall_core.memory`` on its own (without ``recall_core/__init__``, which loads the engine):
    a store and its writer need no torch, no transformers and no engine module."""
    done = run_child(tmp_path, "import json\nprint(json.dumps(sorted(sys.modules)))")
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout)
    assert not [m for m in loaded if m.split(".")[0] in ("torch", "transformers", "sentence_transformers")]
    allowed = ("recall_core.memory", "recall_core.types", "recall_core.dates", "recall_core.paths")
    engine = [m for m in loaded if m.startswith("recall_core.") and not m.startswith(allowed)]
    assert not engine, f"importing recall_core.memory loads engine modules: {engine}"

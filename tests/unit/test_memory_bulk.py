"""A pasted document is not written silently: one turn that becomes many memories warns."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from recall_core.memory import MemoryStore, MemoryWriter
from recall_core.memory.encoders import HashEncoder
from recall_core.memory.text.prepared import BULK_CHUNKS, BulkTextWarning


def test_a_pasted_document_warns_and_is_still_written(tmp_path: Path) -> None:
    paste = " ".join(f"Sentence number {i} of a long pasted report about quarterly sales." for i in range(500))
    with MemoryStore.local(tmp_path, encoder=HashEncoder(16)) as store:
        writer = MemoryWriter(store)
        with pytest.warns(BulkTextWarning, match=r"becomes \d+ memories of user 'ada'"):
            ids = writer.add_turn("ada", "user", paste)
        assert len(ids) > BULK_CHUNKS and store.for_user("ada").count() == len(ids)  # warned, nothing lost


def test_a_turn_of_ordinary_length_does_not_warn(tmp_path: Path) -> None:
    with MemoryStore.local(tmp_path, encoder=HashEncoder(16)) as store, warnings.catch_warnings():
        warnings.simplefilter("error", BulkTextWarning)
        MemoryWriter(store).add_turn("ada", "user", "My sister Ana lives in Porto and works as a nurse. " * 5)

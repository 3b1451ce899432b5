"""A local memory is opened by one process (and one store object) at a time."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from recall_core.memory import HashEncoder, MemoryLockedError, MemoryStore
from tests.helpers.processes import run_child


def test_second_store_object_in_the_same_process(tmp_path: Path) -> None:
    first = MemoryStore.local(tmp_path, encoder=HashEncoder(8))
    with pytest.raises(MemoryLockedError, match="already open") as error:
        MemoryStore.local(tmp_path, encoder=HashEncoder(8))
    message = str(error.value)
    assert "chroma run --path" in message and "MemoryStore.server" in message
    assert f"pid {os.getpid()}" in message
    first.close()
    MemoryStore.local(tmp_path, encoder=HashEncoder(8)).close()  # free again after close()


def test_second_process_gets_a_clear_error(tmp_path: Path) -> None:
    store = MemoryStore.local(tmp_path, encoder=HashEncoder(8))
    code = (
        "from recall_core.memory import MemoryLockedError\n"
        "try:\n"
        f"    MemoryStore.local({str(tmp_path)!r}, encoder=HashEncoder(8))\n"
        "except MemoryLockedError as e:\n"
        "    print(e); sys.exit(3)\n"
    )
    done = run_child(tmp_path, code, timeout=60)
    assert done.returncode == 3, done.stderr
    assert "server" in done.stdout and str(os.getpid()) in done.stdout
    store.close()
    done = run_child(tmp_path, code, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr


def test_closed_store_refuses_work(tmp_path: Path) -> None:
    store = MemoryStore.local(tmp_path, encoder=HashEncoder(8))
    store.close()
    store.close()  # twice is fine
    with pytest.raises(RuntimeError, match="closed"):
        store.for_user("a").count()

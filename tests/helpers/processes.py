"""Child Python processes that open a memory store: what another process sees, or a process killed.

A child imports the memory package without ``recall_core/__init__``, which loads the engine
(torch and transformers, 3-8 s to start) that the memory does not use: an empty ``recall_core``
package is registered first, so only ``recall_core.memory`` and what it imports are loaded
(about 0.6 s). The memory importing nothing of the engine is checked in tests/unit/test_layout.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from tests.helpers.memories import RAW_TEXT

#: Registers ``recall_core`` as an empty package over its folder, so its ``__init__`` never runs.
MEMORY_ONLY = """\
import importlib.util, sys, types
_spec = importlib.util.find_spec("recall_core")
_package = types.ModuleType("recall_core")
_package.__path__ = list(_spec.submodule_search_locations)
sys.modules["recall_core"] = _package
"""

#: What every child script may use without importing it.
PRELUDE = MEMORY_ONLY + f"""\
import os, signal, time
from recall_core.memory import HashEncoder, MemoryStore, MemoryWriter
RAW_TEXT = {RAW_TEXT!r}
"""


def child(tmp_path: Path, code: str, *args: str) -> subprocess.Popen:
    """A Python process running ``code`` (after :data:`PRELUDE`) with ``args``, its output piped.
    The script is written under ``tmp_path/children/``."""
    (tmp_path / "children").mkdir(exist_ok=True)
    script = tmp_path / "children" / f"child-{time.monotonic_ns()}.py"
    script.write_text(PRELUDE + textwrap.dedent(code))
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    return subprocess.Popen([sys.executable, str(script), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)  # fmt: skip


def run_child(tmp_path: Path, code: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """:func:`child` to the end: its exit code and whole output."""
    process = child(tmp_path, code, *args)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        raise
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)

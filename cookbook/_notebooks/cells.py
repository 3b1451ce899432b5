"""What every notebook's cells are made of: markdown, code, and the setup cell they share."""

from __future__ import annotations

from nbformat.v4 import new_code_cell, new_markdown_cell

SETUP = """\
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # everything below runs offline
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
import tempfile
from pathlib import Path

FIGURES = Path("figures")
FIGURES.mkdir(exist_ok=True)
# A fresh memory for this notebook, removed when the kernel exits.
_memory = tempfile.TemporaryDirectory(prefix="recall-cookbook-", ignore_cleanup_errors=True)
MEMORY_DIR = _memory.name"""


def md(text: str):
    return new_markdown_cell(text.strip())


def code(text: str):
    return new_code_cell(text.strip())

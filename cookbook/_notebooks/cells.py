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
MEMORY_DIR = tempfile.mkdtemp(prefix="recall-cookbook-")  # a fresh memory for this notebook"""


def md(text: str):
    return new_markdown_cell(text.strip())


def code(text: str):
    return new_code_cell(text.strip())

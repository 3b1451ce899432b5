"""Writes the cookbook notebooks: ``python cookbook/_build.py``.

Each notebook's cells live in a module of their own under ``cookbook/_notebooks/``
(``nb01_quickstart.py`` makes ``01_quickstart.ipynb``): edit those, not the .ipynb files.
The notebooks are stored without outputs; ``tests/integration/test_cookbook_*.py`` execute each one top
to bottom (offline, embedded default model and encoder) and fail on any error.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from nbformat.v4 import new_notebook

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # the test loads this file by its path, not as a script
    sys.path.insert(0, str(HERE))

from _notebooks import (  # noqa: E402  (after the path is set)
    nb01_quickstart,
    nb02_langchain_chatbot,
    nb03_llamaindex_chat_engine,
    nb04_seeing_recall,
    nb05_recall_vs_stuffing,
    nb06_agents,
    nb07_endless_chat,
)

NOTEBOOKS = {
    "01_quickstart.ipynb": nb01_quickstart.CELLS,
    "02_langchain_chatbot.ipynb": nb02_langchain_chatbot.CELLS,
    "03_llamaindex_chat_engine.ipynb": nb03_llamaindex_chat_engine.CELLS,
    "04_seeing_recall.ipynb": nb04_seeing_recall.CELLS,
    "05_recall_vs_stuffing.ipynb": nb05_recall_vs_stuffing.CELLS,
    "06_agents.ipynb": nb06_agents.CELLS,
    "07_endless_chat.ipynb": nb07_endless_chat.CELLS,
}


def build() -> list[Path]:
    written = []
    for name, cells in NOTEBOOKS.items():
        notebook = new_notebook(cells=cells)
        for index, cell in enumerate(notebook.cells):  # stable ids: rebuilding gives no spurious diff
            cell["id"] = f"{name[:2]}-{index:02d}"
        notebook.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
        notebook.metadata["language_info"] = {"name": "python"}
        nbformat.validate(notebook)
        path = HERE / name
        nbformat.write(notebook, path)
        written.append(path)
    return written


if __name__ == "__main__":
    for path in build():
        print("wrote", path.relative_to(HERE.parent))

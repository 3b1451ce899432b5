"""Running a cookbook notebook top to bottom, as tests/integration/test_cookbook_*.py do.

Each notebook is executed with nbclient in a temporary working directory (its figures go
there) and must finish without an error; the figures it promises must exist, and the memory
it made in a temporary folder must be gone once its kernel has exited. The notebooks are
split between two test modules (the engine's, the frameworks') so that the two xdist workers
can run them side by side: one module of all seven took about four minutes of one worker.
"""

from __future__ import annotations

import time
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

COOKBOOK = Path(__file__).resolve().parents[2] / "cookbook"
NOTEBOOKS = sorted(COOKBOOK.glob("[0-9][0-9]_*.ipynb"))
FIGURES = {
    "04_seeing_recall.ipynb": [
        "04_injection_positions.png",
        "04_attention_heatmap.png",
        "04_attention_share.png",
    ],
    "05_recall_vs_stuffing.ipynb": ["05_recall_vs_stuffing.png"],
    "07_endless_chat.ipynb": ["07_endless_chat.png"],
}
#: Notebooks run shorter in the test than for a reader (environment variables they read).
SHORTER = {
    "05_recall_vs_stuffing.ipynb": {"RECALL_COOKBOOK_QUESTIONS": "2"},
    "07_endless_chat.ipynb": {"RECALL_COOKBOOK_TURNS": "14", "RECALL_COOKBOOK_CACHE": "192"},
}


def notebooks(*numbers: str) -> list[Path]:
    """The notebooks whose names start with one of ``numbers`` ("01", "04"...)."""
    return [path for path in NOTEBOOKS if path.name[:2] in numbers]


#: The notebooks of each test module: the engine's, and the frameworks' (LangChain, LlamaIndex, agents).
ENGINE = notebooks("01", "04", "05", "07")
FRAMEWORKS = notebooks("02", "03", "06")


def run_notebook(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs ``path`` in a fresh kernel and checks what it leaves: no error, its figures, no memory."""
    for name, value in SHORTER.get(path.name, {}).items():
        monkeypatch.setenv(name, value)  # the kernel inherits the test's environment
    kernel_tmp = tmp_path / "tmp"  # the kernel's tempfile folder: what it leaves behind is seen here
    kernel_tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(kernel_tmp))
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    start = time.perf_counter()
    client.execute()  # shuts the kernel down when the notebook has run
    seconds = time.perf_counter() - start
    errors = [
        output
        for cell in notebook.cells
        for output in cell.get("outputs", [])
        if output.get("output_type") == "error"
    ]
    assert not errors
    for figure in FIGURES.get(path.name, []):
        assert (tmp_path / "figures" / figure).stat().st_size > 1000, figure
    assert _left_behind(kernel_tmp) == [], "the notebook's memory folder outlived its kernel"
    print(f"{path.name}: {seconds:.0f} s")


def _left_behind(folder: Path, wait_s: float = 10.0) -> list[str]:
    """The notebook memories still in ``folder`` after up to ``wait_s`` (the kernel exits on its own
    time after the shutdown request)."""
    deadline = time.monotonic() + wait_s
    while True:
        left = sorted(p.name for p in folder.glob("recall-cookbook-*"))
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.2)

"""Figures of the benchmarks: matplotlib without a display, and one way to save a figure."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the Agg backend: the figures go to files, no display is needed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save(fig: Any, path: Path, dpi: int = 120) -> Path:
    """Lay ``fig`` out, write it to ``path`` and close it; returns ``path``."""
    fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    pyplot().close(fig)
    return path

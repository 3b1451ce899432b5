"""Figures of the benchmarks: matplotlib without a display, and one way to save a figure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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


def grouped_bars(ax: Any, groups: Sequence[str], series: Mapping[str, Sequence[float]], **tick_options: Any) -> None:
    """One bar per series in each group, side by side, the group's name under the middle of its bars.

    ``series`` maps each legend label to one value per group, in ``groups``' order;
    ``tick_options`` go to the group names (``fontsize``, ``rotation``...).
    """
    width = 0.8 / max(1, len(series))
    for i, (label, values) in enumerate(series.items()):
        ax.bar([x + i * width for x in range(len(groups))], list(values), width, label=label)
    ax.set_xticks([x + width * (len(series) - 1) / 2 for x in range(len(groups))], list(groups), **tick_options)

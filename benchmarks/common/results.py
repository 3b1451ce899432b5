"""Result files of the benchmarks (JSON, Markdown, PNG), the machine they ran on, and numbers as tables show them."""

from __future__ import annotations

import json
import os
import platform
from collections.abc import Callable
from pathlib import Path
from typing import Any


def machine(load: bool = True) -> dict[str, Any]:
    """Python version and CPU count (and the load averages: other processes slow every timing down)."""
    return {"python": platform.python_version(), "cpus": os.cpu_count(), **({"load": os.getloadavg()} if load else {})}


def load_average() -> list[float] | None:
    """The machine's 1/5/15-minute load averages, rounded (``None`` where the system has none)."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def write_results(folder: Path, stem: str, result: Any, markdown: str | None = None,
                  plot: Callable[[Any, Path], Any] | None = None, indent: int = 1, **dumps: Any) -> Path:  # fmt: skip
    """``folder/stem.json`` (``json.dumps(result, indent=indent, **dumps)``), then ``stem.md`` and
    ``plot(result, folder/stem.png)`` when given; returns the folder (created if missing)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{stem}.json").write_text(json.dumps(result, indent=indent, **dumps), encoding="utf-8")
    if markdown is not None:
        (folder / f"{stem}.md").write_text(markdown, encoding="utf-8")
    if plot is not None:
        plot(result, folder / f"{stem}.png")
    return folder


def cell(value: float | None, digits: int = 3, missing: str = "-") -> str:
    """``value`` as a table shows it: ``digits`` decimals, or ``missing`` for none (a category absent from a slice)."""
    return missing if value is None else f"{value:.{digits}f}"


def report(table: str, out: Path) -> int:
    """Print a benchmark's table and where its files went; returns 0, the exit code of a finished run."""
    print(table)
    print(f"written to {out}")
    return 0

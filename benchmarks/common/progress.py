"""Progress bars of the benchmarks: on stderr, so the printed tables stay as they are."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def progress(items: Iterable[Any] | None, desc: str, show: bool, *, unit: str = "it", total: int | None = None,
             mininterval: float = 0.1) -> Any:  # fmt: skip
    """A tqdm bar over ``items``, or one to ``update`` by hand up to ``total`` when ``items`` is None.

    With ``show`` false the bar is disabled (it still iterates and takes updates), so callers
    need no second path for ``--no-progress``.
    """
    from tqdm.auto import tqdm

    return tqdm(items, desc=desc, unit=unit, total=total, disable=not show, mininterval=mininterval)

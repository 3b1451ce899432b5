"""Read a GGUF file once while transformers converts it.

transformers builds a new ``gguf.GGUFReader`` for each of the tokenizer, the config and the
weights, and the reader parses the metadata (49,152 tokens and their merges for SmolLM2) by
slicing a ``numpy.memmap`` field by field, which costs a memmap object per slice. On 2 CPU
cores (2026-12-06) one reader took 5.7 s, three of them about 18 s of the default model's
42 s conversion; over a plain array view of the same mapping one reader takes 2.1 s and
yields the same fields and tensors. So the conversion reads the file once, over such a view.
transformers also builds gguf's tensor-name map (about 16 ms) once for each of the model's
397 modules, another 6 s; the map is only read, so one is built for each architecture.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np


def array_reader(path: str | Path) -> Any:
    """A ``gguf.GGUFReader`` of ``path`` whose data is a plain ndarray view of the file's mapping."""
    import gguf

    class _ArrayReader(gguf.GGUFReader):
        # GGUFReader.__init__ assigns self.data = np.memmap(...) and then slices it thousands of
        # times; the view shares the mapping (no copy) and slices without memmap's bookkeeping.
        @property
        def data(self) -> np.ndarray:
            return self._array

        @data.setter
        def data(self, value: np.ndarray) -> None:
            self._array = value.view(np.ndarray)

    return _ArrayReader(path)


@contextmanager
def gguf_read_once(path: str | Path) -> Iterator[Any]:
    """Within the block, ``gguf.GGUFReader(path)`` returns one shared reader of ``path``.

    transformers imports ``GGUFReader`` and ``get_tensor_name_map`` from ``gguf`` inside the
    functions that use them, so replacing the module's attributes reaches it. Other paths get
    an ordinary reader, the name maps are built once per (architecture, layers), and both
    attributes are restored on the way out, error or not.
    """
    import gguf

    original, name_map = gguf.GGUFReader, gguf.get_tensor_name_map
    wanted = Path(path).resolve()
    shared = array_reader(wanted)

    def reader(file: str | Path, mode: str = "r") -> Any:
        if mode == "r" and Path(file).resolve() == wanted:
            return shared
        return original(file, mode)

    gguf.GGUFReader, gguf.get_tensor_name_map = reader, functools.cache(name_map)
    try:
        yield shared
    finally:
        gguf.GGUFReader, gguf.get_tensor_name_map = original, name_map

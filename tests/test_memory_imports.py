"""The memory package stands alone: it imports no engine module, not even inside a function.

The engine depends on the memory, never the other way; what the engine keeps from memories (the
KV blocks of ``inject_mode="kv"``) reaches the writer through ``memory/derived.py``'s protocol.
"""

from __future__ import annotations

import ast
from pathlib import Path

MEMORY = Path(__file__).resolve().parents[1] / "recall_core" / "memory"
#: What the memory package may import from recall_core besides itself: plain data and helpers.
ALLOWED = {"recall_core.types", "recall_core.dates", "recall_core.paths"}


def _imports(path: Path) -> list[str]:
    """Every module ``path`` imports, anywhere in it, relative imports made absolute."""
    package = ["recall_core", "memory", *path.relative_to(MEMORY).parent.parts]
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            names.append(module)
            if module == "recall_core":  # from recall_core import X: X may be an engine module
                names += [f"recall_core.{alias.name}" for alias in node.names]
    return names


def test_the_memory_package_imports_no_engine_module():
    files = sorted(MEMORY.rglob("*.py"))
    assert len(files) > 10
    outside = {
        f"{path.relative_to(MEMORY)}: {name}"
        for path in files
        for name in _imports(path)
        if name.startswith("recall_core") and not name.startswith("recall_core.memory") and name not in ALLOWED
        and name != "recall_core"
    }  # fmt: skip
    assert not outside, sorted(outside)

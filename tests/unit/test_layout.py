"""The engine's layout, read from its source (AST, nothing imported): which way imports point,
no import cycles, and the size limits that keep ``recall_core/`` readable.

Every import counts: module level, inside functions, and under ``TYPE_CHECKING``, because each
one is a dependency a reader has to follow. Each test names the file and line of what breaks it.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "recall_core"

#: What the memory package may import from the engine: the plain types it stores and returns,
#: and three helpers with no engine behind them (the standard library only). Anything else would
#: load the engine (torch).
MEMORY_MAY_IMPORT = ("recall_core.memory", "recall_core.types", "recall_core.dates", "recall_core.paths",
                     "recall_core.processes")
#: The only modules that may import ``recall_core.training`` (the command that runs it, and itself).
TRAINING_USERS = ("recall_core.cli", "recall_core.training")
#: The decoding loop is called by sessions and by the framework glue, never the other way.
DECODING_MAY_NOT_IMPORT = ("recall_core.session", "recall_core.integration")
#: Frameworks, and the adapter packages over them: the engine imports none of them.
FRAMEWORKS = ("langchain", "langgraph", "llama_index", "llamaindex_recall")

MAX_TOP_MODULES = 15
MAX_PACKAGE_FILES = 15
MAX_MODULE_LINES = 600


@dataclass(frozen=True)
class Import:
    """One import statement's target, where it was written."""

    source: str  # the importing module, e.g. "recall_core.decoding.loop"
    target: str  # the imported module, e.g. "recall_core.session.session"
    where: str  # "recall_core/decoding/loop.py:12"

    def __str__(self) -> str:
        return f"{self.where} imports {self.target}"


def module_name(path: Path) -> str:
    """``recall_core/kv/cache.py`` -> ``recall_core.kv.cache``; a package's ``__init__`` is the package."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py")) if "__pycache__" not in path.parts}


def _absolute(node: ast.ImportFrom, source: str, is_package: bool) -> str:
    """The module a ``from ... import`` names, with relative imports resolved against ``source``."""
    if not node.level:
        return node.module or ""
    base = source.split(".")
    base = base[: len(base) - node.level + (1 if is_package else 0)]
    return ".".join([*base, node.module] if node.module else base)


def imports_in(text: str, source: str, is_package: bool, known: set[str], where: str) -> list[Import]:
    """Every import in the module ``source`` whose code is ``text``. ``from package import name``
    targets ``package.name`` when that is a module of ours (the submodule is what gets loaded),
    else ``package``."""
    found = []
    nodes = [n for n in ast.walk(ast.parse(text)) if isinstance(n, (ast.Import, ast.ImportFrom))]
    for node in sorted(nodes, key=lambda n: n.lineno):  # in reading order, for the reports
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            module = _absolute(node, source, is_package)
            targets = [f"{module}.{a.name}" if f"{module}.{a.name}" in known else module for a in node.names]
        found += [Import(source, target, f"{where}:{node.lineno}") for target in dict.fromkeys(targets)]
    return found


@cache
def imports() -> tuple[Import, ...]:
    """Every import in ``recall_core``."""
    known = modules()
    found = []
    for source, path in known.items():
        where = path.relative_to(ROOT).as_posix()
        found += imports_in(path.read_text(), source, path.name == "__init__.py", set(known), where)
    return tuple(found)


def _within(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def test_every_kind_of_import_is_read():
    """The checks below are only as good as this reader: module level, in a function, under
    ``TYPE_CHECKING``, relative, and ``from package import module``."""
    code = (
        "from __future__ import annotations\n"
        "import os, recall_core.types\n"
        "from typing import TYPE_CHECKING\n"
        "from recall_core import kv, RecallConfig\n"
        "from .cache import Rotary\n"
        "from .. import tokens\n"
        "if TYPE_CHECKING:\n"
        "    from recall_core.session.session import RecallSession\n"
        "def later():\n"
        "    import recall_core.training.lora\n"
    )
    known = {"recall_core", "recall_core.kv", "recall_core.kv.cache", "recall_core.tokens"}
    found = imports_in(code, "recall_core.kv.blocks", False, known, "recall_core/kv/blocks.py")
    assert [(i.target, i.where) for i in found] == [
        ("__future__", "recall_core/kv/blocks.py:1"),
        ("os", "recall_core/kv/blocks.py:2"),
        ("recall_core.types", "recall_core/kv/blocks.py:2"),
        ("typing", "recall_core/kv/blocks.py:3"),
        ("recall_core.kv", "recall_core/kv/blocks.py:4"),
        ("recall_core", "recall_core/kv/blocks.py:4"),
        ("recall_core.kv.cache", "recall_core/kv/blocks.py:5"),
        ("recall_core.tokens", "recall_core/kv/blocks.py:6"),
        ("recall_core.session.session", "recall_core/kv/blocks.py:8"),
        ("recall_core.training.lora", "recall_core/kv/blocks.py:10"),
    ]
    package = imports_in("from . import blocks\n", "recall_core.kv", True, {"recall_core.kv.blocks"}, "x")
    assert [i.target for i in package] == ["recall_core.kv.blocks"]
    assert {"recall_core", "recall_core.memory", "recall_core.decoding.loop"} <= set(modules())


def test_the_memory_imports_no_engine_module():
    """``recall_core.memory`` is a store, usable and importable without the model stack."""
    wrong = [
        str(i)
        for i in imports()
        if _within(i.source, ("recall_core.memory",))
        and _within(i.target, ("recall_core",))
        and not _within(i.target, MEMORY_MAY_IMPORT)
    ]
    assert not wrong, "the memory imports the engine:\n" + "\n".join(wrong)


def test_only_the_cli_and_training_import_training():
    """Training is a leaf: nothing that runs at generation time depends on it."""
    wrong = [
        str(i)
        for i in imports()
        if _within(i.target, ("recall_core.training",)) and not _within(i.source, TRAINING_USERS)
    ]
    assert not wrong, "imports of recall_core.training outside the CLI and training:\n" + "\n".join(wrong)


def test_decoding_imports_neither_sessions_nor_the_framework_glue():
    wrong = [
        str(i)
        for i in imports()
        if _within(i.source, ("recall_core.decoding",)) and _within(i.target, DECODING_MAY_NOT_IMPORT)
    ]
    assert not wrong, "decoding/ imports what is built on it:\n" + "\n".join(wrong)


def test_the_engine_imports_no_framework():
    wrong = [str(i) for i in imports() if i.target.split(".")[0].startswith(FRAMEWORKS)]
    assert not wrong, "recall_core imports a framework or an adapter package:\n" + "\n".join(wrong)


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (or a module importing itself),
    each as a cycle through all of its members' first-found path, sorted for a stable report."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's algorithm
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in graph.get(node, ()):
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(components)


def test_import_cycles_are_found():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}, "f": set()}
    assert import_cycles(graph) == [["a", "b", "c"], ["e"]]


def test_no_import_cycle_in_the_engine():
    """A cycle makes import order matter and the modules impossible to read one at a time; a
    cycle under ``TYPE_CHECKING`` is still one for the reader (pass a small parts object instead).

    An import of ``recall_core.kv.cache`` is an edge to that module only, not to the packages
    above it that Python initialises first: those would tie every module to ``recall_core``."""
    known = modules()
    graph: dict[str, set[str]] = {name: set() for name in known}
    lines: dict[tuple[str, str], str] = {}
    for i in imports():
        if i.target in known and i.target != i.source:
            graph[i.source].add(i.target)
            lines.setdefault((i.source, i.target), i.where)
    cycles = import_cycles(graph)
    report = []
    for members in cycles:
        inside = sorted(f"  {lines[(s, t)]} -> {t}" for s in members for t in graph[s] if t in members)
        report.append(f"cycle of {len(members)}: {', '.join(members)}\n" + "\n".join(inside))
    assert not cycles, "import cycles in recall_core:\n" + "\n".join(report)


def test_the_top_of_the_package_holds_at_most_15_modules():
    top = sorted(path.name for path in PACKAGE.glob("*.py"))
    assert len(top) <= MAX_TOP_MODULES, f"{len(top)} modules at the top of recall_core/: {', '.join(top)}"


def test_no_subpackage_holds_more_than_15_modules():
    crowded = {
        folder.relative_to(ROOT).as_posix(): len(list(folder.glob("*.py")))
        for folder in sorted({path.parent for path in PACKAGE.rglob("*.py")})
        if folder != PACKAGE and "__pycache__" not in folder.parts
    }
    crowded = {folder: count for folder, count in crowded.items() if count > MAX_PACKAGE_FILES}
    assert not crowded, f"subpackages over {MAX_PACKAGE_FILES} .py files: {crowded}"


def test_no_module_is_over_600_lines():
    long = {
        path.relative_to(ROOT).as_posix(): n
        for path in modules().values()
        if (n := len(path.read_text().splitlines())) > MAX_MODULE_LINES
    }
    assert not long, f"modules over {MAX_MODULE_LINES} lines: {long}"

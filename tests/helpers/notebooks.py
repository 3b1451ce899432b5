"""Running a cookbook notebook top to bottom, as tests/integration/test_cookbook_*.py do.

Each notebook is executed with nbclient in a temporary working directory (its figures go
there) and must finish without an error; the figures it promises must exist, and the memory
it made in a temporary folder must be gone once its kernel has exited. What a notebook
checks of its own point (the recalled fact, the stored note) it asserts in its cells, so a
failed point is an error here. Every package a notebook imports must come with
``pip install "recall-llm[cookbook]"`` (pyproject.toml's extra, followed through what the
installed packages require). The notebooks are
split between two test modules (the engine's, the frameworks') so that the two xdist workers
can run them side by side: one module of all seven took about four minutes of one worker.
"""

from __future__ import annotations

import ast
import importlib.metadata
import sys
import time
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

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
    missing = sorted(imported_distributions(notebook) - cookbook_extra())
    assert not missing, f'{path.name} imports {missing}, which pip install "recall-llm[cookbook]" does not install'
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


#: The project's own packages: what its install gives, whatever the extras.
PROJECT_PACKAGES = {"recall_core", "langchain_recall", "llamaindex_recall"}


def imported_distributions(notebook: nbformat.NotebookNode) -> set[str]:
    """The distributions (canonical names) that the code cells of ``notebook`` import, the
    standard library and the project's own packages left out."""
    owners = importlib.metadata.packages_distributions()
    flags = ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT  # notebook 06 awaits at top level
    found = set()
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        for node in ast.walk(compile(cell.source, "<cell>", "exec", flags=flags)):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top in sys.stdlib_module_names or top in PROJECT_PACKAGES:
                    continue
                assert top in owners, f"no installed distribution provides {top!r}"
                found.update(canonicalize_name(owner) for owner in _providers(name, owners[top]))
    return found


def _providers(module: str, candidates: list[str]) -> list[str]:
    """Those of ``candidates`` (the distributions installing ``module``'s top-level package) that
    install ``module`` itself: a namespace package (``llama_index``) has many, one per part."""
    if len(candidates) == 1:
        return candidates
    path = module.replace(".", "/")
    mine = [
        owner
        for owner in candidates
        if any(str(file).startswith((path + "/", path + ".")) for file in importlib.metadata.files(owner) or [])
    ]
    assert mine, f"none of {candidates} installs {module!r}"
    return mine


def cookbook_extra() -> set[str]:
    """The distributions (canonical names) that ``pip install "recall-llm[cookbook]"`` installs:
    pyproject.toml's dependencies and ``cookbook`` extra (its ``recall-llm[...]`` extras expanded
    from the same file, whatever metadata an older install left), then everything those
    distributions require as installed here."""
    try:
        import tomllib
    except ImportError:  # Python 3.10: pytest itself requires tomli there
        import tomli as tomllib

    project = tomllib.loads((COOKBOOK.parent / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    assert "cookbook" in extras, "pyproject.toml has no cookbook extra"
    pending = [Requirement(r) for r in project["dependencies"]]
    pending += [Requirement(r) for r in extras["cookbook"]]
    seen: dict[str, set[str]] = {}
    while pending:
        requirement = pending.pop()
        name = canonicalize_name(requirement.name)
        if name == "recall-llm":  # the project's own extras, from pyproject.toml
            pending += [Requirement(r) for extra in requirement.extras for r in extras[extra]]
            continue
        wanted = set(requirement.extras)
        if name in seen and wanted <= seen[name]:
            continue
        seen[name] = seen.get(name, set()) | wanted
        try:
            requires = importlib.metadata.requires(name) or []
        except importlib.metadata.PackageNotFoundError:
            continue  # not installed here: what it would bring in is unknown, so it counts for itself only
        for text in requires:
            needed = Requirement(text)
            markers = [{"extra": extra} for extra in seen[name]] + [{"extra": ""}]
            if needed.marker is None or any(needed.marker.evaluate(m) for m in markers):
                pending.append(needed)
    return set(seen)

"""The cookbook notebooks are stored as their generator writes them (sources only, no outputs).

Running them is an integration test: tests/integration/test_cookbook_engine.py and
test_cookbook_frameworks.py.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import nbformat

COOKBOOK = Path(__file__).resolve().parents[2] / "cookbook"
NOTEBOOKS = sorted(COOKBOOK.glob("[0-9][0-9]_*.ipynb"))


def test_the_notebooks_are_up_to_date_with_their_generator():
    spec = importlib.util.spec_from_file_location("cookbook_build", COOKBOOK / "_build.py")
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    assert sorted(build.NOTEBOOKS) == [path.name for path in NOTEBOOKS]
    for path in NOTEBOOKS:
        stored = nbformat.read(path, as_version=4)
        nbformat.validate(stored)
        expected = [cell.source.strip() for cell in build.NOTEBOOKS[path.name]]
        assert [cell.source for cell in stored.cells] == expected, (
            f"{path.name}: run python cookbook/_build.py"
        )
        assert all(not cell.get("outputs") for cell in stored.cells if cell.cell_type == "code"), (
            "stored with outputs"
        )

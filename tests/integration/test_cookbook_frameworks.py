"""The frameworks' cookbook notebooks run top to bottom (offline, embedded default model and
encoder): the LangChain chatbot, the LlamaIndex chat engine, the agents. How each one is run
and checked: tests/helpers/notebooks.py; every notebook is in one of the two modules."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.notebooks import ENGINE, FRAMEWORKS, NOTEBOOKS, run_notebook


def test_every_notebook_is_run_by_one_of_the_two_modules():
    assert sorted(ENGINE + FRAMEWORKS) == NOTEBOOKS and len(NOTEBOOKS) == 7


@pytest.mark.parametrize("path", FRAMEWORKS, ids=[p.stem for p in FRAMEWORKS])
def test_notebook_runs(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    run_notebook(path, tmp_path, monkeypatch)

"""The engine's cookbook notebooks run top to bottom (offline, embedded default model and
encoder): the quick start, seeing recall, recall against stuffing, the endless chat.
How each one is run and checked: tests/helpers/notebooks.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.notebooks import ENGINE, run_notebook


@pytest.mark.parametrize("path", ENGINE, ids=[p.stem for p in ENGINE])
def test_notebook_runs(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    run_notebook(path, tmp_path, monkeypatch)

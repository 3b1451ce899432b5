"""Where recall keeps its files: ``$RECALL_HOME``, else the user cache dir."""

from __future__ import annotations

import os
from pathlib import Path

from platformdirs import user_cache_dir


def recall_home() -> Path:
    """The root folder for converted models and the default memory store (created if missing)."""
    home = Path(os.environ.get("RECALL_HOME") or user_cache_dir("recall")).expanduser()
    home.mkdir(parents=True, exist_ok=True)
    return home


def models_dir() -> Path:
    path = recall_home() / "models"
    path.mkdir(parents=True, exist_ok=True)
    return path


def default_memory_dir() -> Path:
    return recall_home() / "memory"

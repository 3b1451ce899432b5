"""Where recall keeps its files: models (a cache) apart from memories (your data).

* **Models** (converted checkpoints, merged adapters): ``$RECALL_MODELS``, else
  ``$RECALL_HOME/models``, else ``<user cache dir>/recall/models``. A cache: it can be shared
  between users or deleted, and comes back on the next load.
* **The default memory store**: ``$RECALL_MEMORY``, else ``$RECALL_HOME/memory``, else
  ``<user data dir>/recall/memory``. Data: pointing the models at a shared cache never moves it.
* ``$RECALL_HOME`` stays the umbrella it always was (both, plus trained adapters and the
  on-disk KV blocks of ``inject_mode="kv"``); the two specific variables win over it.

A memory left by an older recall at ``<user cache dir>/recall/memory`` (the default before the
split) is still used when the new default folder does not exist yet, so no store goes missing.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from platformdirs import user_cache_dir, user_data_dir

logger = logging.getLogger(__name__)

#: The environment variables read here, by what they set.
HOME_VAR, MODELS_VAR, MEMORY_VAR = "RECALL_HOME", "RECALL_MODELS", "RECALL_MEMORY"


def _env_path(name: str) -> Path | None:
    value = os.environ.get(name)
    return Path(value).expanduser() if value else None


def recall_home() -> Path:
    """The umbrella folder: ``$RECALL_HOME``, else the user cache dir (created if missing)."""
    home = _env_path(HOME_VAR) or Path(user_cache_dir("recall"))
    home.mkdir(parents=True, exist_ok=True)
    return home


def models_dir() -> Path:
    """Where converted models live (created if missing): ``$RECALL_MODELS``, else ``recall_home()/models``."""
    path = _env_path(MODELS_VAR) or recall_home() / "models"
    path.mkdir(parents=True, exist_ok=True)
    return path


def default_memory_dir() -> Path:
    """The folder of the default local memory store (not created here; opening the store does).

    ``$RECALL_MEMORY``, else ``$RECALL_HOME/memory``, else the user data dir's ``recall/memory``
    (or the older cache-dir location when a store is there and none is at the new one).
    """
    explicit = _env_path(MEMORY_VAR)
    if explicit is not None:
        return explicit
    home = _env_path(HOME_VAR)
    if home is not None:
        return home / "memory"
    data = Path(user_data_dir("recall")) / "memory"
    legacy = Path(user_cache_dir("recall")) / "memory"
    if not data.exists() and legacy.exists():
        logger.info("using the memory at %s (set %s to move it; the default is now %s)", legacy, MEMORY_VAR, data)
        return legacy
    return data

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

And how a forget reaches the files derived from memories (:func:`drop_derived`), wherever it is
issued: the memory package imports no engine module, and the engine's caches (the KV blocks of
``inject_mode="kv"``, under ``recall_home()``) import no store, so both meet here.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import threading
import warnings
import weakref
from collections.abc import Iterable
from pathlib import Path
from typing import Any

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


# --------------------------------------------------------------------------- derived copies, dropped from anywhere
#: The file under ``$RECALL_HOME`` listing the folders that derived caches write to, one a line.
DERIVED_FOLDERS_FILE = "derived_folders.txt"
#: The folder ``KVMemories(disk=True)`` writes to, under ``$RECALL_HOME`` (always searched).
KV_FOLDER = "kv_memories"
_live: weakref.WeakSet[Any] = weakref.WeakSet()
_lock = threading.Lock()


def derived_tag(memory_id: str) -> str:
    """A short file-name-safe tag of a memory id. A file derived from memories is named
    ``"<tag>-<tag>-<rest>"``, one tag per memory it holds, so that :func:`drop_derived` finds it."""
    return hashlib.sha256(memory_id.encode("utf-8")).hexdigest()[:12]


def register_derived(cache: Any, folder: str | Path | None = None) -> None:
    """Make ``cache`` (an object with ``drop(memory_ids)``) hear of every forget, delete and update in
    this process (a weak reference), and list ``folder`` (where it writes files named by
    :func:`derived_tag`) in ``$RECALL_HOME/derived_folders.txt``, so that a forget in any later
    process with this ``$RECALL_HOME`` removes them too."""
    with _lock:
        _live.add(cache)
        if folder is None:
            return
        folder = str(Path(folder).resolve())
        if folder == str((recall_home() / KV_FOLDER).resolve()):
            return  # always searched
        if folder in _listed_folders():
            return
        path = recall_home() / DERIVED_FOLDERS_FILE
        # Under a lock across processes, and every folder kept, made or not: a cache's folder is made
        # at its first write, and until 2026-12-07 a registration in another process dropped the ones
        # not made yet (or two at once lost one), so a forget left their files (a reviewer).
        try:
            from filelock import FileLock

            with FileLock(str(path.with_name(f"{path.name}.lock"))):
                listed = _listed_folders(made_only=False)
                if folder not in listed:
                    partial = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
                    partial.write_text("".join(line + "\n" for line in [*listed, folder]), encoding="utf-8")
                    os.replace(partial, path)
        except OSError as error:  # a read-only home: this process still drops them (it holds the cache)
            warnings.warn(f"derived folder {folder} not listed in $RECALL_HOME ({error})", RuntimeWarning, stacklevel=3)


def _listed_folders(made_only: bool = True) -> list[str]:
    """The folders listed in ``$RECALL_HOME/derived_folders.txt`` (``made_only``: those that exist now)."""
    try:
        lines = (recall_home() / DERIVED_FOLDERS_FILE).read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    return [line for line in dict.fromkeys(lines) if line and (not made_only or os.path.isdir(line))]


def drop_derived(memory_ids: Iterable[str]) -> int:
    """Remove every derived copy of ``memory_ids`` (forgotten, deleted or rewritten): from the caches
    registered in this process, and their files from ``$RECALL_HOME/kv_memories`` and every listed
    folder; return how many files were removed. A cache that fails to drop warns (the files still go)."""
    ids = list(memory_ids)
    if not ids:
        return 0
    with _lock:
        caches = list(_live)
    for cache in caches:
        try:
            cache.drop(ids)
        except Exception as error:
            warnings.warn(f"a derived cache failed to drop memories ({type(error).__name__}: {error})",
                          RuntimeWarning, stacklevel=3)  # fmt: skip
    folders = dict.fromkeys([str(recall_home() / KV_FOLDER), *_listed_folders()])
    return sum(remove_derived_files(folder, ids) for folder in folders)


def remove_derived_files(folder: str | Path, memory_ids: Iterable[str]) -> int:
    """Delete the files under ``folder`` whose names hold the :func:`derived_tag` of any of
    ``memory_ids`` (one walk of the folder, whatever the number of ids); return how many went."""
    tags = {derived_tag(memory_id) for memory_id in memory_ids}
    removed = 0
    for parent, _, names in os.walk(folder):
        for name in names:
            if tags.isdisjoint(name.split("-")[:-1]):
                continue
            try:
                os.unlink(os.path.join(parent, name))
                removed += 1
            except OSError:
                pass
    return removed


def check_writable_file(path: str | Path, name: str, give: str = "a file name (.jsonl.gz)") -> Path:
    """Refuse, before any work, a file that cannot be written: a folder, one whose folder is missing,
    or one whose folder refuses a new file. ``name`` is the option the error names, ``give`` what
    it asks for instead of a folder. Returns the path, ``~`` expanded."""
    file = Path(path).expanduser()
    if file.is_dir():
        raise ValueError(f"{name} {file} is a folder: give {give}")
    if not file.parent.is_dir():
        raise ValueError(f"{name} {file}: its folder {file.parent} does not exist")
    try:
        with tempfile.TemporaryFile(dir=file.parent):
            pass
    except OSError as error:
        raise ValueError(f"{name} {file} cannot be written: {error}") from error
    return file

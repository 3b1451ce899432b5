"""What opening a local store checks before it trusts its index.

Two faults used to go unnoticed until they hurt: a damaged HNSW file crashed the process at
the first search (segments.py), and an index that had lost memories (a deleted Chroma folder,
a truncated ``chroma.sqlite3``) answered "no memory" as for a new user. So when a local store
is opened:

1. if the index folder is exactly as the last store that closed it cleanly left it (same
   files, sizes, modification and change times: its *fingerprint*, kept in
   ``chroma.checked`` beside it), nothing more is done: a few ``stat`` calls;
2. otherwise (first open, a crash, a copy, a hand edit) the HNSW files are checked without
   loading them (:func:`~recall_core.memory.upkeep.segments.check_index_files`; files of a format
   that check does not know are read by a child process, probe.py), damaged collections are
   fenced off (:meth:`ChromaIndex.mark_damaged`), and each user's count in the index is
   compared with the journal's indexed memories.

What is found is returned as warnings naming the command that fixes it. A store records the
fingerprint when it closes, if its own check found nothing wrong (so a problem is reported
at every open until a repair is followed by a clean one).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from recall_core.memory.index import MEMORIES, REBUILD_HINT, ChromaIndex, collection_name
from recall_core.memory.journal import Journal
from recall_core.memory.upkeep.probe import WHOLE_INDEX, probe_collections
from recall_core.memory.upkeep.segments import check_index_files

#: The fingerprint of the index folder as a healthy store left it (beside the folder).
CHECKED_FILE = "chroma.checked"


def fingerprint(chroma_dir: Path) -> str:
    """A digest of every file's path, size, modification and change time under ``chroma_dir``.

    The change time (ctime) cannot be set back by a program, so a file written since (even with
    its mtime restored) changes the fingerprint.
    """
    digest = hashlib.sha256()
    if chroma_dir.is_dir():
        for folder, dirs, files in os.walk(chroma_dir):
            dirs.sort()
            for name in sorted(files):
                path = os.path.join(folder, name)
                try:
                    st = os.stat(path)
                except OSError:
                    continue  # removed while walking
                rel = os.path.relpath(path, chroma_dir)
                digest.update(f"{rel}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ctime_ns}\0{st.st_ino}\n".encode())
    return digest.hexdigest()


def is_trusted(root: Path, chroma_dir: Path) -> bool:
    """Whether the index folder is as a healthy store left it when it closed."""
    try:
        recorded = json.loads((root / CHECKED_FILE).read_text())["fingerprint"]
    except (OSError, ValueError, KeyError, TypeError):
        return False
    return recorded == fingerprint(chroma_dir)


def trust(root: Path, chroma_dir: Path) -> None:
    """Record the index folder's fingerprint (call after the Chroma client is closed)."""
    target = root / CHECKED_FILE
    temporary = target.with_suffix(".tmp")
    try:
        temporary.write_text(json.dumps({"fingerprint": fingerprint(chroma_dir)}))
        os.replace(temporary, target)
    except OSError:
        pass  # a read-only folder: the next open checks again, nothing worse


def distrust(root: Path) -> None:
    """Forget the recorded fingerprint (the next open checks the index)."""
    try:
        (root / CHECKED_FILE).unlink()
    except OSError:
        pass


@dataclass
class OpenCheck:
    """What :func:`check_local_index` found (nothing when ``checked`` is false: the folder was trusted)."""

    checked: bool = False
    #: collection name (or ``chroma.sqlite3``) -> what is wrong with its files
    damaged: dict[str, str] = field(default_factory=dict)
    #: user id -> (memories the journal holds as indexed, memories the index has)
    lost: dict[str, tuple[int, int]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.damaged and not self.lost

    def warnings(self, location: str) -> list[str]:
        """One message per kind of problem, each naming what to run."""
        messages = []
        if self.damaged:
            what = "; ".join(f"{name}: {reason}" for name, reason in sorted(self.damaged.items())[:3])
            more = f" (and {len(self.damaged) - 3} more)" if len(self.damaged) > 3 else ""
            messages.append(
                f"the memory index at {location} is damaged ({what}{more}). Searches of the users it holds "
                f"raise MemoryUnavailableError instead of crashing; {REBUILD_HINT}"
            )
        if self.lost:
            missing = sum(journal - index for journal, index in self.lost.values())
            messages.append(
                f"the memory index at {location} has lost {missing} memories of {len(self.lost)} users that the "
                "journal holds: run `recall doctor --repair` (repair(store)) to index them again"
            )
        return messages


def check_local_index(root: Path, chroma_dir: Path, journal: Journal, index: ChromaIndex) -> OpenCheck:
    """Check a local index before use unless it is trusted (see the module docstring); fence off
    what is damaged in ``index``."""
    if is_trusted(root, chroma_dir):
        return OpenCheck()
    check = OpenCheck(checked=True)
    check.damaged, unknown = check_index_files(chroma_dir)
    if unknown:
        check.damaged.update(probe_collections(chroma_dir, unknown))
    index.mark_damaged(check.damaged)
    indexed = journal.indexed_counts()
    if not indexed or WHOLE_INDEX in check.damaged:
        return check
    counts = {}
    if chroma_dir.is_dir():
        try:
            for collection in index.collections():  # opens the client: the folder's files passed the check
                owner = (collection.metadata or {}).get("user_id")
                if owner is not None and collection.name == collection_name(owner, MEMORIES):
                    if collection.name not in check.damaged:
                        counts[owner] = int(index.call(collection.count))
        except Exception as exc:  # Chroma cannot open or read the folder: say so, open the store anyway
            check.damaged[WHOLE_INDEX] = f"Chroma cannot read the index: {type(exc).__name__}: {exc}"
            return check
    for user_id, expected in indexed.items():
        if collection_name(user_id, MEMORIES) in check.damaged:
            continue
        have = counts.get(user_id, 0)
        if have < expected:
            check.lost[user_id] = (expected, have)
    return check


def index_without_journal(journal: Journal, index: ChromaIndex) -> dict[str, int]:
    """User id -> memories the index holds, when the journal holds none at all (else ``{}``).

    Every write is journaled before it is indexed, so an index with memories beside an empty
    journal means the journal was lost: deleted, emptied, or replaced by a new file. Opening
    makes a new journal without a word, and a repair that pruned what only the index holds
    would then delete the only copy (:func:`~recall_core.memory.upkeep.maintenance.repair`
    writes them back instead).
    """
    if journal.count():
        return {}
    counts = {}
    damaged = index.damaged()
    try:
        for collection in index.collections():
            owner = (collection.metadata or {}).get("user_id")
            if owner is not None and collection.name == collection_name(owner, MEMORIES) and collection.name not in damaged:
                count = int(index.call(collection.count))
                if count:
                    counts[owner] = count
    except Exception:  # a check that fails must not keep the store from opening: doctor reads it again
        return counts
    return counts


def lost_journal_warning(location: str, journal: Journal, counts: dict[str, int]) -> str:
    """What to say when :func:`index_without_journal` found memories."""
    return (
        f"the journal {journal.path} holds no memories, but the index at {location} holds {sum(counts.values())} "
        f"memories of {len(counts)} users: the journal was lost or replaced. Run `recall doctor --repair` "
        "(repair(store)) to write them back into the journal; until then searches read the index alone"
    )

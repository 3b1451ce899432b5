"""Checking and mending the index against the journal: ``doctor``, ``repair``, ``rebuild_index``.

The journal is the source of truth (see journal.py). These are what ``recall doctor``,
``recall doctor --repair`` and ``recall rebuild-index`` call.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from .backends import CHROMA_DIR, forget_chroma_system
from .index import LM_KEYS
from .journal import DELETING, INDEXED, PENDING, JournalRow
from .records import index_metadata
from .store import MemoryStore
from .writer import MemoryWriter


@dataclass
class UserReport:
    """How one user's index compares with the journal (lists of memory ids)."""

    user_id: str
    journal: int = 0
    index: int = 0
    pending: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    mismatched: list[str] = field(default_factory=list)
    deleting: list[str] = field(default_factory=list)
    lm_missing: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.pending or self.missing or self.extra or self.mismatched or self.deleting or self.lm_missing)


@dataclass
class DoctorReport:
    """What :func:`doctor` found. ``ok`` is true when the index matches the journal exactly."""

    location: str
    kind: str
    users: list[UserReport] = field(default_factory=list)
    #: recall collections in the index that name no user (not made by recall): pruned by a local repair.
    unknown_collections: list[str] = field(default_factory=list)
    #: on a server, users with collections that this client's journal never saw (written by
    #: other machines): listed for information, not a fault.
    other_users: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(u.ok for u in self.users) and not self.unknown_collections

    def totals(self) -> dict[str, int]:
        keys = ("journal", "index")
        totals = {k: sum(getattr(u, k) for u in self.users) for k in keys}
        for k in ("pending", "missing", "extra", "mismatched", "deleting", "lm_missing"):
            totals[k] = sum(len(getattr(u, k)) for u in self.users)
        totals["users"] = len(self.users)
        totals["unknown_collections"] = len(self.unknown_collections)
        totals["other_users"] = len(self.other_users)
        return totals

    def summary(self) -> str:
        """A few human-readable lines."""
        t = self.totals()
        head = f"memory at {self.location} ({self.kind}): {t['users']} users, {t['journal']} memories in the journal, {t['index']} in the index"
        if self.ok:
            return head + "\nOK: the index matches the journal."
        lines = [head]
        labels = {
            "pending": "journaled, not indexed yet", "missing": "missing from the index",
            "mismatched": "different in the index", "extra": "in the index but not in the journal",
            "deleting": "deleted, still to remove from the index", "lm_missing": "without their LM key in the index",
        }  # fmt: skip
        for key, label in labels.items():
            if t[key]:
                lines.append(f"  {t[key]} {label}")
        if self.unknown_collections:
            lines.append(f"  {len(self.unknown_collections)} recall collections that name no user")
        lines.append("Run `recall doctor --repair` (repair(store)) to fix, or `recall rebuild-index` to rebuild.")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["ok"] = self.ok
        data["totals"] = self.totals()
        return data


@dataclass
class RepairReport:
    """What :func:`repair` or :func:`rebuild_index` changed (numbers of memories)."""

    indexed: int = 0
    removed: int = 0
    pruned: int = 0
    reencoded: int = 0
    users: int = 0


def doctor(store: MemoryStore, users: Iterable[str] | None = None, check_vectors: bool = False) -> DoctorReport:
    """Compare the index with the journal, user by user; change nothing.

    Args:
        users: only these users (default: every user of the journal, and of the index).
        check_vectors: also compare the stored vectors with the journal's (slower).

    Raises:
        MemoryUnavailableError: the index cannot be reached.
    """
    report = DoctorReport(location=store.location, kind=store.kind)
    journal_users = set(store.journal.users())
    index_users: dict[str, str] = {}
    for collection in store.index.collections():
        owner = (collection.metadata or {}).get("user_id")
        if owner is None:
            report.unknown_collections.append(collection.name)
        elif owner not in journal_users:
            index_users[owner] = collection.name
    if users is None:
        # On a local store the journal knows every user: an index-only user is damage. On a
        # server, other machines' clients write users this journal never saw.
        wanted = sorted(journal_users | (set(index_users) if store.kind == "local" else set()))
        if store.kind == "server":
            report.other_users = sorted(index_users)
    else:
        wanted = list(users)
    for user_id in wanted:
        report.users.append(_check_user(store, user_id, check_vectors))
    return report


def _check_user(store: MemoryStore, user_id: str, check_vectors: bool) -> UserReport:
    memory = store.for_user(user_id)
    live = {row.id: row for row in store.journal.rows(user_id, (PENDING, INDEXED))}
    tombstones = [row.id for row in store.journal.rows(user_id, (DELETING,))]
    indexed = memory.all(include_embeddings=check_vectors)
    in_index: dict[str, Any] = {}
    for item in indexed:
        record, vector = item if check_vectors else (item, None)
        in_index[record.id] = (record, vector)
    report = UserReport(user_id=user_id, journal=len(live), index=len(in_index))
    report.pending = [i for i, row in live.items() if row.state == PENDING]
    report.missing = [i for i in live if i not in in_index]
    report.extra = [i for i in in_index if i not in live and i not in set(tombstones)]
    report.deleting = list(tombstones)
    for memory_id, (record, vector) in in_index.items():
        row = live.get(memory_id)
        if row is None:
            continue
        expected = index_metadata(row)
        got = dict(record.metadata)
        got.update(
            user_id=record.user_id, role=record.role, session_id=record.session_id, timestamp=record.timestamp,
            turn_index=record.turn_index, chunk_index=record.chunk_index, n_chunks=record.n_chunks,
        )  # fmt: skip
        expected.pop("written_at", None)
        same = record.text == row.text and got == expected
        if same and check_vectors and row.embedding is not None and vector is not None:
            same = bool(np.allclose(np.asarray(vector, dtype=np.float32), row.embedding, atol=1e-4))
        if not same:
            report.mismatched.append(memory_id)
    keyed = [i for i, row in live.items() if row.lm_key is not None and i in in_index]
    if keyed:
        found = store.index.get(user_id, keyed, kind=LM_KEYS)
        have = set(found["ids"]) if found is not None else set()
        report.lm_missing = [i for i in keyed if i not in have]
    return report


def repair(
    store: MemoryStore, report: DoctorReport | None = None, prune_extra: bool | None = None, progress: bool = False
) -> RepairReport:
    """Make the index match the journal: index what is pending, missing or different, and
    finish interrupted deletes.

    Args:
        report: a :func:`doctor` report to act on (default: run doctor now).
        prune_extra: also delete memories the index has and the journal does not. Default:
            yes for a local store; no for a server, where other machines' clients write
            memories this journal never saw.
    """
    if report is None:
        report = doctor(store)
    if prune_extra is None:
        prune_extra = store.kind == "local"
    result = RepairReport()
    writer = MemoryWriter(store)
    for user in report.users:
        if user.ok:
            continue
        result.users += 1
        if user.deleting:
            if not store.journal.count(user.user_id) - len(user.deleting):
                store.index.drop_user(user.user_id)  # an interrupted forget(): drop the whole user
                store.journal.purge_user(user.user_id)
            else:
                store.index.delete(user.user_id, user.deleting)
                store.journal.purge(user.deleting)
            result.removed += len(user.deleting)
        todo = list(dict.fromkeys(user.pending + user.missing + user.mismatched + user.lm_missing))
        if todo:
            rows = [r for r in store.journal.get_many(todo) if r.state != DELETING]
            reencode = sum(1 for r in rows if r.embedding is None or r.encoder != store.encoder.name)
            _index_rows(store, writer, rows, progress)
            result.indexed += len(rows)
            result.reencoded += reencode
        if prune_extra and user.extra:
            if user.journal == 0 and not user.deleting:
                store.index.drop_user(user.user_id)  # a user only the index knows
            else:
                store.index.delete(user.user_id, user.extra)
            result.pruned += len(user.extra)
    if prune_extra:
        for name in report.unknown_collections:
            store.index.delete_collection(name)
            result.pruned += 1
    return result


def rebuild_index(
    store: MemoryStore, reencode: bool = False, fresh: bool = False, progress: bool = True
) -> RepairReport:
    """Rebuild the index from the journal: every user of the journal gets new collections.

    The journal keeps each memory's vector, so a rebuild gives identical search results
    without re-encoding; ``reencode=True`` embeds everything again with the store's encoder
    (to move to another encoder). Rows whose vector came from another encoder are always
    re-encoded. LM keys kept in the journal are restored too.

    Args:
        fresh: for a local store, delete the whole Chroma folder first: the way out when the
            index is so damaged that Chroma cannot open it.
    """
    if fresh:
        if store.kind != "local" or store.root is None:
            raise ValueError("fresh=True deletes a local Chroma folder; a server's data is the server's to manage")
        store.index.reset()
        shutil.rmtree(store.root / CHROMA_DIR, ignore_errors=True)
        forget_chroma_system(store.root / CHROMA_DIR)
    result = RepairReport()
    writer = MemoryWriter(store)
    for user_id in store.journal.users():
        store.index.drop_user(user_id)
        rows = list(store.journal.rows(user_id, (PENDING, INDEXED)))
        store.journal.purge_user(user_id)  # tombstones: their collections are gone already
        if reencode:
            rows = [r.with_(embedding=None, encoder=None) for r in rows]
        result.reencoded += sum(1 for r in rows if r.embedding is None or r.encoder != store.encoder.name)
        _index_rows(store, writer, rows, progress and len(rows) > 1000, desc=f"rebuild {user_id}")
        result.indexed += len(rows)
        result.users += 1
    return result


def _index_rows(
    store: MemoryStore, writer: MemoryWriter, rows: Sequence[JournalRow], progress: bool, desc: str = "repair"
) -> None:
    """Embed (where needed) and index journal rows, in batches."""
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(rows), desc=desc, unit="memory")
    step = 2048
    try:
        for start in range(0, len(rows), step):
            part = list(rows[start : start + step])
            writer.index(writer.embed(part))
            if bar is not None:
                bar.update(len(part))
    finally:
        if bar is not None:
            bar.close()


__all__ = ["DoctorReport", "RepairReport", "UserReport", "doctor", "rebuild_index", "repair"]

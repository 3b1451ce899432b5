"""What ``doctor`` finds and what ``repair`` and ``rebuild_index`` did (:mod:`~recall_core.memory.upkeep.maintenance`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from recall_core.memory.index import KINDS, REBUILD_HINT, collection_name
from recall_core.memory.upkeep.probe import WHOLE_INDEX


def collection_names(user_id: str) -> tuple[str, ...]:
    """The names of every collection ``user_id`` may have."""
    return tuple(collection_name(user_id, kind) for kind in KINDS)


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
    #: what is wrong with the user's collections' files (then nothing else was read), or ``None``
    damaged: str | None = None

    @property
    def ok(self) -> bool:
        return not (self.pending or self.missing or self.extra or self.mismatched or self.deleting or self.damaged)


@dataclass
class DoctorReport:
    """What :func:`doctor` found. ``ok`` is true when the index matches the journal exactly."""

    location: str
    kind: str
    users: list[UserReport] = field(default_factory=list)
    #: recall collections in the index that name no user (not made by recall): pruned by a local repair.
    unknown_collections: list[str] = field(default_factory=list)
    #: LM-key collections (``recall-k-*``) that earlier releases wrote for the retired hidden query
    #: without a query head; nothing reads them: ``repair`` deletes them.
    obsolete_collections: list[str] = field(default_factory=list)
    #: on a server, users with collections that this client's journal never saw (written by
    #: other machines): listed for information, not a fault.
    other_users: list[str] = field(default_factory=list)
    #: local index: collections (or ``chroma.sqlite3``, the whole index) whose files are damaged -> what is wrong
    damaged: dict[str, str] = field(default_factory=dict)
    #: whether each collection was also read and searched in a child process (``probe=True``)
    probed: bool = False
    #: what SQLite finds wrong with the journal file (then nothing else was compared), else ``None``
    journal_damaged: str | None = None

    @property
    def ok(self) -> bool:
        return (
            all(u.ok for u in self.users) and not self.unknown_collections and not self.obsolete_collections
            and not self.damaged and self.journal_damaged is None
        )  # fmt: skip

    def totals(self) -> dict[str, int]:
        keys = ("journal", "index")
        totals = {k: sum(getattr(u, k) for u in self.users) for k in keys}
        for k in ("pending", "missing", "extra", "mismatched", "deleting"):
            totals[k] = sum(len(getattr(u, k)) for u in self.users)
        totals["users"] = len(self.users)
        totals["unknown_collections"] = len(self.unknown_collections)
        totals["obsolete_collections"] = len(self.obsolete_collections)
        totals["other_users"] = len(self.other_users)
        totals["damaged"] = len(self.damaged)
        return totals

    def summary(self) -> str:
        """A few human-readable lines."""
        if self.journal_damaged is not None:
            return f"memory at {self.location} ({self.kind}): DAMAGED: {self.journal_damaged}."
        t = self.totals()
        head = f"memory at {self.location} ({self.kind}): {t['users']} users, {t['journal']} memories in the journal, {t['index']} in the index"
        if self.ok:
            return head + "\nOK: the index matches the journal."
        lines = [head]
        labels = {
            "pending": "journaled, not indexed yet", "missing": "missing from the index",
            "mismatched": "different in the index", "extra": "in the index but not in the journal",
            "deleting": "deleted, still to remove from the index",
        }  # fmt: skip
        for name, reason in sorted(self.damaged.items()):
            owners = [u.user_id for u in self.users if u.damaged is not None and name in collection_names(u.user_id)]
            whose = f"user {owners[0]!r}" if owners else name
            lines.append(f"  DAMAGED: {whose}: {reason}")
        for key, label in labels.items():
            if t[key]:
                lines.append(f"  {t[key]} {label}")
        if self.unknown_collections:
            lines.append(f"  {len(self.unknown_collections)} recall collections that name no user (or left by a rebuild)")
        if self.obsolete_collections:
            lines.append(
                f"  {len(self.obsolete_collections)} obsolete LM-key collection(s) (recall-k-*, the retired hidden query "
                "without a query head): nothing reads them, repair deletes them"
            )
        if WHOLE_INDEX in self.damaged:
            lines.append(f"The whole index is damaged: {REBUILD_HINT}.")
        elif self.damaged:
            lines.append(f"The index is damaged: {REBUILD_HINT}. `recall doctor --repair` rebuilds only the damaged users.")
        elif t["extra"]:  # a rebuild from the journal would drop them: they are in the index alone
            lines.append("Run `recall doctor --repair` (repair(store)) to fix: it writes what only the index holds "
                         "back into the journal (`--prune-extra` deletes it instead). Do not rebuild the index "
                         "before that: a rebuild keeps only what the journal holds.")
        else:
            lines.append("Run `recall doctor --repair` (repair(store)) to fix, or `recall rebuild-index` to rebuild.")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["ok"] = self.ok
        data["totals"] = self.totals()
        return data


@dataclass
class RepairReport:
    """What :func:`repair` or :func:`rebuild_index` changed (numbers of memories), and the users it
    could not mend (user id -> why; their memories stay safe in the journal)."""

    indexed: int = 0
    removed: int = 0
    pruned: int = 0
    #: memories only the index held, written back into the journal (a lost or older journal)
    adopted: int = 0
    reencoded: int = 0
    #: obsolete LM-key collections deleted (see :attr:`DoctorReport.obsolete_collections`)
    obsolete: int = 0
    users: int = 0
    failed: dict[str, str] = field(default_factory=dict)

"""Checking and mending the index against the journal: ``doctor``, ``repair``, ``rebuild_index``.

The journal is the source of truth (see journal.py). These are what ``recall doctor``,
``recall doctor --repair`` and ``recall rebuild-index`` call. None of them leaves a user
worse off than before: a rebuild fills new collections (or, ``fresh``, a new folder) and
swaps them in only once they are complete, and one user's failure is reported, not allowed
to stop the others.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from recall_core.memory.backends import CHROMA_DIR, forget_chroma_system, local_backend, scrub_deleted
from recall_core.memory.errors import (
    EncoderMismatchError,
    JournalDamagedError,
    MemoryUnavailableError,
    journal_damaged_hint,
)
from recall_core.memory.index import (
    MEMORIES,
    OBSOLETE_LM_KEYS,
    REBUILD_HINT,
    ChromaIndex,
    collection_name,
)
from recall_core.memory.journal import DELETING, INDEXED, PENDING, JournalRow, same_metadata
from recall_core.memory.protocols import StoreParts
from recall_core.memory.records import MemoryRecord, check_owner, index_metadata
from recall_core.memory.upkeep.adopt import adopt_index_only
from recall_core.memory.upkeep.probe import WHOLE_INDEX, probe_collections
from recall_core.memory.upkeep.reports import DoctorReport, RepairReport, UserReport, collection_names
from recall_core.memory.upkeep.segments import check_database, check_index_files, vector_segments
from recall_core.memory.upkeep.taken_back import mark_written, scrub_forgotten
from recall_core.memory.writer import MemoryWriter
from recall_core.paths import drop_derived

#: Where ``rebuild_index(fresh=True)`` builds the new index, and where the old one waits to be removed.
STAGING_DIR = "chroma.rebuild"
RETIRED_DIR = "chroma.old"
#: Journal rows embedded and indexed per step.
STEP = 2048

F = TypeVar("F", bound=Callable[..., Any])


def _one_at_a_time(upkeep: F) -> F:
    """``upkeep(store, ...)`` holding the store's index's upkeep lock: doctor, repair and rebuild_index
    run one at a time in a process, since each may reset the client under another's reads (two
    doctors at once reported the whole index damaged, and repair answered with a fresh rebuild:
    a reviewer, 2026-12-08)."""

    @functools.wraps(upkeep)
    def run(store: StoreParts, *args: Any, **kwargs: Any) -> Any:
        with getattr(store.index, "upkeep", None) or contextlib.nullcontext():
            return upkeep(store, *args, **kwargs)

    return run  # type: ignore[return-value]


@_one_at_a_time
def doctor(
    store: StoreParts, users: Iterable[str] | None = None, check_vectors: bool = False, probe: bool = False
) -> DoctorReport:
    """Compare the index with the journal, user by user; change nothing.

    On a local store the HNSW files of every collection are checked first, without loading
    them (segments.py): Chroma crashes the process on some damaged files, so a damaged
    collection is reported and never read.

    Args:
        users: only these users (default: every user of the journal, and of the index).
        check_vectors: also compare the stored vectors with the journal's (slower).
        probe: local store: also read and search every collection in a child process first
            (probe.py), which finds damage the file check cannot see without risking this
            process; about 2 s. ``recall doctor`` does.

    Raises:
        MemoryUnavailableError: a server cannot be reached.
    """
    report = DoctorReport(location=store.location, kind=store.kind)
    problem = store.journal.damage()
    if problem is not None:  # nothing else can be compared with a journal SQLite cannot read
        report.journal_damaged = journal_damaged_hint(store.journal.path, problem)
        return report
    journal_users = set(store.journal.users())
    if store.kind == "local" and store.root is not None:
        report.damaged = _check_local_files(store, probe)
        report.probed = probe
        if WHOLE_INDEX in report.damaged:  # Chroma cannot open the folder: nothing more to read
            for user_id in sorted(journal_users) if users is None else list(users):
                live = sum(1 for _ in store.journal.rows(user_id))
                report.users.append(UserReport(user_id, journal=live, damaged=report.damaged[WHOLE_INDEX]))
            return report
    try:
        _check_index(store, report, journal_users, users, check_vectors)
    except Exception as error:  # a local Chroma failing to read its own files: damage to report, not a crash
        if store.kind != "local":
            raise  # a server that cannot be reached: nothing was checked
        _whole_index_damaged(store, report, journal_users, users, error)
    return report


def _whole_index_damaged(
    store: StoreParts, report: DoctorReport, journal_users: set[str], users: Iterable[str] | None, error: Any
) -> None:
    """A local index Chroma failed to read: every user's memories are in the journal, the index is to rebuild."""
    report.damaged[WHOLE_INDEX] = f"Chroma cannot read the index: {type(error).__name__}: {error}"
    report.users = [
        UserReport(user_id, journal=sum(1 for _ in store.journal.rows(user_id)), damaged=report.damaged[WHOLE_INDEX])
        for user_id in (sorted(journal_users) if users is None else list(users))
    ]


def _check_index(
    store: StoreParts, report: DoctorReport, journal_users: set[str], users: Iterable[str] | None, check_vectors: bool
) -> None:
    index_users: dict[str, str] = {}
    for collection in store.index.collections():
        owner = (collection.metadata or {}).get("user_id")
        if owner is None or collection.name not in collection_names(owner):  # not recall's, or a rebuild's leftover
            report.unknown_collections.append(collection.name)
        elif collection.name == collection_name(owner, OBSOLETE_LM_KEYS):
            report.obsolete_collections.append(collection.name)
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
        damage = store.index.damage(user_id)
        if damage is not None:
            live = sum(1 for _ in store.journal.rows(user_id))
            report.users.append(UserReport(user_id, journal=live, damaged=damage))
            continue
        report.users.append(_check_user(store, user_id, check_vectors))


def _check_local_files(store: StoreParts, probe: bool) -> dict[str, str]:
    """Damaged collections of a local store (by their files; and by a child's reads with ``probe``),
    fenced off in ``store.index`` so that nothing here reads them."""
    chroma_dir = Path(store.root or ".") / CHROMA_DIR
    # Close this process's client first: its files are whole only once Chroma has flushed them,
    # and the child probe must be the folder's only reader. The next use opens it again. Other
    # threads' index calls wait meanwhile (upkeep/quiet.py): their files must hold still.
    with store.index.quiet.alone():
        store.index.reset()
        damaged, unknown = check_index_files(chroma_dir)
        broken = check_database(chroma_dir / WHOLE_INDEX)
        if broken is not None:
            damaged[WHOLE_INDEX] = broken
        damaged.update(store.index.damaged())
        if WHOLE_INDEX not in damaged and (probe or unknown):
            names = sorted(set(vector_segments(chroma_dir).values()) if probe else set(unknown))
            found = probe_collections(chroma_dir, [name for name in names if name not in damaged])
            damaged.update({name: reason for name, reason in found.items() if name not in damaged})
        store.index.mark_damaged(damaged)
    return damaged


def _check_user(store: StoreParts, user_id: str, check_vectors: bool) -> UserReport:
    live = {row.id: row for row in store.journal.rows(user_id, (PENDING, INDEXED))}
    tombstones = [row.id for row in store.journal.rows(user_id, (DELETING,))]
    in_index = _index_records(store, user_id, check_vectors)
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
        if record.key is not None:  # a put()'s key, which the record holds apart from its metadata
            got["key"] = record.key
        expected.pop("written_at", None)
        same = record.text == row.text and same_metadata(got, expected)
        if same and check_vectors and row.embedding is not None and vector is not None:
            same = bool(np.allclose(np.asarray(vector, dtype=np.float32), row.embedding, atol=1e-4))
        if not same:
            report.mismatched.append(memory_id)
    return report


@_one_at_a_time
def repair(
    store: StoreParts, report: DoctorReport | None = None, prune_extra: bool | None = None, progress: bool = False
) -> RepairReport:
    """Make the index match the journal: index what is pending, missing or different, finish
    interrupted deletes and forgets, rebuild the collections of users whose files are damaged,
    and delete obsolete LM-key collections (the retired hidden query's, from earlier releases).

    Args:
        report: a :func:`doctor` report to act on (default: run doctor now).
        prune_extra: delete memories the index has and the journal does not (default: no). Else a
            local store writes them back into its journal (``adopted``: writes are journaled first,
            so only a lost journal leaves them); a server's are left alone (other clients').

    A user whose repair fails for another reason than an unreachable index is listed in the
    result's ``failed`` and the others are repaired.

    A local index damaged as a whole (its ``chroma.sqlite3``, or one Chroma cannot open) is rebuilt
    from the journal in a new folder (``rebuild_index(store, fresh=True)``, what doctor names): until
    2026-12-07 ``recall doctor --repair`` stopped there with an error (rc 2), though the docs said it
    fixes all of it (a reviewer).

    Raises:
        MemoryUnavailableError: the index cannot be reached.
    """
    finish_renames(store)
    if report is None:
        report = doctor(store)
    if report.journal_damaged is not None:
        raise JournalDamagedError(report.journal_damaged)
    if WHOLE_INDEX in report.damaged:
        if store.kind != "local" or store.root is None:
            raise MemoryUnavailableError(f"{report.damaged[WHOLE_INDEX]}: {REBUILD_HINT}")
        return rebuild_index(store, fresh=True, progress=progress)
    prune_extra = bool(prune_extra)
    result = RepairReport()
    writer = MemoryWriter(store)
    for user in report.users:
        if user.ok:
            continue
        result.users += 1
        try:
            if user.damaged is not None:
                indexed, reencoded = _rebuild_user(store, writer, user.user_id, reencode=False, progress=progress)
                result.indexed += indexed
                result.reencoded += reencoded
                continue
            _repair_user(store, writer, user, prune_extra, result, progress)
        except MemoryUnavailableError:
            raise
        except Exception as exc:  # one user's trouble must not stop the others' repair
            result.failed[user.user_id] = f"{type(exc).__name__}: {exc}"
    if prune_extra:
        for name in report.unknown_collections:
            store.index.delete_collection(name)
            result.pruned += 1
    for name in report.obsolete_collections:  # on a server too: no release reads them any more
        store.index.delete_collection(name)
        result.obsolete += 1
    # What deleted collections and rows left on a local disk goes at the store's close (an interrupted
    # forget's words and vectors, or a forget's of an earlier release, whose folders stayed).
    scrub_deleted(store.root)
    return result


def _repair_user(
    store: StoreParts, writer: MemoryWriter, user: UserReport, prune_extra: bool, result: RepairReport, progress: bool
) -> None:
    forgetting = store.journal.forgetting(user.user_id)
    # The report may be overtaken by writers (a thread of this process, another client of a server):
    # what it says is checked against the journal now. Until 2026-12-08 a delete that finished after
    # doctor made repair drop the user's whole collection, and a turn deleted and written again under
    # its id was deleted from the index (a reviewer).
    tombstones = {row.id for row in store.journal.rows(user.user_id, (DELETING,))}
    deleting = [i for i in user.deleting if i in tombstones]
    if deleting or forgetting:
        drop_derived(deleting)  # an interrupted delete or forget: its derived copies go too
        if not store.journal.count(user.user_id) - len(tombstones):
            store.index.drop_user(user.user_id)  # an interrupted forget(): drop the whole user
            store.journal.purge_user(user.user_id)
            scrub_forgotten(store)
        elif forgetting:  # a forget, then new turns: everything but those goes
            live = {row.id for row in store.journal.rows(user.user_id)}
            store.index.delete(user.user_id, [i for i in _index_ids(store, user.user_id) if i not in live])
            store.journal.purge_user(user.user_id)
            scrub_forgotten(store)
        else:
            store.index.delete(user.user_id, deleting)
            store.journal.purge(deleting)
        result.removed += len(deleting)
    todo = list(dict.fromkeys(user.pending + user.missing + user.mismatched))
    if todo:
        rows = [r for r in store.journal.get_many(todo) if r.state != DELETING]
        reencode = sum(1 for r in rows if r.embedding is None or r.encoder != store.encoder.name)
        _index_rows(store, writer, rows, progress)
        result.indexed += len(rows)
        result.reencoded += reencode
    # (a memory written since doctor read the journal is no extra: until 2026-12-08 it was pruned, a reviewer)
    journaled = {row.id for row in store.journal.get_many(user.extra)}
    extra = [i for i in user.extra if i not in journaled]
    if prune_extra and extra:
        if not store.journal.count(user.user_id):
            store.index.drop_user(user.user_id)  # a user only the index knows
        else:
            store.index.delete(user.user_id, extra)
        result.pruned += len(extra)
    elif extra and store.kind == "local" and not forgetting:  # the only copy: back into the journal
        adopted = adopt_index_only(store, writer, user.user_id, extra)
        _index_rows(store, writer, adopted, progress)
        result.adopted, result.reencoded = result.adopted + len(adopted), result.reencoded + len(adopted)


def _index_records(store: StoreParts, user_id: str, with_vectors: bool) -> dict[str, tuple[MemoryRecord, Any]]:
    """Everything the index holds for a user, as it is (reads hide what the journal deleted; doctor must see it)."""
    include = ["documents", "metadatas"] + (["embeddings"] if with_vectors else [])
    found: dict[str, tuple[MemoryRecord, Any]] = {}
    page = 1000
    while True:
        result = store.index.page(user_id, include, page, len(found))
        if result is None or not result["ids"]:
            return found
        vectors = result["embeddings"] if with_vectors else [None] * len(result["ids"])
        for memory_id, text, meta, vector in zip(result["ids"], result["documents"], result["metadatas"], vectors, strict=True):
            check_owner(user_id, memory_id, meta)
            found[memory_id] = (MemoryRecord.from_index(memory_id, text, meta), vector)
        if len(result["ids"]) < page:
            return found


def _index_ids(store: StoreParts, user_id: str) -> list[str]:
    found = store.index.with_collection(user_id, MEMORIES, lambda c: c.get(include=[])["ids"])
    return list(found or [])


@_one_at_a_time
def rebuild_index(
    store: StoreParts, reencode: bool = False, fresh: bool = False, progress: bool = True
) -> RepairReport:
    """Rebuild the index from the journal: every user of the journal gets new collections.

    The journal keeps each memory's vector, so a rebuild gives identical search results
    without re-encoding; ``reencode=True`` embeds everything again with the store's encoder
    (to move to another encoder). Rows whose vector came from another encoder are always
    re-encoded. Deletes and forgets that had not reached the index are finished, and obsolete
    LM-key collections are dropped.

    Each user's rows are written into staging collections, which replace the user's
    collections only once complete; a user that fails is listed in ``failed`` and keeps the
    collections they had. With ``fresh`` (local store), the whole index is built in a new
    folder beside the old one, which it replaces only at the end: the way out when the old
    index is too damaged to open, never opened by the rebuild.

    Raises:
        MemoryUnavailableError: the index cannot be reached (nothing was replaced).
        EncoderMismatchError: without ``reencode``, no journaled vector is the store's encoder's (a
            mistyped encoder would re-encode them all; until 2026-12-07 it did, a reviewer).
    """
    used = store.journal.encoders()
    if not reencode and used and store.encoder.name not in used:
        raise EncoderMismatchError(
            f"the journal's vectors were computed by {', '.join(map(repr, used))}, not by this store's encoder "
            f"{store.encoder.name!r}: open the store with the encoder they were written with, or pass reencode=True "
            "(`recall rebuild-index --reencode`) to embed them all again with it. Nothing was changed"
        )
    if fresh:
        if store.kind != "local" or store.root is None:
            raise ValueError("fresh=True deletes a local Chroma folder; a server's data is the server's to manage")
        return _rebuild_fresh(store, Path(store.root), reencode, progress)
    result = RepairReport()
    writer = MemoryWriter(store)
    _drop_renamed(store, store.index)
    for user_id in store.journal.users():
        try:
            indexed, reencoded = _rebuild_user(store, writer, user_id, reencode, progress)
        except MemoryUnavailableError:
            raise
        except Exception as exc:  # the user keeps their old collections; the others go on
            result.failed[user_id] = f"{type(exc).__name__}: {exc}"
            continue
        result.indexed += indexed
        result.reencoded += reencoded
        result.users += 1
    scrub_deleted(store.root)  # the replaced collections' folders, a finished forget's words: at the close
    return result


def _rebuild_user(
    store: StoreParts, writer: MemoryWriter, user_id: str, reencode: bool, progress: bool
) -> tuple[int, int]:
    """New collections for one user from the journal, swapped in once complete: ``(indexed, re-encoded)``."""
    index, journal = store.index, store.journal
    rows = _live_rows(store, user_id, reencode)
    reencoded = sum(1 for r in rows if r.embedding is None or r.encoder != store.encoder.name)
    index.drop_staging(user_id)
    try:
        written = _write_rows(store, writer, index, rows, progress and len(rows) > 1000, f"rebuild {user_id}", staging=True)
    except BaseException:
        try:
            index.drop_staging(user_id)
        except Exception:  # the first error is the one to report
            pass
        raise
    index.swap_in(user_id)
    journal.purge_user(user_id)  # tombstones and the forget mark: the old collections are gone
    mark_written(store, written)  # a forget or delete during the rebuild: out of the new collections
    return len(written) + _written_meanwhile(store, writer, written, [user_id]), reencoded


def _written_meanwhile(store: StoreParts, writer: MemoryWriter, written: Sequence[JournalRow], users: Iterable[str]) -> int:
    """Index the rows of ``users`` written or changed since a rebuild read them (``written``: what it put in
    the new collections): they went to the old ones. Until 2026-12-08 they were lost from the index, in
    the journal as indexed (a reviewer). Returns how many."""
    filled = {row.id: _held(row) for row in written}
    since = [row for user_id in users for row in store.journal.rows(user_id, (PENDING, INDEXED))
             if filled.get(row.id) != _held(row)]  # fmt: skip
    if since:
        _index_rows(store, writer, since, False)
    return len(since)


def _held(row: JournalRow) -> tuple[Any, ...]:
    """What the index holds of a journal row: its words, what they were embedded from, its metadata."""
    return row.text, row.context, index_metadata(row)


def _rebuild_fresh(store: StoreParts, root: Path, reencode: bool, progress: bool) -> RepairReport:
    """Build a whole new index folder from the journal, then put it in place of the old one."""
    live_dir, staging_dir, retired_dir = root / CHROMA_DIR, root / STAGING_DIR, root / RETIRED_DIR
    shutil.rmtree(staging_dir, ignore_errors=True)  # an earlier rebuild that did not finish
    forget_chroma_system(staging_dir)
    staging = ChromaIndex(local_backend(staging_dir, str(root)))
    writer = MemoryWriter(store)
    result = RepairReport()
    written: list[JournalRow] = []
    users = store.journal.users()
    try:
        for user_id in users:
            rows = _live_rows(store, user_id, reencode)
            try:
                done_rows = _write_rows(store, writer, staging, rows, progress and len(rows) > 1000, f"rebuild {user_id}")
            except MemoryUnavailableError:
                raise
            except Exception as exc:  # this user's rows wait in the journal; the others go on
                result.failed[user_id] = f"{type(exc).__name__}: {exc}"
                continue
            written += done_rows
            result.indexed += len(done_rows)
            result.reencoded += sum(1 for r in rows if r.embedding is None or r.encoder != store.encoder.name)
            result.users += 1
    except BaseException:
        staging.close()
        forget_chroma_system(staging_dir)
        shutil.rmtree(staging_dir, ignore_errors=True)
        raise
    staging.close()
    forget_chroma_system(staging_dir)
    # Chroma makes no folder for an index that got no row: the new index is an empty one (until 2026-12-07 the
    # swap failed with a bare OSError after the old folder was moved aside, a reviewer).
    staging_dir.mkdir(parents=True, exist_ok=True)
    # The swap: the old folder is only renamed until the new one is in place; other threads' index
    # calls wait meanwhile (upkeep/quiet.py).
    with store.index.quiet.alone():
        store.index.reset()
        store.index.clear_damaged()
        forget_chroma_system(live_dir)
        shutil.rmtree(retired_dir, ignore_errors=True)
        if live_dir.exists():
            os.replace(live_dir, retired_dir)
        os.replace(staging_dir, live_dir)
    shutil.rmtree(retired_dir, ignore_errors=True)
    journal = store.journal
    done = {row.id for row in written}
    for user_id in users:
        # What the new index lacks (a failed user's rows) is pending again, for repair.
        journal.mark([row.id for row in journal.rows(user_id) if row.id not in done], PENDING)
        journal.purge_user(user_id)
    mark_written(store, written)  # a forget or delete during the rebuild: out of the new index
    for old, _ in journal.renamed_users():
        journal.clear_renamed(old)  # the old collections went with the old folder
    # Turns written or changed while the new index filled (a new user's too) went to the old one.
    result.indexed += _written_meanwhile(store, writer, written, [u for u in journal.users() if u not in result.failed])
    return result


def _live_rows(store: StoreParts, user_id: str, reencode: bool) -> list[JournalRow]:
    rows = list(store.journal.rows(user_id, (PENDING, INDEXED)))
    return [r.with_(embedding=None, encoder=None) for r in rows] if reencode else rows


def finish_renames(store: StoreParts) -> int:
    """Move the memories of users whose ids the journal upgrade normalised to NFC into their new
    collections, and drop the collections of the old spelling; return how many were moved."""
    moved = 0
    for old, new in store.journal.renamed_users():
        store.index.drop_user(old)
        rows = list(store.journal.rows(new, (PENDING,)))
        ready = [r for r in rows if r.embedding is not None]  # as they were: no re-encoding here
        mark_written(store, store.index.write(ready))
        if len(ready) < len(rows):
            _index_rows(store, MemoryWriter(store), [r for r in rows if r.embedding is None], progress=False)
        store.journal.clear_renamed(old)
        moved += len(rows)
    return moved


def _drop_renamed(store: StoreParts, index: ChromaIndex) -> None:
    for old, _ in store.journal.renamed_users():
        index.drop_user(old)
        store.journal.clear_renamed(old)


def _write_rows(
    store: StoreParts,
    writer: MemoryWriter,
    index: ChromaIndex,
    rows: Sequence[JournalRow],
    progress: bool,
    desc: str,
    staging: bool = False,
) -> list[JournalRow]:
    """Embed (where needed) and write journal rows into ``index`` (its staging collections with
    ``staging``), in steps; return the rows written. The journal's states are the caller's to set
    (:func:`~recall_core.memory.upkeep.taken_back.mark_written` once they are in the live index)."""
    bar = _bar(len(rows), desc) if progress else None
    written: list[JournalRow] = []
    try:
        for start in range(0, len(rows), STEP):
            part = writer.embed(list(rows[start : start + STEP]))
            written += index.write(part, store.encoder.name, staging=staging)
            if bar is not None:
                bar.update(len(part))
    finally:
        if bar is not None:
            bar.close()
    return written


def _index_rows(
    store: StoreParts, writer: MemoryWriter, rows: Sequence[JournalRow], progress: bool, desc: str = "repair"
) -> None:
    """Embed (where needed) and index journal rows into the live collections, in steps, marking them
    indexed (those a forget or delete removed meanwhile leave the index again)."""
    mark_written(store, _write_rows(store, writer, store.index, rows, progress, desc))


def _bar(total: int, desc: str) -> Any:
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit="memory")


__all__ = ["DoctorReport", "RepairReport", "UserReport", "doctor", "finish_renames", "rebuild_index", "repair"]

"""The ``recall`` commands that read or write a user's memory and load no model: remember, ingest,
forget, list, search, delete, export, import, doctor, rebuild; and how every command opens its store."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any


def _open_store(args: argparse.Namespace, create: bool = False) -> Any:
    """The store the command's arguments name; ``create``: a command that writes turns may make it
    (remember, ingest, import, chat), any other finds a path with no store a typo."""
    from recall_core.memory import MemoryStore
    from recall_core.memory.backends import JOURNAL_FILE

    root = _local_root(args)
    if create and getattr(args, "encoder", None) is not None and root is not None and not holds_store(root):
        # a store about to be made: its encoder is loaded first, so a bad one makes no store (until 2026-12-07
        # `remember --store NEW --encoder BAD` left a journal at NEW: a reviewer)
        from recall_core.memory.encoders import load_encoder

        args.encoder = load_encoder(args.encoder)
        _ = args.encoder.dimension  # a sentence-transformers encoder loads when first asked
    if root is not None and not create and not root.is_file():
        # a command that writes no turn: a path with no store is a typo (until 2026-12-06 it made an empty store
        # there; until 2026-12-07 it still did when the path came from --home or $RECALL_MEMORY, and for ask,
        # forget, delete and rebuild-index, a reviewer)
        if not holds_store(root):
            named = (f"--store {args.store!r} holds" if args.store else
                     f"the default store's folder {str(root)!r} ($RECALL_MEMORY, else --home or $RECALL_HOME's "
                     "memory, else the user data folder) holds")  # fmt: skip
            raise ValueError(f"{named} no memory store (no {JOURNAL_FILE}): this command uses one and creates none "
                             "(`recall remember`, `ingest`, `import` or `chat` do)")  # fmt: skip

    if args.server:
        if getattr(args, "read_only", False):
            raise ValueError("--read-only opens a local store (--store); a server store is read through the server")
        host, _, port = args.server.rpartition(":")
        if not host or not port.isdigit():
            raise ValueError(f"--server must look like HOST:PORT, got {args.server!r}")
        headers = dict(_split_header(h) for h in args.header)
        return MemoryStore.server(host=host, port=int(port), headers=headers or None, encoder=args.encoder,
                                  timeout=args.timeout)  # fmt: skip
    return MemoryStore.local(args.store, encoder=args.encoder, read_only=getattr(args, "read_only", False))


def _local_root(args: argparse.Namespace) -> Path | None:
    """The folder of the local store the arguments name (``None`` for a server)."""
    from recall_core.paths import default_memory_dir

    return Path(args.store).expanduser() if args.store else None if args.server else default_memory_dir()


def holds_store(root: Path) -> bool:
    """Whether ``root`` holds a local store (its journal or its index)."""
    from recall_core.memory.backends import CHROMA_DIR, JOURNAL_FILE

    return (root / JOURNAL_FILE).is_file() or (root / CHROMA_DIR).is_dir()


def no_default_store(args: argparse.Namespace) -> Path | None:
    """The default store's folder when nothing names a store (no ``--store``, ``--server``, ``--home``
    or ``$RECALL_MEMORY``: a path named there is checked as a typo) and none is there yet (a fresh
    install), else ``None``."""
    named = args.store or args.server or getattr(args, "home", None) or os.environ.get("RECALL_MEMORY")
    root = None if named else _local_root(args)
    return root if root is not None and not holds_store(root) else None


def _split_header(header: str) -> tuple[str, str]:
    name, sep, value = header.partition(":")
    if not sep or not name.strip():
        raise ValueError(f"--header must look like NAME:VALUE, got {header!r}")
    return name.strip(), value.strip()


def _remember(args: argparse.Namespace) -> int:
    with _open_store(args, create=True) as store:
        ids = store.writer.add_turn(args.user, args.role, args.text, session_id=args.session)
    print(f"remembered {len(ids)} memor{'y' if len(ids) == 1 else 'ies'} for {args.user!r}: {', '.join(ids)}")
    return 0


def _ingest(args: argparse.Namespace) -> int:
    with _open_store(args, create=True) as store:
        report = store.writer.ingest(args.file, user_id=args.user)
    print(report)
    return 0


def _forget(args: argparse.Namespace) -> int:
    with _open_store(args) as store:
        count = store.for_user(args.user).forget()
    print(f"forgot {count} memories of {args.user!r}")
    return 0


def _one_line(text: str, width: int = 100) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _list(args: argparse.Namespace) -> int:
    from recall_core.memory.upkeep.transfer import jsonl_line

    with _open_store(args) as store:
        where = {"session_id": args.session} if args.session is not None else None
        records = store.for_user(args.user).list(where=where, limit=args.limit)
    for record in records:
        if args.json:
            print(jsonl_line({"id": record.id, "timestamp": record.timestamp, "role": record.role,
                              "session_id": record.session_id, "text": record.text, "key": record.key,
                              "metadata": record.metadata}), end="")  # fmt: skip
        else:
            print(f"{record.id}  {record.timestamp}  {record.role:<9}  {record.session_id}  {_one_line(record.text)}")
    if not args.json:
        print(f"{len(records)} memor{'y' if len(records) == 1 else 'ies'} of {args.user!r}", file=sys.stderr)
    return 0


def _search(args: argparse.Namespace) -> int:
    with _open_store(args) as store:
        found = store.for_user(args.user).search(args.query, k=args.k)
    for candidate in found:
        print(f"{candidate.score:.3f}  {candidate.id}  {_one_line(candidate.text)}")
    if not found:
        print(f"no memories of {args.user!r} found", file=sys.stderr)
    return 0


def _delete(args: argparse.Namespace) -> int:
    with _open_store(args) as store:
        count = store.for_user(args.user).delete(args.ids)
    print(f"deleted {count} of {len(set(args.ids))} memories of {args.user!r}")
    return 0 if count == len(set(args.ids)) else 1


def _export(args: argparse.Namespace) -> int:
    if args.out:  # named here: the error came from the hidden file written beside it (a reviewer, 2026-12-07)
        from recall_core.paths import check_writable_file

        check_writable_file(args.out, "--out", "the file to write the memories to")
    with _open_store(args) as store:
        memory = store.for_user(args.user)
        count = memory.export_jsonl(args.out if args.out else sys.stdout)
    print(f"exported {count} memories of {args.user!r}" + (f" to {args.out}" if args.out else ""), file=sys.stderr)
    return 0


def _import(args: argparse.Namespace) -> int:
    with _open_store(args, create=True) as store:
        report = store.import_memories(args.file, progress=True)
    print(report)
    return 0


def _doctor(args: argparse.Namespace) -> int:
    from recall_core.memory import doctor, repair

    if args.prune_extra and not args.repair:  # (accepted and ignored until 2026-12-07: a reviewer)
        raise ValueError("--prune-extra is a choice of --repair's: pass both")
    with _open_store(args) as store:
        report = doctor(store, probe=not args.no_probe)
        print(report.summary())
        if args.repair and not report.ok and report.journal_damaged is None:  # the summary says what to do first
            print(repair(store, report, prune_extra=args.prune_extra, progress=True))
            report = doctor(store)
            print(report.summary())
    return 0 if report.ok else 1


def _rebuild(args: argparse.Namespace) -> int:
    from recall_core.memory import rebuild_index

    with _open_store(args) as store:
        print(f"encoder: {store.encoder.name}")  # the one given, else the one the journal records (or why not)
        report = rebuild_index(store, reencode=args.reencode, fresh=args.fresh, progress=True)
        print(report)
    return 1 if report.failed else 0

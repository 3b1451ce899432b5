"""Files into memory: ``MemoryWriter.ingest`` reads JSONL or LoCoMo-style JSON and writes every turn.

JSONL lines are objects with ``role``, ``content`` (or ``text``) and optionally ``user_id``,
``session_id``, ``timestamp``, ``metadata``, ``turn_index``; ``user_id`` fills lines without one
(a line naming another user is an error).

LoCoMo JSON (a list of samples, or one sample, with ``conversation.session_N`` lists and
``session_N_date_time``) is one user per conversation: ``user_id`` if given (one conversation
only), else the sample's ``sample_id``. ``speaker_a`` turns get role ``user``, ``speaker_b``
``assistant``; the text is ``"Speaker: text"`` (plus the image caption if any); speaker, dia_id
and session date are kept in metadata.

Ids are positional, so ingesting a file twice writes nothing new. A turn whose position holds
another text in the memory (a memory corrected with ``update`` since, or partly deleted and
then written again elsewhere) is kept as the memory holds it, reported in ``skipped`` with its
line, and warned about once: re-ingesting a file that grew must not fail on a corrected turn.
"""

from __future__ import annotations

import codecs
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from recall_core.memory.text.formats import jsonl_turns, locomo_turns, sniff
from recall_core.memory.validation import check_user_id

#: How ``skipped`` ends for a turn whose position holds another text (kept as it is).
KEPT = "; kept as it is"


@dataclass
class IngestReport:
    """What :meth:`MemoryWriter.ingest` did."""

    path: str
    format: str
    turns: int = 0
    memories: int = 0
    users: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def ingest_file(writer: Any, path: str | Path, user_id: str | None = None, progress: bool = True,
                skip_invalid: bool = False) -> IngestReport:  # fmt: skip
    """Remember the turns of the file at ``path`` through ``writer`` (a ``MemoryWriter``: its turn
    checks and its write path; the module's formats).

    Every turn is checked first; a bad one raises ``ValueError`` naming its line or dia_id and
    nothing is written, unless ``skip_invalid`` (then it is reported in ``skipped``). A turn at
    a position that holds another text is kept as it is (the module says why). ``progress``
    shows a tqdm bar.
    """
    if not isinstance(path, (str, os.PathLike)) or not str(os.fspath(path)).strip() or Path(os.fspath(path)).is_dir():
        raise ValueError(f"path must be the path of a file to ingest, got {path!r}")
    path = Path(os.fspath(path))
    if user_id is not None:
        user_id = check_user_id(user_id)
    raw = path.read_bytes().removeprefix(codecs.BOM_UTF8)  # Notepad's and PowerShell 5's UTF-8 (refused until 2026-12-07)
    fmt = "jsonl" if path.suffix.lower() in (".jsonl", ".ndjson") else sniff(raw)
    report = IngestReport(path=str(path), format=fmt)
    if fmt == "jsonl":
        items = list(jsonl_turns(raw, user_id, report.skipped if skip_invalid else None))
    else:
        items = list(locomo_turns(raw, user_id, path))
    prepared: list[Any] = []
    lines: dict[int, str] = {}  # id() of a prepared turn -> where it is in the file
    for where, turn in items:
        try:
            prepared.append(writer._prepare(turn))
        except ValueError as exc:
            if not skip_invalid:
                raise ValueError(f"{path}: {where}: {exc} (nothing was written)") from None
            report.skipped.append(f"{where}: {exc}")
            continue
        lines[id(prepared[-1])] = where
    kept: list[str] = []

    def taken(turn: Any, error: ValueError) -> None:
        kept.append(f"{lines[id(turn)]}: {str(error).removesuffix(' (nothing was written)')}{KEPT}")

    bar: Any = False
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(prepared), desc=f"ingest {path.name}", unit="turn")
    try:
        ids = writer._write_all(prepared, bar, on_taken=taken)
    finally:
        if bar:
            bar.close()
    if kept:
        warnings.warn(f"{path}: {len(kept)} turn(s) at positions that hold another text were kept as the memory "
                      f"holds them ({kept[0]}): see IngestReport.skipped", RuntimeWarning, stacklevel=3)  # fmt: skip
    report.skipped += kept
    report.turns = len(prepared)
    report.memories = len({i for turn_ids in ids for i in turn_ids})
    report.users = sorted({p.user_id for p in prepared})
    return report

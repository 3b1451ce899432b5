"""Checking a local index's HNSW files without giving them to Chroma.

Chroma keeps each collection's vectors in an HNSW segment folder (``chroma/<uuid>/``:
``header.bin``, ``data_level0.bin``, ``length.bin``, ``link_lists.bin``,
``index_metadata.pickle``) and loads it on the first read of the collection (a search, and,
while writes wait in its log, a count or a get too). hnswlib trusts those files: a garbled
``data_level0.bin`` makes that first read crash the whole process (SIGSEGV), and a truncated
one makes every search fail or silently return wrong neighbours. So before a local store
lets Chroma near a collection whose files may have changed since a healthy process closed
them, the files are checked here, in Python, against the structure hnswlib wrote:

* ``header.bin``: the 100-byte header of Chroma's hnswlib (format version 1), consistent with
  itself (element size = links + vector + label; counts within capacity; entry point valid);
* ``data_level0.bin`` and ``length.bin``: whole elements, at least as many as the header
  counts and no more than it has room for, and the vector norms in ``length.bin`` finite and
  non-negative;
* every element's level-0 links, and every upper-level link list in ``link_lists.bin``: no
  more links than the graph allows, each to an element that exists (an out-of-range link
  is what crashes hnswlib);
* ``index_metadata.pickle``: a well-formed pickle (parsed with :mod:`pickletools`, never
  loaded: nothing in it is executed).

Which collection a segment folder belongs to is read from ``chroma.sqlite3`` (read-only).
A header of another format version is not judged (:class:`UnknownFormat`): a newer Chroma
may write another layout; those segments are probed in a child process instead (probe.py).
"""

from __future__ import annotations

import os
import pickletools
import sqlite3
import struct
import uuid
from pathlib import Path

import numpy as np

HEADER = "header.bin"
LEVEL0 = "data_level0.bin"
LENGTHS = "length.bin"
LINKS = "link_lists.bin"
PICKLE = "index_metadata.pickle"
#: The header hnswlib (Chroma's fork, format 1) writes: version, offsetLevel0, max_elements,
#: cur_element_count, size_data_per_element, label_offset, offsetData, maxlevel, enterpoint,
#: maxM, maxM0, M, mult, ef_construction.
_HEADER = struct.Struct("<i6QiI3QdQ")
_FORMAT = 1
#: Rows of ``data_level0.bin`` read at once (bounded memory on big collections).
_BLOCK = 65536
#: Bytes read at once when clearing a segment's unused capacity.
_ZERO_BLOCK = 1 << 20


class UnknownFormat(Exception):
    """The segment was written in a format this check does not know (not a sign of damage)."""


def settle_hot_journal(path: Path) -> None:
    """Let SQLite finish what a writer killed mid-transaction left: its rollback journal
    (``chroma.sqlite3-journal``, "hot") is undone at the next read-write open.

    The checks below open the database read-only, which cannot undo it: SQLite then answers
    "attempt to write a readonly database", and a whole index Chroma opens and searches fine
    was reported damaged, with a rebuild as the only way out. Only a file this process may
    write is settled (a local store holds its lock while it checks)."""
    journal = path.with_name(path.name + "-journal")
    if not (journal.is_file() and journal.stat().st_size > 0 and os.access(path, os.W_OK)):
        return
    try:
        connection = sqlite3.connect(path, timeout=30)
        try:
            connection.execute("PRAGMA schema_version").fetchone()  # the first read rolls the journal back
        finally:
            connection.close()
    except sqlite3.Error:
        pass  # what is wrong is for the read-only checks to say


def vector_segments(chroma_dir: Path) -> dict[str, str]:
    """Segment folder name -> collection name, for the HNSW segments of a local index.

    Raises:
        sqlite3.Error: ``chroma.sqlite3`` cannot be read (itself damaged).
    """
    rows = _read_database(
        chroma_dir, "SELECT s.id, c.name FROM segments s JOIN collections c ON c.id = s.collection WHERE s.scope = 'VECTOR'"
    )  # fmt: skip
    return {str(segment): str(name) for segment, name in rows}


def _read_database(chroma_dir: Path, sql: str) -> list[tuple]:
    """The rows of ``sql`` in a local index's ``chroma.sqlite3``, opened read-only once a killed
    writer's rollback journal is settled (none if there is no database yet)."""
    path = chroma_dir / "chroma.sqlite3"
    if not path.exists():
        return []
    settle_hot_journal(path)
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5.0)
    try:
        return db.execute(sql).fetchall()
    finally:
        db.close()


def leftover_segments(chroma_dir: Path) -> list[Path]:
    """The segment folders of a local index that no collection uses any more.

    Chroma 1.x deletes a collection from its database but leaves its HNSW folder on disk
    (chroma-core/chroma#5259): the deleted memories' vectors, and in the unused part of
    ``data_level0.bin`` whatever bytes the process's heap held (a forgotten turn's words were
    found there). Only folders named like a segment (a UUID) and absent from ``segments`` are
    listed. Call it only where no Chroma client of this process has the index open
    (:func:`recall_core.memory.backends.scrub_if_due`); the folders are listed before the
    database is read all the same (a collection's row comes before its folder).

    Raises:
        sqlite3.Error: ``chroma.sqlite3`` cannot be read (then nothing may be called unused).
    """
    if not (chroma_dir / "chroma.sqlite3").exists():
        return []
    folders = [p for p in sorted(chroma_dir.iterdir()) if p.is_dir() and _is_uuid(p.name)]
    used = {str(row[0]) for row in _read_database(chroma_dir, "SELECT id FROM segments")}
    return [p for p in folders if p.name not in used]


def clear_unused_capacity(chroma_dir: Path, written_since: float | None = None) -> int:
    """Zero what hnswlib wrote past its elements in each segment's ``data_level0.bin`` and
    ``length.bin``; return how many files changed. hnswlib writes its whole capacity, the unused
    part from memory it never cleared: bytes the process held before, a forgotten user's words
    among them, landed in a live collection's file (a reviewer, and this project's CI, 2026-12-07).
    With ``written_since`` (a time as :func:`time.time` gives it), only the folders whose files
    changed from then on. Only where no Chroma client of this process has the index open (at a
    store's close); a header of a format this module does not know is left alone."""
    changed = 0
    for folder in sorted(p for p in chroma_dir.iterdir() if p.is_dir() and _is_uuid(p.name)):
        if written_since is not None and not _written_since(folder, written_since):
            continue
        try:
            raw = (folder / HEADER).read_bytes()
        except OSError:
            continue  # not persisted yet
        if len(raw) < _HEADER.size or _HEADER.unpack_from(raw)[0] != _FORMAT:
            continue
        count, element = _HEADER.unpack_from(raw)[3], _HEADER.unpack_from(raw)[4]
        for name, unit in ((LEVEL0, element), (LENGTHS, 4)):
            changed += _zero_from(folder / name, count * unit)
    return changed


def _written_since(folder: Path, since: float) -> bool:
    """Whether any of a segment folder's files changed at or after ``since`` (a second's slack:
    a file system's clock may lag :func:`time.time`)."""
    try:
        return any(f.stat().st_mtime >= since - 1.0 for f in folder.iterdir())
    except OSError:
        return True  # a file went while listed: look at the folder


def _zero_from(path: Path, start: int) -> int:
    """Zero ``path`` from byte ``start`` on, writing only the blocks that hold anything; 1 if it changed."""
    try:
        size = path.stat().st_size
    except OSError:
        return 0
    wrote = 0
    with path.open("r+b") as file:
        for at in range(start, size, _ZERO_BLOCK):
            file.seek(at)
            block = file.read(min(_ZERO_BLOCK, size - at))
            if block.strip(b"\0"):
                file.seek(at)
                file.write(bytes(len(block)))
                wrote = 1
    return wrote


def _is_uuid(name: str) -> bool:
    try:
        return str(uuid.UUID(name)) == name
    except ValueError:
        return False


def check_segment(folder: Path) -> str | None:
    """What is wrong with one HNSW segment folder, or ``None`` if its files are whole.

    A folder without a header has not been persisted yet (Chroma keeps small collections in
    its log): nothing to check.

    Raises:
        UnknownFormat: the header is of a version this check does not know.
    """
    header_path = folder / HEADER
    if not header_path.exists():
        return None
    raw = header_path.read_bytes()
    if len(raw) < _HEADER.size:
        return f"{HEADER} is {len(raw)} bytes, shorter than an HNSW header ({_HEADER.size})"
    (version, offset0, capacity, count, element, label_at, data_at, max_level, entry, max_m, max_m0, m, _mult,
     ef) = _HEADER.unpack_from(raw)  # fmt: skip
    if version != _FORMAT:
        if 1 < version <= 16:  # a plausible later format: not ours to judge
            raise UnknownFormat(f"{HEADER} has format version {version}")
        return f"{HEADER} is garbled (format version {version})"
    links0 = 4 * (max_m0 + 1)
    sane = (
        offset0 == 0 and 0 <= count <= capacity < 2**40 and 0 < m <= max_m <= max_m0 < 2**16
        and data_at == links0 and data_at < label_at and (label_at - data_at) % 4 == 0
        and element == label_at + 8 and -1 <= max_level < 64 and ef > 0
        and (count == 0 or entry < count)
    )  # fmt: skip
    if not sane:
        return f"{HEADER} is garbled (inconsistent HNSW parameters)"
    for name, unit in ((LEVEL0, element), (LENGTHS, 4)):
        # hnswlib writes the elements it has (or, for a new graph, its whole capacity).
        path = folder / name
        size = path.stat().st_size if path.exists() else None
        if size is None or not count * unit <= size <= capacity * unit or size % unit:
            return (
                f"{name} is {'missing' if size is None else f'{size} bytes'}; the header says "
                f"{count} elements of {unit} bytes (room for {capacity})"
            )
    problem = _check_level0(folder / LEVEL0, count, element, max_m0, (data_at, label_at))
    if problem is None:
        norms = np.fromfile(folder / LENGTHS, dtype=np.float32, count=count)
        if not bool(np.all(np.isfinite(norms) & (norms >= 0))):
            problem = f"{LENGTHS} is garbled (vector norms that are not finite non-negative numbers)"
    if problem is None:
        problem = _check_upper_links(folder / LINKS, count, max_m, max_level)
    if problem is None and (folder / PICKLE).exists():
        problem = _check_pickle(folder / PICKLE)
    return problem


def _check_level0(path: Path, count: int, element: int, max_m0: int, spans: tuple[int, int]) -> str | None:
    """Every element's level-0 link list (at most ``max_m0`` links, each to an existing element),
    its vector (finite numbers) and its label (one element each): ``spans`` are where
    the vector and the label start in an element. A block of zeros or NaN over the vectors (what a
    crash leaves) gave wrong search results with no warning until 2026-12-07 (a reviewer)."""
    data_at, label_at = spans
    data = np.memmap(path, dtype=np.uint8, mode="r")
    labels = []
    for start in range(0, count, _BLOCK):
        stop = min(count, start + _BLOCK)
        rows = np.asarray(data[start * element : stop * element]).reshape(stop - start, element)
        heads = rows[:, : 4 * (max_m0 + 1)].copy().view(np.uint32)
        sizes = heads[:, 0] & 0xFFFF
        if int(sizes.max(initial=0)) > max_m0:
            return f"{LEVEL0} is garbled (element {start + int(np.argmax(sizes > max_m0))} has {int(sizes.max())} links)"
        used = np.arange(max_m0)[None, :] < sizes[:, None]
        if bool(np.any(heads[:, 1:][used] >= count)):
            return f"{LEVEL0} is garbled (links to elements that do not exist)"
        # Not "all zero": an encoder may give a zero vector, which the writer takes (a second
        # reviewer); a crash's block of zeros is found by its labels, all 0.
        if not bool(np.all(np.isfinite(rows[:, data_at:label_at].copy().view(np.float32)))):
            return f"{LEVEL0} is garbled (vectors that are not finite numbers)"
        labels.append(rows[:, label_at : label_at + 8].copy().view(np.uint64)[:, 0])
    every = np.concatenate(labels) if labels else np.zeros(0, dtype=np.uint64)
    if len(np.unique(every)) != count or bool(np.any(every == 0)):  # Chroma's labels count from 1
        return f"{LEVEL0} is garbled (two elements with the same label, or a label 0)"
    return None


def _check_upper_links(path: Path, count: int, max_m: int, max_level: int) -> str | None:
    """``link_lists.bin``: per element a byte size, then one list of ``max_m`` links per level."""
    if count == 0:
        return None
    if not path.exists():
        return f"{LINKS} is missing"
    raw = path.read_bytes()
    level_bytes = 4 * (max_m + 1)
    position = 0
    for element in range(count):
        if position + 4 > len(raw):
            return f"{LINKS} is truncated (ends at element {element} of {count})"
        (size,) = struct.unpack_from("<I", raw, position)
        position += 4
        if size == 0:
            continue
        if size % level_bytes or size // level_bytes > max(max_level, 0) or position + size > len(raw):
            return f"{LINKS} is garbled (element {element} has a link list of {size} bytes)"
        lists = np.frombuffer(raw, dtype=np.uint32, count=size // 4, offset=position).reshape(-1, max_m + 1)
        lengths = lists[:, 0] & 0xFFFF
        if int(lengths.max()) > max_m or bool(np.any(lists[:, 1:][np.arange(max_m)[None, :] < lengths[:, None]] >= count)):
            return f"{LINKS} is garbled (element {element} links to elements that do not exist)"
        position += size
    if position != len(raw):
        return f"{LINKS} has {len(raw) - position} bytes more than its {count} link lists"
    return None


def _check_pickle(path: Path) -> str | None:
    """Whether the pickle parses (its opcodes are read, never run)."""
    try:
        for _ in pickletools.genops(path.read_bytes()):
            pass
    except Exception as exc:  # any parse failure is damage
        return f"{PICKLE} is garbled ({exc})"
    return None


def check_index_files(chroma_dir: Path) -> tuple[dict[str, str], list[str]]:
    """Check every HNSW segment of a local index: ``(damaged, unknown)``.

    ``damaged`` maps collection names to what is wrong with their files (``"chroma.sqlite3"``
    when Chroma's own database cannot be read, and the segment folder's name when no
    collection claims it); ``unknown`` lists collections whose files are in a format this
    check does not know (to be probed instead).
    """
    damaged: dict[str, str] = {}
    unknown: list[str] = []
    if not chroma_dir.is_dir():
        return damaged, unknown
    try:
        owners = vector_segments(chroma_dir)
    except sqlite3.Error as exc:
        return {"chroma.sqlite3": f"chroma.sqlite3 cannot be read ({exc})"}, unknown
    for folder in sorted(p for p in chroma_dir.iterdir() if p.is_dir()):
        name = owners.get(folder.name)
        if name is None:
            continue  # a folder Chroma no longer uses (a deleted collection's leftovers)
        try:
            problem = check_segment(folder)
        except UnknownFormat:
            unknown.append(name)
            continue
        except OSError as exc:
            problem = f"cannot be read ({exc})"
        if problem is not None:
            damaged[name] = problem
    return damaged, unknown


def check_database(path: Path) -> str | None:
    """What SQLite's ``quick_check`` finds wrong with Chroma's database ``chroma.sqlite3`` (opened read
    only), or ``None``. Chroma reports such damage as errors on reads, or ``database disk image is
    malformed``, at whatever call first touches a damaged page."""
    if not path.is_file():
        return None
    settle_hot_journal(path)
    try:
        connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=30)
        try:
            found = [row[0] for row in connection.execute("PRAGMA quick_check(5)")]
        finally:
            connection.close()
    except sqlite3.Error as error:
        return f"chroma.sqlite3 is damaged (SQLite: {error})"
    if found == ["ok"]:
        return None
    lines = [line.strip("* ") for row in found for line in str(row).splitlines() if line.strip("* ")]
    return f"chroma.sqlite3 is damaged (SQLite quick_check: {'; '.join(lines[:4])})"

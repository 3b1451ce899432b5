"""Opening and searching each collection of a local index in a child process.

Some damage to Chroma's files crashes the process that reads them (a SIGSEGV in hnswlib),
and no Python code can catch that. So ``doctor`` (and a store opening files of a format
segments.py cannot check) lets a child process do the first read of each collection: it
counts the collection, searches it, reads one stored vector back and searches with that. A collection
whose read fails, or kills the child, is reported damaged; the child is started again for
the collections after it. Costs one Python start and one Chroma open per crash, plus about
a millisecond per collection (about 2 s in all on 2 busy cores for a small store).

Run by hand: ``python core/memory/probe.py PATH/chroma [COLLECTION ...]`` (the child runs the
file itself, which imports only the standard library and chromadb).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

#: Seconds one child may take before the collection it is on is called damaged (a hang).
PROBE_TIMEOUT_S = 120.0
#: What the whole index is called in the report when Chroma cannot even open it.
WHOLE_INDEX = "chroma.sqlite3"


def probe_collections(chroma_dir: str | Path, names: Sequence[str] | None = None) -> dict[str, str]:
    """Read and search each collection (``names``, default every recall collection) in a child
    process; return the damaged ones: name -> what happened.

    ``WHOLE_INDEX`` in the result means Chroma could not open the folder at all.
    """
    chroma_dir = Path(chroma_dir)
    if not (chroma_dir / "chroma.sqlite3").exists():
        return {}
    todo = None if names is None else list(names)
    damaged: dict[str, str] = {}
    while todo is None or todo:
        run = _run_child(chroma_dir, todo)
        damaged.update(run.damaged)
        if run.died is None:
            break
        if run.died_on is None:  # before reaching a collection: Chroma cannot open the folder
            damaged[WHOLE_INDEX] = run.died
            break
        damaged[run.died_on] = run.died
        skip = set(run.finished) | {run.died_on}
        todo = [name for name in (run.listed if todo is None else todo) if name not in skip]
    return damaged


@dataclass
class _ChildRun:
    listed: list[str] = field(default_factory=list)
    finished: list[str] = field(default_factory=list)
    damaged: dict[str, str] = field(default_factory=dict)
    #: The collection the child was reading when it died, and how it died (``None``: it did not).
    died_on: str | None = None
    died: str | None = None


def _run_child(chroma_dir: Path, names: list[str] | None) -> _ChildRun:
    """One child over ``names`` (``None``: all), read from what it printed and how it ended."""
    # By its path, not ``-m``: importing the package would import the engine (torch), seconds.
    command = [sys.executable, __file__, str(chroma_dir), *(names or [])]
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False"}
    stderr = ""
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S, env=env)
        out, code, stderr = done.stdout, done.returncode, done.stderr or ""
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        code = None
    run = _ChildRun()
    for line in out.splitlines():
        kind, _, rest = line.partition("\t")
        name, _, message = rest.partition("\t")
        if kind == "collections":
            run.listed = [name for name in rest.split("\t") if name]
        elif kind == "start":
            run.died_on = name
        elif kind in ("ok", "error"):
            run.finished.append(name)
            run.died_on = None
            if kind == "error":
                run.damaged[name] = f"reading it failed: {message}"
        elif kind == "open-error":
            run.died = f"Chroma cannot open the index: {rest}"
            return run
    if code == 0:
        run.died_on = None
    elif code is None:
        run.died = f"reading it took more than {PROBE_TIMEOUT_S:.0f} s"
    elif code < 0:
        run.died = f"reading it crashed the process ({_signal_name(-code)})"
    else:
        run.died = f"reading it ended the process with exit code {code}: {stderr.strip()[-300:]}"
    return run


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _child(chroma_dir: str, names: list[str]) -> int:
    """In the child: open the index, then count, read and search each collection, saying how each went."""
    import chromadb
    from chromadb.config import Settings

    def say(*parts: str) -> None:
        print("\t".join(p.replace("\t", " ").replace("\n", " ") for p in parts), flush=True)

    try:
        client = chromadb.PersistentClient(path=chroma_dir, settings=Settings(anonymized_telemetry=False))
        if not names:
            names = [c.name for c in client.list_collections() if c.name.startswith("recall-")]
            say("collections", *names)
    except Exception as exc:
        say("open-error", f"{type(exc).__name__}: {exc}")
        return 3
    for name in names:
        say("start", name)
        try:
            collection = client.get_collection(name, embedding_function=None)
            dim = (collection.metadata or {}).get("dim")
            if collection.count():
                # A search first (what crashes on a garbled graph), then a stored vector read back.
                if isinstance(dim, int) and dim > 0:
                    collection.query(query_embeddings=[[dim**-0.5] * dim], n_results=1, include=["distances"])
                stored = collection.get(limit=1, include=["embeddings"])["embeddings"]
                collection.query(query_embeddings=[stored[0]], n_results=1, include=["distances"])
        except Exception as exc:
            say("error", name, f"{type(exc).__name__}: {exc}")
            continue
        say("ok", name)
    return 0


if __name__ == "__main__":
    sys.exit(_child(sys.argv[1], sys.argv[2:]))

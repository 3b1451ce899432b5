"""`recall list / search / delete / export / import` end to end on a store with a hash encoder
(issue 22, item 10), and `--read-only` (item 11)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from recall_core.cli import main
from recall_core.memory import HashEncoder, MemoryStore


def _store(path: Path) -> list[str]:
    with MemoryStore.local(path, encoder=HashEncoder(32)) as store:
        ada = store.for_user("ada")
        ids = [ada.add("My dog is called Pluto.", session_id="s1")[0],
               ada.add("I live in Lisbon.", session_id="s2")[0]]  # fmt: skip
        ada.put("pin", "My PIN is 4321.")
        store.for_user("bob").add("Bob likes tea.")
    return ids


def _args(path: Path) -> list[str]:
    return ["--store", str(path), "--encoder", "hash-32"]


def test_list_search_delete(tmp_path: Path, capsys) -> None:
    path = tmp_path / "m"
    dog, lisbon = _store(path)
    assert main(["list", "ada", *_args(path)]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert len(lines) == 3 and lines[0].startswith(dog) and "My dog is called Pluto." in lines[0]
    assert "user" in lines[0] and "s1" in lines[0] and "Bob" not in out
    assert "3 memories of 'ada'" in err
    assert main(["list", "ada", "--session", "s2", "--json", *_args(path)]) == 0
    (only,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert (only["id"], only["text"], only["session_id"]) == (lisbon, "I live in Lisbon.", "s2")

    assert main(["search", "ada", "where do I live", "-k", "1", *_args(path)]) == 0
    out = capsys.readouterr().out
    assert lisbon in out and "I live in Lisbon." in out and len(out.splitlines()) == 1

    assert main(["delete", "ada", dog, *_args(path)]) == 0
    assert "deleted 1 of 1 memories of 'ada'" in capsys.readouterr().out
    assert main(["delete", "ada", dog, "f" * 32, *_args(path)]) == 1  # already gone, never there
    assert "deleted 0 of 2" in capsys.readouterr().out
    assert main(["delete", "bob", lisbon, *_args(path)]) == 1  # not bob's
    capsys.readouterr()
    assert main(["list", "ada", *_args(path)]) == 0
    assert dog not in capsys.readouterr().out


def test_export_import_round_trip_across_processes(tmp_path: Path) -> None:
    """The commands as a user runs them, each in its own process."""
    source, target = tmp_path / "a", tmp_path / "b"
    _store(source)

    def recall(*args: str) -> subprocess.CompletedProcess:
        done = subprocess.run([sys.executable, "-m", "recall_core.cli", *args], capture_output=True, text=True,
                              timeout=180)  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        return done

    recall("export", "ada", "--out", str(tmp_path / "ada.jsonl"), *_args(source))
    exported = (tmp_path / "ada.jsonl").read_text()
    assert len(exported.splitlines()) == 3
    done = recall("import", str(tmp_path / "ada.jsonl"), *_args(target))
    assert "imported 3 memories (0 already there) for 'ada'" in done.stdout
    assert recall("export", "ada", *_args(target)).stdout == exported
    with MemoryStore.local(source, encoder=HashEncoder(32)) as a, MemoryStore.local(target, encoder=HashEncoder(32)) as b:
        assert a.for_user("ada").list() == b.for_user("ada").list()


def test_bad_input_is_a_clear_error(tmp_path: Path, capsys) -> None:
    path = tmp_path / "m"
    _store(path)
    (tmp_path / "bad.jsonl").write_text('{"id": "nope"}\n')
    assert main(["import", str(tmp_path / "bad.jsonl"), *_args(path)]) == 2
    assert "bad.jsonl line 1: missing fields" in capsys.readouterr().err
    assert main(["list", "ada", "--store", str(tmp_path / "bad.jsonl")]) == 2
    assert "must be a folder" in capsys.readouterr().err
    assert main(["list", "ada", "--read-only", "--server", "127.0.0.1:1"]) == 2
    assert "--read-only opens a local store" in capsys.readouterr().err


def test_read_only_commands_write_nothing(tmp_path: Path, capsys) -> None:
    path = tmp_path / "m"
    _store(path)
    holder = MemoryStore.local(path, encoder=HashEncoder(32))  # open elsewhere: a read-only open still works
    try:
        before = sorted((p.name, p.stat().st_mtime_ns) for p in path.rglob("*"))
        assert main(["list", "ada", "--read-only", *_args(path)]) == 0
        assert "Pluto" in capsys.readouterr().out
        assert main(["export", "ada", "--read-only", *_args(path)]) == 0
        assert len(capsys.readouterr().out.splitlines()) == 3
        assert main(["search", "ada", "PIN", "--read-only", *_args(path)]) == 0
        assert "4321" in capsys.readouterr().out
        assert sorted((p.name, p.stat().st_mtime_ns) for p in path.rglob("*")) == before
    finally:
        holder.close()

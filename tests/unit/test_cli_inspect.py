"""`recall list / search / delete / export / import` end to end on a store with a hash encoder
(issue 22, item 10), `--read-only` (item 11), and what the read commands refuse."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

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


def test_a_closed_output_pipe_ends_quietly(tmp_path: Path, monkeypatch, capsys) -> None:
    """`recall list ... | head -1` printed "recall: error: [Errno 32] Broken pipe" and exited 2;
    it ends quietly with 141 now, as `yes | head -1` (128 + SIGPIPE)."""
    import io

    path = tmp_path / "m"
    _store(path)

    class Closed(io.StringIO):  # a pipe whose reader is gone
        def write(self, text: str) -> int:
            raise BrokenPipeError(32, "Broken pipe")

        def flush(self) -> None:
            raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr("sys.stdout", Closed())
    for command in (["list", "ada"], ["list", "ada", "--json"], ["export", "ada"], ["search", "ada", "dog"]):
        assert main([*command, *_args(path)]) == 141
        assert capsys.readouterr().err == ""
    monkeypatch.undo()
    # a real pipe, closed before the command writes: its output is still buffered when it returns
    child = subprocess.Popen([sys.executable, "-m", "recall_core.cli", "export", "ada", *_args(path)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    child.stdout.close()
    assert child.wait(timeout=180) == 141
    assert child.stderr.read() == b""
    child.stderr.close()


def test_list_json_help_does_not_promise_the_export_format(tmp_path: Path, capsys) -> None:
    """`list --json`'s help said it wrote what `recall export` writes; `recall import` refuses it."""
    path = tmp_path / "m"
    _store(path)
    assert main(["list", "ada", "--json", *_args(path)]) == 0
    (tmp_path / "list.jsonl").write_text(capsys.readouterr().out)
    assert main(["import", str(tmp_path / "list.jsonl"), *_args(tmp_path / "other")]) == 2  # not the export format
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main(["list", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "as `recall export` writes" not in help_text and "`recall import` reads what `recall export` writes" in help_text


def test_read_commands_refuse_a_path_with_no_store(tmp_path: Path, capsys) -> None:
    """`recall doctor --store /typo` made an empty store there and said OK; `list`, `search` and
    `export` listed nothing from it. A command that only reads refuses such a path, naming it."""
    typo = tmp_path / "typo"
    # (ask, forget, delete and rebuild-index too: until 2026-12-07 they made it, a reviewer)
    for command in (["doctor"], ["list", "ada"], ["search", "ada", "dog"], ["export", "ada"], ["ask", "--user", "ada", "hi"],
                    ["forget", "--user", "ada"], ["delete", "ada", "some-id"], ["rebuild-index"]):  # fmt: skip
        assert main([*command, "--store", str(typo), "--encoder", "hash-32"]) == 2
        assert f"--store {str(typo)!r} holds no memory store" in capsys.readouterr().err
        assert not typo.exists()
    assert main(["remember", "ada", "--user", "ada", "--store", str(typo), "--encoder", "hash-32"]) == 0  # writing: made
    assert main(["doctor", "--no-probe", "--store", str(typo), "--encoder", "hash-32"]) == 0


def test_read_commands_refuse_a_default_store_folder_with_no_store(tmp_path: Path, capsys, monkeypatch) -> None:
    """The same typo through `--home` or `$RECALL_MEMORY` still made an empty store, and `recall
    doctor` said OK, until 2026-12-07 (a reviewer)."""
    monkeypatch.delenv("RECALL_MEMORY", raising=False)
    monkeypatch.setenv("RECALL_HOME", str(tmp_path / "home"))  # --home sets it: put back after the test
    for command in (["doctor"], ["list", "ada"], ["search", "ada", "dog"], ["export", "ada"]):
        assert main(["--home", str(tmp_path / "typohome"), *command, "--encoder", "hash-32"]) == 2
        assert "holds no memory store" in capsys.readouterr().err and not (tmp_path / "typohome" / "memory").exists()
    monkeypatch.setenv("RECALL_MEMORY", str(tmp_path / "typomem"))
    assert main(["list", "ada", "--encoder", "hash-32"]) == 2
    assert f"the default store's folder {str(tmp_path / 'typomem')!r}" in capsys.readouterr().err
    assert not (tmp_path / "typomem").exists()


def test_empty_query_session_and_negative_counts_fail_at_parse_time(tmp_path: Path, capsys) -> None:
    """`search ada ""` said "no memories of 'ada' found", `list --session ""` listed every session,
    `train-head --vocabulary-texts -1` was refused only after the model had loaded."""
    path = tmp_path / "m"
    _store(path)
    for command, field in ((["search", "ada", " ", *_args(path)], "argument query"),
                           (["list", "ada", "--session", "", *_args(path)], "argument --session"),
                           (["chat", "--user", "ada", "--session", ""], "argument --session"),
                           (["train-head", "--vocabulary-texts", "-1"], "argument --vocabulary-texts")):  # fmt: skip
        with pytest.raises(SystemExit) as exit_info:
            main(command)
        assert exit_info.value.code == 2 and field in capsys.readouterr().err


def test_export_names_a_bad_out_and_ask_refuses_a_blank_question_before_any_work(tmp_path: Path, capsys) -> None:
    """`export --out DIR` named a hidden `.partial` file the user never gave; `ask "   "` was refused
    only after the model had loaded (a reviewer, 2026-12-07)."""
    path = tmp_path / "mem"
    _store(path)
    assert main(["export", "ada", "--out", str(tmp_path), *_args(path)]) == 2
    assert f"--out {tmp_path} is a folder" in capsys.readouterr().err
    assert main(["export", "ada", "--out", str(tmp_path / "no" / "x.jsonl"), *_args(path)]) == 2
    assert "its folder" in capsys.readouterr().err and not (tmp_path / "no").exists()
    with pytest.raises(SystemExit) as exit_:
        main(["ask", "--user", "ada", "   "])
    assert exit_.value.code == 2 and "argument question: must not be empty" in capsys.readouterr().err


@pytest.mark.parametrize("option", ["--store", "--server", "--encoder"])
def test_an_empty_store_server_or_encoder_is_refused(tmp_path: Path, monkeypatch, capsys, option: str) -> None:
    """`--store ""` (an unset shell variable) made a store in the current folder; `--encoder ""`
    raised an AttributeError's traceback (until 2026-12-07, a reviewer)."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_:
        main(["remember", "hello", "--user", "ada", option, ""])
    assert exit_.value.code == 2 and f"argument {option}: must not be empty" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_prune_extra_without_repair_is_refused(tmp_path: Path, capsys) -> None:
    store = tmp_path / "m"
    assert main(["remember", "hello", "--user", "ada", "--store", str(store), "--encoder", "hash-32"]) == 0
    assert main(["doctor", "--prune-extra", "--store", str(store), "--encoder", "hash-32"]) == 2
    assert "--prune-extra is a choice of --repair's" in capsys.readouterr().err

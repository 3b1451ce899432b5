"""Opening a store where it cannot be written, or where it is not: clear errors, a read-only open,
and the default folders of models and memories kept apart (issue 22, item 11)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from recall_core import paths
from recall_core.memory import HashEncoder, MemoryReadOnlyError, MemoryStore
from tests.helpers.processes import PRELUDE

FACT = "My dog is called Pluto."


def _store_with_a_fact(path: Path) -> None:
    with MemoryStore.local(path, encoder=HashEncoder(32)) as store:
        store.for_user("ada").add(FACT)


def _snapshot(path: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(path)): (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(path.rglob("*"))}


# ------------------------------------------------------------------ a file where a folder should be
def test_a_store_path_that_is_a_file_is_a_value_error(tmp_path: Path) -> None:
    file = tmp_path / "notes.txt"
    file.write_text("not a store")
    with pytest.raises(ValueError, match="store path .*notes.txt.* must be a folder"):
        MemoryStore.local(file, encoder=HashEncoder(8))
    with pytest.raises(ValueError, match=r"must be a folder.*notes.txt is a file"):
        MemoryStore.local(file / "inside", encoder=HashEncoder(8))
    with pytest.raises(ValueError, match="must be a folder"):
        MemoryStore.local(file, encoder=HashEncoder(8), read_only=True)
    assert file.read_text() == "not a store"


def test_read_only_open_of_a_folder_without_a_store(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="holds no memory store"):
        MemoryStore.local(tmp_path / "nothing", read_only=True)
    assert not (tmp_path / "nothing").exists()  # nothing created
    with pytest.raises(ValueError, match="read_only must be True or False"):
        MemoryStore.local(tmp_path, read_only="yes")  # type: ignore[arg-type]


# ------------------------------------------------------------------ read-only open
def test_read_only_open_searches_writes_nothing_and_refuses_writes(tmp_path: Path) -> None:
    path = tmp_path / "store"
    _store_with_a_fact(path)
    writer = MemoryStore.local(path, encoder=HashEncoder(32))  # another store holds the lock: no matter
    before = _snapshot(path)
    try:
        with MemoryStore.local(path, encoder=HashEncoder(32), read_only=True) as store:
            assert store.read_only
            memory = store.for_user("ada")
            assert [c.text for c in memory.search("dog")] == [FACT]
            assert [r.text for r in memory.list()] == [FACT]
            for write in (lambda: memory.add("x"), lambda: memory.forget(), lambda: memory.put("k", "v"),
                          lambda: memory.delete(memory.list()[0].id)):  # fmt: skip
                with pytest.raises(MemoryReadOnlyError, match="read-only: writes are refused"):
                    write()
            snapshot = store._snapshot
            assert snapshot is not None and snapshot.is_dir()
        assert not snapshot.exists()  # the copy goes at close
        after = _snapshot(path)
    finally:
        writer.close()
    assert after == before


def _read_only_child(store: Path, tmp_path: Path) -> subprocess.CompletedProcess:
    """Run the checks in a process that sees ``store`` on read-only storage: a chmod'ed folder for
    a normal user; for root (whom modes do not stop) a read-only bind mount in a mount namespace."""
    code = PRELUDE + textwrap.dedent("""
        import sys
        from recall_core.memory import MemoryReadOnlyError
        path = sys.argv[1]
        try:
            MemoryStore.local(path, encoder=HashEncoder(32))
        except MemoryReadOnlyError as e:
            print("WRITABLE OPEN REFUSED:", e)
        with MemoryStore.local(path, encoder=HashEncoder(32), read_only=True) as s:
            print("FOUND:", [c.text for c in s.for_user("ada").search("dog")])
            try:
                s.for_user("ada").add("more")
            except MemoryReadOnlyError as e:
                print("WRITE REFUSED:", e)
    """)
    script = tmp_path / "child.py"
    script.write_text(code)
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    for file in [store, *store.rglob("*")]:
        file.chmod(file.stat().st_mode & ~0o222)
    if os.geteuid() != 0:
        return subprocess.run([sys.executable, str(script), str(store)], capture_output=True, text=True, env=env,
                              timeout=120)  # fmt: skip
    if shutil.which("unshare") is None:
        pytest.skip("running as root without unshare: no way to make the folder read-only to this process")
    mount = tmp_path / "mnt"
    mount.mkdir()
    shell = (f"mount --bind {store} {mount} && mount -o remount,bind,ro {mount} && "
             f"{sys.executable} {script} {mount}")  # fmt: skip
    done = subprocess.run(["unshare", "--mount", "sh", "-c", shell], capture_output=True, text=True, env=env, timeout=120)
    if "mount:" in done.stderr and "FOUND" not in done.stdout:
        pytest.skip(f"no read-only bind mount here: {done.stderr.strip()}")
    return done


def test_a_store_on_read_only_storage_opens_read_only(tmp_path: Path) -> None:
    store = tmp_path / "store"
    _store_with_a_fact(store)
    before = _snapshot(store)
    try:
        done = _read_only_child(store, tmp_path)
    finally:
        for file in [store, *store.rglob("*")]:
            file.chmod(file.stat().st_mode | 0o200)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "WRITABLE OPEN REFUSED:" in done.stdout and "read_only=True" in done.stdout
    assert f"FOUND: [{FACT!r}]" in done.stdout
    assert "WRITE REFUSED:" in done.stdout
    assert "PermissionError" not in done.stderr and "Traceback" not in done.stderr
    assert _snapshot(store) == before


# ------------------------------------------------------------------ models apart from memories
@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    for name in (paths.HOME_VAR, paths.MODELS_VAR, paths.MEMORY_VAR):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(paths, "user_cache_dir", lambda app: str(tmp_path / "cache" / app))
    monkeypatch.setattr(paths, "user_data_dir", lambda app: str(tmp_path / "data" / app))
    return tmp_path


def test_models_and_memories_default_to_cache_and_data_folders(clean_env: Path) -> None:
    assert paths.models_dir() == clean_env / "cache" / "recall" / "models"
    assert paths.default_memory_dir() == clean_env / "data" / "recall" / "memory"


def test_recall_models_moves_the_models_not_the_memories(clean_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(paths.MODELS_VAR, str(clean_env / "shared-models"))
    assert paths.models_dir() == clean_env / "shared-models"
    assert paths.default_memory_dir() == clean_env / "data" / "recall" / "memory"
    monkeypatch.setenv(paths.MEMORY_VAR, str(clean_env / "mine"))
    assert paths.default_memory_dir() == clean_env / "mine"


def test_recall_home_stays_the_umbrella(clean_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(paths.HOME_VAR, str(clean_env / "home"))
    assert paths.models_dir() == clean_env / "home" / "models"
    assert paths.default_memory_dir() == clean_env / "home" / "memory"
    monkeypatch.setenv(paths.MEMORY_VAR, str(clean_env / "mine"))  # the specific variable wins
    assert paths.default_memory_dir() == clean_env / "mine"
    assert paths.models_dir() == clean_env / "home" / "models"


def test_a_store_at_the_old_default_is_still_found(clean_env: Path) -> None:
    legacy = clean_env / "cache" / "recall" / "memory"
    _store_with_a_fact(legacy)
    assert paths.default_memory_dir() == legacy
    with MemoryStore.local(encoder=HashEncoder(32)) as store:
        assert [r.text for r in store.for_user("ada").list()] == [FACT]


def test_each_database_of_a_server_gets_its_own_default_journal(tmp_path, monkeypatch) -> None:
    """Every database of one server shared one default journal, so a repair (or a lost server's
    heal) indexed each database's users into the other. Now a store given a tenant or database
    has a journal of its own; an old shared journal is named in a warning."""
    monkeypatch.setenv("RECALL_HOME", str(tmp_path))
    plain = MemoryStore.server(port=8123, encoder=HashEncoder(8))
    with pytest.warns(RuntimeWarning, match="until 2026-12-06 every database of this server shared"):
        first = MemoryStore.server(port=8123, encoder=HashEncoder(8), database="db1")
    with pytest.warns(RuntimeWarning, match="until 2026-12-06 every database of this server shared"):
        second = MemoryStore.server(port=8123, encoder=HashEncoder(8), tenant="t", database="db2")
    paths = [store.journal.path.name for store in (plain, first, second)]
    assert paths == ["127.0.0.1_8123.sqlite3", "127.0.0.1_8123_default_tenant_db1.sqlite3", "127.0.0.1_8123_t_db2.sqlite3"]
    for store in (plain, first, second):
        store.close()

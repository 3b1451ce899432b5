"""Every code block of README.md runs, and prints what its comments say it prints.

The ```python blocks are extracted and each one runs in a process of its own, in a fresh
working folder with a fresh ``RECALL_HOME`` (the converted models are linked into it, so
nothing is downloaded or converted again): a block must be complete on its own, as a reader
would copy it, and the blocks cannot see each other's memories, except that a block whose
first line is ``# later, in a new process`` runs after the block before it, in a process of
its own with the same ``RECALL_HOME``: what a recipe remembers across processes. A line
``print(...)  # TEXT`` must print exactly TEXT, unless TEXT starts with "for example".

The ```bash blocks that only call ``recall`` run too, in the same kind of fresh home, with
``recall`` being this checkout's command line (``python -m recall_core.cli``). The blocks of
``make`` and ``pip`` commands do not run: ``make test`` would run this test again and ``make
demo`` sets up a virtual environment, and ``pip install`` needs the network. Any other bash
block fails the test until it is one of the two kinds.
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.S | re.M)
#: Commands a bash block may hold without being run (why: the module docstring).
NOT_RUN = ("make ", "pip ")
#: What a bash block's command prints on stdout, each command in a process of its own.
ANSWERS = {'recall ask --user ada "What is the name of my dog?"': "Zorblax"}
#: The first line of a block that goes on from the block before it, in a new process.
LATER = "# later, in a new process"

pytestmark = pytest.mark.integration


def blocks(language: str) -> list[str]:
    return [code for lang, code in FENCE.findall(README.read_text(encoding="utf-8")) if lang == language]


def python_runs() -> list[list[str]]:
    """The python blocks in runs: a block and those that go on from it (``LATER``), in order."""
    runs: list[list[str]] = []
    for code in blocks("python"):
        if code.startswith(LATER) and runs:
            runs[-1].append(code)
        else:
            runs.append([code])
    return runs


PRINT_CHECK = '''
import builtins as _builtins, io as _io

def _readme_print(_expected, *args, **kwargs):
    buffer = _io.StringIO()
    _builtins.print(*args, **{**kwargs, "file": buffer})
    _builtins.print(buffer.getvalue(), end="", flush=True)
    if not _expected.startswith("for example"):
        printed = buffer.getvalue().rstrip("\\n")
        assert printed == _expected, f"README says {_expected!r}, the code printed {printed!r}"
'''


def with_print_checks(code: str) -> str:
    """``code`` with each one-line ``print(...)  # TEXT`` checked against TEXT."""
    lines = code.splitlines()
    for token in tokenize.generate_tokens(io.StringIO(code).readline):
        if token.type != tokenize.COMMENT:
            continue
        row, col = token.start
        statement = lines[row - 1][:col].rstrip()
        if statement.lstrip().startswith("print(") and statement.endswith(")"):
            expected = token.string[1:].strip()
            indent = statement[: len(statement) - len(statement.lstrip())]
            lines[row - 1] = f"{indent}_readme_print({expected!r}, {statement.lstrip()[len('print('):]}"
    return PRINT_CHECK + "\n".join(lines) + "\n"


@pytest.fixture
def fresh_home(tmp_path: Path) -> dict[str, str]:
    """An environment whose RECALL_HOME is empty but for the converted models (linked)."""
    models = Path(os.environ["RECALL_HOME"]) / "models"
    home = tmp_path / "home"
    home.mkdir()
    (home / "models").symlink_to(models, target_is_directory=True)
    env = dict(os.environ, RECALL_HOME=str(home), HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def run(command: list[str], cwd: Path, env: dict[str, str]) -> str:
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"exit {done.returncode}\n--- stdout\n{done.stdout}\n--- stderr\n{done.stderr[-6000:]}"
    return done.stdout


def test_the_readme_has_the_blocks_this_test_runs():
    assert len(python_runs()) >= 3  # the engine, LangChain and LlamaIndex quick starts
    assert sum(len(run) > 1 for run in python_runs()) >= 2  # LangChain and LlamaIndex, across two processes
    assert all(any(command in code for code in blocks("bash")) for command in ANSWERS)  # each answer is checked
    for code in blocks("bash"):
        commands = [line for line in code.splitlines() if line.strip() and not line.lstrip().startswith("#")]
        assert all(line.startswith("recall ") for line in commands) or all(
            line.startswith(NOT_RUN) for line in commands
        ), f"a bash block that is neither run nor known to be unsafe:\n{code}"


def test_the_python_blocks_run_in_order_in_one_home(tmp_path: Path, fresh_home: dict[str, str]):
    """A reader runs the quick starts one after another on the default store: until 2026-12-07 each
    ran in a home of its own here, and in one home they printed other results than their comments
    (their users' memories mixed, a reviewer)."""
    for index, blocks_of_run in enumerate(python_runs()):
        for part, code in enumerate(blocks_of_run):  # one process each
            script = tmp_path / f"readme_block_{index}_{part}.py"
            script.write_text(with_print_checks(code), encoding="utf-8")
            print(run([sys.executable, str(script)], tmp_path, fresh_home))


@pytest.mark.parametrize(
    "index", [i for i, code in enumerate(blocks("bash")) if "\nrecall " in "\n" + code]
)
def test_bash_block_of_recall_commands_runs(index: int, tmp_path: Path, fresh_home: dict[str, str]):
    script = tmp_path / f"readme_block_{index}.sh"
    prelude = f'set -euo pipefail\nrecall() {{ "{sys.executable}" -m recall_core.cli "$@"; }}\n'
    code = blocks("bash")[index]
    script.write_text(prelude + code, encoding="utf-8")
    out = run(["bash", str(script)], tmp_path, fresh_home)
    print(out)
    for command, answer in ANSWERS.items():  # what a block's comments say a command prints
        if command in code:
            assert answer in out, f"{command!r} should print {answer!r}"

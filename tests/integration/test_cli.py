"""The ``recall`` command line end to end: remembering in one process and asking in another, and the
demo, on the real default models; training a query head on a tiny model (it generates and
encodes some 3,000 training texts, minutes on two cores)."""

from __future__ import annotations

import os
import subprocess
import sys

from recall_core import RecallGenerator
from recall_core.cli import main


def _recall(*args: str, check: bool = True, **env: str) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "recall_core.cli", *args], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "HF_HUB_OFFLINE": "1", **env})
    if check and done.returncode != 0:
        raise AssertionError(f"recall {' '.join(args)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return done


def test_a_fact_remembered_in_one_process_is_recalled_in_another(tmp_path, capsys):
    store = str(tmp_path / "memory")
    assert main(["remember", "--store", store, "--user", "ada", "I named my beagle puppy Zorblax."]) == 0
    assert "remembered 1 memory for 'ada'" in capsys.readouterr().out

    question = ["What is the name of my dog?", "--max-new-tokens", "24"]
    answer = _recall("ask", "--store", store, "--user", "ada", *question)  # another process
    assert "Zorblax" in answer.stdout
    assert "I named my beagle puppy Zorblax." in answer.stderr  # the recall trace

    # The rest in this process: the store is opened and closed by each command. (README.md's
    # commands run each in a process of their own: tests/integration/test_readme.py.)
    question[-1] = "12"  # these have no memory to answer from: the first tokens say so
    assert main(["ask", "--store", store, "--user", "bob", *question]) == 0
    out, err = capsys.readouterr()
    assert "Zorblax" not in out and "no memory" in err
    assert main(["doctor", "--store", store]) == 0
    assert main(["forget", "--store", store, "--user", "ada"]) == 0
    assert "forgot 1 memories of 'ada'" in capsys.readouterr().out
    assert main(["ask", "--store", store, "--user", "ada", *question]) == 0
    assert "no memory" in capsys.readouterr().err


def test_demo_answers_through_recall_and_isolates_users_quietly(tmp_path):
    done = _recall("demo", "--max-new-tokens", "48", TMPDIR=str(tmp_path))
    # The default model and encoder, converted by `make models`, load without a progress bar.
    assert "it/s" not in done.stderr and "Loading" not in done.stderr, done.stderr
    assert "Zorblax" in done.stdout.split("== Session 2")[1]
    assert "nothing injected, no memory" in done.stdout.split("== bob")[1]
    assert str(tmp_path) in done.stdout  # its memory was a temporary folder there...
    assert list(tmp_path.glob("recall-demo-*")) == []  # ...removed at the end (``--memory DIR`` keeps one)


def test_cli_train_head_saves_a_head_that_loading_the_folder_finds(tiny, tmp_path, capsys):
    model, tokenizer = tiny
    folder = tmp_path / "model"
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    assert main(["train-head", "--model", str(folder), "--encoder", "hash-16", "--device", "cpu", "--vocabulary-texts", "50"]) == 0
    assert "saved the query head" in capsys.readouterr().out
    head = RecallGenerator.from_pretrained(str(folder)).query_head
    assert head is not None and head.meta.encoder_name == "hash-16"
    assert head.meta.recipe["data"]["conversations"] > 0 and head.meta.recipe["loss_last"] < head.meta.recipe["loss_first"]

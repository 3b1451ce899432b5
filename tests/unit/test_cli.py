"""The ``recall`` command line on tiny parts: bad arguments, a store's encoder, a server that hangs.

The commands end to end on the real default models: tests/integration/test_cli.py.
"""

from __future__ import annotations

import pytest

from recall_core.cli import main


def test_bad_arguments_fail_with_a_message(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["ask", "question without a user"])
    assert exit_info.value.code == 2
    assert "--user" in capsys.readouterr().err
    assert main(["ask", "--user", "ada", "--server", "nonsense", "hi"]) == 2
    assert "--server must look like HOST:PORT" in capsys.readouterr().err
    assert main(["remember", "--store", str(tmp_path / "m"), "--user", "ada", "   "]) == 2
    assert "empty" in capsys.readouterr().err
    assert main(["ask", "--user", "ada", "--server", "127.0.0.1:70000", "hi"]) == 2
    assert "port must be an int in [1, 65535], got 70000" in capsys.readouterr().err


@pytest.mark.parametrize(("flag", "value"), [("--temperature", "-1"), ("--temperature", "nan"),
                                              ("--temperature", "inf"), ("--temperature", "1e-5"),
                                              ("--max-new-tokens", "0")])  # fmt: skip
def test_bad_generation_arguments_fail_before_a_model_is_loaded(flag, value, capsys):
    """``--temperature -1`` or ``nan`` was taken and decoded greedily, silently."""
    with pytest.raises(SystemExit) as exit_info:
        main(["ask", "--user", "ada", flag, value, "hi"])
    assert exit_info.value.code == 2 and flag in capsys.readouterr().err


def test_cli_encoder_option_repairs_a_store_written_with_another_encoder(tmp_path, capsys):
    """Without --encoder, the CLI opened every store with the default encoder, so a store
    written with another one could not be repaired from the command line."""
    from recall_core.memory import HashEncoder, MemoryStore, MemoryWriter
    from tests.helpers.memories import RAW_TEXT

    path = tmp_path / "m"
    with MemoryStore.local(path, encoder=HashEncoder(32)) as store:
        MemoryWriter(store, **RAW_TEXT).add_turns([{"user_id": "u", "role": "user", "content": f"fact {i}"} for i in range(3)])
        store.index.drop_user("u")  # the index lost them
    assert main(["doctor", "--repair", "--no-probe", "--store", str(path), "--encoder", "hash-32"]) == 0
    assert "3 missing from the index" in capsys.readouterr().out
    with MemoryStore.local(path, encoder=HashEncoder(32)) as store:
        assert store.for_user("u").count() == 3
    assert main(["remember", "--store", str(path), "--user", "u", "--encoder", str(tmp_path / "no-such-model"), "hi"]) == 2
    assert "could not load the sentence encoder" in capsys.readouterr().err


def test_cli_timeout_bounds_a_hung_server(tmp_path, capsys):
    """`recall ask` waited the full 30 s on a server that accepts connections and never answers."""
    import socket
    import time

    from tests.helpers.tiny import tiny_model

    model, tokenizer = tiny_model("llama")
    model.save_pretrained(tmp_path / "model")
    tokenizer.save_pretrained(tmp_path / "model")
    hung = socket.socket()
    hung.bind(("127.0.0.1", 0))
    hung.listen(8)  # connections are accepted by the kernel, never answered
    port = hung.getsockname()[1]
    try:
        start = time.monotonic()
        with pytest.warns(RuntimeWarning, match="recall skipped"):
            code = main(["ask", "--server", f"127.0.0.1:{port}", "--timeout", "1", "--encoder", "hash-16",
                         "--user", "u", "--model", str(tmp_path / "model"), "--max-new-tokens", "2", "where do I live?"])
        elapsed = time.monotonic() - start
    finally:
        hung.close()
    assert code == 0
    err = capsys.readouterr().err
    assert "MemoryUnavailableError" in err and f"127.0.0.1:{port}" in err
    assert elapsed < 20  # one 1 s timeout (and the tiny model), not the default 30 s
    with pytest.raises(SystemExit):
        main(["ask", "--server", f"127.0.0.1:{port}", "--timeout", "0", "--user", "u", "hi"])
    assert "--timeout" in capsys.readouterr().err


def test_a_device_this_machine_lacks_is_a_clear_error(tmp_path, monkeypatch, capsys):
    """`--device cuda` on a CPU-only torch ended in a traceback (torch's AssertionError, exit 1):
    the device was passed through unchecked until the model moved there."""
    import torch

    from recall_core.models.loading import resolve_device

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    for device in ("cuda", "cuda:1", "mps", "gpu"):
        with pytest.raises(ValueError, match=f"'{device}'") as error:
            resolve_device(device)  # the Python API says so too (load_model(device=...), from_pretrained)
        assert "one of cpu" in str(error.value)  # and names the devices there are
    assert resolve_device("cpu") == torch.device("cpu") and resolve_device(None) == torch.device("cpu")
    assert main(["remember", "--user", "ada", "--store", str(tmp_path / "m"), "--encoder", "hash-16", "hello"]) == 0
    code = main(["ask", "--user", "ada", "--store", str(tmp_path / "m"), "--encoder", "hash-16", "--device", "cuda",
                 "--model", str(tmp_path / "no-model"), "hi"])
    assert code == 2
    assert "device 'cuda' is not available" in capsys.readouterr().err


def test_demo_no_memory_answers_without_recall(tmp_path, monkeypatch, capsys):
    """`recall demo --no-memory` recalled all the same: the demo always handed the generator ada's memory."""
    from types import SimpleNamespace

    import recall_core.cli as cli
    from recall_core.cli import model_commands
    from recall_core.memory import HashEncoder, MemoryStore

    local = MemoryStore.local
    monkeypatch.setattr(MemoryStore, "local", lambda path, **kw: local(path, encoder=HashEncoder(32), **kw))
    used: list = []

    class Generator:  # what the demo hands the model, without a model
        def __init__(self, memory):
            self.memory = memory

        def generate(self, messages, memory="default"):
            used.append(self.memory if memory == "default" else memory)
            usage = SimpleNamespace(prompt_tokens=1, injected_tokens=0, generated_tokens=1)
            return SimpleNamespace(text="ok", recalls=[], usage=usage)

    monkeypatch.setattr(model_commands, "_generator", lambda args, memory: Generator(memory))
    assert main(["demo", "--no-memory", "--memory", str(tmp_path / "a")]) == 0
    assert used == [None] * len(cli.DEMO_QUESTIONS)
    out = capsys.readouterr().out
    assert "answered without recall (--no-memory)" in out and f"== {cli.DEMO_OTHER_USER}" not in out
    used.clear()
    assert main(["demo", "--memory", str(tmp_path / "b")]) == 0
    assert [memory.user_id for memory in used] == [cli.DEMO_USER] * len(cli.DEMO_QUESTIONS) + [cli.DEMO_OTHER_USER]


def test_chat_writes_what_the_user_states_not_the_questions(tmp_path, tiny, monkeypatch, capsys):
    """`recall chat` wrote each line word for word: "What is my cat called?" came back as the best
    note for the next question like it, above the fact. It writes what the adapters write now."""
    import io

    from recall_core.memory import HashEncoder, MemoryStore

    model, tokenizer = tiny
    model.save_pretrained(tmp_path / "model")
    tokenizer.save_pretrained(tmp_path / "model")
    path = tmp_path / "m"
    chat = ["chat", "--user", "ada", "--store", str(path), "--encoder", "hash-32", "--model", str(tmp_path / "model"),
            "--max-new-tokens", "3", "--no-memory"]

    notes: list[str] = []

    def said(lines: str, *options: str) -> list[str]:
        monkeypatch.setattr("sys.stdin", io.StringIO(lines))
        assert main([*chat, *options]) == 0
        notes.append(capsys.readouterr().err)
        with MemoryStore.local(path, encoder=HashEncoder(32)) as store:
            return [record.text for record in store.for_user("ada").list() if record.role == "user"]

    assert said("My cat is called Pepper.\nWhat is my cat called?\nI live in Porto, any tips?\n") == [
        "My cat is called Pepper.", "I live in Porto."]
    # what was left out is said, so that a statement taken for a question is not lost unseen
    assert "remembered of your line: ''" in notes[-1] and "remembered of your line: 'I live in Porto.'" in notes[-1]
    assert "Pepper" not in notes[-1]
    assert said("Where do I live?\n", "--write-questions")[-1] == "Where do I live?"  # asked for


def test_chat_goes_on_when_the_server_is_down(tmp_path, tiny, monkeypatch, capsys):
    """`recall chat` ended at the first write to a server that was down (the turns kept in the
    journal), and the lines typed after it were never answered (until 2026-12-07, a reviewer)."""
    import io

    from recall_core.processes import free_port

    model, tokenizer = tiny
    model.save_pretrained(tmp_path / "model")
    tokenizer.save_pretrained(tmp_path / "model")
    monkeypatch.setenv("RECALL_HOME", str(tmp_path / "home"))  # the server journal's default place
    monkeypatch.setattr("sys.stdin", io.StringIO("My cat is called Pepper.\nI live in Porto.\n"))
    code = main(["chat", "--user", "ada", "--server", f"127.0.0.1:{free_port()}", "--timeout", "1", "--encoder",
                 "hash-32", "--model", str(tmp_path / "model"), "--max-new-tokens", "2", "--no-memory"])  # fmt: skip
    captured = capsys.readouterr()
    assert code == 0 and captured.out.count("bot> ") == 2
    assert captured.err.count("recall: not remembered: MemoryUnavailableError") == 2


def test_ask_on_a_fresh_install_answers_without_memory_and_makes_no_store(tmp_path, tiny, monkeypatch, capsys):
    """A fresh install's first `recall ask` (no --store) was refused once the typo check covered `ask`
    (2026-12-07, the same day; a reviewer): it answers without memory and says so."""
    model, tokenizer = tiny
    model.save_pretrained(tmp_path / "model")
    tokenizer.save_pretrained(tmp_path / "model")
    monkeypatch.setenv("RECALL_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("RECALL_MEMORY", raising=False)
    code = main(["ask", "--user", "ada", "--model", str(tmp_path / "model"), "--max-new-tokens", "2", "hi"])
    assert code == 0 and "answered without memory" in capsys.readouterr().err
    assert not (tmp_path / "home" / "memory").exists()
    # a folder named by $RECALL_MEMORY (or --home) that holds no store is a typo, as for every other command
    monkeypatch.setenv("RECALL_MEMORY", str(tmp_path / "typo"))
    assert main(["ask", "--user", "ada", "--model", str(tmp_path / "model"), "--max-new-tokens", "2", "hi"]) == 2
    assert "holds no memory store" in capsys.readouterr().err and not (tmp_path / "typo").exists()

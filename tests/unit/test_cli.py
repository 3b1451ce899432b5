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

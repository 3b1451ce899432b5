"""Local server processes (recall_core.processes): ports and timeouts checked, a held port refused,
a second start refused; shared by the serving engine and ``chroma run``."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np
import pytest

from recall_core.memory.chroma_server import ChromaServer
from recall_core.processes import free_port, port_in_use, start_process, stop_process
from recall_core.serving.engine import EngineServer


def _gguf(tmp_path: Path) -> Path:
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    return model


@pytest.mark.parametrize("bad", [-1, 0, 70000, "8080", True, 80.5])
def test_a_bad_port_is_refused_by_name(tmp_path: Path, bad: object) -> None:
    """-1, 70000, "8080" and True were taken (the url read "127.0.0.1:True"), and 0 silently meant a
    random port (until 2026-12-07: a reviewer)."""
    with pytest.raises(ValueError, match=r"port must be an int in 1-65535"):
        EngineServer(_gguf(tmp_path), port=bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"port must be an int in 1-65535"):
        ChromaServer(tmp_path / "data", port=bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", [-5, 0, "x", float("nan"), float("inf"), True])
def test_a_bad_startup_timeout_is_refused_by_name(tmp_path: Path, bad: object) -> None:
    with pytest.raises(ValueError, match=r"startup_timeout must be a finite number of seconds > 0"):
        EngineServer(_gguf(tmp_path), startup_timeout=bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"startup_timeout must be a finite number of seconds > 0"):
        ChromaServer(tmp_path / "data", startup_timeout=bad)  # type: ignore[arg-type]


def test_good_ports_and_timeouts_are_taken(tmp_path: Path) -> None:
    assert EngineServer(_gguf(tmp_path), port=np.int64(8123), startup_timeout=np.float64(3)).port == 8123
    assert ChromaServer(tmp_path / "data", port=65535, startup_timeout=1).url.endswith(":65535")
    assert EngineServer(_gguf(tmp_path)).port > 0  # None: a free one


def _answers(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=1.0) as response:
            return response.status == 200
    except OSError:
        return False


def test_a_port_another_server_holds_is_refused_not_taken_for_a_start(tmp_path: Path) -> None:
    """Another server on the port answered the probe while the new process failed to bind and exited:
    the start was taken as a success and calls went to the other server (until 2026-12-07: a reviewer)."""
    port = free_port()
    other = start_process([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"], tmp_path / "a.log",
                          ready=lambda: _answers(port), timeout=30, interval=0.1, name="a", probe="/")  # fmt: skip
    try:
        with pytest.raises(RuntimeError, match=rf"cannot listen on 127.0.0.1:{port}: another process holds the port"):
            start_process([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"], tmp_path / "b.log",
                          ready=lambda: _answers(port), timeout=30, interval=0.1, name="b", probe="/", port=port)  # fmt: skip
        with pytest.raises(RuntimeError, match="another process holds the port"):
            ChromaServer(tmp_path / "data", port=port).start()
        assert other.poll() is None and _answers(port)  # the other server is left alone
    finally:
        stop_process(other)


def test_a_second_start_is_refused_while_the_first_process_runs(tmp_path: Path) -> None:
    """A second start() replaced the running process, which stop() then never reached (a reviewer, 2026-12-07)."""
    running = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        for server in (EngineServer(_gguf(tmp_path)), ChromaServer(tmp_path / "data")):
            server.process = running
            with pytest.raises(RuntimeError, match=rf"running already \(pid {running.pid}\): stop\(\) it first"):
                server.start()
    finally:
        stop_process(running)


def test_a_port_a_stopped_server_left_in_time_wait_is_free_and_a_listened_one_is_not() -> None:
    """A server stopped with a client connected leaves its port in TIME_WAIT, which servers bind over
    (SO_REUSEADDR): the first check took it for held, and a restart on the same port was refused
    (a reviewer, 2026-12-07)."""
    port = free_port()
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", port))
    server.listen()
    assert port_in_use(port)
    client = socket.create_connection(("127.0.0.1", port))
    accepted, _ = server.accept()
    accepted.close()  # the server's side closes first: its port's connection waits in TIME_WAIT
    time.sleep(0.1)
    client.close()
    server.close()
    assert not port_in_use(port)


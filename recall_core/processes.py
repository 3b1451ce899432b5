"""Local server processes this process starts: a free port, start and wait until it answers,
stop by its pid (never by name). Shared by ``chroma run`` (:mod:`recall_core.memory.chroma_server`)
and the serving engine (:mod:`recall_core.serving.engine`); the standard library only, so the
memory package may import it without loading the engine.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

__all__ = ["free_port", "log_tail", "start_process", "stop_process"]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_process(
    command: Sequence[str], log_path: Path, *, ready: Callable[[], bool], timeout: float, interval: float,
    name: str, probe: str, env: Mapping[str, str] | None = None,
) -> subprocess.Popen[bytes]:  # fmt: skip
    """Start ``command`` (output to ``log_path``, its own process group) and wait until ``ready()``.

    ``RuntimeError`` with the log's end if it exits first, or does not answer ``probe`` within
    ``timeout`` seconds (then it is stopped). ``name`` and ``probe`` say what in those errors.
    """
    log = open(log_path, "wb")  # noqa: SIM115 - the process owns it until it is stopped
    process = subprocess.Popen(
        list(command), stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        env=dict(env) if env is not None else None,
        start_new_session=True,  # its own process group: stopping it never signals ours
    )  # fmt: skip
    log.close()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{name} exited with {process.returncode}: {log_tail(log_path)}")
        if ready():
            return process
        time.sleep(interval)
    stop_process(process)
    raise RuntimeError(f"{name} did not answer {probe} in {timeout}s: {log_tail(log_path)}")


def stop_process(process: subprocess.Popen[bytes] | None, timeout: float = 10.0) -> None:
    """Stop ``process`` by its pid: SIGTERM, then SIGKILL after ``timeout`` seconds."""
    if process is None or process.poll() is not None:
        return
    os.kill(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=timeout)


def log_tail(path: Path) -> str:
    """The last 2,000 characters of a process's log ("" if it cannot be read)."""
    try:
        return path.read_text(errors="replace")[-2000:]
    except OSError:
        return ""

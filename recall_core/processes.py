"""Local server processes this process starts: a free port, start and wait until it answers,
stop by its pid (never by name). Shared by ``chroma run`` (:mod:`recall_core.memory.chroma_server`)
and the serving engine (:mod:`recall_core.serving.engine`); the standard library only, so the
memory package may import it without loading the engine.
"""

from __future__ import annotations

import math
import numbers
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

__all__ = ["check_port", "check_timeout", "free_port", "log_tail", "port_in_use", "start_process", "stop_process"]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def check_port(port: object) -> int | None:
    """``port`` as given (``None``: a free one is taken); ``ValueError`` unless it is an int in 1-65535.
    Until 2026-12-07 -1, 70000, "8080" and True were taken, and 0 silently meant a random port (a reviewer)."""
    if port is None:
        return None
    if isinstance(port, bool) or not isinstance(port, numbers.Integral) or not 1 <= port <= 65535:
        raise ValueError(f"port must be an int in 1-65535 (or None: a free one), got {port!r}")
    return int(port)


def check_timeout(name: str, value: object) -> float:
    """``value`` as seconds; ``ValueError`` naming ``name`` unless it is a finite number > 0."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number of seconds > 0, got {value!r}")
    return float(value)


def port_in_use(port: int) -> bool:
    """Whether something on this machine listens on TCP ``port`` on 127.0.0.1 (it cannot be bound).
    Bound as servers bind (``SO_REUSEADDR``): the connections a stopped server left in TIME_WAIT do
    not hold the port, and a restart on it worked (a reviewer, 2026-12-07)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


def start_process(
    command: Sequence[str], log_path: Path, *, ready: Callable[[], bool], timeout: float, interval: float,
    name: str, probe: str, env: Mapping[str, str] | None = None, port: int | None = None,
) -> subprocess.Popen[bytes]:  # fmt: skip
    """Start ``command`` (output to ``log_path``, its own process group) and wait until ``ready()``.

    ``RuntimeError`` with the log's end if it exits first, or does not answer ``probe`` within
    ``timeout`` seconds (then it is stopped). ``name`` and ``probe`` say what in those errors.
    ``port``, where the process listens: ``RuntimeError`` at once if something holds it already.
    Until 2026-12-07 another server on it answered ``probe``, the new process failed to bind and
    exited, and the start was taken as a success: calls went to the other server (a reviewer).
    """
    if port is not None and port_in_use(port):
        raise RuntimeError(f"{name} cannot listen on 127.0.0.1:{port}: another process holds the port")
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
        if ready() and process.poll() is None:  # ours answered, not another process on the port
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

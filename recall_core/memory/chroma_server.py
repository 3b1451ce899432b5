"""Start and stop a local ``chroma run`` server: for development, tests and benchmarks.

The server is the venv's own ``chroma`` binary, bound to 127.0.0.1 on a free port; it
is ready when ``GET /api/v2/heartbeat`` answers, and stopped by its pid (never by name).
In production run the server as a service of its own; this is for trying
``MemoryStore.server`` on one machine::

    with ChromaServer("/tmp/chroma") as server:
        store = MemoryStore.server(port=server.port)
"""

from __future__ import annotations

import os
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

from recall_core.processes import check_port, check_timeout, free_port, log_tail, start_process, stop_process

__all__ = ["ChromaServer", "chroma_binary", "free_port"]


def chroma_binary() -> str:
    """The ``chroma`` CLI next to this Python (the venv's), else the one on PATH."""
    candidate = Path(sys.executable).with_name("chroma")
    return str(candidate) if candidate.exists() else "chroma"


class ChromaServer:
    """A ``chroma run`` process on 127.0.0.1; use as a context manager or call start/stop.

    Args:
        path: the server's data folder.
        port: the port (default: a free one).
        startup_timeout: seconds to wait for the heartbeat.
    """

    def __init__(self, path: str | Path, port: int | None = None, startup_timeout: float = 60.0) -> None:
        self.path = Path(path)
        self.host = "127.0.0.1"
        self.port = check_port(port) or free_port()
        self.startup_timeout = check_timeout("startup_timeout", startup_timeout)
        self.process: subprocess.Popen[bytes] | None = None
        self.log_path = self.path.parent / f"chroma-{self.port}.log"

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def pid(self) -> int | None:
        return None if self.process is None else self.process.pid

    def alive(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/api/v2/heartbeat", timeout=1.0) as response:
                return response.status == 200
        except (urllib.error.URLError, OSError):
            return False

    def start(self) -> ChromaServer:
        """Start ``chroma run`` and wait for its heartbeat (``RuntimeError`` with its log if it never
        answers, if the port is held by another process, or if this one is running already)."""
        if self.process is not None and self.process.poll() is None:
            raise RuntimeError(f"chroma run is running already (pid {self.process.pid}): stop() it first")
        self.path.mkdir(parents=True, exist_ok=True)
        self.process = start_process(
            [chroma_binary(), "run", "--path", str(self.path), "--host", self.host, "--port", str(self.port)],
            self.log_path, ready=self.alive, timeout=self.startup_timeout, interval=0.1, name="chroma run",
            probe="the heartbeat", env=dict(os.environ, ANONYMIZED_TELEMETRY="False"), port=self.port,
        )  # fmt: skip
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the server by its pid (SIGTERM, then SIGKILL)."""
        process, self.process = self.process, None
        stop_process(process, timeout)

    def log(self) -> str:
        return log_tail(self.log_path)

    def __enter__(self) -> ChromaServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

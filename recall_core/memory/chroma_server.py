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
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


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
        self.port = port or free_port()
        self.startup_timeout = startup_timeout
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
        self.path.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ, ANONYMIZED_TELEMETRY="False")
        log = open(self.log_path, "wb")  # noqa: SIM115 - the process owns it until stop()
        self.process = subprocess.Popen(
            [chroma_binary(), "run", "--path", str(self.path), "--host", self.host, "--port", str(self.port)],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,  # its own process group: stop() never signals ours
        )
        log.close()
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"chroma run exited with {self.process.returncode}: {self.log()}")
            if self.alive():
                return self
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"chroma run did not answer the heartbeat in {self.startup_timeout}s: {self.log()}")

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the server by its pid (SIGTERM, then SIGKILL)."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        os.kill(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.kill(process.pid, signal.SIGKILL)
            process.wait(timeout=timeout)

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-2000:]
        except OSError:
            return ""

    def __enter__(self) -> ChromaServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

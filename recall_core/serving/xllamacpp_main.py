"""llama.cpp's HTTP server through the ``xllamacpp`` wheel: the script the engine's own Python runs.

Why a script: the engine lives in its own virtual environment (``make engine`` makes
``.venv-engine``), so its pins never meet the project's; this file imports only the standard
library and ``xllamacpp``, and :class:`recall_core.serving.engine.EngineServer` runs it as
``.venv-engine/bin/python xllamacpp_main.py MODEL.gguf --port N ...``. It serves the same HTTP
API as the native ``llama-server`` binary (``/completion``, ``/tokenize``, ``/health``,
``/v1/chat/completions``) until SIGTERM.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading


def main(argv: list[str] | None = None) -> None:
    """Parse the few ``llama-server`` flags recall uses and serve until SIGTERM / SIGINT."""
    parser = argparse.ArgumentParser(description="llama.cpp's server in-process (xllamacpp)")
    parser.add_argument("model")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--parallel", type=int, default=1, help="slots (llama-server -np)")
    parser.add_argument("--ctx-per-slot", type=int, default=2048, help="context per slot (-c is this times -np)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--slot-prompt-similarity", type=float, default=0.1, help="llama-server -sps")
    parser.add_argument("--no-cache-idle-slots", action="store_true", help="llama-server --no-cache-idle-slots")
    parser.add_argument("--lora", action="append", default=[],
                        help="a LoRA adapter GGUF, loaded at scale 0 (llama-server --lora-scaled F:0)")
    args = parser.parse_args(argv)

    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = args.model
    params.n_parallel = args.parallel
    params.n_ctx = args.ctx_per_slot * args.parallel
    params.cont_batching = True
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    params.slot_prompt_similarity = args.slot_prompt_similarity
    params.cache_idle_slots = not args.no_cache_idle_slots
    params.port = args.port
    params.hostnames = [args.host]
    params.endpoint_slots = True
    params.endpoint_metrics = True
    if args.lora:  # at scale 0: a request without a "lora" field gets the scale an adapter was loaded
        # at (lora_init_without_apply does not change that), and a request sets its own
        params.lora_adapters = [xllamacpp.CommonAdapterLoraInfo(path, 0.0) for path in args.lora]
        params.cache_ram_mib = 0  # its prompt cache restores a prefix whatever scales computed it
    server = xllamacpp.Server(params)
    print(f"listening on {args.host}:{args.port}", flush=True)
    done = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: done.set())
    done.wait()
    del server
    sys.exit(0)


if __name__ == "__main__":
    main()

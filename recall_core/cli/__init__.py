"""The ``recall`` command line: ask, chat, remember, ingest, forget, list, search, delete, export,
import, doctor, rebuild, fetch-models, demo, train, train-head, bench.

Run ``recall --help`` or ``recall COMMAND --help``. The parser is in :mod:`.arguments`; the commands
that only read or write the memory in :mod:`.memory_commands`; those that load a model (or train
one) in :mod:`.model_commands`.
"""

from __future__ import annotations

import faulthandler
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from recall_core.cli.arguments import _parser
from recall_core.cli.model_commands import (
    DEMO_CONVERSATION,
    DEMO_OTHER_USER,
    DEMO_QUESTIONS,
    DEMO_USER,
    format_recalls,
)

__all__ = ["DEMO_CONVERSATION", "DEMO_OTHER_USER", "DEMO_QUESTIONS", "DEMO_USER", "format_recalls", "main"]


def main(argv: Sequence[str] | None = None) -> int:
    # A crash in native code (a damaged index file the checks missed) prints where it happened
    # instead of ending the process without a word.
    if not faulthandler.is_enabled():
        faulthandler.enable()
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = _parser(training="train" in argv)  # the training options import the engine: only for `recall train`
    args = parser.parse_args(argv)
    if getattr(args, "home", None):
        os.environ["RECALL_HOME"] = str(Path(args.home).expanduser())
    try:
        code = int(args.run(args) or 0)
        sys.stdout.flush()  # output still buffered meets a closed pipe here, not at exit
        return code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # the HTTP clients of a server store raise their own errors: this is stdout's
        return _reader_gone()
    except (ValueError, OSError, RuntimeError) as error:
        print(f"recall: error: {error}", file=sys.stderr)
        return 2


def _reader_gone() -> int:
    """stdout's reader went away (``recall list | head -1``): 141 quietly, as ``yes | head -1`` (128 + SIGPIPE).

    Until 2026-12-06: "recall: error: [Errno 32] Broken pipe", exit 2. stdout goes to ``os.devnull``,
    or Python's flush at exit fails again ("Exception ignored ...")."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # a stdout with no file behind it (a test's, an embedding's): nothing to flush
        pass
    return 141

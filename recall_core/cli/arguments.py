"""The ``recall`` command line's parser: every command, its options and their checks, made before
anything loads (a bad number is refused at parse time, not after a model has loaded)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from recall_core.cli.memory_commands import (
    _delete,
    _doctor,
    _export,
    _forget,
    _import,
    _ingest,
    _list,
    _rebuild,
    _remember,
    _search,
)
from recall_core.cli.model_commands import _ask, _bench, _chat, _demo, _fetch_models, _train, _train_head
from recall_core.settings import RANGES

#: The modules of benchmarks/ that `recall bench NAME` runs (``python -m benchmarks.NAME``).
BENCHMARKS = ("conversations", "heldout", "paired", "locomo", "retrieval_methods", "memory", "decode_overhead",
              "recall_placement")


def _parser(training: bool = True) -> argparse.ArgumentParser:
    """The command line's parser; without ``training`` the ``train`` command's own options are
    left out (they import the engine, seconds that ``recall --help`` should not wait)."""
    parser = argparse.ArgumentParser(prog="recall", description="A local LM with a long-term memory it recalls mid-generation.")
    parser.add_argument("--home", help="folder for models and the default memory (default: $RECALL_HOME; else models go to the user "
                             "cache folder and memory to the user data folder)")
    commands = parser.add_subparsers(title="commands", required=True, metavar="COMMAND")

    def command(name: str, run: Any, help: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help, description=help)
        sub.set_defaults(run=run)
        return sub

    ask = command("ask", _ask, "answer one question, recalling the user's memories")
    ask.add_argument("question", type=_text)  # a blank one is refused here, not after the model loads
    _model_arguments(ask)
    _store_arguments(ask)

    chat = command("chat", _chat, "interactive chat; shows where memories are injected and remembers what is said")
    _model_arguments(chat)
    _store_arguments(chat)
    chat.add_argument("--no-write", action="store_true", help="do not write the exchanges into memory")
    chat.add_argument("--session", type=_text, default=None, help="session id for the written turns")
    chat.add_argument("--write-questions", action="store_true",
                      help="write the questions too (default: what a message states, as the adapters' write_questions)")

    remember = command("remember", _remember, "write one turn into a user's memory")
    remember.add_argument("text")
    remember.add_argument("--role", default="user", choices=["user", "assistant", "system"])
    remember.add_argument("--session", type=_text, default=None)
    _store_arguments(remember)

    ingest = command("ingest", _ingest, "write a JSONL or LoCoMo-style JSON file into memory")
    ingest.add_argument("file")
    _store_arguments(ingest, user_required=False)

    forget = command("forget", _forget, "delete every memory of a user")
    _store_arguments(forget)

    listing = command("list", _list, "list a user's memories, oldest first (id, time, role, session, text)")
    listing.add_argument("user", help="whose memories")
    listing.add_argument("--session", type=_text, default=None, help="only this session's")
    listing.add_argument("--limit", type=_count, default=None, help="at most N memories")
    listing.add_argument("--json", action="store_true", help="one JSON object a line: id, timestamp, role, session_id, "
                         "text, key, metadata (to read; `recall import` reads what `recall export` writes)")
    _store_arguments(listing, with_user=False, read_only=True)

    search = command("search", _search, "search a user's memories as recall does (best first, with scores)")
    search.add_argument("user", help="whose memories")
    search.add_argument("query", type=_text)
    search.add_argument("-k", type=_count, default=4, help="how many memories (default 4)")
    _store_arguments(search, with_user=False, read_only=True)

    delete = command("delete", _delete, "delete memories of a user by id (see `recall list`)")
    delete.add_argument("user", help="whose memories")
    delete.add_argument("ids", nargs="+", metavar="ID")
    _store_arguments(delete, with_user=False)

    export = command("export", _export, "write a user's memories as JSONL (stdout, or --out FILE)")
    export.add_argument("user", help="whose memories")
    export.add_argument("--out", default=None, type=_text, metavar="FILE", help="file to write (whole or not at all)")
    _store_arguments(export, with_user=False, read_only=True)

    load = command("import", _import, "read memories from a JSONL file written by `recall export`")
    load.add_argument("file")
    _store_arguments(load, with_user=False)

    doctor = command("doctor", _doctor, "check the index against the journal (the source of truth)")
    doctor.add_argument("--repair", action="store_true",
                        help="index what is missing, finish interrupted deletes, rebuild damaged users")
    doctor.add_argument("--no-probe", action="store_true",
                        help="local store: do not read each collection in a child process (the file check still runs)")
    doctor.add_argument("--prune-extra", action="store_true", default=None,
                        help="with --repair, delete what the index has and the journal lacks (without it, "
                             "such memories are written back into the journal: a lost journal's only copy)")
    _store_arguments(doctor, user_required=False, with_user=False)

    rebuild = command("rebuild-index", _rebuild, "rebuild the Chroma index from the journal")
    rebuild.add_argument("--reencode", action="store_true", help="embed again instead of reusing journaled vectors")
    rebuild.add_argument("--fresh", action="store_true",
                         help="start from an empty index folder (a local index too damaged to open)")
    _store_arguments(rebuild, user_required=False, with_user=False)

    fetch = command("fetch-models", _fetch_models, "fetch and convert the embedded default models (offline afterwards)")
    fetch.set_defaults(run=_fetch_models)

    demo = command("demo", _demo, "remember a short conversation, then answer questions about it in a fresh session")
    _model_arguments(demo)
    demo.add_argument("--memory", type=_path, default=None, metavar="DIR",
                      help="keep the demo's memory in DIR (default: a temporary folder, removed at the end)")

    train = command("train", _train, "recall-tune a chat model (LoRA): it learns to write <recall> and use its notes")
    if training:
        from recall_core.training.command import add_arguments as train_arguments

        train_arguments(train)

    bench = command("bench", _bench, "run a benchmark of a source checkout (conversations, locomo, ...)")
    bench.add_argument("name", choices=BENCHMARKS)
    bench.add_argument("rest", nargs=argparse.REMAINDER, help="arguments for the benchmark (see its --help)")

    head = command("train-head", _train_head,
                   "train a model's hidden query head (<recall> hidden state -> the memory encoder's space)")  # fmt: skip
    head.add_argument("--model", default=None, help="model folder or HF id (default: the embedded SmolLM2-135M-Instruct)")
    head.add_argument("--out", default=None, help="folder to save the head in (default: the model's folder, where "
                      "loading the model finds it); a folder holding a recall adapter gets a head for the model "
                      "with that adapter merged in")  # fmt: skip
    head.add_argument("--encoder", default=None, help="memory encoder (default: all-MiniLM-L6-v2, the store's default)")
    head.add_argument("--device", default=None, help="cpu, cuda... (default: cuda if available)")
    head.add_argument("--seed", type=int, default=0, help="seed of the training texts and of the head (default 0)")
    head.add_argument("--vocabulary-texts", type=_whole(0), default=16000,
                      help="add N sentences filled with common words (recall_core.training.head_texts; default 16000): "
                      "more words seen, a head closer to the text query (BENCHMARKS.md, \"The hidden query\")")  # fmt: skip
    return parser


def _model_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", default=None, help="HF model id or folder (default: embedded SmolLM2-135M-Instruct)")
    parser.add_argument("--device", default=None, help="cpu, cuda, cuda:1... (default: cuda if available)")
    parser.add_argument("--max-new-tokens", type=_count, default=128)
    parser.add_argument("--temperature", type=_temperature, default=0.0, help="0 for greedy decoding")
    parser.add_argument("--query-mode", choices=["text", "hidden"], default="text")
    parser.add_argument("--inject-mode", choices=["tokens", "kv"], default="tokens")
    parser.add_argument("--no-memory", action="store_true", help="answer without recall (for comparison)")
    weights = parser.add_mutually_exclusive_group()
    weights.add_argument("--adapter", type=_folder, default=None, metavar="DIR",
                         help="a recall adapter (`recall train --out DIR`) merged into --model (default: the plain "
                              "default model) on load")  # fmt: skip
    weights.add_argument("--plain", action="store_true",
                         help="the default model as released, without the shipped recall tuning (for comparison)")


def _store_arguments(
    parser: argparse.ArgumentParser, user_required: bool = True, with_user: bool = True, read_only: bool = False
) -> None:
    if with_user:
        parser.add_argument("--user", required=user_required, default=None if not user_required else None,
                            help="whose memory to use")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--store", type=_text, default=None, help="embedded store folder (default: $RECALL_MEMORY, else $RECALL_HOME/memory, "
                                                        "else the user data folder's recall/memory)")
    where.add_argument("--server", type=_text, default=None, metavar="HOST:PORT", help="a Chroma server (`chroma run`) instead")
    parser.add_argument("--header", action="append", default=[], metavar="NAME:VALUE",
                        help="HTTP header for the server, e.g. a proxy token (repeatable)")
    parser.add_argument("--encoder", type=_text, default=None, metavar="NAME_OR_PATH",
                        help="sentence encoder of the memories: a sentence-transformers name or folder, or hash-N "
                             "(default: the one the store's journal records, else the packaged all-MiniLM-L6-v2); "
                             "must be the one they were written with")
    parser.add_argument("--timeout", type=_seconds, default=30.0, metavar="SECONDS",
                        help="with --server: seconds before a request to the server is given up (default 30)")
    if read_only:
        parser.add_argument("--read-only", action="store_true",
                            help="local store: read a snapshot, write nothing where the store is (read-only "
                                 "storage, a store another process has open)")  # fmt: skip


# ---------------------------------------------------------------------- helpers
def _whole(minimum: int) -> Callable[[str], int]:
    """An argparse ``type`` for a whole number >= ``minimum``, checked before a model loads."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = minimum - 1
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be a whole number >= {minimum}, got {text!r}")
        return value

    return parse


def _text(text: str) -> str:
    """An argparse ``type`` for a query, a session id, a store, a server or an encoder: an empty one is
    refused, not read as "any" or "the default" (until 2026-12-07 ``--store ""``, an unset shell
    variable, made a store in the current folder: a reviewer)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"must not be empty, got {text!r}")
    return text


def _path(text: str) -> Path:
    """An argparse ``type`` for a folder to use or make: :func:`_text`, as a path."""
    return Path(_text(text)).expanduser()


def _folder(text: str) -> Path:
    """An argparse ``type`` for an adapter's folder: one that is not there is refused at parse time,
    before a model loads (what is in it is checked when it is applied)."""
    path = Path(text).expanduser()
    if not path.is_dir():
        raise argparse.ArgumentTypeError(f"must be a folder written by `recall train --out`, got {text!r} "
                                         f"({'a file' if path.exists() else 'no such folder'})")  # fmt: skip
    return path


def _number(ok: Callable[[float], bool], allowed: str) -> Callable[[str], float]:
    """An argparse ``type`` for a number that ``ok`` accepts; anything else fails at parse time,
    before a model loads, naming ``allowed``."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = float("nan")
        if not ok(value):
            raise argparse.ArgumentTypeError(f"must be {allowed}, got {text!r}")
        return value

    return parse


_count = _whole(1)
#: generate()'s own range for a temperature (0, or finite and at least 1e-4).
_temperature = _number(RANGES["temperature"].ok, RANGES["temperature"].allowed)
_seconds = _number(lambda value: 0 < value < float("inf"), "a number of seconds > 0")

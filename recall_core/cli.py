"""The ``recall`` command line: ask, chat, remember, ingest, forget, list, search, delete, export,
import, doctor, demo, train-head.

Run ``recall --help`` or ``recall COMMAND --help``.
"""

from __future__ import annotations

import argparse
import faulthandler
import os
import sys
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from recall_core.settings import RANGES

#: The modules of benchmarks/ that `recall bench NAME` runs (``python -m benchmarks.NAME``).
BENCHMARKS = ("conversations", "heldout", "paired", "locomo", "retrieval_methods", "memory", "decode_overhead",
              "recall_placement")
DEMO_USER = "ada"
DEMO_OTHER_USER = "bob"
DEMO_CONVERSATION = [
    ("user", "Hi! I just adopted a beagle puppy. I named him Zorblax."),
    ("assistant", "Zorblax is a great name for a beagle! Congratulations."),
    ("user", "I work as a lighthouse keeper on the island of Berlenga."),
    ("assistant", "That sounds peaceful. Do you live at the lighthouse?"),
    ("user", "My sister Ana's birthday is on the 14th of March."),
    ("assistant", "I'll remember that Ana's birthday is on 14 March."),
]
DEMO_QUESTIONS = [
    "What is the name of my dog?",
    "Where do I work?",
    "When is my sister's birthday?",
]


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


# ---------------------------------------------------------------------- arguments
def _parser(training: bool = True) -> argparse.ArgumentParser:
    """The command line's parser; without ``training`` the ``train`` command's own options are
    left out (they import the engine, seconds that ``recall --help`` should not wait)."""
    parser = argparse.ArgumentParser(prog="recall", description="A local LM with a long-term memory it recalls mid-generation.")
    parser.add_argument("--home", help="folder for models and the default memory (default: $RECALL_HOME or the user cache)")
    commands = parser.add_subparsers(title="commands", required=True, metavar="COMMAND")

    def command(name: str, run: Any, help: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help, description=help)
        sub.set_defaults(run=run)
        return sub

    ask = command("ask", _ask, "answer one question, recalling the user's memories")
    ask.add_argument("question")
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
    export.add_argument("--out", default=None, metavar="FILE", help="file to write (whole or not at all)")
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
    demo.add_argument("--memory", type=Path, default=None, metavar="DIR",
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


def _store_arguments(
    parser: argparse.ArgumentParser, user_required: bool = True, with_user: bool = True, read_only: bool = False
) -> None:
    if with_user:
        parser.add_argument("--user", required=user_required, default=None if not user_required else None,
                            help="whose memory to use")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--store", default=None, help="embedded store folder (default: $RECALL_HOME/memory)")
    where.add_argument("--server", default=None, metavar="HOST:PORT", help="a Chroma server (`chroma run`) instead")
    parser.add_argument("--header", action="append", default=[], metavar="NAME:VALUE",
                        help="HTTP header for the server, e.g. a proxy token (repeatable)")
    parser.add_argument("--encoder", default=None, metavar="NAME_OR_PATH",
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
    """An argparse ``type`` for a query or a session id: an empty one is refused, not read as "any"."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"must not be empty, got {text!r}")
    return text


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


def _open_store(args: argparse.Namespace) -> Any:
    from recall_core.memory import MemoryStore
    from recall_core.memory.backends import CHROMA_DIR, JOURNAL_FILE

    root = Path(args.store).expanduser() if args.store else None
    if root is not None and args.run in (_list, _search, _export, _doctor) and not root.is_file():
        # a command that only reads: a path with no store is a typo (until 2026-12-06 it made an empty store there)
        if not (root / JOURNAL_FILE).is_file() and not (root / CHROMA_DIR).is_dir():
            raise ValueError(f"--store {args.store!r} holds no memory store (no {JOURNAL_FILE}): this command reads "
                             "one and creates none (`recall remember`, `ingest` or `import` do)")

    if args.server:
        if getattr(args, "read_only", False):
            raise ValueError("--read-only opens a local store (--store); a server store is read through the server")
        host, _, port = args.server.rpartition(":")
        if not host or not port.isdigit():
            raise ValueError(f"--server must look like HOST:PORT, got {args.server!r}")
        headers = dict(_split_header(h) for h in args.header)
        return MemoryStore.server(host=host, port=int(port), headers=headers or None, encoder=args.encoder,
                                  timeout=args.timeout)  # fmt: skip
    return MemoryStore.local(args.store, encoder=args.encoder, read_only=getattr(args, "read_only", False))


def _split_header(header: str) -> tuple[str, str]:
    name, sep, value = header.partition(":")
    if not sep or not name.strip():
        raise ValueError(f"--header must look like NAME:VALUE, got {header!r}")
    return name.strip(), value.strip()


def _generator(args: argparse.Namespace, memory: Any) -> Any:
    from recall_core.config import RecallConfig
    from recall_core.generator import RecallGenerator

    config = RecallConfig(query_mode=args.query_mode, inject_mode=args.inject_mode)
    gen = RecallGenerator.from_pretrained(args.model, memory=memory, config=config, device=args.device)
    gen.generation_defaults.update(max_new_tokens=args.max_new_tokens, do_sample=args.temperature > 0)
    if args.temperature > 0:
        gen.generation_defaults["temperature"] = args.temperature
    return gen


def format_recalls(recalls: Sequence[Any]) -> str:
    """One line per ``<recall>``: what was injected where, or why nothing was."""
    lines = []
    for recall in recalls:
        if recall.injected:
            scores = ", ".join(f"{score:.2f}" for _, score in recall.memories) or f"{recall.score:.2f}"
            lines.append(f"  [recall @{recall.position}, {recall.length} tokens, {len(recall.memories) or 1} memories "
                         f"(scores {scores})]  (query: {recall.query!r})")
            lines.extend(f"    {line}" for line in recall.text.splitlines())
        elif recall.length:
            lines.append(f"  [recall @{recall.position}: {recall.reason}, the empty notes injected "
                         f"({recall.length} tokens: {recall.text!r})]  (query: {recall.query!r})")
        else:
            lines.append(f"  [recall @{recall.position}: nothing injected, {recall.reason}]  (query: {recall.query!r})")
    return "\n".join(lines) if lines else "  [no <recall> in this turn]"


# ---------------------------------------------------------------------- commands
def _train(args: argparse.Namespace) -> int:
    from recall_core.training.command import run

    return run(args)


def _ask(args: argparse.Namespace) -> int:
    with _open_store(args) as store:
        memory = None if args.no_memory else store.for_user(args.user)
        result = _generator(args, memory).generate([{"role": "user", "content": args.question}])
    print(result.text)
    print(format_recalls(result.recalls), file=sys.stderr)
    return 0


def _chat(args: argparse.Namespace) -> int:
    from recall_core.remember import TurnsRefused, last_exchange, write_turns

    with _open_store(args) as store:
        memory = store.for_user(args.user)
        gen = _generator(args, None if args.no_memory else memory)
        history: list[dict[str, str]] = []
        print(f"Chatting as {args.user!r} with memory in {store.location}. Empty line or Ctrl-D to quit.")
        while True:
            try:
                line = input("you> ").strip()
            except EOFError:
                break
            if not line:
                break
            history.append({"role": "user", "content": line})
            print("bot> ", end="", flush=True)
            stream = gen.stream(history)
            for piece in stream:
                print(piece, end="", flush=True)
            print()
            result = stream.result
            print(format_recalls(result.recalls))
            if not args.no_write:
                # As the adapters: a question written word for word (until 2026-12-06) outranked the answer's note.
                turns = last_exchange(history, result.text, ("user", "assistant"), questions=args.write_questions)
                kept = next((text for role, text in turns if role == "user"), "")
                if kept != line.strip():  # said, so that a statement taken for a question is not lost unseen
                    print(f"(remembered of your line: {kept!r}; --write-questions keeps questions)", file=sys.stderr)
                try:
                    write_turns(store, args.user, turns, session_id=args.session)
                except TurnsRefused as error:  # the others are written; the chat goes on
                    print(f"recall: {error}", file=sys.stderr)
            history.append({"role": "assistant", "content": result.text})
    return 0


def _remember(args: argparse.Namespace) -> int:
    with _open_store(args) as store:
        ids = store.writer.add_turn(args.user, args.role, args.text, session_id=args.session)
    print(f"remembered {len(ids)} memor{'y' if len(ids) == 1 else 'ies'} for {args.user!r}: {', '.join(ids)}")
    return 0


def _ingest(args: argparse.Namespace) -> int:
    with _open_store(args) as store:
        report = store.writer.ingest(args.file, user_id=args.user)
    print(report)
    return 0


def _forget(args: argparse.Namespace) -> int:
    with _open_store(args) as store:
        count = store.for_user(args.user).forget()
    print(f"forgot {count} memories of {args.user!r}")
    return 0


def _one_line(text: str, width: int = 100) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _list(args: argparse.Namespace) -> int:
    import json

    with _open_store(args) as store:
        where = {"session_id": args.session} if args.session is not None else None
        records = store.for_user(args.user).list(where=where, limit=args.limit)
    for record in records:
        if args.json:
            print(json.dumps({"id": record.id, "timestamp": record.timestamp, "role": record.role,
                              "session_id": record.session_id, "text": record.text, "key": record.key,
                              "metadata": record.metadata}, ensure_ascii=False))  # fmt: skip
        else:
            print(f"{record.id}  {record.timestamp}  {record.role:<9}  {record.session_id}  {_one_line(record.text)}")
    if not args.json:
        print(f"{len(records)} memor{'y' if len(records) == 1 else 'ies'} of {args.user!r}", file=sys.stderr)
    return 0


def _search(args: argparse.Namespace) -> int:
    with _open_store(args) as store:
        found = store.for_user(args.user).search(args.query, k=args.k)
    for candidate in found:
        print(f"{candidate.score:.3f}  {candidate.id}  {_one_line(candidate.text)}")
    if not found:
        print(f"no memories of {args.user!r} found", file=sys.stderr)
    return 0


def _delete(args: argparse.Namespace) -> int:
    with _open_store(args) as store:
        count = store.for_user(args.user).delete(args.ids)
    print(f"deleted {count} of {len(set(args.ids))} memories of {args.user!r}")
    return 0 if count == len(set(args.ids)) else 1


def _export(args: argparse.Namespace) -> int:
    with _open_store(args) as store:
        memory = store.for_user(args.user)
        count = memory.export_jsonl(args.out if args.out else sys.stdout)
    print(f"exported {count} memories of {args.user!r}" + (f" to {args.out}" if args.out else ""), file=sys.stderr)
    return 0


def _import(args: argparse.Namespace) -> int:
    with _open_store(args) as store:
        report = store.import_memories(args.file, progress=True)
    print(report)
    return 0


def _doctor(args: argparse.Namespace) -> int:
    from recall_core.memory import doctor, repair

    with _open_store(args) as store:
        report = doctor(store, probe=not args.no_probe)
        print(report.summary())
        if args.repair and not report.ok and report.journal_damaged is None:  # the summary says what to do first
            print(repair(store, report, prune_extra=args.prune_extra, progress=True))
            report = doctor(store)
            print(report.summary())
    return 0 if report.ok else 1


def _rebuild(args: argparse.Namespace) -> int:
    from recall_core.memory import rebuild_index

    with _open_store(args) as store:
        print(f"encoder: {store.encoder.name}")  # the one given, else the one the journal records (or why not)
        report = rebuild_index(store, reencode=args.reencode, fresh=args.fresh, progress=True)
        print(report)
    return 1 if report.failed else 0


def _fetch_models(args: argparse.Namespace) -> int:
    from recall_core.memory import default_encoder
    from recall_core.models.loading import default_model_dir, tuned_model_dir

    print(f"language model: {default_model_dir()}")
    print(f"recall-tuned: {tuned_model_dir() or 'no adapter ships with this install'}")  # merged once, here
    encoder = default_encoder()
    print(f"sentence encoder: {encoder.name} ({encoder.dimension} dimensions)")
    return 0


def _demo(args: argparse.Namespace) -> int:
    import tempfile

    if args.memory is not None:
        return _demo_in(args, args.memory)
    # ignore_cleanup_errors: a file the index still holds open must not turn a finished demo into an error
    with tempfile.TemporaryDirectory(prefix="recall-demo-", ignore_cleanup_errors=True) as folder:
        return _demo_in(args, Path(folder))


def _demo_in(args: argparse.Namespace, folder: Path) -> int:
    from recall_core.memory import MemoryStore

    # The first session happened a week ago, as it would for a chatbot's returning user: each
    # note carries its day, and a note dated today would read as the answer to "When ...?".
    last_week = (datetime.now(timezone.utc) - timedelta(days=7)).replace(microsecond=0).isoformat()
    print(f"== Session 1, a week ago: {DEMO_USER} talks; every turn goes into the memory at {folder}")
    with MemoryStore.local(folder) as store:
        store.writer.add_turns(
            [{"user_id": DEMO_USER, "role": role, "content": text, "session_id": "s1", "turn_index": i,
              "timestamp": last_week}
             for i, (role, text) in enumerate(DEMO_CONVERSATION)]
        )
        for role, text in DEMO_CONVERSATION:
            print(f"  {role:>9}: {text}")
    how = "without recall (--no-memory)" if args.no_memory else "through recall"
    print(f"\n== Session 2: a fresh process state, the store reopened from disk; questions answered {how}")
    with MemoryStore.local(folder) as store:
        # --no-memory as in `recall ask`: until 2026-12-06 the demo recalled with it all the same
        gen = _generator(args, None if args.no_memory else store.for_user(DEMO_USER))
        for question in DEMO_QUESTIONS:
            result = gen.generate([{"role": "user", "content": question}])
            print(f"\n{DEMO_USER}> {question}\nbot> {result.text}")
            print(format_recalls(result.recalls))
            print(f"  usage: {result.usage.prompt_tokens} prompt + {result.usage.injected_tokens} injected "
                  f"+ {result.usage.generated_tokens} generated tokens")
        if args.no_memory:  # no memory to keep from bob
            return 0
        print(f"\n== {DEMO_OTHER_USER} asks the same first question: {DEMO_USER}'s memories are not reachable")
        other = gen.generate([{"role": "user", "content": DEMO_QUESTIONS[0]}], memory=store.for_user(DEMO_OTHER_USER))
        print(f"{DEMO_OTHER_USER}> {DEMO_QUESTIONS[0]}\nbot> {other.text}")
        print(format_recalls(other.recalls))
    return 0


def _train_head(args: argparse.Namespace) -> int:
    from recall_core.memory.encoders import load_encoder
    from recall_core.models.loading import load_model
    from recall_core.models.query_head import model_folder
    from recall_core.training.head import train_query_head
    from recall_core.training.head_texts import head_texts

    if not args.out and args.model is not None and model_folder(args.model) is None:
        raise ValueError(f"--out is needed: {args.model!r} is not a local folder to save the head beside")
    adapter = _head_adapter(Path(args.out).expanduser()) if args.out else None
    model, tokenizer = load_model(args.model, device=args.device, tuned=adapter is None, adapter=adapter)
    out = Path(args.out).expanduser() if args.out else model_folder(args.model, model)
    on = args.model or ("the default model" if adapter else "the shipped recall-tuned default")
    print(f"training the head on {on}{f' with the adapter in {adapter}' if adapter else ''}", flush=True)
    encoder = load_encoder(args.encoder)
    texts, counts = head_texts(args.seed, vocabulary_n=args.vocabulary_texts)
    print(f"training texts: {len(texts)} ({', '.join(f'{k} {v}' for k, v in counts.items())})", flush=True)
    head = train_query_head(model, tokenizer, encoder, texts, seed=args.seed, progress=True,
                            data={"source": "recall_core.training.head_texts.head_texts", "seed": args.seed,
                                  "vocabulary_n": args.vocabulary_texts, **counts})  # fmt: skip
    head.save(out)
    recipe = head.meta.recipe
    print(f"saved the query head in {out} (layers {head.meta.layers}, loss {recipe['loss_first']} -> {recipe['loss_last']})")
    return 0


def _head_adapter(out: Path) -> Path | None:
    """The recall adapter ``--out`` holds, if any: the head is then trained on the model (``--model``,
    or the plain default) with that adapter merged in, the model that loading the adapter gives.

    Why: a head is bound to the weights it reads (its fingerprint check refuses it for others).
    Until 2026-11-30 a head saved beside a candidate adapter was trained on the shipped tuned model,
    so it came out byte for byte the shipped head, and loading the candidate refused it. The
    default model with an adapter applied has the very weights (and fingerprint) of the merged
    folder ``load_model()`` makes once that adapter ships, so the head fits either way; for the
    shipped folder (``make adapter``) it is the same model as before. ``--model`` with the adapter
    already merged in is refused by the adapter's own fingerprint check: there, leave out ``--out``.
    """
    from recall_core.models.lora import META_FILE, WEIGHTS_FILE

    # either file: a half-written adapter is refused by name when applied, not silently skipped
    return out if (out / META_FILE).is_file() or (out / WEIGHTS_FILE).is_file() else None


def _bench(args: argparse.Namespace) -> int:
    """Run ``python -m benchmarks.NAME`` of a source checkout in a process of its own (its exit code is ours).

    The benchmarks are a package beside the engine, not part of it: the engine never imports them.
    The checkout goes first on the child's ``PYTHONPATH`` instead of becoming its working folder,
    so relative paths in the arguments still start where the caller stands.
    """
    import subprocess

    root = Path(__file__).resolve().parents[1]
    if not (root / "benchmarks" / "__init__.py").is_file():
        raise OSError(f"{root / 'benchmarks'} is not there: `recall bench` runs from a source checkout (the benchmarks/ package)")
    path = os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))
    return subprocess.call([sys.executable, "-m", f"benchmarks.{args.name}", *args.rest], env={**os.environ, "PYTHONPATH": path})


if __name__ == "__main__":
    sys.exit(main())

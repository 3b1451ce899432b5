"""The ``recall`` commands that load a model: ask, chat, demo, fetch-models, train, train-head; and
``bench``, which runs a benchmark of a source checkout."""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from recall_core.cli.memory_commands import _open_store, no_default_store

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


def _generator(args: argparse.Namespace, memory: Any) -> Any:
    from recall_core.config import RecallConfig
    from recall_core.generator import RecallGenerator

    config = RecallConfig(query_mode=args.query_mode, inject_mode=args.inject_mode)
    # An adapter is merged into the plain model (a recall adapter is trained on the release, as `recall
    # train` trains it), never on top of the shipped tuning; --plain is the release itself.
    tuned = not (args.plain or args.adapter)
    gen = RecallGenerator.from_pretrained(args.model, memory=memory, config=config, device=args.device, tuned=tuned,
                                          adapter=args.adapter)  # fmt: skip
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


def _train(args: argparse.Namespace) -> int:
    from recall_core.training.command import run

    return run(args)


def _ask(args: argparse.Namespace) -> int:
    question = [{"role": "user", "content": args.question}]
    fresh = None if args.no_memory else no_default_store(args)
    if fresh is not None:  # a fresh install's first question (a mistyped --store is refused: _open_store)
        print(f"(no memory store at {fresh} yet: answered without memory; `recall remember` makes it)",
              file=sys.stderr)  # fmt: skip
    if args.no_memory or fresh is not None:  # no store opened, none made
        result = _generator(args, None).generate(question)
    else:
        with _open_store(args) as store:
            result = _generator(args, store.for_user(args.user)).generate(question)
    print(result.text)
    print(format_recalls(result.recalls), file=sys.stderr)
    return 0


def _chat(args: argparse.Namespace) -> int:
    from recall_core.remember import last_exchange, write_reported

    with _open_store(args, create=True) as store:
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
                # A failed write (a refused turn, a server down: the turns kept in the journal) is said and the
                # chat goes on (until 2026-12-07 a server down ended it, and the lines typed after it: a reviewer)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    error = write_reported(store, args.user, turns, session_id=args.session).metadata.get("memory_write_error")
                if error is not None:
                    print(f"recall: not remembered: {error}", file=sys.stderr)
            history.append({"role": "assistant", "content": result.text})
    return 0


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
    import torch

    from recall_core.memory.encoders import load_encoder
    from recall_core.models.loading import load_model
    from recall_core.models.query_head import model_folder
    from recall_core.training.head import train_query_head
    from recall_core.training.head_texts import head_texts

    if not args.out and args.model is not None and model_folder(args.model) is None:
        raise ValueError(f"--out is needed: {args.model!r} is not a local folder to save the head beside")
    if args.out and Path(args.out).expanduser().exists() and not Path(args.out).expanduser().is_dir():
        raise ValueError(f"--out {args.out} is a file: give the folder to save the head in")
    adapter = _head_adapter(Path(args.out).expanduser()) if args.out else None
    # the encoder before the model: a bad --encoder was refused after the model's load and every
    # feature (minutes on the real model; a reviewer, 2026-12-07)
    encoder = load_encoder(args.encoder)
    encoder.encode(["a"])
    # training is not decoding: every core, not the one thread load_model gives a small model on CPU
    model, tokenizer = load_model(args.model, device=args.device, tuned=adapter is None, adapter=adapter,
                                  threads=torch.get_num_threads())  # fmt: skip
    out = Path(args.out).expanduser() if args.out else model_folder(args.model, model)
    on = args.model or ("the default model" if adapter else "the shipped recall-tuned default")
    print(f"training the head on {on}{f' with the adapter in {adapter}' if adapter else ''}", flush=True)
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

    root = Path(__file__).resolve().parents[2]
    if not (root / "benchmarks" / "__init__.py").is_file():
        raise OSError(f"{root / 'benchmarks'} is not there: `recall bench` runs from a source checkout (the benchmarks/ package)")
    path = os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))
    return subprocess.call([sys.executable, "-m", f"benchmarks.{args.name}", *args.rest], env={**os.environ, "PYTHONPATH": path})

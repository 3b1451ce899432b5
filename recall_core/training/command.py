"""``recall train``: recall-tune a chat model and save the adapter (the command line's side)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import time
from pathlib import Path
from typing import Any

from recall_core.training.adapter import ALL_LINEAR, DEFAULT_TARGETS
from recall_core.training.examples import CHAT_OPENINGS, Mixture
from recall_core.training.families import FAMILIES

#: The largest ``--examples`` scale: 65,000 examples of generic prompts (the shipped recipe's 0.6 makes
#: 390); past it a typo would build data for days, or fail on memory after hours.
EXAMPLES_SCALE = 100.0


def _finite(text: str) -> float:
    """argparse's ``type`` for a float option: NaN and infinities are refused at once, by name
    (until 2026-12-07 ``--examples inf`` ended in an OverflowError's traceback)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", default=None,
                        help="HF model id or folder of a chat model (default: the embedded SmolLM2-135M-Instruct, untuned)")
    parser.add_argument("--out", default=None,
                        help="adapter folder (default: $RECALL_HOME/adapters/<model name>)")
    parser.add_argument("--device", default=None, help="cpu, cuda... (default: cuda if available)")
    parser.add_argument("--steps", type=int, default=None, help="optimizer steps (default: one pass over the examples)")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--learning-rate", type=_finite, default=1e-3)
    parser.add_argument("--rank", type=int, default=8)
    parser.add_argument("--targets", default=None,
                        help=f"comma-separated names of the linear layers the adapters go on, or {ALL_LINEAR} "
                             f"(default: {','.join(DEFAULT_TARGETS)} where the model has them all, else {ALL_LINEAR})")
    parser.add_argument("--examples", type=_finite, default=1.0,
                        help=f"scale of the number of general examples, in (0, {EXAMPLES_SCALE:g}] (0.01 for a smoke run)")
    parser.add_argument("--repeats", type=int, default=Mixture().repeats, help="examples per memory question")
    parser.add_argument("--fill-share", type=_finite, default=Mixture().fill_share,
                        help="of the questions whose search missed the answer, the share shown the note that names it "
                             "(the rest learn \"I don't know.\")")
    parser.add_argument("--unknown-share", type=_finite, default=Mixture().unknown_share,
                        help="of the memory examples whose reply is \"I don't know.\", the share kept")
    parser.add_argument("--passing-share", type=_finite, default=Mixture().passing_share,
                        help="of the memory examples whose notes hold the answer, the share whose answering note is "
                             "buried among small talk the same user said (a fact said in passing)")
    parser.add_argument("--empty-share", type=_finite, default=Mixture().empty_share,
                        help="of the memory examples, the share asked with no notes at all (a new user: \"I don't know.\")")
    parser.add_argument("--oldest-share", type=_finite, default=Mixture().oldest_share,
                        help="of the memory examples with dated notes, the share whose notes are oldest first (the "
                             "block's header says so), so that the date, not the note's place, says which is newest")
    parser.add_argument("--format-share", type=_finite, default=Mixture().format_share,
                        help="of the memory examples, the share whose question asks for an answer format (labelled "
                             "options to pick from, or the bare answer) and whose reply keeps it")
    parser.add_argument("--reply-share", type=_finite, default=Mixture().reply_share,
                        help="of the memory examples, the share whose notes carry a chat assistant's long replies "
                             "(the base model's own, to generic prompts) around the user's words")
    parser.add_argument("--company-share", type=_finite, default=Mixture().company_share,
                        help="of the memory examples whose notes hold the answer, the share whose answering line is "
                             "said together with the user's other statements of fact (values not asked for)")
    parser.add_argument("--near-miss-share", type=_finite, default=Mixture().near_miss_share,
                        help="of the memory examples whose notes hold the answer, the share that also gets an "
                             "example with the notes naming the answer taken out, answered \"I don't know.\"")
    parser.add_argument("--neighbour-share", type=_finite, default=Mixture().neighbour_share,
                        help="of the memory examples whose notes hold the answer, the share whose answering note is "
                             "shown among one to five of the same user's near misses (the search's deeper candidates)")
    parser.add_argument("--statements", type=int, default=Mixture().statements,
                        help="examples of a user telling the assistant about themselves, answered as the base model "
                             "answers (an acknowledgement, not a recall)")
    parser.add_argument("--chat", type=int, default=Mixture().chat,
                        help="examples of a user's own messages from the training families' conversations (one to "
                             "three turns said together), answered as the base model answers them")
    parser.add_argument("--chat-openings", choices=CHAT_OPENINGS, default=Mixture().chat_openings,
                        help="which base replies to --chat messages are learned: any, or only those that do not open "
                             "with the abstention's first token (\"I\")")
    parser.add_argument("--users", type=int, default=8, help="users of each family (training seeds only)")
    parser.add_argument("--families", default=None,
                        help="comma-separated families to train on (default: all; not with --examples-file, whose "
                             "examples come from the families it records: leave some out there with --exclude)")
    parser.add_argument("--exclude", default="", help="comma-separated families to leave out (held out)")
    parser.add_argument("--encoder", default=None, help="encoder of the store the notes are searched in (default: MiniLM)")
    parser.add_argument("--save-examples", default=None, metavar="FILE",
                        help="build the examples, write them to FILE (.jsonl.gz) and stop (to train elsewhere)")
    parser.add_argument("--examples-file", default=None, metavar="FILE",
                        help="train on examples written by --save-examples (those of --exclude left out)")
    parser.add_argument("--agreement-prompts", type=int, default=64, help="held-out generic prompts compared with the base")
    parser.add_argument("--seed", type=int, default=0,
                        help="seeds the data, the order and the adapter (0 <= seed < 20260124: never the evaluation's)")
    parser.add_argument("--no-progress", action="store_true")


def _names(text: str) -> tuple[str, ...]:
    return tuple(n.strip() for n in text.split(",") if n.strip())


def _check_default_out(out: Path, model: Any) -> None:
    """The default folder (``adapters/NAME``) is named by the model's folder name alone: refuse to
    replace an adapter there that was trained for other weights (two models in folders of one name,
    ``runA/final`` and ``runB/final``, replaced each other's adapter until 2026-12-07, a reviewer found)."""
    from recall_core.models.lora import META_FILE, fingerprint_matches, json_object

    if not (out / META_FILE).is_file():
        return
    try:
        recorded = json_object(out / META_FILE).get("base_fingerprint")
    except ValueError:
        recorded = None  # a damaged adapter is not kept by refusing
    if recorded is not None and not fingerprint_matches(recorded, model):
        raise ValueError(f"the default --out {out} holds an adapter trained for another base model (one in a folder of "
                         "the same name): give --out a folder of its own, or remove that adapter first")  # fmt: skip


def _recipe(args: argparse.Namespace) -> tuple[Any, Any]:
    """The command line's ``Mixture`` and ``TrainConfig`` (each checks its fields)."""
    from recall_core.training.lora import TrainConfig

    base = Mixture()
    mixture = Mixture(repeats=args.repeats, auto_share=base.auto_share, mid_share=base.mid_share,
                      general=max(1, round(base.general * args.examples)),
                      auto_general=max(1, round(base.auto_general * args.examples)),
                      fill_share=args.fill_share, unknown_share=args.unknown_share,
                      passing_share=args.passing_share, empty_share=args.empty_share,
                      oldest_share=args.oldest_share, format_share=args.format_share, reply_share=args.reply_share,
                      company_share=args.company_share, near_miss_share=args.near_miss_share,
                      neighbour_share=args.neighbour_share,
                      statements=args.statements, chat=args.chat, chat_openings=args.chat_openings)  # fmt: skip
    targets = _names(args.targets) if args.targets is not None else DEFAULT_TARGETS
    config = TrainConfig(steps=args.steps, batch_size=args.batch_size, learning_rate=args.learning_rate,
                         rank=args.rank, alpha=2 * args.rank, mixture=mixture, users=args.users,
                         families=_names(args.families) if args.families is not None else tuple(FAMILIES),
                         exclude=_names(args.exclude), encoder=args.encoder, targets=targets,
                         agreement_prompts=args.agreement_prompts, seed=args.seed)  # fmt: skip
    return mixture, config


#: The options that make the examples (refused with ``--examples-file``, whose examples are made).
DATA_OPTIONS = ("examples", "repeats", "fill_share", "unknown_share", "passing_share", "empty_share", "oldest_share",
                "format_share", "reply_share", "company_share", "near_miss_share", "neighbour_share", "statements",
                "chat", "chat_openings", "users", "encoder")  # fmt: skip


def _defaults() -> dict[str, Any]:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return vars(parser.parse_args([]))


def _data(config: Any) -> dict[str, Any]:
    """What made a run's examples, for an examples file's header."""
    return {"mixture": dataclasses.asdict(config.mixture), "users": config.users, "encoder": config.encoder,
            "seed": config.seed}  # fmt: skip


def _from_data(data: dict[str, Any]) -> dict[str, Any]:
    """The ``TrainConfig`` fields an examples file's header records (none for a file written before 2026-12-07)."""
    if not data:
        return {}
    return {"mixture": Mixture(**data["mixture"]), "users": data["users"], "encoder": data["encoder"],
            "data_seed": data["seed"]}  # fmt: skip


def run(args: argparse.Namespace) -> int:
    """Run ``recall train``. The options and the outputs (``--out``, ``--save-examples``) are checked
    before the model is loaded; what needs the model (the targets, an examples file's token ids)
    right after it, before any data is built."""
    import torch

    from recall_core.models.loading import load_model, models_dir_name
    from recall_core.paths import check_writable_file, recall_home
    from recall_core.training.adapter import check_out
    from recall_core.training.example_files import check_examples, file_families, read_examples
    from recall_core.training.lora import build_examples, save_examples, train_recall

    if not 0 < args.examples <= EXAMPLES_SCALE:
        raise ValueError(f"--examples must be in (0, {EXAMPLES_SCALE:g}], got {args.examples}")
    try:
        mixture, config = _recipe(args)
    except ValueError as error:  # named as the option is typed ("batch_size must be..." until 2026-12-07, a reviewer)
        message = str(error).removeprefix("mixture ")  # (a Mixture's field: "mixture fill_share must be..." until then)
        name = message.split(" ", 1)[0]
        raise ValueError(f"--{name.replace('_', '-')}{message[len(name):]}" if name in vars(args) else str(error)) from None
    if args.save_examples:
        check_writable_file(args.save_examples, "--save-examples")
        model, tokenizer = load_model(args.model, device=args.device, tuned=False, threads=torch.get_num_threads())
        examples = build_examples(model, tokenizer, config, progress=not args.no_progress)
        save_examples(args.save_examples, examples, tokenizer, families=config.trained_families, data=_data(config))
        counts: dict[str, int] = {}
        for e in examples:
            key = f"{e.meta.get('family')}/{e.kind}"
            counts[key] = counts.get(key, 0) + 1
        print(json.dumps({"examples": str(args.save_examples), "count": len(examples), "counts": counts}, indent=1))
        return 0
    name = models_dir_name(args.model)
    out = Path(args.out).expanduser() if args.out else recall_home() / "adapters" / name
    check_out(out, name="--out", model_folder=args.model)
    header, examples = None, None
    if args.examples_file:
        if args.families is not None:
            raise ValueError("--families cannot be used with --examples-file: its examples come from the families "
                             "the file records; leave some out with --exclude")  # fmt: skip
        defaults = _defaults()
        given = [f"--{k.replace('_', '-')}" for k in DATA_OPTIONS if getattr(args, k) != defaults[k]]
        if given:  # (accepted and ignored until 2026-12-07, while the recipe recorded them: a reviewer)
            raise ValueError(f"{', '.join(given)} cannot be used with --examples-file: they make the data, and its "
                             "examples were made already (give them to --save-examples)")  # fmt: skip
        header, examples = read_examples(args.examples_file)
        held = file_families(header, examples)
        if not held:
            raise ValueError(f"--examples-file {args.examples_file} holds no example of a conversation family")
        # the recipe records the file's true families, and what made its data where the file says
        data = (header or {}).get("data") or {}
        config = dataclasses.replace(config, families=held, **_from_data(data))
    model, tokenizer = load_model(args.model, device=args.device, tuned=False, threads=torch.get_num_threads())
    if not args.out:
        _check_default_out(out, model)
    if examples is not None:
        check_examples(args.examples_file, header, examples, tokenizer)
    started = time.perf_counter()
    result = train_recall(model, tokenizer, out, config, base_model=name, progress=not args.no_progress,
                          examples=examples)  # fmt: skip
    summary: dict[str, Any] = {
        "adapter": str(result.adapter), "wall_seconds": round(time.perf_counter() - started, 1),
        "counts": result.counts, "final_loss": round(sum(result.losses[-20:]) / max(1, len(result.losses[-20:])), 4),
        "checks": result.checks,
    }  # fmt: skip
    print(json.dumps(summary, indent=1))
    return 0

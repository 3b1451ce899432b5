"""Held-out conversation families: recall against the RAG recipe on conversations it was never tuned on.

The conversation families (:mod:`recall_core.training.families`) are independent generators:
facts said in passing in long turns, many people around the user, facts that change, dates,
paraphrased questions, facts given as short answers, and the original templated one. Beside
them, ``handwritten``, ``handwritten-changes``, ``handwritten-updates``,
``handwritten-revisions``, ``handwritten-errands``, ``handwritten-routines``, ``handwritten-plans`` and
``handwritten-household`` (:mod:`benchmarks.handwritten`): users'
conversations written by hand, not from templates, by writers who saw none of the rest; no
training sees them. Each is generated here with the evaluation seed, and every question is
asked in a fresh session with the call perturbed the way users' calls differ:

* the caller's own system message: one of :data:`EVAL_SYSTEM_PROMPTS` (none included), written
  apart from the ones training sees (but for "You are a helpful assistant.", in both); ``--system-messages other-kinds`` asks under
  :data:`OTHER_KINDS` instead (a question-answering task, an agent, a support desk, a voice
  assistant's rules: kinds of message neither training nor the first set has);
* zero to two earlier exchanges of small talk in the current session before the question.

Methods, all with the same encoder (all-MiniLM-L6-v2) and greedy decoding:

* ``recall``: the engine with its defaults over a ``MemoryStore`` (the recall-tuned default model);
* ``recall-untuned``: the same on the plain model;
* ``recall-lofo``: the same with, for each family, the adapter trained without that family
  (``--adapters DIR``: ``DIR/<family>/``); this is the held-out figure of the tuning;
* ``recall:NAME``: ``--variant "NAME:field=value,..."`` (RecallConfig fields, the store's
  ``unit``/``retrieval``/``roles``, the writer's ``chunk_tokens``), on the tuned model
  (``model=plain`` in the variant: the plain one; ``adapter=FOLDER``: the plain one with that adapter);
* ``langchain``: the LangChain recipe on the plain model (``ChatHuggingFace`` + a
  ``langchain-chroma`` retriever over the exchanges, k=4, the notes in the system message after
  the caller's own);
* ``llamaindex``: LlamaIndex's recipe on the plain model (``HuggingFaceLLM`` + ``Memory`` with a
  ``VectorMemoryBlock`` over Chroma, top 4; the earlier exchanges and the question put in a fresh
  ``Memory``, whose ``get()`` opens with a system message of what its block retrieved; the caller's
  system message before it, as LlamaIndex's agents put theirs); added 2026-12-05;
* ``langchain-tuned``, ``llamaindex-tuned``: the same recipes on recall's tuned weights (the
  shipped adapter merged into the plain model, as ``recall`` loads it, read by transformers like
  any checkpoint): how much of recall's lead is the tuning rather than the engine; added 2026-12-07;
* ``none``: no memory.

Scores per family and method: facts answered (memory questions), "I don't know." to questions
whose answer was never said, stale answers, "I don't know." although a note held the answer,
a note holding the answer at all (retrieval), recall fired (for ``recall_policy="model"``),
processed tokens and time to first token. ``--general N`` also asks N held-out generic
prompts under the same system messages and counts the recalls that fired on them.
``--retrieval-only`` answers nothing: it counts, for recall's defaults and each variant, the
questions whose notes (chosen as the loop chooses them) hold the answer, and the same for the
LangChain recipe's four documents. Settings are chosen this way on a training seed
(``--seed 1000``), never on the evaluation seed.

Usage:
    python -m benchmarks.heldout                                    # every family: recall, recall-untuned, langchain
    python -m benchmarks.heldout --families passing,people --users 2 --methods recall,langchain
    python -m benchmarks.heldout --methods recall-lofo --adapters benchmarks/out/lofo
    python -m benchmarks.heldout --variant "model:recall_policy=model" --general 64
    python -m benchmarks.heldout --system-messages other-kinds --methods recall,langchain   # other callers
    python -m benchmarks.heldout --families dates --users 6 --from-user 2 --methods recall   # users 2-5 only
    python -m benchmarks.heldout --retrieval-only --variant "user:roles=('user',)" --seed 1000   # notes only
    python -m benchmarks.heldout --families mine.json --users 100 --methods recall,langchain   # your own conversations
Writes benchmarks/out/heldout/heldout.json, .md and .png, and replies.md (every question with each method's reply).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from benchmarks import handwritten  # noqa: E402
from benchmarks.common.args import OUT as OUT_ROOT  # noqa: E402
from benchmarks.common.args import parse_variant  # noqa: E402
from benchmarks.common.plotting import grouped_bars, pyplot, save  # noqa: E402
from benchmarks.common.progress import progress  # noqa: E402
from benchmarks.common.results import machine, write_results  # noqa: E402
from benchmarks.heldout_memory import (  # noqa: E402
    STORE_OPTIONS,
    WRITER_OPTIONS,
    notes_markdown,
    retrieval_only,
)
from benchmarks.heldout_methods import (  # noqa: E402 - the studies import them from here too
    Call,
    LangChainRecipe,
    LlamaIndexRecipe,
    Method,
    NoMemory,
    PerFamilyRecall,
    RecallMethod,
    Reply,
)
from recall_core.training.families import FAMILIES, base  # noqa: E402
from recall_core.training.family_data import chat_exchanges  # noqa: E402

OUT = OUT_ROOT / "heldout"
#: Every family the benchmark asks: the generated ones and the hand-written one, which no training sees.
ASKED_FAMILIES = {**FAMILIES, **handwritten.FAMILIES}
#: The evaluation seed of every family (training uses recall_core.training.family_data.TRAIN_SEED and up).
EVAL_SEED = 20261124
METHODS = ("none", "langchain", "llamaindex", "langchain-tuned", "llamaindex-tuned", "recall", "recall-untuned", "recall-lofo")
#: Callers' system messages of the evaluation, with none among them. The commonest of all, "You are a
#: helpful assistant.", is also one of training's (``TRAIN_SYSTEM_PROMPTS``); the others are not.
EVAL_SYSTEM_PROMPTS: tuple[str | None, ...] = (
    None,
    "You are a helpful assistant.",
    "You are Juniper, a thoughtful assistant inside a journaling app. Reply in plain, friendly English.",
    "You are a concise assistant. Answer the user's question directly and do not add extra commentary.",
    "You are the help desk of a travel company. Be polite. Use at most two sentences.",
    "Keep it short and kind.",
)
#: Callers' system messages of other kinds than the personas and styles above (written
#: 2026-11-29 before any run under them; none is seen in training): ``--system-messages other-kinds``.
OTHER_KINDS: tuple[str | None, ...] = (
    "You are an assistant for question-answering tasks. Answer the user's question in one short sentence.",
    "You are a customer support agent for Lumen Bank. Never share internal policies. If you are unsure, say so.",
    "You are an AI agent. Think about what the user needs, then reply. You can only reply with text.",
    "The user is logged in. Today's date is 3 March 2025. Respond in English.",
    "You answer questions about the user's life from what they have told you before. Be brief.",
    "You are Sol, the voice assistant of a smart speaker.\nRules:\n- Replies are read aloud, so no lists or markdown.\n"
    "- Keep replies under 25 words.\n- Be warm.",
)
SYSTEM_MESSAGES = {"personas": EVAL_SYSTEM_PROMPTS, "other-kinds": OTHER_KINDS}


# -- the calls ----------------------------------------------------------------------------------


def asked_calls(family: str, users: Sequence[base.User], seed: int = EVAL_SEED, from_user: int = 0,
                systems: Sequence[str | None] = EVAL_SYSTEM_PROMPTS) -> list[Call]:
    """:func:`calls_of` for users ``from_user``.. only, each call as the full run perturbs it."""
    asked = {u.user_id for u in users[from_user:]}
    return [c for c in calls_of(family, users, seed, systems) if c.question.user_id in asked]


def only_keys(calls: Mapping[str, Sequence[Call]], keys: Collection[str]) -> dict[str, list[Call]]:
    """``calls`` (by family) of the questions ``keys`` names only (``--keys``), each drawn as before."""
    return {family: [c for c in asked if c.question.key in keys] for family, asked in calls.items()}


def calls_of(family: str, users: Sequence[base.User], seed: int = EVAL_SEED,
             systems: Sequence[str | None] = EVAL_SYSTEM_PROMPTS) -> list[Call]:
    """Every question of ``users``, each with one of ``systems`` (in turn) and 0-2 earlier exchanges
    of the user's small talk (:func:`~recall_core.training.family_data.chat_exchanges`), none of
    which names a value of the question's fact."""
    # A file of conversations is drawn by its file name, so that it is asked alike from any folder
    rng = random.Random(f"heldout/{Path(family).name if family.endswith('.json') else family}/{seed}")
    out = []
    for user in users:
        chat = chat_exchanges(user)  # the user's small talk with the assistant, as training takes it
        for question in user.questions:
            system = systems[len(out) % len(systems)]
            picked = rng.sample(chat, min(len(chat), rng.choice((0, 0, 1, 2))))
            # small talk whose reply names a value of this fact would answer it from the prompt, not
            # the memory: left out after the draw, so that every other call is drawn as before
            picked = [(u, a) for u, a in picked if not base.names_any(f"{u}\n{a}", (*question.answers, *question.stale))]
            earlier = tuple(m for u, a in picked for m in ({"role": "user", "content": u}, {"role": "assistant", "content": a}))
            out.append(Call(family, question, system, earlier))
    return out


# -- scoring ------------------------------------------------------------------------------------


def score_reply(call: Call, reply: Reply) -> dict[str, Any]:
    """The reply's scores (:func:`recall_core.training.families.base.score`) and what its notes held."""
    question = call.question
    scores = base.score(question, reply.text)
    held = question.kind == "memory" and base.names_any(reply.notes, question.answers)
    return {
        "family": call.family, "key": question.key, "kind": question.kind, "question": question.text,
        "system": call.system, "earlier": len(call.earlier) // 2, "answers": list(question.answers),
        "reply": reply.text, **scores, "notes_hold_answer": held,
        "unknown_with_answer": bool(held and scores["abstained"]),
        "fired": reply.fired, "processed_tokens": reply.processed_tokens, "ttft_s": reply.ttft_s,
        "total_s": reply.total_s, "notes": reply.notes, **reply.extra,
    }  # fmt: skip


def summarize(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Counts of one method on one family (or on all): see the module docstring."""
    memory = [r for r in rows if r["kind"] == "memory"]
    never = [r for r in rows if r["kind"] == "unanswerable"]
    stale_asked = [r for r in memory if r.get("stale_possible")]
    fired = [r["fired"] for r in memory if r["fired"] is not None]
    ttfts = sorted(r["ttft_s"] for r in rows if r["ttft_s"] is not None)
    return {
        "questions": len(rows), "memory_questions": len(memory), "answered": sum(r["correct"] for r in memory),
        "unanswerable": len(never), "abstained_unanswerable": sum(r["correct"] for r in never),
        "stale": sum(r["stale"] for r in memory), "stale_possible": len(stale_asked),
        # The changed facts answered with the current value: a method that answers few of them
        # gives few stale answers too, so the stale count is read beside this one.
        "current_of_changed": sum(r["correct"] for r in stale_asked),
        "notes_hold_answer": sum(r["notes_hold_answer"] for r in memory),
        "unknown_with_answer": sum(r["unknown_with_answer"] for r in rows),
        "fired_on_memory": sum(fired) if fired else None,
        "processed_tokens": sum(r["processed_tokens"] for r in rows) / max(1, len(rows)),
        "ttft_s_p50": ttfts[len(ttfts) // 2] if ttfts else None,
    }  # fmt: skip


def general_calls(n: int, user_id: str, systems: Sequence[str | None] = EVAL_SYSTEM_PROMPTS) -> list[Call]:
    """Held-out generic prompts (never trained on), asked by ``user_id`` (a user with memories),
    under ``systems`` in turn."""
    from recall_core.training.prompts import general_prompts

    return [
        Call("general", base.Question(key=f"general#{i}", user_id=user_id, fact="general", text=prompt,
                                      kind="unanswerable"), systems[i % len(systems)])
        for i, prompt in enumerate(general_prompts("heldout", n=n, seed=0))
    ]  # fmt: skip


# -- running ------------------------------------------------------------------------------------


def markdown(result: Mapping[str, Any]) -> str:
    families = result["families"]
    lines = ["| method | " + " | ".join(families) + " | all | unknown w/ answer | stale (current) | fired |",
             "| --- | " + " | ".join("---" for _ in families) + " | --- | --- | --- | --- |"]
    for name, per in result["summary"].items():
        cells = [f"{per[f]['answered']}/{per[f]['memory_questions']} · {per[f]['abstained_unanswerable']}/{per[f]['unanswerable']}"
                 for f in families]  # fmt: skip
        a = per["all"]
        fired = "" if a["fired_on_memory"] is None else f"{a['fired_on_memory']}/{a['memory_questions']}"
        lines.append(f"| {name} | " + " | ".join(cells) + f" | **{a['answered']}/{a['memory_questions']}** · "
                     f"{a['abstained_unanswerable']}/{a['unanswerable']} | {a['unknown_with_answer']} | "
                     f"{a['stale']}/{a['stale_possible']} ({a.get('current_of_changed', '-')}) | {fired} |")  # fmt: skip
    lines.append("")
    lines.append("Cells: facts answered / memory questions · \"don't know\" / questions never answered in the conversation. "
                 "Stale: an earlier value of a changed fact / changed facts asked (the current value given).")
    for name, general in result.get("general", {}).items():
        lines.append(f"General prompts, {name}: recall fired on {general['fired']} of {general['prompts']}.")
    return "\n".join(lines) + "\n"


def replies_markdown(result: Mapping[str, Any]) -> str:
    """Each question with every method's reply side by side (``replies.md``): what a person reads to see
    where one method beats another on their own conversations. A reply is marked right (✓), stale
    (an earlier value), "I don't know." although a note held the answer, or wrong (✗)."""
    methods = list(result["summary"])
    by_question: dict[str, dict[str, Any]] = {}
    for row in result["rows"]:
        by_question.setdefault(f"{row['family']}/{row['key']}", {})[row["method"]] = row

    def mark(row: Mapping[str, Any] | None) -> str:
        if row is None:
            return ""
        verdict = "✓" if row["correct"] else "stale" if row["stale"] else "I don't know, with the answer" if (
            row["unknown_with_answer"]) else "✗"  # fmt: skip
        return f"{verdict}: {_cell(row['reply'])}"

    lines = ["| question | answers | " + " | ".join(methods) + " |", "| --- | --- | " + " | ".join("---" for _ in methods) + " |"]
    for rows in by_question.values():
        first = next(iter(rows.values()))
        answers = ", ".join(first["answers"]) if first["kind"] == "memory" else "(never said)"
        lines.append(f"| {_cell(first['question'])} | {_cell(answers)} | " + " | ".join(mark(rows.get(m)) for m in methods) + " |")
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    """``text`` on one line of a Markdown table: no pipe, and no ``<`` a viewer would read as HTML."""
    return " ".join(text.split()).replace("|", "\\|").replace("<", "&lt;")


def plot(result: Mapping[str, Any], path: Path) -> Path:
    plt = pyplot()
    families = result["families"]
    methods = list(result["summary"])
    fig, ax = plt.subplots(figsize=(max(7, 1.3 * len(families) + 2), 4))
    summary = result["summary"]
    grouped_bars(ax, families, {name: [summary[name][f]["answered"] / max(1, summary[name][f]["memory_questions"])
                                       for f in families] for name in methods})  # fmt: skip
    ax.set_ylim(0, 1)
    ax.set_ylabel("facts answered (share of memory questions)")
    ax.legend(fontsize=8)
    ax.set_title(f"Held-out families · seed {result['seed']} · {result['users']} users each", fontsize=10)
    return save(fig, path)


def family(name: str) -> Any:
    """The family ``name`` names: one of :data:`ASKED_FAMILIES`, or a JSON file of conversations in the
    hand-written families' format (:func:`benchmarks.handwritten.from_file`: your own)."""
    return ASKED_FAMILIES[name] if name in ASKED_FAMILIES else handwritten.from_file(name)


def asked_families(names: Sequence[str], seed: int, users: int) -> dict[str, list[base.User]]:
    """The families ``names`` says (:func:`family`), each generated for ``seed`` with ``users`` users.

    Raises ``ValueError`` when two families have a user of the same id (they would share one memory)."""
    families = {f: family(f) for f in names}
    data = {f: families[f].generate(seed, users=users) for f in names}
    for name, asked in families.items():
        if name not in ASKED_FAMILIES and len(asked.raw_users()) > users:
            print(f"{name}: asking {users} of its {len(asked.raw_users())} users (--users)", file=sys.stderr)
    unique_users({name: [user.user_id for user in family_users] for name, family_users in data.items()})
    return data


def unique_users(user_ids: Mapping[str, Iterable[str]]) -> None:
    """Raises ``ValueError`` when two of the families ``user_ids`` lists (name -> its users' ids)
    have a user of the same id: the families asked share one memory store."""
    owner: dict[str, str] = {}
    for name, ids in user_ids.items():
        for user_id in ids:
            if owner.setdefault(user_id, name) != name:
                raise ValueError(f"user_id {user_id!r} is in {owner[user_id]} and in {name}: "
                                 "each user must be unique across the families asked (they share one memory store)")  # fmt: skip


def family_names(text: str) -> list[str]:
    """``--families`` (an argparse type, shared with :mod:`benchmarks.new_user`): comma-separated
    names of :data:`ASKED_FAMILIES` or paths of JSON files of conversations (your own, in the
    hand-written families' format); none, one that is not there, or a file not in that format is
    refused by name."""
    # a file by its normalised path ("./mine.json" and "mine.json" are one family, and pair)
    names = [n if n in ASKED_FAMILIES else os.path.normpath(n) for n in (n.strip() for n in text.split(",")) if n]
    names = list(dict.fromkeys(names))  # a family named twice is asked once
    files: dict[str, list[str]] = {}  # each file's users' ids: told apart now, not after the models load
    for name in names or [""]:
        if name in ASKED_FAMILIES:
            continue
        if not name.endswith(".json"):
            raise argparse.ArgumentTypeError(f"--families must name families of {', '.join(ASKED_FAMILIES)} or JSON "
                                             f"files of conversations, got {text!r}")  # fmt: skip
        try:
            files[name] = [user["user_id"] for user in handwritten.from_file(name).raw_users()]
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None
    try:
        unique_users(files)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return names


def study_parser(doc: str, out: Path, *, families: str | None = None, users: int = 8) -> argparse.ArgumentParser:
    """The options of a study run on the families this benchmark asks (:mod:`benchmarks.supersede_rules`,
    :mod:`benchmarks.rerank`, :mod:`benchmarks.abstention`, :mod:`benchmarks.note_perturbations`):
    ``--families`` (required where ``families`` is ``None``), ``--users``, ``--seed``, ``--out``
    (default ``out``), ``--no-progress``; ``doc``'s first line describes it."""
    p = argparse.ArgumentParser(description=doc.split("\n")[0])
    p.add_argument("--families", type=family_names, required=families is None, default=families,
                   help="comma-separated, from the held-out benchmark's families (generated and hand-written)")
    p.add_argument("--users", type=int, default=users)
    p.add_argument("--seed", type=int, default=EVAL_SEED)
    p.add_argument("--out", type=Path, default=out)
    p.add_argument("--no-progress", action="store_true")
    return p


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--families", type=family_names, default=",".join(ASKED_FAMILIES),
                   help=f"comma-separated, from {', '.join(ASKED_FAMILIES)}, or JSON files of your own conversations "
                        "(benchmarks/handwritten/format.py)")
    p.add_argument("--users", type=int, default=5, help="users per family (20 questions each)")
    p.add_argument("--seed", type=int, default=EVAL_SEED)
    p.add_argument("--methods", default="recall,recall-untuned,langchain", help=f"comma-separated, from {', '.join(METHODS)}")
    p.add_argument("--variant", action="append", default=[], help='"NAME:field=value,..." (repeatable); model=plain for the plain model')
    p.add_argument("--adapters", type=Path, default=None, help="recall-lofo: a folder with one adapter per held-out family")
    p.add_argument("--general", type=int, default=0, help="also ask N held-out generic prompts (recall methods)")
    p.add_argument("--limit", type=int, default=None, help="at most N questions per family")
    p.add_argument("--from-user", type=int, default=0,
                   help="ask only the questions of users K.. of each family (the memory still holds every "
                        "user's turns, and each call is perturbed as in the full run): e.g. users never looked at")
    p.add_argument("--keys", type=lambda t: [k.strip() for k in t.split(",") if k.strip()], default=None,
                   help="ask only these questions (comma-separated keys, as replies.md names them), each as "
                        "the full run asks it: the memory still holds every user's turns")
    p.add_argument("--system-messages", choices=tuple(SYSTEM_MESSAGES), default="personas",
                   help="the callers' system messages: personas and styles (the default) or other kinds")
    p.add_argument("--retrieval-only", action="store_true", help="count the notes that hold the answer; no answers")
    p.add_argument("--server", action="store_true",
                   help="--retrieval-only: the memory on a `chroma run` server (started and stopped here), not embedded")
    p.add_argument("--max-new-tokens", type=int, default=48)
    p.add_argument("--out", type=Path, default=OUT)
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)
    if not 0 <= args.from_user < args.users:
        p.error(f"--from-user must be in [0, {args.users}) (--users is {args.users}), got {args.from_user}")
    if args.server and not args.retrieval_only:
        p.error("--server applies to --retrieval-only (the answers run's memory is embedded)")
    if args.keys is not None and args.retrieval_only:
        p.error("--keys applies to an answers run, not to --retrieval-only (which counts every question's notes)")
    if args.keys is not None:  # the questions the run would ask, chosen as run() chooses them
        asked = {c.question.key for f, users in asked_families(args.families, args.seed, args.users).items()
                 for c in asked_calls(f, users, args.seed, args.from_user)[: args.limit]}  # fmt: skip
        unknown = sorted(set(args.keys) - asked)
        if unknown or not args.keys:
            p.error(f"--keys must name questions asked (as replies.md names them), got {', '.join(unknown) or 'none'}")
    return args


def build_methods(args: argparse.Namespace, encoder: Any, encoder_path: str) -> list[Method]:
    from recall_core import RecallConfig, RecallGenerator

    cache: dict[str, Any] = {}

    def engine(kind: str, adapter: Path | None = None) -> Any:
        key = f"{kind}:{adapter}"
        if key not in cache:
            if adapter is not None:
                cache[key] = RecallGenerator.from_pretrained(device="cpu", tuned=False, adapter=str(adapter))
            else:
                cache[key] = RecallGenerator.from_pretrained(device="cpu", tuned=kind == "tuned")
        return cache[key]

    names = [m.strip() for m in args.methods.split(",") if m.strip()]
    unknown = sorted(set(names) - set(METHODS))
    if unknown:
        raise SystemExit(f"unknown method(s) {unknown}; choose from {', '.join(METHODS)}")
    methods: list[Method] = []
    for name in names:
        if name == "none":
            methods.append(NoMemory(engine("plain"), args.max_new_tokens))
        elif name == "recall":
            methods.append(RecallMethod(name, engine("tuned"), args.max_new_tokens, encoder))
        elif name == "recall-untuned":
            methods.append(RecallMethod(name, engine("plain"), args.max_new_tokens, encoder))
        elif name == "recall-lofo":
            if args.adapters is None:
                raise SystemExit("recall-lofo needs --adapters DIR (one adapter folder per family)")
            families = args.families
            missing = [f for f in families if not (args.adapters / f).is_dir()]
            if missing:
                raise SystemExit(f"--adapters {args.adapters} has no adapter for {missing}")
            methods.append(PerFamilyRecall(name, {f: engine("lofo", args.adapters / f) for f in families},
                                           args.max_new_tokens, encoder))  # fmt: skip
        elif name in ("langchain", "llamaindex", "langchain-tuned", "llamaindex-tuned"):
            methods.append(peer_recipe(name, encoder_path, args.max_new_tokens))
    for text in args.variant:
        name, changes = parse_variant(text)
        kind = "plain" if changes.pop("model", "tuned") == "plain" else "tuned"
        adapter = changes.pop("adapter", None)
        store = {k: changes.pop(k) for k in STORE_OPTIONS if k in changes}
        writer = {k: changes.pop(k) for k in WRITER_OPTIONS if k in changes}
        generator = engine("adapter", Path(str(adapter))) if adapter else engine(kind)
        config = RecallConfig(**{**generator.config.to_dict(), **changes})
        methods.append(RecallMethod(name, generator, args.max_new_tokens, encoder, config, store, writer))
    return methods


def peer_recipe(name: str, encoder_path: str, max_new_tokens: int) -> Method:
    """A peer's recipe on the model as transformers loads it: the plain release, or (``-tuned``)
    recall's tuned weights, the folder ``recall`` itself loads (the shipped adapter merged in)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from recall_core.models.loading import default_model_dir, tuned_model_dir

    recipe_name, _, weights = name.partition("-")
    source = tuned_model_dir() if weights == "tuned" else default_model_dir()
    if source is None:
        raise SystemExit(f"{name}: this install ships no recall adapter")
    model = AutoModelForCausalLM.from_pretrained(str(source)).eval()
    tokenizer = AutoTokenizer.from_pretrained(str(source))
    recipe = (LangChainRecipe if recipe_name == "langchain" else LlamaIndexRecipe)(model, tokenizer, encoder_path, max_new_tokens)
    recipe.name = name
    return recipe


def run(args: argparse.Namespace) -> dict[str, Any]:
    from recall_core.memory.encoders import default_encoder, default_encoder_path

    families = args.families
    encoder, encoder_path = default_encoder(), str(default_encoder_path())
    data = asked_families(families, args.seed, args.users)
    if args.retrieval_only:
        notes = retrieval_only(args, data, encoder, encoder_path)
        result = {"benchmark": "heldout-notes", "seed": args.seed, "users": args.users, "families": families, "notes": notes}
        write_results(args.out, "heldout_notes", result)
        return result
    systems = SYSTEM_MESSAGES[args.system_messages]
    calls = {f: asked_calls(f, users, args.seed, args.from_user, systems)[: args.limit] for f, users in data.items()}
    if args.keys is not None:
        calls = only_keys(calls, args.keys)
    methods = build_methods(args, encoder, encoder_path)
    rows: list[dict[str, Any]] = []
    general: dict[str, Any] = {}
    try:
        for method in methods:
            method.prepare([u for users in data.values() for u in users])
            todo = [c for f in families for c in calls[f]]
            for call in progress(todo, method.name, not args.no_progress, unit="question"):
                row = score_reply(call, method.reply(call))
                row["stale_possible"] = bool(call.question.stale)
                rows.append({"method": method.name, **row})
            if args.general and isinstance(method, RecallMethod) and not isinstance(method, PerFamilyRecall):
                someone = next(iter(data.values()))[0].user_id
                replies = [method.reply(c) for c in progress(general_calls(args.general, someone, systems),
                                                             f"{method.name} general", not args.no_progress)]  # fmt: skip
                fired = [r.fired for r in replies if r.fired is not None]
                general[method.name] = {"prompts": len(replies), "fired": sum(fired) if fired else None,
                                        "replies": [r.text for r in replies]}  # fmt: skip
    finally:
        for method in methods:
            method.close()
    summary = {
        m.name: {**{f: summarize([r for r in rows if r["method"] == m.name and r["family"] == f]) for f in families},
                 "all": summarize([r for r in rows if r["method"] == m.name])}
        for m in methods
    }  # fmt: skip
    result = {"benchmark": "heldout", "schema_version": 1, "seed": args.seed, "users": args.users, "families": families,
              "system_messages": args.system_messages, "machine": machine(), "summary": summary, "general": general, "rows": rows}  # fmt: skip
    write_results(args.out, "heldout", result, markdown(result), plot)
    (args.out / "replies.md").write_text(replies_markdown(result), encoding="utf-8")
    return result


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    result = run(args)
    print(notes_markdown(result) if args.retrieval_only else markdown(result))
    print(f"written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

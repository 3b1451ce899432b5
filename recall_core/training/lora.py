"""``recall train``: LoRA fine-tuning that teaches a chat model to ask for and use its memory.

What is trained: low-rank adapters on every linear layer of the transformer (peft;
:func:`~recall_core.training.adapter.lora_targets`) and the rows of the two recall tokens in
the embedding (and the tied LM head), nothing else. The data are built by
:mod:`recall_core.training.examples` from the conversation families
(:mod:`recall_core.training.families`, training seeds only; ``exclude`` leaves families out,
so that a run can be measured on a family it never saw) and from the base model's own
greedy replies to generic prompts (self-distillation, so what the model did well before it
still does); :mod:`recall_core.training.example_files` writes and reads them as files. See BENCHMARKS.md for the recipe, the held-out figures and the log of the
shipped adapter.
"""

from __future__ import annotations

import itertools
import json
import math
import random
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch
from tqdm.auto import tqdm

from recall_core.config import DEFAULT_SYSTEM_PROMPT, RecallConfig
from recall_core.decoding.abstain import abstention_opening
from recall_core.models.lora import base_fingerprint
from recall_core.prompt import apply_chat_template, chat_prompt_ids
from recall_core.settings import Range, in_range, int_at_least
from recall_core.tokens import MEMORY_PAD_TOKEN, RECALL_TOKEN
from recall_core.training import family_data
from recall_core.training.adapter import DEFAULT_TARGETS as DEFAULT_TARGETS  # where it was before 2026-12-07
from recall_core.training.adapter import check_out, lora_targets, save_adapter
from recall_core.training.example_files import load_examples as load_examples  # (moved there 2026-12-07)
from recall_core.training.example_files import save_examples as save_examples
from recall_core.training.examples import (
    IGNORE,
    Example,
    ExampleBuilder,
    Mixture,
    general_examples,
    memory_examples,
)
from recall_core.training.families import FAMILIES
from recall_core.training.prompts import general_prompts, statement_prompts
from recall_core.types import MemoryCandidate

#: The families' evaluation seed (``benchmarks/heldout.py``): a run draws its users from
#: ``family_data.TRAIN_SEED + seed``, which must stay below it (until 2026-12-07 ``seed=20260124``
#: trained on the evaluation's own users).
EVAL_SEED = 20261124
#: How deep a question is searched for a note that names the answer where its notes missed it
#: (``Mixture.fill_share``), and for its near misses (``Mixture.neighbour_share``).
FILL_DEPTH = 16
#: The most steps, LoRA rank and conversation users a run takes: far above any recipe (162 steps,
#: rank 32, 8 users), below what a typo costs (days of steps, a rank wider than any model).
MAX_STEPS = 1_000_000
MAX_RANK = 4096
MAX_USERS = 10_000


def _ints_up_to(high: int) -> Range:
    """The ints 1 to ``high``, as :func:`~recall_core.settings.in_range` names them."""
    return Range(f"an int in [1, {high}]", lambda v: 1 <= v <= high, integer=True)


@dataclass(frozen=True)
class TrainConfig:
    """The whole recipe of a recall-tuning run: the same config and seed give the same adapter.

    Args:
        steps: optimizer steps (``None``: one pass over the examples).
        batch_size: examples per step.
        learning_rate: peak AdamW learning rate (linear warm-up, cosine decay).
        warmup: warm-up steps.
        rank, alpha: LoRA rank and scale.
        targets: module names the adapters go on, or ``("all-linear",)`` (the default's names fall
            back to it on a model that lacks any of them: :func:`~recall_core.training.adapter.lora_targets`).
        mixture: how the examples are made (:class:`~recall_core.training.examples.Mixture`).
        families: the conversation families the memory examples come from.
        exclude: families left out (a leave-one-family-out run names the held-out one here).
        users: users of each family (training seeds only).
        encoder: the sentence encoder of the store the notes are searched in (``None``: the default).
        distill_tokens: length limit of the base model's replies to the generic prompts.
        decision_weight: loss weight of a reply's first token, where the model decides
            whether to write ``<recall>`` (finite, > 0).
        max_length: examples longer than this (in tokens) are left out.
        agreement_prompts: held-out generic prompts on which the tuned model's greedy replies
            are compared with the base model's (reported, never trained on).
        seed: seeds the data, the order and the adapter's initialisation: in
            ``[0, EVAL_SEED - family_data.TRAIN_SEED)``, so that no training user is an evaluation one.
    """

    steps: int | None = None
    batch_size: int = 8
    learning_rate: float = 1e-3
    warmup: int = 10
    rank: int = 8
    alpha: int = 16
    targets: tuple[str, ...] = DEFAULT_TARGETS
    mixture: Mixture = field(default_factory=Mixture)
    families: tuple[str, ...] = tuple(FAMILIES)
    exclude: tuple[str, ...] = ()
    users: int = 8
    encoder: str | None = None
    distill_tokens: int = 48
    decision_weight: float = 3.0
    max_length: int = 384
    agreement_prompts: int = 64
    seed: int = 0
    #: The seed an examples file's data was made with (``recall train --examples-file``: its header's),
    #: where it is not ``seed``; ``None``: the data is made by the run, from ``seed``.
    data_seed: int | None = None

    def __post_init__(self) -> None:
        # Upper bounds too (until 2026-12-07 only lower ones: --steps 10**11 built its plan of batches
        # until memory ran out, --rank 10**8 failed allocating 25 GB after the whole data step, a reviewer).
        if self.steps is not None:
            in_range("steps", self.steps, _ints_up_to(MAX_STEPS))
        int_at_least("batch_size", self.batch_size, 1)
        int_at_least("warmup", self.warmup, 0)
        in_range("rank", self.rank, _ints_up_to(MAX_RANK))
        int_at_least("alpha", self.alpha, 1)
        in_range("users", self.users, _ints_up_to(MAX_USERS))
        int_at_least("distill_tokens", self.distill_tokens, 1)
        int_at_least("max_length", self.max_length, 16)
        int_at_least("agreement_prompts", self.agreement_prompts, 0)
        in_range("learning_rate", self.learning_rate, Range("a number in (0, 1]", lambda v: 0 < v <= 1))
        in_range("decision_weight", self.decision_weight, Range("a finite number > 0", lambda v: 0 < v < math.inf))
        seeds = EVAL_SEED - family_data.TRAIN_SEED
        in_range("seed", self.seed, Range(f"an int in [0, {seeds}) (training users come from seed {family_data.TRAIN_SEED} "
                                          f"+ seed, below the evaluation seed {EVAL_SEED})", lambda v: 0 <= v < seeds,
                                          integer=True))  # fmt: skip
        if not self.targets:
            raise ValueError("targets must name at least one module (or 'all-linear')")
        for name in (*self.families, *self.exclude):
            if name not in FAMILIES:
                raise ValueError(f"families and exclude must name families of {', '.join(FAMILIES)}, got {name!r}")
        if not self.trained_families:
            raise ValueError("exclude leaves no family to train on")

    @property
    def trained_families(self) -> tuple[str, ...]:
        return tuple(f for f in self.families if f not in self.exclude)


@dataclass
class TrainResult:
    """What a run did: where the adapter is, the data it saw, the loss per step, the time it took."""

    adapter: Path
    counts: dict[str, int]
    losses: list[float]
    seconds: dict[str, float]
    checks: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "adapter": str(self.adapter)}


# --------------------------------------------------------------------------- data
@torch.no_grad()
def base_replies(model: Any, tokenizer: Any, prompts: Sequence[str], *, max_new_tokens: int = 48,
                 system_prompt: str = DEFAULT_SYSTEM_PROMPT, systems: Sequence[str | None] | None = None,
                 batch_size: int = 16, progress: bool = True,
                 allow_recall: bool = False) -> list[tuple[str, str | None, list[int], bool]]:
    """The model's greedy reply to each prompt, as ``(prompt, system message, reply ids, cut at the limit)``.

    Prompts are rendered as recall renders them (the prompt's system message from ``systems``,
    ``system_prompt`` where that is ``None`` or not given, then the prompt) and run in
    left-padded batches; the reply stops at the template's end of turn. ``<recall>`` is never
    generated unless ``allow_recall`` (a tuned model's reply is compared as it comes).
    """
    device = next(model.parameters()).device
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    eos = model.generation_config.eos_token_id
    stops = set(eos if isinstance(eos, list) else [eos]) | {tokenizer.eos_token_id}
    tokens = (MEMORY_PAD_TOKEN,) if allow_recall else (RECALL_TOKEN, MEMORY_PAD_TOKEN)
    banned = [[tokenizer.convert_tokens_to_ids(t)] for t in tokens]
    shown = [s or system_prompt for s in (systems if systems is not None else [None] * len(prompts))]
    if len(shown) != len(prompts):
        raise ValueError(f"systems must give one system message per prompt ({len(prompts)}), got {len(shown)}")
    out: list[tuple[str, str | None, list[int], bool]] = []
    bar = tqdm(total=len(prompts), desc="base replies", disable=not progress)
    for start in range(0, len(prompts), batch_size):
        chunk = list(prompts[start : start + batch_size])
        heads = shown[start : start + batch_size]
        rows = [apply_chat_template(tokenizer, [{"role": "system", "content": head},
                                                {"role": "user", "content": p}]) for p, head in zip(chunk, heads, strict=True)]  # fmt: skip
        width = max(len(r) for r in rows)
        ids = torch.tensor([[pad_id] * (width - len(r)) + r for r in rows], device=device)
        mask = torch.tensor([[0] * (width - len(r)) + [1] * len(r) for r in rows], device=device)
        generated = model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=max_new_tokens, do_sample=False,
                                   pad_token_id=pad_id, bad_words_ids=banned, temperature=None, top_p=None,
                                   top_k=None)  # fmt: skip
        for prompt, head, row in zip(chunk, heads, generated[:, width:].tolist(), strict=True):
            end = next((i for i, token in enumerate(row) if token in stops), None)
            out.append((prompt, head, row[:end] if end is not None else row, end is None))
        bar.update(len(chunk))
    bar.close()
    return out


def build_examples(model: Any, tokenizer: Any, config: TrainConfig, recall_config: RecallConfig | None = None,
                   progress: bool = True, writer_options: dict[str, Any] | None = None,
                   store_options: dict[str, Any] | None = None) -> list[Example]:
    """Every example of ``config``, deterministic for ``config.seed`` (``meta["family"]`` says where each comes from)."""
    rng = random.Random(config.seed)
    builder = ExampleBuilder(tokenizer, recall_config)
    users = family_data.family_users(config.trained_families, config.users, family_data.TRAIN_SEED + config.seed)
    depth = FILL_DEPTH if config.mixture.fill_share or config.mixture.neighbour_share else 0
    notes = family_data.retrieved(users, builder.config, encoder=config.encoder, writer_options=writer_options,
                                  store_options=store_options, depth=depth, progress=progress)  # fmt: skip
    items = family_data.asked(users, notes, rng, builder.config, config.mixture.fill_share)
    systems = family_data.TRAIN_SYSTEM_PROMPTS
    examples = memory_examples(builder, items, config.mixture, rng, systems,
                               order_rng=random.Random(f"order-{config.seed}"),
                               format_rng=random.Random(f"format-{config.seed}"),
                               replies=note_replies(model, tokenizer, config, progress),
                               reply_rng=random.Random(f"replies-{config.seed}"),
                               company_rng=random.Random(f"company-{config.seed}"),
                               near_rng=random.Random(f"near-{config.seed}"),
                               neighbour_rng=random.Random(f"neighbours-{config.seed}"))
    # One base reply per prompt and system message, each used about once (there are 300 train prompts).
    needed = config.mixture.general + config.mixture.auto_general
    prompts = general_prompts("train", n=needed, seed=config.seed)
    prompts = [prompts[i % len(prompts)] for i in range(needed)]
    heads = [rng.choice(systems) for _ in prompts]
    replies = (base_replies(model, tokenizer, prompts, systems=heads, max_new_tokens=config.distill_tokens,
                            progress=progress) if needed else [])  # fmt: skip
    if config.mixture.general:
        examples += general_examples(builder, replies[: config.mixture.general], "general", config.mixture.general, rng)
    if config.mixture.auto_general:
        examples += general_examples(builder, replies[config.mixture.general :], "auto-general",
                                     config.mixture.auto_general, rng, [i.notes for i in items])  # fmt: skip
    if config.mixture.statements:
        examples += statement_examples(model, tokenizer, builder, config, [i.notes for i in items], progress)
    if config.mixture.chat:
        examples += chat_examples(model, tokenizer, builder, config, users, [i.notes for i in items], progress)
    return [e for e in examples if len(e.input_ids) <= config.max_length]


#: How many of the base model's replies are made to put in notes (``Mixture.reply_share``), and
#: how long each may be: a paragraph, as a chat assistant's reply (or one chunk of a longer one) is.
NOTE_REPLIES = 96
NOTE_REPLY_TOKENS = 72


def note_replies(model: Any, tokenizer: Any, config: TrainConfig, progress: bool = True) -> list[str]:
    """The base model's replies to generic prompts, as text, for notes that carry a chat
    assistant's words (:func:`~recall_core.training.examples.with_replies`); none when
    ``config.mixture.reply_share`` is 0. The prompts are the last of the training split's
    shuffle, under the default system message, and nothing is drawn for them, so that the
    other examples stay as they were."""
    if not config.mixture.reply_share:
        return []
    prompts = general_prompts("train", seed=config.seed)[-NOTE_REPLIES:]
    replies = base_replies(model, tokenizer, prompts, max_new_tokens=NOTE_REPLY_TOKENS, progress=progress)
    return [tokenizer.decode(ids, skip_special_tokens=True).strip() for _, _, ids, _ in replies]


def statement_examples(model: Any, tokenizer: Any, builder: ExampleBuilder, config: TrainConfig,
                       notes: Sequence[Sequence[MemoryCandidate]], progress: bool = True) -> list[Example]:
    """``config.mixture.statements`` examples of a user telling the assistant something about
    themselves: the reply is the base model's own (it acknowledges), without ``<recall>``.

    Half are asked under the model's own policy with no notes, half with notes a search returned
    in the system message (``"auto"``): a tuned model that learned "I don't know." for questions
    no note answers otherwise says it to statements too, or writes ``<recall>`` and stops. Drawn
    from a generator of their own (``f"statements-{seed}"``), so the other examples stay as they were.
    """
    count = config.mixture.statements
    prompts = statement_prompts("train", seed=config.seed)
    prompts = [prompts[i % len(prompts)] for i in range(count)]
    return distilled_examples(model, tokenizer, builder, config, prompts, notes,
                              random.Random(f"statements-{config.seed}"), "statement", progress)  # fmt: skip


#: ``Mixture.chat_openings="not-abstention"``: messages drawn per reply wanted (most base replies
#: open with "I": the pool must be larger than what is kept).
CHAT_POOL = 4


def chat_examples(model: Any, tokenizer: Any, builder: ExampleBuilder, config: TrainConfig,
                  users: Mapping[str, Sequence[Any]], notes: Sequence[Sequence[MemoryCandidate]],
                  progress: bool = True) -> list[Example]:
    """``config.mixture.chat`` examples of the training users' own messages
    (:func:`~recall_core.training.family_data.chat_messages`), answered as the base model answers
    them; under ``chat_openings="not-abstention"`` only replies that do not open with the
    abstention's first token, from a pool ``CHAT_POOL`` times as large."""
    wanted = config.mixture.chat
    filtered = config.mixture.chat_openings == "not-abstention"
    messages = family_data.chat_messages(users, wanted * (CHAT_POOL if filtered else 1), random.Random(f"chat-{config.seed}"))
    opening = abstention_opening(tokenizer)
    keep = (lambda reply: not reply or reply[0] != opening) if filtered else None
    return distilled_examples(model, tokenizer, builder, config, messages, notes,
                              random.Random(f"chat-replies-{config.seed}"), "chat", progress, keep=keep, limit=wanted)  # fmt: skip


def distilled_examples(model: Any, tokenizer: Any, builder: ExampleBuilder, config: TrainConfig,
                       prompts: Sequence[str], notes: Sequence[Sequence[MemoryCandidate]], rng: random.Random,
                       family: str, progress: bool = True, keep: Callable[[Sequence[int]], bool] | None = None,
                       limit: int | None = None) -> list[Example]:  # fmt: skip
    """One example per prompt, answered with the base model's own greedy reply under a training
    system message drawn by ``rng``: the first half under the model's own policy with no notes,
    the rest with ``notes`` a search returned in the system message (``"auto"``), the reply still
    the base model's. ``family`` is what ``meta["family"]`` says the prompts are. With ``keep``,
    only the prompts whose reply ids it accepts, the first ``limit`` of them."""
    heads = [rng.choice(family_data.TRAIN_SYSTEM_PROMPTS) for _ in prompts]
    replies = base_replies(model, tokenizer, prompts, systems=heads, max_new_tokens=config.distill_tokens,
                           progress=progress)  # fmt: skip
    if keep is not None:
        replies = [r for r in replies if keep(r[2])]
    replies = replies[:limit]
    count, half = len(replies), len(replies) // 2
    out = general_examples(builder, replies[:half], "general", half, rng, family=family) if half else []
    rest = replies[half:]
    return out + (general_examples(builder, rest, "auto-general", count - half, rng, notes, family=family) if rest else [])


def batches(examples: Sequence[Example], batch_size: int, rng: random.Random) -> list[list[Example]]:
    """Shuffled batches of examples of similar length (less padding), in a shuffled order."""
    order = list(examples)
    rng.shuffle(order)
    out: list[list[Example]] = []
    window = batch_size * 16
    for start in range(0, len(order), window):
        group = sorted(order[start : start + window], key=lambda e: len(e.input_ids))
        out += [group[i : i + batch_size] for i in range(0, len(group), batch_size)]
    rng.shuffle(out)
    return out


def collate(batch: Sequence[Example], pad_id: int, decision_weight: float) -> dict[str, torch.Tensor]:
    """Right-padded ``input_ids``, ``attention_mask``, shifted ``targets`` and per-token ``weights``."""
    width = max(len(e.input_ids) for e in batch)
    ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(batch), width), dtype=torch.long)
    targets = torch.full((len(batch), width), IGNORE, dtype=torch.long)
    weights = torch.zeros((len(batch), width))
    for row, example in enumerate(batch):
        n = len(example.input_ids)
        ids[row, :n] = torch.tensor(example.input_ids)
        mask[row, :n] = 1
        labels = torch.tensor(example.labels[1:] + [IGNORE])  # position i predicts token i + 1
        targets[row, :n] = labels
        learned = (labels != IGNORE).nonzero().flatten()
        weights[row, learned] = 1.0
        if len(learned):
            weights[row, learned[0]] = decision_weight  # the first reply token: <recall> or not
    return {"input_ids": ids, "attention_mask": mask, "targets": targets, "weights": weights}


def _loss(model: Any, batch: dict[str, torch.Tensor]) -> torch.Tensor:
    logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits.float()
    targets = batch["targets"]
    per_token = torch.nn.functional.cross_entropy(
        logits.reshape(-1, logits.shape[-1]), targets.reshape(-1).clamp_min(0), reduction="none"
    ).reshape(targets.shape)
    weights = batch["weights"]
    return (per_token * weights).sum() / weights.sum().clamp_min(1.0)


# --------------------------------------------------------------------------- training
def train_recall(model: Any, tokenizer: Any, out: str | Path, config: TrainConfig | None = None, *,
                 recall_config: RecallConfig | None = None, base_model: str = "", progress: bool = True,
                 on_step: Callable[[int, float], None] | None = None,
                 examples: Sequence[Example] | None = None) -> TrainResult:
    """Recall-tune ``model`` (with the recall tokens added) and save the adapter in ``out``.

    ``model`` itself is left untouched, whatever happens: the adapters are removed and its
    train/eval mode restored after a failure or a ``KeyboardInterrupt`` too (since 2026-12-07).
    The adapter is saved with the base model's fingerprint, the recipe (the layer names adapted
    in ``targets``), the counts of each example kind and the loss per step
    (``training_log.json``). ``examples``: ones built before (``recall train --save-examples``,
    then ``--examples-file``), so the data need not be built where it trains; those of a
    conversation family that ``config`` does not train on (``exclude``, or not in ``families``)
    are left out. ``out`` and the targets are checked before any work.

    Raises:
        ValueError: the tokenizer has no chat template, or lacks the recall tokens; ``out`` is a
            file, a folder that is not a recall adapter's, the model's own folder or cannot be written
            (:func:`~recall_core.training.adapter.check_out`); ``config.targets`` name no linear layer.
        RuntimeError: the loss or the gradients stopped being finite (nothing is saved).
    """
    from peft import LoraConfig, get_peft_model

    config = config or TrainConfig()
    started = time.perf_counter()
    check_out(out, model_folder=getattr(model, "name_or_path", None) or None)
    builder_check = ExampleBuilder(tokenizer, recall_config)  # fails early on a model without a chat template
    targets, adapted = lora_targets(model, config.targets)
    torch.manual_seed(config.seed)
    recall_id = builder_check.recall_id
    pad_token_id = tokenizer.convert_tokens_to_ids(MEMORY_PAD_TOKEN)
    fingerprint = base_fingerprint(model)
    was_training, peft_model = model.training, None
    try:
        model.eval()
        if examples is None:
            examples = build_examples(model, tokenizer, config, recall_config, progress)
        else:  # a file's general examples name no conversation family ("general", "statement", "chat"): kept
            examples = [e for e in examples if (e.meta.get("family") not in FAMILIES
                        or e.meta.get("family") in config.trained_families)
                        and len(e.input_ids) <= config.max_length]  # fmt: skip
        if not examples:  # (until 2026-12-07 --steps then planned batches for ever, and without it an
            # untrained adapter replaced the one at `out`: a reviewer)
            raise ValueError(f"no examples to train on (families {', '.join(config.trained_families)}, max_length "
                             f"{config.max_length}): nothing was saved")  # fmt: skip
        heldout = general_prompts("heldout", n=config.agreement_prompts, seed=config.seed)
        before = base_replies(model, tokenizer, heldout, max_new_tokens=config.distill_tokens, progress=progress,
                              allow_recall=True)
        data_seconds = time.perf_counter() - started
        counts: dict[str, int] = {}
        for example in examples:
            counts[example.kind] = counts.get(example.kind, 0) + 1

        lora = LoraConfig(r=config.rank, lora_alpha=config.alpha, lora_dropout=0.0, target_modules=targets,
                          trainable_token_indices=[recall_id, pad_token_id], task_type="CAUSAL_LM")  # fmt: skip
        peft_model = get_peft_model(model, lora)
        losses = _tune(peft_model, tokenizer, examples, config, progress, on_step)
        train_seconds = time.perf_counter() - started - data_seconds
        peft_model.eval()
        checks = decision_checks(peft_model, tokenizer, recall_config, seed=config.seed, heldout=config.exclude,
                                 trained=config.trained_families)
        after = base_replies(peft_model, tokenizer, heldout, max_new_tokens=config.distill_tokens, progress=progress,
                             allow_recall=True)
        checks["agreement"] = agreement(before, after)

        recipe = {**asdict(config), "targets": [targets] if isinstance(targets, str) else targets}
        meta = {
            "format": 1, "base_model": base_model or str(getattr(model.config, "_name_or_path", "")),
            "base_fingerprint": fingerprint, "recall_token_id": recall_id, "memory_pad_token_id": pad_token_id,
            "recipe": recipe, "adapted_layers": adapted, "counts": counts, "steps": len(losses),
            "final_loss": sum(losses[-20:]) / max(1, len(losses[-20:])),
            "seconds": {"data": round(data_seconds, 1), "train": round(train_seconds, 1)}, "checks": checks,
            "trained_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "torch_threads": torch.get_num_threads(), "device": str(next(peft_model.parameters()).device),
        }  # fmt: skip
        log = json.dumps({"losses": losses, **meta}, indent=1) + "\n"
        folder = save_adapter(peft_model, out, meta, extra={"training_log.json": log})
    finally:
        if peft_model is not None:
            peft_model.unload()  # the caller's model without adapters again (tokens' rows restored too)
        model.train(was_training)
    seconds = {"data": data_seconds, "train": train_seconds, "total": time.perf_counter() - started}
    return TrainResult(folder, counts, losses, seconds, checks)


def _tune(peft_model: Any, tokenizer: Any, examples: Sequence[Example], config: TrainConfig, progress: bool,
          on_step: Callable[[int, float], None] | None) -> list[float]:
    """Train ``peft_model``'s adapters on ``examples`` (AdamW, linear warm-up, cosine decay); the loss per step.

    Stops with ``RuntimeError`` where the loss or the gradients' norm is NaN or infinite, before
    the optimizer writes it into the weights: until 2026-12-07 such a run saved an adapter whose
    weights were NaN (``decision_weight=1e308``, a learning rate too high).
    """
    peft_model.train()
    params = [p for p in peft_model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=config.learning_rate, weight_decay=0.0)
    rng = random.Random(config.seed)
    first = batches(examples, config.batch_size, rng)
    total = config.steps or len(first)

    def passes() -> Iterator[list[Example]]:  # more steps than one pass: further shuffled passes, made as needed
        yield from first
        while True:
            yield from batches(examples, config.batch_size, rng)

    plan = itertools.islice(passes(), total)

    def rate(step: int) -> float:
        if step < config.warmup:
            return (step + 1) / (config.warmup + 1)
        progress_ = (step - config.warmup) / max(1, total - config.warmup)
        return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress_))

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, rate)
    device = next(peft_model.parameters()).device
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    losses: list[float] = []
    bar = tqdm(plan, total=total, desc="recall tuning", disable=not progress)
    for step, chunk in enumerate(bar):
        batch = {k: v.to(device) for k, v in collate(chunk, pad_id, config.decision_weight).items()}
        loss = _loss(peft_model, batch)
        value = loss_value = loss.item()
        if math.isfinite(value):
            loss.backward()
            value = float(torch.nn.utils.clip_grad_norm_(params, 1.0))
        if not math.isfinite(value):
            bar.close()
            raise RuntimeError(f"training stopped at step {step + 1} of {total}: the loss or its gradients became "
                               f"{value} (learning_rate {config.learning_rate}, decision_weight "
                               f"{config.decision_weight}); nothing was saved")  # fmt: skip
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad(set_to_none=True)
        losses.append(loss_value)
        bar.set_postfix(loss=f"{sum(losses[-10:]) / len(losses[-10:]):.3f}")
        if on_step is not None:
            on_step(step, losses[-1])
    bar.close()
    return losses


def agreement(before: Sequence[tuple[Any, ...]], after: Sequence[tuple[Any, ...]]) -> dict[str, float]:
    """How alike two models' greedy replies to the same prompts are: identical replies, the same
    first token, and the mean share of the base reply that the tuned one repeats before they part.
    Each item is a :func:`base_replies` row, whose second-last field is the reply's ids."""
    if not before:
        return {"prompts": 0}
    same = first = 0
    shared = 0.0
    for row_a, row_b in zip(before, after, strict=True):
        a, b = row_a[-2], row_b[-2]
        same += int(a == b)
        first += int(a[:1] == b[:1])
        common = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
        shared += common / max(1, len(a))
    n = len(before)
    return {"prompts": n, "identical": same / n, "same_first_token": first / n, "shared_prefix": shared / n}


@torch.no_grad()
def decision_checks(model: Any, tokenizer: Any, recall_config: RecallConfig | None = None, *, seed: int = 0,
                    questions: int = 40, trained: Sequence[str] = tuple(FAMILIES),
                    heldout: Sequence[str] = ()) -> dict[str, Any]:
    """Teacher-forced check of the decision: how often ``<recall>`` is the most likely first reply
    token, on questions of the trained families (a seed never trained on), of the held-out
    families (if any), on held-out generic prompts and on held-out statements a user makes about
    themselves (:func:`~recall_core.training.prompts.statement_prompts`).

    And a new user's check (:func:`dont_know_with_nothing_found`), on the held-out families'
    questions when there are any, else the trained ones'. Why: a candidate of 2026-11-30 answered
    a new user's "What is the name of my parrot?" with a made-up name, which only a test of the
    whole suite caught, after the long benchmarks.
    """
    builder = ExampleBuilder(tokenizer, recall_config)
    device = next(model.parameters()).device

    def questions_of(families: Sequence[str]) -> list[str]:
        users = family_data.family_users(families, 2, seed=family_data.TRAIN_SEED - 1 - seed)
        texts = [q.text for group in users.values() for u in group for q in u.questions if q.kind == "memory"]
        return random.Random(seed).sample(texts, min(questions, len(texts)))

    def rate(prompts: list[str]) -> float:
        hits = 0
        for prompt in prompts:
            ids = chat_prompt_ids(tokenizer, [{"role": "user", "content": prompt}], "model", "system", builder.system_prompt)
            logits = model(input_ids=torch.tensor([ids], device=device)).logits[0, -1]
            hits += int(int(logits.argmax()) == builder.recall_id)
        return hits / max(1, len(prompts))

    memory = questions_of(trained)
    general = general_prompts("heldout", n=questions, seed=seed)
    statements = statement_prompts("heldout", n=questions, seed=seed)
    checks: dict[str, Any] = {"recall_first_on_memory_questions": rate(memory), "memory_questions": len(memory),
                              "recall_first_on_general_prompts": rate(general), "general_prompts": len(general),
                              "recall_first_on_statements": rate(statements), "statements": len(statements)}  # fmt: skip
    held = questions_of(heldout) if heldout else []
    if held:
        checks |= {"recall_first_on_heldout_family_questions": rate(held), "heldout_family_questions": len(held)}
    checks["dont_know_with_nothing_found"] = dont_know_with_nothing_found(model, builder, held or memory)
    return checks


@torch.no_grad()
def dont_know_with_nothing_found(model: Any, builder: ExampleBuilder, questions: Sequence[str]) -> float:
    """The share of ``questions`` whose greedy reply is exactly "I don't know." when a new user asks
    them under ``"auto"`` and the search finds nothing: the prompt the loop builds then (the marker
    dropped), and, where the model's most likely first token is its own ``<recall>``, the block the
    loop injects for nothing found (``empty_notes``) after it. Teacher-forced: two forward passes."""
    device = next(model.parameters()).device
    hits = 0
    for question in questions:
        example = builder.auto_example("new-user", [{"role": "user", "content": question}], family_data.UNKNOWN_REPLY, ())
        start = next(i for i, t in enumerate(example.labels) if t != IGNORE)  # where the reply begins
        ids, reply = example.input_ids[:start], example.input_ids[start:]
        first = int(model(input_ids=torch.tensor([ids], device=device)).logits[0, -1].argmax())
        if first == builder.recall_id:
            ids = [*ids, first, *builder.block(())]
        logits = model(input_ids=torch.tensor([ids + reply], device=device)).logits[0]
        hits += int(all(int(logits[len(ids) - 1 + i].argmax()) == t for i, t in enumerate(reply)))
    return hits / max(1, len(questions))

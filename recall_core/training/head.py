"""Training a query head: features at ``<recall>`` from forward passes, distilled into the encoder's space.

Features are the hidden states of a few layers at the ``<recall>`` position, where the loop
sees it when the model decides to recall (:func:`recall_prompt_ids`); the target is the
encoder's embedding of the user's text; the loss is ``1 - cosine`` plus an in-batch
contrastive (InfoNCE) term. Only the head gets gradients: the LM runs under ``torch.no_grad``.
The runtime half (loading, checking and applying a head) is :mod:`recall_core.models.query_head`.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from transformers import DynamicCache

from recall_core.config import DEFAULT_SYSTEM_PROMPT
from recall_core.decoding.hf_compat import cache_kwarg, last_logit_only
from recall_core.kv.cache import repeated_rows
from recall_core.models.lora import base_fingerprint as model_fingerprint
from recall_core.models.query_head import HeadMeta, QueryHead, RecallQueryHead, _check_layers, default_layers
from recall_core.tokens import RECALL_TOKEN


def recall_prompt_ids(tokenizer: Any, text: str, system_prompt: str = DEFAULT_SYSTEM_PROMPT) -> list[int]:
    """The ids the loop has when the model recalls first thing in its reply to ``text``:
    the chat template of ``[system, user]`` with the generation prompt, then ``<recall>``."""
    messages = [{"role": "system", "content": system_prompt}, {"role": "user", "content": text}]
    ids = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True, return_dict=False)
    if isinstance(ids, dict) or hasattr(ids, "input_ids"):  # a BatchEncoding
        ids = ids["input_ids"]
    return [*list(ids), tokenizer.convert_tokens_to_ids(RECALL_TOKEN)]


@torch.no_grad()
def recall_features(
    model: Any,
    tokenizer: Any,
    texts: Sequence[str],
    layers: Sequence[int],
    *,
    system_prompt: str = DEFAULT_SYSTEM_PROMPT,
    batch_size: int = 16,
    max_tokens: int = 256,
    progress: bool = False,
) -> torch.Tensor:
    """Hidden states ``[len(texts), len(layers), hidden_size]`` (float32) at ``<recall>`` for each
    text as a user turn (:func:`recall_prompt_ids`). Texts of similar length run together,
    right-padded: a causal model's position never sees the padding after it."""
    layers = _check_layers(model, layers)
    if isinstance(texts, str):
        raise ValueError("texts must be a sequence of strings, not one string")
    for i, text in enumerate(texts):
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"texts[{i}] must be a non-empty string, got {text!r}")
    device = next(model.parameters()).device
    encoded = [recall_prompt_ids(tokenizer, text, system_prompt)[-max_tokens:] for text in texts]
    out = torch.zeros((len(encoded), len(layers), model.config.hidden_size), dtype=torch.float32)
    if not encoded:
        return out
    # The ids every prompt starts with (system prompt, user header) run once; each batch goes on
    # from a copy of their cache, so a text costs only its own tokens and the few after it.
    m = _common_prefix(encoded)
    prefix_cache = DynamicCache(config=model.config)
    if m:
        model(input_ids=torch.tensor([encoded[0][:m]], device=device), use_cache=True,
              **cache_kwarg(prefix_cache), **last_logit_only(model))  # fmt: skip
    order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]))
    starts = range(0, len(order), max(1, batch_size))
    if progress:
        from tqdm.auto import tqdm

        starts = tqdm(starts, desc="<recall> features", unit="batch")
    for start in starts:
        rows = order[start : start + batch_size]
        width = max(len(encoded[i]) for i in rows) - m
        input_ids = torch.zeros((len(rows), width), dtype=torch.long, device=device)
        attention = torch.zeros((len(rows), m + width), dtype=torch.long, device=device)
        attention[:, :m] = 1
        for j, i in enumerate(rows):
            input_ids[j, : len(encoded[i]) - m] = torch.tensor(encoded[i][m:], device=device)
            attention[j, : len(encoded[i])] = 1
        cache = repeated_rows(model, prefix_cache, len(rows)) if m else DynamicCache(config=model.config)
        positions = torch.arange(m, m + width, device=device).expand(len(rows), -1)
        result = model(input_ids=input_ids, attention_mask=attention, position_ids=positions,
                       use_cache=True, **cache_kwarg(cache), output_hidden_states=True, return_dict=True, **last_logit_only(model))  # fmt: skip
        last = torch.tensor([len(encoded[i]) - 1 - m for i in rows], device=device)
        picked = torch.stack([result.hidden_states[layer][torch.arange(len(rows), device=device), last] for layer in layers], 1)
        out[rows] = picked.float().cpu()
    return out


def _common_prefix(encoded: Sequence[Sequence[int]]) -> int:
    """How many leading ids all of ``encoded`` share, leaving each at least one of its own."""
    first, m = encoded[0], min(len(e) for e in encoded) - 1
    for e in encoded[1:]:
        m = next((i for i in range(m) if e[i] != first[i]), m)
    return max(m, 0)


def distillation_loss(pred: torch.Tensor, target: torch.Tensor, contrastive: float, temperature: float) -> torch.Tensor:
    """``1 - cos(pred, target)`` averaged, plus ``contrastive`` x InfoNCE of each prediction
    against the batch's targets (its own is the positive)."""
    p, t = F.normalize(pred, dim=-1), F.normalize(target, dim=-1)
    loss = (1 - (p * t).sum(-1)).mean()
    if contrastive > 0 and p.shape[0] > 1:
        logits = p @ t.T / temperature
        loss = loss + contrastive * F.cross_entropy(logits, torch.arange(p.shape[0]))
    return loss


@dataclass(frozen=True)
class HeadRecipe:
    """How a head is trained (saved in its meta). ``layers=None``: :func:`default_layers`."""

    layers: tuple[int, ...] | None = None
    mix: str = "concat"
    hidden: int = 0
    epochs: int = 40
    batch_size: int = 128
    lr: float = 1e-3
    weight_decay: float = 0.05
    contrastive: float = 1.0
    temperature: float = 0.05
    seed: int = 0

    def __post_init__(self) -> None:
        checks: list[tuple[str, Any, Callable[[Any], bool], str]] = [
            ("epochs", self.epochs, lambda v: isinstance(v, int) and v >= 1, "an int >= 1"),
            ("batch_size", self.batch_size, lambda v: isinstance(v, int) and v >= 2, "an int >= 2"),
            ("lr", self.lr, lambda v: v > 0, "> 0"),
            ("weight_decay", self.weight_decay, lambda v: v >= 0, ">= 0"),
            ("contrastive", self.contrastive, lambda v: v >= 0, ">= 0"),
            ("temperature", self.temperature, lambda v: v > 0, "> 0"),
        ]
        for name, value, ok, allowed in checks:
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or not ok(value):
                raise ValueError(f"{name} must be {allowed}, got {value!r}")


def fit_head(
    features: torch.Tensor, targets: torch.Tensor, recipe: HeadRecipe, layers: Sequence[int], progress: bool = False
) -> tuple[QueryHead, list[float]]:
    """Train a :class:`QueryHead` on precomputed ``features`` ``[n, layers, hidden]`` and encoder
    ``targets`` ``[n, dim]``; returns it and the mean loss of each epoch. Deterministic for
    ``recipe.seed``. The learning rate follows one cycle (10% warm-up to ``recipe.lr``, then down)
    over the run's optimizer steps; a run of 10 steps or fewer keeps ``recipe.lr`` throughout."""
    if features.ndim != 3 or targets.ndim != 2 or features.shape[0] != targets.shape[0]:
        raise ValueError(
            f"features [n, layers, hidden] and targets [n, dim] must have the same n, got "
            f"{tuple(features.shape)} and {tuple(targets.shape)}"
        )
    if features.shape[0] < 2:
        raise ValueError(f"training a query head needs at least 2 texts, got {features.shape[0]}")
    if features.shape[1] != len(layers):
        raise ValueError(f"features hold {features.shape[1]} layers but layers names {len(layers)}")
    torch.manual_seed(recipe.seed)
    head = QueryHead(int(features.shape[2]), layers, int(targets.shape[1]), recipe.mix, recipe.hidden)
    head.set_standardization(features.float())
    optimizer = torch.optim.AdamW(head.parameters(), lr=recipe.lr, weight_decay=recipe.weight_decay)
    n = features.shape[0]
    steps = recipe.epochs * math.ceil(n / recipe.batch_size)
    schedule = _one_cycle(optimizer, recipe.lr, steps)
    order = torch.Generator().manual_seed(recipe.seed)
    epochs = range(recipe.epochs)
    if progress:
        from tqdm.auto import tqdm

        epochs = tqdm(epochs, desc="query head", unit="epoch")
    history = []
    head.train()
    for _ in epochs:
        total = 0.0
        for batch in torch.randperm(n, generator=order).split(recipe.batch_size):
            if len(batch) < 2:
                continue
            loss = distillation_loss(head(features[batch].float()), targets[batch].float(), recipe.contrastive, recipe.temperature)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if schedule is not None:
                schedule.step()
            total += float(loss.detach()) * len(batch)
        history.append(total / n)
        if not math.isfinite(history[-1]):  # diverged: nothing of it is worth saving (a save replaced a good head)
            raise RuntimeError(f"the query head's training diverged (loss {history[-1]} at epoch {len(history)}): "
                               f"lower the learning rate (lr={recipe.lr:g}); nothing was saved")  # fmt: skip
    if not all(torch.isfinite(p).all() for p in head.parameters()):
        raise RuntimeError(f"the query head's weights are not finite after training (lr={recipe.lr:g}): lower the "
                           "learning rate; nothing was saved")  # fmt: skip
    return head.eval(), history


#: Below this many optimizer steps in all a head trains at a constant learning rate (see :func:`_one_cycle`).
MIN_SCHEDULED_STEPS = 11


def _one_cycle(optimizer: torch.optim.Optimizer, lr: float, steps: int) -> torch.optim.lr_scheduler.LRScheduler | None:
    """torch's ``OneCycleLR`` with a 10% warm-up over ``steps``, or ``None`` (a constant ``lr``) for
    fewer than :data:`MIN_SCHEDULED_STEPS`.

    Why: the warm-up's length is ``0.1 * steps - 1`` steps and torch divides by it, so at exactly 10
    steps (``epochs=1, batch_size=2`` on 20 texts) it raised ``ZeroDivisionError``, and below 10 the
    warm-up was skipped and a single step ran at the cycle's floor (``lr / 250,000``). Longer runs
    (every recipe of ours) keep the schedule they were trained with.
    """
    if steps < MIN_SCHEDULED_STEPS:
        return None
    return torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=lr, total_steps=steps, pct_start=0.1)


def train_query_head(
    model: Any,
    tokenizer: Any,
    encoder: Any,
    texts: Sequence[str],
    *,
    recipe: HeadRecipe | None = None,
    seed: int | None = None,
    system_prompt: str = DEFAULT_SYSTEM_PROMPT,
    batch_size: int = 16,
    progress: bool = False,
    data: dict[str, Any] | None = None,
) -> RecallQueryHead:
    """Train a query head for ``model`` into ``encoder``'s space on ``texts`` (user turns and
    questions; never evaluation data). ``seed`` overrides ``recipe.seed``; ``data`` describes the
    texts for the meta. Only the head gets gradients: the LM runs under ``torch.no_grad``."""
    recipe = recipe or HeadRecipe()
    if seed is not None:
        recipe = HeadRecipe(**{**asdict(recipe), "seed": seed})
    texts = list(dict.fromkeys(texts))  # the same text twice would be its own negative
    if len(texts) < 2:
        raise ValueError(f"texts must hold at least 2 different non-empty strings, got {len(texts)}")
    layers = _check_layers(model, recipe.layers if recipe.layers is not None else default_layers(model))
    features = recall_features(model, tokenizer, texts, layers, system_prompt=system_prompt, batch_size=batch_size,
                               progress=progress)  # fmt: skip
    targets = torch.as_tensor(np.asarray(encoder.encode(list(texts)), dtype=np.float32))
    if targets.shape != (len(texts), encoder.dimension):
        raise ValueError(f"the encoder gave vectors of shape {tuple(targets.shape)}, expected ({len(texts)}, {encoder.dimension})")
    head, history = fit_head(features, targets, recipe, layers, progress=progress)
    meta = HeadMeta(
        layers=list(layers), hidden_size=int(model.config.hidden_size), out_dim=int(encoder.dimension),
        mix=recipe.mix, hidden=recipe.hidden, encoder_name=str(encoder.name), encoder_dim=int(encoder.dimension),
        model_fingerprint=model_fingerprint(model), system_prompt=system_prompt,
        recipe={**asdict(recipe), "layers": list(layers), "texts": len(texts), "data": data or {},
                "loss_first": round(history[0], 4), "loss_last": round(history[-1], 4)},
    )  # fmt: skip
    return RecallQueryHead(head, meta)


def shuffled(items: Sequence[str], seed: int) -> list[str]:
    """``items`` in a fixed random order (for subsampling reproducibly)."""
    out = list(items)
    random.Random(seed).shuffle(out)
    return out

"""A small trained head from the ``<recall>`` hidden state into the memory encoder's space.

The ``hidden`` query mode searches with what the model holds at ``<recall>``. Compared
directly with LM-space keys of the memories it finds little (the LM's last layer is made to
predict the next token, not to match texts); this head maps the hidden state to the vector
the memory's own encoder (all-MiniLM-L6-v2 by default) would give the text query, so the
memory's regular dense index answers it.

It is trained by distillation, on features from forward passes only (``torch.no_grad``
through the LM; only the head gets gradients):

* features: the hidden states of a few layers at the ``<recall>`` position, where the loop
  sees it when the model decides to recall: the chat template of a system prompt and the
  user's text, the generation prompt, then ``<recall>`` (:func:`recall_prompt_ids`);
* target: the encoder's embedding of the user's text (what ``query_mode="text"`` searches with);
* loss: ``1 - cosine`` to the target plus an in-batch contrastive (InfoNCE) term against the
  other targets, which serves ranking.

Saved as ``query_head.safetensors`` and ``query_head.json`` (layers, sizes, the encoder's name
and dimension, the LM's fingerprint, the training recipe); loading it for another model or
another encoder raises ``ValueError``.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from transformers import DynamicCache

from .config import DEFAULT_SYSTEM_PROMPT
from .kv_blocks import _one_logit, _repeated  # one batched-prefix helper for both
from .models import RECALL_TOKEN
from .training.adapter import base_fingerprint as model_fingerprint  # dtype-independent: fp32 and bf16 alike
from .transformers_compat import cache_kwarg

HEAD_FILE = "query_head.safetensors"
META_FILE = "query_head.json"
FORMAT = "recall-query-head/1"
#: Relative depths of the default layers (0 = embeddings, 1 = the last layer's output).
DEFAULT_DEPTHS = (0.5, 0.75, 1.0)


def default_layers(model: Any) -> tuple[int, ...]:
    """Hidden-state indices at :data:`DEFAULT_DEPTHS` of ``model`` (index 0 is the embeddings)."""
    n = int(model.config.num_hidden_layers)
    return tuple(sorted({max(1, int(d * n + 0.5)) for d in DEFAULT_DEPTHS}))  # SmolLM2-135M: 15, 23, 30


def recall_prompt_ids(tokenizer: Any, text: str, system_prompt: str = DEFAULT_SYSTEM_PROMPT) -> list[int]:
    """The ids the loop has when the model recalls first thing in its reply to ``text``:
    the chat template of ``[system, user]`` with the generation prompt, then ``<recall>``."""
    messages = [{"role": "system", "content": system_prompt}, {"role": "user", "content": text}]
    ids = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True, return_dict=False)
    if isinstance(ids, dict) or hasattr(ids, "input_ids"):  # a BatchEncoding
        ids = ids["input_ids"]
    return [*list(ids), tokenizer.convert_tokens_to_ids(RECALL_TOKEN)]


def _check_layers(model: Any, layers: Sequence[int]) -> tuple[int, ...]:
    n = int(model.config.num_hidden_layers)
    if not layers:
        raise ValueError("layers must name at least one hidden-state index")
    out = []
    for layer in layers:
        if isinstance(layer, bool) or not isinstance(layer, int) or not -(n + 1) <= layer <= n:
            raise ValueError(f"layers must be ints in [{-(n + 1)}, {n}] (hidden-state indices), got {layer!r}")
        out.append(layer % (n + 1))
    return tuple(out)


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
              **cache_kwarg(prefix_cache), **_one_logit(model))  # fmt: skip
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
        cache = _repeated(model, prefix_cache, len(rows)) if m else DynamicCache(config=model.config)
        positions = torch.arange(m, m + width, device=device).expand(len(rows), -1)
        result = model(input_ids=input_ids, attention_mask=attention, position_ids=positions,
                       use_cache=True, **cache_kwarg(cache), output_hidden_states=True, return_dict=True, **_one_logit(model))  # fmt: skip
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


class QueryHead(nn.Module):
    """Hidden states of a few layers at ``<recall>`` -> a vector in the encoder's space.

    Each layer's state is standardized per dimension (mean and scale of the training features,
    kept as buffers: LM hidden states have a few huge dimensions), the layers are mixed with
    learned softmax weights (``mix="weights"``) or concatenated (``mix="concat"``), then a
    linear map (or a one-hidden-layer MLP when ``hidden > 0``) gives the query vector.
    """

    def __init__(self, hidden_size: int, layers: Sequence[int], out_dim: int, mix: str = "weights", hidden: int = 0) -> None:
        super().__init__()
        if mix not in ("weights", "concat"):
            raise ValueError(f"mix must be 'weights' or 'concat', got {mix!r}")
        for name, value in (("hidden_size", hidden_size), ("out_dim", out_dim)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be an int >= 1, got {value!r}")
        if isinstance(hidden, bool) or not isinstance(hidden, int) or hidden < 0:
            raise ValueError(f"hidden must be an int >= 0, got {hidden!r}")
        self.hidden_size, self.layers, self.out_dim, self.mix, self.hidden = hidden_size, tuple(layers), out_dim, mix, hidden
        n = len(self.layers)
        self.register_buffer("mean", torch.zeros(n, hidden_size))
        self.register_buffer("scale", torch.ones(n, hidden_size))
        self.mix_logits = nn.Parameter(torch.zeros(n)) if mix == "weights" else None
        width = hidden_size if mix == "weights" else n * hidden_size
        if hidden:
            self.proj: nn.Module = nn.Sequential(nn.Linear(width, hidden), nn.GELU(), nn.Linear(hidden, out_dim))
        else:
            self.proj = nn.Linear(width, out_dim)

    def set_standardization(self, features: torch.Tensor) -> None:
        """Fit the per-dimension mean and scale on training features ``[n, layers, hidden]``."""
        self.mean.copy_(features.mean(0))
        self.scale.copy_(features.std(0).clamp_min(1e-4) if features.shape[0] > 1 else torch.ones_like(self.scale))

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        """``[n, layers, hidden]`` -> ``[n, out_dim]`` (not normalized)."""
        x = (features.to(self.mean.dtype) - self.mean) / self.scale
        if self.mix_logits is not None:
            x = (torch.softmax(self.mix_logits, 0)[None, :, None] * x).sum(1)
        else:
            x = x.flatten(1)
        return self.proj(x)


@dataclass(frozen=True)
class HeadMeta:
    """What a saved head holds and was trained for (``query_head.json``)."""

    layers: list[int]
    hidden_size: int
    out_dim: int
    mix: str
    hidden: int
    encoder_name: str
    encoder_dim: int
    model_fingerprint: str
    system_prompt: str = DEFAULT_SYSTEM_PROMPT
    recipe: dict[str, Any] = field(default_factory=dict)
    format: str = FORMAT


class RecallQueryHead:
    """A trained :class:`QueryHead` bound to the model and encoder it was trained for.

    ``vector(hidden_states)`` turns the ``<recall>`` forward's ``hidden_states`` (the tuple of
    every layer ``[1, seq, hidden]``, as ``output_hidden_states=True`` gives it) into a unit
    vector in the encoder's space; :meth:`check` refuses another model or encoder.
    """

    def __init__(self, head: QueryHead, meta: HeadMeta) -> None:
        self.head = head.eval()
        self.meta = meta

    @property
    def encoder_name(self) -> str:
        return self.meta.encoder_name

    def check(self, model: Any = None, encoder: Any = None) -> None:
        """``ValueError`` unless ``model`` (fingerprint) and ``encoder`` (name, dimension) are the head's."""
        if model is not None:
            found = model_fingerprint(model)
            if found != self.meta.model_fingerprint:
                raise ValueError(
                    f"this query head was trained for the model with fingerprint {self.meta.model_fingerprint}, "
                    f"not this one ({found}): train a head for this model with `recall train-head`"
                )
        if encoder is not None:
            name, dim = getattr(encoder, "name", None), getattr(encoder, "dimension", None)
            if name != self.meta.encoder_name or dim != self.meta.encoder_dim:
                raise ValueError(
                    f"this query head maps into the space of the encoder {self.meta.encoder_name!r} "
                    f"({self.meta.encoder_dim} dims), not {name!r} ({dim} dims)"
                )

    @torch.no_grad()
    def vectors(self, features: torch.Tensor) -> np.ndarray:
        """Unit vectors ``[n, out_dim]`` for features ``[n, layers, hidden]``."""
        if features.ndim != 3 or tuple(features.shape[1:]) != (len(self.meta.layers), self.meta.hidden_size):
            raise ValueError(
                f"features must have shape [n, {len(self.meta.layers)}, {self.meta.hidden_size}], got {tuple(features.shape)}"
            )
        out = F.normalize(self.head(features.detach().float().cpu()), dim=-1)
        return out.numpy().astype(np.float32)

    def vector(self, hidden_states: Sequence[torch.Tensor]) -> list[float]:
        """The query vector from a forward's ``hidden_states`` at its last position."""
        n = len(hidden_states)
        if max(self.meta.layers) >= n:
            raise ValueError(f"the head reads hidden-state {max(self.meta.layers)} but the forward gave {n}")
        features = torch.stack([hidden_states[layer][0, -1] for layer in self.meta.layers])[None]
        return self.vectors(features)[0].tolist()

    def save(self, folder: str | Path) -> Path:
        """Write ``query_head.safetensors`` and ``query_head.json`` into ``folder``; returns the folder."""
        from safetensors.torch import save_file

        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        state = {k: v.detach().contiguous().cpu() for k, v in self.head.state_dict().items()}
        save_file(state, str(folder / HEAD_FILE), metadata={"format": FORMAT})
        (folder / META_FILE).write_text(json.dumps(asdict(self.meta), indent=1))
        return folder

    @classmethod
    def load(cls, folder: str | Path, model: Any = None, encoder: Any = None) -> RecallQueryHead:
        """Read a head saved by :meth:`save`; with ``model``/``encoder`` given, :meth:`check` them."""
        from safetensors.torch import load_file

        folder = Path(folder)
        if not (folder / HEAD_FILE).is_file() or not (folder / META_FILE).is_file():
            raise ValueError(f"no query head in {folder}: it needs {HEAD_FILE} and {META_FILE}")
        raw = json.loads((folder / META_FILE).read_text())
        if raw.get("format") != FORMAT:
            raise ValueError(f"{folder / META_FILE} is not a {FORMAT} head (format {raw.get('format')!r})")
        meta = HeadMeta(**raw)
        head = QueryHead(meta.hidden_size, meta.layers, meta.out_dim, meta.mix, meta.hidden)
        head.load_state_dict(load_file(str(folder / HEAD_FILE)))
        loaded = cls(head, meta)
        loaded.check(model, encoder)
        return loaded


def model_folder(name_or_path: str | Path | None, model: Any = None) -> Path | None:
    """The local folder a model was loaded from, or ``None`` for a hub name.

    With ``model`` given, the folder it was actually loaded from (``model.name_or_path``:
    for the embedded default, the recall-tuned folder or, with ``tuned=False``, the plain one);
    else ``None`` means the embedded default as ``load_model()`` gives it.
    """
    loaded = getattr(model, "name_or_path", None) if model is not None else None
    if loaded and Path(str(loaded)).expanduser().is_dir():
        return Path(str(loaded)).expanduser()
    if name_or_path is None:
        from .models import default_model_dir, tuned_model_dir

        return tuned_model_dir() or default_model_dir()
    folder = Path(name_or_path).expanduser()
    return folder if folder.is_dir() else None


def find_query_head(folder: str | Path | None, model: Any) -> RecallQueryHead | None:
    """The head saved in a model ``folder`` if there is one, checked against ``model`` (a head
    for other weights raises ``ValueError``); else ``None``."""
    if folder is None or not (Path(folder) / HEAD_FILE).is_file():
        return None
    return RecallQueryHead.load(folder, model=model)


# ---------------------------------------------------------------------- training
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
    ``recipe.seed``."""
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
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=recipe.lr, total_steps=steps, pct_start=0.1)
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
            schedule.step()
            total += float(loss.detach()) * len(batch)
        history.append(total / n)
    return head.eval(), history


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

"""A query head: the ``<recall>`` hidden states mapped into the memory encoder's space (loading and applying it).

``query_mode="hidden"`` searches with what the model holds at ``<recall>``. Compared directly
with the memories' vectors it finds little (the LM's last layer is made to predict the next
token, not to match texts); this small trained head maps the hidden states of a few layers to
the vector the memory's own encoder would give the text query, so the memory's regular dense
index answers it. Training one is :mod:`recall_core.training.head` (``recall train-head``).

Saved as ``query_head.safetensors`` and ``query_head.json`` (layers, sizes, the encoder's name
and dimension, the LM's fingerprint, the training recipe); loading it for another model or
another encoder raises ``ValueError``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from recall_core.config import DEFAULT_SYSTEM_PROMPT
from recall_core.models.lora import ADAPTER_FOLDER
from recall_core.models.lora import (
    base_fingerprint as model_fingerprint,  # dtype-independent: fp32 and bf16 alike
)

HEAD_FILE = "query_head.safetensors"
META_FILE = "query_head.json"
FORMAT = "recall-query-head/1"
#: Relative depths of the default layers (0 = embeddings, 1 = the last layer's output).
DEFAULT_DEPTHS = (0.5, 0.75, 1.0)
#: What ``query_mode="hidden"`` without a head says (the raw hidden state found too little to be offered).
NO_QUERY_HEAD = (
    "query_mode='hidden' needs a query head trained for this model (it maps the <recall> hidden state into "
    "the memory encoder's space): train one with `recall train-head --model <model folder>` (or `--out "
    "<adapter folder>`), which saves it where a RecallGenerator over that model finds it (the recall-tuned "
    "default ships one), or pass "
    "RecallGenerator(query_head=RecallQueryHead.load(folder)); else use query_mode='text'"
)


def default_layers(model: Any) -> tuple[int, ...]:
    """Hidden-state indices at :data:`DEFAULT_DEPTHS` of ``model`` (index 0 is the embeddings)."""
    n = int(model.config.num_hidden_layers)
    return tuple(sorted({max(1, int(d * n + 0.5)) for d in DEFAULT_DEPTHS}))  # SmolLM2-135M: 15, 23, 30


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
    loaded = loaded_folder(model)
    if loaded is not None:
        return loaded
    if name_or_path is None:
        from recall_core.models.loading import default_model_dir, tuned_model_dir

        return tuned_model_dir() or default_model_dir()
    folder = Path(name_or_path).expanduser()
    return folder if folder.is_dir() else None


def loaded_folder(model: Any) -> Path | None:
    """The local folder ``model``'s weights were loaded from (``model.name_or_path``), or ``None``
    (a hub name, a model built in memory, no model)."""
    loaded = getattr(model, "name_or_path", None)
    folder = Path(str(loaded)).expanduser() if loaded else None
    return folder if folder is not None and folder.is_dir() else None


def find_query_head(folder: str | Path | None, model: Any) -> RecallQueryHead | None:
    """The head saved in a model ``folder`` if there is one, checked against ``model`` (a head
    for other weights raises ``ValueError``); else ``None``."""
    if folder is None or not (Path(folder) / HEAD_FILE).is_file():
        return None
    return RecallQueryHead.load(folder, model=model)


def saved_query_head(model: Any) -> RecallQueryHead | None:
    """The head saved for ``model``'s weights, wherever it was loaded from: beside the adapter
    :func:`~recall_core.models.lora.apply_adapter` merged into it (``load_model(adapter=)``),
    else in the folder its weights came from (the recall-tuned default ships one); ``None`` if neither holds one.

    A head found there but trained for other weights raises ``ValueError`` (it is never applied).
    """
    for folder in (getattr(model, ADAPTER_FOLDER, None), loaded_folder(model)):
        head = find_query_head(folder, model)
        if head is not None:
            return head
    return None


# ---------------------------------------------------------------------- training

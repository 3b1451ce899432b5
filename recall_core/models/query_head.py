"""A query head: the ``<recall>`` hidden states mapped into the memory encoder's space (loading and applying it).

``query_mode="hidden"`` searches with what the model holds at ``<recall>``. Compared directly
with the memories' vectors it finds little (the LM's last layer is made to predict the next
token, not to match texts); this small trained head maps the hidden states of a few layers to
the vector the memory's own encoder would give the text query, so the memory's regular dense
index answers it. Training one is :mod:`recall_core.training.head` (``recall train-head``).

Saved as ``query_head.safetensors`` and ``query_head.json`` (layers, sizes, the encoder's name
and dimension, the LM's fingerprint, the training recipe, the sha256 of the weights file);
loading it for another model or another encoder raises ``ValueError``, and so does loading a
damaged pair (either file unreadable, or weights that are not those the meta was saved with),
naming the file (since 2026-12-07).
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from collections.abc import Sequence
from dataclasses import MISSING, asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from recall_core.config import DEFAULT_SYSTEM_PROMPT
from recall_core.models.lora import (
    ADAPTER_FOLDER,
    fingerprint_label,
    fingerprint_like,
    fingerprint_matches,
    json_object,
)

HEAD_FILE = "query_head.safetensors"
META_FILE = "query_head.json"
FORMAT = "recall-query-head/1"
#: The key of ``query_head.json`` that holds the sha256 of ``query_head.safetensors`` as saved with it
#: (kept out of :class:`HeadMeta`: it describes the file, not the head). Heads saved before
#: 2026-12-07 (the shipped one) have none and are not checked for it.
WEIGHTS_DIGEST = "weights_sha256"
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
        if model is not None and not fingerprint_matches(self.meta.model_fingerprint, model):
            raise ValueError(
                f"this query head was trained for the model with fingerprint {fingerprint_label(self.meta.model_fingerprint)}, "
                f"not this one ({fingerprint_label(fingerprint_like(self.meta.model_fingerprint, model))}): train a head for this model with `recall train-head`"
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
        """Write ``query_head.safetensors`` and ``query_head.json`` into ``folder``; returns the folder.

        Both are written under temporary names first and then moved in, the weights first and the
        meta last; the meta records the weights' sha256, so a save killed between the two moves
        leaves new weights that :meth:`load` refuses beside the old meta, never a silent mix. An
        old meta without that digest is removed before the weights are replaced, for the same reason.
        """
        from safetensors.torch import save as to_bytes

        folder = Path(folder).expanduser()
        folder.mkdir(parents=True, exist_ok=True)
        state = {k: v.detach().contiguous().cpu() for k, v in self.head.state_dict().items()}
        weights = to_bytes(state, metadata={"format": FORMAT})
        record = {**asdict(self.meta), WEIGHTS_DIGEST: hashlib.sha256(weights).hexdigest()}
        token = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"  # two saves at once stage apart
        staged = {name: folder / f".{name}.{token}.tmp" for name in (HEAD_FILE, META_FILE)}
        try:
            _write_synced(staged[HEAD_FILE], weights)
            _write_synced(staged[META_FILE], json.dumps(record, indent=1).encode())
            if (folder / META_FILE).is_file() and not _has_digest(folder / META_FILE):
                (folder / META_FILE).unlink()
            os.replace(staged[HEAD_FILE], folder / HEAD_FILE)
            os.replace(staged[META_FILE], folder / META_FILE)
        finally:
            for path in staged.values():
                path.unlink(missing_ok=True)
        return folder

    @classmethod
    def load(cls, folder: str | Path, model: Any = None, encoder: Any = None) -> RecallQueryHead:
        """Read a head saved by :meth:`save`; with ``model``/``encoder`` given, :meth:`check` them.

        Raises:
            ValueError: no head there; a damaged ``query_head.json`` (not JSON, another format,
                fields missing or of the wrong type) or ``query_head.safetensors`` (truncated,
                not the weights the meta was saved with, not of the meta's sizes, NaN or infinite
                values), naming the file; or a head for another model or encoder (:meth:`check`).
        """
        from safetensors import SafetensorError
        from safetensors.torch import load as from_bytes

        folder = Path(folder).expanduser()
        head_file, meta_file = folder / HEAD_FILE, folder / META_FILE
        if not head_file.is_file() or not meta_file.is_file():
            alone = head_file if head_file.is_file() else meta_file if meta_file.is_file() else None
            why = f" ({alone} is there without the other: a save was interrupted?)" if alone else ""
            raise ValueError(f"no query head in {folder}: it needs {HEAD_FILE} and {META_FILE}{why}")
        meta, digest = _read_meta(meta_file)
        data = head_file.read_bytes()
        if digest is not None and hashlib.sha256(data).hexdigest() != digest:
            raise ValueError(f"{head_file} is not the weights {meta_file} was saved with (its sha256 differs): the "
                             "file is damaged, or a save was interrupted; train the head again with `recall train-head`")  # fmt: skip
        try:
            state = from_bytes(data)
        except SafetensorError as error:
            raise ValueError(f"{head_file} is damaged (truncated or not a safetensors file): {error}") from None
        for key, tensor in state.items():
            if tensor.is_floating_point() and not bool(torch.isfinite(tensor).all()):
                raise ValueError(f"{head_file} is damaged: tensor {key!r} holds NaN or infinite values")
        try:
            head = QueryHead(meta.hidden_size, meta.layers, meta.out_dim, meta.mix, meta.hidden)
        except ValueError as error:
            raise ValueError(f"{meta_file} is damaged: {error}") from None
        try:
            head.load_state_dict(state)
        except RuntimeError as error:
            why = str(error).replace("\n", " ")
            raise ValueError(f"{head_file} does not fit {meta_file} (layers, sizes, mix): {why}") from None
        loaded = cls(head, meta)
        loaded.check(model, encoder)
        return loaded


#: The fields of ``query_head.json`` and the types they must have.
_META_TYPES: dict[str, type | tuple[type, ...]] = {
    "layers": list, "hidden_size": int, "out_dim": int, "mix": str, "hidden": int, "encoder_name": str,
    "encoder_dim": int, "model_fingerprint": str, "system_prompt": str, "recipe": dict, "format": str,
}  # fmt: skip


def _read_meta(meta_file: Path) -> tuple[HeadMeta, str | None]:
    """The :class:`HeadMeta` in ``meta_file`` and the weights' digest it records (``None``: saved before there was one)."""
    raw = json_object(meta_file)
    if raw.get("format") != FORMAT:
        raise ValueError(f"{meta_file} is not a {FORMAT} head (format {raw.get('format')!r})")
    digest = raw.pop(WEIGHTS_DIGEST, None)
    if digest is not None and not isinstance(digest, str):
        raise ValueError(f"{meta_file} is damaged: {WEIGHTS_DIGEST} must be a hex string, got {digest!r}")
    unknown = sorted(set(raw) - set(_META_TYPES))
    required = {f.name for f in fields(HeadMeta) if f.default is MISSING and f.default_factory is MISSING}
    missing = sorted(required - set(raw))
    if unknown or missing:
        raise ValueError(f"{meta_file} is damaged: fields missing {missing}, unknown {unknown}")
    for key, value in raw.items():
        kind = _META_TYPES[key]
        if isinstance(value, bool) or not isinstance(value, kind) or (key == "layers" and not all(
                isinstance(v, int) and not isinstance(v, bool) for v in value)):  # fmt: skip
            raise ValueError(f"{meta_file} is damaged: {key} must be a {getattr(kind, '__name__', kind)}, got {value!r}")
    return HeadMeta(**raw), digest


def _has_digest(meta_file: Path) -> bool:
    try:
        return isinstance(json.loads(meta_file.read_text()).get(WEIGHTS_DIGEST), str)
    except (ValueError, AttributeError, OSError):  # damaged or not an object: no digest to trust
        return False


def _write_synced(path: Path, data: bytes) -> None:
    with path.open("wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


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

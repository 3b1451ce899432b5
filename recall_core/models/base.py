"""The base model a recall-tuned model was made from, for the replies that read no notes.

A recall adapter is trained to decide when to recall and to read the notes it is given; a reply
that reads none (no memory attached, or a turn the engine decided not to recall for) is then
written by weights tuned for another job. ``RecallConfig.base_replies`` gives such replies to
the base model instead (docs/configuration.md). :func:`recall_core.load_model` records how to
load that model on the recall-tuned one it returns (:func:`remember_base`); it is loaded once,
on the first reply that needs it (:func:`base_model_of`), and shared by every generator of
that model.

That model is not loaded again: :func:`without_adapter` makes it from the tuned one, sharing every
weight, with the adapter's LoRA applied at scale -1 (the merged weights less the adapter's
product are the base's, to float rounding). It costs the adapter's few MB instead of a second
copy of the model (about 1 GB resident for the 135M default), and no second load.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

__all__ = ["BASE_LOADER", "base_model_of", "remember_base", "without_adapter"]

#: The attribute :func:`remember_base` sets on a recall-tuned model: a function that loads its base model.
BASE_LOADER = "recall_base_loader"
_LOADED = "_recall_base_model"
_LOCK = threading.Lock()


def remember_base(model: Any, loader: Callable[[], Any]) -> None:
    """Record on ``model`` (recall-tuned) how to load the model it was made from; nothing is loaded now."""
    setattr(model, BASE_LOADER, loader)


def base_model_of(model: Any) -> Any | None:
    """The base model of the recall-tuned ``model``, loaded on the first call and kept on ``model``;
    ``None`` when nothing was recorded (a model not loaded by :func:`recall_core.load_model` with
    its adapter: pass ``base_model=`` to the generator instead)."""
    loaded = getattr(model, _LOADED, None)
    if loaded is not None:
        return loaded
    loader = getattr(model, BASE_LOADER, None)
    if loader is None:
        return None
    with _LOCK:  # two threads' first gated replies load it once
        loaded = getattr(model, _LOADED, None)
        if loaded is None:
            loaded = loader()
            # Not setattr: a torch module set on a module becomes its submodule, and the tuned model's
            # parameters, state_dict and fingerprint (which the query head checks) would take it in.
            object.__setattr__(model, _LOADED, loaded)
    return loaded


def without_adapter(model: Any, adapter: str | Path) -> Any:
    """The model ``model`` was made from by merging the recall adapter at ``adapter``: ``model``'s
    module tree copied with every parameter and buffer shared, and the adapter's LoRA layers
    (peft) wrapped around its projections at scale -1, so that each computes ``W'x - s·BAx = Wx``.

    Only the adapter's factors are new memory. ``model`` itself is not changed, and both can run
    at once from different threads. The rows the adapter trained for the recall tokens
    (``trainable_token_indices``) are given back their untrained values
    (:func:`recall_core.tokens.add_recall_tokens`' start) in the copy's input embedding and, when
    the output head is tied to it, in its logits.
    """
    from peft import LoraConfig, PeftModel
    from peft.tuners.lora import LoraLayer

    from recall_core.models.lora import ADAPTER_FOLDER

    # The recall tokens' rows are left out: peft would rebuild the whole embedding on every forward.
    config = LoraConfig.from_pretrained(str(adapter))
    trained_rows = [int(i) for i in config.trainable_token_indices or []]
    config.trainable_token_indices = None
    shared = {id(tensor): tensor for tensor in (*model.parameters(), *model.buffers())}
    clone = copy.deepcopy(model, memo=shared)  # the modules are new, every tensor is model's
    # transformers keeps a compiled __call__ of the tuned model on it: the copy must not call that
    for tuned_only in (BASE_LOADER, _LOADED, ADAPTER_FOLDER, "_compiled_call", "_last_compile_config"):
        if tuned_only in vars(clone):
            delattr(clone, tuned_only)
    wrapped = PeftModel.from_pretrained(clone, str(adapter), config=config, is_trainable=False)
    layers = [module for module in wrapped.modules() if isinstance(module, LoraLayer)]
    if not layers:
        raise ValueError(f"the adapter in {adapter} has no LoRA layers for this model: it cannot be taken out")
    for layer in layers:
        for name in layer.scaling:
            layer.set_scale(name, -1.0)
    base = wrapped.get_base_model().eval()
    _untrain_rows(base, trained_rows)
    return base


class _RowsAsBefore(torch.nn.Module):
    """An embedding (``columns=False``) or a tied output head (``columns=True``) whose ``ids`` read
    ``rows`` instead of the shared weight's: the values the adapter trained them from."""

    def __init__(self, inner: torch.nn.Module, ids: torch.Tensor, rows: torch.Tensor, *, columns: bool) -> None:
        super().__init__()
        self.inner, self.columns = inner, columns
        self.register_buffer("ids", ids, persistent=False)
        self.register_buffer("rows", rows, persistent=False)

    @property
    def weight(self) -> torch.Tensor:  # what transformers reads (tying, sizes): the shared weight
        return self.inner.weight

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.inner(x)
        if self.columns:  # logits: the recall tokens' columns from their untrained rows
            out[..., self.ids] = x @ self.rows.to(x.dtype).T
            return out
        hits = x.unsqueeze(-1) == self.ids
        rows = self.rows[hits.int().argmax(-1)]
        # torch.where, not a test of any hit: no device-to-host sync at every decoded token
        return torch.where(hits.any(-1, keepdim=True), rows.to(out.dtype), out)


def _untrain_rows(model: Any, ids: list[int]) -> None:
    """Give the recall tokens' rows of ``model`` (a copy sharing a tuned model's weights) their
    values before training: the mean known embedding for ``<recall>``, a short vector along it for
    ``<|memory_pad|>`` (as :func:`~recall_core.tokens.add_recall_tokens` starts them)."""
    if not ids:
        return
    from recall_core.tokens import starting_rows

    embeddings = model.get_input_embeddings()
    weight = embeddings.weight
    recall_id = getattr(model.config, "recall_token_id", None)
    pad_id = getattr(model.config, "memory_pad_token_id", None)
    with torch.no_grad():
        # the rows before both recall tokens, as add_recall_tokens reads them
        known = min(recall_id, pad_id) if recall_id is not None and pad_id is not None else min(ids)
        recall_row, pad_row = starting_rows(weight[:known])
        rows = torch.stack([recall_row if i == recall_id else pad_row if i == pad_id else weight[i] for i in ids])
    index = torch.tensor(ids, device=weight.device)
    # An embedding that scales what it reads (transformers' ScaledWordEmbedding: Gemma's) reads these
    # rows scaled too: scaled once here, not at every forward. The tied head's logits take them unscaled.
    scaled = rows * getattr(embeddings, "embed_scale", 1.0)
    model.set_input_embeddings(_RowsAsBefore(embeddings, index, scaled, columns=False))
    output = model.get_output_embeddings()
    if output is not None and output.weight.data_ptr() == weight.data_ptr():  # tied: the logits too
        model.set_output_embeddings(_RowsAsBefore(output, index, rows, columns=True))

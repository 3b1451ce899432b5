"""The base model a recall-tuned model was made from, for the replies that read no notes.

A recall adapter is trained to decide when to recall and to read the notes it is given; a reply
that reads none (no memory attached, or a turn the engine decided not to recall for) is then
written by weights tuned for another job. ``RecallConfig.base_replies`` gives such replies to
the base model instead (docs/configuration.md). :func:`recall_core.load_model` records how to
load that model on the recall-tuned one it returns (:func:`remember_base`); it is loaded once,
on the first reply that needs it (:func:`base_model_of`), and shared by every generator of
that model.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

__all__ = ["BASE_LOADER", "base_model_of", "remember_base"]

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
            setattr(model, _LOADED, loaded)
    return loaded

"""A trained recall adapter's layers and folder: which linear layers it covers, where it may be
written, and saving it (float16 LoRA weights and their meta, moved into place whole).

Reading, checking and applying adapters is the runtime's job (:mod:`recall_core.models.lora`).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import torch

from recall_core.models.lora import META_FILE, WEIGHTS_FILE

#: Linear layers of Llama/Qwen/Mistral/Gemma-style blocks: the targets of the shipped recipe.
#: A model that lacks any of them (GPT-2's ``c_attn``, Phi-3's fused ``qkv_proj``) gets peft's
#: ``"all-linear"`` instead, so that every linear layer is adapted there too.
DEFAULT_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
ALL_LINEAR = "all-linear"


def _linear_layers(model: Any) -> list[str]:
    """The full names of ``model``'s linear layers as peft adapts them (``nn.Linear`` and
    transformers' ``Conv1D``), less the output head (peft's ``"all-linear"`` leaves it out too)."""
    from transformers.pytorch_utils import Conv1D

    head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    return [name for name, module in model.named_modules()
            if isinstance(module, (torch.nn.Linear, Conv1D)) and module is not head]  # fmt: skip


def lora_targets(model: Any, targets: Sequence[str]) -> tuple[str | list[str], list[str]]:
    """peft's ``target_modules`` for ``targets`` on ``model``, and the (last) names of the layers they cover.

    :data:`DEFAULT_TARGETS` stay as they are where the model has every one of them, else become
    ``"all-linear"``; ``("all-linear",)`` is every linear layer but the output head; any other
    names must each name a linear layer (peft's matching: the module's name or its last parts).
    Checked before any data is built: until 2026-12-07 a GPT-2 failed after the whole data step
    ("Target modules ... not found") and a Phi-3 got adapters on two of its four kinds of layer.

    Raises:
        ValueError: a name covers no linear layer of ``model``, or it has none.
    """
    layers = _linear_layers(model)
    kinds = sorted({name.rsplit(".", 1)[-1] for name in layers})
    if not layers:
        raise ValueError("targets: the model has no linear layer to put LoRA adapters on")

    def covered(name: str) -> list[str]:
        return [layer for layer in layers if layer == name or layer.endswith(f".{name}")]

    names = tuple(targets)
    if names == (ALL_LINEAR,) or (names == DEFAULT_TARGETS and not all(covered(n) for n in names)):
        return ALL_LINEAR, kinds
    missing = [n for n in names if not covered(n)]
    if missing:
        raise ValueError(f"targets {', '.join(missing)} name no linear layer of this model (its linear layers: "
                         f"{', '.join(kinds)}; or 'all-linear')")  # fmt: skip
    return list(names), sorted({layer.rsplit(".", 1)[-1] for n in names for layer in covered(n)})


def check_out(out: str | Path, *, name: str = "out", model_folder: str | Path | None = None) -> Path:
    """Refuse an adapter folder that training would destroy or could not write, before any work.

    ``out`` may be missing, an empty folder, or a recall adapter's folder (it holds ``META_FILE``:
    a re-train replaces it whole); not a file or any other folder, and neither the folder of the
    base model (``model_folder``) nor a folder inside or around it. Its parent is created and a
    staging folder made and removed there, so a folder that cannot be written is refused now, not
    after the training. Until 2026-12-07 whatever was at ``out`` was deleted after the run.

    Raises:
        ValueError: naming ``name`` (the argument or option) and what is there.
    """
    folder = _absolute(out)
    if model_folder is not None and Path(model_folder).expanduser().is_dir():
        model_path, out_path = Path(model_folder).expanduser().resolve(), folder.resolve()
        if out_path == model_path or model_path in out_path.parents or out_path in model_path.parents:
            raise ValueError(f"{name} {folder} is, or is inside or around, the model's folder {model_folder}: "
                             "give the adapter a folder of its own")  # fmt: skip
    if folder.is_symlink():
        raise ValueError(f"{name} {folder} is a symbolic link: give the folder itself (a new one or a recall adapter's)")
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"{name} {folder} is a file, not a folder: give a new folder or a recall adapter's")
    if folder.is_dir() and not (folder / META_FILE).is_file():
        held = sorted(p.name for p in folder.iterdir())
        if held:
            raise ValueError(f"{name} {folder} is a folder that is not a recall adapter (it holds {_shown(held)}; an "
                             f"adapter's holds {META_FILE}): give a new or empty folder, nothing there is replaced")  # fmt: skip
    if folder.is_dir():
        # An adapter's folder holds files only: one that holds folders too holds other things (until
        # 2026-12-07 `adapters/` itself, with every other adapter in it, was replaced whole, a reviewer found).
        inner = sorted(p.name for p in folder.iterdir() if p.is_dir())
        if inner:
            raise ValueError(f"{name} {folder} holds a recall adapter and also the folders {_shown(inner)}, which a "
                             "re-train would delete: give the adapter a folder of its own")  # fmt: skip
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        probe = Path(tempfile.mkdtemp(prefix=_staging_prefix(folder), dir=folder.parent))
        with contextlib.suppress(FileNotFoundError):  # a save beside it may have taken it for a dead run's
            probe.rmdir()
    except OSError as error:
        raise ValueError(f"{name} {folder} cannot be written: {error}") from error
    return folder


def _shown(names: list[str]) -> str:
    return ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")


def _absolute(path: str | Path) -> Path:
    """``path`` with ``~`` expanded, made absolute: ``.`` has a name then, and the folder checked is
    the folder written (until 2026-12-07 ``~/x`` was checked in the home folder and written to ``./~/x``)."""
    return Path(os.path.abspath(Path(path).expanduser()))


def _staging_prefix(folder: Path) -> str:
    """The start of a staging folder's name: marked as recall's, so that no folder of the user's
    (a ``.NAME-20261207`` backup) is ever taken for a dead run's."""
    return f".{folder.name}.recall-staging-"


def _replaced(folder: Path) -> Path:
    """Where the previous folder waits while the new one moves in."""
    return folder.with_name(f".{folder.name}.recall-replaced")


def _staging_names(folder: Path) -> re.Pattern[str]:
    """The names of :func:`replace_folder`'s staging folders: the prefix and ``tempfile.mkdtemp``'s
    eight letters, digits or ``_``."""
    return re.compile(re.escape(_staging_prefix(folder)) + r"[a-z0-9_]{8}")


@contextlib.contextmanager
def _locked(parent: Path) -> Iterator[None]:
    """Hold an exclusive lock on the folder ``parent`` (the folder's own inode: no lock file is
    left behind), so that saves beside each other run one at a time and any staging folder found
    while it is held is a dead run's. Where the platform has no ``flock``, no lock."""
    try:
        import fcntl
    except ImportError:  # Windows
        yield
        return
    handle = os.open(parent, os.O_RDONLY)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        os.close(handle)  # releases the lock


def _remove_stale(folder: Path) -> None:
    """What a run killed while saving ``folder`` left: its staging folder (removed) and, where it was
    killed between the two renames, the previous folder as ``.NAME.recall-replaced`` (put back first)."""
    old = _replaced(folder)
    if not folder.exists() and old.is_dir() and not old.is_symlink():
        old.rename(folder)
    names = _staging_names(folder)
    for entry in folder.parent.iterdir():
        if names.fullmatch(entry.name) and entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)


def replace_folder(path: str | Path, write: Callable[[Path], None]) -> Path:
    """Fill ``path`` whole: ``write(staging)`` fills a sibling folder, which then takes ``path``'s place.

    A run failing inside ``write`` leaves whatever was at ``path`` as it was and no staging folder
    behind; files of an older folder at ``path`` never mix with the new ones. A run killed (SIGKILL)
    leaves its hidden staging folder, which the next save of ``path`` removes (since 2026-12-07).
    ``path`` is replaced whatever it holds: callers check it first (:func:`check_out`).
    """
    folder = _absolute(path)
    folder.parent.mkdir(parents=True, exist_ok=True)
    with _locked(folder.parent):
        _remove_stale(folder)
        staging = Path(tempfile.mkdtemp(prefix=_staging_prefix(folder), dir=folder.parent))
        try:
            write(staging)
            old = _replaced(folder)
            if folder.exists():
                shutil.rmtree(old, ignore_errors=True)
                folder.rename(old)
            staging.rename(folder)
            shutil.rmtree(old, ignore_errors=True)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    return folder


def save_adapter(peft_model: Any, path: str | Path, meta: dict[str, Any],
                 extra: dict[str, str] | None = None) -> Path:
    """Save a trained peft model's adapter in ``path`` (float16 weights) with ``meta``.

    ``extra`` maps further file names to their text (the training log). Everything is written
    into a sibling folder first and moved into place at the end (:func:`replace_folder`), so a
    run killed while saving never leaves a half-written adapter under ``path`` (an older adapter
    there stays whole until the new one replaces it). ``path`` is checked as :func:`check_out`
    checks it (a file or a folder of other things is refused, not replaced).
    """
    from safetensors.torch import load_file, save_file

    check_out(path)

    def write(staging: Path) -> None:
        # Only the adapters and the trained token rows: peft would also save both whole embedding
        # matrices (~113 MB) because the vocabulary grew by the two recall tokens.
        peft_model.save_pretrained(str(staging), safe_serialization=True, save_embedding_layers=False)
        weights = staging / WEIGHTS_FILE
        tensors = {k: v.to(torch.float16).contiguous() for k, v in load_file(str(weights)).items()}
        save_file(tensors, str(weights), metadata={"format": "pt"})
        (staging / "README.md").unlink(missing_ok=True)  # peft's empty model card template
        for name, text in (extra or {}).items():
            (staging / name).write_text(text)
        (staging / META_FILE).write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")

    return replace_folder(path, write)

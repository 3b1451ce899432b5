"""Applying a recall adapter: LoRA weights (peft, safetensors) checked against the base model they are for.

An adapter is a folder with peft's ``adapter_config.json`` and ``adapter_model.safetensors``
(stored in float16: a few MB) and ``recall_adapter.json``: the fingerprint of the base model
it was trained on, the recall token ids, and the recipe. It is applied only to that base
model: :func:`check_adapter` refuses any other, so an adapter is never silently applied to a
model it was not trained for. Every file is checked before the model is touched: a damaged,
truncated or hand-edited one (unreadable, tensors missing or left over, another rank, NaN or
infinite weights) is a ``ValueError`` naming the file and what is wrong (since 2026-12-07;
before, some went through as raw library errors and some loaded into a broken model).
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import logging
import math
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import torch

from recall_core.tokens import MEMORY_PAD_TOKEN, RECALL_TOKEN

logger = logging.getLogger(__name__)

META_FILE = "recall_adapter.json"
WEIGHTS_FILE = "adapter_model.safetensors"
CONFIG_FILE = "adapter_config.json"
_CONFIG_NOISE = ("transformers_version", "name_or_path", "_name_or_path", "_model_name_or_path", "_commit_hash",
                 "torch_dtype", "dtype", "use_cache", "architectures")  # fmt: skip

#: Flags a load sets for what the forward pass returns, not the weights: hashed at their defaults, so
#: a model loaded with ``output_attentions=True`` (to look at attentions) or ``output_hidden_states=True``
#: is the same base (until 2026-12-07 its adapter and the shipped head were refused, a reviewer). Set
#: to the defaults rather than left out, so the fingerprints adapters and heads record stay as they were.
_RUNTIME_DEFAULTS = {"output_attentions": False, "output_hidden_states": False, "return_dict": True}


def _hashed_config(model: Any) -> dict[str, Any]:
    """``model``'s config as a fingerprint hashes it: without :data:`_CONFIG_NOISE`, the runtime flags at their defaults."""
    config = {k: v for k, v in model.config.to_dict().items() if k not in _CONFIG_NOISE}
    config.update({k: v for k, v in _RUNTIME_DEFAULTS.items() if k in config})
    return config


# ---------------------------------------------------------------------- the base model's fingerprint

#: The prefix of a fingerprint in the current format (:func:`base_fingerprint`). One without it is the
#: first format (five sampled tensors' bytes at bfloat16), still checked as it was for the adapters
#: and heads that record it: the shipped ones do.
FINGERPRINT_FORMAT = "recall-fp2"
#: Elements sampled from each parameter, strided (all of a smaller one).
_SAMPLE = 16384
#: How far the log2 of a parameter's root mean square may move between two loads of the same weights
#: in different precisions (float16 against float32: at most 0.001 for SmolLM2-135M, the rounding of
#: the stored value) and still be the same base: 0.7% of the scale.
_SCALE_TOLERANCE = 0.01
#: Dtypes whose values round to bfloat16 exactly as float32's do: two loads in them agree bit for bit.
_EXACT_DTYPES = (torch.float32, torch.float64, torch.bfloat16)


def base_fingerprint(model: Any) -> str:
    """A fingerprint of ``model``'s architecture and of every one of its weight tensors; compare
    one with :func:`fingerprint_matches`, not with ``==``.

    From each parameter a fixed strided sample (up to 16,384 elements) gives three things: its
    values at bfloat16 precision (hashed), their signs (hashed) and its root mean square (kept).
    The same weights loaded in float32 or bfloat16 give the very same string. Loaded in float16
    they round differently: the signs and the scales agree, the bfloat16 hash need not, and the
    string says so (``:h:``), and :func:`fingerprint_matches` compares signs and scales then. A
    model tuned in any layer flips signs there (a random change of 0.1% of a tensor's size flips
    about 5 of 16,384 samples; of 1%, about 50) or moves its scale.

    Why not the first format: it read five tensors (a fine-tune of the other layers passed) and
    compared exact bytes (the same model loaded in float16 was "another base model").
    """
    config = _hashed_config(model)
    architecture = json.dumps([type(model).__name__, config], sort_keys=True, default=str).encode()
    exact, signs = hashlib.sha256(architecture), hashlib.sha256(architecture)
    scales, precise = [], True
    skipped = _recall_rows(model)
    for name, param in model.named_parameters():
        sample = _sample(param, skipped.get(id(param), ()))
        rounded = sample.to(torch.bfloat16)
        label = f"{name}{tuple(param.shape)}".encode()
        exact.update(label)
        exact.update(rounded.view(torch.int16).cpu().numpy().tobytes())
        signs.update(label)  # rounding keeps a sign, even to zero (-0.0): the same in any precision
        signs.update(np.packbits(torch.signbit(sample.float()).cpu().numpy()).tobytes())
        values = rounded.float().cpu().numpy().astype(np.float64)
        rms = math.sqrt(float(np.mean(values * values))) if values.size else 0.0
        scales.append(round(1024 * max(-31.0, min(31.0, math.log2(rms) if rms > 0 else -31.0))))
        precise = precise and (not param.is_floating_point() or param.dtype in _EXACT_DTYPES)
    packed = base64.urlsafe_b64encode(np.asarray(scales, dtype="<i2").tobytes()).decode().rstrip("=")
    return ":".join((FINGERPRINT_FORMAT, "x" if precise else "h", exact.hexdigest()[:40], signs.hexdigest()[:40], packed))


def _recall_rows(model: Any) -> dict[int, tuple[int, ...]]:
    """The recall tokens' rows of the input and output embeddings, by parameter id: left out of the
    sample because :func:`recall_core.tokens.add_recall_tokens` makes them at load time, in the
    dtype the model is loaded in (float32 and bfloat16 loads differ in the last bit there) and, for
    an untied output head that had to grow, at random."""
    ids = tuple(i for i in (getattr(model.config, "recall_token_id", None), getattr(model.config, "memory_pad_token_id", None))
                if isinstance(i, int) and not isinstance(i, bool))  # fmt: skip
    rows: dict[int, tuple[int, ...]] = {}
    for getter in ("get_input_embeddings", "get_output_embeddings"):
        try:
            layer = getattr(model, getter)()
        except (AttributeError, NotImplementedError):
            continue
        weight = getattr(layer, "weight", None)
        if ids and isinstance(weight, torch.Tensor) and weight.ndim == 2:
            rows[id(weight)] = ids
    return rows


def _sample(param: torch.Tensor, skipped_rows: tuple[int, ...]) -> torch.Tensor:
    """Up to :data:`_SAMPLE` elements of ``param`` at a fixed stride, less those in ``skipped_rows``."""
    flat = param.detach().reshape(-1)
    step = max(1, flat.numel() // _SAMPLE)
    if not skipped_rows:
        return flat[::step][:_SAMPLE]
    index = torch.arange(0, flat.numel(), step, device=flat.device)[:_SAMPLE]
    keep = ~torch.isin(index // param.shape[1], torch.tensor(skipped_rows, device=flat.device))
    return flat[index[keep]]


def legacy_fingerprint(model: Any) -> str:
    """The first fingerprint format (until 2026-12-07): five sampled tensors hashed at bfloat16.

    Still computed to check an adapter or head that records one (the shipped adapter and head do):
    those are checked exactly as before, float16 loads refused included.
    """
    config = _hashed_config(model)
    digest = hashlib.sha256(json.dumps([type(model).__name__, config], sort_keys=True, default=str).encode())
    params = list(model.named_parameters())
    for index in sorted({0, 1, len(params) // 2, len(params) - 2, len(params) - 1} & set(range(len(params)))):
        name, param = params[index]
        flat = param.detach().reshape(-1)
        sample = flat[:: max(1, flat.numel() // 4096)][:4096]
        digest.update(f"{name}{tuple(param.shape)}".encode())
        digest.update(sample.to(torch.bfloat16).view(torch.int16).cpu().numpy().tobytes())
    return digest.hexdigest()[:40]


def fingerprint_matches(recorded: Any, model: Any) -> bool:
    """Whether ``model`` has the weights whose fingerprint ``recorded`` is (either format).

    The current format: the architecture and every tensor's sign hash must agree; then the
    bfloat16 hash too when both were taken in float32 or bfloat16 (they agree bit for bit there),
    else every tensor's scale within 0.7% (float16 rounds differently). The first format: equal
    to :func:`legacy_fingerprint` of ``model``.
    """
    if not isinstance(recorded, str) or not recorded:
        return False
    if not recorded.startswith(FINGERPRINT_FORMAT + ":"):
        return recorded == legacy_fingerprint(model)
    found = base_fingerprint(model)
    if recorded == found:
        return True
    theirs, ours = _parts(recorded), _parts(found)
    if theirs is None or ours is None or theirs[3] != ours[3]:  # the architecture or a sign
        return False
    if theirs[1] == ours[1] == "x":
        return False  # both exact, and the bfloat16 hashes differ (else the strings were equal)
    a, b = _scales(theirs[4]), _scales(ours[4])
    return a is not None and b is not None and a.shape == b.shape and bool(np.all(np.abs(a - b) <= 1024 * _SCALE_TOLERANCE))


def fingerprint_like(recorded: Any, model: Any) -> str:
    """``model``'s fingerprint in the format of ``recorded`` (for a message that sets them side by side)."""
    current = isinstance(recorded, str) and recorded.startswith(FINGERPRINT_FORMAT + ":")
    return base_fingerprint(model) if current or not isinstance(recorded, str) else legacy_fingerprint(model)


def fingerprint_label(fingerprint: Any) -> str:
    """A short form of a fingerprint for messages (the current format's scales left out)."""
    parts = _parts(fingerprint) if isinstance(fingerprint, str) else None
    return f"{parts[0]}:{parts[1]}:{parts[2][:12]}" if parts else str(fingerprint)


def _parts(fingerprint: str) -> list[str] | None:
    parts = fingerprint.split(":")
    return parts if len(parts) == 5 and parts[0] == FINGERPRINT_FORMAT and parts[1] in ("x", "h") else None


def _scales(packed: str) -> np.ndarray | None:
    try:
        raw = base64.urlsafe_b64decode(packed + "=" * (-len(packed) % 4))
    except ValueError:
        return None
    return np.frombuffer(raw, dtype="<i2").astype(np.int32) if len(raw) % 2 == 0 else None


# ---------------------------------------------------------------------- the adapter's files


def read_meta(path: str | Path) -> dict[str, Any]:
    """The ``recall_adapter.json`` of the adapter folder ``path`` (``~`` expanded).

    Raises:
        ValueError: not an adapter folder, or the file is damaged (not a JSON object, no
            ``base_fingerprint``, token ids that are not integers), naming the file.
    """
    folder = Path(path).expanduser()
    meta_file = folder / META_FILE
    if not meta_file.is_file() or not (folder / WEIGHTS_FILE).is_file():
        raise ValueError(f"{folder} is not a recall adapter: it needs {META_FILE} and {WEIGHTS_FILE} (from `recall train`)")
    meta = json_object(meta_file)
    if not isinstance(meta.get("base_fingerprint"), str) or not meta["base_fingerprint"]:
        raise ValueError(f"{meta_file} is damaged: base_fingerprint must be the base model's fingerprint (a string), "
                         f"got {meta.get('base_fingerprint')!r}")  # fmt: skip
    for key in ("recall_token_id", "memory_pad_token_id"):
        if isinstance(meta.get(key), bool) or not isinstance(meta.get(key), int):
            raise ValueError(f"{meta_file} is damaged: {key} must be a token id (an int), got {meta.get(key)!r}")
    return meta


def json_object(file: Path) -> dict[str, Any]:
    """The JSON object in ``file``; ``ValueError`` naming the file where it is not JSON or not an object."""
    try:
        value = json.loads(file.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ValueError(f"{file} is damaged: {error}") from None
    if not isinstance(value, dict):
        raise ValueError(f"{file} is damaged: it holds a JSON {type(value).__name__}, not an object")
    return value


def read_config(path: str | Path) -> dict[str, Any]:
    """peft's ``adapter_config.json`` of the adapter folder ``path``, checked to be a LoRA config.

    Raises:
        ValueError: missing or damaged (not JSON, not an object, not LoRA, ``r`` not an int >= 1,
            no ``target_modules``), naming the file.
    """
    config_file = Path(path).expanduser() / CONFIG_FILE
    if not config_file.is_file():
        raise ValueError(f"{config_file} is missing: an adapter folder needs it beside {WEIGHTS_FILE} (from `recall train`)")
    config = json_object(config_file)
    if config.get("peft_type") != "LORA":
        raise ValueError(f"{config_file} is not a LoRA adapter's config: peft_type must be 'LORA', got {config.get('peft_type')!r}")
    rank = config.get("r")
    if isinstance(rank, bool) or not isinstance(rank, int) or rank < 1:
        raise ValueError(f"{config_file} is damaged: r must be an int >= 1 (the LoRA rank), got {rank!r}")
    if not config.get("target_modules"):
        raise ValueError(f"{config_file} is damaged: target_modules must name the layers the adapter changes, "
                         f"got {config.get('target_modules')!r}")  # fmt: skip
    return config


def read_weights(path: str | Path) -> dict[str, torch.Tensor]:
    """The tensors of the adapter folder ``path``'s ``adapter_model.safetensors``, on the CPU.

    Raises:
        ValueError: unreadable (truncated, empty, not safetensors), no tensors, a tensor that is
            not floating point, or NaN / infinite values, naming the file (and the tensor).
    """
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    weights_file = Path(path).expanduser() / WEIGHTS_FILE
    try:
        weights = load_file(str(weights_file))
    except (SafetensorError, OSError) as error:
        raise ValueError(f"{weights_file} is damaged (truncated or not a safetensors file): {error}") from None
    if not weights:
        raise ValueError(f"{weights_file} is damaged: it holds no tensors")
    for key, tensor in weights.items():
        if not tensor.is_floating_point():
            raise ValueError(f"{weights_file} is damaged: tensor {key!r} is {tensor.dtype}, not floating point")
        bad = int((~torch.isfinite(tensor)).sum())
        if bad:
            raise ValueError(f"{weights_file} is damaged: tensor {key!r} holds {bad} NaN or infinite values "
                             f"of {tensor.numel()}; applying it would make the model's output NaN")  # fmt: skip
    return weights


def expected_tensors(model: Any, path: str | Path) -> dict[str, tuple[int, ...]] | None:
    """The tensor names and shapes peft needs to apply the adapter at ``path`` (its config) to
    ``model``, from a copy of the model's architecture on the ``meta`` device (no memory, and
    ``model`` is not touched); ``None`` where that copy cannot be built (a warning says so)."""
    from peft import PeftConfig, PeftModel
    from peft.utils import get_peft_model_state_dict

    folder = Path(path).expanduser()
    try:
        config = PeftConfig.from_pretrained(str(folder))
    except (TypeError, ValueError, KeyError) as error:
        raise ValueError(f"{folder / CONFIG_FILE} is damaged: peft cannot read it ({error})") from None
    with warnings.catch_warnings(), torch.device("meta"):
        warnings.simplefilter("ignore")  # a throwaway copy's warnings are not the user's
        try:
            skeleton = type(model)(copy.deepcopy(model.config))
            wrapped = PeftModel(skeleton, config)
        except ValueError as error:  # peft's word for a config that names layers this model lacks
            raise ValueError(f"{folder / CONFIG_FILE} does not fit this model: {error}") from None
        except Exception as error:  # noqa: BLE001 - any model class: fall back to peft's own loading, said aloud
            logger.warning("could not check the tensors of the adapter in %s against %s (%s: %s): peft loads them "
                           "unchecked", folder, type(model).__name__, type(error).__name__, error)  # fmt: skip
            return None
        state = get_peft_model_state_dict(wrapped, save_embedding_layers=False)
    return {key: tuple(tensor.shape) for key, tensor in state.items()}


def check_fit(model: Any, path: str | Path, config: dict[str, Any], weights: dict[str, torch.Tensor]) -> None:
    """``ValueError`` unless ``weights`` hold exactly the tensors, of exactly the shapes, that the
    adapter's ``config`` (:func:`read_config`) needs for ``model`` (:func:`expected_tensors`): a
    tensor missing (peft would leave that layer as it was, warning only), one left over, or another rank."""
    expected = expected_tensors(model, path)
    if expected is None:
        return
    folder = Path(path).expanduser()
    where = f"{folder / WEIGHTS_FILE} does not fit {CONFIG_FILE} (r={config.get('r')}) and this model"
    missing = sorted(set(expected) - set(weights))
    if missing:
        raise ValueError(f"{where}: {len(missing)} of the {len(expected)} tensors it needs are missing "
                         f"(e.g. {missing[0]!r}); the file is damaged or from another adapter")  # fmt: skip
    unexpected = sorted(set(weights) - set(expected))
    if unexpected:
        raise ValueError(f"{where}: {len(unexpected)} tensors fit no layer of it (e.g. {unexpected[0]!r}); "
                         "the file is damaged or from another adapter")  # fmt: skip
    wrong = [key for key in sorted(expected) if tuple(weights[key].shape) != expected[key]]
    if wrong:
        raise ValueError(f"{where}: {len(wrong)} tensors have another shape, e.g. {wrong[0]!r} is "
                         f"{tuple(weights[wrong[0]].shape)} where {expected[wrong[0]]} is needed (another rank?)")  # fmt: skip


def check_adapter(model: Any, tokenizer: Any, path: str | Path) -> dict[str, Any]:
    """The adapter's meta, after checking it was trained for this very base model and that its
    files are whole and fit it. ``model`` is not changed.

    Raises:
        ValueError: another base model (fingerprint), other recall token ids, not an adapter, or
            a damaged file (:func:`read_meta`, :func:`read_config`, :func:`read_weights`,
            :func:`check_fit`), naming the folder and the file.
    """
    folder = Path(path).expanduser()
    meta = read_meta(folder)
    recorded = meta["base_fingerprint"]
    if not fingerprint_matches(recorded, model):
        found = fingerprint_like(recorded, model)
        raise ValueError(
            f"the adapter in {folder} was trained for another base model ({meta.get('base_model', '?')}, fingerprint "
            f"{fingerprint_label(recorded)}); this model's fingerprint is {fingerprint_label(found)}. Train one for "
            "this model with `recall train --model ...`, or load the model without the adapter."
        )
    vocab = tokenizer.get_vocab()
    ids = {"recall_token_id": vocab.get(RECALL_TOKEN), "memory_pad_token_id": vocab.get(MEMORY_PAD_TOKEN)}
    for key, value in ids.items():
        if meta.get(key) != value:
            raise ValueError(f"the adapter in {folder} has {key}={meta.get(key)}, this tokenizer {value}")
    check_fit(model, folder, read_config(folder), read_weights(folder))
    return meta


#: The attribute :func:`apply_adapter` sets on the model it returns: the adapter's folder, where
#: ``recall train-head --out`` saves the query head trained on the merged weights
#: (:func:`recall_core.models.query_head.saved_query_head` looks there).
ADAPTER_FOLDER = "recall_adapter_folder"


def apply_adapter(model: Any, tokenizer: Any, path: str | Path) -> Any:
    """``model`` with the adapter at ``path`` (``~`` expanded) merged into its weights (no runtime cost).

    The adapter is checked first (:func:`check_adapter`: the fingerprint, the token ids, every
    file), so a refused one leaves ``model`` as it was. Returns the merged model (a plain
    ``transformers`` model again), in eval mode, with the folder it came from as :data:`ADAPTER_FOLDER`.
    """
    from peft import PeftModel

    folder = Path(path).expanduser()
    check_adapter(model, tokenizer, folder)
    merged = PeftModel.from_pretrained(model, str(folder), is_trainable=False).merge_and_unload()
    setattr(merged, ADAPTER_FOLDER, str(folder.resolve()))
    return merged.eval()

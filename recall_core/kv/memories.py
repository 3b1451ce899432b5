"""A cache of memories' keys and values (``inject_mode="kv"``): in process, and optionally on disk.

Each entry is one piece of a recall's block (:mod:`recall_core.kv.blocks`: a note, or the
template's text) as a :class:`~recall_core.kv.blocks.BlockKV`, under a :class:`BlockKey`:

* the **model fingerprint** (config, dtype and a sample of the weights), so a block is never
  used for another model;
* the **prefix** it was computed after (``kv_prefix`` and the template's instruction);
* the **memory ids** whose words it holds, so an updated or deleted memory drops its blocks;
* a **content hash** of its text and ids (the memory's text as written in its note: date,
  speaker, ``note_template``, ``max_memory_tokens``), so an edited memory is never served
  its old block, even by a process that never heard of the edit.

In process: an LRU bounded in bytes. On disk (``disk=True``: under ``$RECALL_HOME/kv_memories``,
or a folder of your own): one safetensors file per block, bounded in bytes (least recently
used deleted first), written atomically, safe to delete at any time. Each file carries a SHA-256
digest of its tensors (names, dtypes, shapes and bytes) and the key it was written for; a file
that is missing, unreadable, written for another key or whose tensors do not match their digest
is a miss: it is removed, the block is computed again and written in its place, and the recall's
trace counts it (:attr:`~recall_core.types.Recall.kv_discarded`). A file's name begins with a tag
of each memory it holds (:func:`recall_core.paths.derived_tag`), so that a forget, delete or
update issued anywhere removes it (:func:`recall_core.paths.drop_derived`).

:func:`fetch_blocks` gives a plan's blocks, computing those it lacks in one batched pass;
:func:`precompute` fills the cache at write time.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import threading
import time
import warnings
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from recall_core.config import RecallConfig
from recall_core.kv.blocks import (
    BlockKV,
    BlockPlan,
    compute_blocks,
    content_hash,
    model_fingerprint,
    plan_block,
    prefix_ids,
)
from recall_core.kv.cache import head_dim
from recall_core.paths import KV_FOLDER, derived_tag, register_derived, remove_derived_files
from recall_core.types import MemoryCandidate

DEFAULT_MAX_BYTES = 256 << 20
DEFAULT_MAX_DISK_BYTES = 2 << 30
#: Blocks holding more memories than this are kept in process only (their file name lists owners).
_MAX_FILE_OWNERS = 4
#: The format of block files: a file without it (or of another) is a miss.
_FILE_FORMAT = "2"
#: A partial block file older than this (seconds) is a killed writer's, removed at a process's first count.
STALE_PARTIAL_S = 600
_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class BlockKey:
    """What a block's keys and values depend on (see the module docstring)."""

    model: str
    prefix: str
    owners: tuple[str, ...]
    content: str

    @property
    def digest(self) -> str:
        payload = json.dumps([self.model, self.prefix, list(self.owners), self.content])
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class KVMemories:
    """Keys and values of memory blocks, reused across recalls (and processes, with ``disk``).

    Args:
        max_bytes: most bytes of blocks kept in process (least recently used go first).
        disk: ``False`` (default): in process only; ``True``: also under
            ``$RECALL_HOME/kv_memories``; a path: also there.
        max_disk_bytes: most bytes of block files kept on disk.
    """

    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES, disk: bool | str | Path = False,
                 max_disk_bytes: int = DEFAULT_MAX_DISK_BYTES) -> None:  # fmt: skip
        for name, value in (("max_bytes", max_bytes), ("max_disk_bytes", max_disk_bytes)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} must be an int >= 0 (bytes), got {value!r}")
        self.max_bytes = max_bytes
        self.max_disk_bytes = max_disk_bytes
        if disk is True:
            from recall_core.paths import recall_home

            disk = recall_home() / KV_FOLDER
        if disk is not None and not isinstance(disk, bool) and (
                not isinstance(disk, (str, os.PathLike)) or os.fspath(disk) == ""):  # fmt: skip
            raise ValueError(f"disk must be True, False or a folder's path, got {disk!r}")
        self.folder: Path | None = Path(disk) if disk else None
        if self.folder is not None:  # made at the first write: what is there on the way must be folders
            there = next((p for p in (self.folder, *self.folder.parents) if p.exists()), None)
            if there is not None and not there.is_dir():
                raise ValueError(f"disk must be a folder's path, got {str(self.folder)!r}: {str(there)!r} is a file")
        self._blocks: OrderedDict[str, tuple[BlockKey, BlockKV]] = OrderedDict()
        self._by_owner: dict[str, set[str]] = {}
        self._bytes = 0
        self._disk_bytes: int | None = None  # counted on first use
        self._lock = threading.RLock()
        self.hits = 0
        self.misses = 0
        self.discarded = 0
        # A forget, delete or update issued anywhere (any writer, any process) drops this cache's blocks.
        register_derived(self, self.folder)

    # ------------------------------------------------------------------ reading and writing
    def get(self, key: BlockKey) -> BlockKV | None:
        """The block stored under ``key`` (in process, else on disk), or ``None``."""
        return self.find(key)[0]

    def find(self, key: BlockKey) -> tuple[BlockKV | None, str | None]:
        """:meth:`get`, and why a file found at the block's path was discarded (``None``: none was).

        A discarded file (unreadable, written for another key, tensors that do not match their
        digest) is removed and counted as a miss: the caller computes the block again.
        """
        digest = key.digest
        with self._lock:
            found = self._blocks.get(digest)
            if found is not None:
                self._blocks.move_to_end(digest)
                self.hits += 1
                return found[1], None
        block, reason = self._read(key) if self.folder is not None else (None, None)
        with self._lock:
            if reason is not None:
                self.discarded += 1
            if block is None:
                self.misses += 1
                return None, reason
            self.hits += 1
            self._keep(key, block)
        return block, None

    def put(self, key: BlockKey, block: BlockKV) -> None:
        """Keep ``block`` under ``key`` (and write it to disk when the cache has a folder)."""
        with self._lock:
            self._keep(key, block)
        if self.folder is not None and len(key.owners) <= _MAX_FILE_OWNERS:
            self._write(key, block)

    def drop(self, memory_ids: str | Iterable[str]) -> int:
        """Forget every block holding the words of any of ``memory_ids``; return how many were dropped."""
        ids = [memory_ids] if isinstance(memory_ids, str) else list(memory_ids)
        dropped = 0
        with self._lock:
            for memory_id in ids:
                for digest in self._by_owner.pop(memory_id, set()):
                    if self._forget(digest):
                        dropped += 1
        if self.folder is not None and self.folder.is_dir():
            dropped += remove_derived_files(self.folder, ids)
            with self._lock:
                self._disk_bytes = None  # counted again on next use
        return dropped

    def clear(self) -> None:
        """Forget every block in process (files on disk stay)."""
        with self._lock:
            self._blocks.clear()
            self._by_owner.clear()
            self._bytes = 0

    # ------------------------------------------------------------------ reporting
    @property
    def nbytes(self) -> int:
        """Bytes of the blocks kept in process."""
        return self._bytes

    def stats(self) -> dict[str, Any]:
        """Blocks, bytes, memories with a block, bytes per memory (their notes' blocks), hits and misses."""
        with self._lock:
            owned = {digest for digests in self._by_owner.values() for digest in digests}
            note_bytes = sum(self._blocks[d][1].nbytes for d in owned if d in self._blocks)
            memories = len(self._by_owner)
            return {
                "blocks": len(self._blocks),
                "bytes": self._bytes,
                "memories": memories,
                "bytes_per_memory": note_bytes / memories if memories else 0.0,
                "hits": self.hits,
                "misses": self.misses,
                "discarded": self.discarded,
                "disk_bytes": self._disk_total() if self.folder is not None else 0,
            }

    # ------------------------------------------------------------------ in process
    def _keep(self, key: BlockKey, block: BlockKV) -> None:
        digest = key.digest
        self._forget(digest)
        if block.nbytes > self.max_bytes:
            return
        self._blocks[digest] = (key, block)
        self._bytes += block.nbytes
        for owner in key.owners:
            self._by_owner.setdefault(owner, set()).add(digest)
        while self._bytes > self.max_bytes and self._blocks:
            self._forget(next(iter(self._blocks)))

    def _forget(self, digest: str) -> bool:
        found = self._blocks.pop(digest, None)
        if found is None:
            return False
        key, block = found
        self._bytes -= block.nbytes
        for owner in key.owners:
            digests = self._by_owner.get(owner)
            if digests is not None:
                digests.discard(digest)
                if not digests:
                    del self._by_owner[owner]
        return True

    # ------------------------------------------------------------------ on disk
    def _path(self, key: BlockKey) -> Path:
        assert self.folder is not None
        tags = "".join(derived_tag(owner) + "-" for owner in key.owners)  # what a forget finds them by
        return self.folder / key.model[:24] / f"{tags}{key.digest[:40]}.safetensors"

    def _read(self, key: BlockKey) -> tuple[BlockKV | None, str | None]:
        """The block in ``key`` 's file, or ``None`` and why the file there was removed (``None``: no file)."""
        from safetensors import safe_open

        path = self._path(key)
        if not path.is_file():
            return None, None
        try:
            with safe_open(str(path), framework="pt") as file:
                meta = file.metadata() or {}
                reason = _foreign(meta, key)
                if reason is None:
                    layers = int(meta["layers"])
                    tensors = {name: file.get_tensor(name) for name in _names(layers)}
                    if tensor_digest(tensors) != meta["sha256"]:
                        reason = "its tensors do not match their digest (damaged)"
        except Exception as error:  # damaged or half-written by a killed process
            if isinstance(error, FileNotFoundError) or not path.exists():
                return None, None  # deleted by another process (its trim, a forget): a miss, not damage
            reason = f"unreadable ({type(error).__name__})"
        if reason is not None:
            _log.warning("KV block file %s discarded: %s; the block is computed again", path, reason)
            self._unlink(path)
            return None, reason
        try:
            os.utime(path)  # recently used: deleted last when the folder is over its bound
        except OSError:  # deleted meanwhile by another process: the block read is whole
            pass
        keys = tuple(tensors[f"k.{i}"] for i in range(layers))
        values = tuple(tensors[f"v.{i}"] for i in range(layers))
        return BlockKV(keys, values, int(meta["offset"])), None

    def _write(self, key: BlockKey, block: BlockKV) -> None:
        from safetensors import SafetensorError
        from safetensors.torch import save_file

        path = self._path(key)
        tensors = {f"k.{i}": t.contiguous().cpu() for i, t in enumerate(block.keys)}
        tensors.update({f"v.{i}": t.contiguous().cpu() for i, t in enumerate(block.values)})
        meta = {"key": key.digest, "format": _FILE_FORMAT, "sha256": tensor_digest(tensors),
                "layers": str(len(block.keys)), "offset": str(block.offset),
                "owners": json.dumps(list(key.owners))}  # fmt: skip
        if _same_file(path, meta):  # the same block, already there (written by another process)
            try:
                os.utime(path)
            except OSError:
                pass
            return
        partial = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            save_file(tensors, str(partial), metadata=meta)
            replaced = _size(path)  # a foreign or damaged file goes
            os.replace(partial, path)  # atomic: a reader sees the whole file or none
        except (OSError, SafetensorError):  # a full or read-only disk: the block stays in process, nothing
            _remove(partial)  # is lost (safetensors raises its own error; until 2026-12-07 it left the
            return  # partial file behind, uncounted, and a SafetensorError crashed generate(): reviewers)
        with self._lock:
            if self._disk_bytes is None:
                self._disk_total()  # counts the file just written too
            else:
                self._disk_bytes += _size(path) - replaced
            if self._disk_total() > self.max_disk_bytes:
                self._trim_disk()

    def _disk_total(self) -> int:
        if self._disk_bytes is None:  # once per process: a killed writer's partial files go then (ours,
            # "*.tmp", and safetensors' own ".tmpXXXXXX", which it renames to ours once whole)
            made = self.folder is not None and self.folder.is_dir()
            for partial in [*self.folder.glob("*/*.tmp"), *self.folder.glob("*/.tmp*")] if made else ():
                with contextlib.suppress(OSError):
                    if time.time() - partial.stat().st_mtime > STALE_PARTIAL_S:
                        partial.unlink()
            self._disk_bytes = sum(_size(p) for p in self._files())
        return self._disk_bytes

    def _files(self) -> list[Path]:
        if self.folder is None or not self.folder.is_dir():
            return []
        return [p for p in self.folder.glob("*/*.safetensors") if p.is_file()]

    def _trim_disk(self) -> None:
        """Delete the least recently used files until the folder is within ``max_disk_bytes``."""
        files = []
        for path in self._files():
            try:
                stat = path.stat()
            except OSError:
                continue
            files.append((stat.st_mtime, stat.st_size, path))
        total = sum(size for _, size, _ in files)
        for _, size, path in sorted(files):
            if total <= self.max_disk_bytes:
                break
            self._unlink(path)
            total -= size
        self._disk_bytes = max(0, total)

    def _unlink(self, path: Path) -> int:
        try:
            size = path.stat().st_size
            path.unlink()
        except OSError:
            return 0
        with self._lock:
            if self._disk_bytes is not None:
                self._disk_bytes = max(0, self._disk_bytes - size)
        return 1


def _size(path: Path) -> int:
    """A file's size; 0 when it is not there (another process may delete a block file at any time)."""
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _remove(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()


def tensor_digest(tensors: dict[str, torch.Tensor]) -> str:
    """SHA-256 of named tensors: names, dtypes, shapes and bytes (what a block file's ``sha256`` holds)."""
    digest = hashlib.sha256()
    for name in sorted(tensors):
        tensor = tensors[name].detach().contiguous().cpu()
        digest.update(f"{name}:{tensor.dtype}:{tuple(tensor.shape)};".encode())
        digest.update(tensor.reshape(-1).view(torch.uint8).numpy())
    return digest.hexdigest()


def _names(layers: int) -> list[str]:
    return [f"{kind}.{i}" for kind in "kv" for i in range(layers)]


def _foreign(meta: dict[str, str], key: BlockKey) -> str | None:
    """Why a file's metadata is not that of ``key`` 's block in this format (``None``: it is)."""
    if meta.get("key") != key.digest:
        return "written for another key (a foreign file)"
    if meta.get("format") != _FILE_FORMAT or "sha256" not in meta or not meta.get("layers", "").isdigit():
        return "an older or unknown file format (no tensor digest)"
    return None


def _same_file(path: Path, meta: dict[str, str]) -> bool:
    """Whether ``path`` holds a file written with ``meta`` (header only: the tensors are checked on read)."""
    if not path.is_file():
        return False
    from safetensors import safe_open

    try:
        with safe_open(str(path), framework="pt") as file:
            found = file.metadata() or {}
    except Exception:
        return False
    return all(found.get(name) == meta[name] for name in ("key", "format", "sha256"))


def kv_bytes_per_token(model: Any) -> int:
    """Bytes of keys and values one position takes in ``model``'s cache (every layer)."""
    config = model.config.get_text_config(decoder=True) if hasattr(model.config, "get_text_config") else model.config
    heads = getattr(config, "num_key_value_heads", None) or config.num_attention_heads
    element = next(model.parameters()).element_size()
    return int(config.num_hidden_layers * 2 * heads * head_dim(model) * element)


# --------------------------------------------------------------------------- the process-wide cache
_default: KVMemories | None = None
_default_lock = threading.Lock()


def default_kv_memories() -> KVMemories:
    """The cache ``inject_mode="kv"`` uses unless given another: in process, 256 MiB."""
    global _default
    with _default_lock:
        if _default is None:
            _default = KVMemories()
        return _default


def set_default_kv_memories(cache: KVMemories) -> None:
    """Use ``cache`` from now on (e.g. ``KVMemories(disk=True)`` to keep blocks between processes)."""
    global _default
    if not isinstance(cache, KVMemories):
        raise ValueError(f"cache must be a KVMemories, got {type(cache).__name__}")
    with _default_lock:
        _default = cache


# --------------------------------------------------------------------------- fetching a plan's blocks
def block_keys(model: Any, tokenizer: Any, plan: BlockPlan, config: RecallConfig) -> list[tuple[BlockKey, tuple[int, ...]]]:
    """Each piece's key and prefix ids."""
    fingerprint = model_fingerprint(model)
    prefixes = {leading: prefix_ids(tokenizer, config, leading) for leading in {p.leading for p in plan.pieces}}
    hashes = {leading: hashlib.sha256(json.dumps(list(ids)).encode()).hexdigest()[:32] for leading, ids in prefixes.items()}
    out = []
    for piece in plan.pieces:
        prefix = prefixes[piece.leading]
        out.append((BlockKey(fingerprint, hashes[piece.leading], piece.owners, content_hash(piece, prefix)), prefix))
    return out


@dataclass(frozen=True)
class Fetched:
    """A plan's blocks, in the order of its pieces.

    Attributes:
        blocks: one per piece, on the model's device.
        found: per piece, whether its block was in the cache (else it was computed now).
        computed: pieces computed now (a piece twice in the plan is computed once).
        discarded: why each block file found damaged or foreign on disk was removed (those
            blocks were computed again, and count in ``computed``).
    """

    blocks: list[BlockKV]
    found: tuple[bool, ...]
    computed: int
    discarded: tuple[str, ...] = ()


def fetch_blocks(model: Any, tokenizer: Any, plan: BlockPlan, config: RecallConfig, cache: KVMemories) -> Fetched:
    """The blocks of ``plan`` 's pieces; those not in ``cache`` are computed (one batched pass per prefix) and kept."""
    keyed = block_keys(model, tokenizer, plan, config)
    blocks: list[BlockKV | None] = []
    discarded: list[str] = []
    wanted: dict[str, list[int]] = {}  # a piece that is twice in the plan is looked up and computed once
    for index, (key, _) in enumerate(keyed):
        if key.digest in wanted:
            wanted[key.digest].append(index)
            blocks.append(None)
            continue
        wanted[key.digest] = [index]
        block, reason = cache.find(key)
        blocks.append(block)
        if reason is not None:
            discarded.append(reason)
    found = [b is not None for b in blocks]
    missing: dict[tuple[int, ...], list[int]] = {}
    for indices in wanted.values():
        if blocks[indices[0]] is None:
            missing.setdefault(keyed[indices[0]][1], []).append(indices[0])
    for prefix, firsts in missing.items():
        for index, block in zip(firsts, compute_blocks(model, prefix, [plan.pieces[i].ids for i in firsts]), strict=True):
            cache.put(keyed[index][0], block)
            blocks[index] = block
    for indices in wanted.values():
        for index in indices[1:]:
            blocks[index] = blocks[indices[0]]
            found[index] = found[indices[0]]
    device = model.device
    computed = sum(len(firsts) for firsts in missing.values())
    return Fetched([b.to(device) for b in blocks if b is not None], tuple(found), computed, tuple(discarded))


def precompute(model: Any, tokenizer: Any, memories: Sequence[MemoryCandidate], config: RecallConfig,
               cache: KVMemories) -> int:  # fmt: skip
    """Compute and keep the blocks a recall of each of ``memories`` would use; return how many were computed.

    Each memory's note is a piece of its own, whatever else a recall injects with it, so the
    blocks computed for a memory alone serve every later block that holds it.
    """
    computed = 0
    for start in range(0, len(memories), 64):
        plans = [plan_block(tokenizer, [memory], config) for memory in memories[start : start + 64]]
        merged = BlockPlan(sum((p.ids for p in plans), ()), tuple(piece for p in plans for piece in p.pieces))
        computed += fetch_blocks(model, tokenizer, merged, config, cache).computed
    return computed


class KVPrecompute:
    """What ``MemoryWriter(precompute_kv=...)`` computes memory blocks with, and where it keeps them
    (the memory package's :class:`~recall_core.memory.protocols.DerivedCache`).

    Args:
        model: the causal LM recalls will run (blocks are keyed by its fingerprint).
        tokenizer: its tokenizer.
        config: the :class:`RecallConfig` recalls will use (its template, note template and
            ``kv_prefix`` shape the blocks); default ``RecallConfig()``.
        cache: where the blocks go; default the process-wide :func:`default_kv_memories`.

    Blocks are computed for memories as a search returns them with ``unit="turn"`` (the
    default): a recall of a wider unit (a window, an exchange) computes its own at its first use.
    """

    def __init__(self, model: Any, tokenizer: Any, config: RecallConfig | None = None,
                 cache: KVMemories | None = None) -> None:  # fmt: skip
        self.model = model
        self.tokenizer = tokenizer
        self.config = config or RecallConfig()
        self._cache = cache

    @property
    def cache(self) -> KVMemories:
        return self._cache if self._cache is not None else default_kv_memories()

    @classmethod
    def of(cls, source: Any) -> KVPrecompute:
        """``source`` as a :class:`KVPrecompute`: one already, a ``(model, tokenizer)`` pair, or an object
        with ``.model`` and ``.tokenizer`` (a :class:`~recall_core.RecallGenerator`, whose ``.config`` is used)."""
        if isinstance(source, KVPrecompute):
            return source
        if isinstance(source, tuple) and len(source) == 2:
            return cls(source[0], source[1])
        if hasattr(source, "model") and hasattr(source, "tokenizer"):
            config = getattr(source, "config", None)
            return cls(source.model, source.tokenizer, config if isinstance(config, RecallConfig) else None)
        raise ValueError(
            f"KVPrecompute.of takes (model, tokenizer), a RecallGenerator or a KVPrecompute, got {type(source).__name__}"
        )

    def memories(self, memories: Sequence[MemoryCandidate]) -> int:
        """Compute and keep the blocks of ``memories``; return how many pieces were computed."""
        return precompute(self.model, self.tokenizer, memories, self.config, self.cache) if memories else 0

    def written(self, memories: Sequence[MemoryCandidate]) -> None:
        """:meth:`memories` for memories just written: a failure warns (the write stands; only
        their first recall is slower)."""
        try:
            self.memories(memories)
        except Exception as error:  # any failure: the memories are written already
            warnings.warn(f"KV blocks not precomputed ({type(error).__name__}: {error})", RuntimeWarning, stacklevel=4)

    def drop(self, memory_ids: str | Iterable[str]) -> int:
        """Drop every block holding the words of ``memory_ids``."""
        return self.cache.drop(memory_ids)

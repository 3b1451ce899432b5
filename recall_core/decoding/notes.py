"""What gets injected for the chosen memories: one block of notes (token ids or their embeddings), never control tokens."""

from __future__ import annotations

import threading
import weakref
from collections.abc import Sequence
from typing import Any

import torch

from recall_core.config import RecallConfig
from recall_core.dates import day_label
from recall_core.memory.text.composition import speaker_of
from recall_core.memory.text.markup import plain_text
from recall_core.types import MemoryCandidate


def note(candidate: MemoryCandidate | str, config: RecallConfig) -> str:
    """One memory as a note: ``config.note_template`` with its text, day, speaker and role.

    ``{speaker}`` is ``metadata["speaker"]`` when the memory has one, else its role
    capitalised (``"User"``), as the writer labels what it searches; a text that already
    begins with its speaker ("Caroline: ...") is not labelled twice, and a text of several
    labelled turns (an exchange: ``metadata["covers"]`` names them) is labelled by its first.
    A memory without a timestamp, speaker or role (a plain string) is its text alone: an
    empty ``[]`` or a bare ``:`` would only be noise.
    """
    if isinstance(candidate, str):
        text, meta = candidate, {}
    else:
        text, meta = candidate.text, candidate.metadata or {}
    text = text.strip()
    timestamp = meta.get("timestamp")
    date = day_label(timestamp) if isinstance(timestamp, str) and timestamp.strip() else ""
    role = str(meta.get("role") or "")
    speaker = str(meta.get("speaker") or role.capitalize())
    template = config.note_template
    if "," in str(meta.get("covers", "")):  # several turns, each labelled: the first one's label is the note's
        head, colon, rest = text.partition(":")
        if colon and "\n" not in head and len(head) <= 40:
            speaker, text = head.strip(), rest.strip()
    if (not date and "{date}" in template) or (not speaker and "{speaker}" in template):
        return text
    if "{speaker}" in template and text.startswith(f"{speaker}:"):
        text = text[len(speaker) + 1 :].strip()
    return template.format(text=text, date=date, role=role, speaker=speaker)


def notes_text(tokenizer: Any, memories: Sequence[MemoryCandidate | str], config: RecallConfig) -> str:
    """The notes of ``memories``, one per line, each memory cut to ``config.max_memory_tokens`` first."""
    return "\n".join(note_lines(tokenizer, memories, config))


def note_lines(tokenizer: Any, memories: Sequence[MemoryCandidate | str], config: RecallConfig) -> list[str]:
    """One :func:`note` per memory, each memory cut to ``config.max_memory_tokens`` first (after
    its markdown is made plain text, with ``config.plain_notes``).

    A note may hold line breaks of its own (an exchange): :func:`notes_text` joins these.
    """
    lines = []
    for memory in memories:
        text = memory if isinstance(memory, str) else memory.text
        if config.plain_notes:
            text = plain_text(text)
        ids = _plain_ids(tokenizer, text)
        if len(ids) > config.max_memory_tokens:
            found = _found_turn(memory, text)
            if found is not None:  # the found turn, labelled, whole or cut at its end (its context before goes)
                found_ids = _plain_ids(tokenizer, found)
                text = found if len(found_ids) <= config.max_memory_tokens else _cut(tokenizer, found_ids, config.max_memory_tokens)
            else:
                text = _cut(tokenizer, ids, config.max_memory_tokens)
        lines.append(note(text if isinstance(memory, str) else _with_text(memory, text), config))
    return lines


def _cut(tokenizer: Any, ids: Sequence[int], limit: int) -> str:
    """The text of ``ids``' first ``limit`` ids, less a character they end inside (byte tokens): until
    2026-12-07 a note cut there ended in "\ufffd" (a reviewer)."""
    end = limit
    text = tokenizer.decode(ids[:end])
    while end > 1 and text.endswith("\ufffd"):
        end -= 1
        text = tokenizer.decode(ids[:end])
    return text


def _found_turn(memory: MemoryCandidate | str, text: str) -> str | None:
    """The turn the search found in a unit's ``text``, from its own label on, where that turn is the
    unit's last and a user's (an answer after the question it answers): a note too long then keeps
    it, whole or cut at its end; ``None`` otherwise (the note keeps its start).

    Until 2026-12-07 every note was cut from its end, and a long assistant question before the
    user's answer cut the answer ("... and the keys come on" without "14 June"; a reviewer). The
    label is the one the search gives the turn (:func:`~recall_core.memory.text.composition.speaker_of`):
    reviews found a cut start, or any "Invoice 12: ..." line, read as the speaker; and a found reply
    kept without the user's turn before it lost "rent is now £1,025" on handwritten-household. On the
    hand-written families' 552 questions 2 notes are cut and neither changes."""
    if isinstance(memory, str):
        return None
    meta = memory.metadata or {}
    covers = str(meta.get("covers") or "").split(",")
    if len(covers) < 2 or covers[-1] != memory.id or meta.get("role") != "user":
        return None
    at = text.rfind(f"\n{speaker_of('user', meta)}: ")
    return text[at + 1 :] if at >= 0 else None


def memory_token_ids(tokenizer: Any, memories: Sequence[MemoryCandidate | str] | str, config: RecallConfig) -> list[int]:
    """The ids injected in ``tokens`` mode: ``config.template`` around the notes of ``memories``.

    Special tokens in a memory (``<recall>``, ``<|im_end|>``...) are split into plain text
    pieces, so a memory can never trigger a nested recall or end a turn.
    """
    if isinstance(memories, str):
        memories = [memories]
    return block_ids(tokenizer, notes_text(tokenizer, memories, config), config)


def block_ids(tokenizer: Any, notes: str, config: RecallConfig) -> list[int]:
    """The ids of ``config.template`` around already written ``notes``."""
    return _plain_ids(tokenizer, config.block_text(notes))


def plain_ids(tokenizer: Any, text: str) -> list[int]:
    """``text``'s ids as injected: no special tokens added, special tokens in it split into plain pieces."""
    return _plain_ids(tokenizer, text)


#: A fast tokenizer's backend copy that splits special tokens, per tokenizer and vocabulary size.
_SPLITTERS: weakref.WeakKeyDictionary[Any, tuple[int, Any]] = weakref.WeakKeyDictionary()
_SPLITTERS_LOCK = threading.Lock()


def _plain_ids(tokenizer: Any, text: str) -> list[int]:
    """``tokenizer(text, add_special_tokens=False, split_special_tokens=True).input_ids``, thread-safe.

    A fast tokenizer applies ``split_special_tokens`` by setting a flag on its shared Rust
    backend before encoding: a prompt another thread encodes meanwhile has its ``<|im_start|>``
    and ``<recall>`` split into text (issue 23: concurrent generations on one model that
    differ from sequential ones). So the split is done by a copy of the backend that always
    splits, and the shared one is never switched.
    """
    backend = getattr(tokenizer, "_tokenizer", None)
    if backend is None or not callable(getattr(backend, "encode", None)):  # a slow tokenizer: no shared flag
        return list(tokenizer(text, add_special_tokens=False, split_special_tokens=True).input_ids)
    size = len(tokenizer)
    with _SPLITTERS_LOCK:
        cached = _SPLITTERS.get(tokenizer)
        if cached is None or cached[0] != size:
            splitter = type(backend).from_str(backend.to_str())
            splitter.encode_special_tokens = True
            splitter.no_truncation()
            splitter.no_padding()
            _SPLITTERS[tokenizer] = cached = (size, splitter)
    return list(cached[1].encode(text, add_special_tokens=False).ids)


def _with_text(candidate: MemoryCandidate, text: str) -> MemoryCandidate:
    if text == candidate.text:
        return candidate
    return MemoryCandidate(candidate.id, candidate.score, text, candidate.embedding, candidate.metadata)


@torch.no_grad()
def memory_embeddings(
    model: Any,
    tokenizer: Any,
    memories: Sequence[MemoryCandidate | str] | str,
    config: RecallConfig,
    notes: str | None = None,
) -> torch.Tensor:
    """The ``inputs_embeds`` to feed for the chosen memories, shape ``[1, N, hidden]``: the
    embeddings of :func:`memory_token_ids` (the block ``tokens`` and ``kv`` modes inject).
    ``notes``, when given, are the memories' :func:`notes_text` already written."""
    if isinstance(memories, str):
        memories = [memories]
    embed = model.get_input_embeddings()
    written = notes if notes is not None else notes_text(tokenizer, memories, config)
    return embed(torch.tensor([block_ids(tokenizer, written, config)], device=embed.weight.device))

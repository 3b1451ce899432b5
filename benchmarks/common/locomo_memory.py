"""LoCoMo conversations written into a ``MemoryStore``, and what a found memory covers.

Each memory format (``FORMATS``) composes the text a memory holds for a turn: ``plain``
(``"Speaker: text"``), ``dated``, ``window`` (the turn before in the same session, then this
one), ``dated-window``, and ``writer`` (the turn's own words: ``MemoryWriter``'s defaults add
date, speaker and window). :func:`covered` names the LoCoMo turns (dia_ids) a returned memory
holds, which hit@k is scored on; :class:`RankedMemory` searches with one of the store's rankings.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from benchmarks.common.locomo_data import Conversation, DialogTurn
from recall_core.memory import MemoryStore, MemoryWriter, Turn
from recall_core.memory.text.composition import day_label
from recall_core.types import MemoryCandidate

FORMATS = ("plain", "dated", "window", "dated-window", "writer")


def memory_text(turn: DialogTurn, previous: DialogTurn | None, fmt: str) -> str:
    """The text a memory holds for ``turn`` in format ``fmt``."""
    if fmt == "plain":
        return turn.plain()
    if fmt == "dated":
        return f"[{day_label(turn.date)}] {turn.plain()}"
    if fmt == "window":
        return turn.plain() if previous is None else f"{previous.plain()}\n{turn.plain()}"
    if fmt == "dated-window":
        body = turn.plain() if previous is None else f"{previous.plain()}\n{turn.plain()}"
        return f"[{day_label(turn.date)}] {body}"
    if fmt == "writer":  # the turn's own words: MemoryWriter's defaults add date, speaker and window
        return turn.text + (f" [shares an image: {turn.caption}]" if turn.caption else "")
    raise ValueError(f"unknown memory format {fmt!r}")


def conversation_turns(conversation: Conversation, fmt: str, role_of: Callable[[str], str]) -> list[Turn]:
    """The writer's turns for one conversation: text by ``fmt``, LoCoMo ids in the metadata."""
    out: list[Turn] = []
    previous: DialogTurn | None = None
    for turn in conversation.turns:
        same_session = previous is not None and previous.session == turn.session
        before = previous if same_session else None
        covers = [turn.dia_id] if before is None or "window" not in fmt else [before.dia_id, turn.dia_id]
        metadata = {
            "speaker": turn.speaker, "dia_id": turn.dia_id, "session_date": turn.date,
            "sample_id": conversation.sample_id, "covers": ",".join(covers),
        }  # fmt: skip
        out.append(
            Turn(
                user_id=conversation.sample_id, role=role_of(turn.speaker), content=memory_text(turn, before, fmt),
                session_id=f"session_{turn.session}", timestamp=turn.date, metadata=metadata,
                turn_index=turn.position,
            )  # fmt: skip
        )
        previous = turn
    return out


def ingest(store: MemoryStore, conversations: Sequence[Conversation], fmt: str, data_path: Path | None = None,
           writer: MemoryWriter | None = None, progress: bool = False) -> MemoryWriter:
    """Write the conversations into ``store``; ``writer`` from the file goes through ``MemoryWriter.ingest``.

    Only ``writer`` uses the writer's own memory text (its defaults: dated, windowed, with
    speakers); the other formats are composed here and written as they are.
    """
    if writer is None:
        own = {} if fmt == "writer" else {"dated": False, "window": False, "speakers": False}
        writer = MemoryWriter(store, **own)
    if fmt == "writer" and data_path is not None:
        writer.ingest(data_path, progress=progress)
        return writer
    turns: list[Turn] = []
    for conversation in conversations:
        roles = {conversation.speaker_a: "user", conversation.speaker_b: "assistant"}
        turns.extend(conversation_turns(conversation, fmt, lambda s, r=roles: r.get(s, "user")))
    writer.add_turns(turns, progress=progress)
    return writer


def covered(candidate: MemoryCandidate) -> tuple[str, ...]:
    """The dia_ids whose words a memory's returned text holds: its turn, plus the turn before
    for the window formats composed here (``metadata["covers"]``).

    ``MemoryWriter``'s own window (format ``writer``) is only searched, never returned, so
    there a memory holds its own turn alone.
    """
    covers = candidate.metadata.get("covers")
    if covers:
        return tuple(str(covers).split(","))
    return (str(candidate.metadata.get("dia_id")),)


class RankedMemory:
    """A user's memory searched with one of the store's rankings (``UserMemory.search(..., retrieval=)``):
    ``"vector"``, ``"lexical"`` (BM25 alone) or ``"hybrid"`` (the store's default); each found
    memory holds ``unit`` (its turn, unless asked: ``"window"``, ``"exchange"``)."""

    def __init__(self, inner: Any, retrieval: str, unit: str = "turn") -> None:
        self.inner = inner
        self.retrieval = retrieval
        self.unit = unit

    def search(self, query: Any, k: int = 4) -> list[Any]:
        return self.inner.search(query, k, retrieval=self.retrieval, unit=self.unit)

"""Conversation files the writer ingests: JSONL (one turn per line) and LoCoMo-style JSON.

:func:`locomo_dialog` is the one reader of LoCoMo's conversation layout; the benchmarks read
LoCoMo turns through it too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recall_core.memory.records import Turn

_SESSION = re.compile(r"session_(\d+)")


@dataclass(frozen=True)
class LocomoTurn:
    """One turn of a LoCoMo conversation as the file holds it."""

    session: int
    position: int
    date: str
    speaker: str
    dia_id: str
    text: str
    caption: str = ""

    @property
    def session_id(self) -> str:
        return f"session_{self.session}"

    def plain(self) -> str:
        """``"Speaker: text"`` plus the image caption: the text the writer stores for this turn; empty
        when the turn says nothing (the writer refuses it then, naming the turn)."""
        if not self.text.strip() and not self.caption.strip():
            return ""
        content = f"{self.speaker}: {self.text}" if self.speaker else self.text
        return content + (f" [shares an image: {self.caption}]" if self.caption else "")


def locomo_dialog(conversation: Mapping[str, Any]) -> Iterator[LocomoTurn]:
    """The turns of a LoCoMo ``conversation`` object, session by session, in order.

    A ``session_N`` that is not a list of turn objects, or a turn field that is not text, raises
    ``ValueError`` naming it: read as text, ``"text": 5`` would be remembered as "5" and a session
    given as one string left out without a word.
    """
    sessions = sorted((int(m.group(1)), key) for key in conversation if (m := _SESSION.fullmatch(key)))
    for number, key in sessions:
        if not isinstance(conversation[key], list):
            raise ValueError(f"{key} must be a list of turns, got {type(conversation[key]).__name__}")
        date = str(conversation.get(f"{key}_date_time") or "")
        for position, item in enumerate(conversation[key]):
            if not isinstance(item, Mapping):
                raise ValueError(f"{key}[{position}] must be a turn object, got {type(item).__name__}")
            fields = {name: _text_field(item, name, f"{key}[{position}]") for name in _TURN_TEXT}
            yield LocomoTurn(
                session=number, position=position, date=date, speaker=fields["speaker"], dia_id=fields["dia_id"],
                text=fields["text"], caption=fields["blip_caption"],
            )  # fmt: skip


#: The fields of a LoCoMo turn read as text (``img_url``, ``query`` and others are not read).
_TURN_TEXT = ("speaker", "dia_id", "text", "blip_caption")


def _text_field(item: Mapping[str, Any], name: str, where: str) -> str:
    value = item.get(name)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ValueError(f"{where}.{name} must be text, got {type(value).__name__}")
    return value


def sniff(raw: bytes) -> str:
    """``"jsonl"`` or ``"locomo"`` from the content of a .json file."""
    head = raw.lstrip()[:1]
    if head == b"[" or head == b"{":
        try:
            data = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            return "jsonl"
        if isinstance(data, dict) and "conversation" in data:
            return "locomo"
        if isinstance(data, list) and data and isinstance(data[0], dict) and "conversation" in data[0]:
            return "locomo"
    return "jsonl"


def jsonl_turns(raw: bytes, user_id: str | None, skipped: list[str] | None) -> Iterator[tuple[str, Turn]]:
    """``(where, turn)`` for each line; a bad line raises ``ValueError`` naming it, or is added to
    ``skipped`` when that list is given."""
    for number, line in enumerate(raw.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            try:
                text = line.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ValueError(f"not valid UTF-8 (byte 0x{line[exc.start]:02x} at column {exc.start + 1})") from None
            try:
                item = json.loads(text)
            except json.JSONDecodeError as exc:
                raise ValueError(f"not JSON: {exc.msg}") from None
            turn = Turn.from_mapping(item, user_id)
            if turn.user_id is None:
                raise ValueError("no user_id on the line and none given to ingest(user_id=...)")
        except ValueError as exc:
            if skipped is None:
                raise ValueError(f"line {number}: {exc}") from None
            skipped.append(f"line {number}: {exc}")
            continue
        yield f"line {number}", turn


def locomo_turns(raw: bytes, user_id: str | None, path: Path) -> Iterator[tuple[str, Turn]]:
    """``(where, turn)`` for every turn of every conversation: one user per conversation.

    ``speaker_a`` turns get role ``user``, ``speaker_b`` ``assistant``; speaker, dia_id,
    session date and sample id are kept in metadata; ids are positional.
    """
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not valid UTF-8 (byte at position {exc.start})") from None
    samples = [data] if isinstance(data, dict) else data
    if user_id is not None and len(samples) > 1:
        raise ValueError(
            f"{path} holds {len(samples)} conversations (one user each): leave user_id out to use each sample_id"
        )
    for number, sample in enumerate(samples):
        conversation = sample.get("conversation") if isinstance(sample, dict) else None
        if not isinstance(conversation, dict):
            raise ValueError(f"{path}: sample {number} has no 'conversation' object")
        sample_id = str(sample.get("sample_id") or f"conversation-{number}")
        owner = user_id or sample_id
        roles = {conversation.get("speaker_a"): "user", conversation.get("speaker_b"): "assistant"}
        for turn in _checked(locomo_dialog(conversation), f"{path}: {sample_id}"):
            metadata = {
                "speaker": turn.speaker or None, "dia_id": turn.dia_id or None, "session_date": turn.date or None,
                "sample_id": sample_id,
            }  # fmt: skip
            yield f"{sample_id} {turn.dia_id or f'{turn.session_id}[{turn.position}]'}", Turn(
                user_id=owner, role=roles.get(turn.speaker, "user"), content=turn.plain(), session_id=turn.session_id,
                timestamp=turn.date or None, metadata=metadata, turn_index=turn.position,
            )  # fmt: skip


def _checked(turns: Iterator[LocomoTurn], where: str) -> Iterator[LocomoTurn]:
    """``turns``, with a bad session or turn's ``ValueError`` saying which file and sample."""
    try:
        yield from turns
    except ValueError as exc:
        raise ValueError(f"{where}: {exc} (nothing was written)") from None

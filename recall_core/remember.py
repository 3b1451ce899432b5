"""What an adapter writes to long-term memory after a reply, and how it reports the write.

A chat call adds its exchange (:func:`last_exchange`: the user message and the reply, of the
roles it writes) through the store's ``MemoryWriter`` (:func:`write_turns`); an adapter reports
the result in the reply's metadata without raising (:func:`write_reported`), so a failed write
never costs the user a reply they already have.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from recall_core.memory.text.questions import turn_to_write
from recall_core.session.writes import caller_level, memory_words
from recall_core.session.writes import refused as refused_for_good

__all__ = ["TurnsRefused", "WriteReport", "last_exchange", "write_reported", "write_turns"]


class TurnsRefused(ValueError):
    """Some turns of a :func:`write_turns` call were refused by the memory; the others were written.

    ``written`` holds the ids of the memories written (a caller reports them as it would after a
    whole write), ``refused`` one line per refused turn ("turn 0 (user): ...").
    """

    def __init__(self, written: list[str], refused: list[str], turns: int) -> None:
        super().__init__(f"{len(refused)} of {turns} turn(s) were refused by the memory and not written "
                         f"({'; '.join(refused)}); the others were written")  # fmt: skip
        self.written = written
        self.refused = refused
        self.turns = turns

    def __reduce__(self) -> tuple[Any, ...]:  # pickled and copied with its fields (executors, processes)
        return type(self), (self.written, self.refused, self.turns)


def write_turns(
    store: Any, user_id: str, turns: Sequence[tuple[str, str]], session_id: str | None = None
) -> list[str]:
    """Write ``(role, content)`` turns for ``user_id`` through the store's ``MemoryWriter``; return the ids.

    ``<recall>`` markers are taken out first: they are instructions to the loop, not memory (and,
    of an assistant's words, what the memory refuses: :func:`~recall_core.session.writes.memory_words`). A
    turn the memory refuses (``ValueError``: a NUL character, say) does not cost the others:
    they are written, then :class:`TurnsRefused` (a ``ValueError``) names the refused ones and
    holds the ids written. Any other error (the index down: that turn is in the journal) stops
    the write there and is raised with what was written before it: ``error.written`` (ids) and
    ``error.written_roles`` (the roles of the turns written).
    """
    writer = store.writer
    texts = [(role, memory_words(role, content)) for role, content in turns]
    whole = [{"user_id": user_id, "role": role, "content": text, "session_id": session_id} for role, text in texts if text]
    if whole and callable(getattr(writer, "add_turns", None)):
        # One write, so the exchange's positions are taken in one transaction: two requests of one
        # user at once (one adapter serving many) interleaved their turns until 2026-12-07, and a
        # reply was searched with the other request's message before it (a reviewer). A turn the
        # memory refuses makes the batch refuse them all: then turn by turn, as below.
        try:
            return [i for turn_ids in writer.add_turns(whole) for i in turn_ids]
        except Exception as error:
            if not refused_for_good(error):
                _written_before(error, [], [])
                raise
    ids: list[str] = []
    roles: list[str] = []
    refused: list[str] = []
    for position, (role, content) in enumerate(turns):
        text = memory_words(role, content)
        if text:
            try:
                ids.extend(writer.add_turn(user_id, role, text, session_id=session_id))
            except Exception as error:
                if not refused_for_good(error):  # the index down; an encoder mismatch, journaled: stop here
                    _written_before(error, ids, roles)
                    raise
                refused.append(f"turn {position} ({role}): {error}")
                continue
            roles.append(role)
    if refused:
        raise TurnsRefused(ids, refused, len(turns))
    return ids


def _written_before(error: BaseException, ids: list[str], roles: list[str]) -> None:
    try:
        error.written, error.written_roles = list(ids), tuple(roles)  # type: ignore[attr-defined]
    except AttributeError:  # an exception type that takes no attributes: nothing to report
        pass


class WriteReport(NamedTuple):
    """What :func:`write_reported` did: the reply metadata, and the roles whose turns are done
    with (written, or refused for good: not to be written again at an eviction); ``None`` when
    the write went through (every role the caller writes is done)."""

    metadata: dict[str, Any]
    done_roles: tuple[str, ...] | None

    def done(self, roles: Sequence[str]) -> Sequence[str]:
        """The roles to mark written, of ``roles`` (those the caller writes): all of them when the
        write went through or only refused some turns, else those written before it stopped."""
        return roles if self.done_roles is None else self.done_roles


def write_reported(
    store: Any, user_id: str, turns: Sequence[tuple[str, str]], session_id: str | None = None
) -> WriteReport:
    """:func:`write_turns` for an adapter's reply metadata: ``{"memory_written": ids}``.

    A failed write does not cost the user the reply they already have: it warns (a
    ``RuntimeWarning`` pointing at the caller's line, outside recall, its adapters and their
    frameworks, for a call made in the caller's thread) and reports ``"memory_write_error"``
    instead of raising. The ids of the turns written before the failure, or beside the turns
    the memory refused, are reported as well; without ``"memory_written"`` nothing was written.
    """
    try:
        return WriteReport({"memory_written": write_turns(store, user_id, turns, session_id=session_id)}, None)
    except Exception as error:
        reason = f"{type(error).__name__}: {error}"
        warnings.warn(f"the reply was generated, but writing it to memory failed ({reason})", RuntimeWarning,
                      stacklevel=caller_level())  # fmt: skip
        if isinstance(error, TurnsRefused):  # every turn is done with: written, or refused for good
            return WriteReport({"memory_written": error.written, "memory_write_error": reason}, None)
        written = getattr(error, "written", None)
        metadata = {"memory_written": written} if written else {}
        return WriteReport({**metadata, "memory_write_error": reason}, tuple(getattr(error, "written_roles", ())))


def last_exchange(
    messages: Sequence[Mapping[str, Any]], reply: str, roles: Iterable[str], questions: bool = True
) -> list[tuple[str, str]]:
    """The turns a chat call adds to memory: its user message and the reply, those of ``roles``.

    The user message is the call's last message when it is the user's: a call that goes on
    after a tool's result (an agent's next step) adds only its reply, so the question that
    started the step is not written once per step. ``questions=False`` writes only what the
    user message states (:func:`recall_core.memory.text.questions.without_questions`).
    """
    last = messages[-1] if messages else None
    last_user = str(last["content"]) if last is not None and last.get("role") == "user" else None
    if last_user:
        last_user = turn_to_write("user", last_user, questions) or None
    turns = [("user", last_user)] if last_user else []
    if reply.strip():
        turns.append(("assistant", reply))
    allowed = set(roles)
    return [(role, text) for role, text in turns if role in allowed]


def write_unanswered(
    store: Any, user_id: str | None, messages: Sequence[Mapping[str, Any]], roles: Iterable[str], questions: bool,
    session_id: str | None, mark_written: Any,
) -> None:
    """A reply that did not come whole (a stream left early or failing midway, a cancelled call): the
    user's turn of ``messages`` is written (if ``roles`` has ``"user"``), as LlamaIndex's chat engines
    put the user message in memory before generating, and ``mark_written(roles)`` tells the session
    what it need not write later: the partial reply and what was written. Never raises: the call's own
    exception is what the caller sees (a failure warns). Before 2026-12-06 nothing was written.
    Without a ``store`` (or ``user_id``) nothing is written, and the user's turn (if in ``roles``) and
    the reply are marked all the same: they are not to be written later either."""
    try:
        users = tuple(role for role in roles if role == "user")
        if store is None or user_id is None:
            mark_written(("assistant", *users))
            return
        report = write_reported(store, user_id, last_exchange(messages, "", users, questions), session_id=session_id)
        mark_written(("assistant", *report.done(users)))
    except Exception as error:  # the original exception goes on
        warnings.warn(f"the user's turn of an unfinished reply could not be written to memory "
                      f"({type(error).__name__}: {error})", RuntimeWarning, stacklevel=3)  # fmt: skip

"""Evicted messages on their way to long-term memory, one at a time.

A session writes the messages it evicts (and those whose write failed before) at each eviction.
Written in one batch, one message the memory refuses for good (a ``ValueError``: a NUL
character pasted in, another turn at a given position) failed the whole batch at every
eviction, so nothing evicted after it was ever written. So each message is written on its own:

* refused (a ``ValueError``, but for the memory's own errors: :func:`refused`): dropped, with a
  ``RuntimeWarning`` that names it; the rest go on. A writer of your own should raise
  ``ValueError`` only for a message it will never take;
* not taken now (any other error: the index or server down): it and every message after it wait
  for the next eviction, in order (trying the rest against a server that is down would only
  wait out its timeout once per message).

Each message is written once per conversation: a :class:`WrittenLog` keeps the keys
(:attr:`~recall_core.session.units.Message.key`: its index in the conversation and every field)
of those written (or dropped, or said written by :meth:`~recall_core.RecallSession.mark_written`),
and outlives what starts a session's cache afresh (an edited history, a failed call, a
``SessionPool`` that dropped the session and made a new one for the same key).
"""

from __future__ import annotations

import os
import sys
import threading
import warnings
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from recall_core.memory.errors import MemoryStoreError
from recall_core.memory.validation import (
    check_content,
    check_session,
    check_turn_index,
    format_timestamp,
    is_blank,
)
from recall_core.session.units import Message, Unit
from recall_core.tokens import RECALL_TOKEN

#: How evicted messages are written: the messages (dicts) in, the ids of the memories written out.
Writer = Callable[[Sequence[Mapping[str, Any]]], Sequence[str]]

#: The packages whose frames a warning skips: the engine, its two adapters, and the frameworks
#: between a caller and the adapters (a chat model's ``invoke`` runs through langchain_core).
#: Folders end in a separator ("recall_core_demo.py" is the caller's); paths are taken as imported,
#: not resolved, as frames name their files.
_OURS = tuple(os.path.join(str(Path(__file__).parents[2]), name, "") for name in ("recall_core", "langchain_recall",
                                                                                  "llamaindex_recall"))  # fmt: skip
_FRAMEWORKS = ("langchain_core", "llama_index.core", "llama_index_instrumentation")


def caller_level() -> int:
    """The ``stacklevel`` that points a warning, raised by the function that calls this one, at
    the first frame outside recall, its adapters and the frameworks they plug into: the caller's
    own line, however many of those frames (``reply``, ``reset``, a chat model's ``invoke``) lie
    between. Where every frame is theirs, the outermost one; a call run in a worker thread (the
    adapters' ``ainvoke``, ``achat``) points at the thread's code, not at the ``await``."""
    skipped = _OURS + tuple(
        os.path.join(os.path.dirname(module.__file__), "") for name in _FRAMEWORKS
        if (module := sys.modules.get(name)) is not None and getattr(module, "__file__", None)
    )  # fmt: skip
    frame = sys._getframe(1)
    level = 1
    while frame.f_back is not None and frame.f_code.co_filename.startswith(skipped):
        frame, level = frame.f_back, level + 1
    return level


@dataclass
class Written:
    """What one write did: the ids written, how many of the messages given are done with
    (written, written before, or dropped; the others wait), and why some are not written (``None``: all were)."""

    ids: list[str]
    done: int
    error: str | None = None


@dataclass
class CallReceipt:
    """One call's own messages in its session: its last user message and the unit of its reply
    (``None`` until the reply is committed; it stays ``None`` after a failed call), so that the
    caller marks those written (:meth:`~recall_core.RecallSession.mark_written`), not the messages
    of whatever call came last. Pass one as ``reply(..., receipt=...)``; the session fills it."""

    user: Message | None = None
    reply: Unit | None = None
    reply_text: str = ""


#: How many keys a :class:`WrittenLog` keeps (the oldest are forgotten first): 4,096 evicted
#: messages of one conversation, about half a megabyte at most.
WRITTEN_LOG_LIMIT = 4096


class WrittenLog:
    """The keys (:attr:`~recall_core.session.units.Message.key`) of the messages written to
    long-term memory for one conversation, so that each is written once. Holds at most ``limit``
    of them, the oldest forgotten first; thread-safe."""

    def __init__(self, limit: int = WRITTEN_LOG_LIMIT) -> None:
        self.limit = limit
        self._keys: OrderedDict[bytes, None] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._keys)

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._keys

    def add(self, keys: Iterable[bytes]) -> None:
        """Remember these keys as written."""
        with self._lock:
            for key in keys:
                self._keys[key] = None
                self._keys.move_to_end(key)
            while len(self._keys) > self.limit:
                self._keys.popitem(last=False)

    def keys(self) -> list[bytes]:
        """The keys held, oldest first."""
        with self._lock:
            return list(self._keys)


@dataclass
class PendingWrites:
    """The messages a session still has to write, the writer that writes them, and the log of
    those written (each message is written once: one already in ``log``, or waiting, is skipped)."""

    writer: Writer | None
    waiting: list[Message] = field(default_factory=list)
    log: WrittenLog = field(default_factory=WrittenLog)

    def write(self, messages: Sequence[Message], warn: bool = True) -> Written:
        """Write the waiting messages, then ``messages``, one at a time (the module's rules); never raises.

        ``warn``: a ``RuntimeWarning`` when messages must wait (a dropped message always warns).
        ``Written.done`` counts ``messages`` done with: written now or before (in the log), or dropped.
        """
        queued = {m.key for m in self.waiting}
        new: list[Message] = []
        for message in messages:
            if message.key not in queued and message.key not in self.log:
                queued.add(message.key)
                new.append(message)
        turns = self.waiting + new
        if self.writer is None or not turns:
            return Written([], len(messages))
        ids: list[str] = []
        dropped: list[str] = []
        for position, turn in enumerate(turns):
            try:
                ids.extend(self.writer([dict(turn.message)]))
                self.log.add([turn.key])
            except Exception as error:
                if refused(error):  # for good: writing it again would fail again
                    self.log.add([turn.key])
                    dropped.append(f"{type(error).__name__}: {error}")
                    warnings.warn(f"an evicted {turn.role} message was refused by the memory and is "
                                  f"dropped ({dropped[-1]}); the others are written", RuntimeWarning, stacklevel=caller_level())  # fmt: skip
                    continue
                # not now: this one and the rest wait for the next eviction
                self.waiting = turns[position:]
                reason = f"{type(error).__name__}: {error}"
                if warn:
                    warnings.warn(f"evicted messages could not be written to memory ({reason}); they are retried "
                                  "at the next eviction", RuntimeWarning, stacklevel=caller_level())  # fmt: skip
                done = sum(1 for m in messages if m.key in self.log)  # the others wait, or are waiting already
                return Written(ids, done, "; ".join([*dropped, reason]))
            except BaseException:
                # Ctrl-C (or a task cancelled) while the encoder works: this one and the rest wait, as
                # after any failure (until 2026-12-07 they were counted evicted and never written, a reviewer).
                self.waiting = turns[position:]
                raise
        self.waiting = []
        return Written(ids, len(messages), "; ".join(dropped) or None)


def refused(error: BaseException) -> bool:
    """Whether a write failed for good: a ``ValueError`` (bad input), but not the memory's own
    errors that are one too (an encoder mismatch is raised after the turn was journaled)."""
    return isinstance(error, ValueError) and not isinstance(error, MemoryStoreError)


def store_writer(memory_writer: Any, user_id: str | None, session_id: str | None) -> Writer:
    """Evicted messages through a ``MemoryWriter`` (``<recall>`` markers taken out: they are not memory)."""

    def write(messages: Sequence[Mapping[str, Any]]) -> list[str]:
        ids: list[str] = []
        for message in messages:
            text = _memory_text(message)
            if text:
                ids.extend(memory_writer.add_turn(
                    user_id, str(message["role"]), text, session_id=message.get("session_id", session_id),
                    timestamp=message.get("timestamp"), turn_index=message.get("turn_index"),
                ))  # fmt: skip
        return ids

    write.checks_turns = True  # type: ignore[attr-defined]  # the memory's checks: check_writable states them
    return write


def check_writable(messages: Sequence[Mapping[str, Any]], roles: Collection[str]) -> None:
    """Refuse now (``ValueError`` naming the message, by its role and words, and the field) a message of ``roles`` that the
    memory would refuse when it is evicted: its content (a NUL, text not UTF-8) or the keys that go to
    the store with it (``timestamp``, ``session_id``, ``turn_index``; an assistant message's words are
    not checked: they are the model's).
    Until 2026-12-07 such a message was taken, and at its eviction it was dropped: out of the cache
    and never in memory, with a warning (a reviewer)."""
    for message in messages:
        if str(message.get("role", "")) not in roles:
            continue
        try:
            # A reply's words are the model's, not the caller's to mend: a NUL the model wrote stuck every
            # later turn (a reviewer); it is taken out when the reply is written (memory_words).
            text = _memory_text(message) if isinstance(message.get("content"), str) else ""
            if message.get("role") != "assistant" and text:
                check_content(text)
            if message.get("timestamp") is not None:
                format_timestamp(message["timestamp"])
            if message.get("session_id") is not None:
                check_session(message["session_id"])
            check_turn_index(message.get("turn_index"))
        except ValueError as error:
            said = str(message.get("content"))
            shown = repr(said if len(said) <= 40 else said[:37] + "...")
            raise ValueError(f"the {message.get('role')} message {shown}: {error} (a session writes the messages it "
                             "evicts to memory: nothing was changed)") from None  # fmt: skip


def _memory_text(message: Mapping[str, Any]) -> str:
    """What of a message the memory is given (:func:`memory_words`)."""
    return memory_words(str(message.get("role", "")), str(message.get("content", "")))


def memory_words(role: str, text: str) -> str:
    """What of a turn's ``text`` the memory is given: ``<recall>`` markers taken out (they are not
    memory), stripped. In an assistant's words a NUL is taken out: the memory refuses it, and a reply
    is a model's words, not the caller's to mend (until 2026-12-08 such a reply was dropped whole at
    its eviction, or refused by an adapter's write). A lone surrogate never gets this far: a call
    refuses it in any message (``settings.check_utf8``)."""
    text = text.replace(RECALL_TOKEN, "")
    if role == "assistant":  # (blank once its NUL is out, a reply is nothing to remember: not a refused write)
        text = text.replace("\x00", "")
        return "" if is_blank(text) else text.strip()
    return text.strip()

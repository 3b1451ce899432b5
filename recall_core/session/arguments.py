"""What a :class:`~recall_core.RecallSession` is made of, checked when it is made (its generator,
bounds, recall config, memory and what writes its evicted messages), and what a reply's call would
refuse, checked before the session evicts or writes anything (:func:`check_call`).

Each wrong one is refused then, naming the argument. Until 2026-12-07 a ``RecallConfig`` given as
the bounds, or a ``SessionConfig`` as the recall config, failed with an ``AttributeError`` at the
first reply, and a writer that could not write (the store itself, say) was taken: every evicted
message failed to be written and was dropped with the session (a reviewer).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from recall_core.config import RecallConfig, SessionConfig, checked_config
from recall_core.memory.validation import check_session, check_user_id
from recall_core.session.writes import Writer, store_writer
from recall_core.settings import check_call_objects
from recall_core.types import check_memory

__all__ = ["bounds_of", "check_call", "check_generator", "recall_config_of", "session_memory", "session_writer"]

_BOUNDS = frozenset({"max_cache_tokens", "sink_tokens"})


def check_generator(generator: object) -> None:
    """A session holds a model's KV cache: a served backend (whose engine's prefix cache is its
    session, docs/serving.md) is refused by name (until 2026-12-07 an ``AttributeError`` at the first
    reply: a reviewer)."""
    if getattr(generator, "served", False) or getattr(generator, "model", None) is None:
        raise ValueError("RecallSession holds the model's KV cache: it needs an in-process RecallGenerator, got "
                         f"{type(generator).__name__} (on a served backend the engine's prefix cache is the session: "
                         "send the whole conversation to generate())")  # fmt: skip


def bounds_of(config: object, overrides: Mapping[str, Any]) -> SessionConfig:
    """The session's :class:`~recall_core.SessionConfig`: ``config`` (default ``SessionConfig()``)
    with the keyword ``overrides`` (``max_cache_tokens``, ``sink_tokens``)."""
    unknown = set(overrides) - _BOUNDS
    if unknown:
        raise TypeError(f"RecallSession got unexpected keyword argument(s) {', '.join(sorted(unknown))}")
    if config is not None and not isinstance(config, SessionConfig):
        hint = " (a RecallConfig goes to recall_config=)" if isinstance(config, RecallConfig) else ""
        raise TypeError(f"config must be a recall_core.SessionConfig (or None), got {type(config).__name__}{hint}")
    return (config or SessionConfig()).replace(**overrides)


def recall_config_of(recall_config: object, default: RecallConfig) -> RecallConfig:
    """``recall_config`` if it is a :class:`~recall_core.RecallConfig`, ``default`` for ``None``."""
    if isinstance(recall_config, SessionConfig):
        raise TypeError("recall_config must be a recall_core.RecallConfig, got a SessionConfig (it goes to config=)")
    return checked_config(recall_config, "recall_config") or default


def session_memory(memory: Any, store: Any, user_id: str | None, default: Any, unset: Any) -> Any:
    """What the session searches: ``memory`` as given, else ``store``'s memory of ``user_id``, else ``default``."""
    if store is not None and not callable(getattr(store, "for_user", None)):
        raise TypeError(f"store must be a recall_core.memory.MemoryStore (with for_user()), got {type(store).__name__}")
    if store is not None and user_id is None:
        raise ValueError("a memory store is attached but no user_id was given: pass user_id=")
    if memory is unset:
        memory = store.for_user(user_id) if store is not None else default
    check_memory(memory)
    return memory


def session_writer(writer: Any, store: Any, user_id: str | None, session_id: str | None) -> Writer | None:
    """What writes the evicted messages: ``writer`` (a ``MemoryWriter``, written for ``user_id``, or a
    callable taking a list of messages and returning ids), else ``store``'s writer, else nothing."""
    if user_id is not None:
        check_user_id(user_id)
    if session_id is not None:
        try:
            check_session(session_id)
        except ValueError as error:
            raise ValueError(f"memory_{error}") from None
    if writer is None:
        return store_writer(store.writer, user_id, session_id) if store is not None else None
    if callable(getattr(writer, "add_turn", None)):  # a MemoryWriter of its own
        if user_id is None:
            raise ValueError("a MemoryWriter writes for a user: pass user_id=")
        return store_writer(writer, user_id, session_id)
    if callable(writer):
        return writer
    hint = " (a store's writer is store.writer)" if callable(getattr(writer, "for_user", None)) else ""
    raise TypeError("writer must be a MemoryWriter or a callable taking a list of messages and returning the "
                    f"ids written, got {type(writer).__name__}{hint}")  # fmt: skip


def check_call(generator: Any, kwargs: Mapping[str, Any], outputs: Mapping[str, Any]) -> None:
    """What a reply's call would refuse, refused before anything is evicted or written: its stop
    strings (also those of a constrained reply, which it then ignores), generation options, streamer,
    lists and ``on_recall`` (until 2026-12-07 refused after the eviction: reviewers)."""
    generator.call_stop_strings({**kwargs, **outputs})
    check_call_objects(kwargs.get("streamer"), kwargs.get("stopping_criteria"), outputs.get("tools"),
                       kwargs.get("on_recall"), kwargs.get("logits_processor"))  # fmt: skip

"""What the adapters' settings and a call's arguments mean, framework-free: the names both
adapters take, the memory a call searches, the checks made at init, and the ``recall`` shortcut."""

from __future__ import annotations

import uuid
from typing import Any, get_args

from recall_core.config import RecallConfig, RecallPolicy
from recall_core.generator import RecallGenerator
from recall_core.memory.validation import check_session, check_user_id, check_write_roles
from recall_core.settings import one_of
from recall_core.tokens import RECALL_TOKEN
from recall_core.types import Memory, check_memory

#: What the adapters report as provider in traces (LangSmith ``ls_provider``).
PROVIDER = "recall"

#: What a reply must look like (``RecallGenerator.generate``'s own arguments, see recall_core.structured.outputs).
OUTPUT_ARGUMENTS = frozenset({"tools", "tool_choice", "response_format", "parallel_tool_calls"})
#: Per-call keyword arguments both adapters take besides ``generate()`` options.
CALL_ARGUMENTS = (
    frozenset({"user_id", "thread_id", "memory", "recall", "recall_config", "on_recall", "stop", "timeout"})
    | OUTPUT_ARGUMENTS
)
#: The per-call switch of the adapters that write what is said to long-term memory (``ChatRecall``,
#: LlamaIndex's ``RecallLLM``): ``True`` / ``False`` for this call, whatever the instance says.
WRITE_MEMORY = "write_memory"
#: What the adapters' ``write_questions`` says by default: a user message that only asks is not
#: written (``python -m benchmarks.hygiene``: written, such questions come back as notes).
WRITE_QUESTIONS = False
#: The ``generate()`` options the shared fields (and the adapter's most-new-tokens field) set.
FIELD_OPTIONS = frozenset(
    {"temperature", "max_new_tokens", "top_p", "top_k", "repetition_penalty", "max_time", "stop_strings"}
)


def resolve_memory(memory: Memory | None, store: Any, user_id: str | None) -> Memory | None:
    """The memory searched at ``<recall>``: ``memory`` itself, or ``store.for_user(user_id)``."""
    if memory is not None:
        return memory
    if store is None:
        return None
    if user_id is None:
        raise ValueError(
            "a memory store is attached but no user_id was given: pass user_id= (at init or per call)"
        )
    return store.for_user(user_id)


def check_generator(generator: Any) -> None:
    if generator is not None and not isinstance(generator, RecallGenerator):
        raise TypeError(f"generator must be a recall_core.RecallGenerator, got {type(generator).__name__}")


def check_memory_arguments(memory: Any, store: Any) -> None:
    if memory is not None and store is not None:
        raise ValueError("give either memory= (anything with search()) or store= with user_id=, not both")
    check_memory(memory)
    if store is not None and not callable(getattr(store, "for_user", None)):
        raise TypeError(
            f"store must be a recall_core.memory.MemoryStore (with for_user()), got {type(store).__name__}"
        )


def check_writing(adapter: Any) -> None:
    """Check at init what an adapter writes memory with (``user_id``, ``write_roles``, ``session_id``,
    those it has): a bad one would otherwise fail every write later, or write nothing."""
    if getattr(adapter, "user_id", None) is not None:
        check_user_id(adapter.user_id)
    if hasattr(adapter, "write_roles"):
        check_write_roles(adapter.write_roles)
    if getattr(adapter, "session_id", None) is not None:
        check_session(adapter.session_id)


def check_thread_id(thread_id: object) -> str | None:
    """A call's ``thread_id`` as the string it is keyed and recorded by (``None``: no conversation).

    A ``uuid.UUID`` (LangGraph's habit) or an int is its ``str()``, as LangGraph's checkpointers take it;
    else it must be a session id (without ``session_id`` it is the session its memories are written
    under). Before 2026-12-06 a bad one was taken, and every write of its calls was refused.
    """
    if thread_id is None:
        return None
    if isinstance(thread_id, uuid.UUID) or (isinstance(thread_id, int) and not isinstance(thread_id, bool)):
        return str(thread_id)
    try:
        if isinstance(thread_id, str):
            return check_session(thread_id)
    except ValueError:
        pass
    raise ValueError(f"thread_id must be a non-empty string with a visible character, valid UTF-8 and no NUL "
                     f"(a uuid.UUID or an int is its str()), got {type(thread_id).__name__} {thread_id!r}")


def mark_for_recall(prompt: str, config: RecallConfig) -> str:
    """A raw text prompt under the ``"auto"`` policy: ``<recall>`` at its end, unless it has one.

    (Chat messages need no marker here: the engine places it by ``recall_position``.)
    """
    if config.recall_policy == "auto" and RECALL_TOKEN not in prompt:
        return prompt + RECALL_TOKEN
    return prompt


def with_recall_policy(config: RecallConfig | None, recall: str | None) -> RecallConfig | None:
    """``config`` with the ``recall`` shortcut applied: the one place the shortcut is resolved.

    ``recall="auto"`` / ``"explicit"`` / ``"off"``... is ``RecallConfig.recall_policy``, said briefly; the
    adapters fold it into their ``recall_config`` at init and into the call's config per
    call, and keep no ``recall`` of their own. ``None`` leaves ``config`` as it is.
    """
    if config is not None and not isinstance(config, RecallConfig):
        raise TypeError(f"recall_config must be a recall_core.RecallConfig, got {type(config).__name__}")
    if recall is None:
        return config
    one_of("recall", recall, get_args(RecallPolicy))
    config = config or RecallConfig()
    return config if config.recall_policy == recall else config.replace(recall_policy=recall)

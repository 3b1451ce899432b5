"""`RecallMemoryBlock`: long-term memory for ``llama_index.core.memory.Memory``, recalled by the loop."""

from __future__ import annotations

import asyncio
import uuid
import warnings
from typing import Any

from llama_index.core.base.llms.types import ChatMessage, MessageRole, TextBlock
from llama_index.core.bridge.pydantic import ConfigDict, Field, field_validator
from llama_index.core.memory.memory import BaseMemoryBlock

from recall_core import RECALL_TOKEN
from recall_core.integration import check_memory_arguments, write_turns

from .llms import THREAD_ID_KEY, USER_ID_KEY, role_name


class RecallMemoryBlock(BaseMemoryBlock[list[ChatMessage]]):
    """A memory block whose memories are injected by recall's decode loop, not pasted into the prompt.

    * ``_aput``: ``Memory`` hands the block the messages that leave its short-term queue
      (``token_limit`` / ``chat_history_token_ratio`` decide when); the block writes them
      into ``store`` for ``user_id`` through the store's ``MemoryWriter``.
    * ``_aget``: instead of memory text, the block returns one system message holding only
      ``<recall>`` (with the user id in ``additional_kwargs``). :class:`RecallLLM` takes it
      out and applies the ``"auto"`` recall policy: ``<recall>`` goes where the reply to the
      user's turn consults memory, and there the loop searches this user's memory with that
      turn and injects the best memory into the KV cache. The prompt stays as short as the
      conversation itself.

    Give the :class:`RecallLLM` the same ``store``; the marker tells it whose memory to use.

    Example::

        from llama_index.core.chat_engine import SimpleChatEngine
        from llama_index.core.memory import Memory

        block = RecallMemoryBlock(store=store, user_id="ada")
        memory = Memory.from_defaults(session_id="s1", token_limit=400, memory_blocks=[block])
        engine = SimpleChatEngine.from_defaults(llm=RecallLLM(store=store), memory=memory)
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    name: str = Field(default="recall_memory", description="The name/identifier of the memory block.")
    description: str | None = Field(
        default="Long-term memory recalled inside generation (recall)",
        description="A description of the memory block.",
    )
    store: Any = Field(exclude=True, description="A recall_core.memory.MemoryStore.")
    user_id: str = Field(description="Whose memory this block writes and recalls.")
    write_roles: tuple[str, ...] = Field(
        default=("user", "assistant"), description="Roles of the turns that are written."
    )
    thread_id: str = Field(
        default_factory=lambda: f"memory-block-{uuid.uuid4().hex[:12]}",
        description="The conversation this block's Memory holds: RecallLLM keeps one KV-cache session per "
        "(user, thread). Default: one of its own per block.",
    )

    @field_validator("store")
    @classmethod
    def _check_store(cls, store: Any) -> Any:
        check_memory_arguments(None, store)
        if store is None:
            raise ValueError("RecallMemoryBlock needs store= (a recall_core.memory.MemoryStore)")
        return store

    @field_validator("name")
    @classmethod
    def _check_name(cls, name: str) -> str:
        # Memory renders block names as tags; a tag spelled "<recall>" would itself trigger a recall.
        if name.strip().lower() == RECALL_TOKEN.strip("<>"):
            raise ValueError(
                f"a memory block may not be named {name!r}: its tag would read as {RECALL_TOKEN}"
            )
        return name

    def marker(self) -> ChatMessage:
        """The message :class:`RecallLLM` reads as "consult this user's memory for this turn"."""
        return ChatMessage(
            role=MessageRole.SYSTEM,
            content=RECALL_TOKEN,
            additional_kwargs={USER_ID_KEY: self.user_id, THREAD_ID_KEY: self.thread_id},
        )

    async def _aget(
        self, messages: list[ChatMessage] | None = None, **block_kwargs: Any
    ) -> list[ChatMessage]:
        return [self.marker()]

    async def _aput(self, messages: list[ChatMessage]) -> None:
        turns: list[tuple[str, str]] = []
        session_id = None
        for message in messages:
            role = role_name(message)
            text = "".join(b.text for b in message.blocks if isinstance(b, TextBlock))
            session_id = session_id or message.additional_kwargs.get("session_id")
            if role in self.write_roles and text.strip() and text.strip() != RECALL_TOKEN:
                turns.append((role, text))
        if not turns:
            return
        try:
            await asyncio.to_thread(write_turns, self.store, self.user_id, turns, session_id)
        except Exception as error:  # the chat goes on; the store's journal keeps what it accepted
            warnings.warn(
                f"RecallMemoryBlock could not write {len(turns)} turn(s) to memory ({type(error).__name__}: {error})",
                RuntimeWarning,
                stacklevel=2,
            )

    async def atruncate(
        self, content: list[ChatMessage], tokens_to_truncate: int
    ) -> list[ChatMessage] | None:
        return content  # one marker: nothing to cut, and dropping it would switch recall off

"""`RecallMemoryBlock`: long-term memory for ``llama_index.core.memory.Memory``, recalled by the loop."""

from __future__ import annotations

import asyncio
import uuid
import warnings
from typing import Any

from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.bridge.pydantic import ConfigDict, Field, field_validator
from llama_index.core.memory.memory import BaseMemoryBlock

from recall_core import RECALL_TOKEN
from recall_core.integration import WRITE_QUESTIONS, check_memory_arguments, check_thread_id
from recall_core.memory.text.questions import turn_to_write
from recall_core.memory.validation import check_user_id, check_write_roles
from recall_core.remember import write_turns

from .markers import (
    RECALL_KEY,
    SESSION_ID_KEY,
    THREAD_ID_KEY,
    USER_ID_KEY,
    USER_TURN_KEY,
    WRITE_QUESTIONS_KEY,
    WRITE_ROLES_KEY,
    message_text,
    turn_digest,
)
from .messages import role_name


class RecallMemoryBlock(BaseMemoryBlock[list[ChatMessage]]):
    """A memory block whose memories are injected by recall's decode loop, not pasted into the prompt.

    * ``_aget``: instead of memory text, the block returns one system message holding only
      ``<recall>`` (with the user id, the thread and ``Memory``'s ``session_id`` in
      ``additional_kwargs``, and which message of the chat history is the user's last: ``Memory``
      may put other blocks' text in front of it). :class:`RecallLLM` takes it out and applies the
      ``"auto"`` recall policy: ``<recall>`` goes where the reply to the user's turn consults memory,
      and there the loop searches this user's memory with that turn and injects the best memory into
      the KV cache. The prompt stays as short as the conversation itself. The block's ``priority``
      is 0 (``Memory`` never cuts such a block: without its marker nothing is recalled or written).
    * Writing, as the turns happen: with ``write_memory=True`` (the default) :class:`RecallLLM`
      writes each exchange (the user's message and its reply, ``write_roles``) into ``store`` for
      ``user_id`` right after the reply, under ``Memory``'s ``session_id``. Nothing waits for
      ``Memory`` to flush its short-term queue (which happens only past ``token_limit``, perhaps
      never in a short session), so a new process recalls what this one was told.
    * ``_aput``: what is handed to the block directly (``await block.aput(messages)``, earlier
      history for instance) is written too. What ``Memory`` flushes out of its short-term queue
      was written already, turn by turn, so the block does not take it
      (``accept_short_term_memory=False``); history given to ``Memory`` itself (``chat_history=``)
      is not written then: hand it to ``aput``, or set ``accept_short_term_memory=True`` (written as
      it is flushed). With ``write_memory=False`` and ``accept_short_term_memory=True`` the block
      writes only what is flushed, as LlamaIndex's own blocks do.

    Give the :class:`RecallLLM` the same ``store``; the marker tells it whose memory to use.

    Example::

        from llama_index.core.chat_engine import SimpleChatEngine
        from llama_index.core.memory import Memory

        block = RecallMemoryBlock(store=store, user_id="ada")
        memory = Memory.from_defaults(session_id="s1", memory_blocks=[block])
        engine = SimpleChatEngine.from_defaults(llm=RecallLLM(store=store), memory=memory)
        engine.chat("My dog is called Biscuit.")   # written to ada's memory after the reply
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
    write_questions: bool = Field(
        default=WRITE_QUESTIONS,
        description="Write a user message that only asks too (off: a question holds no fact, and written it "
        "comes back as a note at the next question like it, in the place of the turn that holds the answer).",
    )
    recall: bool = Field(
        default=True,
        description="Recall this user's memories; False answers without memory (set it between two "
        "chat_engine.chat() calls to turn recall off for a call; RecallLLM's recall= per call wins).",
    )
    write_memory: bool = Field(
        default=True,
        description="Write each exchange to long-term memory as it happens (RecallLLM does, after the reply).",
    )
    accept_short_term_memory: bool = Field(
        default=False,
        description="Take the messages Memory flushes from its short-term queue (off by default: with "
        "write_memory they were written turn by turn already).",
    )
    thread_id: str = Field(
        default_factory=lambda: f"memory-block-{uuid.uuid4().hex[:12]}",
        description="The conversation this block's Memory holds: RecallLLM keeps one KV-cache session per "
        "(user, thread). Default: the Memory's session_id (one of the block's own outside a Memory).",
    )

    @field_validator("store")
    @classmethod
    def _check_store(cls, store: Any) -> Any:
        check_memory_arguments(None, store)
        if store is None:
            raise ValueError("RecallMemoryBlock needs store= (a recall_core.memory.MemoryStore)")
        return store

    @field_validator("user_id")
    @classmethod
    def _check_user_id(cls, user_id: str) -> str:
        return check_user_id(user_id)

    @field_validator("thread_id", mode="before")
    @classmethod
    def _check_thread_id(cls, thread_id: Any) -> str:
        checked = check_thread_id(thread_id)  # as RecallLLM's per-call thread_id (a UUID or an int: its str())
        if checked is None:
            raise ValueError("thread_id must be a non-empty string (a uuid.UUID or an int is its str()), got None")
        return checked

    @field_validator("priority")
    @classmethod
    def _check_priority(cls, priority: int) -> int:
        # Memory cuts blocks of priority 1 and above past its token_limit, the marker with them: nothing
        # would be recalled or written, silently (before 2026-12-06 any priority was taken).
        if priority != 0:
            raise ValueError(f"priority must be 0 for a RecallMemoryBlock, got {priority!r}: Memory drops blocks "
                             "of a higher priority past its token_limit, and without the block's marker nothing is "
                             "recalled or written (the marker is one token; a priority-0 block is never cut)")  # fmt: skip
        return priority

    @field_validator("write_roles", mode="before")
    @classmethod
    def _check_write_roles(cls, roles: Any) -> tuple[str, ...]:
        return check_write_roles(roles)

    @field_validator("name")
    @classmethod
    def _check_name(cls, name: str) -> str:
        # Memory renders block names as tags; a tag spelled "<recall>" would itself trigger a recall.
        if name.strip().lower() == RECALL_TOKEN.strip("<>"):
            raise ValueError(
                f"a memory block may not be named {name!r}: its tag would read as {RECALL_TOKEN}"
            )
        return name

    def marker(self, session_id: str | None = None, user_turn: str | None = None) -> ChatMessage:
        """The message :class:`RecallLLM` reads as "consult this user's memory for this turn, and
        write the exchange after the reply" (``session_id``: ``Memory``'s, recorded with the memories).

        ``user_turn``: the text of the chat history's last user message, the user's own words: named in
        the marker (a hash), ``RecallLLM`` writes and searches with those words only, whatever ``Memory``
        put in front of them, and never an agent's later user-role message (a ReAct ``Observation``).
        Without it, the call's last message is taken as the user's words if it is a user message."""
        own_thread = "thread_id" in self.model_fields_set
        extra = {
            USER_ID_KEY: self.user_id,
            THREAD_ID_KEY: self.thread_id if own_thread or session_id is None else session_id,
            WRITE_ROLES_KEY: list(self.write_roles) if self.write_memory else [],
            WRITE_QUESTIONS_KEY: self.write_questions,
            RECALL_KEY: self.recall,
        }
        if session_id is not None:
            extra[SESSION_ID_KEY] = session_id
        if user_turn:
            extra[USER_TURN_KEY] = turn_digest(user_turn)
        return ChatMessage(role=MessageRole.SYSTEM, content=RECALL_TOKEN, additional_kwargs=extra)

    async def _aget(
        self, messages: list[ChatMessage] | None = None, **block_kwargs: Any
    ) -> list[ChatMessage]:
        session_id = block_kwargs.get("session_id")  # Memory passes its own
        # The chat history as it is before Memory puts any block's content in (Memory(insert_method=USER)
        # puts it in front of the last user message): that message's text is the user's own words.
        last_user = next((m for m in reversed(messages or []) if role_name(m) == "user"), None)
        user_turn = message_text(last_user) if last_user is not None else None
        return [self.marker(session_id if isinstance(session_id, str) else None, user_turn)]

    async def _aput(self, messages: list[ChatMessage]) -> None:
        turns: list[tuple[str, str]] = []
        session_id = None
        for message in messages:
            role = role_name(message)
            text = message_text(message)
            session_id = session_id or message.additional_kwargs.get("session_id")
            text = turn_to_write(role, text, self.write_questions)
            if role in self.write_roles and text.strip() and text.strip() != RECALL_TOKEN:
                turns.append((role, text))
        if not turns:
            return
        try:
            await asyncio.to_thread(write_turns, self.store, self.user_id, turns, session_id)
        except Exception as error:  # the chat goes on; the store's journal keeps what it accepted
            warnings.warn(
                f"RecallMemoryBlock could not write all of {len(turns)} turn(s) to memory ({type(error).__name__}: {error})",
                RuntimeWarning,
                stacklevel=2,
            )

    async def atruncate(
        self, content: list[ChatMessage], tokens_to_truncate: int
    ) -> list[ChatMessage] | None:
        return content  # one marker: nothing to cut, and dropping it would switch recall off

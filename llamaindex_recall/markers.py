"""The marker message a :class:`~llamaindex_recall.RecallMemoryBlock` adds to a chat, and what
:class:`~llamaindex_recall.RecallLLM` reads from it: whose memory to search, which conversation it is,
what to write after the reply, and which message holds the user's own words.

``Memory`` hands its blocks the chat history before it puts their content in, and with
``insert_method=USER`` it puts the other blocks' text (a ``StaticMemoryBlock``'s profile...) in front
of the last user message. So the block names that message in its marker (its length and a hash of
its text: the marker carries none of the user's words), and ``RecallLLM`` finds it again: it writes
those words, not the other blocks' text nor an agent's later user-role message (a ReAct
``Observation``, a retry prompt), and searches the memory with them.
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Sequence
from typing import Any

from llama_index.core.base.llms.types import ChatMessage, MessageRole, TextBlock

from recall_core import RECALL_TOKEN

from .messages import CONTENT_FREE_BLOCKS, role_name

__all__ = [
    "is_recall_marker", "marker_text", "message_text", "own_user_turn", "split_own_turn", "takes_two_user_turns",
    "turn_digest", "without_rendered_marker", "without_rendered_markers",
]  # fmt: skip

#: ``additional_kwargs`` key a recall marker message may carry: whose memory to search.
USER_ID_KEY = "recall_user_id"
#: ``additional_kwargs`` key a recall marker message may carry: which conversation (KV-cache session) it is.
THREAD_ID_KEY = "recall_thread_id"
#: ``additional_kwargs`` key a recall marker message may carry: the session recorded with written memories.
SESSION_ID_KEY = "recall_session_id"
#: ``additional_kwargs`` key a recall marker message may carry: the roles of the exchange to write
#: after the reply (empty: write nothing).
WRITE_ROLES_KEY = "recall_write_roles"
#: ``additional_kwargs`` key a recall marker message may carry: whether a user message that only
#: asks is written too (absent: :data:`recall_core.integration.WRITE_QUESTIONS`).
WRITE_QUESTIONS_KEY = "recall_write_questions"
#: ``additional_kwargs`` key a recall marker message may carry: ``False`` turns recall off for the call.
RECALL_KEY = "recall_enabled"
#: ``additional_kwargs`` key a recall marker message may carry: the ``Memory`` 's last user message, as
#: :func:`turn_digest` names it (since 2026-12-06).
USER_TURN_KEY = "recall_user_turn"


def is_recall_marker(message: ChatMessage) -> bool:
    """A message that says "consult memory here": what :class:`RecallMemoryBlock` adds (known by its
    settings, also after ``Memory`` put other blocks' text in it), or a bare ``<recall>``."""
    return WRITE_ROLES_KEY in message.additional_kwargs or (message.content or "").strip() == RECALL_TOKEN


#: The roles LlamaIndex renders a message's first line with (``"user: ..."``).
_ROLES = frozenset(role.value for role in MessageRole)


def _is_settings(line: str) -> bool:
    """Whether ``line`` is a marker's settings as ``messages_to_history_str`` renders them (a dict's ``repr``)."""
    if not (line.startswith("{") and f"'{WRITE_ROLES_KEY}'" in line):
        return False
    try:
        value = ast.literal_eval(line)
    except (ValueError, SyntaxError, RecursionError, MemoryError):
        return False
    return isinstance(value, dict) and WRITE_ROLES_KEY in value


def _role_line(line: str) -> tuple[str, str] | None:
    role, colon, rest = line.strip().partition(":")
    return (role, rest.strip()) if colon and role in _ROLES else None


def _after_memory_blocks(lines: Sequence[str], marker: int) -> bool:
    """Whether the ``<recall>`` line at ``marker`` follows the ``Memory`` 's other blocks in a system
    message: ``</memory>`` before it, ``"system: <memory>"`` further up (the blocks' text, between
    them, may hold lines that look like a role: "user: prefers short answers", a second reviewer)."""
    if marker < 1 or lines[marker - 1].strip() != "</memory>":
        return False
    return any(line.strip() == f"{MessageRole.SYSTEM.value}: <memory>" for line in lines[: marker - 1])


def without_rendered_marker(text: str) -> tuple[str, bool]:
    """``text`` without a marker a chat engine rendered into it, and whether there was one.

    LlamaIndex's condensing chat engines (``CondensePlusContextChatEngine``, what
    ``index.as_chat_engine()`` builds; ``CondenseQuestionChatEngine``) write the ``Memory`` 's messages
    into a prompt of their own as text (``messages_to_history_str``): the marker shows as a role line
    (``"system: ..."``) and a line with its settings, a dict's ``repr``, with ``<recall>`` either on
    the role line (the text of the ``Memory`` 's other blocks, if any, after it) or on the line
    before the settings (that text before it). Only those whole shapes count; ``<recall>`` and the
    settings line are taken out (the other blocks' text stays). Such a prompt is the engine's own step
    (rephrasing the question), which the adapter answers without recall or writing: until 2026-12-07
    it raised "no user_id was given" on every turn. Nothing is taken from the text (a settings line
    a user pasted chose whose memory was read in this function's first version, a reviewer found).
    """
    if RECALL_TOKEN not in text:  # every call's prompt comes here: most hold no marker at all
        return text, False
    lines = text.split("\n")
    dropped: set[int] = set()
    kept_as: dict[int, str] = {}  # a role line whose marker goes, with the first line of text it held
    for end, line in enumerate(lines):
        if not _is_settings(line):
            continue
        start = next((j for j in range(end - 1, -1, -1) if _role_line(lines[j]) is not None), None)
        if start is None:
            continue
        role, first = _role_line(lines[start])  # type: ignore[misc]
        indent = lines[start][: len(lines[start]) - len(lines[start].lstrip())]
        if first == RECALL_TOKEN:  # "system: <recall>", the other blocks' text, the settings
            held = lines[start + 1 : end]
            if held:
                kept_as[start] = f"{indent}{role}: {held[0]}"
                dropped.add(start + 1)
            else:
                dropped.add(start)
        elif end - 1 > start and lines[end - 1].strip() == RECALL_TOKEN and (
                role == MessageRole.SYSTEM.value or _after_memory_blocks(lines, end - 1)):  # fmt: skip
            # "system: <memory>...", the other blocks' text put first (Memory's insert_method=SYSTEM
            # puts them before the marker's own), then "<recall>" on its own line and the settings
            # (a system message only: a user's message may paste that much):
            # until 2026-12-07 this shape was not seen, and every turn raised (a reviewer)
            dropped.add(end - 1)
        else:
            continue
        dropped.add(end)
    if not dropped:
        return text, False
    out = [kept_as.get(i, line) for i, line in enumerate(lines) if i not in dropped or i in kept_as]
    return "\n".join(out), True


def without_rendered_markers(messages: Sequence[ChatMessage]) -> tuple[list[ChatMessage], bool]:
    """:func:`without_rendered_marker` over chat messages (``CondenseQuestionChatEngine`` asks a chat
    model its rephrasing prompt as one user message): the messages, a rendered marker taken out of
    each text-only one, and whether any held one."""
    out, found = [], False
    for message in messages:
        if message.blocks and _text_only(message):
            text, rendered = without_rendered_marker(message_text(message))
            if rendered:
                found = True
                message = ChatMessage(role=message.role, content=text)
        out.append(message)
    return out, found


def marker_text(message: ChatMessage) -> ChatMessage | None:
    """What a marker holds besides ``<recall>``, as a message of its own, else ``None``.

    ``Memory`` (its default ``insert_method=SYSTEM``) puts the text of its other blocks (a
    ``StaticMemoryBlock``'s profile, a ``FactExtractionMemoryBlock``'s facts) into the first system
    message, which is the block's marker when no system message comes before it.
    """
    blocks = [b for b in message.blocks if not (isinstance(b, TextBlock) and b.text.strip() == RECALL_TOKEN)]
    if not any(isinstance(b, TextBlock) and b.text.strip() for b in blocks):
        return None
    return ChatMessage(role=message.role, blocks=blocks)


def message_text(message: ChatMessage) -> str:
    """A message's text, as the chat template gets it: its text blocks joined by line breaks, as
    ``ChatMessage.content`` joins them (until 2026-12-07 with nothing between: "...Biscuit.What is...")."""
    return "\n".join(block.text for block in message.blocks if isinstance(block, TextBlock))


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def turn_digest(text: str) -> str:
    """How a marker names a user message: ``"<length>:<hash of its text>"``."""
    return f"{len(text)}:{_hash(text)}"


def _parsed(digest: Any) -> tuple[int, str] | None:
    length, _, hashed = digest.partition(":") if isinstance(digest, str) else ("", "", "")
    return (int(length), hashed) if length.isdigit() and int(length) > 0 and hashed else None


def own_user_turn(messages: Sequence[ChatMessage], marker: ChatMessage | None) -> tuple[int | None, str | None]:
    """Which of ``messages`` holds the user's own words, and those words; ``(None, None)``: none does.

    With a marker that names the ``Memory`` 's last user message (:data:`USER_TURN_KEY`): the last user
    message whose text ends with it (what ``Memory`` put in front is not the user's), wherever it is.
    Otherwise (a marker made by hand, none, or a chat engine that put the message in a template of its
    own): the last message, if it is the user's.
    """
    named = _parsed(marker.additional_kwargs.get(USER_TURN_KEY)) if marker is not None else None
    if named is not None:
        length, hashed = named
        for index in range(len(messages) - 1, -1, -1):
            text = message_text(messages[index])
            if role_name(messages[index]) == "user" and len(text) >= length and _hash(text[-length:]) == hashed:
                return index, text[-length:]
    if messages and role_name(messages[-1]) == "user":
        return len(messages) - 1, message_text(messages[-1])
    return None, None


def split_own_turn(messages: Sequence[ChatMessage], index: int, words: str) -> list[ChatMessage]:
    """``messages`` with the text ``Memory(insert_method=USER)`` put in front of the user's words (message
    ``index``) as a user message of its own, just before them: the recall searches with the user's
    words (the last user message), and the model still reads the other blocks' text first."""
    message = messages[index]
    text = message_text(message)
    before = text[: len(text) - len(words)]
    if not before.strip() or not _text_only(message):
        return list(messages)
    own = ChatMessage(role=message.role, blocks=[TextBlock(text=words)], additional_kwargs=message.additional_kwargs)
    return [*messages[:index], ChatMessage(role=message.role, blocks=[TextBlock(text=before)]), own,
            *messages[index + 1 :]]  # fmt: skip


#: Whether a chat template renders two user messages in a row, by template (checked once each).
_TWO_USER_TURNS: dict[str, bool] = {}


def takes_two_user_turns(tokenizer: Any) -> bool:
    """Whether the tokenizer's chat template renders two user messages in a row (one that insists on
    user and assistant in turn raises: then :func:`split_own_turn` is not done)."""
    template = getattr(tokenizer, "chat_template", None)
    if not isinstance(template, str):
        return False
    if template not in _TWO_USER_TURNS:
        try:
            two = [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]
            tokenizer.apply_chat_template(two, tokenize=False, add_generation_prompt=True)
            _TWO_USER_TURNS[template] = True
        except Exception:  # a template's own error (jinja's TemplateError, often): it does not take them
            _TWO_USER_TURNS[template] = False
    return _TWO_USER_TURNS[template]


def _text_only(message: ChatMessage) -> bool:
    """Whether ``message`` holds text blocks only, beside blocks with no content the model reads (a
    ``CachePoint``, a thought: :func:`~llamaindex_recall.messages.to_chat_messages` passes them over)."""
    return all(isinstance(block, TextBlock) or getattr(block, "block_type", None) in CONTENT_FREE_BLOCKS
               for block in message.blocks)  # fmt: skip


"""Turning chat messages into a prompt, with ``<recall>`` where memory should be consulted."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .models import RECALL_TOKEN

Message = Mapping[str, Any]


def chat_prompt_ids(tokenizer: Any, messages: Sequence[Message], policy: str, position: str) -> list[int]:
    """Prompt ids for ``messages`` with ``<recall>`` placed by the recall policy.

    With ``policy="auto"`` the marker goes where the reply to the last user turn consults
    memory: right after the assistant header (``"assistant_start"``) or at the end of the
    last user message (``"user_end"``). Earlier turns were answered already. ``"explicit"``
    changes nothing: the messages carry their own markers.
    """
    check_messages(messages)
    if policy == "auto" and position == "user_end":
        return apply_chat_template(tokenizer, mark_recall(messages, policy))
    ids = apply_chat_template(tokenizer, messages)
    if policy == "auto" and not any(RECALL_TOKEN in str(m.get("content", "")) for m in messages):
        ids.append(tokenizer.convert_tokens_to_ids(RECALL_TOKEN))
    return ids


def mark_recall(messages: Sequence[Message], policy: str) -> list[dict[str, Any]]:
    """Copy ``messages``; with ``policy="auto"`` append ``<recall>`` to the last user turn."""
    marked = [dict(message) for message in messages]
    if policy == "auto":
        for message in reversed(marked):
            if message.get("role") == "user":
                content = str(message.get("content", ""))
                if RECALL_TOKEN not in content:
                    message["content"] = content + RECALL_TOKEN
                break
    return marked


def check_messages(messages: Sequence[Message]) -> None:
    """Every message is a mapping with a string ``role`` and string ``content``."""
    if not messages:
        raise ValueError("messages is empty: give at least one message")
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise ValueError(f"message {index} is a {type(message).__name__}, expected a dict with 'role' and 'content'")
        if not isinstance(message.get("role"), str) or not message.get("role"):
            raise ValueError(f"message {index} has no 'role' string")
        if not isinstance(message.get("content"), str):
            raise ValueError(f"message {index} ({message['role']!r}) has no 'content' string")


def apply_chat_template(tokenizer: Any, messages: Sequence[Message], *, add_generation_prompt: bool = True) -> list[int]:
    """Token ids of ``messages`` through the tokenizer's chat template.

    When the template rejects the conversation, the error names the first message that
    makes it fail (found by rendering ever longer prefixes).
    """
    check_messages(messages)
    if not getattr(tokenizer, "chat_template", None):
        raise ValueError("this tokenizer has no chat template: pass the prompt as a string instead of messages")
    try:
        return _render(tokenizer, messages, add_generation_prompt)
    except Exception as error:
        culprit = _first_failing_message(tokenizer, messages)
        where = f"message {culprit} (role {messages[culprit]['role']!r})" if culprit is not None else "the conversation"
        raise ValueError(f"the chat template rejects {where}: {error}") from error


def render_chat_text(tokenizer: Any, messages: Sequence[Message], *, add_generation_prompt: bool = True) -> str:
    """The chat template's text for ``messages`` (what :func:`apply_chat_template` tokenizes).

    Tokenizing it with ``add_special_tokens=False`` gives exactly :func:`apply_chat_template`'s ids.
    """
    check_messages(messages)
    if not getattr(tokenizer, "chat_template", None):
        raise ValueError("this tokenizer has no chat template: sessions need chat messages and a chat template")
    try:
        return tokenizer.apply_chat_template([dict(m) for m in messages], add_generation_prompt=add_generation_prompt,
                                             tokenize=False)  # fmt: skip
    except Exception as error:
        culprit = _first_failing_message(tokenizer, messages)
        where = f"message {culprit} (role {messages[culprit]['role']!r})" if culprit is not None else "the conversation"
        raise ValueError(f"the chat template rejects {where}: {error}") from error


def _render(tokenizer: Any, messages: Sequence[Message], add_generation_prompt: bool) -> list[int]:
    encoded = tokenizer.apply_chat_template(
        [dict(m) for m in messages], add_generation_prompt=add_generation_prompt, tokenize=True, return_dict=False
    )
    if isinstance(encoded, Mapping):  # some tokenizers return a BatchEncoding regardless
        encoded = encoded["input_ids"]
    return list(encoded)


def _first_failing_message(tokenizer: Any, messages: Sequence[Message]) -> int | None:
    for end in range(1, len(messages) + 1):
        try:
            _render(tokenizer, messages[:end], add_generation_prompt=False)
        except Exception:
            return end - 1
    return None

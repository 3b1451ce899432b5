"""Turning chat messages into a prompt, with ``<recall>`` where memory should be consulted."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from recall_core.config import UNMARKED_POLICIES
from recall_core.tokens import RECALL_TOKEN

Message = Mapping[str, Any]


def chat_prompt_ids(
    tokenizer: Any,
    messages: Sequence[Message],
    policy: str,
    position: str,
    system_prompt: str = "",
    *,
    tools: Sequence[Message] | None = None,
) -> list[int]:
    """Prompt ids for ``messages`` with ``<recall>`` placed by the recall policy.

    With ``policy="auto"`` the marker goes where the reply to the last user turn consults
    memory (earlier turns were answered already): at the end of the system message
    (``"system"``; a system message of ``system_prompt`` is put first when there is none),
    before or after the last user message's words (``"user_start"``, ``"user_end"``), or right
    after the assistant header (``"assistant_start"``). ``"explicit"`` changes nothing: the
    messages carry their own markers. ``"model"`` and ``"uncertainty"`` place no marker (the
    loop recalls when the model asks or is unsure) and put a system message of
    ``system_prompt`` first when there is none (:func:`with_system_prompt`): the prompt the
    recall tuning trains on. ``tools`` (OpenAI-style dicts) go to the template.
    """
    check_messages(messages)
    if policy in UNMARKED_POLICIES:
        return apply_chat_template(tokenizer, with_system_prompt(messages, system_prompt), tools=tools)
    if policy == "auto" and position != "assistant_start":
        marked = mark_recall(messages, policy, position, system_prompt)
        try:
            return apply_chat_template(tokenizer, marked, tools=tools)
        except ValueError:
            apply_chat_template(tokenizer, messages, tools=tools)  # names the caller's own message that fails, if one does
            raise
    ids = apply_chat_template(tokenizer, messages, tools=tools)
    if policy == "auto" and not has_marker(messages):
        ids.append(tokenizer.convert_tokens_to_ids(RECALL_TOKEN))
    return ids


def mark_recall(
    messages: Sequence[Message], policy: str, position: str = "user_end", system_prompt: str = ""
) -> list[dict[str, Any]]:
    """Copy ``messages``; with ``policy="auto"`` put ``<recall>`` where ``position`` says
    (``"system"``, ``"user_start"`` or ``"user_end"``), unless a message has one already."""
    marked = [dict(message) for message in messages]
    if policy != "auto" or has_marker(messages):
        return marked
    if position == "system":
        if marked and marked[0].get("role") == "system":
            content = str(marked[0].get("content", "")).rstrip()
            marked[0]["content"] = f"{content}\n\n{RECALL_TOKEN}" if content else RECALL_TOKEN
        else:
            head = f"{system_prompt.rstrip()}\n\n{RECALL_TOKEN}" if system_prompt.strip() else RECALL_TOKEN
            marked.insert(0, {"role": "system", "content": head})
        return marked
    for message in reversed(marked):
        if message.get("role") == "user":
            content = str(message.get("content", ""))
            message["content"] = RECALL_TOKEN + content if position == "user_start" else content + RECALL_TOKEN
            break
    return marked


def with_system_prompt(messages: Sequence[Message], system_prompt: str) -> list[dict[str, Any]]:
    """Copy ``messages`` with ``{"role": "system", "content": system_prompt}`` first when none is.

    The content is ``system_prompt`` exactly; a caller's own system message is left as it is,
    and an empty ``system_prompt`` adds nothing.
    """
    copied = [dict(m) for m in messages]
    if system_prompt and not (copied and copied[0].get("role") == "system"):
        copied.insert(0, {"role": "system", "content": system_prompt})
    return copied


def has_marker(messages: Sequence[Message]) -> bool:
    return any(RECALL_TOKEN in str(m.get("content", "")) for m in messages)


def last_user_text(messages: Sequence[Message]) -> str | None:
    """The words of the last user message (markers taken out): what the reply answers."""
    for message in reversed(messages):
        if message.get("role") == "user":
            return str(message.get("content", "")).replace(RECALL_TOKEN, "").strip() or None
    return None


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


def apply_chat_template(
    tokenizer: Any,
    messages: Sequence[Message],
    *,
    add_generation_prompt: bool = True,
    tools: Sequence[Message] | None = None,
) -> list[int]:
    """Token ids of ``messages`` (and ``tools``) through the tokenizer's chat template.

    When the template rejects the conversation, the error names the first message that
    makes it fail (found by rendering ever longer prefixes).
    """
    check_messages(messages)
    if not getattr(tokenizer, "chat_template", None):
        raise ValueError("this tokenizer has no chat template: pass the prompt as a string instead of messages")
    try:
        return _render(tokenizer, messages, add_generation_prompt, tools)
    except Exception as error:
        culprit = _first_failing_message(tokenizer, messages, tools)
        where = f"message {culprit} (role {messages[culprit]['role']!r})" if culprit is not None else "the conversation"
        raise ValueError(f"the chat template rejects {where}: {error}") from error


def render_chat_text(
    tokenizer: Any,
    messages: Sequence[Message],
    *,
    add_generation_prompt: bool = True,
    tools: Sequence[Message] | None = None,
) -> str:
    """The chat template's text for ``messages`` (what :func:`apply_chat_template` tokenizes).

    Tokenizing it with ``add_special_tokens=False`` gives exactly :func:`apply_chat_template`'s ids.
    """
    check_messages(messages)
    if not getattr(tokenizer, "chat_template", None):
        raise ValueError("this tokenizer has no chat template: sessions need chat messages and a chat template")
    extra = {"tools": [dict(t) for t in tools]} if tools else {}
    try:
        return tokenizer.apply_chat_template([dict(m) for m in messages], add_generation_prompt=add_generation_prompt,
                                             tokenize=False, **extra)  # fmt: skip
    except Exception as error:
        culprit = _first_failing_message(tokenizer, messages, tools)
        where = f"message {culprit} (role {messages[culprit]['role']!r})" if culprit is not None else "the conversation"
        raise ValueError(f"the chat template rejects {where}: {error}") from error


def decorate(messages: Sequence[Message], config: Any) -> list[dict[str, Any]]:
    """``messages`` as the recall policy renders them, without its marker.

    With ``recall_position="system"`` the marker goes at the end of the system message
    (:func:`mark_recall`): a system message of ``config.system_prompt`` comes first when
    there is none, and the system message's words end with a blank line. A session renders
    every turn this way, so the start of the conversation stays the same from turn to turn
    whether or not that turn's marker goes there. With ``"model"`` and ``"uncertainty"`` the
    conversation is :func:`with_system_prompt`'s, as :func:`chat_prompt_ids` renders it.
    """
    if config.recall_policy in UNMARKED_POLICIES:
        return with_system_prompt(messages, config.system_prompt)
    decorated = [dict(m) for m in messages]
    if config.recall_policy != "auto" or config.recall_position != "system" or has_marker(messages):
        return decorated
    marked = mark_recall(decorated, "auto", "system", config.system_prompt)
    marked[0]["content"] = str(marked[0]["content"]).replace(RECALL_TOKEN, "", 1)
    return marked


def _render(
    tokenizer: Any, messages: Sequence[Message], add_generation_prompt: bool, tools: Sequence[Message] | None = None
) -> list[int]:
    extra = {"tools": [dict(t) for t in tools]} if tools else {}
    encoded = tokenizer.apply_chat_template(
        [dict(m) for m in messages], add_generation_prompt=add_generation_prompt, tokenize=True, return_dict=False,
        **extra,
    )
    if isinstance(encoded, Mapping):  # some tokenizers return a BatchEncoding regardless
        encoded = encoded["input_ids"]
    return list(encoded)


def _first_failing_message(
    tokenizer: Any, messages: Sequence[Message], tools: Sequence[Message] | None = None
) -> int | None:
    for end in range(1, len(messages) + 1):
        try:
            _render(tokenizer, messages[:end], add_generation_prompt=False, tools=tools)
        except Exception:
            return end - 1
    return None

"""Turning chat messages into a prompt, with ``<recall>`` where memory should be consulted."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from recall_core.config import UNMARKED_POLICIES
from recall_core.settings import check_utf8
from recall_core.tokens import RECALL_TOKEN

Message = Mapping[str, Any]
#: Where the policy's marker goes while the messages are rendered: a private-use character no
#: one types, so a ``<recall>`` typed in a message is never taken for it.
_MARK = "\U000f0000"
#: What stands in for each message's content when the template's own text is found (:func:`content_spans`).
_STAND_IN = "\U000f0001{}\U000f0002"
_STAND_IN_SPLIT = re.compile("\U000f0001(\\d+)\U000f0002")


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

    Message content is tokenized as text (:func:`chat_token_ids`): a special token or a
    ``<recall>`` typed in a message is plain text, except the ``<recall>`` markers a caller
    writes under ``policy="explicit"``.
    """
    check_messages(messages)
    keep = marker_tokens(policy)
    if policy in UNMARKED_POLICIES:
        return render_chat_ids(tokenizer, with_system_prompt(messages, system_prompt), tools=tools, keep=keep)
    if policy == "auto" and position != "assistant_start":
        marked = mark_recall(messages, policy, position, system_prompt, marker=_MARK)
        plain = [dict(m, content=str(m["content"]).replace(_MARK, "")) for m in marked]
        try:
            text = render_chat_text(tokenizer, plain, tools=tools)
            at = marker_offset(text, render_chat_text(tokenizer, _with_marker(marked), tools=tools), RECALL_TOKEN)
        except ValueError:
            apply_chat_template(tokenizer, messages, tools=tools)  # names the caller's own message that fails, if one does
            raise
        spans = checked_spans(tokenizer, plain, text, tools=tools)
        if at is not None:
            before, _ = chat_token_ids(tokenizer, text, spans, end=at)
            after, _ = chat_token_ids(tokenizer, text, spans, start=at)
            return [*before, tokenizer.convert_tokens_to_ids(RECALL_TOKEN), *after]
        messages = plain  # the template moved the marker's text: it goes after the assistant header
    ids = render_chat_ids(tokenizer, messages, tools=tools, keep=keep)
    if policy == "auto":
        ids.append(tokenizer.convert_tokens_to_ids(RECALL_TOKEN))
    return ids


def marker_tokens(policy: str) -> tuple[str, ...]:
    """Control tokens a message's content may carry under ``policy``: ``<recall>`` under
    ``"explicit"`` (the caller wrote the prompt and its markers), none otherwise."""
    return (RECALL_TOKEN,) if policy == "explicit" else ()


def mark_recall(
    messages: Sequence[Message],
    policy: str,
    position: str = "user_end",
    system_prompt: str = "",
    *,
    marker: str = RECALL_TOKEN,
) -> list[dict[str, Any]]:
    """Copy ``messages``; with ``policy="auto"`` put ``marker`` (``<recall>``) where ``position``
    says (``"system"``, ``"user_start"`` or ``"user_end"``), unless a message has one already."""
    marked = [dict(message) for message in messages]
    if policy != "auto" or any(marker in str(m.get("content", "")) for m in messages):
        return marked
    if position == "system":
        if marked and marked[0].get("role") == "system":
            content = str(marked[0].get("content", "")).rstrip()
            marked[0]["content"] = f"{content}\n\n{marker}" if content else marker
        else:
            head = f"{system_prompt.rstrip()}\n\n{marker}" if system_prompt.strip() else marker
            marked.insert(0, {"role": "system", "content": head})
        return marked
    for message in reversed(marked):
        if message.get("role") == "user":
            content = str(message.get("content", ""))
            message["content"] = marker + content if position == "user_start" else content + marker
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


def check_prompt(prompt: object) -> None:
    """``prompt`` is a string or a list of messages (:func:`check_messages`), else ``ValueError``
    (several prompts in one list are pointed to ``generate_batch``)."""
    if isinstance(prompt, str):
        check_utf8(prompt, "prompt")
        return
    if not isinstance(prompt, Sequence):
        raise ValueError(f"prompt must be a string or a list of messages (dicts with 'role' and 'content'), "
                         f"got a {type(prompt).__name__}")  # fmt: skip
    if prompt and all(isinstance(item, (str, Sequence)) for item in prompt):
        raise ValueError(f"prompt is a list of {len(prompt)} prompts, not of messages: generate() answers one "
                         "conversation, generate_batch() a list of them")  # fmt: skip
    check_messages(prompt)


def check_messages(messages: Sequence[Message]) -> None:
    """Every message is a mapping with a string ``role`` and string ``content``; a user
    message's content is not blank (it would be answered from memory searched with nothing)."""
    if not messages:
        raise ValueError("messages is empty: give at least one message")
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise ValueError(f"message {index} is a {type(message).__name__}, expected a dict with 'role' and 'content'")
        if not isinstance(message.get("role"), str) or not message.get("role"):
            raise ValueError(f"message {index} has no 'role' string")
        if not isinstance(message.get("content"), str):
            raise ValueError(f"message {index} ({message['role']!r}) has no 'content' string")
        check_utf8(message["content"], f"message {index} content")
        if message["role"] == "user" and not message["content"].strip():
            raise ValueError(f"message {index} ('user') has an empty 'content': give the user's message some text")


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
    if config.recall_policy != "auto" or config.recall_position != "system":
        return decorated
    marked = mark_recall(decorated, "auto", "system", config.system_prompt, marker=_MARK)
    marked[0]["content"] = str(marked[0]["content"]).replace(_MARK, "", 1)
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


# -- content tokenized as text --------------------------------------------------------------


def render_chat_ids(
    tokenizer: Any,
    messages: Sequence[Message],
    *,
    add_generation_prompt: bool = True,
    tools: Sequence[Message] | None = None,
    keep: Sequence[str] = (),
) -> list[int]:
    """Like :func:`apply_chat_template`, with each message's content tokenized as text.

    The template's own control tokens stay tokens; one typed in a message (a role header, an
    end of turn, ``<recall>``) becomes plain text ids, as memory text does when injected, so an
    end user cannot end a turn, open a system message or fire a recall. ``keep`` names the
    control tokens a message may carry (``<recall>`` under ``recall_policy="explicit"``).
    """
    if not getattr(tokenizer, "chat_template", None):
        apply_chat_template(tokenizer, messages, add_generation_prompt=add_generation_prompt, tools=tools)  # its error
    text = render_chat_text(tokenizer, messages, add_generation_prompt=add_generation_prompt, tools=tools)
    spans = checked_spans(tokenizer, messages, text, add_generation_prompt=add_generation_prompt, tools=tools,
                          keep=keep)  # fmt: skip
    return chat_token_ids(tokenizer, text, spans, keep=keep)[0]


def content_spans(
    tokenizer: Any,
    messages: Sequence[Message],
    text: str,
    *,
    add_generation_prompt: bool = True,
    tools: Sequence[Message] | None = None,
) -> list[tuple[int, int]] | None:
    """Where each message's content lies in ``text`` (the template's rendering of ``messages``).

    The template is rendered again with a stand-in for each content; the text between the
    stand-ins is the template's own, and each content (or it trimmed, as templates such as
    Llama 3's trim it) must fill the gap exactly. ``None`` when the rendering cannot be split
    so (a template that looks inside the content).
    """
    stand_ins = [dict(m, content=_STAND_IN.format(i)) for i, m in enumerate(messages)]
    extra = {"tools": [dict(t) for t in tools]} if tools else {}
    try:
        shape = tokenizer.apply_chat_template(stand_ins, add_generation_prompt=add_generation_prompt, tokenize=False,
                                              **extra)  # fmt: skip
    except Exception:
        return None
    pieces = _STAND_IN_SPLIT.split(shape)  # scaffold, index, scaffold, index, ..., scaffold
    spans, at = [], 0
    for k in range(0, len(pieces) - 1, 2):
        scaffold, index, following = pieces[k], int(pieces[k + 1]), pieces[k + 2]
        if index >= len(messages) or not text.startswith(scaffold, at):
            return None
        at += len(scaffold)
        content = str(messages[index]["content"])
        for shown in dict.fromkeys((content, content.strip(), content.lstrip(), content.rstrip())):
            if text.startswith(shown, at) and text.startswith(following, at + len(shown)):
                break
        else:
            return None
        if shown:
            spans.append((at, at + len(shown)))
        at += len(shown)
    return spans if text[at:] == pieces[-1] else None


def checked_spans(
    tokenizer: Any,
    messages: Sequence[Message],
    text: str,
    *,
    add_generation_prompt: bool = True,
    tools: Sequence[Message] | None = None,
    keep: Sequence[str] = (),
) -> list[tuple[int, int]]:
    """:func:`content_spans`, or ``[]`` when none are found and no content holds a control token.

    A template whose text cannot be split into its messages cannot have a typed control token
    tokenized as text: such a message is refused (a ``ValueError`` naming it).
    """
    spans = content_spans(tokenizer, messages, text, add_generation_prompt=add_generation_prompt, tools=tools)
    if spans is not None:
        return spans
    pattern = _control_pattern(tokenizer, exclude=keep)
    for index, message in enumerate(messages):
        found = pattern.search(str(message["content"])) if pattern else None
        if found:
            raise ValueError(
                f"message {index} ({message['role']!r}) holds the control token {found.group()!r}, and this chat "
                "template's text cannot be split into its messages to tokenize it as text: remove it"
            )
    return []


def chat_token_ids(
    tokenizer: Any,
    text: str,
    spans: Sequence[tuple[int, int]],
    *,
    keep: Sequence[str] = (),
    start: int = 0,
    end: int | None = None,
    offsets: bool = False,
) -> tuple[list[int], list[int]]:
    """Ids of ``text[start:end]`` (no special tokens added), the contents at ``spans`` as text.

    Returns the ids and, with ``offsets``, where each starts in ``text`` (else ``[]``). A
    control token outside the spans is the template's and stays a token; one inside is split
    into plain pieces, unless it is one of ``keep``. Text without such a token is tokenized
    whole, exactly as before; with one, the text is cut at the template's control tokens and
    each piece is tokenized with special tokens split (what the tokenizer does between added
    tokens anyway).
    """
    end = len(text) if end is None else end
    spans = [(max(a, start), min(b, end)) for a, b in spans if a < end and b > start]
    typed = _control_pattern(tokenizer, exclude=keep)
    if typed is None or not any(typed.search(text, a, b) for a, b in spans):
        return _encode(tokenizer, text[start:end], start, offsets, split=False)
    controls = _control_pattern(tokenizer)
    kept = re.compile("|".join(map(re.escape, sorted(keep, key=len, reverse=True)))) if keep else None
    cuts: list[tuple[int, int]] = []
    outside, at = [], start
    for a, b in spans:
        outside.append((at, a))
        if kept is not None:
            cuts += [(m.start(), m.end()) for m in kept.finditer(text, a, b)]
        at = b
    outside.append((at, end))
    for a, b in outside:
        cuts += [(m.start(), m.end()) for m in controls.finditer(text, a, b)]  # type: ignore[union-attr]
    ids, starts, at = [], [], start
    for a, b in [*sorted(cuts), (end, end)]:
        if a > at:
            piece_ids, piece_starts = _encode(tokenizer, text[at:a], at, offsets, split=True)
            ids += piece_ids
            starts += piece_starts
        if b > a:
            ids.append(tokenizer.convert_tokens_to_ids(text[a:b]))
            starts += [a] if offsets else []
        at = max(at, b)
    return ids, starts


def marker_offset(plain: str, marked: str, marker: str) -> int | None:
    """Where ``marked`` has ``marker`` inserted into ``plain`` (``None`` if it is not one insertion)."""
    if len(marked) != len(plain) + len(marker):
        return None
    tail = 0  # common suffix, walked from the end: the marker sits near the end of the text
    while tail < len(plain) and plain[-1 - tail] == marked[-1 - tail]:
        tail += 1
    at = len(plain) - tail
    if marked[:at] == plain[:at] and marked[at : at + len(marker)] == marker:
        return at
    return None


def place_marker(messages: Sequence[Message], position: str, system_prompt: str = "") -> list[dict[str, Any]]:
    """Copy ``messages`` with ``recall_policy="auto"``'s ``<recall>`` where ``position`` says; one
    typed in a message does not count (it is text, :func:`chat_token_ids`)."""
    return _with_marker(mark_recall(messages, "auto", position, system_prompt, marker=_MARK))


def _with_marker(messages: Sequence[Message]) -> list[dict[str, Any]]:
    return [dict(m, content=str(m["content"]).replace(_MARK, RECALL_TOKEN)) for m in messages]


def _encode(tokenizer: Any, text: str, offset: int, offsets: bool, *, split: bool) -> tuple[list[int], list[int]]:
    if not text:
        return [], []
    extra = {"split_special_tokens": True} if split else {}
    encoded = tokenizer(text, add_special_tokens=False, return_offsets_mapping=offsets, **extra)
    starts = [offset + a for a, _ in encoded["offset_mapping"]] if offsets else []
    return list(encoded["input_ids"]), starts


def _control_pattern(tokenizer: Any, exclude: Sequence[str] = ()) -> re.Pattern[str] | None:
    """A pattern of the tokenizer's special tokens (what ``split_special_tokens`` splits), longest first."""
    decoder = getattr(tokenizer, "added_tokens_decoder", None) or {}
    tokens = {t.content for t in decoder.values() if getattr(t, "special", False)}
    tokens |= set(getattr(tokenizer, "all_special_tokens", ()))
    tokens = {t for t in tokens - set(exclude) if t}
    if not tokens:
        return None
    return re.compile("|".join(map(re.escape, sorted(tokens, key=len, reverse=True))))

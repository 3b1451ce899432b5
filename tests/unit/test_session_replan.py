"""A session's call rolled back (a decision to recall undone and planned again, or a call that
failed) while its plan prefilled earlier messages again: those messages stay in the conversation,
prefilled again or evicted and written to memory, never dropped (recall_core/session/session.py
``_rollback``, :func:`recall_core.session.units.lost_units`)."""

from __future__ import annotations

import pytest
from transformers import LogitsProcessor, LogitsProcessorList

from recall_core import RecallGenerator, RecallSession
from recall_core.decoding.ask import Decision
from recall_core.memory import HashEncoder, MemoryStore, MemoryWriter
from tests.helpers.chats import SYSTEM, USER_TURNS
from tests.helpers.memories import RAW_TEXT
from tests.helpers.tiny import tiny_model

_TURN = "'<|im_start|>' + m['role'] + ' ' + (messages|length|string) + '\n' + m['content'] + '<|im_end|>\n'"
_END = "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
#: Each message's header carries the conversation's length, so every call renders the earlier
#: turns differently and prefills them again: after the system message (the sink), or from the
#: first message on (a fresh start).
TEMPLATES = {
    "after the sink": "{% for m in messages %}{% if m['role'] == 'system' %}{{ '<|im_start|>system\n' + m['content'] "
                      "+ '<|im_end|>\n' }}{% else %}{{ " + _TURN + " }}{% endif %}" + _END,
    "from the first message": "{% for m in messages %}{{ " + _TURN + " }}" + _END,
}  # fmt: skip
STATEMENT = "My sister Ana lives in Porto."  # no question: ask_on_statements runs it as "ask"


class AskingSession(RecallSession):
    """A session whose decision pass runs for real, with its decision replaced by ``asked``."""

    asked = False

    def _decide(self, logits, config):
        return Decision(super()._decide(logits, config).probability, self.asked)


class Broken(LogitsProcessor):
    """A reply that fails at its first step, after the prefill."""

    def __call__(self, input_ids, scores):
        raise RuntimeError("the reply broke")


class Chat:
    """A chat backend's calls: only the new message each call, or (``whole``, as the LangChain and
    LlamaIndex adapters call their sessions) the whole conversation."""

    def __init__(self, session: RecallSession, whole: bool) -> None:
        self.session, self.whole, self.history = session, whole, [SYSTEM]

    def reply(self, text: str, **kwargs):
        said = [*self.history, {"role": "user", "content": text}]
        result = self.session.reply(said if self.whole else text, **kwargs)
        self.history = [*said, {"role": "assistant", "content": result.text}]
        return result


def _chat(tmp_path, template: str, limit: int | None, whole: bool = False) -> tuple[Chat, MemoryStore]:
    model, tokenizer = tiny_model("llama")
    tokenizer.chat_template = template
    gen = RecallGenerator(model, tokenizer, generation_defaults={"max_new_tokens": 6})
    store = MemoryStore.local(tmp_path / "memory", encoder=HashEncoder(32))
    session = AskingSession(gen, max_cache_tokens=limit, store=store, user_id="ada", write_roles=("user",),
                            writer=MemoryWriter(store, **RAW_TEXT))  # fmt: skip
    session.append([SYSTEM])
    chat = Chat(session, whole)
    for text in USER_TURNS[:4]:
        chat.reply(text)
    return chat, store


def _held(session: RecallSession) -> list[tuple[str, str]]:
    return [(m["role"], m["content"]) for m in session.messages]


def _rows(store: MemoryStore) -> list[str]:
    return [r.text for r in store.for_user("ada").all()]


@pytest.mark.parametrize("whole", [False, True], ids=["new-message", "whole-conversation"])
@pytest.mark.parametrize("limit", [None, 400, 150], ids=["unbounded", "nothing-evicted", "evicting"])
@pytest.mark.parametrize("template", list(TEMPLATES), ids=["after-the-sink", "afresh"])
def test_a_statement_the_model_asks_about_keeps_every_earlier_message_or_writes_it(tmp_path, template, limit, whole):
    chat, store = _chat(tmp_path, TEMPLATES[template], limit, whole)
    session = chat.session
    before, evicted, rows = _held(session), session.evicted_messages, _rows(store)
    session.asked = True
    result = chat.reply(STATEMENT)
    report = result.session
    assert report.reason and ("prefilled again" in report.reason or "differently" in report.reason)
    assert result.recalls  # the decision was undone and the turn planned again, with the notes
    held = _held(session)
    assert held[-2] == ("user", STATEMENT) and held[0] == before[0]  # the system message stays
    gone = [m for m in before if m not in held]
    assert held[: len(before) - len(gone)] == [m for m in before if m in held]  # in order, after the sinks
    new_rows = _rows(store)[len(rows) :]
    assert [text for role, text in gone if role == "user"] == new_rows  # every message that left is in memory
    # A fresh start from the whole conversation reads the messages evicted before again, and evicts
    # them again (not written again): the report counts them too.
    again = evicted if whole and report.fresh_prefill else 0
    assert report.evicted_messages == len(gone) + again == session.evicted_messages - evicted + again
    assert len(report.memory_written) == len(new_rows)
    assert (gone != []) == (limit == 150)  # the small bound evicts in that call, the others keep everything


@pytest.mark.parametrize("limit", [None, 400], ids=["unbounded", "bounded"])
def test_a_failed_call_that_prefilled_earlier_messages_again_leaves_the_conversation_as_it_was(tmp_path, limit):
    chat, store = _chat(tmp_path, TEMPLATES["after the sink"], limit)
    session = chat.session
    before = _held(session)
    with pytest.raises(RuntimeError, match="the reply broke"):
        chat.reply("Where do I live?", logits_processor=LogitsProcessorList([Broken()]))
    assert _held(session) == before and session.evicted_messages == 0
    result = session.reply("Where do I live?")  # only the new message: the earlier ones are prefilled again
    assert _held(session)[: len(before)] == before and _held(session)[-2] == ("user", "Where do I live?")
    assert result.session.reason and result.session.evicted_messages == 0 and _rows(store) == []

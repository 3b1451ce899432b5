"""RecallSession under any sequence of calls a chat backend may make: the cache stays what the
session thinks it holds, and (unbounded) every reply is the one a fresh generate() gives."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recall_core import RecallGenerator, RecallSession
from tests.helpers.chats import SYSTEM, USER_TURNS
from tests.helpers.tiny import tiny_model
from tests.property.invariants import assert_cache_equals_a_fresh_prefill, assert_cache_holds_the_units
from tests.property.strategies import session_operations


@pytest.fixture(scope="module")
def session_generator() -> RecallGenerator:
    model, tokenizer = tiny_model("llama")
    return RecallGenerator(model, tokenizer, generation_defaults={"max_new_tokens": 6})


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(operations=session_operations, bounded=st.booleans())
def test_any_sequence_of_calls_keeps_the_cache_consistent(session_generator, operations, bounded):
    """Whatever the caller does (extend, regenerate, edit the history, append, send a reply
    back changed), the cache holds exactly what the session thinks it holds; unbounded, every
    reply is the one a fresh generate() gives on the conversation."""
    gen = session_generator
    session = RecallSession(gen, max_cache_tokens=160 if bounded else None)
    conversation = [SYSTEM, {"role": "user", "content": USER_TURNS[0]}]
    result = session.reply(conversation)
    conversation.append({"role": "assistant", "content": result.text})
    for step, operation in enumerate(operations):
        text = USER_TURNS[step % len(USER_TURNS)]
        if operation == "user":
            conversation.append({"role": "user", "content": text})
            result = session.reply(conversation)
        elif operation == "new":
            conversation.append({"role": "user", "content": text})
            result = session.reply(text)
        elif operation == "regenerate":
            conversation.pop()
            result = session.reply(conversation)
        elif operation == "edit" and not bounded:
            conversation[1] = {"role": "user", "content": text + " (edited)"}
            conversation.pop()
            result = session.reply(conversation)
        elif operation == "append":
            conversation.append({"role": "user", "content": text})
            conversation.append({"role": "assistant", "content": "Noted."})
            session.append(conversation)
            continue
        else:  # the reply comes back changed (stripped, or edited by the app)
            conversation[-1] = {"role": "assistant", "content": conversation[-1]["content"].strip() + "!"}
            conversation.append({"role": "user", "content": text})
            result = session.reply(conversation)
        conversation.append({"role": "assistant", "content": result.text})
        assert_cache_holds_the_units(session)
        if bounded:
            assert session.cache_tokens <= 160
        else:
            assert result.text == gen.generate(conversation[:-1]).text
    if bounded and session.evicted_messages:
        assert_cache_equals_a_fresh_prefill(session, gen.model)

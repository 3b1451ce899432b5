"""One user's memory never reaches another user's reply, through the adapters' KV sessions or their
fall-backs (a reviewer's three confirmed leaks, 2026-12-07): a per-call ``memory=`` on a shared thread,
``model_copy`` sharing the original's sessions, and an adapter without a store reading the
generator's own memory for any user."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from langchain_recall import ChatRecall, RecallLLM
from recall_core import RecallGenerator
from recall_core.config import SessionConfig
from recall_core.memory import HashEncoder, MemoryStore

QUESTION = [SystemMessage("Be brief."), HumanMessage("What is my locker code?")]


def _injected(message) -> list[str]:
    return [memory[0] for recall in message.response_metadata["recalls"] for memory in recall["memories"]]


def test_a_call_s_own_memory_on_a_shared_thread_reads_only_that_memory(generator, store):
    """The session key is (user, thread): a call's own ``memory=`` is not in it, so bob's call on carol's
    thread reused the KV cache holding carol's injected note, and bob's own recall never ran."""
    [carol] = store.writer.add_turn("carol", "user", "My locker code is 5555.", session_id="s")
    [bob] = store.writer.add_turn("bob", "user", "My locker code is 4417.", session_id="s")
    chat = ChatRecall(generator=generator, store=store, max_tokens=6)
    first = chat.invoke(QUESTION, memory=store.for_user("carol"), thread_id="1")
    second = chat.invoke(QUESTION, memory=store.for_user("bob"), thread_id="1")
    assert _injected(first) == [carol] and _injected(second) == [bob]
    assert second.response_metadata.get("session") is None  # prefilled afresh: no session to share


@pytest.mark.parametrize("change", ["model_copy", "assignment"])
def test_a_copy_of_an_adapter_keeps_none_of_the_original_s_sessions(generator, tmp_path, change):
    with MemoryStore.local(tmp_path / "a", encoder=HashEncoder(64)) as tenant_a, \
            MemoryStore.local(tmp_path / "b", encoder=HashEncoder(64)) as tenant_b:  # fmt: skip
        [code] = tenant_a.writer.add_turn("user-1", "user", "My locker code is 4417.", session_id="s")
        [bike] = tenant_b.writer.add_turn("user-1", "user", "My bike is red.", session_id="s")
        chat_a = ChatRecall(generator=generator, store=tenant_a, user_id="user-1", max_tokens=6,
                            sessions=SessionConfig(max_cache_tokens=260))  # fmt: skip
        assert _injected(chat_a.invoke(QUESTION, thread_id="1")) == [code]
        if change == "model_copy":
            chat_b = chat_a.model_copy(update={"store": tenant_b})
            assert chat_b.session_pool is not chat_a.session_pool
        else:  # the same adapter given another store: none of the sessions made with the old one
            before, chat_b = chat_a.session_pool, chat_a
            chat_b.store = tenant_b
            assert chat_b.session_pool is not before
        reply = chat_b.invoke(QUESTION, thread_id="1")
        assert code not in _injected(reply) and reply.response_metadata["session"]["reused_tokens"] == 0
        history = [SystemMessage("Be brief.")]
        for i in range(6):  # long enough that the copy's session evicts (and writes) its first turns
            history += [HumanMessage(f"Tenant B secret {i}: my PIN is 90{i}{i}."), AIMessage("Noted.")]
        chat_b.invoke([*history, HumanMessage("Thanks.")], thread_id="2")
        assert not any("Tenant B" in r.text for r in tenant_a.for_user("user-1").all())
        assert bike in [r.id for r in tenant_b.for_user("user-1").all()]


@pytest.mark.parametrize("adapter", [ChatRecall, RecallLLM])
def test_an_adapter_without_a_store_refuses_another_user_than_its_generator_s_memory(store, adapter):
    from tests.helpers.tiny import tiny_model

    store.writer.add_turn("ada", "user", "My locker code is 4417.", session_id="s")
    generator = RecallGenerator(*tiny_model("llama"), memory=store.for_user("ada"))
    model = adapter(generator=generator, max_tokens=4)
    with pytest.raises(ValueError, match="user_id 'bob' names whose memory to read, but its generator's own memory is"):
        model.invoke("What is my locker code?", user_id="bob")
    model.invoke("What is my locker code?", user_id="bob", recall="off")  # reads no memory: no one's to refuse
    own = adapter(generator=RecallGenerator(*tiny_model("llama")), memory=store.for_user("ada"), max_tokens=4)
    with pytest.raises(ValueError, match="but this adapter's memory= is user 'ada''s"):
        own.invoke("What is my locker code?", user_id="bob")
    assert isinstance(model.invoke("What is my locker code?", user_id="ada"), AIMessage if adapter is ChatRecall else str)
    assert isinstance(model.invoke("What is my locker code?"), AIMessage if adapter is ChatRecall else str)


def test_a_copy_given_another_generator_answers_with_it(store):
    from tests.helpers.tiny import tiny_model

    store.writer.add_turn("ada", "user", "My locker code is 4417.", session_id="s")
    [bike] = store.writer.add_turn("bob", "user", "My bike is red.", session_id="s")
    ada = RecallGenerator(*tiny_model("llama"), memory=store.for_user("ada"))
    bob = RecallGenerator(*tiny_model("llama"), memory=store.for_user("bob"))
    chat = ChatRecall(generator=ada, max_tokens=4)
    chat.invoke(QUESTION)  # the engine is built
    copied = chat.model_copy(update={"generator": bob})
    assert copied.engine is bob and _injected(copied.invoke(QUESTION, user_id="bob")) == [bike]


def test_the_owner_check_takes_a_user_typed_either_way(store):
    """``for_user`` keeps "Zoë" in NFC; a call naming it in NFD is the same user (a reviewer)."""
    import unicodedata

    from tests.helpers.tiny import tiny_model

    nfd = unicodedata.normalize("NFD", "Zoë")
    chat = ChatRecall(generator=RecallGenerator(*tiny_model("llama")), memory=store.for_user("Zoë"), max_tokens=4)
    assert isinstance(chat.invoke("Hello", user_id=nfd), AIMessage)


def test_write_settings_assigned_after_a_session_was_made_count_for_its_evicted_turns(generator, store):
    """The session's writer fixed ``write_memory`` / ``write_roles`` when it was made: an assignment
    after the first call did not count for the turns its session evicted later (a reviewer)."""
    chat = ChatRecall(generator=generator, store=store, user_id="u", max_tokens=6,
                      sessions=SessionConfig(max_cache_tokens=260))  # fmt: skip
    chat.invoke([SystemMessage("Be brief."), HumanMessage("Hello there.")], thread_id="1")  # the session is made
    chat.write_memory = False
    history = [SystemMessage("Be brief.")]
    for i in range(6):
        history += [HumanMessage(f"Private note {i}: my PIN is 90{i}{i}."), AIMessage("Noted.")]
    reply = chat.invoke([*history, HumanMessage("Thanks.")], thread_id="1")
    assert reply.response_metadata["session"]["evicted_messages"] > 0
    assert not any("Private note" in r.text for r in store.for_user("u").all())

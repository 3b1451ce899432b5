"""LlamaIndex `RecallLLM` on a tiny random Llama: metadata, formatting, stop, streaming, events, async, bad input."""

from __future__ import annotations

import asyncio
import time

import pytest
from llama_index.core.base.llms.types import (
    CacheControl,
    CachePoint,
    ChatMessage,
    ImageBlock,
    MessageRole,
    TextBlock,
)
from llama_index.core.instrumentation.events.llm import (
    LLMChatInProgressEvent,
    LLMCompletionEndEvent,
    LLMCompletionInProgressEvent,
)
from llama_index.core.prompts import PromptTemplate

from llamaindex_recall import RecallLLM
from recall_core import RECALL_TOKEN
from tests.helpers.adapters import SlowMemory, Ticker, pick_stop, strict_roles_generator
from tests.helpers.memories import FixedMemory

FACT = "The user's dog is called Biscuit."
QUESTION = "What is my dog called?"


@pytest.fixture
def llm(generator) -> RecallLLM:
    return RecallLLM(generator=generator, memory=FixedMemory(FACT), max_new_tokens=16)


def test_metadata_comes_from_the_model(llm, generator):
    meta = llm.metadata
    assert meta.context_window == generator.context_window == 512
    # A template without tool support is no function-calling model (LlamaIndex's agents then use
    # ReAct); a template with tools is: test_agents.py (this folder).
    assert meta.num_output == 16 and meta.is_chat_model and not meta.is_function_calling_model
    assert meta.model_name == "LlamaForCausalLM"
    assert RecallLLM(generator=generator, context_window=256).metadata.context_window == 256
    assert RecallLLM(generator=generator, model_name="my-tiny").metadata.model_name == "my-tiny"


def test_complete_and_stream_complete_format_the_prompt_the_same_way(llm):
    for formatted in (False, True):
        done = llm.complete(QUESTION, formatted=formatted)
        chunks = list(llm.stream_complete(QUESTION, formatted=formatted))
        assert "".join(c.delta for c in chunks) == done.text == chunks[-1].text
        assert chunks[-1].raw == done.raw  # same prompt tokens, same recall, same usage
    templated = llm.complete(QUESTION).raw
    raw = llm.complete(QUESTION, formatted=True).raw
    assert templated["usage"]["prompt_tokens"] > raw["usage"]["prompt_tokens"]  # the chat template around it
    assert templated["recalls"][0]["query"] == QUESTION


def test_system_prompt_and_custom_formatters(generator):
    # recall="explicit": no marker, so no system message of recall's own around it either
    with_system = RecallLLM(generator=generator, system_prompt="Be brief.", max_new_tokens=4, recall="explicit")
    plain = RecallLLM(generator=generator, max_new_tokens=4, recall="explicit")
    assert (
        with_system.complete("Hi").raw["usage"]["prompt_tokens"]
        > plain.complete("Hi").raw["usage"]["prompt_tokens"]
    )
    custom = RecallLLM(generator=generator, max_new_tokens=4, completion_to_prompt=lambda p: f"Q: {p}\nA:")
    assert custom.complete("Hi").text == plain.complete(f"Q: Hi\nA:{RECALL_TOKEN}", formatted=True).text


def test_chat_and_stream_chat(llm):
    messages = [
        ChatMessage(role=MessageRole.SYSTEM, content="Be brief."),
        ChatMessage(role=MessageRole.USER, content=QUESTION),
    ]
    response = llm.chat(messages)
    assert response.message.role == MessageRole.ASSISTANT
    chunks = list(llm.stream_chat(messages))
    assert "".join(c.delta for c in chunks) == response.message.content == chunks[-1].message.content
    (recall,) = response.raw["recalls"]
    assert recall["injected"] and recall["query"] == QUESTION and FACT in recall["text"]
    assert response.additional_kwargs["injected_tokens"] == recall["length"] > 0
    assert chunks[-1].raw == response.raw


def test_predict_uses_chat_for_a_chat_model(llm):
    template = PromptTemplate("Answer: {question}")
    assert (
        llm.predict(template, question=QUESTION)
        == llm.chat([ChatMessage(role="user", content=f"Answer: {QUESTION}")]).message.content
    )
    assert "".join(llm.stream(template, question=QUESTION)) == llm.predict(template, question=QUESTION)


def test_stop_strings_are_cut_in_complete_and_stream(llm):
    full = llm.complete(QUESTION, max_new_tokens=24).text
    stop = pick_stop(full)
    cut = llm.complete(QUESTION, max_new_tokens=24, stop=[stop]).text
    assert cut == full[: full.index(stop)]
    assert "".join(c.delta for c in llm.stream_complete(QUESTION, max_new_tokens=24, stop=[stop])) == cut
    at_init = RecallLLM(generator=llm.engine, memory=FixedMemory(FACT), max_new_tokens=24, stop=[stop])
    assert at_init.chat([ChatMessage(role="user", content=QUESTION)]).message.content == cut


def test_events_see_every_streamed_piece(llm, events):
    chunks = list(llm.stream_complete(QUESTION))
    progress = [e for e in events if isinstance(e, LLMCompletionInProgressEvent)]
    assert [e.response.delta for e in progress] == [c.delta for c in chunks]
    assert any(isinstance(e, LLMCompletionEndEvent) for e in events)
    events.clear()
    chat_chunks = list(llm.stream_chat([ChatMessage(role="user", content=QUESTION)]))
    chat_progress = [e for e in events if isinstance(e, LLMChatInProgressEvent)]
    assert "".join(e.response.delta for e in chat_progress) == chat_chunks[-1].message.content


def test_per_call_kwargs(llm):
    assert llm.complete(QUESTION, max_new_tokens=2).raw["usage"]["generated_tokens"] <= 2
    assert llm.complete(QUESTION, max_tokens=2).text == llm.complete(QUESTION, max_new_tokens=2).text
    assert llm.complete(QUESTION, recall="explicit").raw["recalls"] == []
    assert isinstance(llm.complete(QUESTION, temperature=0.7, top_k=10).text, str)


def test_async_does_not_block_and_matches_sync(generator):
    llm = RecallLLM(generator=generator, memory=SlowMemory(FACT, delay=0.4), max_new_tokens=4)

    async def main():
        async with Ticker(0.01) as ticker:
            done = await llm.acomplete(QUESTION)
            after_complete = ticker.ticks
            pieces = [c.delta async for c in await llm.astream_complete(QUESTION)]
            chat = await llm.achat([ChatMessage(role="user", content=QUESTION)])
            chat_pieces = [
                c.delta async for c in await llm.astream_chat([ChatMessage(role="user", content=QUESTION)])
            ]
            start = time.perf_counter()
            await asyncio.gather(llm.acomplete(QUESTION), llm.acomplete("Hello"))
            both = time.perf_counter() - start
        return done, after_complete, ticker.ticks, pieces, chat, chat_pieces, both

    done, after_complete, ticks, pieces, chat, chat_pieces, both = asyncio.run(main())
    assert after_complete >= 10 and ticks >= 50  # the loop kept running through 5 blocking searches
    assert done.text == llm.complete(QUESTION).text == "".join(pieces)
    assert chat.message.content == "".join(chat_pieces)
    assert both < 0.75  # the two 0.4 s searches overlapped


def test_unknown_kwargs_raise(llm, generator):
    with pytest.raises(TypeError, match="'foo'"):
        llm.complete(QUESTION, foo=1)
    with pytest.raises(TypeError, match="'foo'"):
        llm.stream_complete(QUESTION, foo=1)  # at the call, not at the first chunk
    with pytest.raises(TypeError, match="'foo'"):
        llm.chat([ChatMessage(role="user", content=QUESTION)], foo=1)
    with pytest.raises(ValueError, match="foo"):
        RecallLLM(generator=generator, foo=1)
    with pytest.raises((TypeError, ValueError), match="bogus"):
        RecallLLM(generator=generator, generate_kwargs={"bogus": True})


def test_generate_kwargs_may_not_repeat_a_field_and_on_recall_must_be_callable(llm, generator):
    """``generate_kwargs={"max_new_tokens": 3}`` was passed over for the field's 256, and ``on_recall=5``
    failed mid-reply, only where something was recalled (until 2026-12-07, a reviewer)."""
    for options in ({"max_new_tokens": 3}, {"max_tokens": 3}):
        with pytest.raises(ValueError, match="set max_.*as field"):
            RecallLLM(generator=generator, generate_kwargs=options)
    with pytest.raises(ValueError, match="set temperature as field"):
        RecallLLM(generator=generator, temperature=0.5, generate_kwargs={"temperature": 0.7})
    with pytest.raises(ValueError, match="set timeout as field"):  # its option is max_time (a second reviewer)
        RecallLLM(generator=generator, timeout=60.0, generate_kwargs={"timeout": 0.001})
    assert RecallLLM(generator=generator, generate_kwargs={"temperature": 0.7}).generate_kwargs  # set once: fine
    with pytest.raises(ValueError, match="on_recall must be a callable"):
        llm.complete(QUESTION, on_recall=5)


def _prompts(generator, monkeypatch) -> list:
    seen: list = []
    generate = generator.generate

    def recorded(prompt, *args, **kwargs):
        seen.append(prompt)
        return generate(prompt, *args, **kwargs)

    monkeypatch.setattr(generator, "generate", recorded)
    return seen


def test_the_system_prompt_is_sent_once_and_text_blocks_are_joined_as_llamaindex_joins_them(generator, monkeypatch):
    """``predict`` (and the query engines, ``structured_predict``) put ``system_prompt`` in before
    ``chat``, which put it in again; text blocks were joined with nothing between ("Biscuit.What";
    until 2026-12-07, a reviewer)."""
    llm = RecallLLM(generator=generator, system_prompt="Be brief.", max_new_tokens=2, recall="explicit")
    seen = _prompts(generator, monkeypatch)
    llm.predict(PromptTemplate("Answer: {question}"), question=QUESTION)
    llm.chat([ChatMessage(role="user", content=QUESTION)])
    for prompt in seen:
        assert [m["content"] for m in prompt if m["role"] == "system"] == ["Be brief."]
    seen.clear()
    blocks = ChatMessage(role="user", blocks=[TextBlock(text="My dog is called Biscuit."), TextBlock(text=QUESTION)])
    llm.chat([blocks])
    assert seen[0][-1]["content"] == blocks.content == f"My dog is called Biscuit.\n{QUESTION}"
    # a CachePoint (a provider's cache mark; LlamaIndex's Memory keeps it) holds nothing: it is passed over,
    # where it was refused as a non-text block (until 2026-12-07: a reviewer)
    seen.clear()
    marked = ChatMessage(role="user", blocks=[TextBlock(text="My dog is called Biscuit."),
                                              CachePoint(cache_control=CacheControl(type="ephemeral")), TextBlock(text=QUESTION)])  # fmt: skip
    llm.chat([marked])
    assert seen[0][-1]["content"] == f"My dog is called Biscuit.\n{QUESTION}"


def test_rejected_roles_and_non_text_blocks_name_the_message(generator):
    strict = RecallLLM(generator=strict_roles_generator(), max_new_tokens=2)
    history = [
        ChatMessage(role="user", content="hi"),
        ChatMessage(role="tool", content="42"),
        ChatMessage(role="user", content="?"),
    ]
    with pytest.raises(ValueError, match=r"message 1 \(role 'tool'\)"):
        strict.chat(history)
    image = ChatMessage(
        role="user", blocks=[TextBlock(text="look"), ImageBlock(url="http://example.invalid/a.png")]
    )
    with pytest.raises(ValueError, match="message 0 .*'image'"):
        strict.chat([image])


def test_no_memory_says_so(generator):
    bare = RecallLLM(generator=generator, max_new_tokens=4)
    raw = bare.chat([ChatMessage(role="user", content=QUESTION)]).raw
    assert raw["recalls"][0]["reason"] == "no memory" and raw["usage"]["injected_tokens"] == 0


def test_from_a_loaded_model_and_tokenizer():
    from tests.helpers.tiny import tiny_model

    model, tokenizer = tiny_model("gpt2")
    tokenizer.chat_template = None  # a base model: prompts go in as raw text
    llm = RecallLLM.from_model(model, tokenizer, memory=FixedMemory(FACT), max_new_tokens=4)
    assert llm.metadata.context_window == 512
    raw = llm.complete(QUESTION).raw
    usage = raw["usage"]
    assert raw["recalls"][0]["injected"] and usage["prompt_tokens"] - usage["injected_tokens"] < 20  # no template around it


def test_llamaindex_s_token_counter_reads_the_completion_count(llm):
    """``TokenCountingHandler`` reads ``completion_tokens`` from ``raw["usage"]``; without it, it
    estimated the count with tiktoken (a reviewer, 2026-12-07)."""
    from llama_index.core.callbacks.token_counting import get_tokens_from_response

    response = llm.complete(QUESTION, max_new_tokens=3)
    usage = response.raw["usage"]
    assert get_tokens_from_response(response) == (usage["prompt_tokens"], usage["generated_tokens"])
    assert usage["completion_tokens"] == usage["generated_tokens"] > 0


def test_llamaindex_s_token_counter_counts_the_injected_memory(llm, generator):
    """What the model read is the prompt and the injected memory, as LangChain's ``input_tokens`` and
    as a RAG recipe's retrieved text counts: ``prompt_tokens`` left the memory out until 2026-12-07,
    and ``TokenCountingHandler`` counted 45 of the 189 tokens such a call read."""
    from llama_index.core.callbacks import CallbackManager, TokenCountingHandler

    counter = TokenCountingHandler()
    llm.callback_manager = CallbackManager([counter])
    llm.complete(QUESTION, max_new_tokens=3)
    expected = generator.generate([{"role": "user", "content": QUESTION}], memory=FixedMemory(FACT), max_new_tokens=3)
    assert expected.usage.injected_tokens > 0
    assert counter.prompt_llm_token_count == expected.usage.prompt_tokens + expected.usage.injected_tokens
    assert counter.completion_llm_token_count == expected.usage.generated_tokens


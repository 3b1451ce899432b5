"""LangChain adapters on a tiny random Llama: output, stop, streaming, callbacks, async, batch, memory, bad input."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from langchain_core.callbacks import AsyncCallbackHandler, BaseCallbackHandler
from langchain_core.messages import AIMessage, AIMessageChunk, ChatMessage, HumanMessage, SystemMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate

from langchain_recall import ChatRecall, RecallLLM
from recall_core import RECALL_TOKEN, RecallConfig
from tests.helpers.adapters import SlowMemory, pick_stop, strict_roles_generator, ticker_during
from tests.helpers.memories import FixedMemory

FACT = "The user's dog is called Biscuit."
QUESTION = "What is my dog called?"


class TokenCollector(BaseCallbackHandler):
    def __init__(self) -> None:
        self.tokens: list[str] = []
        self.ended = 0

    def on_llm_new_token(self, token: str, **kwargs: Any) -> None:
        self.tokens.append(token)

    def on_llm_end(self, response: Any, **kwargs: Any) -> None:
        self.ended += 1


class AsyncTokenCollector(AsyncCallbackHandler):
    def __init__(self) -> None:
        self.tokens: list[str] = []

    async def on_llm_new_token(self, token: str, **kwargs: Any) -> None:
        self.tokens.append(token)


@pytest.fixture
def llm(generator) -> RecallLLM:
    return RecallLLM(generator=generator, memory=FixedMemory(FACT), max_tokens=16)


@pytest.fixture
def chat(generator) -> ChatRecall:
    return ChatRecall(generator=generator, memory=FixedMemory(FACT), max_tokens=16)


# --------------------------------------------------------------------------- RecallLLM
def test_llm_returns_only_new_text_and_the_trace(llm, generator):
    result = llm.generate(["Hello there"])
    generation = result.generations[0][0]
    expected = generator.generate("Hello there" + RECALL_TOKEN, memory=FixedMemory(FACT), max_new_tokens=16)
    assert generation.text == expected.text  # the prompt is not echoed
    info = generation.generation_info
    assert info["finish_reason"] in ("stop", "length")
    assert info["usage"]["injected_tokens"] == expected.usage.injected_tokens > 0
    (recall,) = info["recalls"]
    assert (
        recall["injected"]
        and recall["memory_id"] == "m0"
        and recall["score"] == 1.0
        and recall["text"] == FACT
    )
    usage = result.llm_output["token_usage"]
    assert usage["prompt_tokens"] == expected.usage.prompt_tokens + expected.usage.injected_tokens
    assert usage["completion_tokens"] == expected.usage.generated_tokens
    assert usage["total_tokens"] == expected.usage.total_tokens
    assert result.llm_output["model_name"]


def test_llm_recall_policy(generator):
    memory = FixedMemory(FACT)
    explicit = RecallLLM(generator=generator, memory=memory, recall="explicit", max_tokens=4)
    assert explicit.generate(["Hello"]).generations[0][0].generation_info["recalls"] == []
    marked = explicit.generate(["Hello" + RECALL_TOKEN]).generations[0][0].generation_info["recalls"]
    assert marked and marked[0]["injected"]
    templated = RecallLLM(generator=generator, memory=memory, use_chat_template=True, max_tokens=4)
    info = templated.generate([QUESTION]).generations[0][0].generation_info
    assert info["recalls"][0]["query"] == QUESTION  # the user turn, not the template around it


def test_llm_stop_is_honoured_and_cut_in_invoke_and_stream(llm):
    full = llm.invoke("Hello there", max_tokens=24)
    stop = pick_stop(full)
    cut = llm.invoke("Hello there", max_tokens=24, stop=[stop])
    assert cut == full[: full.index(stop)]
    assert "".join(llm.stream("Hello there", max_tokens=24, stop=[stop])) == cut
    at_init = RecallLLM(generator=llm.engine, memory=FixedMemory(FACT), max_tokens=24, stop=[stop])
    assert at_init.invoke("Hello there") == cut


def test_llm_stream_joins_to_invoke_and_callbacks_get_every_token(llm):
    text = llm.invoke("Hello there")
    collector = TokenCollector()
    pieces = list(llm.stream("Hello there", config={"callbacks": [collector]}))
    assert "".join(pieces) == text
    assert "".join(collector.tokens) == text and collector.tokens == [p for p in pieces if p]
    assert collector.ended == 1
    streaming = RecallLLM(generator=llm.engine, memory=FixedMemory(FACT), max_tokens=16, streaming=True)
    invoked = TokenCollector()
    assert streaming.invoke("Hello there", config={"callbacks": [invoked]}) == text
    assert "".join(invoked.tokens) == text and len(invoked.tokens) >= 1


def test_llm_batch_is_one_call_per_prompt(llm):
    prompts = ["Hello there", "Where do I live?", "Hello"]
    assert llm.batch(prompts) == [llm.invoke(p) for p in prompts]
    result = llm.generate(prompts)
    assert len(result.generations) == 3
    assert all(g[0].generation_info["recalls"][0]["in_prompt"] for g in result.generations)  # each its own recall
    total = sum(g[0].generation_info["usage"]["total_tokens"] for g in result.generations)
    assert result.llm_output["token_usage"]["total_tokens"] == total


def test_llm_per_call_kwargs(llm):
    short = llm.generate(["Hello there"], max_tokens=3).generations[0][0]
    assert short.generation_info["usage"]["generated_tokens"] <= 3
    assert llm.bind(max_tokens=2).invoke("Hello there") == llm.invoke("Hello there", max_tokens=2)
    assert llm.invoke("Hello there", max_tokens=2) != llm.invoke("Hello there", max_tokens=12)
    no_recall = llm.generate(["Hello"], recall="explicit").generations[0][0].generation_info
    assert no_recall["recalls"] == []
    sampled = llm.generate(["Hello"], temperature=0.8, top_k=20).generations[0][0]
    assert isinstance(sampled.text, str)


def test_llm_ls_params(llm):
    params = llm._get_ls_params(stop=["x"], temperature=0.5)
    assert params["ls_provider"] == "recall" and params["ls_model_type"] == "llm"
    assert params["ls_model_name"] and params["ls_max_tokens"] == 16
    assert params["ls_temperature"] == 0.5 and params["ls_stop"] == ["x"]
    assert llm._get_ls_params(model="other")["ls_model_name"] == "other"
    assert llm._llm_type == "recall" and llm._identifying_params["max_tokens"] == 16


# --------------------------------------------------------------------------- ChatRecall
def test_chat_message_usage_and_trace(chat):
    message = chat.invoke([SystemMessage("Be brief."), HumanMessage(QUESTION)])
    assert isinstance(message, AIMessage) and isinstance(message.content, str)
    usage = message.usage_metadata
    meta = message.response_metadata
    assert usage["output_tokens"] == meta["usage"]["generated_tokens"]
    # prompt_tokens counts what the model read, the memory too (it left the memory out until 2026-12-07)
    assert usage["input_tokens"] == meta["usage"]["prompt_tokens"] > meta["usage"]["injected_tokens"]
    assert usage["input_token_details"]["recall_injected"] == meta["usage"]["injected_tokens"] > 0
    assert usage["total_tokens"] == meta["usage"]["total_tokens"]
    (recall,) = meta["recalls"]
    assert recall["injected"] and recall["query"] == QUESTION and recall["text"] == FACT
    assert meta["model_name"] and meta["finish_reason"] in ("stop", "length")


def test_chat_stream_joins_to_invoke_with_one_last_chunk(chat):
    message = chat.invoke(QUESTION)
    collector = TokenCollector()
    chunks = list(chat.stream(QUESTION, config={"callbacks": [collector]}))
    assert all(isinstance(c, AIMessageChunk) for c in chunks)
    full = chunks[0]
    for chunk in chunks[1:]:
        full += chunk
    assert full.content == message.content
    assert "".join(collector.tokens) == message.content
    assert [c.chunk_position for c in chunks].count("last") == 1 and chunks[-1].chunk_position == "last"
    assert full.usage_metadata == message.usage_metadata
    assert full.response_metadata["recalls"] == message.response_metadata["recalls"]


def test_chat_stop_is_honoured_and_cut(chat):
    full = chat.invoke(QUESTION, max_tokens=24).content
    stop = pick_stop(full)
    cut = chat.invoke(QUESTION, max_tokens=24, stop=[stop]).content
    assert cut == full[: full.index(stop)]
    assert "".join(c.content for c in chat.stream(QUESTION, max_tokens=24, stop=[stop])) == cut


def test_chat_recall_policy_auto_and_explicit(generator):
    memory = FixedMemory(FACT)
    explicit = ChatRecall(generator=generator, memory=memory, recall="explicit", max_tokens=4)
    assert explicit.invoke(QUESTION).response_metadata["recalls"] == []
    assert explicit.invoke(QUESTION + RECALL_TOKEN).response_metadata["recalls"][0]["injected"]
    config = RecallConfig(recall_policy="explicit")
    assert (
        ChatRecall(generator=generator, memory=memory, recall_config=config, max_tokens=4)
        .invoke(QUESTION)
        .response_metadata["recalls"]
        == []
    )
    assert explicit.invoke(QUESTION, recall="auto").response_metadata["recalls"]


def test_chat_in_an_lcel_chain(chat):
    prompt = ChatPromptTemplate.from_messages([("system", "You are terse."), ("human", "{question}")])
    chain = prompt | chat | StrOutputParser()
    answer = chain.invoke({"question": QUESTION})
    assert answer == chat.invoke([SystemMessage("You are terse."), HumanMessage(QUESTION)]).content
    assert "".join(chain.stream({"question": QUESTION})) == answer


def test_chat_batch(chat):
    questions = [QUESTION, "Where do I live?"]
    assert [m.content for m in chat.batch(questions)] == [chat.invoke(q).content for q in questions]


# --------------------------------------------------------------------------- async
@pytest.mark.parametrize("kind", ["llm", "chat"])
def test_async_generation_does_not_block_the_event_loop(generator, kind):
    cls = RecallLLM if kind == "llm" else ChatRecall
    model = cls(generator=generator, memory=SlowMemory(FACT, delay=0.4), max_tokens=4)
    _, ticks = ticker_during(lambda: model.ainvoke(QUESTION))  # a question: its memory is searched
    assert ticks >= 10  # 0.4 s of blocking search: a blocked loop would tick at most once

    async def consume():
        return [piece async for piece in model.astream(QUESTION)]

    pieces, ticks = ticker_during(consume)
    assert ticks >= 10 and pieces


@pytest.mark.parametrize("kind", ["llm", "chat"])
def test_async_calls_run_concurrently(generator, kind):
    cls = RecallLLM if kind == "llm" else ChatRecall
    model = cls(generator=generator, memory=SlowMemory(FACT, delay=0.5), max_tokens=2)

    async def both():
        start = time.perf_counter()
        await asyncio.gather(model.ainvoke("Hello"), model.ainvoke("Hello there"))
        return time.perf_counter() - start

    assert asyncio.run(both()) < 0.95  # two 0.5 s searches overlapped


def test_async_results_match_sync_and_callbacks_get_every_token(chat, llm):
    async def run():
        collector = AsyncTokenCollector()
        chunks = [c async for c in chat.astream(QUESTION, config={"callbacks": [collector]})]
        message = await chat.ainvoke(QUESTION)
        texts = await llm.abatch(["Hello", "Hello there"])
        streamed = "".join([p async for p in llm.astream("Hello")])
        return collector.tokens, chunks, message, texts, streamed

    tokens, chunks, message, texts, streamed = asyncio.run(run())
    assert message.content == chat.invoke(QUESTION).content
    assert "".join(c.content for c in chunks) == message.content == "".join(tokens)
    assert chunks[-1].chunk_position == "last" and chunks[-1].usage_metadata == message.usage_metadata
    assert texts == [llm.invoke("Hello"), llm.invoke("Hello there")]
    assert streamed == texts[0]


# --------------------------------------------------------------------------- bad input
def test_unknown_kwargs_raise(llm, chat, generator):
    with pytest.raises(TypeError, match="unexpected keyword argument.*'foo'"):
        llm.invoke("Hello", foo=1)
    with pytest.raises(TypeError, match="'tempreature'"):
        chat.invoke("Hello", tempreature=0.5)
    with pytest.raises(TypeError, match="'model'"):
        chat.invoke("Hello", model="another-model")  # one instance, one model
    with pytest.raises(ValueError, match="foo"):
        ChatRecall(generator=generator, foo=1)
    with pytest.raises(ValueError, match="api_key"):
        RecallLLM(generator=generator, api_key="x")
    with pytest.raises((TypeError, ValueError), match="bogus"):
        ChatRecall(generator=generator, model_kwargs={"bogus": 1})
    with pytest.raises(ValueError, match="temperature"):
        ChatRecall(generator=generator, temperature=-1)
    with pytest.raises(ValueError, match="top_p"):
        chat.invoke("Hello", top_p=2.0)
    with pytest.raises(ValueError, match="either memory"):
        ChatRecall(generator=generator, memory=FixedMemory(FACT), store=object())


def test_rejected_roles_name_the_message(generator):
    strict = ChatRecall(generator=strict_roles_generator(), max_tokens=2)
    history = [
        HumanMessage("hi"),
        AIMessage("hello"),
        ChatMessage(role="narrator", content="..."),
        HumanMessage("?"),
    ]
    with pytest.raises(ValueError, match=r"message 2 \(role 'narrator'\)"):
        strict.invoke(history)


def test_non_text_content_is_refused_with_the_message_named(chat):
    image = HumanMessage(
        content=[{"type": "text", "text": "look"}, {"type": "image_url", "image_url": {"url": "x"}}]
    )
    with pytest.raises(ValueError, match="message 1 .*'image_url'"):
        chat.invoke([SystemMessage("hi"), image])


def test_no_memory_gives_an_answer_and_says_so(generator):
    bare = ChatRecall(generator=generator, max_tokens=4)
    message = bare.invoke(QUESTION)
    assert message.response_metadata["recalls"][0]["reason"] == "no memory"
    assert message.usage_metadata["input_token_details"]["recall_injected"] == 0


def test_from_a_loaded_model_and_tokenizer():
    from tests.helpers.tiny import tiny_model

    model, tokenizer = tiny_model("qwen2")
    chat = ChatRecall.from_model(model, tokenizer, memory=FixedMemory(FACT), max_tokens=4)
    assert chat.engine.model is model and chat.engine.tokenizer is tokenizer
    assert chat.invoke(QUESTION).response_metadata["recalls"][0]["injected"]
    llm = RecallLLM.from_model(model, tokenizer, model="my-qwen", max_tokens=2)
    assert llm._get_ls_params()["ls_model_name"] == "my-qwen" and isinstance(llm.invoke("Hi"), str)


def test_a_single_stop_string_is_one_string_and_stream_is_langchains_switch(generator):
    chat = ChatRecall(generator=generator, max_tokens=24)
    full = chat.invoke("Hello there").content
    stop = pick_stop(full)
    assert chat.invoke("Hello there", stop=stop).content == chat.invoke("Hello there", stop=[stop]).content
    assert chat.invoke("Hello there", stop=stop[0] + "\u2603").content == full  # not cut at its first character
    assert chat._get_ls_params(stop=stop)["ls_stop"] == [stop]
    assert chat.invoke("Hello there", stream=True).content == chat.invoke("Hello there", stream=False).content == full


def test_tokens_are_counted_by_the_model_s_own_tokenizer(chat, llm, generator):
    """LangChain's default counts GPT-2's tokens, and none offline: ``trim_messages`` never trimmed."""
    from langchain_core.messages import trim_messages

    text = "What is my dog called?"
    own = generator.tokenizer.encode(text, add_special_tokens=False)
    assert chat.get_token_ids(text) == llm.get_token_ids(text) == own and chat.get_num_tokens(text) == len(own)
    history = [HumanMessage("My dog is called Biscuit and he is very old."), AIMessage("A fine name."), HumanMessage(text)]
    last = chat.get_num_tokens_from_messages([history[-1]])
    assert last > len(own)  # the message counted with its role
    kept = trim_messages(history, max_tokens=last + 2, token_counter=chat, strategy="last")
    assert kept == [history[-1]]
    assert RecallLLM(generator=generator, custom_get_token_ids=lambda t: [1, 2]).get_token_ids(text) == [1, 2]


def test_messages_are_counted_as_the_model_reads_them_so_trimming_fits_the_window(generator):
    """LangChain's count of its "Human: ..." text left out the chat template, the system prompt and the
    marker (4 against 32 for one message): ``trim_messages`` to the window kept a prompt the call then
    refused as longer than the window (until 2026-12-07: a reviewer)."""
    from langchain_core.messages import trim_messages

    chat = ChatRecall(generator=generator, max_tokens=4, recall="off")
    history = [m for i in range(80) for m in (HumanMessage(f"My dog is called Biscuit {i}."), AIMessage("Nice!"))]
    history.append(HumanMessage(QUESTION))
    short = [SystemMessage("Be brief."), *history[-3:]]
    assert chat.get_num_tokens_from_messages(short) == chat.invoke(short).usage_metadata["input_tokens"]
    budget = generator.context_window - 4
    assert chat.get_num_tokens_from_messages(history) > budget
    kept = trim_messages(history, max_tokens=budget, token_counter=chat, strategy="last", start_on="human")
    assert 3 < len(kept) < len(history) and chat.invoke(kept).usage_metadata["input_tokens"] <= budget
    assert ChatRecall(generator=generator, custom_get_token_ids=lambda t: [1]).get_num_tokens_from_messages(short) < 20
    assert chat.get_num_tokens_from_messages([]) == 0  # as LangChain's (it raised "messages is empty")
    # the policy a call runs under: a running config's ``recall``, and "ask" / "model", whose marker may come
    from langchain_core.runnables import RunnableLambda

    auto = ChatRecall(generator=generator, max_tokens=4)
    counted = RunnableLambda(auto.get_num_tokens_from_messages).invoke(short, {"configurable": {"recall": "off"}})
    assert counted == chat.get_num_tokens_from_messages(short) != auto.get_num_tokens_from_messages(short)
    for policy in ("ask", "model"):
        assert ChatRecall(generator=generator, recall=policy).get_num_tokens_from_messages(short) \
            >= auto.get_num_tokens_from_messages(short)  # fmt: skip
    from tests.helpers.adapters import (
        weather,  # a template without tool support reads them in its system message
    )

    asked = [HumanMessage(QUESTION)]
    with_tools = chat.get_num_tokens_from_messages(asked, tools=[weather])
    assert with_tools == chat.bind_tools([weather], tool_choice="any").invoke(asked).usage_metadata["input_tokens"]


def test_chat_generate_sums_the_batch_s_usage_in_llm_output(chat):
    result = chat.generate([[HumanMessage("Hello there")], [HumanMessage(QUESTION)]])
    usages = [g[0].message.response_metadata["usage"] for g in result.generations]
    assert result.llm_output["token_usage"]["total_tokens"] == sum(u["total_tokens"] for u in usages)
    assert result.llm_output["token_usage"]["completion_tokens"] == sum(u["generated_tokens"] for u in usages)
    assert result.llm_output["model_name"] == chat.resolved_model_name


def test_a_streaming_chat_model_s_generate_keeps_the_usage_in_llm_output(generator):
    """``streaming=True`` sent ``generate`` down LangChain's stream path, which drops ``llm_output``:
    ``token_usage`` was ``{}`` (a reviewer, 2026-12-07). The tokens still reach the callbacks."""
    collector = TokenCollector()
    chat = ChatRecall(generator=generator, memory=FixedMemory(FACT), max_tokens=6, streaming=True, callbacks=[collector])
    result = chat.generate([[HumanMessage(QUESTION)]])
    usage = result.generations[0][0].message.response_metadata["usage"]
    assert result.llm_output["token_usage"]["total_tokens"] == usage["total_tokens"] > 0
    assert "".join(collector.tokens) == result.generations[0][0].message.content
    assert [c.content for c in chat.stream(QUESTION)]  # stream() still streams


def test_a_cache_put_in_after_the_model_was_built_is_refused_before_it_is_read(chat, llm):
    from langchain_core.caches import InMemoryCache

    for model in (chat, llm):
        for changed in (model.model_copy(update={"cache": InMemoryCache()}), model.model_copy()):
            if changed.cache is False:
                changed.cache = True
            with pytest.raises(ValueError, match="cache must be False or None"):
                changed.invoke(QUESTION)
            with pytest.raises(ValueError, match="cache must be False or None"):
                list(changed.stream(QUESTION))
            with pytest.raises(ValueError, match="cache must be False or None"):
                asyncio.run(changed.ainvoke(QUESTION))


def test_a_bad_max_tokens_is_named_as_the_field_is(generator):
    """``ChatRecall(max_tokens=0)`` named ``max_new_tokens``, a field it has not (a reviewer, 2026-12-07)."""
    with pytest.raises(ValueError, match="max_tokens must be an int >= 1"):
        ChatRecall(generator=generator, max_tokens=0)

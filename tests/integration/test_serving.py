"""The served backend on a real llama.cpp server (xllamacpp from ``make engine``) against the
in-process loop on the same recall-tuned model: same ids sent, same replies (F16), same traces,
streaming, stop strings, the prefix reused after a model-decided recall, concurrency, and faults
(an engine killed or hung mid-request, then restarted). Each module starts its engine on a free
127.0.0.1 port and stops it by its pid."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from recall_core import RecallConfig, RecallGenerator
from recall_core.decoding.abstain import abstention_opening
from recall_core.decoding.notes import block_ids
from recall_core.memory import HashEncoder, MemoryStore
from recall_core.serving import EngineError, EngineServer, ServedRecallGenerator
from recall_core.types import MemoryCandidate, RecallQuery

pytestmark = pytest.mark.server

FACTS = {
    "dog": "My dog is called Biscuit.",
    "sister": "My sister Ana lives in Porto.",
    "allergy": "I am allergic to peanuts.",
}
QUESTIONS = ["What is my dog called?", "Where does my sister live?", "What am I allergic to?"]


class Notes:
    """A memory that answers every search with the same facts (what is searched is the loop's job)."""

    def __init__(self, texts: list[str]) -> None:
        self.texts = texts
        self.queries: list[str] = []

    def search(self, query: RecallQuery, k: int) -> list[MemoryCandidate]:
        self.queries.append(query.text)
        meta = {"role": "user", "timestamp": "2026-11-01T10:00:00"}
        return [MemoryCandidate(f"m{i}", 0.9 - i / 10, t, metadata=meta) for i, t in enumerate(self.texts[:k])]


@pytest.fixture(scope="module")
def gguf(tuned_gguf: Path) -> Path:
    return tuned_gguf


@pytest.fixture(scope="module")
def engine(gguf: Path, tmp_path_factory: pytest.TempPathFactory):
    server = EngineServer(gguf, parallel=4, log_path=tmp_path_factory.mktemp("engine") / "engine.log")
    with server:
        yield server
    assert not server.alive()


@pytest.fixture(scope="module")
def in_process(smollm) -> RecallGenerator:
    model, tokenizer = smollm
    return RecallGenerator(model, tokenizer)


@pytest.fixture(scope="module")
def served(engine: EngineServer, in_process: RecallGenerator) -> ServedRecallGenerator:
    return ServedRecallGenerator(engine.url, in_process.tokenizer, timeout=30)


def _engine_ids(result, tokenizer, config: RecallConfig) -> list[int]:
    """What the in-process loop ran: its sequence with each injected span's pads as the block's ids."""
    ids = result.sequences[0].tolist()
    for recall in reversed(result.recalls):
        if recall.length:
            block = block_ids(tokenizer, recall.text, config)
            assert len(block) == recall.length
            ids[recall.position : recall.position + recall.length] = block
    return ids


@pytest.mark.parametrize("policy", ["auto", "model"])
def test_served_replies_match_the_in_process_loop(policy: str, served, in_process) -> None:
    config = RecallConfig(recall_policy=policy)
    memory = Notes(list(FACTS.values()))
    for question in QUESTIONS:
        messages = [{"role": "user", "content": question}]
        mine = in_process.generate(messages, memory=memory, config=config, max_new_tokens=30)
        theirs = served.generate(messages, memory=memory, config=config, max_new_tokens=30)
        # Same ids: the prompt, the pads where notes went, the reply (F16 against float32: greedy
        # near-ties could flip; on these questions none does).
        assert theirs.sequences.tolist() == mine.sequences.tolist(), question
        assert theirs.text == mine.text
        assert [(r.position, r.length, r.trigger, r.text, r.query, r.memory_id) for r in theirs.recalls] == [
            (r.position, r.length, r.trigger, r.text, r.query, r.memory_id) for r in mine.recalls
        ]
        assert (theirs.usage.prompt_tokens, theirs.usage.generated_tokens, theirs.usage.injected_tokens) == (
            mine.usage.prompt_tokens, mine.usage.generated_tokens, mine.usage.injected_tokens)  # fmt: skip
        assert theirs.finish_reason == mine.finish_reason
        # The engine was given the notes' ids where the pads are.
        assert theirs.output.engine_ids == _engine_ids(mine, in_process.tokenizer, config)
        assert theirs.recalls and theirs.recalls[0].length > 0


@pytest.mark.parametrize("policy", ["auto", "model"])
def test_without_a_memory_the_engine_never_stops_at_recall_as_in_process(policy: str, served, in_process) -> None:
    """News on which the tuned default, left to itself, writes ``<recall>`` (tests/integration/
    test_recall_defaults.py): with no memory both backends mask it and reply in the same words."""
    config = RecallConfig(recall_policy=policy)
    messages = [{"role": "user", "content": "my brother's band is playing at the Crown on saturday, might go if I'm not wrecked"}]
    mine = in_process.generate(messages, memory=None, config=config, max_new_tokens=16)
    theirs = served.generate(messages, memory=None, config=config, max_new_tokens=16)
    recall_id = in_process.model.config.recall_token_id
    assert recall_id not in theirs.output.engine_ids and len(theirs.output.requests) == 1
    assert theirs.sequences.tolist() == mine.sequences.tolist() and len(theirs.text.split()) >= 2


def test_a_recall_under_the_threshold_is_taken_back_on_the_engine_as_in_process(served, in_process) -> None:
    """The engine reports the probability of the ``<recall>`` it stopped at; under ``recall_threshold``
    both backends write the reply the model gives without it."""
    # ask_on_score off: Notes scores every search 0.9, which would open the reply with <recall>
    config = RecallConfig(recall_policy="model", recall_threshold=0.99, ask_on_score=0.0)
    memory = Notes(list(FACTS.values()))
    messages = [{"role": "user", "content": QUESTIONS[0]}]
    mine = in_process.generate(messages, memory=memory, config=config, max_new_tokens=20)
    theirs = served.generate(messages, memory=memory, config=config, max_new_tokens=20)
    asked = served.generate(messages, memory=memory, config=config.replace(recall_threshold=0.0), max_new_tokens=20)
    assert asked.recalls and asked.output.requests[0].tokens[-1] == served._ids[0]  # it does write <recall> here
    assert mine.recalls == theirs.recalls == []
    assert theirs.sequences.tolist() == mine.sequences.tolist() and theirs.text == mine.text
    assert served._ids[0] not in theirs.output.engine_ids  # taken back: never sent again


def test_a_weak_abstention_after_notes_is_masked_on_the_engine_as_in_process(served, in_process) -> None:
    """``abstain_threshold``: the engine's first token after the notes is checked as it streams; a
    weak "I" of "I don't know." drops that request unseen, the step is asked again without it, and
    both backends write the same reply."""
    config = RecallConfig(abstain_threshold=0.99)
    memory = Notes([FACTS["allergy"]])
    messages = [{"role": "user", "content": "What is my favourite film?"}]
    plain = in_process.generate(messages, memory=memory, config=config.replace(abstain_threshold=0.0), max_new_tokens=12)
    assert plain.text == "I don't know."  # what the model says with the check off
    mine = in_process.generate(messages, memory=memory, config=config, max_new_tokens=12)
    theirs = served.generate(messages, memory=memory, config=config, max_new_tokens=12)
    assert not mine.text.startswith("I") and theirs.sequences.tolist() == mine.sequences.tolist()
    assert theirs.text == mine.text
    (first,) = theirs.output.dropped
    assert first.stop_type == "abstained" and first.tokens == [abstention_opening(in_process.tokenizer)]  # never shown
    masked, rest = theirs.output.requests
    assert len(masked.tokens) == 1 and rest.tokens


def test_ask_decides_on_the_engine_as_in_process(served, in_process) -> None:
    """``recall_policy="ask"``: the engine's one-token first pass decides as the in-process one, and
    the reply is the same (asked on the questions about the user, not on a general one)."""
    config = RecallConfig(recall_policy="ask", ask_on_score=0.0)  # Notes scores every search 0.9
    memory = Notes(list(FACTS.values()))
    for question in [*QUESTIONS, "What is the capital of France?"]:
        messages = [{"role": "user", "content": question}]
        mine = in_process.generate(messages, memory=memory, config=config, max_new_tokens=20)
        theirs = served.generate(messages, memory=memory, config=config, max_new_tokens=20)
        assert theirs.sequences.tolist() == mine.sequences.tolist() and theirs.text == mine.text, question
        assert bool(theirs.recalls) == bool(mine.recalls) == (question in QUESTIONS), question
        decision = theirs.output.decided[0]  # the one-token request that decided, shown with the reply's
        assert len(decision.tokens) == 1 and decision.prompt_tokens < theirs.output.requests[0].prompt_tokens + 1
        assert theirs.usage.cached_tokens == decision.cached_tokens


def test_model_policy_continuation_reuses_the_prefix(served) -> None:
    config = RecallConfig(recall_policy="model")
    result = served.generate([{"role": "user", "content": "What is my dog called?"}], memory=Notes([FACTS["dog"]]),
                             config=config, max_new_tokens=30)  # fmt: skip
    first, second = result.output.requests[:2]
    assert first.tokens[-1] == served._ids[0]  # stopped at <recall>
    # Everything the engine computed before the recall (the prompt; <recall> was sampled, not run) is reused.
    assert second.cached_tokens >= first.prompt_tokens
    assert second.computed_tokens == second.prompt_tokens - second.cached_tokens
    assert second.computed_tokens <= result.recalls[0].length + 1


def test_streaming_and_stop_strings_match(served, in_process) -> None:
    messages = [{"role": "user", "content": "What is my dog called?"}]
    memory = Notes([FACTS["dog"]])
    stream = served.stream(messages, memory=memory, max_new_tokens=30)
    pieces = list(stream)
    assert len(pieces) > 1 and "".join(pieces) == stream.result.text
    assert stream.result.text == in_process.generate(messages, memory=memory, max_new_tokens=30).text
    cut = served.generate(messages, memory=memory, max_new_tokens=30, stop=["Biscuit"])
    assert cut.text == in_process.generate(messages, memory=memory, max_new_tokens=30, stop=["Biscuit"]).text
    assert "Biscuit" not in cut.text and cut.finish_reason == "stop"


@pytest.mark.parametrize("max_new_tokens", [16, 15])
def test_non_ascii_replies_match_the_in_process_loop(max_new_tokens: int, served, in_process) -> None:
    """llama.cpp's stream sends no event for an id that leaves the text mid-UTF-8-character; the
    client puts those ids back (and asks again for those a reply ends with: 15 ends inside an
    emoji), so ids, text, count and finish are the in-process ones."""
    prompt = "Emoji list: 😀 😃 😄 😁 😆 😅"
    mine = in_process.generate(prompt, memory=None, max_new_tokens=max_new_tokens)
    theirs = served.generate(prompt, memory=None, max_new_tokens=max_new_tokens)
    assert any(ord(c) > 0xFFFF for c in mine.text)  # the reply has emoji: ids split mid-character
    assert theirs.sequences.tolist() == mine.sequences.tolist() and theirs.text == mine.text
    assert (theirs.usage.generated_tokens, theirs.finish_reason) == (mine.usage.generated_tokens, mine.finish_reason)
    assert len(theirs.output.requests[0].logprobs) == len(theirs.output.requests[0].tokens)


def test_repetition_penalty_covers_the_whole_sequence_as_in_process(served, in_process) -> None:
    """transformers penalises every id of the sequence; llama.cpp by default the last 64 only."""
    weather = ("The weather report for the week: sunny on Monday, rain on Tuesday, clouds on Wednesday, wind on "
               "Thursday, snow on Friday, fog on Saturday and storms on Sunday. ")  # fmt: skip
    # "Biscuit" is over 64 ids back: in process it is penalised (the reply spells it otherwise)
    messages = [{"role": "user", "content": "My dog is called Biscuit. " + weather * 2 + "What is my dog called?"}]
    mine = in_process.generate(messages, memory=None, max_new_tokens=20, repetition_penalty=1.3)
    theirs = served.generate(messages, memory=None, max_new_tokens=20, repetition_penalty=1.3)
    assert theirs.sequences.tolist() == mine.sequences.tolist()


def test_what_needs_the_model_is_refused(served) -> None:
    memory = Notes([FACTS["dog"]])
    messages = [{"role": "user", "content": "hi"}]
    for config, word in ((RecallConfig(inject_mode="kv"), "inject_mode"), (RecallConfig(query_mode="hidden"), "query_mode"),
                         (RecallConfig(recall_policy="uncertainty"), "uncertainty")):  # fmt: skip
        with pytest.raises(ValueError, match=word):
            served.generate(messages, memory=memory, config=config)
    with pytest.raises(ValueError, match="output_scores"):
        served.generate(messages, output_scores=True)


WEATHER = {"type": "function", "function": {"name": "get_weather", "description": "Get the weather at a location.",
           "parameters": {"type": "object", "properties": {"location": {"type": "string"}, "days": {"type": "integer"}},
                          "required": ["location", "days"]}}}  # fmt: skip


@pytest.mark.xfail(strict=True, reason=(
    "the adapter retrained 2026-11-30 (--statements 150) does not close a json_object reply within 60 tokens on the "
    "served engine (the schema call above still parses); structured output was never in the tuning data"))
def test_structured_output_and_forced_tool_calls_are_constrained_by_the_engine(served) -> None:
    """The call's grammar goes to the engine's own llguidance: valid JSON, a valid call, the same parsing."""
    import json

    schema = {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
              "required": ["name", "age"]}  # fmt: skip
    messages = [{"role": "user", "content": "Describe my dog as JSON."}]
    result = served.generate(messages, memory=Notes([FACTS["dog"]]), max_new_tokens=40,
                             response_format={"type": "json_schema", "json_schema": {"name": "Pet", "schema": schema}})  # fmt: skip
    value = json.loads(result.text)
    assert set(value) == {"name", "age"} and isinstance(value["age"], int) and value["name"].strip()
    assert result.recalls and result.recalls[0].length > 0  # recall still ran before the constrained reply
    mode = served.generate(messages, memory=Notes([FACTS["dog"]]), response_format={"type": "json_object"},
                           max_new_tokens=60)  # fmt: skip
    assert isinstance(json.loads(mode.text), dict) and mode.finish_reason == "stop"
    call = served.generate([{"role": "user", "content": "Weather in Porto for 3 days?"}], tools=[WEATHER],
                           tool_choice="required", max_new_tokens=60)  # fmt: skip
    assert len(call.tool_calls) == 1 and call.finish_reason == "tool_calls", (call.text, call.invalid_tool_calls)
    assert call.tool_calls[0].name == "get_weather" and set(call.tool_calls[0].arguments) == {"location", "days"}


def test_concurrent_calls_reach_the_engine_together(served) -> None:
    """Four threads at once on a 4-slot engine: four slots busy at once, each call with its recall.

    (Replies are not compared with those of calls run alone: llama.cpp's batched arithmetic is
    not batch-invariant, so a greedy near-tie may flip when requests share a batch.)"""
    messages = [[{"role": "user", "content": q}] for q in QUESTIONS + ["What is the name of my dog?"]]
    memory = Notes(list(FACTS.values()))
    results: list = [None] * len(messages)

    def ask(i: int) -> None:
        results[i] = served.generate(messages[i], memory=memory, max_new_tokens=20)

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(len(messages))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seen = [(r.output.requests[0].slot, [x.length for x in r.recalls], r.text) for r in results]
    assert len({slot for slot, _, _ in seen}) == len(messages), seen
    assert all(text and lengths and lengths[0] > 0 for _, lengths, text in seen), seen


def test_langchain_abatch_over_the_served_backend(served, tmp_path: Path) -> None:
    from langchain_recall import ChatRecall

    store = MemoryStore.local(tmp_path / "mem", encoder=HashEncoder(64))
    store.for_user("ada").add("My dog is called Biscuit.")
    chat = ChatRecall(generator=served, store=store, user_id="ada", max_tokens=20, write_memory=False)
    import asyncio

    replies = asyncio.run(chat.abatch(["What is my dog called?", "What is my dog's name?"]))
    assert all("Biscuit" in r.content for r in replies)
    store.close()


def test_killed_and_hung_engine_fail_clearly_and_a_restart_is_used_again(gguf: Path, tmp_path: Path) -> None:
    from langchain_recall import ChatRecall

    server = EngineServer(gguf, parallel=1, log_path=tmp_path / "engine.log").start()
    store = MemoryStore.local(tmp_path / "mem", encoder=HashEncoder(64))
    try:
        # 10 s: a silent engine fails well before the default 60 s, while a freshly restarted engine's
        # first reply on two cores shared with the other test worker (it once took over 3 s) still fits.
        served = ServedRecallGenerator(server.url, timeout=10)
        chat = ChatRecall(generator=served, store=store, user_id="ada", max_tokens=12)
        chat.invoke("My dog is called Biscuit.")  # acknowledged: the exchange is written
        written = [r.text for r in store.for_user("ada").all()]
        assert "My dog is called Biscuit." in written

        # Killed mid-request: the stream fails with the engine's address, in time; memory intact.
        stream = served.stream("1, 2, 3, 4, 5, 6, 7,", max_new_tokens=400)
        pieces = iter(stream)
        next(pieces)
        started = time.monotonic()
        server.kill()
        with pytest.raises(EngineError, match="closed|not reachable"):
            list(pieces)
        assert time.monotonic() - started < 5
        with pytest.raises(EngineError, match="not reachable"):
            chat.invoke("What is my dog called?")
        assert [r.text for r in store.for_user("ada").all()] == written

        # Restarted on the same port: the same caller goes on.
        server = EngineServer(gguf, port=server.port, parallel=1, log_path=tmp_path / "engine2.log").start()
        assert chat.invoke("What is my dog called?").content

        # Hung (stopped): a clear error within the timeout, then it answers again.
        assert server.pid is not None
        os.kill(server.pid, signal.SIGSTOP)
        try:
            started = time.monotonic()
            with pytest.raises(EngineError, match="no answer within 10s"):
                served.generate("Hello", max_new_tokens=5)
            assert time.monotonic() - started < 15
        finally:
            os.kill(server.pid, signal.SIGCONT)
        assert served.generate("Hello", max_new_tokens=5).usage.generated_tokens >= 1

        # Stalled mid-reply: max_time ends the reply with the ids that came, and a consumer that leaves
        # is not held for the timeout (until 2026-12-08 both waited 10 s and the first failed as hung).
        for leave in (False, True):
            stream = served.stream("1, 2, 3, 4, 5, 6, 7,", max_new_tokens=400, max_time=None if leave else 2.0)
            pieces = iter(stream)
            next(pieces)
            os.kill(server.pid, signal.SIGSTOP)
            try:
                started = time.monotonic()
                pieces.close() if leave else list(pieces)
                took = time.monotonic() - started
            finally:
                os.kill(server.pid, signal.SIGCONT)
            assert stream.result is not None and stream.result.finish_reason == ("cancelled" if leave else "time")
            assert stream.result.usage.generated_tokens >= 1 and took < 4
        assert served.generate("Hello", max_new_tokens=5).usage.generated_tokens >= 1
    finally:
        server.stop()
        store.close()


def test_stateless_clients_in_processes_share_one_engine_and_one_chroma_server(engine, tmp_path: Path) -> None:
    """The deployment of docs/serving.md in small: three client processes, one engine, one `chroma run`.
    Each client writes its user's fact and asks about it at the same time; each reads its own notes only."""
    import json

    from recall_core.memory.chroma_server import ChromaServer
    from tests.helpers.processes import child

    facts = {"ada": "My dog is called Biscuit.", "bo": "My dog is called Pepper.", "cy": "My dog is called Rex."}
    with ChromaServer(tmp_path / "chroma") as chroma:
        spec = json.dumps({"chroma": chroma.port, "engine": engine.url, "journal": str(tmp_path / "journal.sqlite3"),
                           "go": str(tmp_path / "go")})  # fmt: skip
        clients = [child(tmp_path, """
            import json
            from recall_core.serving import ServedRecallGenerator
            spec, user, fact = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3]
            store = MemoryStore.server(port=spec["chroma"], encoder=HashEncoder(64), journal_path=spec["journal"])
            MemoryWriter(store).add_turn(user, "user", fact)
            generator = ServedRecallGenerator(spec["engine"], memory=store.for_user(user), timeout=120)
            print("ready", flush=True)
            while not os.path.exists(spec["go"]):
                time.sleep(0.01)
            result = generator.generate([{"role": "user", "content": "What is my dog called?"}], max_new_tokens=16)
            print(json.dumps({"notes": [r.text for r in result.recalls], "slot": result.output.requests[0].slot}))
            store.close()
        """, spec, user, fact) for user, fact in facts.items()]
        for process in clients:
            assert process.stdout.readline().strip() == "ready", process.stderr.read()[-2000:]
        (tmp_path / "go").touch()
        outputs = []
        for process in clients:
            assert process.wait(timeout=300) == 0, process.stderr.read()[-2000:]
            outputs.append(json.loads(process.stdout.read().strip().splitlines()[-1]))
    for (user, fact), out in zip(facts.items(), outputs, strict=True):
        notes = "\n".join(out["notes"])
        assert fact.split()[-1].rstrip(".") in notes, (user, notes)
        assert not any(other.split()[-1].rstrip(".") in notes for u, other in facts.items() if u != user)


def test_llamaindex_achat_calls_reach_the_engine_at_once(served) -> None:
    import asyncio

    from llama_index.core.llms import ChatMessage

    from llamaindex_recall import RecallLLM

    slots: list[int] = []

    class Recording(ServedRecallGenerator):
        def generate_ids(self, *args, **kwargs):
            result = super().generate_ids(*args, **kwargs)
            slots.append(result.output.requests[0].slot)
            return result

    generator = Recording(served.client, served.tokenizer)
    llm = RecallLLM(generator=generator, memory=Notes([FACTS["dog"]]), max_new_tokens=12)
    questions = ["What is my dog called?", "What is my dog's name?", "Do I have a dog?"]

    async def ask_all() -> list:
        return await asyncio.gather(*(llm.achat([ChatMessage(role="user", content=q)]) for q in questions))

    replies = asyncio.run(ask_all())
    assert all(r.message.content for r in replies)
    assert len(set(slots)) == len(questions)  # three slots busy at once: the engine batched them
    assert llm.metadata.model_name == "served"

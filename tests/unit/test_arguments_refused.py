"""Bad arguments are refused by name when they are given, before anything changes (a reviewer's
sweep, 2026-12-07): a session's messages that would be refused at their eviction, what a session
is made of, text that is not UTF-8, NumPy numbers, string flags, files that are no files."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from recall_core import RecallConfig, RecallGenerator, RecallSession, SessionConfig
from recall_core.memory import MemoryStore
from recall_core.memory.encoders import HashEncoder
from recall_core.models.loading import load_model
from recall_core.structured.outputs import plan_output
from tests.helpers.tiny import tiny_model

BAD_KEYS = [{"timestamp": ""}, {"timestamp": float("nan")}, {"timestamp": True}, {"turn_index": -1},
            {"session_id": ""}, {"content": "My passport is X123\x00"}]  # fmt: skip
TOOL = {"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}


@pytest.fixture(scope="module")
def gen():
    model, tokenizer = tiny_model("llama")
    return RecallGenerator(model, tokenizer, generation_defaults={"max_new_tokens": 4})


@pytest.fixture
def store(tmp_path):
    with MemoryStore.local(tmp_path / "store", encoder=HashEncoder(32)) as opened:
        yield opened


def _state(session: RecallSession, store: MemoryStore) -> tuple:
    return len(session.messages), session.cache_tokens, session.evicted_messages, store.for_user("ada").count()


def _filled(gen, store) -> tuple[RecallSession, list[dict]]:
    session = RecallSession(gen, store=store, user_id="ada", max_cache_tokens=110, sink_tokens=4)
    history: list[dict] = []
    for said in ["My passport number is X123.", "I live in Lisbon.", "I work as a nurse."]:
        history.append({"role": "user", "content": said})
        history.append({"role": "assistant", "content": session.reply(history).text})
    return session, history


@pytest.mark.parametrize("bad", BAD_KEYS)
def test_a_session_refuses_a_message_the_memory_would_refuse_at_its_eviction(gen, store, bad):
    session, history = _filled(gen, store)
    before = _state(session, store)
    with pytest.raises(ValueError, match=r"the user message '(I like tea|My passport).*': .*(timestamp|turn_index|session_id|content)"):
        session.reply([*history, {"role": "user", "content": "I like tea.", **bad}])
    assert _state(session, store) == before
    # a session that writes nothing takes it, as generate() does
    RecallSession(gen, memory=None).reply([{"role": "user", "content": "I like tea.", **bad}])


@pytest.mark.parametrize("options", [{"stop": [""]}, {"stop": 5}, {"streamer": object()}, {"stopping_criteria": 5},
                                     {"on_recall": 5}, {"logits_processor": 5},
                                     {"stop": [""], "response_format": {"type": "json_object"}}])  # fmt: skip
def test_a_reply_refused_for_its_options_evicts_and_writes_nothing(gen, store, options):
    session, history = _filled(gen, store)
    history.append({"role": "user", "content": "My cat is called Pepper, and I like long walks by the sea."})
    before = _state(session, store)
    with pytest.raises(ValueError, match="stop strings|streamer|stopping_criteria|on_recall|logits_processor"):
        session.reply(history, **options)
    assert _state(session, store) == before


def test_what_a_session_is_made_of_is_checked_when_it_is_made(gen, store):
    with pytest.raises(TypeError, match="writer must be a MemoryWriter or a callable.*store.writer"):
        RecallSession(gen, store=store, user_id="ada", writer=store)
    with pytest.raises(TypeError, match="writer must be"):
        RecallSession(gen, writer=5)
    with pytest.raises(TypeError, match="config must be a recall_core.SessionConfig.*recall_config="):
        RecallSession(gen, RecallConfig(memories=3))
    with pytest.raises(TypeError, match="recall_config must be a recall_core.RecallConfig, got a SessionConfig"):
        RecallSession(gen, recall_config=SessionConfig())
    with pytest.raises(TypeError, match="store must be"):
        RecallSession(gen, store="path", user_id="ada")
    with pytest.raises(TypeError, match=r"memory must have a search.*store.for_user"):
        RecallSession(gen, memory=store)
    with pytest.raises(ValueError, match="memory_session_id"):
        RecallSession(gen, store=store, user_id="ada", memory_session_id="")
    session = RecallSession(gen, store=store, user_id="ada")
    with pytest.raises(TypeError, match="config must be a recall_core.RecallConfig"):
        session.reply("hi", config={"memories": 1})
    with pytest.raises(ValueError, match="messages must be a list"):
        session.reply(None)
    assert session.turns == 0


def test_the_store_itself_is_no_memory(gen, store):
    model, tokenizer = gen.model, gen.tokenizer
    with pytest.raises(TypeError, match=r"memory must have a search.*store.for_user"):
        RecallGenerator(model, tokenizer, memory=store)
    with pytest.raises(TypeError, match="memory must have a search"):
        gen.generate([{"role": "user", "content": "hi"}], memory=store)


def test_text_that_is_not_utf8_is_refused_by_name(gen):
    text = "I love the caf\udce9 on the corner"
    with pytest.raises(ValueError, match="prompt is not valid UTF-8"):
        gen.generate(text)
    with pytest.raises(ValueError, match="message 0 content is not valid UTF-8"):
        gen.generate([{"role": "user", "content": text}])
    with pytest.raises(ValueError, match="message 0 content is not valid UTF-8"):
        RecallSession(gen, memory=None).reply(text)
    with pytest.raises(ValueError, match="system_prompt is not valid UTF-8"):
        RecallConfig(system_prompt=text)


def test_numpy_numbers_are_taken_as_the_numbers_they_hold(store):
    config = RecallConfig(top_k=np.int64(5), min_score=np.float32(0.25))
    assert config.top_k == 5 and type(config.top_k) is int and isinstance(config.min_score, float)
    assert SessionConfig(max_cache_tokens=np.int64(1024)).max_cache_tokens == 1024
    memory = store.for_user("ada")
    memory.add("My dog is called Biscuit.")
    assert len(memory.search("dog", k=np.int64(3))) == 1 and len(memory.list(limit=np.int64(3))) == 1
    with pytest.raises(ValueError, match="k must be an int >= 1"):
        memory.search("dog", k=np.bool_(True))


def test_a_vector_search_past_the_exact_size_takes_any_k(store, monkeypatch):
    import recall_core.memory.search as search

    monkeypatch.setattr(search, "EXACT_SEARCH_MAX", 3)  # the approximate path, which Chroma's n_results overflowed
    memory = store.for_user("ada")
    for i in range(5):
        memory.add(f"Note number {i} about the garden.")
    assert len(memory.search("garden", k=2**40, retrieval="vector")) == 5


def test_flags_and_lists_are_refused_by_name(gen):
    said = [{"role": "user", "content": "What is my dog called?"}]
    for name, value, match in [("do_sample", "false", "do_sample must be True or False"),
                               ("no_repeat_ngram_size", "3", "no_repeat_ngram_size must be an int >= 0"),
                               ("no_repeat_ngram_size", True, "no_repeat_ngram_size must be an int >= 0"),
                               ("tools", 5, "tools must be a list"), ("stopping_criteria", 5, "stopping_criteria must be a list"),
                               ("streamer", 5, "streamer must be a transformers streamer")]:  # fmt: skip
        with pytest.raises(ValueError, match=match):
            gen.generate(said, **{name: value})
    with pytest.raises(ValueError, match="parallel_tool_calls must be True, False or None"):
        plan_output(gen.tokenizer, gen.vocab_size, said, tools=[TOOL], tool_choice="required", parallel_tool_calls="false")
    with pytest.raises(ValueError, match="generate_batch"):
        gen.generate_batch(None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert gen.generate(said, do_sample=np.bool_(False)).text == gen.generate(said).text


def test_files_that_are_no_files_are_refused_by_name(store):
    memory = store.for_user("ada")
    memory.add("My dog is called Biscuit.")
    for call, match in [(lambda: memory.export_jsonl(None), "out must be a file path"),
                        (lambda: memory.export_jsonl(""), "out must be a file path"),
                        (lambda: store.import_memories(None), "source must be a file path"),
                        (lambda: store.import_memories(5), "source must be a file path"),
                        (lambda: store.writer.ingest(None, user_id="ada"), "path must be the path of a file"),
                        (lambda: load_model(""), "name_or_path must be a model folder"),
                        (lambda: load_model(5), "name_or_path must be a model folder")]:  # fmt: skip
        with pytest.raises(ValueError, match=match):
            call()
    assert memory.count() == 1


def test_the_cli_makes_no_store_for_an_encoder_it_cannot_load_and_names_a_file_that_is_not_utf8(tmp_path, capsys):
    from recall_core.cli import main

    new = tmp_path / "new"
    assert main(["remember", "hi there", "--user", "a", "--store", str(new), "--encoder", str(tmp_path / "none")]) == 2
    assert not new.exists()  # until 2026-12-07 a journal was made there before the encoder failed
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'\n\n\xff{"id": "x"}\n')
    assert main(["import", str(bad), "--store", str(tmp_path / "other")]) == 2
    assert "bad.jsonl' line 3: not UTF-8 text" in capsys.readouterr().err


def test_paths_of_any_kind_and_numpy_positions_are_taken(store, tmp_path):
    import os
    from pathlib import PurePosixPath

    from recall_core.memory import MemoryWriter

    turns = tmp_path / "turns.jsonl"
    turns.write_text('{"user_id": "ada", "role": "user", "content": "I live in Porto."}\n')
    entry = next(e for e in os.scandir(tmp_path) if e.name == "turns.jsonl")
    assert store.writer.ingest(entry, user_id="ada").turns == 1  # an os.DirEntry (refused by the first fix)
    assert store.writer.ingest(PurePosixPath(turns), user_id="ada").turns == 1
    memory = store.for_user("ada")
    memory.add("My dog is called Biscuit.", turn_index=np.int64(7))
    assert MemoryWriter(store, chunk_tokens=np.int64(64)).chunk_tokens == 64
    out = tmp_path / "out.jsonl"
    assert memory.export_jsonl(PurePosixPath(out)) == memory.count()
    for folder in (".", "./", "..", str(tmp_path)):
        with pytest.raises(ValueError, match="out must be a file path"):
            memory.export_jsonl(folder)


def test_what_worked_before_the_checks_still_works(gen, store):
    """A review of the checks (2026-12-07): the session's own reply with a NUL in it does not stick
    the session; generate_batch takes any iterable; flags given as 0 or 1, as transformers takes them."""
    session = RecallSession(gen, store=store, user_id="ada")
    said = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Sure\x00"}]  # what the model wrote
    for turn in ("And then?", "And after that?"):  # the whole conversation sent back each turn
        said += [{"role": "user", "content": turn}]
        said += [{"role": "assistant", "content": session.reply(said).text}]
    with pytest.raises(ValueError, match="timestamp"):  # an assistant message's keys are still checked
        session.reply([*said[:-1], {**said[-1], "timestamp": ""}, {"role": "user", "content": "ok"}])
    said = ["hi", "what is my name"]
    expected = [r.text for r in gen.generate_batch(said)]
    assert [r.text for r in gen.generate_batch(iter(said))] == [r.text for r in gen.generate_batch(np.array(said))] == expected
    assert gen.generate("hi", do_sample=0).text == gen.generate("hi").text
    assert gen.options_for({"do_sample": 0})["do_sample"] is False


def test_an_assistant_message_with_a_nul_is_written_without_it_at_its_eviction(gen, store):
    """An assistant message's words are a model's: a NUL in them (the memory refuses it) is taken out
    when the session writes it at its eviction. Until 2026-12-08 the whole reply was dropped there,
    with a warning (a reviewer), whether the model wrote it or the caller's loaded history held it."""
    session = RecallSession(gen, store=store, user_id="ada", max_cache_tokens=110, sink_tokens=4)
    history = [{"role": "user", "content": "My passport number is X123."},
               {"role": "assistant", "content": "Noted\x00, thank you."}]  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no message dropped
        for said in ["I live in Lisbon.", "I work as a nurse.", "I like tea.", "My cat is Miso."]:
            history.append({"role": "user", "content": said})
            history.append({"role": "assistant", "content": session.reply(history).text})
    assert session.evicted_messages >= 2
    texts = [record.text for record in store.for_user("ada").all()]
    assert "My passport number is X123." in texts and "Noted, thank you." in texts

"""``MemoryWriter(precompute_kv=...)``: blocks computed at write time, replaced on update, dropped on delete."""

from __future__ import annotations

import pytest

from recall_core import RecallConfig, RecallGenerator
from recall_core.kv.memories import KVMemories, KVPrecompute
from recall_core.memory import HashEncoder, MemoryStore, MemoryWriter
from tests.helpers.tiny import tiny_model

QUESTION = [{"role": "user", "content": "What is my dog called?"}]


@pytest.fixture
def setup(tmp_path):
    model, tokenizer = tiny_model("llama", positions=1024)
    config = RecallConfig(inject_mode="kv", memories=1, min_score=-1.0, max_recalls=1)
    cache = KVMemories()
    store = MemoryStore.local(tmp_path / "memory", encoder=HashEncoder(64))
    writer = MemoryWriter(store, precompute_kv=KVPrecompute(model, tokenizer, config, cache))
    generator = RecallGenerator(model, tokenizer, memory=store.for_user("ada"), config=config)
    yield generator, writer, cache
    store.close()


def _recall(generator, cache):
    result = generator.generate(QUESTION, max_new_tokens=2, recall_kv_memories=cache)
    (recall,) = [r for r in result.recalls if r.in_prompt]
    return recall


def test_a_written_memory_is_recalled_from_its_precomputed_block(setup):
    generator, writer, cache = setup
    (memory_id,) = writer.add_turn("ada", "user", "My dog is called Biscuit.")
    assert cache.stats()["memories"] == 1 and cache.misses > 0
    recall = _recall(generator, cache)
    assert recall.memory_id == memory_id and recall.inject_mode == "kv"
    # every spliced position came from a block computed at write time: the recall computed only its own few
    assert recall.kv_reused == recall.length - recall.kv_recomputed > 0


def test_a_user_s_answer_is_precomputed_with_the_question_it_answers(setup):
    """A search (the store's unit, "answered") returns a user's answer with the question before
    it: until 2026-12-07 the block was computed from the answer alone, and the recall computed the
    one it used (a reviewer)."""
    generator, writer, cache = setup
    writer.add_turn("ada", "assistant", "What a lovely name! Which city is your home?")
    (memory_id,) = writer.add_turn("ada", "user", "I live in Lisbon.")
    result = generator.generate([{"role": "user", "content": "Where do I live?"}], max_new_tokens=2,
                                recall_kv_memories=cache)
    (recall,) = [r for r in result.recalls if r.in_prompt]
    assert recall.memory_id == memory_id and recall.inject_mode == "kv"
    assert recall.kv_reused == recall.length - recall.kv_recomputed > 0


@pytest.mark.parametrize("window", ["questions", "never"])
def test_the_answer_s_block_is_computed_again_after_its_question_is_updated_or_deleted(setup, window):
    """The answer's block holds its question's words: an update or a delete of the question dropped
    it, and the recall computed it (a third reviewer; with ``window="never"``, a fourth)."""
    generator, writer, cache = setup
    writer = MemoryWriter(writer.store, precompute_kv=writer.kv, window=window)
    (question,) = writer.add_turn("ada", "assistant", "What a lovely name! Which city is your home?")
    (answer,) = writer.add_turn("ada", "user", "I live in Lisbon.")
    ask = [{"role": "user", "content": "Where do I live?"}]
    writer.update("ada", question, "Lovely! And which city is your home now?")
    for step in ("updated", "deleted"):
        (recall,) = [r for r in generator.generate(ask, max_new_tokens=2, recall_kv_memories=cache).recalls if r.in_prompt]
        assert recall.memory_id == answer and recall.kv_reused == recall.length - recall.kv_recomputed, step
        if step == "updated":
            writer.delete("ada", [question])


def test_an_update_replaces_the_block_and_a_delete_drops_it(setup):
    generator, writer, cache = setup
    (memory_id,) = writer.add_turn("ada", "user", "My dog is called Biscuit.")
    before = cache.stats()["blocks"]
    writer.update("ada", memory_id, "My dog is called Rex.")
    assert cache.stats()["blocks"] == before  # the old note's block went, the new one came
    recall = _recall(generator, cache)
    assert "Rex" in recall.text and recall.kv_reused == recall.length - recall.kv_recomputed
    writer.delete("ada", [memory_id])
    assert cache.stats()["memories"] == 0 and cache.stats()["blocks"] == before - 1


def test_forget_drops_every_block_of_the_user(setup):
    _, writer, cache = setup
    writer.add_turns([{"user_id": "ada", "role": "user", "content": f"Fact number {i} about my life."} for i in range(3)])
    writer.add_turn("bo", "user", "Bo's own fact.")
    assert cache.stats()["memories"] == 4
    writer.forget("ada")
    assert cache.stats()["memories"] == 1


def test_a_failed_precompute_warns_and_the_write_stands(tmp_path):
    model, tokenizer = tiny_model("llama")

    class Broken(KVPrecompute):
        def memories(self, memories):
            raise RuntimeError("out of memory")

    with MemoryStore.local(tmp_path / "memory", encoder=HashEncoder(64)) as store:
        writer = MemoryWriter(store, precompute_kv=Broken(model, tokenizer))
        with pytest.warns(RuntimeWarning, match="KV blocks not precomputed .*out of memory"):
            (memory_id,) = writer.add_turn("ada", "user", "My dog is called Biscuit.")
        assert store.for_user("ada").get(memory_id).text == "My dog is called Biscuit."
    with MemoryStore.local(tmp_path / "other", encoder=HashEncoder(64)) as store:
        with pytest.raises(ValueError, match="precompute_kv must be"):
            MemoryWriter(store, precompute_kv=object())
        # The memory package builds nothing of the engine's: a bare pair is refused with the way to wrap it.
        with pytest.raises(ValueError, match=r"KVPrecompute\.of\(\(model, tokenizer\)\)"):
            MemoryWriter(store, precompute_kv=(model, tokenizer))


def test_a_generator_or_any_derived_cache_is_told_of_writes(tmp_path):
    from recall_core.memory.protocols import DerivedCache

    model, tokenizer = tiny_model("llama")
    generator = RecallGenerator(model, tokenizer, config=RecallConfig(kv_prefix="none"))
    made = generator.kv_precompute()
    assert isinstance(made, KVPrecompute) and isinstance(made, DerivedCache) and made.config is generator.config

    class Recorder:
        def __init__(self):
            self.calls = []

        def written(self, memories):
            self.calls.append(("written", [m.id for m in memories]))

        def drop(self, memory_ids):
            self.calls.append(("drop", [memory_ids] if isinstance(memory_ids, str) else list(memory_ids)))

    recorder = Recorder()
    with MemoryStore.local(tmp_path / "memory", encoder=HashEncoder(64)) as store:
        writer = MemoryWriter(store, precompute_kv=generator)
        assert isinstance(writer.kv, KVPrecompute) and writer.kv.model is model
        writer = MemoryWriter(store, precompute_kv=recorder)
        (first,) = writer.add_turn("ada", "user", "My dog is called Biscuit.")
        writer.update("ada", first, "My dog is called Rex.")
        writer.delete("ada", [first])
        (second,) = writer.add_turn("ada", "user", "I live in Lisbon.")
        writer.forget("ada")
    assert recorder.calls == [("written", [first]), ("drop", [first]), ("written", [first]), ("drop", [first]),
                              ("written", [second]), ("drop", [second])]  # fmt: skip

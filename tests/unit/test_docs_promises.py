"""What the docs promise, as a reviewer read them against the code (2026-12-07): an encoder with
the parts docs/memory.md names, a chat's ``query_window``, ``stop`` in ``generation_defaults``."""

from __future__ import annotations

import numpy as np

from recall_core import RecallConfig, RecallGenerator
from recall_core.memory import MemoryStore
from tests.helpers.memories import FixedMemory
from tests.helpers.tiny import tiny_model


class DocEncoder:
    """An encoder exactly as docs/memory.md describes one: ``encode(texts)``, no ``batch_size``."""

    name, dimension, max_tokens = "doc-encoder", 8, 64

    def encode(self, texts):
        return np.stack([np.random.default_rng(len(t)).random(8, dtype=np.float32) for t in texts])

    def count_tokens(self, text):
        return len(text.split())


def test_an_encoder_written_to_the_docs_writes_and_is_searched(tmp_path):
    """Until 2026-12-07 the writer passed ``batch_size=`` to every encoder: each write failed."""
    with MemoryStore.local(tmp_path / "store", encoder=DocEncoder()) as store:
        memory = store.for_user("ada")
        memory.add("hello there")
        assert [c.text for c in memory.search("hello there", k=2)] == ["hello there"]


def test_a_chats_query_window_is_the_last_tokens_of_the_question_not_of_the_system_message():
    """With the marker at the end of the system message (the default), the window was taken before
    it: every question searched with the system prompt's last words (until 2026-12-07)."""
    model, tokenizer = tiny_model("llama")
    memory = FixedMemory("The user's dog is called Biscuit.")
    gen = RecallGenerator(model, tokenizer, memory=memory, generation_defaults={"max_new_tokens": 2})
    for question in ["What is my dog called?", "Where does my sister live these days?"]:
        gen.generate([{"role": "user", "content": question}], config=RecallConfig(query_window=4))
        searched = memory.queries[-1].text
        assert searched and question.endswith(searched)
        assert len(tokenizer(searched, add_special_tokens=False).input_ids) <= 5


def test_stop_in_generation_defaults_is_read_as_a_calls_stop():
    model, tokenizer = tiny_model("llama")
    said = [{"role": "user", "content": "hi"}]
    plain = RecallGenerator(model, tokenizer, generation_defaults={"max_new_tokens": 8}).generate(said, memory=None).text
    assert len(plain) > 2
    stop = plain[1:3]
    by_call = RecallGenerator(model, tokenizer, generation_defaults={"max_new_tokens": 8}).generate(said, memory=None, stop=[stop])
    by_defaults = RecallGenerator(model, tokenizer, generation_defaults={"max_new_tokens": 8, "stop": [stop]})
    assert by_defaults.generate(said, memory=None).text == by_call.text == plain[: plain.index(stop)]


class Forwarding:
    """A wrapper whose ``encode(*args, **kwargs)`` hands everything on to a docs-style encoder."""

    def __init__(self) -> None:
        self.inner = DocEncoder()
        self.name, self.dimension, self.max_tokens = "forwarding", 8, 64

    def encode(self, *args, **kwargs):
        return self.inner.encode(*args, **kwargs)

    def count_tokens(self, text):
        return self.inner.count_tokens(text)


def test_an_encoder_that_forwards_every_keyword_to_one_without_batch_size_writes(tmp_path):
    with MemoryStore.local(tmp_path / "store", encoder=Forwarding()) as store:
        memory = store.for_user("ada")
        memory.add("my sister lives in Porto")
        assert [c.text for c in memory.search("my sister lives in Porto", k=1)] == ["my sister lives in Porto"]


def test_an_encoders_own_type_error_naming_batch_size_is_raised(tmp_path):
    """Only the call's own signature error is taken as "no batch_size" (a reviewer: an encoder's own
    refusal of a batch size was swallowed and the call made again without it)."""
    import pytest

    class Refuses(DocEncoder):
        def encode(self, texts, batch_size=None):
            if batch_size is not None:
                raise TypeError(f"batch_size={batch_size} is over this device's limit of 2")
            return super().encode(texts)

    with MemoryStore.local(tmp_path / "store", encoder=Refuses()) as store:
        with pytest.raises(TypeError, match="over this device's limit"):
            store.for_user("ada").add("hello there")

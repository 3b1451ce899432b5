"""Concurrent generations on one model and tokenizer give what sequential ones give (issue 23, item 8).

A fast tokenizer applies ``split_special_tokens=True`` by switching a flag on its shared Rust
backend; the notes of a recall were encoded that way, so a prompt encoded at the same moment
in another thread lost its ``<|im_start|>`` and ``<recall>`` tokens (split into text): that
call differed from its first token and recalled nothing. ``tests/frameworks/langchain/
test_adapters.py::test_chat_batch`` failed now and then for that reason.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from langchain_recall import ChatRecall
from recall_core import RecallGenerator
from recall_core.decoding.notes import plain_ids
from recall_core.types import MemoryCandidate
from tests.helpers.memories import FixedMemory
from tests.helpers.tiny import tiny_model

TEXTS = ["<|im_start|>user hi <recall> x<|im_end|>", " Dogs, café  naïve\n\n<|memory_pad|>", "[24 Nov] User: Biscuit.", ""]


@pytest.mark.parametrize("kind", ["llama", "gpt2", "qwen2"])
def test_notes_are_split_as_the_tokenizer_splits_them(kind):
    _, tokenizer = tiny_model(kind)
    for text in TEXTS:
        assert plain_ids(tokenizer, text) == list(tokenizer(text, add_special_tokens=False, split_special_tokens=True).input_ids)
    tokenizer.add_tokens(["<new-special>"], special_tokens=True)  # a grown vocabulary is seen
    assert plain_ids(tokenizer, "a <new-special> b") == list(
        tokenizer("a <new-special> b", add_special_tokens=False, split_special_tokens=True).input_ids
    )


def test_encoding_notes_never_changes_a_prompt_encoded_meanwhile():
    _, tokenizer = tiny_model("llama")
    prompt = tokenizer.apply_chat_template(
        [{"role": "user", "content": "Where do I live? <recall>"}], tokenize=False, add_generation_prompt=True
    )
    want = list(tokenizer(prompt, add_special_tokens=False).input_ids)
    wrong: list[list[int]] = []
    stop = time.monotonic() + 2.0

    def notes() -> None:
        while time.monotonic() < stop:
            plain_ids(tokenizer, "<|im_start|>The user's dog <recall> is called Biscuit.")

    def prompts() -> None:
        while time.monotonic() < stop:
            ids = list(tokenizer(prompt, add_special_tokens=False).input_ids)
            if ids != want:
                wrong.append(ids)

    threads = [threading.Thread(target=f) for f in (notes, notes, prompts, prompts)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not wrong, f"{len(wrong)} prompts encoded with their special tokens split"


def test_concurrent_generations_equal_sequential_ones():
    model, tokenizer = tiny_model("llama")
    generator = RecallGenerator(model, tokenizer, memory=FixedMemory("The user's dog is called Biscuit."))
    questions = ["What is my dog called?", "Where do I live?", "Hello there", "My name is Ada"]

    def answer(question: str) -> tuple[list[int], int]:
        result = generator.generate([{"role": "user", "content": question}], max_new_tokens=4)
        return result.sequences[0].tolist(), len(result.recalls)

    sequential = [answer(q) for q in questions]
    assert [recalls for _, recalls in sequential[:2]] == [1, 1]  # the questions recall; the news is decided on
    with ThreadPoolExecutor(len(questions)) as pool:
        for _ in range(6):
            assert list(pool.map(answer, questions)) == sequential


class MeetingMemory:
    """A memory whose search waits until ``parties`` searches are under way at once."""

    def __init__(self, parties: int) -> None:
        self.barrier = threading.Barrier(parties)
        self.met = 0

    def search(self, query, k):
        self.barrier.wait(timeout=15)  # broken if the calls were made to take turns
        self.met += 1
        return [MemoryCandidate("m0", 1.0, "The user's dog is called Biscuit.")]


def test_sessions_of_different_threads_run_at_once():
    """Issue 23, item 8: 4 threads on 4 ChatRecall sessions are inside a call at the same
    moment (each search waits for the other three), so no lock makes them take turns."""
    model, tokenizer = tiny_model("llama")
    memory = MeetingMemory(4)
    chat = ChatRecall(generator=RecallGenerator(model, tokenizer), memory=memory, max_tokens=3)

    def call(n: int) -> str:
        return chat.invoke("What is my dog called?", config={"configurable": {"thread_id": f"t{n}"}}).content

    with ThreadPoolExecutor(4) as pool:
        replies = list(pool.map(call, range(4)))
    assert memory.met == 4 and not memory.barrier.broken  # a failed search is not an error of the call
    assert len(set(replies)) == 1 and chat.session_pool is not None and len(chat.session_pool) == 4

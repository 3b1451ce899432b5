"""``Mixture.reply_share``: notes that carry a chat assistant's long replies around the user's words."""

from __future__ import annotations

import random

import pytest

from recall_core import RecallConfig
from recall_core.training import family_data
from recall_core.training.examples import ExampleBuilder, Mixture, memory_examples, with_replies
from recall_core.training.lora import TrainConfig, build_examples
from recall_core.types import MemoryCandidate
from tests.helpers.tiny import tiny_model

REPLIES = ("Here are a few ideas: 1. Start small. 2. Keep a list. 3. Ask a friend for help.",
           "Great question!\nThere are many ways to do it, and the best depends on your budget.")  # fmt: skip


@pytest.fixture(scope="module")
def asked():
    users = family_data.family_users(("templated", "interview"), 1)
    notes = family_data.retrieved(users, RecallConfig(), encoder="hash")
    return family_data.asked(users, notes, random.Random(0))


def note(text: str, **metadata) -> MemoryCandidate:
    return MemoryCandidate("m", 0.5, text, None, {"role": "user", **metadata})


@pytest.mark.parametrize("seed", range(20))
def test_a_single_user_turn_gets_the_reply_before_or_after_it_with_labels(seed):
    (out,) = with_replies([note("I adopted a cat called Brisket.")], REPLIES, random.Random(seed))
    lines = out.text.split("\n")
    assert len(lines) == 2 and "User: I adopted a cat called Brisket." in lines
    other = next(line for line in lines if line.startswith("Assistant: "))
    assert other.removeprefix("Assistant: ") in {" ".join(r.split()) for r in REPLIES}  # one line: no newline inside
    assert (out.id, out.score, out.metadata) == ("m", 0.5, {"role": "user"})


def test_an_assistants_line_keeps_its_words_and_gets_the_reply_after_them():
    text = "Assistant: What is your dog called?\nUser: Rex."
    (out,) = with_replies([note(text)], REPLIES, random.Random(0))
    first, second = out.text.split("\n")
    assert first.startswith("Assistant: What is your dog called? ") and len(first) > 40
    assert second == "User: Rex."


def test_a_named_speakers_note_and_an_assistants_own_turn_stay():
    notes = [note("Rafe: I joined a choir.", speaker="Rafe"), note("Congratulations!", role="assistant")]
    for seed in range(10):
        assert with_replies(notes, REPLIES, random.Random(seed)) == tuple(notes)


def test_at_least_one_note_changes_and_about_half_do():
    notes = [MemoryCandidate(f"m{i}", 0.5, f"I like thing {i}.", None, {}) for i in range(6)]
    changed = []
    for seed in range(200):
        out = with_replies(notes, REPLIES, random.Random(seed))
        assert [n.id for n in out] == [n.id for n in notes]
        count = sum(a.text != b.text for a, b in zip(notes, out, strict=True))
        assert count >= 1
        changed.append(count)
    assert 2.5 < sum(changed) / len(changed) < 3.7


def test_the_share_puts_replies_in_examples_and_leaves_the_others_as_they_were(asked):
    _, tokenizer = tiny_model()
    builder = ExampleBuilder(tokenizer)
    plain = memory_examples(builder, asked, Mixture(repeats=1), random.Random(0), [None])
    again = memory_examples(builder, asked, Mixture(repeats=1), random.Random(0), [None], replies=REPLIES,
                            reply_rng=random.Random(1))  # fmt: skip
    assert [e.input_ids for e in again] == [e.input_ids for e in plain]  # share 0: replies unused
    mixed = memory_examples(builder, asked, Mixture(repeats=1, reply_share=1.0), random.Random(0), [None],
                            replies=REPLIES, reply_rng=random.Random(1))  # fmt: skip
    assert len(mixed) == len(plain)
    assert [e.meta for e in mixed] == [e.meta for e in plain]  # same questions, notes and replies to learn
    shown = [tokenizer.decode(e.input_ids) for e in mixed]
    assert sum("Keep a list" in s or "best depends" in s for s in shown) > len(shown) // 2
    # The reply learned is unchanged: only the notes carry the assistant's words.
    assert [[t for t in e.labels if t != -100] for e in mixed] == [[t for t in e.labels if t != -100] for e in plain]
    with pytest.raises(ValueError, match="reply_share needs replies"):
        memory_examples(builder, asked, Mixture(repeats=1, reply_share=0.5), random.Random(0), [None])
    with pytest.raises(ValueError, match="reply_share"):
        Mixture(reply_share=1.5)


def test_build_examples_makes_the_base_models_replies_for_the_notes():
    model, tokenizer = tiny_model()
    options = dict(steps=1, batch_size=2, users=1, distill_tokens=4, agreement_prompts=2, families=("templated",),
                   encoder="hash", max_length=768)  # fmt: skip
    plain = build_examples(model, tokenizer, TrainConfig(mixture=Mixture(repeats=1, general=2, auto_general=1),
                                                         **options), progress=False)  # fmt: skip
    mixed = build_examples(model, tokenizer, TrainConfig(mixture=Mixture(repeats=1, general=2, auto_general=1,
                                                                         reply_share=1.0), **options), progress=False)
    assert [e.kind for e in mixed] == [e.kind for e in plain]
    memory = [(a, b) for a, b in zip(plain, mixed, strict=True) if a.kind in ("recall", "auto")]
    assert memory and any(len(b.input_ids) > len(a.input_ids) for a, b in memory)
    general = [(a, b) for a, b in zip(plain, mixed, strict=True) if a.kind not in ("recall", "auto")]
    assert general and all(a.input_ids == b.input_ids for a, b in general)

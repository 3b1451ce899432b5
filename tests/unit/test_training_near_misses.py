"""``Mixture.near_miss_share``: an "I don't know." example with the notes that name the answer taken out."""

from __future__ import annotations

import random

import pytest

from recall_core import RecallConfig
from recall_core.training import family_data
from recall_core.training.examples import ExampleBuilder, Mixture, memory_examples, near_misses
from recall_core.training.families import base
from recall_core.types import MemoryCandidate
from tests.helpers.tiny import tiny_model


@pytest.fixture(scope="module")
def asked():
    users = family_data.family_users(("templated", "changes", "people"), 1)
    notes = family_data.retrieved(users, RecallConfig(), encoder="hash")
    return family_data.asked(users, notes, random.Random(0))


def test_no_note_left_names_the_answer_or_an_earlier_value(asked):
    """What is left could not answer: neither the current value nor one the user gave up."""
    changing = [i for i in asked if i.holds and i.question.stale]
    assert changing  # the changes family has earlier values to take out as well
    for item in (i for i in asked if i.holds):
        values = (*item.question.answers, *item.question.stale)
        left = near_misses(item.notes, item)
        assert not any(base.names(n.text, v) for n in left for v in values)
        # the notes that name nothing asked stay, in their order
        assert left == tuple(n for n in item.notes if not any(base.names(n.text, v) for v in values))


def test_an_earlier_value_alone_is_taken_out_too(asked):
    item = next(i for i in asked if i.question.stale)
    stale = MemoryCandidate("old", 0.4, f"I used to say {item.question.stale[0]}.", None, {})
    other = MemoryCandidate("other", 0.3, "I like tea.", None, {})
    assert near_misses([stale, other], item) == (other,)


@pytest.fixture(scope="module")
def builder():
    return ExampleBuilder(tiny_model()[1])


@pytest.fixture(scope="module")
def plain(builder, asked):
    """The examples without near misses."""
    return memory_examples(builder, asked, Mixture(repeats=1), random.Random(0), [None])


def test_the_share_adds_unknown_examples_and_leaves_the_others_as_they_were(asked, builder, plain):
    tokenizer = builder.tokenizer
    mixed = memory_examples(builder, asked, Mixture(repeats=1, near_miss_share=1.0), random.Random(0), [None],
                            near_rng=random.Random(1))  # fmt: skip
    added = [e for e in mixed if e.meta.get("near_miss")]
    kept = [e for e in mixed if not e.meta.get("near_miss")]
    assert [e.meta for e in kept] == [e.meta for e in plain]
    assert [e.input_ids for e in kept] == [e.input_ids for e in plain]
    # at most one per answered question: none where no note is left once the answering ones are out
    assert 0 < len(added) <= sum(i.holds for i in asked)
    unknown = tokenizer(family_data.UNKNOWN_REPLY, add_special_tokens=False)["input_ids"]
    for e in added:
        assert e.meta["holds"] is False and e.meta["notes"] >= 1
        learned = [t for t in e.labels if t != -100]
        assert _contains(learned, unknown)
    # unknown_share drops the other "I don't know." examples, never the near misses
    none_kept = memory_examples(builder, asked, Mixture(repeats=1, near_miss_share=1.0, unknown_share=0.0),
                                random.Random(0), [None], near_rng=random.Random(1))  # fmt: skip
    assert all(e.meta["holds"] or e.meta.get("near_miss") for e in none_kept)
    assert any(e.meta.get("near_miss") for e in none_kept)
    with pytest.raises(ValueError, match="near_miss_share"):
        Mixture(near_miss_share=-0.1)


def test_a_zero_share_changes_nothing(asked, builder, plain):
    zero = memory_examples(builder, asked, Mixture(repeats=1, near_miss_share=0.0), random.Random(0), [None],
                           near_rng=random.Random(5))  # fmt: skip
    assert [e.input_ids for e in zero] == [e.input_ids for e in plain]


def _contains(seq: list[int], part: list[int]) -> bool:
    return any(seq[i : i + len(part)] == part for i in range(len(seq) - len(part) + 1))

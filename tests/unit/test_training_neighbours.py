"""``Mixture.neighbour_share``: the answering note shown among the same user's near misses."""

from __future__ import annotations

import random

import pytest

from recall_core import RecallConfig
from recall_core.training import family_data
from recall_core.training.examples import ExampleBuilder, Mixture, among_neighbours, memory_examples
from recall_core.training.families import base
from recall_core.types import MemoryCandidate
from tests.helpers.tiny import tiny_model


@pytest.fixture(scope="module")
def asked():
    users = family_data.family_users(("templated", "changes", "people"), 1)
    notes = family_data.retrieved(users, RecallConfig(), encoder="hash", depth=16)
    return family_data.asked(users, notes, random.Random(0))


def _names_any(note: MemoryCandidate, values) -> bool:
    return any(base.names(note.text, v) for v in values)


def test_the_deeper_search_keeps_the_candidates_below_the_notes(asked):
    memory = [i for i in asked if i.question.kind == "memory"]
    assert memory and all(i.deeper for i in memory)
    for item in memory:
        shown = {n.id for n in item.notes}
        assert not shown & {n.id for n in item.deeper}
        assert len({n.id for n in item.deeper}) == len(item.deeper)


def test_the_fact_is_shown_among_neighbours_that_cannot_answer(asked):
    rng = random.Random(3)
    places, counts, undated = set(), set(), 0
    for item in (i for i in asked if i.holds):
        out = among_neighbours(item.notes, item, rng)
        values = (*item.question.answers, *item.question.stale)
        holding = [n for n in out if _names_any(n, item.question.answers)]
        assert len(holding) == 1  # the first answering note, once
        others = [n for n in out if n is not holding[0]]
        assert 1 <= len(others) <= 5 or out == tuple(item.notes)
        if out == tuple(item.notes):
            continue
        assert not any(_names_any(n, values) for n in others)  # no earlier value, no second answer
        assert {n.id for n in others} <= {n.id for n in item.deeper}
        places.add(out.index(holding[0]))
        counts.add(len(out))
        if all(not n.metadata for n in out):
            undated += 1
        else:  # dated notes in the loop's order, newest first
            stamps = [n.metadata["timestamp"] for n in out]
            assert stamps == sorted(stamps, reverse=True)
    assert places >= {0, 1, 2} and max(counts) >= 5 and undated > 0


def test_no_neighbour_leaves_the_notes_as_they_are(asked):
    item = next(i for i in asked if i.holds)
    bare = family_data.Asked(item.family, item.user_id, item.question, item.notes, item.reply, True)
    assert among_neighbours(item.notes, bare, random.Random(0)) == tuple(item.notes)


@pytest.fixture(scope="module")
def builder():
    return ExampleBuilder(tiny_model()[1])


def test_the_share_changes_only_answered_examples_and_a_zero_share_nothing(asked, builder):
    plain = memory_examples(builder, asked, Mixture(repeats=1), random.Random(0), [None])
    zero = memory_examples(builder, asked, Mixture(repeats=1, neighbour_share=0.0), random.Random(0), [None],
                           neighbour_rng=random.Random(5))  # fmt: skip
    assert [e.input_ids for e in zero] == [e.input_ids for e in plain]
    mixed = memory_examples(builder, asked, Mixture(repeats=1, neighbour_share=1.0), random.Random(0), [None],
                            neighbour_rng=random.Random(1))  # fmt: skip
    assert len(mixed) == len(plain)
    changed = [(m, p) for m, p in zip(mixed, plain, strict=True) if m.input_ids != p.input_ids]
    assert changed and all(p.meta["holds"] for _, p in changed)
    assert any(m.meta["notes"] > p.meta["notes"] for m, p in changed)
    # the reply still names the answer: the answering note is kept
    assert all(m.meta["holds"] for m, _ in changed)
    with pytest.raises(ValueError, match="neighbour_share"):
        Mixture(neighbour_share=1.5)

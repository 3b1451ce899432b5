"""``Mixture.company_share``: the answering line said together with the user's other statements of fact."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from recall_core import RecallConfig
from recall_core.training import family_data
from recall_core.training.examples import ExampleBuilder, Mixture, in_company, memory_examples
from recall_core.training.families import base
from recall_core.types import MemoryCandidate
from tests.helpers.tiny import tiny_model


@pytest.fixture(scope="module")
def asked():
    users = family_data.family_users(("templated", "changes"), 1)
    notes = family_data.retrieved(users, RecallConfig(), encoder="hash")
    return family_data.asked(users, notes, random.Random(0))


def test_a_users_statements_are_their_own_turns_that_state_a_fact(asked):
    users = family_data.family_users(("templated", "changes"), 1)
    for item in asked:
        user = next(u for group in users.values() for u in group if u.user_id == item.user_id)
        assert item.statements == tuple(t.content for t in user.turns if t.role == "user" and t.facts)
        assert not set(item.statements) & set(item.small_talk)
    assert all(item.statements for item in asked)


def test_the_answering_line_gets_other_values_and_keeps_the_answer(asked):
    """One note changes (the first that names the answer), its id, score and metadata stay, it
    still names the answer, and now says one or two of the user's other statements."""
    items = [i for i in asked if i.holds]
    assert items
    grew = 0
    for seed, item in enumerate(items):
        notes = in_company(item.notes, item, random.Random(seed))
        assert [(n.id, n.score, n.metadata) for n in notes] == [(n.id, n.score, n.metadata) for n in item.notes]
        changed = [(a, b) for a, b in zip(item.notes, notes, strict=True) if a.text != b.text]
        assert len(changed) <= 1
        if changed:
            before, after = changed[0]
            added = [s for s in item.statements if s.strip() in after.text and s.strip() not in before.text]
            assert 1 <= len(added) <= 2
            assert family_data.named_value([after], item.question) is not None
            grew += 1
    assert grew > len(items) // 2


def test_a_statement_naming_the_answer_or_an_earlier_value_is_never_added(asked):
    """What would make the reply wrong (the answer said twice, or its earlier value) stays out."""
    changing = [i for i in asked if i.holds and i.question.stale]
    assert changing
    for item in changing:
        values = (*item.question.answers, *item.question.stale)
        assert any(base.names(s, v) for s in item.statements for v in values)  # there is something to leave out
        for seed in range(5):
            notes = in_company(item.notes, item, random.Random(seed))
            for before, after in zip(item.notes, notes, strict=True):
                added = [s for s in item.statements if s.strip() in after.text and s.strip() not in before.text]
                assert not any(base.names(s, v) for s in added for v in values)


def test_nothing_usable_leaves_the_notes_as_they_are(asked):
    item = next(i for i in asked if i.holds)
    notes = tuple(item.notes)
    assert in_company(notes, replace(item, statements=()), random.Random(0)) == notes
    only_answer = replace(item, statements=tuple(f"Remember: {a}." for a in item.question.answers))
    assert in_company(notes, only_answer, random.Random(0)) == notes
    # a labelled line of a note of several turns keeps its label in front
    labelled = MemoryCandidate("m", 0.5, f"Assistant: Hi!\nUser: It is {item.question.answers[0]}.", None, {})
    (out,) = in_company([labelled], replace(item, statements=("I like tea.",)), random.Random(0))
    assert out.text.split("\n")[0] == "Assistant: Hi!" and out.text.split("\n")[1].startswith("User: ")
    assert "I like tea." in out.text


def test_the_share_changes_only_the_notes_of_examples_that_hold_the_answer(asked):
    _, tokenizer = tiny_model()
    builder = ExampleBuilder(tokenizer)
    plain = memory_examples(builder, asked, Mixture(repeats=1), random.Random(0), [None])
    mixed = memory_examples(builder, asked, Mixture(repeats=1, company_share=1.0), random.Random(0), [None],
                            company_rng=random.Random(1))  # fmt: skip
    assert [e.meta for e in mixed] == [e.meta for e in plain]  # the same questions, notes and replies
    assert [[t for t in e.labels if t != -100] for e in mixed] == [[t for t in e.labels if t != -100] for e in plain]
    held = [(a, b) for a, b in zip(plain, mixed, strict=True) if a.meta["holds"]]
    assert sum(len(b.input_ids) > len(a.input_ids) for a, b in held) > len(held) // 2
    assert all(a.input_ids == b.input_ids for a, b in zip(plain, mixed, strict=True) if not a.meta["holds"])
    with pytest.raises(ValueError, match="company_share"):
        Mixture(company_share=2.0)

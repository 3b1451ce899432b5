"""The hand-written evaluation families: sound questions, no template shared with a generated family, never trained on."""

from __future__ import annotations

import pytest

from benchmarks import handwritten
from recall_core.training.families import FAMILIES, base
from tests.helpers.families import family_shapes, user_shapes


@pytest.fixture(scope="module", params=sorted(handwritten.FAMILIES))
def users(request) -> list[base.User]:
    return handwritten.FAMILIES[request.param].generate(users=50)


def test_eight_users_each_with_memory_changed_and_unanswerable_questions():
    users = handwritten.generate()
    assert len(users) == 8 and len({u.user_id for u in users}) == 8
    assert handwritten.generate(0, users=3) == users[:3] and handwritten.generate(7, users=50) == users


@pytest.mark.parametrize("family", [handwritten.CHANGES, handwritten.UPDATES, handwritten.REVISIONS, handwritten.PLANS],
                         ids=lambda f: f.NAME)
def test_the_changes_families_are_six_users_mostly_asked_about_changed_facts(family):
    users = family.generate(users=50)
    assert len(users) == 6 and family.generate(3, users=2) == users[:2]
    memory = [q for u in users for q in u.questions if q.kind == "memory"]
    changed = [q for q in memory if q.stale]
    assert len(changed) >= 30 and len(changed) > len(memory) / 2


def test_no_user_of_one_file_is_anothers():
    ids = [u.user_id for family in handwritten.FAMILIES.values() for u in family.generate(users=50)]
    assert len(ids) == len(set(ids)) == 50


def test_every_user_has_memory_changed_and_unanswerable_questions(users):
    for user in users:
        kinds = [q.kind for q in user.questions]
        assert kinds.count("memory") >= 8 and kinds.count("unanswerable") >= 2, user.user_id
        assert any(q.stale for q in user.questions), user.user_id
    keys = [q.key for u in users for q in u.questions]
    assert len(keys) == len(set(keys))


def test_every_question_is_sound(users):
    for user in users:
        turns = {(t.session, t.index): t for t in user.turns}
        dates = [t.date for t in user.turns]
        assert dates == sorted(dates), user.user_id
        for question in user.questions:
            assert question.user_id == user.user_id
            if question.kind == "unanswerable":
                continue
            for at in question.evidence:
                assert turns[at].role == "user", (question.key, at)
                assert base.score(question, turns[at].content)["correct"], (question.key, turns[at].content)
            for answer in question.answers:  # a question never gives its own answer away
                assert not base.names(question.text, answer), question.key
            assert not set(map(base.normal, question.answers)) & set(map(base.normal, question.stale)), question.key


def test_a_turn_that_says_a_value_is_never_small_talk(users):
    from recall_core.training.family_data import chat_exchanges

    for user in users:
        values = {v for q in user.questions for v in (*q.answers, *q.stale, *q.decoys)}
        for said, _ in chat_exchanges(user):
            assert not any(base.names(said, v) for v in values), said


def test_it_shares_no_template_with_a_generated_family(users):
    mine = user_shapes(users)
    for family in FAMILIES:
        assert not mine & family_shapes(family), family


@pytest.mark.parametrize("name", sorted(handwritten.FAMILIES))
def test_training_refuses_it(name):
    from recall_core.training.lora import TrainConfig

    assert name not in FAMILIES
    with pytest.raises(ValueError, match="families and exclude must name families"):
        TrainConfig(families=(name,))


def test_users_below_one_is_refused():
    with pytest.raises(ValueError, match="users must be at least 1"):
        handwritten.generate(0, users=0)
    for family in handwritten.FAMILIES.values():
        with pytest.raises(ValueError, match="users must be at least 1"):
            family.generate(0, users=0)

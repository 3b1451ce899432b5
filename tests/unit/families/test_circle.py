"""Checks for the "circle" family: news about named friends, asked in the third person by name."""

from __future__ import annotations

import pytest

from recall_core.training.families import base, circle
from recall_core.training.families.circle.generator import aliases

SEEDS = list(range(10))


@pytest.fixture(scope="module")
def users():
    return [u for seed in SEEDS for u in circle.generate(seed)]


def _turn(user, at):
    return next(t for t in user.turns if (t.session, t.index) == at)


def test_module_surface():
    assert circle.NAME == "circle"
    assert circle.DESCRIPTION and "\n" not in circle.DESCRIPTION


def test_deterministic_and_sized():
    assert circle.generate(4) == circle.generate(4)
    assert circle.generate(4, users=2) == circle.generate(4)[:2]
    assert [u.user_id for u in circle.generate(4, users=3)] == [f"circle-4-{n:02d}" for n in range(3)]


def test_sessions_and_question_counts(users):
    for user in users:
        sessions = sorted({t.session for t in user.turns})
        assert sessions == list(range(1, len(sessions) + 1)) and 3 <= len(sessions) <= 4
        kinds = [q.kind for q in user.questions]
        assert 6 <= kinds.count("memory") <= circle.MEMORY_PER_USER
        assert kinds.count("unanswerable") == circle.UNANSWERABLE_PER_USER
        dates = [t.date for t in user.turns]
        assert dates == sorted(dates)


def test_questions_name_the_friend_and_never_say_my(users):
    for user in users:
        for q in user.questions:
            assert q.values and all(base.names(q.text, v) for v in q.values), q
            assert " my " not in base.normal(q.text), q


def test_the_evidence_states_the_current_value_and_names_the_friend(users):
    for user in users:
        for q in (q for q in user.questions if q.kind == "memory"):
            for at in q.evidence:
                turn = _turn(user, at)
                assert turn.role == "user" and base.names(turn.content, q.values[0])
                assert base.score(q, turn.content)["correct"]


def test_changed_news_leaves_a_stale_value_said_earlier(users):
    stale = [(u, q) for u in users for q in u.questions if q.stale]
    assert stale, "some news changes"
    for user, q in stale:
        first = min((t for t in user.turns if t.role == "user" and base.names(t.content, q.stale[0])
                     and base.names(t.content, q.values[0])), key=lambda t: (t.session, t.index))  # fmt: skip
        assert (first.session, first.index) < q.evidence[0]


def test_a_near_miss_is_another_friends_news(users):
    """Most unanswerable questions ask one friend about news that another friend of the same user has."""
    near = 0
    for user in users:
        told = {t.facts[0] for t in user.turns if t.facts}
        for q in (q for q in user.questions if q.kind == "unanswerable"):
            assert q.fact not in told, q  # never said of this friend
            kind = q.fact.split(".")[1]
            near += any(f.endswith("." + kind) for f in told)
    assert near >= 0.6 * len(SEEDS) * 5 * circle.UNANSWERABLE_PER_USER


def test_aliases_of_values():
    assert aliases("a greyhound") == ("a greyhound", "greyhound")
    assert aliases("Glasgow") == ("Glasgow",)
    assert aliases("12 June") == ("12 June", "June 12", "12th June", "June 12th", "12th of June")
    assert aliases("1 December")[2] == "1st December" and aliases("22 August")[2] == "22nd August"

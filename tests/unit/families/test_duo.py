"""Checks for the "duo" family: two named friends tell each other their news; asked later by name."""

from __future__ import annotations

import pytest

from recall_core.training import family_data
from recall_core.training.families import base, duo
from recall_core.training.families.duo.generator import aliases

SEEDS = list(range(10))


@pytest.fixture(scope="module")
def users():
    return [u for seed in SEEDS for u in duo.generate(seed)]


def _turn(user, at):
    return next(t for t in user.turns if (t.session, t.index) == at)


def test_module_surface():
    assert duo.NAME == "duo"
    assert duo.DESCRIPTION and "\n" not in duo.DESCRIPTION
    assert duo.generate(4) == duo.generate(4)
    assert duo.generate(4, users=2) == duo.generate(4)[:2]
    assert [u.user_id for u in duo.generate(4, users=3)] == [f"duo-4-{n:02d}" for n in range(3)]


def test_two_named_speakers_and_no_assistant(users):
    for user in users:
        speakers = {t.speaker for t in user.turns}
        assert len(speakers) == 2 and "" not in speakers, speakers
        roles = {t.speaker: {u.role for u in user.turns if u.speaker == t.speaker} for t in user.turns}
        assert sorted(tuple(r) for r in roles.values()) == [("assistant",), ("user",)]  # one role per speaker
        assert all(name in system for system in user.systems for name in speakers)


def test_sessions_and_question_counts(users):
    for user in users:
        sessions = sorted({t.session for t in user.turns})
        assert sessions == list(range(1, len(sessions) + 1)) and 3 <= len(sessions) <= 4
        kinds = [q.kind for q in user.questions]
        assert 6 <= kinds.count("memory") <= duo.MEMORY_PER_USER
        assert kinds.count("unanswerable") == duo.UNANSWERABLE_PER_USER
        assert len({q.text for q in user.questions}) == len(user.questions)  # no question asked twice
        assert [t.date for t in user.turns] == sorted(t.date for t in user.turns)


def test_the_evidence_is_the_asked_persons_own_words(users):
    for user in users:
        for q in (q for q in user.questions if q.kind == "memory"):
            for at in q.evidence:
                turn = _turn(user, at)
                assert turn.speaker == q.values[0] and base.score(q, turn.content)["correct"], (q, turn)
                assert not base.names(turn.content, q.values[0])  # "I ...": the name is only the speaker's


def test_a_near_miss_is_the_other_friends_news(users):
    """Most unanswerable questions ask one friend about the other's news: its decoy is what the
    other said, and nothing the asked friend said names it."""
    near = 0
    for user in users:
        for q in (q for q in user.questions if q.kind == "unanswerable"):
            assert not any(t.facts and t.facts[0] == q.fact for t in user.turns), q  # never told of this friend
            if q.decoys:
                near += 1
                told = [t for t in user.turns if t.facts and base.names(t.content, q.decoys[0])]
                assert told and all(t.speaker != q.values[0] for t in told), q
    assert near >= 0.6 * len(SEEDS) * 5 * duo.UNANSWERABLE_PER_USER


def test_changed_news_leaves_a_stale_value_said_earlier(users):
    stale = [(u, q) for u in users for q in u.questions if q.stale]
    assert stale, "some news changes"
    for user, q in stale:
        first = min((t for t in user.turns if t.facts and base.names(t.content, q.stale[0])),
                    key=lambda t: (t.session, t.index))  # fmt: skip
        assert (first.session, first.index) < q.evidence[0]


def test_memory_keeps_the_speaker_and_the_chat_is_not_the_callers(users):
    """The writer's turns carry the speaker (the notes show it); no duo exchange becomes an earlier
    exchange of the caller's session."""
    user = users[0]
    turns = family_data.memory_turns(user)
    assert {t["metadata"]["speaker"] for t in turns} == {t.speaker for t in user.turns}
    assert family_data.chat_exchanges(user) == []


def test_aliases_of_values():
    assert aliases("the cello") == ("the cello", "cello")
    assert aliases("a pair of finches") == ("a pair of finches", "pair of finches")
    assert aliases("Lisbon") == ("Lisbon",)

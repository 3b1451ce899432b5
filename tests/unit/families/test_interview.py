"""Checks for the interview family: facts given as short answers to the assistant's questions."""

from __future__ import annotations

import re
from datetime import datetime

import pytest

from recall_core.training.families import base, interview

SEEDS = list(range(12))
COMMON = {"yes", "no", "a", "an", "the", "i", "it", "me", "my", "you", "and", "or", "of", "to",
          "in", "on", "is", "ok", "okay", "not", "none", "one"}
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$")


@pytest.fixture(scope="module")
def all_users() -> list[base.User]:
    out: list[base.User] = []
    for seed in SEEDS:
        out.extend(interview.generate(seed))
    return out


def _sessions(user: base.User) -> dict[int, list[base.Turn]]:
    out: dict[int, list[base.Turn]] = {}
    for t in user.turns:
        out.setdefault(t.session, []).append(t)
    return out


def _turn(user: base.User, where: tuple[int, int]) -> base.Turn:
    matches = [t for t in user.turns if (t.session, t.index) == tuple(where)]
    assert len(matches) == 1, where
    return matches[0]


def test_module_interface():
    assert interview.NAME == "interview"
    assert isinstance(interview.DESCRIPTION, str) and interview.DESCRIPTION
    assert "\n" not in interview.DESCRIPTION


def test_deterministic_for_a_seed():
    assert interview.generate(7) == interview.generate(7)
    assert interview.generate(7, users=2) == interview.generate(7)[:2]
    assert interview.generate(7) != interview.generate(8)


def test_sizes():
    for seed in SEEDS:
        users = interview.generate(seed)
        assert len(users) == 5
        assert [u.user_id for u in users] == [f"interview-{seed}-{n:02d}" for n in range(5)]
        for u in users:
            assert 3 <= len(_sessions(u)) <= 5
            assert len(u.questions) == interview.QUESTIONS_PER_USER
            unanswerable = [q for q in u.questions if q.kind == "unanswerable"]
            assert len(unanswerable) == interview.UNANSWERABLE_PER_USER
    assert len(interview.generate(3, users=2)) == 2
    assert len(interview.generate(3, users=9)) == 9


def test_sessions_dates_and_roles(all_users):
    for u in all_users:
        sessions = _sessions(u)
        assert sorted(sessions) == list(range(1, len(sessions) + 1))
        previous = None
        for s in sorted(sessions):
            turns = sessions[s]
            dates = {t.date for t in turns}
            assert len(dates) == 1
            date = dates.pop()
            assert DATE.match(date)
            when = datetime.strptime(date, "%Y-%m-%dT%H:%M")
            assert 2023 <= when.year <= 2025
            if previous is not None:
                gap = when - previous
                assert gap.days >= 1, (u.user_id, s)
            previous = when
            assert [t.index for t in turns] == list(range(len(turns)))
            for t in turns:
                assert t.role == ("user" if t.index % 2 == 0 else "assistant")
            assert turns[-1].role == "assistant"
            assert len(turns) >= 4


def test_turn_values_occur_in_content(all_users):
    for u in all_users:
        for t in u.turns:
            for v in t.values:
                assert v and v in t.content, (t.content, v)
                assert base.names(t.content, v)
            if t.role == "assistant":
                assert t.facts == ()


def test_assistant_never_introduces_a_value(all_users):
    """Every value an assistant turn uses was said by the user earlier in that session."""
    for u in all_users:
        for s, turns in _sessions(u).items():
            said: set[str] = set()
            for t in turns:
                if t.role == "user":
                    said.update(v.lower() for v in t.values)
                else:
                    for v in t.values:
                        assert v.lower() in said, (u.user_id, s, t.content, v)


def test_questions_are_valid(all_users):
    for u in all_users:
        keys = [q.key for q in u.questions]
        assert len(set(keys)) == len(keys)
        facts = [q.fact for q in u.questions]
        assert len(set(facts)) == len(facts), "one question per fact"
        for q in u.questions:
            assert q.user_id == u.user_id
            assert q.kind in base.KINDS
            assert q.text.strip()
            for v in q.values:
                assert v in q.text
            for a in q.answers + q.stale:
                assert not base.names(q.text, a), (q.text, a)
            if q.kind == "memory":
                assert q.answers and q.evidence
                for a in q.answers:
                    word = base.normal(a).strip()
                    assert word and word not in COMMON, a
                assert not (set(map(base.normal, q.answers)) & set(map(base.normal, q.stale)))
            else:
                assert not q.answers and not q.evidence and not q.stale


def test_evidence_names_an_answer(all_users):
    for u in all_users:
        for q in u.questions:
            for where in q.evidence:
                t = _turn(u, where)
                assert t.role == "user"
                assert q.fact in t.facts
                assert any(base.names(t.content, a) for a in q.answers), (t.content, q.answers)
            if q.kind == "memory":
                # the evidence is the last turn stating the fact
                stating = [(t.session, t.index) for t in u.turns if q.fact in t.facts]
                assert tuple(q.evidence[-1]) == stating[-1]


def test_stale_values_were_said_earlier(all_users):
    for u in all_users:
        for q in u.questions:
            if not q.stale:
                continue
            ev = tuple(q.evidence[0])
            earlier = [t for t in u.turns if q.fact in t.facts and (t.session, t.index) < ev]
            assert earlier, q.key
            for t in earlier:
                # every earlier statement of the fact names an old value, never the current one
                assert any(base.names(t.content, s) for s in q.stale), (t.content, q.stale)
                assert not any(base.names(t.content, a) for a in q.answers), t.content


def test_unanswerable_facts_never_stated(all_users):
    for u in all_users:
        stated = {f for t in u.turns for f in t.facts}
        for q in u.questions:
            if q.kind == "unanswerable":
                assert q.fact not in stated, (u.user_id, q.fact)


def test_memory_answers_do_not_collide(all_users):
    """No answer of one fact names an answer or old value of another fact of the same user."""
    for u in all_users:
        mem = [q for q in u.questions if q.kind == "memory"]
        for q1 in mem:
            for q2 in mem:
                if q1 is q2:
                    continue
                for a in q1.answers:
                    for b in q2.answers + q2.stale:
                        assert not base.names(a, b), (q1.fact, a, q2.fact, b)


def test_mix_of_interview_answers_and_statements(all_users):
    """Most facts are short answers right after an assistant question; some are stated outright."""
    answered = stated = 0
    for u in all_users:
        for turns in _sessions(u).values():
            for t in turns:
                if t.role != "user" or not t.facts:
                    continue
                prev = turns[t.index - 1]
                if prev.role == "assistant" and prev.content.rstrip().endswith("?"):
                    answered += 1
                else:
                    stated += 1
    assert answered > stated > 0


def test_question_kinds_and_phrasings_vary(all_users):
    texts = [q.text for u in all_users for q in u.questions]
    assert len(set(texts)) > len(texts) * 0.6
    assert any(t.lower().startswith("did i ever tell you") for t in texts)
    assert any(t.lower().startswith("refresh my memory") for t in texts)
    facts = {q.fact.split(":")[0] for u in all_users for q in u.questions}
    assert {"declined"} <= facts
    assert any(":" in q.fact and not q.fact.startswith("declined") and q.kind == "memory"
               for u in all_users for q in u.questions)
    assert any(":" in q.fact and not q.fact.startswith("declined") and q.kind == "unanswerable"
               for u in all_users for q in u.questions)


def test_scoring_round_trip(all_users):
    for u in all_users:
        for q in u.questions:
            if q.kind == "memory":
                assert base.score(q, f"I think it's {q.answers[0]}.")["correct"]
                if q.stale:
                    r = base.score(q, f"It was {q.stale[0]}.")
                    assert r["stale"] and not r["correct"]
            else:
                assert base.score(q, "Sorry, you never told me that.")["correct"]

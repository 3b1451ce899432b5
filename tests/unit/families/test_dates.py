"""Checks for the "dates" family: appointments, deadlines, birthdays and reschedulings."""

from __future__ import annotations

import datetime as dt
import re

import pytest

from recall_core.training.families import base, dates

SEEDS = list(range(40))
COMMON = {"yes", "no", "a", "an", "the", "i", "it", "you", "my", "on", "at", "in", "of", "and",
          "day", "time", "date", "birthday", "appointment", "flight", "today", "tomorrow"}


@pytest.fixture(scope="module")
def corpus():
    return {seed: dates.generate(seed) for seed in SEEDS}


def all_users(corpus):
    for users in corpus.values():
        yield from users


def user_turns(user):
    return [t for t in user.turns if t.role == "user"]


def by_pos(user):
    return {(t.session, t.index): t for t in user.turns}


def order(t):
    return (t.session, t.index)


# -- module surface and determinism --------------------------------------------------------------


def test_module_surface():
    assert dates.NAME == "dates"
    assert isinstance(dates.DESCRIPTION, str) and dates.DESCRIPTION and "\n" not in dates.DESCRIPTION


def test_deterministic_for_a_seed():
    assert dates.generate(11) == dates.generate(11)
    assert dates.generate(0, users=3) == dates.generate(0, users=3)


def test_different_seeds_differ():
    a, b = dates.generate(1), dates.generate(2)
    assert [t.content for u in a for t in u.turns] != [t.content for u in b for t in u.turns]
    assert [q.text for u in a for q in u.questions] != [q.text for u in b for q in u.questions]


def test_users_argument_and_prefix_stability():
    assert len(dates.generate(3, users=2)) == 2
    assert len(dates.generate(3, users=9)) == 9
    # the first users do not depend on how many are asked for
    assert dates.generate(3, users=2) == dates.generate(3, users=5)[:2]


# -- sizes ---------------------------------------------------------------------------------------------


def test_sizes(corpus):
    for seed, users in corpus.items():
        assert len(users) == 5
        ids = [u.user_id for u in users]
        assert ids == [f"dates-{seed}-{n:02d}" for n in range(5)]
        for u in users:
            sessions = sorted({t.session for t in u.turns})
            assert 3 <= len(sessions) <= 5
            assert 16 <= len(u.questions) <= 20, (u.user_id, len(u.questions))
            mem = sum(q.kind == "memory" for q in u.questions)
            un = sum(q.kind == "unanswerable" for q in u.questions)
            assert un >= 2 and mem >= 12
            assert 0.7 <= mem / len(u.questions) <= 0.9


def test_question_count_is_about_twenty_on_average(corpus):
    counts = [len(u.questions) for u in all_users(corpus)]
    assert 19 <= sum(counts) / len(counts) <= 20


# -- turns ---------------------------------------------------------------------------------------------


DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$")


def test_turn_structure(corpus):
    for u in all_users(corpus):
        sessions = sorted({t.session for t in u.turns})
        assert sessions == list(range(1, len(sessions) + 1))
        for s in sessions:
            ts = [t for t in u.turns if t.session == s]
            assert [t.index for t in ts] == list(range(len(ts)))
            assert [t.role for t in ts] == ["user", "assistant"] * (len(ts) // 2)
            assert len(ts) % 2 == 0 and len(ts) >= 6
        for t in u.turns:
            assert t.role in base.ROLES
            assert t.content.strip()
            assert DATE_RE.match(t.date)
        # turns are listed in order
        assert [order(t) for t in u.turns] == sorted(order(t) for t in u.turns)


def test_dates_increase(corpus):
    for u in all_users(corpus):
        stamps = [dt.datetime.fromisoformat(t.date) for t in u.turns]
        assert stamps == sorted(stamps)
        starts = [min(dt.datetime.fromisoformat(t.date) for t in u.turns if t.session == s)
                  for s in sorted({t.session for t in u.turns})]
        for a, b in zip(starts, starts[1:], strict=False):
            assert 1 <= (b - a).days <= 60
        for st in starts:
            assert 2023 <= st.year <= 2025


def test_turn_values_occur_in_content(corpus):
    for u in all_users(corpus):
        for t in u.turns:
            for v in t.values:
                assert v and v in t.content, (u.user_id, v, t.content)


def test_only_user_turns_state_facts(corpus):
    for u in all_users(corpus):
        for t in u.turns:
            if t.role == "assistant":
                assert t.facts == ()


def test_facts_are_stated(corpus):
    for u in all_users(corpus):
        assert sum(1 for t in u.turns if t.facts) >= 6


# -- questions ---------------------------------------------------------------------------------------------


def test_questions_valid(corpus):
    for u in all_users(corpus):
        keys = [q.key for q in u.questions]
        assert len(set(keys)) == len(keys)
        for q in u.questions:
            assert q.user_id == u.user_id
            assert q.kind in base.KINDS
            assert q.text.strip() and q.fact
            for v in q.values:
                assert v and v in q.text, (q.key, v, q.text)
            if q.kind == "memory":
                assert q.answers and q.evidence
                for a in q.answers:
                    assert base.normal(a).strip() not in COMMON and len(base.normal(a).strip()) >= 3
                # a question never contains its own answer, nor an old value
                for a in q.answers + q.stale:
                    assert not base.names(q.text, a), (q.key, a, q.text)
                # answers and stale values are told apart by the scorer
                for s in q.stale:
                    assert not any(base.names(s, a) or base.names(a, s) for a in q.answers), (q.key, s)
                assert base.score(q, f"It's {q.answers[0]}.")["correct"]
                if q.stale:
                    assert base.score(q, f"It's {q.stale[0]}.")["stale"]
            else:
                assert not q.answers and not q.evidence and not q.stale
                assert base.score(q, "Sorry, I don't know, you never told me.")["correct"]


def test_evidence_turns_name_an_answer(corpus):
    for u in all_users(corpus):
        pos = by_pos(u)
        for q in u.questions:
            for e in q.evidence:
                t = pos[e]
                assert t.role == "user"
                assert q.fact in t.facts, (q.key, e)
                assert any(base.names(t.content, a) for a in q.answers), (q.key, t.content, q.answers)


def test_stale_values_named_in_an_earlier_turn_of_the_fact(corpus):
    n_stale = 0
    for u in all_users(corpus):
        pos = by_pos(u)
        for q in u.questions:
            if not q.stale:
                continue
            n_stale += 1
            last = max(q.evidence)
            earlier = [t for t in u.turns if q.fact in t.facts and order(t) < last]
            assert earlier, q.key
            assert any(base.names(t.content, s) for t in earlier for s in q.stale), q.key
            # the current value is stated after (or where) the change is told
            assert all(pos[e].role == "user" for e in q.evidence)
    assert n_stale >= len(SEEDS)  # rescheduling really happens


def test_unanswerable_facts_never_stated(corpus):
    for u in all_users(corpus):
        stated = {f for t in u.turns for f in t.facts}
        for q in u.questions:
            if q.kind == "unanswerable":
                assert q.fact not in stated
                assert not any(q.fact in t.facts for t in u.turns)


def test_unanswerable_birthday_relation_never_mentioned(corpus):
    for u in all_users(corpus):
        for q in u.questions:
            if q.kind == "unanswerable" and q.fact.startswith("unsaid_birthday_"):
                rel = q.fact[len("unsaid_birthday_"):]
                assert rel in q.values
                assert not any(base.names(t.content, rel) for t in u.turns), (u.user_id, rel)


def test_no_answer_named_by_another_fact(corpus):
    """The current value of a fact is not stated by a turn about some other fact (no ambiguity)."""
    for u in all_users(corpus):
        for q in u.questions:
            if q.kind != "memory":
                continue
            for t in user_turns(u):
                if t.facts and q.fact not in t.facts:
                    assert not any(base.names(t.content, a) for a in q.answers), (q.key, t.content)


def test_memory_facts_are_stated_by_user_turns(corpus):
    for u in all_users(corpus):
        stated = {f for t in u.turns for f in t.facts}
        for q in u.questions:
            if q.kind == "memory":
                assert q.fact in stated


def test_variety(corpus):
    texts = [q.text for u in all_users(corpus) for q in u.questions]
    assert len(set(texts)) > 0.8 * len(texts)
    facts = {q.fact.rstrip("0123456789") for u in all_users(corpus) for q in u.questions}
    for kind in ("appt", "flight", "bday", "deadline", "event", "other_appt"):
        assert kind in facts
    assert any(q.fact.startswith("ms_") for u in all_users(corpus) for q in u.questions)


def test_aliases():
    d = dt.date(2024, 3, 14)
    al = dates.date_aliases(d)
    for want in ("14 March", "March 14", "14th March", "March 14th", "14th of March"):
        assert want in al
    t = dates.time_aliases((16, 15))
    for want in ("4:15", "4.15", "16:15", "quarter past four", "4:15 pm", "4.15pm"):
        assert any(base.names(want, a) for a in t), want
    assert "7pm" in dates.time_aliases((19, 0))
    assert "half nine" in dates.time_aliases((9, 30))
    # whole words: the 1st is not the 21st
    assert not base.names("21 May", "1 May")

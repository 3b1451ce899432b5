"""Checks for the "passing" family: facts said in passing inside long chatty user turns."""

from __future__ import annotations

import itertools
import re
from datetime import datetime

import pytest

from recall_core.training.families import base, passing

SEEDS = list(range(12))
COMMON = {"yes", "no", "a", "an", "the", "it", "i", "me", "my", "you", "and", "or", "on", "in", "of",
          "to", "is", "at", "back", "may", "second", "first", "one"}


@pytest.fixture(scope="module")
def users_by_seed():
    return {seed: passing.generate(seed) for seed in SEEDS}


def _all(users_by_seed):
    for seed, users in users_by_seed.items():
        for user in users:
            yield seed, user


def _turn(user, session, index):
    found = [t for t in user.turns if t.session == session and t.index == index]
    assert len(found) == 1, (user.user_id, session, index)
    return found[0]


def _position(user, turn):
    return user.turns.index(turn)


def test_module_interface():
    assert passing.NAME == "passing"
    assert isinstance(passing.DESCRIPTION, str) and passing.DESCRIPTION
    assert callable(passing.generate)


def test_deterministic_for_a_seed():
    assert passing.generate(7) == passing.generate(7)
    assert passing.generate(7, users=2) == passing.generate(7)[:2]


def test_different_seeds_differ():
    a, b = passing.generate(1), passing.generate(2)
    assert [u.turns for u in a] != [u.turns for u in b]
    assert [u.questions for u in a] != [u.questions for u in b]


def test_sizes(users_by_seed):
    for seed, users in users_by_seed.items():
        assert len(users) == 5
        assert [u.user_id for u in users] == [f"passing-{seed}-{n:02d}" for n in range(5)]
    assert len(passing.generate(3, users=2)) == 2
    assert len(passing.generate(3, users=8)) == 8
    memory = unanswerable = 0
    for _, user in _all(users_by_seed):
        sessions = sorted({t.session for t in user.turns})
        assert sessions == list(range(1, len(sessions) + 1))
        assert 3 <= len(sessions) <= 5
        facts = {f for t in user.turns for f in t.facts}
        assert 12 <= len(facts) <= 18, (user.user_id, len(facts))
        assert 15 <= len(user.questions) <= 25
        memory += sum(q.kind == "memory" for q in user.questions)
        unanswerable += sum(q.kind == "unanswerable" for q in user.questions)
    share = memory / (memory + unanswerable)
    assert 0.7 <= share <= 0.9, share


def test_roles_alternate_and_indices(users_by_seed):
    for _, user in _all(users_by_seed):
        sessions = sorted({t.session for t in user.turns})
        for s in sessions:
            turns = [t for t in user.turns if t.session == s]
            assert [t.index for t in turns] == list(range(len(turns)))
            assert len(turns) % 2 == 0 and len(turns) >= 4
            for t in turns:
                assert t.role == ("user" if t.index % 2 == 0 else "assistant")
                assert t.role in base.ROLES
        # turns are stored in session order
        assert [t.session for t in user.turns] == sorted(t.session for t in user.turns)


def test_dates_increase(users_by_seed):
    pattern = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$")
    for _, user in _all(users_by_seed):
        stamps = []
        for t in user.turns:
            assert pattern.match(t.date), t.date
            stamps.append(datetime.strptime(t.date, "%Y-%m-%dT%H:%M"))
            assert 2023 <= stamps[-1].year <= 2025
        assert stamps == sorted(stamps)
        starts = {}
        for t, when in zip(user.turns, stamps, strict=True):
            starts.setdefault(t.session, when)
        ordered = [starts[s] for s in sorted(starts)]
        for a, b in itertools.pairwise(ordered):
            assert (b - a).days >= 1
        for t, when in zip(user.turns[1:], stamps[1:], strict=True):
            prev = user.turns[user.turns.index(t) - 1]
            if prev.session == t.session:
                assert when > stamps[user.turns.index(prev)]


def test_values_occur_in_content(users_by_seed):
    for _, user in _all(users_by_seed):
        for t in user.turns:
            for v in t.values:
                assert v and v in t.content, (user.user_id, v, t.content)
        for q in user.questions:
            for v in q.values:
                assert v and v in q.text, (q.key, v, q.text)


def test_fact_turns_are_long_and_single(users_by_seed):
    for _, user in _all(users_by_seed):
        for t in user.turns:
            if t.role == "assistant":
                assert t.facts == ()
                continue
            if t.facts:
                assert len(t.facts) == 1
                words = len(t.content.split())
                assert 60 <= words <= 200, (words, t.content)


def test_questions_valid(users_by_seed):
    for _, user in _all(users_by_seed):
        keys = [q.key for q in user.questions]
        assert len(keys) == len(set(keys))
        facts = [q.fact for q in user.questions]
        assert len(facts) == len(set(facts)), "one question per fact"
        for q in user.questions:
            assert q.user_id == user.user_id
            assert q.kind in base.KINDS
            assert q.text.strip()
            for a in q.answers + q.stale:
                assert base.normal(a).strip() not in COMMON, a
                assert len(base.normal(a).strip()) >= 2
                # a question never contains its own answer (nor an old value)
                assert not base.names(q.text, a), (q.text, a)
            assert not set(q.answers) & set(q.stale)


def test_memory_evidence_names_an_answer(users_by_seed):
    for _, user in _all(users_by_seed):
        for q in user.questions:
            if q.kind != "memory":
                continue
            assert q.answers and q.evidence
            for s, i in q.evidence:
                t = _turn(user, s, i)
                assert t.role == "user"
                assert q.fact in t.facts
                assert any(base.names(t.content, a) for a in q.answers), (q.answers, t.content)
                # the scorer accepts the evidence's own wording
                assert base.score(q, t.content)["correct"]


def test_stale_values_named_earlier(users_by_seed):
    changed = 0
    for _, user in _all(users_by_seed):
        for q in user.questions:
            if q.kind != "memory" or not q.stale:
                continue
            changed += 1
            first_evidence = min(_position(user, _turn(user, s, i)) for s, i in q.evidence)
            earlier = [t for t in user.turns[:first_evidence] if t.role == "user" and q.fact in t.facts]
            assert earlier, q.key
            assert any(base.names(t.content, st) for t in earlier for st in q.stale), q.key
            # every fact turn after the change names the current value
            for t in user.turns[first_evidence:]:
                if q.fact in t.facts:
                    assert any(base.names(t.content, a) for a in q.answers)
    assert changed > 0


def test_unanswerable_facts_never_stated(users_by_seed):
    count = 0
    for _, user in _all(users_by_seed):
        stated = {f for t in user.turns for f in t.facts}
        for q in user.questions:
            if q.kind == "unanswerable":
                count += 1
                assert not q.answers and not q.evidence and not q.stale
                assert q.fact not in stated, (q.key, q.fact)
                assert base.score(q, "Sorry, I don't know, you never told me that.")["correct"]
    assert count > 0


def test_answers_only_where_the_fact_is_said(users_by_seed):
    """A current or old value appears only in turns stating that fact, or in the assistant's echo."""
    for _, user in _all(users_by_seed):
        for q in user.questions:
            if q.kind != "memory":
                continue
            for pos, t in enumerate(user.turns):
                hit = [v for v in q.answers + q.stale if base.names(t.content, v)]
                if not hit:
                    continue
                if t.role == "user":
                    assert q.fact in t.facts, (q.fact, hit, t.content)
                else:
                    prev = user.turns[pos - 1]
                    assert prev.session == t.session and q.fact in prev.facts, (q.fact, hit, t.content)


def test_fact_values_distinct_within_user(users_by_seed):
    for _, user in _all(users_by_seed):
        names = []
        for q in user.questions:
            if q.kind == "memory":
                names.append(base.normal(q.answers[0]))
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                assert a not in b and b not in a, (a, b)


def test_questions_phrasing_varies(users_by_seed):
    texts = [q.text for _, u in _all(users_by_seed) for q in u.questions]
    assert len(set(texts)) > 0.6 * len(texts)
    assert any(t.startswith("Do you still remember") for t in texts)
    assert any(t.lower().startswith("jog my memory") for t in texts)
    assert any(len(t.split()) > 10 for t in texts)


def test_scoring_examples(users_by_seed):
    user = users_by_seed[0][0]
    q = next(q for q in user.questions if q.kind == "memory")
    assert base.score(q, f"I think it's {q.answers[0]}.")["correct"]
    assert not base.score(q, "No idea, sorry.")["correct"]

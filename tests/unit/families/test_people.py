"""Checks for the "people" family: determinism, sizes, and that every question is sound."""

from __future__ import annotations

import re

import pytest

from recall_core.training.families import base, people

SEEDS = list(range(12))
DATE = re.compile(r"^20(23|24|25)-\d\d-\d\dT\d\d:\d\d$")


@pytest.fixture(scope="module")
def corpus():
    return {seed: people.generate(seed) for seed in SEEDS}


def _users(corpus):
    for users in corpus.values():
        yield from users


def _turn(user, session, index):
    for t in user.turns:
        if t.session == session and t.index == index:
            return t
    raise AssertionError(f"no turn {session}/{index} for {user.user_id}")


def test_module_surface():
    assert people.NAME == "people"
    assert isinstance(people.DESCRIPTION, str) and people.DESCRIPTION and "\n" not in people.DESCRIPTION


def test_deterministic_for_a_seed():
    assert people.generate(7) == people.generate(7)
    assert people.generate(7, users=2) == people.generate(7)[:2]


def test_different_seeds_differ():
    a, b = people.generate(1), people.generate(2)
    assert [u.turns for u in a] != [u.turns for u in b]
    assert [[q.text for q in u.questions] for u in a] != [[q.text for q in u.questions] for u in b]


def test_sizes(corpus):
    for seed, users in corpus.items():
        assert len(users) == 5
        assert [u.user_id for u in users] == [f"people-{seed}-{n:02d}" for n in range(5)]
    assert len(people.generate(3, users=2)) == 2
    assert len(people.generate(3, users=8)) == 8
    for u in _users(corpus):
        sessions = sorted({t.session for t in u.turns})
        assert 3 <= len(sessions) <= 5
        assert sessions == list(range(1, len(sessions) + 1))
        assert len(u.questions) == people.QUESTIONS_PER_USER == 20
        kinds = [q.kind for q in u.questions]
        assert kinds.count("memory") == people.MEMORY_PER_USER == 16
        assert kinds.count("unanswerable") == people.UNANSWERABLE_PER_USER == 4


def test_roles_alternate_and_indices(corpus):
    for u in _users(corpus):
        for s in sorted({t.session for t in u.turns}):
            turns = [t for t in u.turns if t.session == s]
            assert [t.index for t in turns] == list(range(len(turns)))
            assert len(turns) >= 4 and len(turns) % 2 == 0
            for t in turns:
                assert t.role == ("user" if t.index % 2 == 0 else "assistant")
                assert t.role in base.ROLES
                assert t.content.strip()


def test_dates_increase(corpus):
    for u in _users(corpus):
        stamps = [t.date for t in u.turns]
        assert all(DATE.match(d) for d in stamps), stamps
        assert stamps == sorted(stamps)
        firsts, lasts = {}, {}
        for t in u.turns:
            firsts.setdefault(t.session, t.date)
            lasts[t.session] = t.date
        for s in range(2, max(firsts) + 1):
            assert firsts[s][:10] > lasts[s - 1][:10], "sessions are days apart"


def test_values_occur_in_content(corpus):
    for u in _users(corpus):
        for t in u.turns:
            for v in t.values:
                assert v.strip() and base.names(t.content, v), (v, t.content)
        for q in u.questions:
            for v in q.values:
                assert base.names(q.text, v), (v, q.text)


def test_only_user_turns_state_facts(corpus):
    for u in _users(corpus):
        for t in u.turns:
            if t.role == "assistant":
                assert t.facts == ()


def test_questions_valid(corpus):
    for u in _users(corpus):
        keys = [q.key for q in u.questions]
        assert len(set(keys)) == len(keys)
        facts = [q.fact for q in u.questions]
        assert len(set(facts)) == len(facts), "each fact is asked once"
        for q in u.questions:
            assert q.user_id == u.user_id
            assert q.kind in base.KINDS
            assert q.text.strip() and q.text[0].isupper()
            for a in q.answers + q.stale:
                assert not base.names(q.text, a), ("question gives away a value", q.text, a)
            assert not set(map(base.normal, q.answers)) & set(map(base.normal, q.stale))


def test_evidence_names_an_answer(corpus):
    for u in _users(corpus):
        for q in u.questions:
            if q.kind != "memory":
                continue
            for s, i in q.evidence:
                t = _turn(u, s, i)
                assert t.role == "user"
                assert q.fact in t.facts
                assert any(base.names(t.content, a) for a in q.answers), (q.answers, t.content)
            # every user turn stating this fact with its current value is evidence
            stating = [(t.session, t.index) for t in u.turns if q.fact in t.facts
                       and any(base.names(t.content, a) for a in q.answers)]
            assert set(stating) == set(q.evidence)


def test_stale_values_named_earlier(corpus):
    n_stale = 0
    for u in _users(corpus):
        for q in u.questions:
            if not q.stale:
                continue
            n_stale += 1
            first = min(q.evidence)
            earlier = [t for t in u.turns if t.role == "user" and q.fact in t.facts
                       and (t.session, t.index) < first]
            assert earlier, q
            assert any(base.names(t.content, q.stale[0]) for t in earlier)
            assert not any(any(base.names(t.content, a) for a in q.answers) for t in earlier)
    assert n_stale > 0


def test_unanswerable_never_stated_but_near_a_distractor(corpus):
    for u in _users(corpus):
        stated = {f for t in u.turns for f in t.facts}
        for q in u.questions:
            if q.kind != "unanswerable":
                continue
            assert not q.answers and not q.evidence and not q.stale
            assert q.fact not in stated
            kind = q.fact.split(".")[1]
            # the same kind of fact was given for somebody else
            assert any(f.endswith("." + kind) for f in stated), q


def test_attribute_answers_are_unambiguous(corpus):
    """An attribute's value is only ever written in the user turns that state that attribute."""
    for u in _users(corpus):
        for q in u.questions:
            if q.kind != "memory" or q.fact.endswith(".name"):
                continue
            for t in u.turns:
                if t.role == "user" and any(base.names(t.content, a) for a in q.answers + q.stale):
                    assert q.fact in t.facts, (q.fact, t.content)


def test_values_distinct_across_facts(corpus):
    """No two facts of a user share a value (or contain one another's), so no question is ambiguous."""
    for u in _users(corpus):
        forms = {}
        for q in u.questions:
            if q.kind == "memory" and not q.fact.endswith(".name"):
                forms[q.fact] = q.answers + q.stale
        items = list(forms.items())
        for i, (fa, va) in enumerate(items):
            for fb, vb in items[i + 1:]:
                for a in va:
                    for b in vb:
                        assert base.normal(a) not in base.normal(b), (fa, a, fb, b)


def test_scoring_round_trip(corpus):
    for u in _users(corpus):
        for q in u.questions:
            if q.kind == "memory":
                assert base.score(q, f"I think it's {q.answers[0]}.")["correct"]
                assert not base.score(q, "I don't know.")["correct"]
                if q.stale:
                    r = base.score(q, f"That would be {q.stale[0]}.")
                    assert r["stale"] and not r["correct"]
            else:
                assert base.score(q, "Sorry, you never mentioned that.")["correct"]


def test_question_mix(corpus):
    kinds = {"by_name": 0, "by_relation": 0, "name_of_relation": 0, "phrasings": set()}
    for u in _users(corpus):
        names_ = {v for t in u.turns if t.role == "user" for v in t.values}
        for q in u.questions:
            kinds["phrasings"].add(base.normal(q.text).split()[0])
            if q.fact.endswith(".name") and q.kind == "memory":
                kinds["name_of_relation"] += 1
            elif q.values and q.values[0] in names_ and q.values[0][0].isupper():
                kinds["by_name"] += 1
            else:
                kinds["by_relation"] += 1
    assert kinds["by_name"] > 20 and kinds["by_relation"] > 20 and kinds["name_of_relation"] > 10
    assert len(kinds["phrasings"]) >= 10


def test_vocabulary_never_hides_in_fixed_text():
    """No value (or alias) can be matched by the fixed wording of a sentence or reply."""
    fixed = []

    def walk(x):
        if isinstance(x, str):
            fixed.append(base.normal(re.sub(r"\{[^}]*\}", " | ", x)))
        elif isinstance(x, (list, tuple)):
            for y in x:
                walk(y)
        elif isinstance(x, dict):
            for y in x.values():
                walk(y)

    for name in ("INTRO", "INTRO_NICK", "STATE", "CHANGE", "ACK", "ACK_CHANGE", "MERGED_PREFIX", "JOINERS",
                 "DISTRACT", "SMALL", "HELP", "GREET", "GREET_PREFIX", "CLOSE", "ASK", "WRAP_DIRECT",
                 "WRAP_INDIRECT"):
        walk(getattr(people, name))
    forms = [f for pool in people.POOLS.values() for v in pool for f in v.forms]
    forms += people.FEMALE + people.MALE + list(people.NICKS.values()) + people.PET_NAMES
    for f in forms:
        for t in fixed:
            assert base.normal(f) not in t, (f, t)

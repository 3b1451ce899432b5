"""Checks for the ``changes`` family: facts that change several times, asked about at their latest value."""

from __future__ import annotations

import re
from datetime import datetime

import pytest

from recall_core.training.families import base, changes

SEEDS = list(range(12))


@pytest.fixture(scope="module")
def data() -> dict[int, list[base.User]]:
    return {seed: changes.generate(seed) for seed in SEEDS}


def _all_users(data):
    for seed, users in data.items():
        for user in users:
            yield seed, user


def _turn_map(user):
    return {(t.session, t.index): t for t in user.turns}


def _position(user):
    return {(t.session, t.index): n for n, t in enumerate(user.turns)}


# -- module surface -------------------------------------------------------------------------------


def test_module_surface():
    assert changes.NAME == "changes"
    assert isinstance(changes.DESCRIPTION, str) and changes.DESCRIPTION and "\n" not in changes.DESCRIPTION
    assert callable(changes.generate)


def _slots(tpl: str) -> set[str]:
    return {m.group(1) for m in re.finditer(r"\{(?:(?:an|An):)?(\w+)\}", tpl)}


def test_templates_well_formed():
    """Every event template names the value it is about, so evidence turns carry the answer."""
    must = {"init": "v", "plan": "new", "done": "new", "switch": "new", "revert": "new", "cancel": "cur"}
    for kind, spec in changes._K.items():
        assert spec["ask"] and spec["init"]
        for event in ("init",) + tuple(spec["events"]):
            assert spec[event], (kind, event)
            for user_tpl, replies in spec[event]:
                assert must[event] in _slots(user_tpl), (kind, event, user_tpl)
                if event == "cancel":
                    assert "new" in _slots(user_tpl), user_tpl
                allowed = {"v"} if event == "init" else {"cur", "new"}
                for tpl in (user_tpl,) + tuple(replies):
                    assert _slots(tpl) <= allowed | {"term"}, (kind, event, tpl)
        for q in spec["ask"]:
            assert _slots(q) <= {"term"}
    for spec in changes._C.values():
        for user_tpl, replies in spec["state"]:
            assert "v" in _slots(user_tpl)
            for tpl in (user_tpl,) + tuple(replies):
                assert _slots(tpl) <= {"v", "species"}
    for spec in changes._O.values():
        for user_tpl, _replies in spec["say"]:
            assert "v" in _slots(user_tpl) and _slots(user_tpl) & {"who", "Who"}
        for q in spec["ask"]:
            assert _slots(q) == {"rel"}


# -- determinism ----------------------------------------------------------------------------------


def test_same_seed_same_output():
    assert changes.generate(3) == changes.generate(3)
    assert changes.generate(3, users=2) == changes.generate(3)[:2]


def test_different_seeds_differ():
    a, b = changes.generate(1), changes.generate(2)
    assert a != b
    assert [t.content for t in a[0].turns] != [t.content for t in b[0].turns]


# -- sizes ----------------------------------------------------------------------------------------


def test_sizes(data):
    for seed, users in data.items():
        assert len(users) == 5
        assert [u.user_id for u in users] == [f"changes-{seed}-{n:02d}" for n in range(5)]
        for user in users:
            sessions = sorted({t.session for t in user.turns})
            assert changes.MIN_SESSIONS <= len(sessions) <= changes.MAX_SESSIONS
            assert sessions == list(range(1, len(sessions) + 1))
            assert len(user.questions) == changes.QUESTIONS_PER_USER == 20
            kinds = [q.kind for q in user.questions]
            assert kinds.count("unanswerable") == changes.UNANSWERABLE_PER_USER == 4
            assert kinds.count("memory") == 16
    assert len(changes.generate(9, users=2)) == 2
    assert changes.generate(9, users=0) == []
    assert len(changes.generate(9, users=12)) == 12


# -- conversation shape ---------------------------------------------------------------------------


def test_roles_alternate_and_indices(data):
    for _, user in _all_users(data):
        by_session: dict[int, list[base.Turn]] = {}
        for t in user.turns:
            by_session.setdefault(t.session, []).append(t)
        for turns in by_session.values():
            assert [t.index for t in turns] == list(range(len(turns)))
            assert len(turns) % 2 == 0 and len(turns) >= 8
            for t in turns:
                assert t.role == ("user" if t.index % 2 == 0 else "assistant")
                assert t.content.strip()


def test_dates_increase(data):
    for _, user in _all_users(data):
        stamps = [datetime.strptime(t.date, "%Y-%m-%dT%H:%M") for t in user.turns]
        assert all(len(t.date) == 16 for t in user.turns)
        assert stamps == sorted(stamps)
        assert all(2023 <= s.year <= 2025 for s in stamps)
        firsts = {}
        lasts = {}
        for t, s in zip(user.turns, stamps, strict=True):
            firsts.setdefault(t.session, s)
            lasts[t.session] = s
        for n in range(2, len(firsts) + 1):
            gap = firsts[n] - lasts[n - 1]
            assert gap.days >= 2, "sessions are days to weeks apart"
            assert (firsts[n] - firsts[n - 1]).days <= 41


def test_values_occur_in_content(data):
    for _, user in _all_users(data):
        for t in user.turns:
            for v in t.values:
                assert v and v in t.content, (v, t.content)
        for q in user.questions:
            for v in q.values:
                assert v and v in q.text, (v, q.text)


def test_only_user_turns_state_facts(data):
    for _, user in _all_users(data):
        for t in user.turns:
            if t.role == "assistant":
                assert t.facts == ()
            if t.facts:
                assert t.values


def test_facts_change_across_sessions(data):
    """Changing facts go through 2 to 4 values, one event per session, and some never change."""
    for _, user in _all_users(data):
        changing = [q for q in user.questions if q.kind == "memory" and q.fact in changes.CHANGING_KINDS]
        assert changing and all(q.stale for q in changing)
        assert any(q.kind == "memory" and not q.stale for q in user.questions), "controls"
        for q in changing:
            sessions = [t.session for t in user.turns if q.fact in t.facts]
            assert len(sessions) == len(set(sessions)) >= 2
            groups = {changes.aliases(s)[-1] for s in q.stale} | {changes.aliases(q.answers[0])[-1]}
            assert 2 <= len(groups) <= 4


# -- questions ------------------------------------------------------------------------------------


def test_questions_valid(data):
    for _, user in _all_users(data):
        keys = [q.key for q in user.questions]
        assert len(keys) == len(set(keys))
        turns = _turn_map(user)
        for q in user.questions:
            assert q.user_id == user.user_id and q.key.startswith(user.user_id)
            assert q.kind in base.KINDS
            assert q.text.strip() and q.fact
            if q.kind == "memory":
                assert q.answers and q.evidence
                assert all(turns[e].role == "user" for e in q.evidence)
            else:
                assert not q.answers and not q.evidence and not q.stale


def test_question_never_contains_its_answer(data):
    for _, user in _all_users(data):
        for q in user.questions:
            for a in q.answers + q.stale:
                assert not base.names(q.text, a), (q.text, a)


def test_evidence_turns_name_an_answer(data):
    for _, user in _all_users(data):
        turns = _turn_map(user)
        pos = _position(user)
        for q in user.questions:
            if q.kind != "memory":
                continue
            for e in q.evidence:
                t = turns[e]
                assert q.fact in t.facts, (q.fact, t)
                assert any(base.names(t.content, a) for a in q.answers), (q.answers, t.content)
            # the latest turn about the fact states its current value
            stating = [pos[(t.session, t.index)] for t in user.turns if q.fact in t.facts]
            assert max(stating) == max(pos[e] for e in q.evidence)


def test_answers_are_aliases_of_one_value(data):
    for _, user in _all_users(data):
        for q in user.questions:
            if q.kind == "memory":
                assert changes.aliases(q.answers[0]) == q.answers


def test_stale_values_named_earlier_for_same_fact(data):
    for _, user in _all_users(data):
        pos = _position(user)
        for q in user.questions:
            if q.kind != "memory" or not q.stale:
                continue
            last_evidence = max(pos[e] for e in q.evidence)
            earlier = [t for t in user.turns
                       if q.fact in t.facts and pos[(t.session, t.index)] < last_evidence]
            for s in q.stale:
                assert any(s in changes.aliases(v) for t in earlier for v in t.values), (q.fact, s)
            # the current value and the stale ones can be told apart by whole-word matching
            for a in q.answers:
                for s in q.stale:
                    na, ns = base.normal(a), base.normal(s)
                    assert na not in ns and ns not in na, (a, s)


def test_unanswerable_facts_never_stated(data):
    for _, user in _all_users(data):
        stated = {f for t in user.turns for f in t.facts}
        facts = [q.fact for q in user.questions if q.kind == "unanswerable"]
        assert len(facts) == len(set(facts))
        for fact in facts:
            assert fact not in stated


def test_unanswerable_usually_near_a_distractor(data):
    """Most unanswerable questions are about someone mentioned, or a kind told about someone else."""
    near = total = 0
    for _, user in _all_users(data):
        stated = {f for t in user.turns for f in t.facts}
        heads = {f.split(".")[0] for f in stated if "." in f}
        tails = {f.split(".")[1] for f in stated if "." in f}
        for q in user.questions:
            if q.kind == "unanswerable":
                total += 1
                head, _, tail = q.fact.partition(".")
                near += head in heads or tail in tails or q.fact in tails or tail == "name"
    assert near / total > 0.6


def test_answers_only_named_where_their_fact_is(data):
    """No other fact, filler or reply names a memory answer (except echoing the user's turn)."""
    for _, user in _all_users(data):
        turns = user.turns
        for q in user.questions:
            if q.kind != "memory":
                continue
            for n, t in enumerate(turns):
                if not any(base.names(t.content, a) for a in q.answers):
                    continue
                if t.role == "user":
                    assert q.fact in t.facts, (q.fact, t.content)
                else:
                    assert q.fact in turns[n - 1].facts, (q.fact, t.content)


def test_memory_questions_mix_facts(data):
    for _, user in _all_users(data):
        memory = [q for q in user.questions if q.kind == "memory"]
        facts = [q.fact for q in memory]
        assert len(set(facts)) >= 9
        by_fact: dict[str, list[str]] = {}
        for q in memory:
            by_fact.setdefault(q.fact, []).append(q.text)
        for texts in by_fact.values():
            assert len(texts) == len(set(texts))


def test_some_questions_hint_at_time(data):
    hints = ("these days", "now", "at the moment", "currently")
    n = total = 0
    for _, user in _all_users(data):
        for q in user.questions:
            total += 1
            n += any(h in q.text for h in hints)
    assert 0.15 < n / total < 0.7


def _event_patterns(event: str) -> list[re.Pattern]:
    """Regexes matching the user turns of one event kind (a connector may precede them)."""
    out = []
    for spec in changes._K.values():
        for user_tpl, _ in spec.get(event, []):
            parts = re.split(r"\{[^}]+\}", user_tpl)
            parts[0] = parts[0][1:]  # a connector may lower-case the first letter
            out.append(re.compile(".+?".join(re.escape(p) for p in parts) + "$"))
    return out


def test_cancellations_and_reversals_happen(data):
    """Across users, planned changes get cancelled and some facts go back to an earlier value."""
    counts = {}
    for event in ("plan", "done", "cancel", "switch", "revert"):
        patterns = _event_patterns(event)
        counts[event] = sum(1 for _, user in _all_users(data) for t in user.turns
                            if t.facts and t.facts[0] in changes.CHANGING_KINDS
                            and any(p.search(t.content) for p in patterns))
    assert counts["cancel"] > 15 and counts["revert"] > 10, counts
    assert counts["plan"] >= counts["cancel"] and counts["switch"] > 30, counts


def test_scoring_roundtrip(data):
    for _, user in _all_users(data):
        for q in user.questions:
            if q.kind == "memory":
                assert base.score(q, f"That would be {q.answers[0]}.")["correct"]
                if q.stale:
                    r = base.score(q, f"I think it's {q.stale[0]}.")
                    assert r["stale"] and not r["correct"]
            else:
                assert base.score(q, "I don't know, you never told me that.")["correct"]

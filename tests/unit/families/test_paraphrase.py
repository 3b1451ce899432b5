"""Tests for the paraphrase family."""

from __future__ import annotations

import re
from string import Formatter

import pytest

from recall_core.training.families import base, paraphrase

SEEDS = range(12)
STOP = set("""
a about above after again all also am an and any anyone anything are around as at back be been
before being both but by can can't could day days did do does doing don't done down each even
ever every for from get gets getting go going got had has have having he her here him his how i
i'd i'll i'm i've if in into is it it's its just know like ll me more most much my need never new
no not now of off on one only or our out over really s so some still t than that the their them
then there these they thing things this those through till to today too up us usual usually ve
very was we were what what's when where which while who why will with won't would yet you your
quick long okay random question sorry asked brain fried memory test forget ask remind remember
""".split())


@pytest.fixture(scope="module")
def data():
    return {seed: paraphrase.generate(seed) for seed in SEEDS}


def users(data):
    for seed in SEEDS:
        yield from data[seed]


def content_words(text: str) -> set[str]:
    """Lower-cased words of three letters or more, not stop words, crudely stemmed."""
    out = set()
    for word in re.findall(r"[a-z0-9']+", text.lower()):
        word = word.strip("'")
        if word.endswith("'s"):
            word = word[:-2]
        if len(word) > 4 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        if len(word) >= 3 and word not in STOP:
            out.add(word)
    return out


def test_module_api():
    assert paraphrase.NAME == "paraphrase"
    assert isinstance(paraphrase.DESCRIPTION, str) and paraphrase.DESCRIPTION
    assert "\n" not in paraphrase.DESCRIPTION


def test_deterministic_for_a_seed():
    assert paraphrase.generate(3) == paraphrase.generate(3)
    assert paraphrase.generate(3, users=2) == paraphrase.generate(3)[:2]
    assert paraphrase.generate(3) != paraphrase.generate(4)


def test_sizes(data):
    for seed in SEEDS:
        got = data[seed]
        assert len(got) == 5
        assert [u.user_id for u in got] == [f"paraphrase-{seed}-{n:02d}" for n in range(5)]
    assert len(paraphrase.generate(1, users=2)) == 2
    assert len(paraphrase.generate(1, users=9)) == 9
    for user in users(data):
        sessions = sorted({t.session for t in user.turns})
        assert 3 <= len(sessions) <= 5
        assert sessions == list(range(1, len(sessions) + 1))
        kinds = [q.kind for q in user.questions]
        assert len(kinds) == 20
        assert kinds.count("memory") == 16
        assert kinds.count("unanswerable") == 4


def test_roles_alternate_and_indexes(data):
    for user in users(data):
        for s in sorted({t.session for t in user.turns}):
            turns = [t for t in user.turns if t.session == s]
            assert len(turns) >= 4
            assert [t.index for t in turns] == list(range(len(turns)))
            for t in turns:
                assert t.role == ("user" if t.index % 2 == 0 else "assistant")
            assert turns[-1].role == "assistant"
        # turns are stored in order
        assert [(t.session, t.index) for t in user.turns] == sorted((t.session, t.index) for t in user.turns)


def test_dates_increase(data):
    for user in users(data):
        by_session = {}
        for t in user.turns:
            assert re.fullmatch(r"202[345]-\d\d-\d\dT\d\d:\d\d", t.date)
            by_session.setdefault(t.session, set()).add(t.date)
        dates = []
        for s in sorted(by_session):
            assert len(by_session[s]) == 1
            dates.append(next(iter(by_session[s])))
        assert dates == sorted(dates) and len(set(dates)) == len(dates)
        for a, b in zip(dates, dates[1:], strict=False):
            assert a[:10] != b[:10]  # at least a day apart


def test_values_occur_in_content(data):
    for user in users(data):
        for t in user.turns:
            for v in t.values:
                assert v and v in t.content, (v, t.content)
            if t.role == "assistant":
                assert not t.facts
        for q in user.questions:
            for v in q.values:
                assert v in q.text


def test_questions_valid(data):
    for user in users(data):
        keys = [q.key for q in user.questions]
        assert len(set(keys)) == len(keys)
        facts = [q.fact for q in user.questions]
        assert len(set(facts)) == len(facts)
        for q in user.questions:
            assert q.user_id == user.user_id
            assert q.kind in base.KINDS
            assert q.text.strip() and q.fact
            for a in q.answers + q.stale:
                assert not base.names(q.text, a), (q.text, a)
            if q.kind == "unanswerable":
                assert not q.answers and not q.evidence and not q.stale
            else:
                assert q.answers and q.evidence
                for s in q.stale:
                    assert not any(base.names(s, a) or base.names(a, s) for a in q.answers)


def test_evidence_names_an_answer(data):
    for user in users(data):
        by_pos = {(t.session, t.index): t for t in user.turns}
        for q in user.questions:
            for pos in q.evidence:
                turn = by_pos[pos]
                assert turn.role == "user"
                assert q.fact in turn.facts
                assert any(base.names(turn.content, a) for a in q.answers), (q.text, turn.content)


def test_stale_named_earlier(data):
    seen = 0
    for user in users(data):
        by_pos = {(t.session, t.index): t for t in user.turns}
        for q in user.questions:
            if not q.stale:
                continue
            seen += 1
            first = min(q.evidence)
            earlier = [t for t in user.turns if t.role == "user" and q.fact in t.facts
                       and (t.session, t.index) < first]
            assert earlier
            for s in q.stale:
                assert any(base.names(t.content, s) for t in earlier), (s, q.text)
            # the earlier statement does not name the current value
            for t in earlier:
                assert not any(base.names(t.content, a) for a in q.answers)
            assert by_pos[first].session > min(t.session for t in earlier)
    assert seen >= 10


def test_unanswerable_never_stated(data):
    for user in users(data):
        stated = [f for t in user.turns for f in t.facts]
        for q in user.questions:
            if q.kind == "unanswerable":
                assert q.fact not in stated


def test_answers_only_where_the_fact_is(data):
    """An answer is named only in turns about that fact (or the assistant's echo of one):
    nothing else in the conversation could be mistaken for it."""
    for user in users(data):
        for q in user.questions:
            if q.kind != "memory":
                continue
            for k, t in enumerate(user.turns):
                if not any(base.names(t.content, a) for a in q.answers):
                    continue
                owner = t if t.role == "user" else user.turns[k - 1]
                assert q.fact in owner.facts, (q.answers, t.content)


def test_every_stated_fact_has_one_value(data):
    for user in users(data):
        for q in user.questions:
            if q.kind != "memory":
                continue
            turns = [t for t in user.turns if q.fact in t.facts]
            assert turns
            last = max(turns, key=lambda t: (t.session, t.index))
            assert (last.session, last.index) in q.evidence


def test_paraphrased(data):
    """Questions share few content words with the turn that states the fact."""
    total = overlapping = 0
    for user in users(data):
        by_pos = {(t.session, t.index): t for t in user.turns}
        for q in user.questions:
            if q.kind != "memory":
                continue
            masked = by_pos[q.evidence[0]].content
            shared = content_words(q.text) & content_words(masked)
            shared -= content_words(" ".join(q.answers))
            total += 1
            assert len(shared) <= 1, (q.text, masked, shared)
            overlapping += bool(shared)
    assert overlapping / total < 0.15


def test_distractors_share_question_words(data):
    """For a good share of questions some other turn shares more words with the question than
    the evidence does (the keyword trap), and most unanswerable questions have a near miss."""
    trapped = total = 0
    for user in users(data):
        by_pos = {(t.session, t.index): t for t in user.turns}
        for q in user.questions:
            words = content_words(q.text)
            best_other = max(len(words & content_words(t.content)) for t in user.turns
                             if t.role == "user" and (t.session, t.index) not in q.evidence)
            own = max((len(words & content_words(by_pos[p].content)) for p in q.evidence), default=0)
            total += 1
            trapped += best_other > own
    assert trapped / total > 0.25


def test_distractor_turns_present(data):
    for user in users(data):
        others = [t for t in user.turns if t.role == "user" and t.values and not t.facts]
        assert len(others) >= 4


def test_all_templates_render():
    for spec in paraphrase.SPECS:
        fields = {}
        for key, slot in zip("vw", spec.slots, strict=False):
            fields.update(paraphrase._fields(key, slot.pool[0][0]))
        fields.update(paraphrase._fields("old", spec.slots[0].pool[1][0]))
        for user, replies in spec.says + spec.others + spec.moves:
            for template in (user,) + replies:
                text, values = paraphrase._render(template, fields)
                assert "{" not in text
                if template == user:
                    assert values
        for slot in spec.slots:
            for entry in slot.pool:
                assert entry[0] in entry[1]
            for ask in slot.asks:
                assert "{" not in ask
    for user, reply in paraphrase.SMALL_TALK:
        for name in [n for _, n, _, _ in Formatter().parse(user + reply) if n]:
            assert name in paraphrase.FILLER_POOLS


def test_no_global_random(monkeypatch):
    import random

    def boom(*args, **kwargs):
        raise AssertionError("global random used")

    for name in ("random", "randint", "choice", "shuffle", "sample", "randrange"):
        monkeypatch.setattr(random, name, boom)
    assert paraphrase.generate(5, users=2)

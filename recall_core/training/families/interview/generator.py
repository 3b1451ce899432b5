"""One interview-family user: the facts drawn, told over dated sessions as short answers to the
assistant's questions (with changes, near misses and declines), and the questions asked afterwards.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from recall_core.training.families.base import Question, Turn, User
from recall_core.training.families.interview.chat import (
    CLOSE_ASSISTANT,
    CLOSE_USER,
    GREET_ASSISTANT,
    GREET_USER,
    SMALL_TALK,
    _question_text,
)
from recall_core.training.families.interview.declines import _DECLINE_PREFIX, DECLINE_KEYS, DECLINES
from recall_core.training.families.interview.kind import Kind
from recall_core.training.families.interview.kinds import CHANGEABLE, KIND_KEYS, KINDS, WITH_RELS
from recall_core.training.families.interview.text import _bases, _fill, _normal, _usable, _value_slots
from recall_core.training.families.interview.values import APPOINTMENTS, SPECIES, WEEKDAYS, Val

QUESTIONS_PER_USER = 20
UNANSWERABLE_PER_USER = 4
MEMORY_PER_USER = QUESTIONS_PER_USER - UNANSWERABLE_PER_USER


# -- one user -------------------------------------------------------------------------------------


class _Conversation:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.turns: list[Turn] = []
        self.session = 0
        self.index = 0
        self.date = ""
        self.stated: dict[str, list[tuple[Val, tuple[int, int]]]] = {}

    def start(self, date: str) -> None:
        self.session += 1
        self.index = 0
        self.date = date

    def add(self, role: str, tpl: str, slots: dict[str, str] | None = None,
            fact: str = "", val: Val | None = None) -> tuple[int, int]:
        text, values = _fill(tpl, slots or {})
        where = (self.session, self.index)
        self.turns.append(Turn(role=role, content=text, session=self.session, date=self.date,
                               index=self.index, facts=(fact,) if fact else (), values=values))
        self.index += 1
        if fact:
            assert val is not None
            self.stated.setdefault(fact, []).append((val, where))
        return where

    def reply(self, options, slots: dict[str, str], have: set[str]) -> None:
        """An assistant reply from ``options`` using only slots the user just said."""
        choice = self.rng.choice(_usable(options, have))
        if isinstance(choice, tuple):
            self.add("assistant", choice[0], slots)
            if len(choice) > 1 and choice[1]:
                self.add("user", choice[1])
                self.add("assistant", choice[2])
        else:
            self.add("assistant", choice, slots)


def _aux_slots(kind: Kind, rng: random.Random) -> dict[str, str]:
    if kind.aux == "pet":
        return {"sp": rng.choice(SPECIES)}
    if kind.aux == "appt":
        return {"appt": rng.choice(APPOINTMENTS), "day": rng.choice(WEEKDAYS)}
    return {}


def _say_fact(conv: _Conversation, kind: Kind, fact: str, val: Val, aux: dict[str, str],
              interview: bool) -> None:
    """The user's own fact, as an answer to the assistant's question or said outright."""
    rng = conv.rng
    slots = dict(aux)
    slots.update(_value_slots(val, rng))
    have = set(aux) | {"v"} | ({"f"} if val.field else set())
    if interview:
        opener, asks = rng.choice(kind.opener)
        conv.add("user", opener, slots)
        conv.add("assistant", rng.choice(asks), slots)
        tpl = rng.choice(_usable(kind.short, have))
        conv.add("user", tpl, slots, fact, val)
        conv.reply(kind.ack, slots, _bases(tpl) | _bases(opener))
    else:
        user, assistant = rng.choice(kind.state)
        conv.add("user", user, slots, fact, val)
        conv.add("assistant", assistant, slots)


def _say_change(conv: _Conversation, kind: Kind, fact: str, old: Val, val: Val,
                aux: dict[str, str], interview: bool) -> None:
    rng = conv.rng
    slots = dict(aux)
    slots.update(_value_slots(val, rng))
    slots.update(_value_slots(old, rng, "old"))
    if interview:
        opener, asks = rng.choice(kind.ch_open)
        conv.add("user", opener, slots)
        conv.add("assistant", rng.choice(asks), slots)
        tpl = rng.choice(kind.ch_short)
        conv.add("user", tpl, slots, fact, val)
        conv.reply(kind.ch_ack, slots, (_bases(tpl) | _bases(opener)) - {"old"})
    else:
        user, assistant = rng.choice(kind.ch_state)
        conv.add("user", user, slots, fact, val)
        conv.add("assistant", assistant, slots)


def _say_other(conv: _Conversation, kind: Kind, fact: str, rel: str, val: Val,
               aux: dict[str, str], interview: bool) -> None:
    """The same kind of fact about someone else (a near-miss distractor)."""
    rng = conv.rng
    slots = dict(aux)
    slots["rel"] = rel
    slots.update(_value_slots(val, rng))
    if interview and kind.d_open:
        opener, asks = rng.choice(kind.d_open)
        conv.add("user", opener, slots)
        conv.add("assistant", rng.choice(asks), slots)
        tpl = rng.choice(kind.d_short)
        conv.add("user", tpl, slots, fact, val)
        conv.reply(kind.d_ack, slots, _bases(tpl) | _bases(opener))
    else:
        user, assistant = rng.choice(kind.d_state)
        conv.add("user", user, slots, fact, val)
        conv.add("assistant", assistant, slots)


def _say_decline(conv: _Conversation, topic: str) -> None:
    rng = conv.rng
    spec = DECLINES[topic]
    opener, ask, advice = rng.choice(spec["scripts"])
    conv.add("user", opener)
    conv.add("assistant", ask)
    conv.add("user", rng.choice(spec["declines"]))
    conv.add("assistant", f"{rng.choice(_DECLINE_PREFIX)} {advice}")


class _Values:
    """Draws values so that no two values of one user name each other (whole words)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.taken: list[str] = []

    def clash(self, val: Val) -> bool:
        for a in val.answers:
            na = _normal(a)
            for t in self.taken:
                if na in t or t in na:
                    return True
        return False

    def draw(self, pool: tuple[Val, ...]) -> Val:
        for _ in range(500):
            val = self.rng.choice(pool)
            if not self.clash(val):
                self.taken.extend(_normal(a) for a in val.answers)
                return val
        raise RuntimeError("value pool exhausted")


def _session_dates(rng: random.Random, n: int) -> list[str]:
    when = datetime(2023, 1, 1) + timedelta(days=rng.randint(0, 700))
    out = []
    for _ in range(n):
        when = when.replace(hour=rng.randint(7, 22), minute=rng.randint(0, 59))
        out.append(when.strftime("%Y-%m-%dT%H:%M"))
        when += timedelta(days=rng.randint(2, 40))
    return out


def _rel_id(rel: str) -> str:
    return rel.replace(" ", "_")


def _user(seed: int, n: int) -> User:
    rng = random.Random(seed * 1_000_003 + n)
    uid = f"interview-{seed}-{n:02d}"
    values = _Values(rng)
    n_sessions = rng.randint(3, 5)

    # Which facts this user gives.
    order = list(KIND_KEYS)
    rng.shuffle(order)
    n_own = rng.randint(12, 14)
    own = order[:n_own]
    missing = order[n_own:]
    n_other_q = MEMORY_PER_USER - n_own

    own_aux = {k: _aux_slots(KINDS[k], rng) for k in own}
    changing = [k for k in own if k in CHANGEABLE]
    rng.shuffle(changing)
    changing = changing[:rng.randint(2, 3)]
    chains: dict[str, list[Val]] = {}
    for k in own:
        length = 1
        if k in changing:
            length = 3 if (n_sessions >= 4 and k == changing[0] and rng.random() < 0.4) else 2
        chains[k] = [values.draw(KINDS[k].pool) for _ in range(length)]

    # Near-miss facts about other people: some for kinds the user also has, some not.
    n_others = n_other_q + rng.randint(1, 2)
    others: list[tuple[str, str]] = []  # (kind, rel)
    candidates = [k for k in order if k in WITH_RELS]
    while len(others) < n_others:
        k = rng.choice(candidates)
        used = {r for kk, r in others if kk == k}
        free = [r for r in KINDS[k].rels if r not in used]
        if len(free) < 2:  # keep a relation free for a near-miss question
            continue
        others.append((k, rng.choice(free)))
    other_vals = {o: values.draw(KINDS[o[0]].pool) for o in others}
    other_aux = {o: _aux_slots(KINDS[o[0]], rng) for o in others}

    declined = rng.sample(DECLINE_KEYS, rng.randint(1, 2))

    # Schedule everything over the sessions.
    events: list[tuple[int, tuple]] = []
    for k in own:
        chain = chains[k]
        if len(chain) == 1:
            events.append((rng.randint(1, n_sessions), ("own", k)))
            continue
        sessions = sorted(rng.sample(range(1, n_sessions + 1), len(chain)))
        events.append((sessions[0], ("own", k)))
        for step, s in enumerate(sessions[1:], start=1):
            events.append((s, ("change", k, step)))
    for o in others:
        events.append((rng.randint(1, n_sessions), ("other", o)))
    for topic in declined:
        events.append((rng.randint(1, n_sessions), ("decline", topic)))
    chats = list(range(len(SMALL_TALK)))
    rng.shuffle(chats)
    for s in range(1, n_sessions + 1):
        for _ in range(rng.randint(1, 2)):
            events.append((s, ("chat", chats.pop())))

    conv = _Conversation(rng)
    for s, date in enumerate(_session_dates(rng, n_sessions), start=1):
        conv.start(date)
        conv.add("user", rng.choice(GREET_USER))
        conv.add("assistant", rng.choice(GREET_ASSISTANT))
        todays = [e for es, e in events if es == s]
        rng.shuffle(todays)
        for e in todays:
            if e[0] == "own":
                k = e[1]
                _say_fact(conv, KINDS[k], k, chains[k][0], own_aux[k], rng.random() < 0.75)
            elif e[0] == "change":
                k, step = e[1], e[2]
                _say_change(conv, KINDS[k], k, chains[k][step - 1], chains[k][step], own_aux[k],
                            rng.random() < 0.65)
            elif e[0] == "other":
                k, rel = e[1]
                _say_other(conv, KINDS[k], f"{k}:{_rel_id(rel)}", rel, other_vals[e[1]],
                           other_aux[e[1]], rng.random() < 0.55)
            elif e[0] == "decline":
                _say_decline(conv, e[1])
            else:
                u, a = SMALL_TALK[e[1]]
                conv.add("user", u)
                conv.add("assistant", a)
        if rng.random() < 0.7:
            conv.add("user", rng.choice(CLOSE_USER))
            conv.add("assistant", rng.choice(CLOSE_ASSISTANT))

    # Questions.
    drafts: list[dict] = []
    for k in own:
        kind = KINDS[k]
        current = chains[k][-1]
        _, where = conv.stated[k][-1]
        stale: list[str] = []
        for old in chains[k][:-1]:
            stale.extend(a for a in old.answers if a not in stale)
        text, qvals = _question_text(rng, kind.q, kind.qi, own_aux[k])
        drafts.append(dict(fact=k, text=text, kind="memory", answers=current.answers,
                           stale=tuple(stale), evidence=(where,), values=qvals))
    asked_others = rng.sample(others, n_other_q)
    for o in asked_others:
        k, rel = o
        kind = KINDS[k]
        fact = f"{k}:{_rel_id(rel)}"
        _, where = conv.stated[fact][-1]
        slots = dict(other_aux[o], rel=rel)
        text, qvals = _question_text(rng, kind.rq, kind.rqi, slots)
        drafts.append(dict(fact=fact, text=text, kind="memory", answers=other_vals[o].answers,
                           evidence=(where,), values=qvals))

    for topic in declined:
        spec = DECLINES[topic]
        text, qvals = _question_text(rng, spec["q"], spec["qi"], {})
        drafts.append(dict(fact=f"declined:{topic}", text=text, kind="unanswerable", values=qvals))

    # Near misses: the same kind of fact about a relation never mentioned for it, or the user's
    # own fact of a kind only mentioned about someone else.
    near: list[tuple[str, dict, tuple, tuple]] = []
    other_kinds = [k for k, _ in others]
    for k in dict.fromkeys(other_kinds):
        used = {r for kk, r in others if kk == k}
        rel = rng.choice([r for r in KINDS[k].rels if r not in used])
        aux = next(other_aux[o] for o in others if o[0] == k)
        near.append((f"{k}:{_rel_id(rel)}", dict(aux, rel=rel), KINDS[k].rq, KINDS[k].rqi))
        if k in missing:
            near.append((k, dict(aux), KINDS[k].q, KINDS[k].qi))
    for k in own:
        if KINDS[k].rels and k not in other_kinds:
            rel = rng.choice(KINDS[k].rels)
            near.append((f"{k}:{_rel_id(rel)}", dict(own_aux[k], rel=rel), KINDS[k].rq,
                         KINDS[k].rqi))
    rng.shuffle(near)
    near.sort(key=lambda x: 0 if x[0] in missing or x[0].split(":")[0] in other_kinds else 1)
    seen_facts = set()
    for fact, slots, q, qi in near:
        if len(drafts) >= QUESTIONS_PER_USER:
            break
        if fact in seen_facts or fact in conv.stated:
            continue
        seen_facts.add(fact)
        text, qvals = _question_text(rng, q, qi, slots)
        drafts.append(dict(fact=fact, text=text, kind="unanswerable", values=qvals))
    for k in missing:  # fallback, rarely needed
        if len(drafts) >= QUESTIONS_PER_USER:
            break
        if k in seen_facts:
            continue
        seen_facts.add(k)
        text, qvals = _question_text(rng, KINDS[k].q, KINDS[k].qi, _aux_slots(KINDS[k], rng))
        drafts.append(dict(fact=k, text=text, kind="unanswerable", values=qvals))

    rng.shuffle(drafts)
    questions = [Question(key=f"{uid}-q{j:02d}", user_id=uid, **d) for j, d in enumerate(drafts)]
    return User(user_id=uid, turns=conv.turns, questions=questions)


def generate(seed: int, users: int = 5) -> list[User]:
    """``users`` users, each with 3 to 5 sessions and ``QUESTIONS_PER_USER`` questions."""
    return [_user(seed, n) for n in range(users)]

"""One passing-family user: the facts chosen, placed in dated sessions with small talk and
distractors, and the questions asked afterwards.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timedelta

from recall_core.training.families.base import Question, Turn, User
from recall_core.training.families.passing.common import Ctx, Kind, Registry, _tidy, _words, fill
from recall_core.training.families.passing.filler import (
    CLOSE_ASSISTANT,
    CLOSE_USER,
    FOLLOW_UPS,
    GREET_ASSISTANT,
    GREET_USER,
    OPENERS,
    SMALL_TALK,
    TAILS,
    _question_text,
)
from recall_core.training.families.passing.kinds import KINDS
from recall_core.training.families.passing.unanswerable import UNANS, Unans

MIN_SESSIONS, MAX_SESSIONS = 3, 5
MIN_FACTS, MAX_FACTS = 14, 17
UNANSWERABLE_PER_USER = 4
MIN_WORDS, MAX_WORDS = 60, 200

# -- generation -------------------------------------------------------------------------------------


@dataclass
class Item:
    """One user/assistant exchange before it is placed in a session."""

    user: str
    assistant: str
    user_values: list[str]
    assistant_values: list[str]
    facts: tuple[str, ...] = ()
    tag: tuple = ()  # ("fact", kind_key, version) for fact turns


def _fact_item(ctx: Ctx, kind: Kind, slots: dict, change: bool) -> Item:
    rng = ctx.rng
    options = kind.change if change else kind.bodies
    options = [b for b in options if b[2] is None or b[2](slots)]
    user_t, asst_t, _ = rng.choice(options)
    near_text, near_values = "", []
    if kind.near and kind.near_make and rng.random() < 0.35:
        near_slots = kind.near_make(ctx, slots)
        near_text, near_values = fill(rng.choice(kind.near), near_slots)
    body, values = fill(user_t, {**slots, "_near": near_text})
    values = values + [v for v in near_values if v not in values]
    body = _tidy(body)
    if _words(body) < MIN_WORDS or rng.random() < 0.4:
        body = rng.choice(OPENERS) + " " + body
    tails = rng.sample(TAILS, len(TAILS))
    while tails and _words(body) < MIN_WORDS:
        body = body + " " + tails.pop()
    if tails and rng.random() < 0.2 and _words(body) < MAX_WORDS - 30:
        body = body + " " + tails.pop()
    ack = ""
    ack_values: list[str] = []
    if kind.acks and "{_ack}" in asst_t and rng.random() < 0.4:
        ack, ack_values = fill(rng.choice(kind.acks), slots)
    reply, r_values = fill(asst_t, {**slots, "_ack": ack})
    if rng.random() < 0.3:
        reply = reply + " " + rng.choice(FOLLOW_UPS)
    r_values = ack_values + [v for v in r_values if v not in ack_values]
    return Item(body, _tidy(reply), values, r_values, (slots["fact"],))


def _distractor_item(ctx: Ctx, u: Unans, slots: dict) -> Item:
    user_t, asst_t = ctx.rng.choice(u.distract)
    dslots = u.dmake(ctx, slots)
    text, values = fill(user_t, dslots)
    reply, r_values = fill(asst_t, dslots)
    return Item(_tidy(text), _tidy(reply), values, r_values)


def _choose_kinds(rng: random.Random) -> list[Kind]:
    count = rng.randint(MIN_FACTS, MAX_FACTS)
    pool = list(KINDS)
    rng.shuffle(pool)
    chosen: list[Kind] = []
    groups: list[str] = []
    for k in pool:
        if k.group and k.group in groups:
            continue
        chosen.append(k)
        if k.group:
            groups.append(k.group)
        if len(chosen) == count:
            break
    return chosen


def _session_dates(rng: random.Random, n: int) -> list[datetime]:
    start = datetime(2023, 1, 5) + timedelta(days=rng.randint(0, 820))
    dates = []
    day = start
    for _ in range(n):
        dates.append(day.replace(hour=rng.randint(7, 22), minute=rng.choice(range(0, 60, 1))))
        day = day + timedelta(days=rng.randint(2, 24))
    return dates


def _period(hour: int) -> str:
    return "morning" if hour < 12 else "afternoon" if hour < 18 else "evening"


def _make_user(seed: int, n: int) -> User:
    user_id = f"passing-{seed}-{n:02d}"
    rng = random.Random(f"passing/{seed}/{n}")
    ctx = Ctx(rng, Registry())
    kinds = _choose_kinds(rng)
    n_sessions = rng.randint(MIN_SESSIONS, MAX_SESSIONS)

    # facts and their versions
    first: dict[str, dict] = {}
    for k in kinds:
        first[k.key] = k.make(ctx)
    changeable = [k for k in kinds if k.change_make]
    n_change = min(len(changeable), rng.choice((1, 2, 2, 3)))
    changed = rng.sample(changeable, n_change)
    changed_keys = [k.key for k in changed]
    later: dict[str, dict] = {k.key: k.change_make(ctx, first[k.key]) for k in changed}
    ctx.chosen = {k: (later.get(k) or first[k]) for k in first}
    if "job" in first or "employer" in first:
        ctx.chosen["work"] = first.get("job") or first.get("employer")

    # schedule: (session, item)
    schedule: list[tuple[int, Item]] = []
    order = list(kinds)
    rng.shuffle(order)
    for i, k in enumerate(order):
        if k.key in changed_keys:
            s1 = rng.randint(1, n_sessions - 1)
            s2 = rng.randint(s1 + 1, n_sessions)
            item = _fact_item(ctx, k, first[k.key], change=False)
            item.tag = ("fact", k.key, 1)
            schedule.append((s1, item))
            item2 = _fact_item(ctx, k, later[k.key], change=True)
            item2.tag = ("fact", k.key, 2)
            schedule.append((s2, item2))
        else:
            item = _fact_item(ctx, k, first[k.key], change=False)
            item.tag = ("fact", k.key, 1)
            schedule.append((1 + i % n_sessions, item))

    # unanswerable questions, preferring those next to a stated fact
    stated_facts = [first[k]["fact"] for k in first] + [later[k]["fact"] for k in later]
    near_u = [u for u in UNANS if u.needs is not None and u.needs in ctx.chosen]
    free_u = [u for u in UNANS if u.needs is None]
    rng.shuffle(near_u)
    rng.shuffle(free_u)
    picked: list[tuple[Unans, dict]] = []
    want_near = rng.randint(2, UNANSWERABLE_PER_USER)
    for pool, limit in ((near_u, want_near), (free_u + near_u, UNANSWERABLE_PER_USER)):
        for u in pool:
            if len(picked) >= limit:
                break
            if any(u is p[0] for p in picked):
                continue
            slots = u.make(ctx, ctx.chosen)
            if slots["fact"] in stated_facts or any(slots["fact"] == p[1]["fact"] for p in picked):
                continue
            picked.append((u, slots))
    for u, slots in picked:
        if u.distract and rng.random() < 0.8:
            schedule.append((rng.randint(1, n_sessions), _distractor_item(ctx, u, slots)))

    # small talk
    for ut, at in rng.sample(SMALL_TALK, rng.randint(n_sessions, n_sessions + 3)):
        schedule.append((rng.randint(1, n_sessions), Item(ut, at, [], [])))

    # build sessions
    user = User(user_id)
    dates = _session_dates(rng, n_sessions)
    where: dict[tuple[str, int], tuple[int, int]] = {}
    for s in range(1, n_sessions + 1):
        items = [it for (ss, it) in schedule if ss == s]
        rng.shuffle(items)
        when = dates[s - 1]
        period = _period(when.hour)
        greet_u = rng.choice(GREET_USER[period] + GREET_USER["any"])
        greet_a = rng.choice(GREET_ASSISTANT[period] + GREET_ASSISTANT["any"])
        pairs = [Item(greet_u, greet_a, [], [])] + items
        if rng.random() < 0.6:
            pairs.append(Item(rng.choice(CLOSE_USER), rng.choice(CLOSE_ASSISTANT), [], []))
        idx = 0
        for it in pairs:
            stamp = when.strftime("%Y-%m-%dT%H:%M")
            user.turns.append(Turn("user", it.user, s, stamp, idx, it.facts, tuple(it.user_values)))
            if it.tag:
                where[(it.tag[1], it.tag[2])] = (s, idx)
            when = when + timedelta(minutes=rng.randint(1, 3))
            stamp = when.strftime("%Y-%m-%dT%H:%M")
            user.turns.append(Turn("assistant", it.assistant, s, stamp, idx + 1, (), tuple(it.assistant_values)))
            when = when + timedelta(minutes=rng.randint(1, 4))
            idx += 2

    # questions
    questions: list[tuple[str, str, tuple, tuple, tuple, list[str]]] = []
    for k in kinds:
        cur = later.get(k.key) or first[k.key]
        version = 2 if k.key in later else 1
        stale = first[k.key]["answers"] if k.key in later else ()
        text, values = _question_text(rng, k.q, k.c, k.n, cur)
        questions.append(("memory", cur["fact"], tuple(cur["answers"]), tuple(stale),
                          (where[(k.key, version)],), values, text))
    for u, slots in picked:
        text, values = _question_text(rng, u.q, u.c, u.n, slots)
        questions.append(("unanswerable", slots["fact"], (), (), (), values, text))
    rng.shuffle(questions)
    for i, (kind, fact, answers, stale, evidence, values, text) in enumerate(questions):
        user.questions.append(Question(
            key=f"{user_id}-q{i:02d}", user_id=user_id, fact=fact, text=text, kind=kind,
            answers=answers, stale=stale, evidence=evidence, values=tuple(values)))
    return user


def generate(seed: int, users: int = 5) -> list[User]:
    """``users`` users, each with 3-5 sessions, 14-17 facts said in passing and about 20 questions."""
    return [_make_user(seed, n) for n in range(users)]

"""Circle-family users: friends with news, the sessions that tell it, the questions asked later."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from recall_core.training.families.base import Question, Turn, User
from recall_core.training.families.circle.chat import BYE, BYE_REPLY, GREET, GREET_REPLY, SMALL
from recall_core.training.families.circle.events import ACKS, KINDS, NAMES, WRAP, Kind
from recall_core.training.families.news import aliases, next_value, told_in_order

MEMORY_PER_USER = 12
UNANSWERABLE_PER_USER = 4
_PRONOUNS = {"she": ("she", "her", "her"), "he": ("he", "him", "his")}


@dataclass
class _Friend:
    name: str
    pronoun: str
    news: dict[str, list[str]] = field(default_factory=dict)  # kind -> values, oldest first
    said: dict[str, tuple[int, int]] = field(default_factory=dict)  # kind -> the turn stating the current value


def _capitalised(text: str) -> str:
    """Sentence starts capitalised (a pronoun or possessive filled in at the start of a sentence)."""
    text = text[:1].upper() + text[1:]
    return re.sub(r"([.!?] )([a-z])", lambda m: m.group(1) + m.group(2).upper(), text)


def _fill(template: str, friend: _Friend, value: str = "") -> tuple[str, tuple[str, ...]]:
    p, o, ps = _PRONOUNS[friend.pronoun]
    text = _capitalised(template.format(n=friend.name, v=value, p=p, o=o, ps=ps))
    return text, tuple(v for v in (friend.name, value) if v)


def _one_user(rng: random.Random, user_id: str) -> User:
    friends = [_Friend(n, p) for n, p in rng.sample(NAMES, rng.randint(4, 5))]
    kinds = list(KINDS)
    news: list[tuple[_Friend, Kind]] = []
    for friend in friends:  # every friend has two or three kinds of news; a kind belongs to one friend
        for kind in rng.sample(kinds, min(len(kinds), rng.randint(2, 3))):
            kinds.remove(kind)
            news.append((friend, kind))
    friends = [f for f in friends if any(f is g for g, _ in news)]
    rng.shuffle(news)
    changes = set(rng.sample(range(len(news)), min(2, len(news))))

    turns: list[Turn] = []
    when = datetime(2024, 1, 8, 9, 0) + timedelta(days=rng.randrange(300))
    sessions = rng.randint(3, 4)
    per = -(-len(news) // sessions)
    order = told_in_order(news, changes, per)  # (friend, kind, a change): a change about a session after its news

    def add(role: str, content: str, session: int, facts: tuple[str, ...] = (), values: tuple[str, ...] = ()) -> None:
        index = sum(1 for t in turns if t.session == session)
        stamp = (when + timedelta(minutes=3 * index)).strftime("%Y-%m-%dT%H:%M")
        turns.append(Turn(role, content, session, stamp, index, facts, values))

    size = -(-len(order) // sessions)
    chunks = [order[s * size : (s + 1) * size] for s in range(sessions)]
    for s, chunk in enumerate(chunks, start=1):
        if s > 1:
            when += timedelta(days=rng.randint(2, 12), hours=rng.randint(0, 8))
        add("user", rng.choice(GREET), s)
        add("assistant", rng.choice(GREET_REPLY), s)
        for friend, kind, changed in chunk:
            value, template = next_value(kind, friend.news.setdefault(kind.key, []), changed, rng)
            text, values = _fill(template, friend, value)
            add("user", text, s, (f"{friend.name.lower()}.{kind.key}",), values)
            friend.said[kind.key] = (s, turns[-1].index)
            ack, ack_values = _fill(rng.choice(ACKS), friend)
            add("assistant", ack, s, (), ack_values)
            if rng.random() < 0.4:
                said, reply = rng.choice(SMALL)
                add("user", said, s)
                add("assistant", reply, s)
        add("user", rng.choice(BYE), s)
        add("assistant", rng.choice(BYE_REPLY), s)
    return User(user_id, turns, _questions(rng, user_id, friends, news))


def _question(rng: random.Random, user_id: str, friend: _Friend, kind: Kind, kind_of: str,
              answers: tuple[str, ...] = (), stale: tuple[str, ...] = (),
              evidence: tuple[tuple[int, int], ...] = ()) -> Question:
    asked, _ = _fill(rng.choice(kind.ask), friend)
    wrapped = rng.choice(WRAP)
    lowered = ": {q}" in wrapped  # "Quick one about Noor: what ..."
    text = wrapped.format(q=asked[:1].lower() + asked[1:] if lowered else asked, n=friend.name)
    return Question(key=user_id, user_id=user_id,  # numbered once the questions are shuffled (_questions)
                    fact=f"{friend.name.lower()}.{kind.key}", text=text,
                    kind=kind_of, answers=answers, stale=stale, evidence=evidence, values=(friend.name,))


def _questions(rng: random.Random, user_id: str, friends: list[_Friend], news: list[tuple[_Friend, Kind]]) -> list[Question]:
    out: list[Question] = []
    for friend, kind in rng.sample(news, min(MEMORY_PER_USER, len(news))):
        values = friend.news[kind.key]
        out.append(_question(rng, user_id, friend, kind, "memory", answers=aliases(values[-1]),
                             stale=tuple(a for v in values[:-1] if v != values[-1] for a in aliases(v)),
                             evidence=(friend.said[kind.key],)))  # fmt: skip
    # unanswerable: another friend's kind of news asked of this one (a near miss), or a friend never mentioned
    told = {kind.key for _, kind in news}
    for _ in range(UNANSWERABLE_PER_USER):
        friend = rng.choice(friends)
        if rng.random() < 0.75:
            kind = next(k for k in rng.sample(KINDS, len(KINDS)) if k.key in told and k.key not in friend.news)
        else:
            name, pronoun = rng.choice([n for n in NAMES if n[0] not in {f.name for f in friends}])
            friend, kind = _Friend(name, pronoun), rng.choice(KINDS)
        out.append(_question(rng, user_id, friend, kind, "unanswerable"))
    rng.shuffle(out)
    return [replace(q, key=f"{user_id}#{i}") for i, q in enumerate(out)]  # keys in the order asked


def generate(seed: int, users: int = 5) -> list[User]:
    """``users`` users, each with 3 or 4 sessions of news about 4 or 5 friends, and up to 16 questions."""
    master = random.Random(seed)
    return [_one_user(random.Random(master.randrange(2**63)), f"circle-{seed}-{n:02d}") for n in range(users)]

"""Duo-family users: two friends, the sessions in which they tell each other their news, the questions asked later."""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from recall_core.training.families.base import Question, Turn, User
from recall_core.training.families.duo.chat import BYE, BYE_REPLY, GREET, GREET_REPLY, REACT, SMALL
from recall_core.training.families.duo.deeds import KINDS, NAMES, SYSTEMS, Kind
from recall_core.training.families.news import aliases, next_value, told_in_order

MEMORY_PER_USER = 10
UNANSWERABLE_PER_USER = 8
#: Of unanswerable questions: the other friend's kind of news asked of this one (a near miss).
NEAR_MISS_SHARE = 0.75


@dataclass
class _Friend:
    name: str
    role: str  # how the memory writer takes their turns: "user" (the first) or "assistant"
    news: dict[str, list[str]] = field(default_factory=dict)  # kind -> values, oldest first
    said: dict[str, tuple[int, int]] = field(default_factory=dict)  # kind -> the turn stating the current value


def _fill(template: str, value: str = "", other: str = "", asked: str = "") -> tuple[str, tuple[str, ...]]:
    text = template.format(v=value, o=other, n=asked)
    text = text[:1].upper() + text[1:]
    return text, tuple(v for v in (value, other, asked) if v and (v in text))


def _one_user(rng: random.Random, user_id: str) -> User:
    first, second = rng.sample(NAMES, 2)
    friends = (_Friend(first, "user"), _Friend(second, "assistant"))
    kinds = list(KINDS)
    news: list[tuple[_Friend, Kind]] = []
    for friend in friends:  # three or four kinds of news each; a kind belongs to one friend only
        for kind in rng.sample(kinds, rng.randint(3, 4)):
            kinds.remove(kind)
            news.append((friend, kind))
    rng.shuffle(news)
    sessions = rng.randint(3, 4)
    per = -(-len(news) // sessions)
    order = told_in_order(news, rng.sample(range(len(news)), rng.randint(1, 2)), per)  # (friend, kind, a change)

    turns: list[Turn] = []
    when = datetime(2023, 3, 6, 19, 0) + timedelta(days=rng.randrange(400))

    def add(friend: _Friend, content: str, values: tuple[str, ...], session: int, facts: tuple[str, ...] = ()) -> None:
        index = sum(1 for t in turns if t.session == session)
        stamp = (when + timedelta(minutes=2 * index)).strftime("%Y-%m-%dT%H:%M")
        turns.append(Turn(friend.role, content, session, stamp, index, facts, values, speaker=friend.name))

    def other(friend: _Friend) -> _Friend:
        return friends[1] if friend is friends[0] else friends[0]

    size = -(-len(order) // sessions)
    for s in range(1, sessions + 1):
        if s > 1:
            when += timedelta(days=rng.randint(3, 20), hours=rng.randint(0, 6))
        opener = rng.choice(friends)
        add(opener, *_fill(rng.choice(GREET), other=other(opener).name), s)
        add(other(opener), rng.choice(GREET_REPLY), (), s)
        for friend, kind, changed in order[(s - 1) * size : s * size]:
            value, template = next_value(kind, friend.news.setdefault(kind.key, []), changed, rng)
            text, values = _fill(template, value, other(friend).name)
            add(friend, text, values, s, (f"{friend.name.lower()}.{kind.key}",))
            friend.said[kind.key] = (s, turns[-1].index)
            add(other(friend), *_fill(rng.choice(REACT), other=friend.name), s)
            if rng.random() < 0.35:
                said, reply = rng.choice(SMALL)
                talker = rng.choice(friends)
                add(talker, said, (), s)
                add(other(talker), reply, (), s)
        closer = rng.choice(friends)
        add(closer, rng.choice(BYE), (), s)
        add(other(closer), rng.choice(BYE_REPLY), (), s)
    systems = tuple(t.format(a=first, b=second) for t in SYSTEMS)
    return User(user_id, turns, _questions(rng, user_id, friends, news), systems=systems)


def _question(rng: random.Random, user_id: str, friend: _Friend, kind: Kind, kind_of: str, **fields: object) -> Question:
    text, values = _fill(rng.choice(kind.ask), asked=friend.name)
    return Question(key=user_id, user_id=user_id,  # numbered once the questions are shuffled (_questions)
                    fact=f"{friend.name.lower()}.{kind.key}", text=text, kind=kind_of, values=values,
                    **fields)  # type: ignore[arg-type]  # fmt: skip


def _questions(rng: random.Random, user_id: str, friends: tuple[_Friend, _Friend],
               news: list[tuple[_Friend, Kind]]) -> list[Question]:
    out: list[Question] = []
    for friend, kind in rng.sample(news, min(MEMORY_PER_USER, len(news))):
        values = friend.news[kind.key]
        out.append(_question(rng, user_id, friend, kind, "memory", answers=aliases(values[-1]),
                             stale=tuple(a for v in values[:-1] if v != values[-1] for a in aliases(v)),
                             evidence=(friend.said[kind.key],)))  # fmt: skip
    told = {kind.key for _, kind in news}
    asked: set[tuple[str, str]] = set()  # (name, kind) already asked: no question twice
    while len(out) < len(news[:MEMORY_PER_USER]) + UNANSWERABLE_PER_USER:
        if rng.random() < NEAR_MISS_SHARE:  # the other friend's news, asked of this one
            teller, kind = rng.choice(news)
            friend, decoys = (friends[1] if teller is friends[0] else friends[0]), (teller.news[kind.key][-1],)
        else:  # news neither of them told
            friend, kind, decoys = rng.choice(friends), rng.choice([k for k in KINDS if k.key not in told]), ()
        if (friend.name, kind.key) not in asked:
            asked.add((friend.name, kind.key))
            out.append(_question(rng, user_id, friend, kind, "unanswerable", decoys=decoys))
    rng.shuffle(out)
    return [replace(q, key=f"{user_id}#{i}") for i, q in enumerate(out)]  # keys in the order asked


def generate(seed: int, users: int = 5) -> list[User]:
    """``users`` users, each two friends' chats over 3 or 4 sessions, and up to 16 questions."""
    master = random.Random(seed)
    return [_one_user(random.Random(master.randrange(2**63)), f"duo-{seed}-{n:02d}") for n in range(users)]

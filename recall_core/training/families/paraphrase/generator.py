"""One paraphrase-family user: the topics chosen, the facts told over dated sessions (with changes,
near misses that share the question's words and small talk) and the questions asked afterwards.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache
from string import Formatter

from recall_core.training.families.base import Question, Turn, User, normal
from recall_core.training.families.paraphrase.chat import (
    CLOSINGS,
    CONNECTORS,
    FILLER_POOLS,
    GREETINGS,
    SMALL_TALK,
    WRAPPERS,
)
from recall_core.training.families.paraphrase.facts import P, Slot, Spec
from recall_core.training.families.paraphrase.specs import SPECS
from recall_core.training.families.paraphrase.text import _fields, _render

#: Questions per user: this many memory questions and this many unanswerable ones.
MEMORY_PER_USER = 16
UNANSWERABLE_PER_USER = 4
#: Sessions per user (inclusive range).
MIN_SESSIONS, MAX_SESSIONS = 3, 5


# -- generation ----------------------------------------------------------------------------------


@dataclass
class _Item:
    """One exchange to place in a session: a user turn and the assistant's reply."""

    session: int
    user: str
    assistant: str
    fields: dict[str, tuple[str, str]]
    facts: tuple[str, ...] = ()
    role: str = "filler"  # "say", "move", "other", "filler"
    spec: str = ""


@lru_cache(maxsize=1 << 16)
def _norm(text: str) -> str:
    return normal(text)


def names(text: str, value: str) -> bool:
    """``base.names``, cached."""
    return _norm(value) in _norm(text)


def _clash(a: str, b: str) -> bool:
    return names(a, b) or names(b, a)


class _Values:
    """Every value string used for one user, so that no two are confusable."""

    def __init__(self) -> None:
        self.taken: list[str] = []  # normalised

    def free(self, entry: tuple[str, tuple[str, ...]]) -> bool:
        for alias in entry[1]:
            a = _norm(alias)
            for t in self.taken:
                if a in t or t in a:
                    return False
        return True

    def take(self, entry: tuple[str, tuple[str, ...]]) -> None:
        self.taken.extend(_norm(alias) for alias in entry[1])

    def pick(self, rng: random.Random, pool) -> tuple[str, tuple[str, ...]] | None:
        options = [e for e in pool if self.free(e)]
        if not options:
            return None
        entry = rng.choice(options)
        self.take(entry)
        return entry


def _dates_for(rng: random.Random, count: int) -> list[str]:
    day = datetime(2023, 1, 1) + timedelta(days=rng.randint(0, 560))
    out = []
    for k in range(count):
        if k:
            day += timedelta(days=rng.randint(3, 35))
        stamp = day.replace(hour=rng.randint(7, 22), minute=rng.randrange(60))
        out.append(stamp.strftime("%Y-%m-%dT%H:%M"))
    return out


def _user(rng: random.Random, user_id: str) -> User:
    sessions = rng.randint(MIN_SESSIONS, MAX_SESSIONS)
    dates = _dates_for(rng, sessions)
    values = _Values()

    # Which topics this user talks about, until there are enough facts to ask about.
    order = list(SPECS)
    rng.shuffle(order)
    chosen: list[Spec] = []
    slots_count = 0
    for spec in order:
        if slots_count >= MEMORY_PER_USER:
            break
        if any(spec.name in c.excludes or c.name in spec.excludes for c in chosen):
            continue
        chosen.append(spec)
        slots_count += len(spec.slots)
    chosen_names = [c.name for c in chosen]

    current: dict[str, tuple[str, tuple[str, ...]]] = {}
    for spec in chosen:
        for slot in spec.slots:
            entry = values.pick(rng, slot.pool)
            assert entry is not None, slot.fid
            current[slot.fid] = entry

    # Facts that change later: one to three of the topics that have a way to change.
    movable = [s for s in chosen if s.moves]
    rng.shuffle(movable)
    changes: dict[str, tuple[str, tuple[str, ...]]] = {}
    for spec in movable[: rng.choice((1, 2, 2, 3))]:
        entry = values.pick(rng, spec.slots[0].pool)
        if entry is not None:
            changes[spec.name] = entry

    # Unanswerable questions: facts never stated, asked about near a distractor.
    candidates = []
    for spec in SPECS:
        if spec.name in chosen_names:
            continue
        for slot in spec.slots:
            if slot.open_ok and not any(b in chosen_names for b in slot.blocked_by):
                candidates.append((spec, slot))
    rng.shuffle(candidates)
    open_slots: list[tuple[Spec, Slot]] = []
    for spec, slot in candidates:
        if len(open_slots) == UNANSWERABLE_PER_USER:
            break
        if all(spec.name != s.name for s, _ in open_slots):
            open_slots.append((spec, slot))
    assert len(open_slots) == UNANSWERABLE_PER_USER

    items: list[_Item] = []

    def other_item(spec: Spec) -> None:
        fields: dict[str, tuple[str, str]] = {}
        for key, slot in zip("vw", spec.slots, strict=False):
            entry = values.pick(rng, slot.pool)
            if entry is None:
                return
            fields.update(_fields(key, entry[0]))
        user, replies = rng.choice(spec.others)
        items.append(_Item(rng.randint(1, sessions), user, rng.choice(replies), fields,
                           role="other", spec=spec.name))

    # What the user says about themselves, and how it changes.
    for spec in chosen:
        fields: dict[str, tuple[str, str]] = {}
        for key, slot in zip("vw", spec.slots, strict=False):
            fields.update(_fields(key, current[slot.fid][0]))
        user, replies = rng.choice(spec.says)
        facts = tuple(slot.fid for slot in spec.slots)
        if spec.name in changes:
            first = rng.randint(1, sessions - 1)
            items.append(_Item(first, user, rng.choice(replies), fields, facts, "say", spec.name))
            new = changes[spec.name]
            move_fields = _fields("v", new[0])
            move_fields.update(_fields("old", current[spec.slots[0].fid][0]))
            user, replies = rng.choice(spec.moves)
            items.append(_Item(rng.randint(first + 1, sessions), user, rng.choice(replies),
                               move_fields, facts, "move", spec.name))
        else:
            items.append(_Item(rng.randint(1, sessions), user, rng.choice(replies), fields,
                               facts, "say", spec.name))

    # Near misses: other people's versions of stated facts, and of the unanswerable ones.
    near = list(chosen)
    rng.shuffle(near)
    for spec in near[: rng.randint(6, 9)]:
        other_item(spec)
    for spec, _ in open_slots:
        if rng.random() < 0.85:
            other_item(spec)

    # Small talk and requests for help, one or two per session.
    talk = list(SMALL_TALK)
    rng.shuffle(talk)
    for session in range(1, sessions + 1):
        for _ in range(rng.randint(1, 2)):
            while talk:
                user, reply = talk.pop()
                keys = [n for _, n, _, _ in Formatter().parse(user + reply) if n]
                fields = {}
                ok = True
                for key in keys:
                    if key in fields:
                        continue
                    entry = values.pick(rng, [P(x) for x in FILLER_POOLS[key]])
                    if entry is None:
                        ok = False
                        break
                    fields[key] = (entry[0], entry[0])
                if ok:
                    items.append(_Item(session, user, reply, fields))
                    break

    # Lay the sessions out.
    turns: list[Turn] = []
    placed: dict[int, tuple[int, int]] = {}  # id(item) -> (session, index of the user turn)
    greetings = list(GREETINGS)
    rng.shuffle(greetings)
    for session in range(1, sessions + 1):
        date = dates[session - 1]
        here = [it for it in items if it.session == session]
        rng.shuffle(here)
        # A change is always after the first statement (they are in different sessions).
        exchanges: list[tuple[str, str, tuple[str, ...], tuple[str, ...], tuple[str, ...], _Item | None]] = []
        hello, hi = greetings[(session - 1) % len(greetings)]
        exchanges.append((hello, hi, (), (), (), None))
        for k, it in enumerate(here):
            text, vals = _render(it.user, it.fields)
            reply, rvals = _render(it.assistant, it.fields)
            if k:
                text = rng.choice(CONNECTORS) + text
            exchanges.append((text, reply, it.facts, vals, rvals, it))
        if rng.random() < 0.8:
            bye, ok = rng.choice(CLOSINGS)
            exchanges.append((bye, ok, (), (), (), None))
        index = 0
        for text, reply, facts, vals, rvals, it in exchanges:
            if it is not None:
                placed[id(it)] = (session, index)
            turns.append(Turn("user", text, session, date, index, facts, vals))
            turns.append(Turn("assistant", reply, session, date, index + 1, (), rvals))
            index += 2

    by_pos = {(t.session, t.index): t for t in turns}

    # Questions.
    wrappers = list(WRAPPERS)
    questions: list[tuple[str, dict]] = []
    memory: list[tuple[Spec, Slot]] = [(spec, slot) for spec in chosen for slot in spec.slots]
    rng.shuffle(memory)
    memory = memory[:MEMORY_PER_USER]
    for spec, slot in memory:
        says = [it for it in items if it.spec == spec.name and it.role == "say"]
        moves = [it for it in items if it.spec == spec.name and it.role == "move"]
        if moves:
            entry = changes[spec.name]
            old = current[slot.fid]
            evidence = (placed[id(moves[0])],)
            old_turn = by_pos[placed[id(says[0])]]
            stale = tuple(a for a in old[1] if names(old_turn.content, a)
                          and not any(_clash(a, b) for b in entry[1]))
        else:
            entry = current[slot.fid]
            evidence = (placed[id(says[0])],)
            stale = ()
        for pos in evidence:
            assert any(names(by_pos[pos].content, a) for a in entry[1]), (pos, entry)
        questions.append(("memory", dict(fact=slot.fid, text=rng.choice(slot.asks),
                                         answers=entry[1], stale=stale, evidence=evidence)))
    for _spec, slot in open_slots:
        questions.append(("unanswerable", dict(fact=slot.fid, text=rng.choice(slot.asks))))
    rng.shuffle(questions)

    out: list[Question] = []
    for n, (kind, q) in enumerate(questions):
        prefix, lower = rng.choice(wrappers)
        text = q.pop("text")
        if prefix and lower:
            text = text[:1].lower() + text[1:]
        out.append(Question(key=f"{user_id}-q{n:02d}", user_id=user_id, kind=kind,
                            text=prefix + text, **q))
    return User(user_id=user_id, turns=turns, questions=out)

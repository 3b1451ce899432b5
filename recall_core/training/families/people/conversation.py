"""One user's conversation: the facts planned into events, ordered over dated sessions, merged
into turns with near-miss distractors and small talk, and rendered.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from recall_core.training.families.base import Turn, names
from recall_core.training.families.people.cast import Person, _take
from recall_core.training.families.people.chat import CLOSE, GREET, GREET_PREFIX, HELP, SMALL
from recall_core.training.families.people.sentences import (
    ACK,
    ACK_CHANGE,
    CHANGE,
    DISTRACT,
    INTRO,
    INTRO_NICK,
    JOINERS,
    MERGED_PREFIX,
    STATE,
)
from recall_core.training.families.people.text import S, _fill, _v
from recall_core.training.families.people.vocab import (
    KINDS,
    PARTNER,
    PET_NAMES,
    POOLS,
    PRONOUNS,
    REL_BY_KEY,
    RELATIONS,
    Val,
)

# ------------------------------------------------------------------------------------------------
# planning and rendering


@dataclass
class Ev:
    person: Person
    kind: str  # "intro" or an attribute kind
    mode: str  # "new" (current value), "old" (earlier value) or "change" (to the current value)
    session: int
    ref: str  # "rel", "name" or "both"
    combo: bool = False  # the turn also introduces the person's name


@dataclass
class Block:
    user: str
    user_values: list
    asst: str
    asst_values: list
    facts: list  # fact ids
    stmts: list  # (fact, version) with version "cur" or "old"
    first_values: list = field(default_factory=list)


def _pron(p_or_gender) -> dict:
    g = p_or_gender if isinstance(p_or_gender, str) else p_or_gender.gender
    return dict(PRONOUNS[g])


def _who(p: Person, ref: str) -> tuple[S, S]:
    rel, name = p.rel.label, p.name
    if ref == "rel":
        return S(f"my {rel}", (rel,)), S(f"my {rel}'s", (rel,))
    if ref == "name":
        return S(name, (name,)), S(f"{name}'s", (name,))
    return S(f"my {rel} {name}", (rel, name)), S(f"my {rel} {name}'s", (rel, name))


def _value_slots(p: Person, kind: str, val: Val, prefix: str = "") -> dict:
    if kind == "job":
        return {prefix + "job": _v(val.text), prefix + "job_a": S(val.a, (val.text,))}
    if kind == "city":
        return {prefix + "city": _v(val.text)}
    if kind == "pet":
        return {prefix + "pet": _v(val.text), prefix + "pet_a": S(val.a, (val.text,)), "petname": _v(p.petname)}
    if kind == "hobby":
        return {prefix + "hobby": _v(val.text)}
    if kind == "birthday":
        return {prefix + "month": _v(val.text), "day": _v(p.day)}
    if kind == "car":
        return {prefix + "car": _v(val.text), prefix + "car_a": S(val.a, (val.text,))}
    if kind == "study":
        return {prefix + "study": _v(val.text)}
    raise KeyError(kind)


def _render_event(rng: random.Random, ev: Ev) -> Block:
    p = ev.person
    pron = _pron(p)
    if ev.kind == "intro":
        use_nick = p.nick and rng.random() < 0.7
        user_t, asst_opts = rng.choice(INTRO_NICK if use_nick else INTRO)
        slots = {"rel": _v(p.rel.label), "name": _v(p.name), **pron}
        if use_nick:
            slots["nick"] = _v(p.nick)
        user, uv = _fill(user_t, slots)
        asst, av = _fill(rng.choice(asst_opts), slots)
        fact = p.fact("name")
        return Block(user, uv, asst, av, [fact], [(fact, "cur")])
    val = p.old[ev.kind] if ev.mode == "old" else p.attrs[ev.kind]
    who, whos = _who(p, ev.ref)
    ref = S(f"your {p.rel.label}", (p.rel.label,)) if ev.ref == "rel" else _v(p.name)
    slots = {"who": who, "whos": whos, "ref": ref, **pron, **_value_slots(p, ev.kind, val)}
    if ev.mode == "change":
        slots.update(_value_slots(p, ev.kind, p.old[ev.kind], prefix="old_"))
        user_t = rng.choice(CHANGE[ev.kind])
        asst_t = rng.choice(ACK_CHANGE[ev.kind])
    else:
        user_t = rng.choice(STATE[ev.kind])
        asst_t = rng.choice(ACK[ev.kind])
    user, uv = _fill(user_t, slots)
    asst, av = _fill(asst_t, slots)
    fact = p.fact(ev.kind)
    facts, stmts = [fact], [(fact, "old" if ev.mode == "old" else "cur")]
    if ev.ref == "both":
        facts.append(p.fact("name"))
        stmts.append((p.fact("name"), "cur"))
    return Block(user, uv, asst, av, facts, stmts)


def _decap(text: str, values: list[str]) -> str:
    first = text.split(" ", 1)[0].strip(",.:!?")
    if first in ("I", "I'm", "I've", "I'd") or any(text.startswith(v) for v in values if v[:1].isupper()):
        return text
    return text[:1].lower() + text[1:]


def _merge(rng: random.Random, a: Block, b: Block) -> Block:
    """Two pieces of news in one user turn; the reply touches the first briefly, then the second."""
    joiner = rng.choice(JOINERS)
    second = b.user if joiner == "Other news: " else _decap(b.user, b.user_values)
    head = re.match(r".+?[.!?](?=\s|$)", a.asst)
    if head and rng.random() < 0.6:
        lead = head.group(0)
        lead_values = [v for v in a.asst_values if names(lead, v)]
        asst, asst_values = lead + " " + b.asst, lead_values + list(b.asst_values)
    else:
        asst, asst_values = rng.choice(MERGED_PREFIX) + b.asst, list(b.asst_values)
    return Block(a.user + " " + joiner + second, a.user_values + b.user_values, asst, asst_values,
                 a.facts + b.facts, a.stmts + b.stmts)


def _plan(rng: random.Random, cast: list[Person], n_sessions: int) -> tuple[list[Ev], dict]:
    events: list[Ev] = []
    intro_session: dict[str, int] = {}
    for p in cast:
        kinds = list(p.attrs)
        intro_s = rng.randint(1, n_sessions - 1) if p.named else 0
        combo = rng.choice(kinds) if p.named and rng.random() < 0.4 else None
        if p.named:
            intro_session[p.key] = intro_s
            if combo is None:
                events.append(Ev(p, "intro", "new", intro_s, "both"))

        def ref_for(s: int, p: Person = p, intro_s: int = intro_s) -> str:
            if not p.named or s < intro_s:
                return "rel"
            if s == intro_s:
                return rng.choice(["rel", "name"])
            return rng.choices(["rel", "name", "both"], [3, 5, 2])[0]

        for k in kinds:
            changed = k in p.old
            if k == combo:
                s0 = intro_s
                events.append(Ev(p, k, "old" if changed else "new", s0, "both", combo=True))
            else:
                s0 = rng.randint(1, n_sessions - 1 if changed else n_sessions)
                events.append(Ev(p, k, "old" if changed else "new", s0, ref_for(s0)))
            if changed:
                s1 = rng.randint(s0 + 1, n_sessions)
                events.append(Ev(p, k, "change", s1, ref_for(s1)))
    # every session gets at least one fact: move a plain relation-only mention there
    for s in range(1, n_sessions + 1):
        if any(e.session == s for e in events):
            continue
        movable = [e for e in events if e.mode == "new" and not e.combo and e.kind != "intro" and e.ref == "rel"
                   and sum(1 for f in events if f.session == e.session) > 2]
        if movable:
            rng.choice(movable).session = s
    return events, intro_session


def _order(rng: random.Random, evs: list[Ev]) -> list[Ev]:
    evs = list(evs)
    rng.shuffle(evs)
    # a person's introduction comes before any turn that names them without the relation
    changed = True
    while changed:
        changed = False
        for i, e in enumerate(evs):
            if e.ref != "name":
                continue
            for j in range(i + 1, len(evs)):
                f = evs[j]
                if f.person is e.person and (f.kind == "intro" or f.combo):
                    evs.insert(i, evs.pop(j))
                    changed = True
                    break
            if changed:
                break
    return evs


def _distractor(rng: random.Random, cast: list[Person], taken: list[str], k: int) -> Block:
    present = [p.rel.key for p in cast]
    partners = [PARTNER[r] for r in present if r in PARTNER and PARTNER[r] not in present]
    others = [r.key for r in RELATIONS if r.key not in present]
    drel = REL_BY_KEY[rng.choice(partners or others)].label
    kinds_in_cast = [kd for kd in KINDS if any(kd in p.attrs for p in cast)]
    kind = rng.choice([kd for kd in kinds_in_cast if kd in DISTRACT])
    user_t, asst_t = rng.choice(DISTRACT[kind])
    val = _take(rng, POOLS[kind], lambda v: v.forms, taken)
    slots = {"drel": _v(drel)}
    if kind == "job":
        slots.update(job_a=S(val.a, (val.text,)))
    elif kind == "city":
        slots.update(city=_v(val.text))
    elif kind == "pet":
        slots.update(pet=_v(val.text), pet_a=S(val.a, (val.text,)),
                     petname=_v(_take(rng, PET_NAMES, lambda n: (n,), taken)))
    elif kind == "hobby":
        slots.update(hobby=_v(val.text))
    elif kind == "car":
        slots.update(car_a=S(val.a, (val.text,)))
    elif kind == "study":
        slots.update(study=_v(val.text))
    elif kind == "birthday":
        slots.update(month=_v(val.text))
    user, uv = _fill(user_t, slots)
    asst, av = _fill(asst_t, slots)
    fact = f"other{k}.{kind}"
    return Block(user, uv, asst, av, [fact], [(fact, "cur")])


def _conversation(rng: random.Random, user_id: str, cast: list[Person], taken: list[str]):
    n_sessions = rng.randint(3, 5)
    events, intro_session = _plan(rng, cast, n_sessions)
    distract_sessions = [rng.randint(1, n_sessions) for _ in range(rng.randint(2, 3))]
    small = list(SMALL)
    rng.shuffle(small)
    help_tpls = list(HELP)
    rng.shuffle(help_tpls)

    date = datetime(2023, 1, 1, 0, 0) + timedelta(days=rng.randint(0, 560))
    turns: list[Turn] = []
    stmts: list[tuple[int, int, str, str]] = []  # session, index, fact, version
    n_distract = 0
    for s in range(1, n_sessions + 1):
        if s > 1:
            date += timedelta(days=rng.randint(3, 30))
        date = date.replace(hour=rng.randint(7, 22), minute=rng.randint(0, 59))
        blocks: list[Block] = []
        evs = _order(rng, [e for e in events if e.session == s])
        i = 0
        while i < len(evs):
            b = _render_event(rng, evs[i])
            nxt = evs[i + 1] if i + 1 < len(evs) else None
            if (nxt is not None and rng.random() < 0.2 and evs[i].kind != "intro" and not evs[i].combo
                    and nxt.kind != "intro" and not nxt.combo and nxt.person is not evs[i].person):
                b = _merge(rng, b, _render_event(rng, nxt))
                i += 1
            blocks.append(b)
            i += 1
        fillers: list[Block] = []
        for _ in range(rng.randint(1, 2)):
            if small:
                u, a = small.pop()
                fillers.append(Block(u, [], a, [], [], []))
        known = [p for p in cast if p.named and intro_session[p.key] < s]
        if known and help_tpls and rng.random() < 0.6:
            p = rng.choice(known)
            u_t, a_t = help_tpls.pop()
            slots = {"name": _v(p.name), **_pron(p)}
            u, uv = _fill(u_t, slots)
            a, av = _fill(a_t, slots)
            fillers.append(Block(u, uv, a, av, [], []))
        for _ in range(distract_sessions.count(s)):
            n_distract += 1
            fillers.append(_distractor(rng, cast, taken, n_distract))
        for f in fillers:
            blocks.insert(rng.randint(1 if blocks else 0, len(blocks)), f)
        # greeting, then the blocks, then sometimes a goodbye
        pairs: list[Block] = []
        if rng.random() < 0.5 or len(blocks) < 3:
            u, a = rng.choice(GREET)
            pairs.append(Block(u, [], a, [], [], []))
        else:
            up, ap = rng.choice(GREET_PREFIX)
            b = blocks[0]
            blocks[0] = Block(up + b.user, b.user_values, ap + b.asst,
                              b.asst_values, b.facts, b.stmts)
        pairs.extend(blocks)
        if rng.random() < 0.4:
            u, a = rng.choice(CLOSE)
            pairs.append(Block(u, [], a, [], [], []))
        index = 0
        for b in pairs:
            stamp = date.strftime("%Y-%m-%dT%H:%M")
            turns.append(Turn("user", b.user, s, stamp, index, tuple(dict.fromkeys(b.facts)), tuple(b.user_values)))
            for fact, version in b.stmts:
                stmts.append((s, index, fact, version))
            date += timedelta(minutes=rng.randint(1, 3))
            stamp = date.strftime("%Y-%m-%dT%H:%M")
            turns.append(Turn("assistant", b.asst, s, stamp, index + 1, (), tuple(b.asst_values)))
            date += timedelta(minutes=rng.randint(1, 4))
            index += 2
    return turns, stmts

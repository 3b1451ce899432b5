"""The questions asked later: their phrasings (by relation, by name, a relation's name) and the
choice of a user's 16 memory and 4 unanswerable questions.
"""

from __future__ import annotations

import random

from recall_core.training.families.base import Question, normal
from recall_core.training.families.people.cast import Person
from recall_core.training.families.people.conversation import _pron
from recall_core.training.families.people.text import S, _fill, _v
from recall_core.training.families.people.vocab import PARTNER, REL_BY_KEY, Rel

QUESTIONS_PER_USER = 20
UNANSWERABLE_PER_USER = 4
MEMORY_PER_USER = QUESTIONS_PER_USER - UNANSWERABLE_PER_USER

# ------------------------------------------------------------------------------------------------
# questions: (direct, indirect or None). Slots: who / whos, his, rel, name.

ASK = {
    "job": [
        ("what does {who} do for a living?", "what {who} does for a living"),
        ("what's {whos} job again?", "what {whos} job is"),
        ("what line of work is {who} in?", "what line of work {who} is in"),
        ("{whos} job, what was it again?", None),
    ],
    "city": [
        ("where does {who} live these days?", "where {who} lives these days"),
        ("which city is {who} in now?", "which city {who} is in now"),
        ("where's {who} based at the moment?", "where {who} is based at the moment"),
        ("what city did {who} end up in?", "what city {who} ended up in"),
    ],
    "pet": [
        ("what kind of pet does {who} have?", "what kind of pet {who} has"),
        ("what animal has {who} got at home?", "what animal {who} has at home"),
        ("{who} has a pet, right? What sort?", None),
    ],
    "hobby": [
        ("what's {who} into in {his} spare time?", "what {who} is into in {his} spare time"),
        ("what does {who} do for fun?", "what {who} does for fun"),
        ("what's {whos} big hobby?", "what {whos} big hobby is"),
    ],
    "birthday": [
        ("what month is {whos} birthday in?", "what month {whos} birthday is in"),
        ("when's {whos} birthday? Just the month is fine.", None),
        ("which month was {who} born in?", "which month {who} was born in"),
    ],
    "car": [
        ("what car does {who} drive?", "what car {who} drives"),
        ("what's {who} driving these days?", "what {who} is driving these days"),
        ("what kind of car has {who} got?", "what kind of car {who} has"),
    ],
    "study": [
        ("what's {who} studying?", "what {who} is studying"),
        ("what subject is {who} doing at uni?", "what subject {who} is doing"),
        ("what's {whos} degree in?", "what {whos} degree is in"),
    ],
    "name": [
        ("what's my {rel} called again?", "what my {rel} is called"),
        ("what name does my {rel} go by?", "what name my {rel} goes by"),
        ("I've completely blanked on my {rel}'s name. What is it?", None),
        ("my {rel}, what's {his} name again?", None),
    ],
    "who": [
        ("who's {name} again?", "who {name} is"),
        ("how do I know {name}?", "how I know {name}"),
        ("{name} came up earlier and I drew a blank. Who is that?", None),
        ("how is {name} connected to me?", "how {name} is connected to me"),
    ],
}
WRAP_DIRECT = [
    "{Q}", "{Q}", "Help me keep everyone straight: {q}", "Remind me, {q}", "Family stuff is so confusing. {Q}",
    "Honestly, my head is full today. {Q}", "{Q} I feel like you'd know.", "Bit of a tangent, but {q}",
    "Just wondering, {q}", "Writing a shopping list and got distracted. {Q}",
]
WRAP_INDIRECT = [
    "Do you recall {i}?", "Would you mind reminding me {i}?",
    "I can't for the life of me remember {i}. Can you?", "Any clue {i}?",
    "Can you say off the top of your head {i}?",
    "Just got in from the gym and I'm useless. Can you tell me {i}?",
]

# ------------------------------------------------------------------------------------------------
# questions


def _phrase(rng: random.Random, kind: str, slots: dict) -> tuple[str, list[str]]:
    direct, indirect = rng.choice(ASK[kind])
    if indirect is not None and rng.random() < 0.4:
        core, vals = _fill(indirect, slots)
        text, _ = _fill(rng.choice(WRAP_INDIRECT), {"i": core})
        return text, vals
    core, vals = _fill(direct, slots)
    text, _ = _fill(rng.choice(WRAP_DIRECT), {"q": core})
    return text, vals


def _ask_slots(p_rel: Rel, gender: str, ref: str, name: str = "") -> dict:
    if ref == "name":
        who, whos = S(name, (name,)), S(f"{name}'s", (name,))
    else:
        who, whos = S(f"my {p_rel.label}", (p_rel.label,)), S(f"my {p_rel.label}'s", (p_rel.label,))
    return {"who": who, "whos": whos, "rel": _v(p_rel.label), "name": _v(name) if name else "", **_pron(gender)}


def _questions(rng: random.Random, user_id: str, cast: list[Person], stmts) -> list[Question]:
    stated = {f for _s, _i, f, _v2 in stmts}
    by_fact: dict[str, list[tuple[int, int, str]]] = {}
    for s, i, f, version in stmts:
        by_fact.setdefault(f, []).append((s, i, version))

    memory: list[tuple] = []  # (priority, Question-args)
    for p in cast:
        for kind in list(p.attrs) + ["name"]:
            fact = p.fact(kind)
            if fact not in stated:
                continue
            evidence = tuple((s, i) for s, i, v in by_fact[fact] if v == "cur")
            if kind == "name":
                others = [a for q in cast if q is not p for a in q.rel.aliases]
                who_ok = all(normal(a) not in normal(o) for a in p.rel.aliases for o in others)
                if who_ok and rng.random() < 0.45:
                    slots = {"name": _v(p.name), **_pron(p)}
                    text, vals = _phrase(rng, "who", slots)
                    memory.append((2, fact, text, p.rel.aliases, (), evidence, vals))
                else:
                    slots = _ask_slots(p.rel, p.gender, "rel")
                    text, vals = _phrase(rng, "name", slots)
                    memory.append((2, fact, text, p.name_forms(), (), evidence, vals))
                continue
            ref = "name" if p.named and rng.random() < 0.5 else "rel"
            slots = _ask_slots(p.rel, p.gender, ref, p.name)
            text, vals = _phrase(rng, kind, slots)
            stale = p.old[kind].forms if kind in p.old else ()
            memory.append((0 if stale else 1, fact, text, p.attrs[kind].forms, stale, evidence, vals))
    rng.shuffle(memory)
    changed = [m for m in memory if m[0] == 0]
    plain = [m for m in memory if m[0] == 1]
    name_qs = [m for m in memory if m[0] == 2]
    n_names = min(len(name_qs), rng.randint(2, 4))
    chosen = changed[:3] + name_qs[:n_names]
    rest = changed[3:] + plain
    rng.shuffle(rest)
    chosen += rest[: MEMORY_PER_USER - len(chosen)]
    chosen += name_qs[n_names:][: MEMORY_PER_USER - len(chosen)]
    if len(chosen) < MEMORY_PER_USER:
        raise RuntimeError("not enough facts")

    # unanswerable: an attribute given only for other people, a name never said, an absent relative
    gaps = []
    kinds_stated = {f.split(".")[1] for f in stated if not f.startswith("other")}
    for p in cast:
        for kind in p.rel.kinds:
            if kind not in p.attrs and kind in kinds_stated:
                gaps.append((p, kind))
    rng.shuffle(gaps)
    unans: list[tuple[str, str, list[str]]] = []
    unnamed = [p for p in cast if not p.named]
    if unnamed:
        p = rng.choice(unnamed)
        text, vals = _phrase(rng, "name", _ask_slots(p.rel, p.gender, "rel"))
        unans.append((p.fact("name"), text, vals))
    present = [p.rel.key for p in cast]
    absent = [PARTNER[r] for r in present if r in PARTNER and PARTNER[r] not in present]
    if absent:
        rel = REL_BY_KEY[rng.choice(absent)]
        kinds = [k for k in rel.kinds if k in kinds_stated]
        if kinds:
            kind = rng.choice(kinds)
            text, vals = _phrase(rng, kind, _ask_slots(rel, rel.gender, "rel"))
            unans.append((f"{rel.key}.{kind}", text, vals))
    for p, kind in gaps:
        if len(unans) >= UNANSWERABLE_PER_USER:
            break
        ref = "name" if p.named and rng.random() < 0.5 else "rel"
        text, vals = _phrase(rng, kind, _ask_slots(p.rel, p.gender, ref, p.name))
        unans.append((p.fact(kind), text, vals))
    unans = unans[:UNANSWERABLE_PER_USER]
    if len(unans) < UNANSWERABLE_PER_USER:
        raise RuntimeError("not enough unanswerable questions")

    items = [("memory", m[1], m[2], m[3], m[4], m[5], m[6]) for m in chosen]
    items += [("unanswerable", f, t, (), (), (), v) for f, t, v in unans]
    rng.shuffle(items)
    out = []
    for j, (kind, fact, text, answers, stale, evidence, vals) in enumerate(items):
        out.append(Question(
            key=f"{user_id}-q{j:02d}", user_id=user_id, fact=fact, text=text, kind=kind,
            answers=tuple(answers), stale=tuple(stale), evidence=tuple(evidence), values=tuple(vals),
        ))
    return out

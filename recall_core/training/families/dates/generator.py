"""One dates-family user: the dated sessions, the dates told and moved in them with near misses
and small talk, and the questions asked afterwards.
"""

from __future__ import annotations

import datetime as _dt
import random

from recall_core.training.families.base import Question, Turn, User
from recall_core.training.families.dates.blocks import (
    _T,
    _Alloc,
    _Fact,
    _pair,
    _possessive_pronouns,
    _pronouns,
)
from recall_core.training.families.dates.chat import CLOSINGS, FILLERS, GREETINGS
from recall_core.training.families.dates.formats import (
    date_aliases,
    echo_date,
    echo_time,
    fill,
    render_date,
    render_time,
    time_aliases,
)
from recall_core.training.families.dates.pools import (
    _NOT_FOR_OTHERS,
    APPTS,
    CITIES,
    COMPANIES,
    DEADLINES,
    EVENTS,
    PARTNER_F,
    PARTNER_M,
    PETS,
    REL_F,
    REL_M,
    REL_N,
)
from recall_core.training.families.dates.questions import (
    Q_APPT_DATE,
    Q_APPT_TIME,
    Q_BDAY_DATE,
    Q_D_APPT_DATE,
    Q_D_EVENT_DATE,
    Q_D_FLIGHT_DATE,
    Q_DEADLINE_DATE,
    Q_EVENT_DATE,
    Q_EVENT_TIME,
    Q_FLIGHT_DATE,
    Q_FLIGHT_TIME,
    Q_ON_DATE,
    Q_PREFIX,
    Q_SUFFIX,
    U_APPT_NEVER,
    U_BDAY,
    U_D_APPT_TIME,
    U_D_EVENT_TIME,
    U_D_FLIGHT_TIME,
    U_DEADLINE_TIME,
    U_EVENT_END,
    U_RETURN,
)
from recall_core.training.families.dates.statements import (
    APPT_ACK,
    APPT_MENTION,
    APPT_MOVE_ACK,
    APPT_MOVE_BOTH,
    APPT_MOVE_DATE,
    APPT_MOVE_DATE_T,
    APPT_MOVE_TIME,
    APPT_STATE,
    BDAY_ACK,
    BDAY_STATE,
    D_APPT_ACK,
    D_APPT_STATE,
    D_EVENT_ACK,
    D_EVENT_STATE,
    D_FLIGHT_ACK,
    D_FLIGHT_STATE,
    DEADLINE_ACK,
    DEADLINE_EARLIER,
    DEADLINE_EARLIER_ACK,
    DEADLINE_LATER,
    DEADLINE_LATER_ACK,
    DEADLINE_MENTION,
    DEADLINE_STATE,
    EVENT_ACK,
    EVENT_MOVE_ACK,
    EVENT_MOVE_BOTH,
    EVENT_MOVE_DATE,
    EVENT_MOVE_DATE_T,
    EVENT_MOVE_TIME,
    EVENT_STATE,
    FLIGHT_ACK,
    FLIGHT_MENTION,
    FLIGHT_MOVE_ACK,
    FLIGHT_MOVE_BOTH,
    FLIGHT_MOVE_DATE,
    FLIGHT_MOVE_DATE_T,
    FLIGHT_MOVE_TIME,
    FLIGHT_STATE,
    MILESTONE_ACK,
    MILESTONES,
    UNDATED,
)

# -- one user ------------------------------------------------------------------------------------------


def _session_dates(rng: random.Random, k: int) -> list[_dt.datetime]:
    start = _dt.date(2023, 1, 4) + _dt.timedelta(days=rng.randint(0, 815))  # up to late March 2025
    out = []
    day = start
    for i in range(k):
        if i:
            day = day + _dt.timedelta(days=rng.randint(3, 27))
        out.append(_dt.datetime(day.year, day.month, day.day, rng.randint(7, 21), rng.randint(0, 59)))
    return out


def _shift_word(old, new) -> str:
    return "later" if new[0] * 60 + new[1] > old[0] * 60 + old[1] else "earlier"


def _make_user(rng: random.Random, user_id: str, n_questions: int) -> User:
    k = rng.randint(3, 5)
    sdates = _session_dates(rng, k)
    al = _Alloc(rng, sdates[0].date(), sdates[-1].date())
    blocks: dict[int, list[list[_T]]] = {s: [] for s in range(1, k + 1)}
    late_blocks: dict[int, list[list[_T]]] = {s: [] for s in range(1, k + 1)}  # go after the others
    facts: list[_Fact] = []
    unans: list[tuple[str, tuple[str, ...], dict]] = []  # (fact id, templates, slots)

    has_partner = rng.random() < 0.8
    partner = al.person(PARTNER_F + PARTNER_M) if has_partner else None

    def place(fact: _Fact, movable: bool):
        if movable and k >= 2:
            fact.session = rng.randint(1, k - 1)
        else:
            fact.session = rng.randint(1, k)

    # which facts get rescheduled
    appt_kinds = rng.sample(range(len(APPTS)), 2)
    movable_ids = ["appt1", "appt2", "flight", "deadline", "event"]
    n_moves = 1 if rng.random() < 0.45 else 2
    moving = rng.sample(movable_ids, n_moves)

    def time_move_mode(fid):
        return rng.choice(("both", "both", "date_t", "date", "time"))

    # appointments
    for i, ak in enumerate(appt_kinds, 1):
        np_, words, reason = APPTS[ak]
        f = _Fact(f"appt{i}", "appointment", {"np": np_, "reason": reason}, words, year_known=True)
        f.slots["_akind"] = ak
        facts.append(f)
    # flight
    if rng.random() < 0.85:
        city = rng.choice(CITIES)
        facts.append(_Fact("flight", "flight", {"city": city}, (city,), year_known=True))
    # birthdays
    n_bday = 2 if rng.random() < 0.55 else 1
    for i in range(1, n_bday + 1):
        name, rel, g = al.person(REL_F + REL_M + REL_N[:2])
        words = (name, rel) if rel not in REL_N else (name,)
        f = _Fact(f"bday{i}", "birthday", {"name": name, "rel": rel, "_g": g}, words)
        facts.append(f)
    # milestones
    ms_pool = [m for m in MILESTONES if has_partner or not m[1]]
    for ms in rng.sample(ms_pool, rng.choice((1, 2, 2))):
        slots = {"_ms": ms}
        if ms[0] == "job":
            slots["company"] = rng.choice(COMPANIES)
        if ms[0] == "pet":
            slots["pet"] = rng.choice(PETS)
            slots["_pet_them"] = rng.choice(("her", "him"))
        if ms[1]:
            slots["partner"] = partner[0]
        facts.append(_Fact(f"ms_{ms[0]}", "milestone", slots))
    # deadline
    if rng.random() < 0.85:
        dk = rng.randrange(len(DEADLINES))
        np_, words = DEADLINES[dk]
        facts.append(_Fact("deadline", "deadline", {"np": np_}, words, year_known=True))
    # event
    ev_order = rng.sample(range(len(EVENTS)), len(EVENTS))
    ev_main = None
    for ei in ev_order:
        if any(r not in al.rels for r in EVENTS[ei][2]):
            ev_main = ei
            break
    event, ewords, erels, _hours = EVENTS[ev_main]
    name, rel, g = al.person(erels)
    facts.append(_Fact("event", "event", {"name": name, "rel": rel, "event": event, "_g": g},
                       ewords + (name,), year_known=True))

    byid = {f.fid: f for f in facts}
    moving = [m for m in moving if m in byid]

    # ---- allocate dates and times (distinct (month, day) and distinct clock times per user)
    for f in facts:
        if f.kind in ("appointment", "flight", "deadline", "event"):
            f.dates.append([al.future(weekday_only=f.kind in ("appointment", "deadline")), None])
        if f.kind == "appointment":
            f.times.append([al.time(8, 17), None])
        elif f.kind == "flight":
            f.times.append([al.time(6, 21), None])
        elif f.kind == "event":
            lo, hi = EVENTS[ev_main][3]
            f.times.append([al.time(lo, hi), None])
        elif f.kind == "birthday":
            other = byid.get("bday1")
            same_month = f.fid == "bday2" and rng.random() < 0.6
            f.dates.append([al.any_day(other.date.month if same_month else None), None])
        elif f.kind == "milestone":
            d = al.past()
            f.dates.append([d, None])
            if rng.random() < 0.6:
                f.year = d.year

    # ---- statements
    def render(f: _Fact, with_weekday_ok=True):
        d = f.date
        if f.kind == "milestone" or f.kind == "birthday":
            return render_date(rng, d)
        return render_date(rng, d, weekday=with_weekday_ok and rng.random() < 0.45,
                           year=rng.random() < 0.12)

    for f in facts:
        movable = f.fid in moving
        place(f, movable)
        slots = dict(f.slots)
        slots["date"] = render(f)
        slots["date_echo"] = echo_date(rng, f.date)
        if f.times:
            slots["time"] = render_time(rng, f.time)
            slots["time_echo"] = echo_time(f.time)
        if f.kind == "appointment":
            blk = _pair(rng.choice(APPT_STATE), rng.choice(APPT_ACK), slots, (f.fid,))
        elif f.kind == "flight":
            h = f.time[0]
            slots["_aside"] = (", so that's a horrible alarm" if h < 9 else
                               ", so at least I get a lie-in first" if h >= 15 else "")
            blk = _pair(rng.choice(FLIGHT_STATE), rng.choice(FLIGHT_ACK), slots, (f.fid,))
        elif f.kind == "birthday":
            slots.update(_pronouns(slots["_g"]))
            blk = _pair(rng.choice(BDAY_STATE), rng.choice(BDAY_ACK), slots, (f.fid,))
        elif f.kind == "milestone":
            ms = slots["_ms"]
            if f.year is not None:
                slots["year"] = str(f.year)
                tpl = rng.choice(ms[2])
                yp = rng.choice((", {year}", " {year}", ", back in {year}"))
            else:
                tpl = rng.choice(ms[2])
                yp = ""
            tpl = tpl.replace("{year_part}", yp)
            blk = _pair(tpl, rng.choice(MILESTONE_ACK), slots, (f.fid,))
            if f.year is not None:
                f.year_turn = blk[0]
        elif f.kind == "deadline":
            blk = _pair(rng.choice(DEADLINE_STATE), rng.choice(DEADLINE_ACK), slots, (f.fid,))
        else:  # event
            slots.update(_possessive_pronouns(slots["_g"]))
            blk = _pair(rng.choice(EVENT_STATE), rng.choice(EVENT_ACK), slots, (f.fid,))
        f.dates[-1][1] = blk[0]
        if f.times:
            f.times[-1][1] = blk[0]
        blocks[f.session].append(blk)

    # ---- reschedules, in a later session
    for fid in moving:
        f = byid[fid]
        f.move_session = rng.randint(f.session + 1, k)
        old_d, old_t = f.date, f.time
        mode = "date" if f.kind == "deadline" else time_move_mode(fid)
        slots = dict(f.slots)
        if f.kind == "event":
            slots.update(_possessive_pronouns(slots["_g"]))
        new_d = old_d
        if mode in ("both", "date_t", "date"):
            new_d = al.future(near=old_d, weekday_only=f.kind in ("appointment", "deadline"))
        new_t = old_t
        if mode in ("both", "time"):
            lo, hi = {"appointment": (8, 17), "flight": (6, 21)}.get(f.kind, EVENTS[ev_main][3])
            new_t = al.time(lo, hi)
        slots["date"] = render_date(rng, new_d, weekday=rng.random() < 0.4)
        slots["old_date"] = echo_date(rng, old_d)
        if new_t is not None:
            slots["time"] = render_time(rng, new_t)
            slots["_shift"] = _shift_word(old_t, new_t)
        table = {
            "appointment": (APPT_MOVE_BOTH, APPT_MOVE_DATE_T, APPT_MOVE_DATE, APPT_MOVE_TIME, APPT_MOVE_ACK),
            "flight": (FLIGHT_MOVE_BOTH, FLIGHT_MOVE_DATE_T, FLIGHT_MOVE_DATE, FLIGHT_MOVE_TIME,
                       FLIGHT_MOVE_ACK),
            "event": (EVENT_MOVE_BOTH, EVENT_MOVE_DATE_T, EVENT_MOVE_DATE, EVENT_MOVE_TIME, EVENT_MOVE_ACK),
        }
        if f.kind == "deadline":
            later = new_d > old_d
            tpl = rng.choice(DEADLINE_LATER if later else DEADLINE_EARLIER)
            ack = rng.choice(DEADLINE_LATER_ACK if later else DEADLINE_EARLIER_ACK)
        else:
            both, date_t, date_only, time_only, acks = table[f.kind]
            tpl = rng.choice({"both": both, "date_t": date_t, "date": date_only, "time": time_only}[mode])
            ack = rng.choice(acks)
        blk = _pair(tpl, ack, slots, (f.fid,))
        if mode in ("both", "date_t", "date"):
            f.dates.append([new_d, blk[0]])
        if mode in ("both", "date_t", "time"):
            f.times.append([new_t, blk[0]])
        blocks[f.move_session].append(blk)

    # ---- a mention without values, in a later session
    for f in facts:
        pool = {"appointment": APPT_MENTION, "flight": FLIGHT_MENTION, "deadline": DEADLINE_MENTION}.get(f.kind)
        if pool and f.session < k and rng.random() < 0.4:
            s = rng.randint(f.session + 1, k)
            u, a = rng.choice(pool)
            late_blocks[s].append(_pair(u, a, dict(f.slots)))

    # ---- near misses: the same kind of date for someone else
    near: list[_Fact] = []
    if has_partner and rng.random() < 0.85:
        mine = [f for f in facts if f.kind == "appointment"]
        anchor = rng.choice(mine)
        choices = [a for a in APPTS if a[0] not in _NOT_FOR_OTHERS]
        if rng.random() < 0.5 and anchor.slots["np"] not in _NOT_FOR_OTHERS:
            np_, words, _r = APPTS[anchor.slots["_akind"]]
        else:
            np_, words, _r = rng.choice(choices)
        pname, prel, pg = partner
        slots = {"partner": pname, "prel": prel, "np": np_}
        slots.update(_pronouns(pg))
        f = _Fact("other_appt", "other_appt", slots, words, year_known=True)
        f.dates.append([al.future(month=anchor.date.month, weekday_only=True), None])
        near.append(f)
        unans.append(("other_appt_time", U_D_APPT_TIME, slots))
    if "flight" in byid and rng.random() < 0.6:
        city = rng.choice([c for c in CITIES if c != byid["flight"].slots["city"]])
        name, rel, g = al.person(("colleague", "flatmate", "cousin", "friend", "neighbour"))
        slots = {"name": name, "rel": rel, "city": city}
        slots.update(_possessive_pronouns(g))
        f = _Fact("other_flight", "other_flight", slots, (city, name), year_known=True)
        f.dates.append([al.future(month=byid["flight"].date.month), None])
        near.append(f)
        unans.append(("other_flight_time", U_D_FLIGHT_TIME, slots))
    if rng.random() < 0.65:
        options = [ei for ei in ev_order if ei != ev_main and any(r not in al.rels for r in EVENTS[ei][2])]
        ei = options[0]
        ev2, w2, r2, _h = EVENTS[ei]
        name, rel, g = al.person(r2)
        slots = {"name": name, "rel": rel, "event": ev2}
        slots.update(_possessive_pronouns(g))
        f = _Fact("other_event", "other_event", slots, w2 + (name,), year_known=True)
        f.dates.append([al.future(month=byid["event"].date.month), None])
        near.append(f)
        unans.append(("other_event_time", U_D_EVENT_TIME, slots))
    table = {"other_appt": (D_APPT_STATE, D_APPT_ACK), "other_flight": (D_FLIGHT_STATE, D_FLIGHT_ACK),
             "other_event": (D_EVENT_STATE, D_EVENT_ACK)}
    for f in near:
        st, ack = table[f.kind]
        slots = dict(f.slots)
        slots["date"] = render_date(rng, f.date, weekday=rng.random() < 0.3)
        blk = _pair(rng.choice(st), rng.choice(ack), slots, (f.fid,))
        f.dates[-1][1] = blk[0]
        f.session = rng.randint(1, k)
        blocks[f.session].append(blk)
    facts.extend(near)

    # ---- things mentioned with no date
    used_np = [f.slots["np"] for f in facts if "np" in f.slots]
    for kind, utpl, atpl, qtpls in rng.sample(UNDATED, rng.choice((1, 2, 2))):
        if kind == "appt":
            np_ = rng.choice([a[0] for a in APPTS if a[0] not in used_np])
            used_np.append(np_)
            slots = {"np": np_}
        else:
            rels = ("cousin", "friend", "sister", "brother", "colleague") if kind == "wedding" else \
                ("friend", "aunt", "uncle", "cousin", "grandma", "grandad", "flatmate")
            name, rel, g = al.person(rels)
            slots = {"name": name, "rel": rel}
            slots.update(_pronouns(g))
        late_blocks[rng.randint(1, k)].insert(0, _pair(utpl, atpl, slots))
        unans.append((f"undated_{kind}", qtpls, slots))

    # ---- other unanswerables, close to what was said
    if "flight" in byid:
        unans.append(("return_flight", U_RETURN, byid["flight"].slots))
    if "deadline" in byid:
        unans.append(("deadline_time", U_DEADLINE_TIME, byid["deadline"].slots))
    unans.append(("event_end", U_EVENT_END, byid["event"].slots))
    family = [r for r in REL_F + REL_M if r not in al.rels and r not in ("goddaughter", "godson", "stepmum",
                                                                          "stepdad")]
    for rel in rng.sample(family, 2):
        unans.append((f"birthday_{rel}", U_BDAY, {"rel": rel}))
    never = [a[0] for a in APPTS if a[0] not in used_np]
    unans.append(("appt_never", U_APPT_NEVER, {"np": rng.choice(never)}))
    for f in facts:
        if f.kind == "milestone" and f.year is None:
            unans.append((f"{f.fid}_year", f.slots["_ms"][4], f.slots))

    # ---- assemble the sessions
    fillers = rng.sample(FILLERS, len(FILLERS))
    turns: list[_T] = []
    for s in range(1, k + 1):
        g_u, g_a, _again = rng.choice([g for g in GREETINGS if s > 1 or not g[2]])
        seq = [_pair(g_u, g_a, {})]
        n_fill = rng.randint(1, 2)
        n_fill = max(n_fill, 2 - len(blocks[s]) - len(late_blocks[s]))
        body = blocks[s] + [_pair(*fillers.pop(), {}) for _ in range(n_fill)]
        rng.shuffle(body)
        seq += body + late_blocks[s]
        if rng.random() < 0.5:
            seq.append(_pair(*rng.choice(CLOSINGS), {}))
        for i, t in enumerate(t for blk in seq for t in blk):
            t.session, t.index = s, i
            turns.append(t)

    def stamp(t: _T) -> str:
        return (sdates[t.session - 1] + _dt.timedelta(minutes=t.index)).strftime("%Y-%m-%dT%H:%M")

    user = User(user_id=user_id)
    user.turns = [Turn(role=t.role, content=t.content, session=t.session, date=stamp(t), index=t.index,
                       facts=t.facts, values=t.values) for t in turns]

    # ---- questions
    on_counts: dict[str, int] = {}
    for f in facts:
        for w in f.on_words[:1]:
            on_counts[w] = on_counts.get(w, 0) + 1

    def hist(entries, aliases):
        current = entries[-1][0]
        ev = tuple((t.session, t.index) for v, t in entries if v == current)
        stale = []
        for v, _t in entries:
            if v != current:
                for a in aliases(v):
                    if a not in stale:
                        stale.append(a)
        return aliases(current), tuple(stale), ev

    cands: dict[str, list] = {}  # fact id -> [(priority, fact id, templates, slots, answers, stale, evidence)]

    def add(f: _Fact, tpls, slots, answers, stale, evidence):
        cands.setdefault(f.fid, []).append((1 if stale else 0, f.fid, tpls, slots, answers, stale, evidence))

    date_tpls = {"appointment": Q_APPT_DATE, "flight": Q_FLIGHT_DATE, "birthday": Q_BDAY_DATE,
                 "deadline": Q_DEADLINE_DATE, "event": Q_EVENT_DATE, "other_appt": Q_D_APPT_DATE,
                 "other_flight": Q_D_FLIGHT_DATE, "other_event": Q_D_EVENT_DATE}
    time_tpls = {"appointment": Q_APPT_TIME, "flight": Q_FLIGHT_TIME, "event": Q_EVENT_TIME}
    for f in facts:
        answers, stale, ev = hist(f.dates, lambda d, yk=f.year_known: date_aliases(d, yk))
        tpls = f.slots["_ms"][3] if f.kind == "milestone" else date_tpls[f.kind]
        add(f, tpls, f.slots, answers, stale, ev)
        if f.times and f.kind in time_tpls:
            answers, stale, ev = hist(f.times, time_aliases)
            add(f, time_tpls[f.kind], f.slots, answers, stale, ev)
        if f.kind == "milestone" and f.year is not None:
            add(f, f.slots["_ms"][4], f.slots, (str(f.year),), (), ((f.year_turn.session, f.year_turn.index),))
        if f.on_words and on_counts.get(f.on_words[0], 0) == 1 and not f.kind.startswith("other"):
            ev = tuple((t.session, t.index) for v, t in f.dates if v == f.date)
            qslots = {"qdate": render_date(rng, f.date, weekday=f.year_known and rng.random() < 0.3)}
            add(f, Q_ON_DATE, qslots, f.on_words, (), ev)

    groups = list(cands.values())
    for g in groups:
        rng.shuffle(g)
        g.sort(key=lambda c: -c[0])
    rng.shuffle(groups)
    groups.sort(key=lambda g: -g[0][0])
    n_mem = round(n_questions * 0.8)
    picked = []
    while len(picked) < n_mem and any(groups):
        for g in groups:
            if g and len(picked) < n_mem:
                picked.append(g.pop(0))

    n_un = n_questions - n_mem
    un_picked = rng.sample(unans, min(n_un, len(unans)))

    def phrase(tpls, slots):
        tpl = rng.choice(tpls)
        text, values = fill(tpl, slots)
        r = rng.random()
        if r < 0.35:
            pre, lower = rng.choice(Q_PREFIX)
            if lower and not tpl.startswith("{") and not tpl.startswith(("I ", "I'")):
                text = text[0].lower() + text[1:]
            text = pre + text
        elif r < 0.45:
            text = text + rng.choice(Q_SUFFIX)
        return text, tuple(values)

    questions = []
    for _p, fid, tpls, slots, answers, stale, ev in picked:
        text, values = phrase(tpls, slots)
        questions.append(dict(fact=fid, text=text, kind="memory", answers=tuple(answers),
                              stale=tuple(stale), evidence=tuple(sorted(ev)), values=values))
    for fid, tpls, slots in un_picked:
        text, values = phrase(tpls, slots)
        questions.append(dict(fact=f"unsaid_{fid}", text=text, kind="unanswerable", values=values))
    rng.shuffle(questions)
    user.questions = [Question(key=f"{user_id}-q{i:02d}", user_id=user_id, **q) for i, q in enumerate(questions)]
    return user


def generate(seed: int, users: int = 5, questions: int = 20) -> list[User]:
    """``users`` users, each with 3 to 5 sessions and about ``questions`` questions (80% memory)."""
    master = random.Random(seed)
    out = []
    for n in range(users):
        rng = random.Random(master.getrandbits(64))
        out.append(_make_user(rng, f"dates-{seed}-{n:02d}", questions))
    return out

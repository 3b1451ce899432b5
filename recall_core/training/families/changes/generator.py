"""One changes-family user: the facts drawn and their chains of values, the events told over dated
sessions with controls and distractors, and the questions about the current values.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from recall_core.training.families.base import Question, Turn, User
from recall_core.training.families.changes.chat import (
    _CLOSE,
    _CONNECTORS,
    _GREET_ASSISTANT,
    _GREET_USER,
    _HELP,
    _HELP_WHO,
    _NO_CONNECTOR,
    _Q_WRAP,
)
from recall_core.training.families.changes.controls import _C, CONTROL_KINDS
from recall_core.training.families.changes.kinds import _EXCLUSIVE, _K, CHANGING_KINDS
from recall_core.training.families.changes.near_misses import _O, _REL_NAME_ASK, OTHER_ATTRS
from recall_core.training.families.changes.text import _SLOT, _lower_first, _render
from recall_core.training.families.changes.values import (
    _CURRENCY,
    _MONTHS,
    _NAMED_RELS,
    _PARENTS,
    _POOLS,
    _REL_PAIR,
    _REL_POOL,
    _SHORT_OK,
    _SPECIES,
    _TERMS,
    _V,
    _clash,
    _date_aliases,
    _money_aliases,
    aliases,
)

QUESTIONS_PER_USER = 20
UNANSWERABLE_PER_USER = 4
MIN_SESSIONS, MAX_SESSIONS = 3, 5

# -- generation -----------------------------------------------------------------------------------


class _UserGen:
    def __init__(self, rng: random.Random, user_id: str):
        self.rng = rng
        self.user_id = user_id
        self.used: list[str] = []  # every alias drawn for this user
        self.mentioned: list[str] = []  # value keys already mentioned in text
        self.currency = rng.choice(_CURRENCY)
        self.term = rng.choice(_TERMS)
        self.species = rng.choice(_SPECIES)
        self.cast: dict[str, _V] = {}
        self.final: dict[str, _V] = {}
        #: (session, index of the user turn) -> [(fact, value key, asserted), ...]
        self._mentions: dict[tuple[int, int], list[tuple]] = {}
        self.seen: list = []  # templates already used for this user

    def pick(self, options: list):
        """A random option, preferring ones this user has not seen yet."""
        fresh = [o for o in options if o not in self.seen]
        choice = self.rng.choice(fresh or options)
        self.seen.append(choice)
        return choice

    # values

    def _free(self, entry: tuple[str, ...]) -> bool:
        return not any(_clash(a, u) for a in entry for u in self.used)

    def _take(self, entry: tuple[str, ...], forms: tuple[str, ...] | None = None) -> _V:
        self.used.extend(entry)
        return _V(entry, forms or entry)

    def draw(self, pool: str) -> _V:
        if pool == "partner":
            pool = {"girlfriend": "name_f", "boyfriend": "name_m"}.get(self.term, "name")
        if pool == "date":
            while True:
                month = self.rng.randrange(12)
                day = self.rng.randint(1, (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)[month])
                entry = _date_aliases(day, _MONTHS[month])
                if self._free(entry):
                    k = self.rng.randrange(len(entry))
                    return self._take(entry, entry[k:] + entry[:k])
        if pool == "rent":
            return self.rent(self.rng.randrange(700, 2000, 25))
        entries = [e for e in _POOLS[pool] if self._free(e)]
        entry = self.rng.choice(entries)
        forms = entry if pool in _SHORT_OK else entry[:1]
        return self._take(entry, forms)

    def rent(self, amount: int) -> _V:
        entry = _money_aliases(amount, self.currency)
        return self._take(entry, entry[:1])

    def next_value(self, kind: str, cur: _V) -> _V:
        if kind == "rent":
            amount = int(cur.aliases[2])
            while True:
                new = amount + self.rng.choice((50, 75, 100, 125, 150, 200, 250))
                if self._free(_money_aliases(new, self.currency)):
                    return self.rent(new)
                amount = new
        return self.draw(_K[kind]["pool"])

    def surface(self, v: _V) -> str:
        if v.key not in self.mentioned:
            self.mentioned.append(v.key)
            return v.forms[0]
        return self.rng.choice(v.forms)

    # slots

    def vslot(self, fact: str, v: _V, asserted: bool):
        """A slot filled lazily (only if a template uses it) with a value that states ``fact``."""

        def make() -> tuple[str, list]:
            s = self.surface(v)
            return s, [(s, (fact, v.key, asserted))]

        return make

    @staticmethod
    def plain(word: str) -> tuple[str, list]:
        return word, [(word, None)]

    def who_slot(self, rel: str):
        return lambda: self.who(rel)

    def who(self, rel: str) -> tuple[str, list]:
        rel_id = rel.replace(" ", "_")
        if rel in _PARENTS:
            return f"my {rel}", [(rel, None)]
        name = self.cast[rel]
        s = self.surface(name)
        mention = (f"{rel_id}.name", name.key, True)
        if self.rng.random() < 0.7:
            return f"my {rel} {s}", [(rel, None), (s, mention)]
        return f"{s} (my {rel})", [(s, mention), (rel, None)]

    # exchanges

    def exchange(self, pair: tuple, fill: dict, connector: bool = True) -> dict:
        utpl, replies = pair
        if isinstance(replies, str):
            replies = (replies,)
        used = _slots_of((utpl,) + tuple(replies))
        fill = {k: (v() if callable(v) else v) for k, v in fill.items() if k in used}
        user, uvals, ments = _render(utpl, fill)
        first = utpl.split()[0].rstrip(":,!")
        if (connector and not utpl.startswith("{") and first not in _NO_CONNECTOR
                and self.rng.random() < 0.25):
            user = self.rng.choice(_CONNECTORS) + _lower_first(user)
        reply, avals, _ = _render(self.rng.choice(replies), fill)
        return {"user": user, "uvals": uvals, "ments": ments, "asst": reply, "avals": avals}

    # the plan

    def pattern(self, kind: str, n_sessions: int) -> list[str]:
        allowed = _K[kind]["events"]
        top = min(n_sessions, 4)
        length = self.rng.choices(range(2, top + 1), weights=[3, 4, 2][: top - 1])[0]
        events = ["init"]
        pending = False
        held = 1
        for step in range(1, length):
            last = step == length - 1
            if pending:
                e = self.rng.choice(["done", "cancel"])
                pending = False
            else:
                opts, weights = ["switch"], [4]
                if not last and "plan" in allowed:
                    opts.append("plan")
                    weights.append(5)
                if held >= 2 and "revert" in allowed and events[-1] != "revert":
                    opts.append("revert")
                    weights.append(3)
                e = self.rng.choices(opts, weights=weights)[0]
                pending = e == "plan"
            if e in ("switch", "done"):
                held += 1
            events.append(e)
        return events

    def build(self) -> User:
        rng = self.rng
        n_sessions = rng.randint(MIN_SESSIONS, MAX_SESSIONS)
        # which facts this user has
        kinds = list(CHANGING_KINDS)
        rng.shuffle(kinds)
        chosen: list[str] = []
        want = rng.randint(6, 7)
        for k in kinds:
            if len(chosen) == want:
                break
            if any(k in pair and (pair[0] in chosen or pair[1] in chosen) for pair in _EXCLUSIVE):
                continue
            chosen.append(k)
        controls = rng.sample(list(CONTROL_KINDS), 3)
        rels = rng.sample(list(_NAMED_RELS), 3)
        self.cast = {rel: self.draw(_REL_POOL.get(rel, "name")) for rel in rels}
        for rel, name in self.cast.items():
            self.final[f"{rel.replace(' ', '_')}.name"] = name
        people = rels + list(_PARENTS)

        sessions: list[list[dict]] = [[] for _ in range(n_sessions)]

        # changing facts
        for kind in chosen:
            spec = _K[kind]
            events = self.pattern(kind, n_sessions)
            slots = sorted(rng.sample(range(n_sessions), len(events)))
            cur = self.draw(spec["pool"])
            pending = None
            history = [cur]
            for event, s in zip(events, slots, strict=True):
                pair = self.pick(spec[event])
                fill = {"term": self.plain(self.term)}
                if event == "init":
                    fill["v"] = self.vslot(kind, cur, True)
                elif event == "plan":
                    pending = self.next_value(kind, cur)
                    fill["new"] = self.vslot(kind, pending, False)
                    fill["cur"] = self.vslot(kind, cur, True)
                elif event in ("done", "switch", "revert"):
                    if event == "done":
                        new = pending
                    elif event == "switch":
                        new = self.next_value(kind, cur)
                    else:
                        new = rng.choice([v for v in history if v.key != cur.key])
                    fill["new"] = self.vslot(kind, new, True)
                    fill["cur"] = self.vslot(kind, cur, False)
                    cur = new
                    if all(v.key != new.key for v in history):
                        history.append(new)
                else:  # cancel
                    fill["new"] = self.vslot(kind, pending, False)
                    fill["cur"] = self.vslot(kind, cur, True)
                sessions[s].append(self.exchange(pair, fill))
            self.final[kind] = cur

        # controls, sometimes mentioned twice
        for kind in controls:
            spec = _C[kind]
            fact = f"{self.species}.name" if kind == "pet" else kind
            v = self.draw(spec["pool"])
            self.final[fact] = v
            times = 2 if rng.random() < 0.3 and n_sessions > 1 else 1
            for s in sorted(rng.sample(range(n_sessions), times)):
                pair = self.pick(spec["state"])
                fill = {"v": self.vslot(fact, v, True), "species": self.plain(self.species)}
                sessions[s].append(self.exchange(pair, fill))

        # distractors about other people
        user_attrs = [a for a in OTHER_ATTRS if a in chosen]
        other_attrs = [a for a in OTHER_ATTRS if a not in chosen]
        done_pairs: list[str] = []
        for _ in range(rng.randint(3, 5)):
            for _try in range(20):
                near = user_attrs and (rng.random() < 0.55 or not other_attrs)
                attr = rng.choice(user_attrs if near else other_attrs)
                rel = rng.choice(people)
                fact = f"{rel.replace(' ', '_')}.{attr}"
                if fact not in done_pairs and not (rel in _PARENTS and attr == "partner"):
                    break
            else:
                continue
            done_pairs.append(fact)
            v = self.draw(_O[attr]["pool"])
            self.final[fact] = v
            pair = self.pick(_O[attr]["say"])
            fill = {"v": self.vslot(fact, v, True), "who": self.who_slot(rel)}
            sessions[rng.randrange(n_sessions)].append(self.exchange(pair, fill))

        # help requests, small talk
        helps = list(_HELP)
        rng.shuffle(helps)
        for s in range(n_sessions):
            for _ in range(rng.randint(1, 2)):
                sessions[s].append(self.exchange(helps.pop(), {}, connector=False))
            while len(sessions[s]) < 4:
                sessions[s].append(self.exchange(helps.pop(), {}, connector=False))
        for _ in range(rng.randint(0, 2)):
            pair = self.pick(_HELP_WHO)
            fill = {"who": self.who_slot(rng.choice(rels))}
            sessions[rng.randrange(n_sessions)].append(self.exchange(pair, fill, connector=False))

        turns = self.lay_out(sessions)
        questions = self.questions(turns, chosen, controls, people)
        return User(self.user_id, turns, questions)

    def lay_out(self, sessions: list[list[dict]]) -> list[Turn]:
        rng = self.rng
        turns: list[Turn] = []
        when = datetime(2023, 1, 1) + timedelta(days=rng.randint(0, 600))
        for s, exchanges in enumerate(sessions, start=1):
            if s > 1:
                when = when.replace(hour=0, minute=0) + timedelta(days=rng.randint(3, 40))
            when = when.replace(hour=rng.randint(7, 22), minute=rng.randint(0, 59))
            period = "morning" if when.hour < 12 else "afternoon" if when.hour < 18 else "evening"
            rng.shuffle(exchanges)
            greet = self.pick(_GREET_USER[period] + _GREET_USER["any"])
            items = [{"user": greet, "uvals": [], "ments": [], "asst": self.pick(_GREET_ASSISTANT[period]), "avals": []}]
            items += exchanges
            if rng.random() < 0.75:
                u, a = self.pick(_CLOSE)
                items.append({"user": u, "uvals": [], "ments": [], "asst": a, "avals": []})
            clock = when
            for i, item in enumerate(items):
                stamp = clock.strftime("%Y-%m-%dT%H:%M")
                facts = tuple(dict.fromkeys(m[0] for m in item["ments"]))
                turns.append(Turn("user", item["user"], s, stamp, 2 * i, facts, tuple(item["uvals"])))
                turns.append(Turn("assistant", item["asst"], s, stamp, 2 * i + 1, (), tuple(item["avals"])))
                self._mentions[(s, 2 * i)] = item["ments"]
                clock += timedelta(minutes=rng.randint(1, 3))
        return turns

    # questions

    def _text(self, tpl: str, fill: dict) -> tuple[str, tuple[str, ...]]:
        text, values, _ = _render(tpl, fill)
        wrap = "{q}" if self.rng.random() < 0.45 else self.pick(_Q_WRAP)
        return wrap.format(q=text, ql=_lower_first(text)), tuple(values)

    def _rel_fill(self, rel: str, allow_name: bool) -> dict:
        if allow_name and rel in self.cast and self.rng.random() < 0.4:
            s = self.surface(self.cast[rel])
            return {"rel": (f"{rel} {s}", [(rel, None), (s, None)])}
        return {"rel": self.plain(rel)}

    def questions(self, turns: list[Turn], chosen: list[str], controls: list[str],
                  people: list[str]) -> list[Question]:
        rng = self.rng
        stated = [m[0] for ments in self._mentions.values() for m in ments]
        # (fact, template list, fill) for every memory question candidate
        memory: list[tuple[str, list[str], dict]] = []
        for kind in chosen:
            memory.append((kind, _K[kind]["ask"], {"term": self.plain(self.term)}))
        for kind in controls:
            fact = f"{self.species}.name" if kind == "pet" else kind
            memory.append((fact, _C[kind]["ask"], {"species": self.plain(self.species)}))
        others = [f for f in self.final if "." in f and f.split(".")[1] in _O]
        mentioned_rels = [r for r in people if any(f.startswith(r.replace(" ", "_") + ".") for f in stated)]
        if others:
            fact = rng.choice(others)
            rel = _rel_of(fact)
            memory.append((fact, _O[fact.split(".")[1]]["ask"], self._rel_fill(rel, True)))
        named = [r for r in mentioned_rels if r in self.cast]
        if named:
            rel = rng.choice(named)
            memory.append((f"{rel.replace(' ', '_')}.name", _REL_NAME_ASK, self._rel_fill(rel, False)))
        extra = sorted(chosen, key=lambda k: -len(self._fact_keys(k)))
        i = 0
        n_memory = QUESTIONS_PER_USER - UNANSWERABLE_PER_USER
        while len(memory) < n_memory:
            kind = extra[i % len(extra)]
            memory.append((kind, _K[kind]["ask"], {"term": self.plain(self.term)}))
            i += 1
        memory = memory[:n_memory]

        out: list[tuple[str, str, str, tuple, tuple, tuple, tuple]] = []
        asked: dict[str, list[str]] = {}
        for fact, templates, fill in memory:
            free = [t for t in templates if t not in asked.get(fact, [])] or templates
            tpl = rng.choice(free)
            asked.setdefault(fact, []).append(tpl)
            text, values = self._text(tpl, fill)
            final = self.final[fact]
            stale: list[str] = []
            for key in self._fact_keys(fact):
                if key != final.key:
                    stale.extend(aliases(key))
            evidence = tuple(pos for pos, ments in self._mentions.items()
                             if (fact, final.key, True) in ments)
            out.append(("memory", fact, text, final.aliases, tuple(stale), evidence, values))

        for fact, tpl, fill in self.unanswerable(stated, chosen, controls, people, mentioned_rels):
            text, values = self._text(tpl, fill)
            out.append(("unanswerable", fact, text, (), (), (), values))

        rng.shuffle(out)
        return [Question(key=f"{self.user_id}-q{i:02d}", user_id=self.user_id, fact=fact, text=text,
                         kind=kind, answers=answers, stale=stale, evidence=evidence, values=values)
                for i, (kind, fact, text, answers, stale, evidence, values) in enumerate(out)]

    def _fact_keys(self, fact: str) -> list[str]:
        keys: list[str] = []
        for ments in self._mentions.values():
            for f, key, _ in ments:
                if f == fact and key not in keys:
                    keys.append(key)
        return keys

    def unanswerable(self, stated, chosen, controls, people, mentioned_rels):
        rng = self.rng
        groups: dict[str, list[tuple[str, str, dict]]] = {"other": [], "name": [], "self": [], "ctrl": []}
        # another attribute of someone who was mentioned
        for rel in mentioned_rels:
            rid = rel.replace(" ", "_")
            for attr in OTHER_ATTRS:
                fact = f"{rid}.{attr}"
                if fact not in stated and not (rel in _PARENTS and attr == "partner"):
                    tpl = rng.choice(_O[attr]["ask"])
                    groups["other"].append((fact, tpl, self._rel_fill(rel, True)))
        # the name of a relation next to one that was mentioned, or of a parent
        for rel in mentioned_rels:
            near = _REL_PAIR.get(rel, rel)  # a parent's name is never told
            if near not in mentioned_rels or near in _PARENTS:
                groups["name"].append((f"{near.replace(' ', '_')}.name", rng.choice(_REL_NAME_ASK),
                                       {"rel": self.plain(near)}))
        # the user's own facts never told
        near_kinds = [f.split(".")[1] for f in stated if "." in f]
        for kind in CHANGING_KINDS:
            if kind not in chosen:
                tpl = rng.choice(_K[kind]["ask"])
                entry = (kind, tpl, {"term": self.plain(self.term)})
                groups["self"].append(entry)
                if kind in near_kinds:  # a distractor of the same kind: weigh it up
                    groups["self"].extend([entry, entry])
        for kind in CONTROL_KINDS:
            if kind == "pet":
                species = rng.choice([s for s in _SPECIES if s != self.species])
                if kind in controls or rng.random() < 0.5:
                    groups["ctrl"].append((f"{species}.name", rng.choice(_C["pet"]["ask"]),
                                           {"species": self.plain(species)}))
            elif kind not in controls:
                groups["ctrl"].append((kind, rng.choice(_C[kind]["ask"]), {}))
        picked: list[tuple[str, str, dict]] = []
        order = ["other", "name", "self", rng.choice(["ctrl", "other", "self"])]
        for g in order + ["ctrl", "other", "self", "name"]:
            if len(picked) == UNANSWERABLE_PER_USER:
                break
            options = [c for c in groups[g] if c[0] not in [p[0] for p in picked]]
            if options:
                picked.append(rng.choice(options))
        return picked


def _rel_of(fact: str) -> str:
    return fact.split(".")[0].replace("_", " ")


def _slots_of(templates: tuple[str, ...]) -> list[str]:
    """The slot names that ``templates`` use."""
    used: list[str] = []
    for tpl in templates:
        for m in _SLOT.finditer(tpl):
            name = "who" if m.group(2) == "Who" else m.group(2)
            if name not in used:
                used.append(name)
    return used


def generate(seed: int, users: int = 5) -> list[User]:
    """``users`` users, each with 3-5 sessions and ``QUESTIONS_PER_USER`` questions."""
    master = random.Random(seed)
    out = []
    for n in range(users):
        rng = random.Random(master.getrandbits(64))
        out.append(_UserGen(rng, f"changes-{seed}-{n:02d}").build())
    return out

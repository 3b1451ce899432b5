"""A seeded generator of multi-session conversations in which a user states personal facts.

Each user talks to an assistant over four dated sessions. The user states facts (their dog's
name, their job, their sister's birthday...), and the assistant acknowledges them, mostly
without repeating the fact ("Noted!", "What a lovely name!"). Around the facts: small talk,
near-miss distractors (a neighbour's dog, a brother's car), and in the last session a few facts
updated (moved city, new job), where the latest must win. Then questions, asked in a fresh
session: each names the fact it wants, its current value, and the stale value when there is one.

The generator is deterministic for a seed and never tuned toward any method: the templates
below were written once, before any method was run on them. The evaluation seed and the
seeds used for tuning or training are kept apart (see ``SEEDS``).
"""

from __future__ import annotations

import random
import re
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from typing import Any

#: Which seeds are for what. Reported figures use ``eval``; settings may be chosen on ``dev``;
#: the training data of ``recall train`` uses ``train`` (never the other two).
SEEDS = {"eval": 20261124, "dev": 7, "train": 1000}

NAMES = (
    "Biscuit Pepper Mochi Zorro Juniper Waffles Pickles Nimbus Clementine Bramble Tofu Pistachio Marlowe "
    "Ziggy Hazel Bagel Orion Sprocket Truffle Dumpling Nacho Pumpkin Basil Gizmo"
).split()
PEOPLE = (
    "Ana Beatriz Ilse Marguerite Priya Sofia Yara Noor Greta Thandi Ines Mirela Odette Keiko Zuzana "
    "Teodor Ravi Mateus Anselm Bruno Emeka Lorcan Kasimir Tobias Joaquim Viggo"
).split()
CITIES = (
    "Porto Ghent Tartu Bergen Lyon Aarhus Graz Bilbao Trieste Utrecht Krakow Cork Leuven Turku Braga "
    "Kaunas Ljubljana Innsbruck Malmo Dundee"
).split()
JOBS = (
    "nurse,lighthouse keeper,carpenter,pharmacist,tram driver,florist,geologist,translator,beekeeper,"
    "librarian,architect,sommelier,locksmith,radiographer,bookbinder,cartographer"
).split(",")
#: Workplaces, and the words an answer must hold to name each.
WORKPLACES = {
    "a bakery called Crumbs": "Crumbs", "the Berlenga lighthouse": "Berlenga", "a bike shop called Spokes": "Spokes",
    "the Riverside clinic": "Riverside", "a small museum of clocks": "museum", "an observatory on the hill": "observatory",
    "a ferry company called Bluewave": "Bluewave", "the town archive": "archive",
    "a vineyard called Quinta Alta": "Quinta Alta", "a puppet theatre": "puppet",
}
CARS = ("Lada Niva,Saab 900,Citroen 2CV,Volvo 240,Fiat Panda,Skoda Octavia,Renault Twingo,Mini Cooper,"
        "Subaru Forester,Toyota Corolla").split(",")
COLOURS = "green,red,yellow,blue,orange,white,purple,black".split(",")
FOODS = ("pierogi,ramen,moussaka,falafel,paella,pho,gnocchi,bibimbap,goulash,empanadas,laksa,risotto"
         ).split(",")
INSTRUMENTS = "bassoon,cello,banjo,harp,trombone,accordion,ukulele,oboe,mandolin,clarinet".split(",")
ALLERGIES = "peanuts,shellfish,kiwi,sesame,penicillin,cats,pollen,strawberries,walnuts,latex".split(",")
BANDS = ("The Paper Kites,Portishead,Fleet Foxes,Khruangbin,Beach House,Bonobo,Air,Alt-J,Daughter,"
         "Phoenix").split(",")
HOBBIES = ("rock climbing,sailing,birdwatching,pottery,fencing,orienteering,kayaking,archery,"
           "geocaching,salsa dancing").split(",")
LANGUAGES = "Finnish,Korean,Portuguese,Icelandic,Swahili,Polish,Greek,Turkish,Dutch,Hungarian".split(",")
BOOKS = ("Moby-Dick,Middlemarch,Dune,Stoner,Solaris,Rebecca,Ulysses,Beloved,Persuasion,Kindred").split(",")
MONTHS = "January February March April May June July August September October November December".split()


@dataclass(frozen=True)
class Slot:
    """One kind of personal fact: how a user states it, how it is asked, and its near misses."""

    name: str
    pool: tuple[str, ...]
    statements: tuple[str, ...]
    questions: tuple[str, ...]
    distractors: tuple[str, ...] = ()
    updates: tuple[str, ...] = ()


def _dates() -> tuple[str, ...]:
    return tuple(f"{day} {month}" for month in MONTHS for day in (3, 9, 14, 21, 27))


def _cars() -> tuple[str, ...]:
    return tuple(f"{colour} {car}" for car in CARS for colour in COLOURS)


SLOTS: tuple[Slot, ...] = (
    Slot("dog", tuple(NAMES),
         ("My dog is called {v}.", "I adopted a puppy last week and named him {v}.", "Our dog {v} chewed my shoes again."),
         ("What is my dog's name?", "What did I name my dog?"),
         ("My neighbour's dog is called {d}.", "My friend just got a dog named {d}.")),
    Slot("cat", tuple(NAMES),
         ("My cat is called {v}.", "I have a grumpy old cat named {v}."),
         ("What is my cat's name?", "What is my cat called?"),
         ("My sister's cat is called {d}.",)),
    Slot("city", tuple(CITIES),
         ("I live in {v}.", "I've been living in {v} for a few years now."),
         ("Which city do I live in?", "Where do I live?"),
         ("My cousin lives in {d}.", "My parents live in {d}."),
         ("I moved to {v} last month.", "Big news: we moved to {v}.")),
    Slot("job", tuple(JOBS),
         ("I work as a {v}.", "I'm a {v} by profession."),
         ("What is my job?", "What do I do for a living?"),
         ("My brother works as a {d}.",),
         ("I started a new job as a {v}.", "I changed careers, I'm a {v} now.")),
    Slot("workplace", tuple(WORKPLACES),
         ("I work at {v}.", "My office is at {v}."),
         ("Where do I work?", "Which place do I work at?"),
         ("My wife works at {d}.",)),
    Slot("sister", tuple(PEOPLE),
         ("My sister's name is {v}.", "I have a younger sister called {v}."),
         ("What is my sister's name?", "What is my sister called?"),
         ("My best friend's sister is called {d}.",)),
    Slot("sister_birthday", _dates(),
         ("My sister's birthday is on {v}.", "Don't let me forget: my sister's birthday is {v}."),
         ("When is my sister's birthday?",),
         ("My mother's birthday is on {d}.",)),
    Slot("car", _cars(),
         ("I drive a {v}.", "My car is an old {v}."),
         ("What car do I drive?", "What kind of car do I have?"),
         ("My brother drives a {d}.", "My neighbour just bought a {d}."),
         ("I sold my old car and bought a {v}.",)),
    Slot("food", tuple(FOODS),
         ("My favourite food is {v}.", "I could eat {v} every single day."),
         ("What is my favourite food?",),
         ("My husband loves {d}.",)),
    Slot("instrument", tuple(INSTRUMENTS),
         ("I play the {v}.", "I've been taking {v} lessons since spring."),
         ("Which instrument do I play?", "What instrument am I learning to play?"),
         ("My daughter plays the {d}.",)),
    Slot("allergy", tuple(ALLERGIES),
         ("I'm allergic to {v}.", "I have to avoid {v}, I'm allergic."),
         ("What am I allergic to?",),
         ("My son is allergic to {d}.",)),
    Slot("partner", tuple(PEOPLE),
         ("My partner is called {v}.", "My partner {v} and I met at university."),
         ("What is my partner's name?", "What is my partner called?"),
         ("My colleague's partner is called {d}.",)),
    Slot("band", tuple(BANDS),
         ("My favourite band is {v}.", "I've been listening to {v} all week, they're my favourite band."),
         ("What is my favourite band?", "Which band do I like most?"),
         ("My roommate is obsessed with {d}.",)),
    Slot("hometown", tuple(CITIES),
         ("I grew up in {v}.", "I was born and raised in {v}."),
         ("Where did I grow up?", "What is my hometown?"),
         ("My grandmother grew up in {d}.",)),
    Slot("hobby", tuple(HOBBIES),
         ("On weekends I go {v}.", "My favourite hobby is {v}."),
         ("What do I do on weekends?", "What is my hobby?"),
         ("My uncle is really into {d}.",)),
    Slot("language", tuple(LANGUAGES),
         ("I'm learning {v}.", "I started {v} classes in the evenings."),
         ("Which language am I learning?",),
         ("My flatmate is learning {d}.",),
         ("I switched from my old language classes to {v}.",)),
    Slot("book", tuple(BOOKS),
         ("My favourite book is {v}.", "I've read {v} five times, it's my favourite book."),
         ("What is my favourite book?",),
         ("My book club is reading {d} this month.",)),
    Slot("son", tuple(PEOPLE),
         ("My son is called {v}.", "My son {v} just started school."),
         ("What is my son's name?",),
         ("My neighbour's son is called {d}.",)),
    Slot("anniversary", _dates(),
         ("Our wedding anniversary is on {v}.", "We got married on {v}, so that's our anniversary."),
         ("When is our wedding anniversary?",),
         ("My parents' anniversary is on {d}.",)),
    Slot("colour", tuple(COLOURS),
         ("My favourite colour is {v}.", "I paint everything {v}, it's my favourite colour."),
         ("What is my favourite colour?",),
         ("My sister's favourite colour is {d}.",)),
)

ACKS = (
    "Noted!", "That's lovely to hear.", "Thanks for sharing that.", "Good to know!", "How nice!",
    "Got it.", "That sounds wonderful.", "Oh, interesting!", "I'll keep that in mind.", "That's great.",
    "What a lovely detail.", "Sounds like a good life.",
)
SMALL_TALK = (
    ("How are you today?", "I'm doing well, thank you! How can I help?"),
    ("The weather is awful today.", "Sorry to hear that. A warm drink might help."),
    ("Any tips for sleeping better?", "Try keeping a regular schedule and avoiding screens before bed."),
    ("I'm so tired after this week.", "That sounds exhausting. I hope you can rest this weekend."),
    ("Can you recommend a good stretch for my back?", "A gentle cat-cow stretch often helps."),
    ("What's a quick dinner idea?", "A vegetable stir-fry with rice is quick and healthy."),
    ("I watched a great documentary yesterday.", "Nice! Documentaries can be really inspiring."),
    ("Do you like rainy days?", "Rainy days can be cosy, especially with a good book."),
    ("I need to clean my flat this weekend.", "Putting on some music can make cleaning more fun."),
    ("What's a good way to start running?", "Start slowly, alternating walking and jogging."),
    ("I'm thinking of repainting my kitchen.", "That sounds like a fun project."),
    ("Tell me something interesting.", "Octopuses have three hearts."),
)
GREETINGS = ("Hi again!", "Hello!", "Good morning!", "Hey, it's me.")
FAREWELLS = (("Thanks, talk later.", "Bye! Talk soon."), ("That's all for today.", "Have a great day!"))


@dataclass(frozen=True)
class Turn:
    """One turn of a generated conversation; ``fact`` names the slot a user turn states."""

    role: str
    content: str
    session: int
    date: str
    index: int
    fact: str | None = None
    version: int = 0
    distractor: str | None = None


@dataclass(frozen=True)
class Question:
    """A question asked in a fresh session about one of the user's facts."""

    key: str
    user_id: str
    slot: str
    text: str
    answer: str
    stale: str | None = None
    #: The turn (session, index) that states the current value: the memory that holds the fact.
    evidence: tuple[int, int] = (0, 0)


@dataclass
class User:
    """One user's conversation and the questions about it."""

    user_id: str
    turns: list[Turn] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)

    def sessions(self) -> list[list[Turn]]:
        grouped: dict[int, list[Turn]] = {}
        for turn in self.turns:
            grouped.setdefault(turn.session, []).append(turn)
        return [grouped[k] for k in sorted(grouped)]


def generate(seed: int, users: int = 12, facts: int = 17, updates: int = 3, distractors: int = 6,
             small_talk: int = 8, sessions: int = 4) -> list[User]:
    """``users`` conversations of ``sessions`` dated sessions each, deterministic for ``seed``.

    Every user states ``facts`` facts spread over the first ``sessions - 1`` sessions, sees
    ``distractors`` near misses and ``small_talk`` exchanges of small talk, and updates
    ``updates`` facts in the last session. One question per fact.
    """
    if sessions < 2:
        raise ValueError(f"sessions must be >= 2 (facts, then updates), got {sessions}")
    if not 1 <= facts <= len(SLOTS):
        raise ValueError(f"facts must be in [1, {len(SLOTS)}], got {facts}")
    rng = random.Random(seed)
    return [_user(rng, f"user-{seed}-{n:02d}", facts, updates, distractors, small_talk, sessions) for n in range(users)]


def _user(rng: random.Random, user_id: str, n_facts: int, n_updates: int, n_distractors: int,
          n_small_talk: int, n_sessions: int) -> User:
    slots = rng.sample(SLOTS, n_facts)
    values = {s.name: rng.choice(s.pool) for s in slots}
    updatable = [s for s in slots if s.updates]
    updated = rng.sample(updatable, min(n_updates, len(updatable)))
    new_values = {s.name: rng.choice([v for v in s.pool if v != values[s.name]]) for s in updated}
    can_distract = [s for s in slots if s.distractors]
    with_distractor = rng.sample(can_distract, min(n_distractors, len(can_distract)))

    # What each session says, as (kind, slot) events, then shuffled within the session.
    events: list[list[tuple[str, Slot | None]]] = [[] for _ in range(n_sessions)]
    for slot in slots:
        events[rng.randrange(n_sessions - 1)].append(("fact", slot))
    for slot in with_distractor:
        events[rng.randrange(n_sessions)].append(("distractor", slot))
    for slot in updated:
        events[n_sessions - 1].append(("update", slot))
    for _ in range(n_small_talk):
        events[rng.randrange(n_sessions)].append(("small", None))

    day = datetime(2024, 1, 8) + timedelta(days=rng.randrange(0, 200))
    user = User(user_id)
    for number, session_events in enumerate(events, start=1):
        rng.shuffle(session_events)
        if number > 1:
            day += timedelta(days=rng.randint(9, 30))
        date = (day + timedelta(hours=8, minutes=rng.randrange(720))).isoformat(timespec="minutes")
        lines: list[tuple[str, str, str | None, int, str | None]] = []
        hello = rng.choice(GREETINGS)
        lines.append(("user", hello, None, 0, None))
        lines.append(("assistant", "Hello! Good to hear from you.", None, 0, None))
        for kind, slot in session_events:
            if kind == "small":
                question, answer = rng.choice(SMALL_TALK)
                lines += [("user", question, None, 0, None), ("assistant", answer, None, 0, None)]
            elif kind == "fact":
                said = rng.choice(slot.statements).format(v=values[slot.name])
                lines += [("user", said, slot.name, 1, None), ("assistant", rng.choice(ACKS), None, 0, None)]
            elif kind == "update":
                said = rng.choice(slot.updates).format(v=new_values[slot.name])
                lines += [("user", said, slot.name, 2, None), ("assistant", rng.choice(ACKS), None, 0, None)]
            else:
                other = rng.choice([v for v in slot.pool if v not in (values[slot.name], new_values.get(slot.name))])
                said = rng.choice(slot.distractors).format(d=other)
                lines += [("user", said, None, 0, slot.name), ("assistant", rng.choice(ACKS), None, 0, None)]
        lines += list(zip(("user", "assistant"), rng.choice(FAREWELLS), (None, None), (0, 0), (None, None), strict=True))
        for index, (role, content, fact, version, distractor) in enumerate(lines):
            user.turns.append(Turn(role, content, number, date, index, fact, version, distractor))

    for slot in slots:
        current = 2 if slot.name in new_values else 1
        evidence = next(t for t in user.turns if t.fact == slot.name and t.version == current)
        user.questions.append(
            Question(
                key=f"{user_id}#{slot.name}", user_id=user_id, slot=slot.name, text=rng.choice(slot.questions),
                answer=new_values.get(slot.name, values[slot.name]),
                stale=values[slot.name] if slot.name in new_values else None,
                evidence=(evidence.session, evidence.index),
            )
        )
    return user


# -- scoring ---------------------------------------------------------------------------------


def _normal(text: str) -> str:
    return " " + re.sub(r"[^a-z0-9]+", " ", text.lower()).strip() + " "


_DATE = re.compile(r"^(\d{1,2}) (" + "|".join(MONTHS) + r")$")


def contains(answer: str, value: str) -> bool:
    """Whether ``answer`` names ``value`` (whole words, case and punctuation ignored).

    A car (``"green Lada Niva"``) is named by its make and model; a workplace by its
    distinctive words (``WORKPLACES``); a date (``"14 March"``) by its day and month in either
    order ("March 14th" counts).
    """
    text = _normal(answer)
    if value in WORKPLACES:
        return _normal(WORKPLACES[value]) in text
    date = _DATE.match(value)
    if date:
        day, month = date.groups()
        return f" {month.lower()} " in text and re.search(rf" {day}(st|nd|rd|th)? ", text) is not None
    words = value.split()
    if len(words) > 1 and words[0].lower() in COLOURS:
        value = " ".join(words[1:])
    return _normal(value) in text


def score(question: Question, answer: str) -> dict[str, bool]:
    """``correct``: the answer names the current value; ``stale``: it names the old value and not the new."""
    correct = contains(answer, question.answer)
    stale = bool(question.stale) and contains(answer, question.stale or "") and not correct
    return {"correct": correct, "stale": stale}


def as_dict(users: list[User]) -> list[dict[str, Any]]:
    return [{"user_id": u.user_id, "turns": [asdict(t) for t in u.turns],
             "questions": [asdict(q) for q in u.questions]} for u in users]

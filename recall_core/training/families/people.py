"""people: the user's relatives, friends, colleagues and neighbours, each with a name and attributes.

Every user has a cast of 6 to 8 people, each known by a relation ("my aunt", "my boss") and, for
most of them, a first name. People carry attributes of the same few kinds (job, city, pet, hobby,
birthday month, car, what they study), so facts are near misses of each other: the aunt's job is
never the cousin's job. Some people are introduced by name in one turn and described by name only
in a later session; a few attributes change (a move, a new job, a new car), leaving stale values.
Strangers' relatives (the hairdresser's uncle...) add near-miss distractors.

Sizes: ``generate(seed, users)`` returns ``users`` users; each has 3 to 5 sessions and exactly
20 questions, 16 "memory" and 4 "unanswerable".

Fact ids: ``"<relation>.<kind>"``, e.g. ``"brother_in_law.job"``, ``"aunt.name"``; distractors
about strangers use ``"other<k>.<kind>"`` and are never asked about.
"""

from __future__ import annotations

import random
import re
import string
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from recall_core.training.families.base import Question, Turn, User, names, normal

NAME = "people"
DESCRIPTION = (
    "A crowd of relatives, friends and colleagues with overlapping attribute kinds (job, city, pet, "
    "hobby, birthday, car, studies); ask one person's attribute by relation or by name, or a relation's name."
)

QUESTIONS_PER_USER = 20
UNANSWERABLE_PER_USER = 4
MEMORY_PER_USER = QUESTIONS_PER_USER - UNANSWERABLE_PER_USER

# ------------------------------------------------------------------------------------------------
# text pieces that carry value strings


class S:
    """A piece of text plus the value strings inserted in it."""

    __slots__ = ("text", "values")

    def __init__(self, text: str, values: tuple[str, ...] = ()) -> None:
        self.text = text
        self.values = tuple(values)


def _v(text: str) -> S:
    return S(text, (text,))


def _cap(x):
    if isinstance(x, S):
        return S(x.text[:1].upper() + x.text[1:], x.values)
    return x[:1].upper() + x[1:]


_FMT = string.Formatter()


def _fill(template: str, slots: dict) -> tuple[str, list[str]]:
    """Fill ``template``; ``{Foo}`` is the capitalised ``foo``. Returns the text and its values."""
    out: list[str] = []
    values: list[str] = []
    for literal, name, _spec, _conv in _FMT.parse(template):
        out.append(literal)
        if name is None:
            continue
        if name in slots:
            piece = slots[name]
        else:
            piece = _cap(slots[name[:1].lower() + name[1:]])
        if isinstance(piece, S):
            out.append(piece.text)
            values.extend(piece.values)
        else:
            out.append(piece)
    return "".join(out), values


# ------------------------------------------------------------------------------------------------
# vocabularies


@dataclass(frozen=True)
class Val:
    text: str  # the form inserted in sentences
    a: str  # with its article ("a paramedic"); equals text where none applies
    forms: tuple[str, ...]  # acceptable ways to name it (first is text)


def _art(phrase: str) -> tuple[str, str]:
    art, _, rest = phrase.partition(" ")
    return rest, phrase


def _pool(rows) -> list[Val]:
    out = []
    for row in rows:
        if isinstance(row, str):
            row = (row,)
        head, *aliases = row
        if head.startswith(("a ", "an ")):
            text, a = _art(head)
        else:
            text, a = head, head
        out.append(Val(text, a, (text, *aliases)))
    return out


JOBS = _pool([
    "a paramedic", "a quantity surveyor", "a dental hygienist", "a tattoo artist",
    ("an air traffic controller", "air traffic control"), "a sous chef", "an actuary", "a midwife",
    "a locksmith", ("a veterinary nurse", "vet nurse"), "a sommelier", "a landscape gardener",
    "a radiographer", "a structural engineer", "a pharmacist", "a bus driver", "a patent lawyer",
    "a speech therapist", "a wedding photographer", "a crane operator", "a translator",
    ("a physiotherapist", "physio"), "a probation officer", "a stage manager",
    ("a glassblower", "glass blower"), "an optician", "a park ranger", "a piano tuner",
    ("a firefighter", "fire fighter"), "a UX designer", "a florist", "an occupational therapist",
    "a social worker", "a sound engineer", "an archivist", "a tree surgeon", "a train conductor",
    "a hospital porter", ("a games tester", "game tester"), "a cheesemonger", "a driving instructor",
    "a forensic accountant", "a toxicologist", "a town planner", "a pastry chef", "a zookeeper",
])

CITIES = _pool([
    "Lisbon", "Porto", "Leeds", "Glasgow", "Aberdeen", "Rotterdam", "Ghent", "Bergen", "Gdansk",
    "Valencia", "Bilbao", "Lyon", "Marseille", "Bologna", "Trieste", "Tallinn", ("Krakow", "Cracow"),
    "Winnipeg", "Adelaide", "Hobart", "Dunedin", "Galway", "Nairobi", "Accra", "Kyoto",
    "Osaka", "Montreal", "Vancouver", ("Seville", "Sevilla"), "Utrecht", ("Gothenburg", "Goteborg"),
    "Reykjavik", "Ljubljana", "Bristol", "Norwich", "Inverness", "Swansea", "Belfast", "Edinburgh",
    "Copenhagen", ("Munich", "Munchen"), "Leipzig", "Antwerp", "Zagreb", "Vilnius", "Hamburg",
    "Toulouse", ("Naples", "Napoli"), "Cape Town", "Melbourne", "Brisbane", "Auckland", "Toronto",
])

PETS = _pool([
    "a bearded dragon", "a greyhound", "a ferret", "a cockatiel", "an axolotl",
    ("a dachshund", "sausage dog"), "a Maine Coon", ("a border collie", "collie"),
    ("a lop-eared rabbit", "rabbit", "bunny"), ("a corn snake", "snake"), "a tortoise", "a pug",
    ("a Siamese cat", "Siamese"), ("an African grey parrot", "African grey", "parrot"),
    "a hedgehog", "a chinchilla", "a whippet", "a cockapoo", ("a Shiba Inu", "Shiba"),
    ("a leopard gecko", "gecko"), "a tarantula", "a Dalmatian", ("a sphynx cat", "sphynx"),
    ("a miniature pig", "pig"), ("a Bernese mountain dog", "Bernese"),
])

PET_NAMES = [
    "Biscuit", "Noodle", "Pickle", "Waffles", "Gizmo", "Mochi", "Pudding", "Sprout", "Bramble",
    "Dumpling", "Pretzel", "Marmalade", "Custard", "Nugget", "Crumpet", "Ziggy", "Bagel", "Gnocchi",
    "Pippin", "Tofu", "Kipper", "Sherbet", "Momo", "Fudge", "Wasabi", "Chutney",
]

HOBBIES = _pool([
    "bouldering", ("pottery", "ceramics"), ("kitesurfing", "kite surfing"),
    ("birdwatching", "bird watching", "birding"), "fencing", ("salsa dancing", "salsa"),
    ("woodturning", "wood turning"), "orienteering", ("crochet", "crocheting"), "archery",
    ("amateur astronomy", "astronomy", "stargazing"), ("bell ringing", "bell-ringing"),
    "roller derby", "calligraphy", "geocaching", ("lindy hop", "swing dancing"),
    ("open-water swimming", "open water swimming", "wild swimming"), "beekeeping", "chess",
    ("sea kayaking", "kayaking"), "taxidermy", ("metal detecting", "metal-detecting"),
    ("improv comedy", "improv"), ("ballroom dancing", "ballroom"), "embroidery", "falconry",
    ("cross-stitch", "cross stitch"), "ice skating", "life drawing", "fly fishing",
])

MONTHS = _pool([
    "January", "February", "March", "April", "June", "July", "August", "September", "October",
    "November", "December",
])

CARS = _pool([
    ("a Skoda Octavia", "Octavia", "Skoda"), ("a Volvo XC40", "XC40", "Volvo"),
    ("a Fiat Panda", "Fiat"), ("a Toyota Prius", "Prius", "Toyota"), ("a Nissan Leaf", "Nissan"),
    ("a Land Rover Defender", "Land Rover", "Defender"), ("a Kia Niro", "Niro", "Kia"),
    ("a Mazda MX-5", "MX-5", "Mazda"), ("a Honda Jazz", "Honda"), ("a Renault Clio", "Clio", "Renault"),
    ("a Volkswagen Polo", "VW Polo", "Volkswagen"), ("a Tesla Model 3", "Tesla"),
    ("a Citroen Berlingo", "Berlingo", "Citroen"), ("a Subaru Outback", "Outback", "Subaru"),
    ("a Dacia Duster", "Duster", "Dacia"), ("a Peugeot 208", "Peugeot"),
    ("a Jeep Wrangler", "Wrangler", "Jeep"), ("a Ford Fiesta", "Fiesta", "Ford"),
    ("a Hyundai Ioniq", "Ioniq", "Hyundai"), ("a Mini Cooper",), ("a BMW i3", "BMW"),
    ("a Vauxhall Corsa", "Corsa", "Vauxhall"), ("an Audi A4", "Audi"),
])

STUDIES = _pool([
    "marine biology", "architecture", "veterinary medicine", "criminology", "mechanical engineering",
    "linguistics", "art history", "nursing", "pharmacology", "film studies", "game design",
    "Japanese", "statistics", "philosophy", "musicology", "dentistry", "geology",
    ("accountancy", "accounting"), "anthropology", "astrophysics", "Mandarin",
    ("viticulture", "winemaking"), "zoology", "economics", "fashion design", "civil engineering",
    "midwifery", "oceanography",
])

POOLS = {
    "job": JOBS, "city": CITIES, "pet": PETS, "hobby": HOBBIES, "birthday": MONTHS,
    "car": CARS, "study": STUDIES,
}
KINDS = ("job", "city", "pet", "hobby", "birthday", "car", "study")
KIND_WEIGHT = {"job": 4, "city": 4, "pet": 2, "hobby": 3, "birthday": 2, "car": 3, "study": 3}
CHANGEABLE = ("job", "city", "car", "hobby", "study")

FEMALE = [
    "Ingrid", "Marisol", "Dagny", "Fenella", "Rosalind", "Thandiwe", "Saoirse", "Imogen", "Anouk",
    "Radhika", "Cosima", "Elodie", "Henrike", "Oksana", "Teodora", "Ksenia", "Zainab", "Niamh",
    "Siobhan", "Esperanza", "Birgit", "Sunniva", "Folake", "Haruka", "Ngozi", "Leila", "Farah",
    "Ottilie", "Ines", "Valentina", "Signe", "Priya", "Beatriz", "Ayesha", "Malin", "Greta",
    "Lucinda", "Yevgenia", "Wilhelmina", "Clementine", "Agnieszka", "Magdalena",
]
MALE = [
    "Kwame", "Tomasz", "Ignacio", "Bartek", "Leopold", "Yusuf", "Hamish", "Matteo", "Benedikt",
    "Wiremu", "Dmitri", "Florian", "Aurelio", "Idris", "Lorcan", "Ewan", "Callum", "Joaquin",
    "Ayodele", "Chidi", "Kenji", "Minh", "Tariq", "Gideon", "Otis", "Hugo", "Santiago", "Halvard",
    "Torsten", "Magnus", "Emeka", "Rohan", "Anders", "Lachlan", "Cormac", "Thiago", "Mehmet",
    "Barnaby", "Percival", "Wojciech", "Rafferty", "Alessandro",
]
NICKS = {
    "Wilhelmina": "Mina", "Clementine": "Clem", "Agnieszka": "Aga", "Magdalena": "Magda",
    "Yevgenia": "Zhenya", "Barnaby": "Barney", "Percival": "Percy", "Wojciech": "Wojtek",
    "Rafferty": "Raff", "Alessandro": "Sandro",
}

ALL_KINDS = KINDS
JOBBY = ("job", "city", "pet", "hobby", "birthday", "car")
YOUNG = ("city", "pet", "hobby", "birthday", "study")
ELDER = ("city", "pet", "hobby", "birthday", "car")
WORKMATE = ("city", "pet", "hobby", "birthday", "car")


@dataclass(frozen=True)
class Rel:
    key: str
    label: str
    gender: str  # "m", "f", or "x" (either)
    aliases: tuple[str, ...]
    kinds: tuple[str, ...]


RELATIONS = [
    Rel("aunt", "aunt", "f", ("aunt", "auntie"), JOBBY),
    Rel("uncle", "uncle", "m", ("uncle",), JOBBY),
    Rel("cousin", "cousin", "x", ("cousin",), ALL_KINDS),
    Rel("brother_in_law", "brother-in-law", "m", ("brother-in-law",), JOBBY),
    Rel("sister_in_law", "sister-in-law", "f", ("sister-in-law",), JOBBY),
    Rel("sister", "sister", "f", ("sister",), ALL_KINDS),
    Rel("brother", "brother", "m", ("brother",), ALL_KINDS),
    Rel("niece", "niece", "f", ("niece",), YOUNG),
    Rel("nephew", "nephew", "m", ("nephew",), YOUNG),
    Rel("gran", "gran", "f", ("gran", "grandmother", "grandma", "granny", "nan"), ELDER),
    Rel("grandad", "grandad", "m", ("grandad", "granddad", "grandfather", "grandpa"), ELDER),
    Rel("boss", "boss", "x", ("boss", "manager"), WORKMATE),
    Rel("neighbour", "neighbour", "x", ("neighbour", "neighbor"), JOBBY),
    Rel("best_friend", "best friend", "x", ("best friend",), ALL_KINDS),
    Rel("flatmate", "flatmate", "x", ("flatmate", "housemate", "roommate"), ALL_KINDS),
    Rel("stepdad", "stepdad", "m", ("stepdad", "stepfather", "step-dad"), JOBBY),
    Rel("stepmum", "stepmum", "f", ("stepmum", "stepmother", "step-mum", "stepmom"), JOBBY),
    Rel("mother_in_law", "mother-in-law", "f", ("mother-in-law",), JOBBY),
    Rel("father_in_law", "father-in-law", "m", ("father-in-law",), JOBBY),
    Rel("godson", "godson", "m", ("godson",), YOUNG),
    Rel("goddaughter", "goddaughter", "f", ("goddaughter",), YOUNG),
]
REL_BY_KEY = {r.key: r for r in RELATIONS}
PARTNER = {
    "aunt": "uncle", "uncle": "aunt", "sister": "brother", "brother": "sister", "niece": "nephew",
    "nephew": "niece", "brother_in_law": "sister_in_law", "sister_in_law": "brother_in_law",
    "gran": "grandad", "grandad": "gran", "stepdad": "stepmum", "stepmum": "stepdad",
    "mother_in_law": "father_in_law", "father_in_law": "mother_in_law", "godson": "goddaughter",
    "goddaughter": "godson",
}

PRONOUNS = {
    "m": {"he": "he", "him": "him", "his": "his", "hes": "he's", "hed": "he'd"},
    "f": {"he": "she", "him": "her", "his": "her", "hes": "she's", "hed": "she'd"},
}

# ------------------------------------------------------------------------------------------------
# user sentences. Slots: who / whos (the person, possessive), he him his hes hed, and values.

INTRO = [
    ("Had a long lunch with my {rel} {name} yesterday. We hadn't properly caught up in ages.",
     ["Long lunches are the best kind of catch-up! Was it good to see {name} after so long?",
      "That sounds lovely. What did you and {name} end up talking about?"]),
    ("My {rel} {name} rang me at eleven last night purely to talk about a TV show. Classic {name}.",
     ["Ha, a late-night call just to discuss telly! Which show has {name} hooked?"]),
    ("Just so you've got the cast list straight: {name} is my {rel}. {He} comes up a lot.",
     ["Got it, thanks for the context! Always happy to hear how {name} is getting on."]),
    ("{name}, my {rel}, is coming to stay for two nights and I haven't even changed the sheets.",
     ["You've still got time! Fresh sheets and a spare towel go a long way. Anything fun planned "
      "with {name} while {he}'s there?"]),
    ("Got a voice note from my {rel} {name} this morning that was literally nine minutes long.",
     ["Nine minutes! That's practically a podcast episode. Was it good news from {name}, at least?"]),
    ("I owe my {rel} {name} a call. {He}'s left me two messages this week and I keep forgetting.",
     ["Maybe pick a time tonight and set a reminder? I'm sure {name} will just be glad to hear from you."]),
    ("Spent the afternoon helping my {rel}, {name}, build a wardrobe. Three hours, two leftover screws.",
     ["The mysterious leftover screws are a flat-pack tradition! Nice of you to help {name} out, "
      "hopefully the wardrobe is still standing."]),
    ("Bumped into {name} at the supermarket (that's my {rel}, by the way) and we ended up chatting "
     "by the frozen peas for half an hour.",
     ["The frozen aisle catch-up is a classic! Nice that you and {name} got a proper chat in."]),
]
INTRO_NICK = [
    ("My {rel} is {name}, though nobody's called {him} that since school. It's {nick} to everyone.",
     ["{nick} it is, then! Thanks for the heads-up."]),
    ("Went for a walk by the river with my {rel} {name} ({nick} to pretty much everyone) this morning.",
     ["A morning walk by the river sounds perfect. How's {nick} doing?"]),
]

STATE = {
    "job": [
        "{Who} just landed a job as {job_a}! {He}'s been applying for months, so it's a massive relief.",
        "Did I ever mention {who} works as {job_a}? Means {he}'s never free when the rest of us are.",
        "{Whos} {job} job sounds so intense. I honestly don't know how {he} does it.",
        "Found out last week that {who} is {job_a}. All these years and I had no clue!",
        "{Who} has been {job_a} for about a decade and somehow still loves it.",
        "{Who} retrained during lockdown and {hes} {job_a} now. Suits {him} perfectly.",
        "Fun fact about {who}: {hes} {job_a}. People never guess.",
    ],
    "city": [
        "{Who} lives out in {city}, so I only get to see {him} a couple of times a year.",
        "{Who} just moved to {city} for a fresh start. Brave!",
        "{Whos} flat in {city} has the most ridiculous view, I'm so jealous.",
        "{Who} has been living in {city} for years now and says {he}'s never leaving.",
        "I might finally visit {who} in {city} this summer. {Hes} lived there for ages and I've never been.",
    ],
    "pet": [
        "{Who} has {pet_a} called {petname} who basically runs the whole household.",
        "{Who} just adopted {pet_a}! It's called {petname} and it's already ruling the roost.",
        "{Whos} {pet}, {petname}, eats better than I do. No exaggeration.",
        "Went round to {whos} place and finally met {petname}, {his} {pet}. Instantly obsessed.",
        "{Who} sent me about forty photos of {his} {pet} {petname} today. Not complaining.",
    ],
    "hobby": [
        "{Who} has got seriously into {hobby} lately. It's all {he} talks about.",
        "{Who} took up {hobby} this year and is annoyingly good at it already.",
        "Apparently {whos} big passion is {hobby}. Who knew!",
        "{Who} keeps trying to drag me along to {hobby} and I keep inventing excuses.",
        "{Whos} whole weekend revolves around {hobby} these days.",
    ],
    "birthday": [
        "{Whos} birthday is in {month}, so I should probably start thinking about a present.",
        "{Who} is a {month} baby and never lets anyone forget it.",
        "Writing this down before I forget: {whos} birthday is the {day} of {month}.",
        "{Who} has a big birthday coming up in {month} and is already talking about a party.",
    ],
    "car": [
        "{Who} just bought {car_a} and is ridiculously proud of it.",
        "{Who} drives {car_a} that sounds like a tractor on cold mornings.",
        "{Who} picked me up from the station in {his} {car} yesterday. Very smooth ride.",
        "{Whos} {car} broke down on the motorway again, poor thing.",
        "{Who} finally passed {his} driving test and bought {car_a} the same week.",
    ],
    "study": [
        "{Who} is studying {study} at uni and seems to actually enjoy it.",
        "{Who} just started a degree in {study}. The reading list is enormous.",
        "{Who} is doing a part-time master's in {study} on top of everything else.",
        "{Who} has exams coming up. Second year of {study} is no joke, apparently.",
        "{Who} got a place to do {study}! The offer came through this morning.",
    ],
}

CHANGE = {
    "job": [
        "Big news from {who}: {he} quit being {old_job_a} and started as {job_a} this week.",
        "{Who} has finally packed in the {old_job} work. {Hes} {job_a} now!",
        "{Who} switched careers, can you believe it? {Hes} working as {job_a} these days.",
        "Update on {who}: no longer {old_job_a}. {He} got taken on as {job_a} instead.",
    ],
    "city": [
        "{Who} has moved again! {Old_city} to {city} this time.",
        "{Who} left {old_city} last month, {hes} living in {city} now.",
        "Helped {who} load the van at the weekend: {hes} officially moved to {city}.",
        "Turns out {who} didn't last long in {old_city}. {Hes} relocated to {city}.",
    ],
    "car": [
        "{Who} finally got rid of the {old_car} and bought {car_a}.",
        "{Who} traded in {his} {old_car} for {car_a}. Very fancy.",
        "{Who} has a new car, {car_a}! The old one went to the scrapyard.",
    ],
    "hobby": [
        "{Who} has given up {old_hobby} and is all about {hobby} now.",
        "{Who} dropped {old_hobby}, apparently. The new obsession is {hobby}.",
        "No more {old_hobby} for {who}. {Hes} switched to {hobby}.",
    ],
    "study": [
        "{Who} switched courses and dropped {old_study} for {study}.",
        "{Who} is doing {study} now instead of {old_study}. Much happier, apparently.",
        "Turns out {who} changed degree. {Hes} studying {study} now.",
    ],
}

# assistant acknowledgements. Slots: ref (how the assistant names the person), he him his, values.
ACK = {
    "job": [
        "{Job_a}! That's a job with real responsibility. Does {he} enjoy it?",
        "Being {job_a} must keep {ref} busy. I bet {he} has some stories!",
        "Oh, that's interesting! What got {ref} into working as {job_a}?",
    ],
    "city": [
        "{City} is a lovely place! Have you been out to see {him} there?",
        "Ooh, {city}! If you ever plan a trip to see {ref}, I'm happy to help with an itinerary.",
        "Sounds like {city} suits {ref}. Is it far from you?",
    ],
    "pet": [
        "{Petname} sounds like a total character! {Pet_a} can have so much personality.",
        "Aww, {pet_a} called {petname}! Do you ever get to pet-sit?",
        "Ha, I love that. How is {petname} with visitors?",
    ],
    "hobby": [
        "{Hobby} is such a good way to switch off. Have you ever been tempted to join {him}?",
        "Good for {ref}! {Hobby} takes a lot of patience.",
        "That's brilliant. It's great when something like {hobby} really clicks for someone.",
    ],
    "birthday": [
        "A {month} birthday, so you've got a bit of time. Want some gift ideas nearer the date?",
        "{Month} it is! Does {ref} like a big fuss, or something low-key?",
        "Good call getting ahead of it. I can help brainstorm presents closer to {month} if you like.",
    ],
    "car": [
        "{Car_a}, nice! Is {he} enjoying driving it?",
        "Ah, the {car}! Hopefully it treats {him} well.",
        "Cars really do have personalities, don't they? I hope the {car} keeps going for {ref}.",
    ],
    "study": [
        "{Study} is a fascinating subject. What got {ref} interested in it?",
        "That's a lot of work, but {study} sounds really rewarding. Wishing {him} luck with it!",
        "Good for {ref}! Is {he} finding the {study} course manageable so far?",
    ],
}
ACK_CHANGE = {
    "job": [
        "What a change! Starting out as {job_a} takes guts. I hope it's going well for {him}.",
        "Good for {ref}! A new career as {job_a} is exciting. How's {he} finding it so far?",
    ],
    "city": [
        "Another move! I hope {ref} settles into {city} quickly.",
        "Moving is exhausting, so fingers crossed {city} is the place that sticks for {him}.",
    ],
    "car": [
        "New wheels! {Car_a} is quite an upgrade. Has {he} taken you for a spin yet?",
        "Out with the old! I hope the {car} is more reliable for {ref}.",
    ],
    "hobby": [
        "A whole new hobby! {Hobby} sounds like a fun change. What made {him} switch?",
        "Ha, fair enough. {Hobby} sounds like a good fit for {ref}.",
    ],
    "study": [
        "Switching courses is a big decision. I hope {study} feels like a better fit for {him}!",
        "It's brave to change direction. Fingers crossed {ref} loves {study}.",
    ],
}
MERGED_PREFIX = ["Lots of news! ", "Busy times for everyone! ", "Wow, a lot going on. "]
JOINERS = ["Oh, and ", "Also, ", "And while I think of it, ", "Other news: "]

# strangers' near-miss facts. Slots: drel (a relation word), values.
DISTRACT = {
    "job": [
        ("Chatting to my hairdresser today, and it turns out her {drel} is {job_a}. I had so many questions.",
         "Hairdressers always have the best stories! Sounds like you got a good chat out of it."),
        ("The guy who came to fix the boiler said his {drel} works as {job_a}. He talked the entire time.",
         "Ha, a chatty repair visit! At least the boiler's sorted, I hope."),
    ],
    "city": [
        ("The woman next to me on the train was telling me her {drel} just moved to {city}.",
         "Train conversations can be surprisingly fun! {City} is supposed to be lovely."),
        ("My dentist spent the whole check-up talking about her {drel}'s new place in {city}. I could only nod.",
         "The classic dentist chat, where you can't reply! Hope the check-up went well otherwise."),
    ],
    "pet": [
        ("There's a man at my gym who shows everyone photos of his {drel}'s {pet}.",
         "Ha! A {pet} is a pretty good conversation starter, to be fair."),
        ("Our postie told me her {drel} has {pet_a} called {petname}. Made my morning.",
         "That's adorable. {Petname} is a brilliant name."),
    ],
    "hobby": [
        ("Someone at work was showing off videos of their {drel} doing {hobby}. Looked terrifying.",
         "{Hobby} can look intense from the outside! Would you ever give it a go?"),
    ],
    "car": [
        ("A bloke in the car park was bragging that his {drel} drives {car_a}. Okay, mate.",
         "Car park bragging, a proud tradition! {Car_a} is a nice car, to be fair."),
    ],
    "study": [
        ("The barista said her {drel} just started studying {study}. She seemed so proud.",
         "That's sweet. {Study} is a great subject to get into."),
    ],
    "birthday": [
        ("The cashier at the bakery said it's her {drel}'s birthday in {month}, and she's already stressed about the cake.",
         "Ha, a bakery worker stressed about a cake! I'm sure it'll be a good one."),
    ],
}

SMALL = [
    ("Random question: why do cats knead blankets?",
     "It's a leftover kitten behaviour. Kittens knead while feeding, and adult cats keep doing it when "
     "they feel safe and relaxed, so it's usually a sign of contentment."),
    ("How long do I boil an egg if I want a jammy yolk?",
     "About six and a half minutes once it goes into boiling water, then straight into cold water to "
     "stop it cooking. Seven minutes if you like it a touch firmer."),
    ("Any tips for falling asleep when my brain just won't switch off?",
     "A few things help: keep a notepad by the bed to offload your thoughts, keep the room cool, and "
     "try slow breathing, in for four and out for six. If you're still awake after twenty minutes, "
     "get up and do something dull in dim light."),
    ("What's actually the difference between baking soda and baking powder?",
     "Baking soda is pure bicarbonate and needs an acid in the recipe, like yoghurt or lemon, to react. "
     "Baking powder already has the acid mixed in, so it works on its own."),
    ("Give me a stretch I can do at my desk without looking weird?",
     "Try a seated twist: sit tall, put your right hand on the back of the chair and gently turn right "
     "for five slow breaths, then switch sides. Very subtle!"),
    ("How do I get candle wax out of a tablecloth?",
     "Let it harden, scrape off what you can, then lay a paper towel over the spot and press with a "
     "warm iron. The paper soaks up the wax; repeat with fresh paper until it's gone."),
    ("What's a polite way to say no to a wedding invite?",
     "Keep it short and warm: thank them for including you, say you're sorry you can't make it, and "
     "wish them a wonderful day. A card or a small gift is a nice touch."),
    ("Can you suggest a quick dinner? I've got eggs, spinach and some sad-looking feta.",
     "That's a frittata waiting to happen! Wilt the spinach, pour in beaten eggs, crumble the feta on "
     "top, cook gently until nearly set, then finish under the grill for a couple of minutes."),
    ("How often should I actually water a spider plant?",
     "Not often! Every two to three weeks is plenty, less in winter. Let the soil dry out completely "
     "between waterings, since overwatering is what usually kills them."),
    ("Why does my homemade bread always come out so dense?",
     "Usually it's under-proofing or not enough kneading. Let the dough rise until it's roughly doubled, "
     "knead until it's smooth and springy, and check your yeast isn't out of date."),
    ("Any ideas for a rainy Sunday that don't involve a screen?",
     "A jigsaw, a long bath with a book, batch-cooking soup for the week, or finally sorting that one "
     "drawer everyone has. Baking is good too: lots of waiting around with tea."),
    ("Can you draft a short email to my landlord about a dripping kitchen tap?",
     "Sure: \"Hi, I wanted to let you know the kitchen tap has started dripping constantly. Could you "
     "arrange for someone to take a look this week? I'm around most evenings. Thanks!\""),
    ("How do I stop my glasses fogging up when I wear a scarf?",
     "Tuck the scarf under the bridge of your glasses rather than over it, or try an anti-fog wipe. A "
     "tiny bit of washing-up liquid rubbed on and buffed off works surprisingly well too."),
    ("Is it weird that I've rewatched the same sitcom for three months straight?",
     "Not at all! Rewatching something familiar is comforting and takes zero effort, which is exactly "
     "what a lot of people need after a long day."),
]

HELP = [
    ("Could you help me write a short thank-you message to {name}? {He} really helped me out last week.",
     "Of course! How about: \"Hi {name}, just wanted to say a huge thank you for last week. You really "
     "didn't have to, and it meant a lot. Next coffee's on me!\" Tweak the tone as you like."),
    ("I want to cook something nice for {name} on Friday. Any ideas for a veggie main that isn't risotto?",
     "How about a roasted squash and feta galette? It looks impressive, most of it can be prepped "
     "ahead, and a simple green salad is all it needs. A mushroom and chestnut pie is another winner."),
    ("{name} and I had a silly argument about nothing. What could I text to smooth it over?",
     "Something short and warm usually works: \"Hey {name}, sorry about earlier, I was being a grump. "
     "Fancy a coffee this week?\" Keeping it light helps."),
    ("I need to cancel plans with {name} tomorrow and I feel awful. Help me word it?",
     "Try: \"Hi {name}, I'm really sorry but I have to cancel tomorrow. Can we rearrange for next "
     "week? I'd still love to see you.\" Offering a new date shows you still care."),
    ("What's a good little present for {name}, just to say thanks? Under twenty quid ideally.",
     "A few ideas: a bag of good coffee or loose-leaf tea, a nice notebook, a secondhand book you "
     "think {hed} enjoy, or a small plant. A handwritten note makes it feel personal."),
]

GREET = [
    ("Hey! Hope your day's going okay.", "Hi! It's going well, thanks for asking. What's on your mind?"),
    ("Morning! Coffee in hand, ready to go.", "Good morning! Coffee is always a good start. What can I help with?"),
    ("Evening. Finally sat down after a mad day.", "Evening! Glad you've got a moment to yourself. How can I help?"),
    ("Hi again!", "Hi, welcome back! What's up?"),
    ("Hello hello. Got a few minutes to chat?", "Always! What would you like to talk about?"),
    ("Hiya, it's me again.", "Hiya! Nice to hear from you. What's going on?"),
]
GREET_PREFIX = [("Hey! ", "Hi! "), ("Morning! ", "Good morning! "), ("Hi again. ", "Hello again! "),
                ("Evening! ", "Evening! ")]
CLOSE = [
    ("Anyway, that's me for now. Thanks!", "Any time! Enjoy the rest of your day."),
    ("Right, I'd better get on. Cheers for the chat.", "Cheers! Talk soon."),
    ("Okay, off to make dinner. Bye for now!", "Enjoy your dinner! Bye for now."),
]

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
# the cast


@dataclass
class Person:
    rel: Rel
    gender: str
    name: str
    nick: str | None
    named: bool
    attrs: dict = field(default_factory=dict)  # kind -> current Val
    old: dict = field(default_factory=dict)  # kind -> earlier Val, for changed facts
    petname: str = ""
    day: str = ""

    @property
    def key(self) -> str:
        return self.rel.key

    def fact(self, kind: str) -> str:
        return f"{self.rel.key}.{kind}"

    def name_forms(self) -> tuple[str, ...]:
        return (self.name, self.nick) if self.nick else (self.name,)


def _compatible(a: str, b: str) -> bool:
    na, nb = normal(a), normal(b)
    return na not in nb and nb not in na


def _take(rng: random.Random, items, forms_of, taken: list[str]):
    pool = list(items)
    rng.shuffle(pool)
    for item in pool:
        forms = forms_of(item)
        if all(_compatible(f, t) for f in forms for t in taken):
            taken.extend(forms)
            return item
    raise RuntimeError("vocabulary exhausted")


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _cast(rng: random.Random, taken: list[str]) -> list[Person]:
    size = rng.randint(6, 8)
    rels = rng.sample(RELATIONS, size)
    unnamed = set(rng.sample(range(size), rng.choice([0, 1, 1, 2])))
    people = []
    for i, rel in enumerate(rels):
        gender = rel.gender if rel.gender != "x" else rng.choice("mf")
        name = _take(rng, FEMALE if gender == "f" else MALE, lambda n: (n, *((NICKS[n],) if n in NICKS else ())), taken)
        people.append(Person(rel, gender, name, NICKS.get(name), i not in unnamed))
    for p in people:
        allowed = list(p.rel.kinds)
        n_kinds = rng.choice([2, 2, 3, 3, 3])
        kinds: list[str] = []
        while len(kinds) < n_kinds:
            left = [k for k in allowed if k not in kinds]
            kinds.append(rng.choices(left, [KIND_WEIGHT[k] for k in left])[0])
        for k in kinds:
            p.attrs[k] = _take(rng, POOLS[k], lambda v: v.forms, taken)
            if k == "pet":
                p.petname = _take(rng, PET_NAMES, lambda n: (n,), taken)
            if k == "birthday":
                p.day = _ordinal(rng.randint(1, 28))
    # changes: 2 or 3 facts get a newer value; the first one becomes the old value
    options = [(p, k) for p in people for k in p.attrs if k in CHANGEABLE]
    rng.shuffle(options)
    for p, k in options[: rng.choice([2, 3, 3])]:
        p.old[k] = p.attrs[k]
        p.attrs[k] = _take(rng, POOLS[k], lambda v: v.forms, taken)
    return people


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


# ------------------------------------------------------------------------------------------------


def _one_user(rng: random.Random, user_id: str) -> User:
    taken = [r.label for r in RELATIONS] + [a for r in RELATIONS for a in r.aliases]
    cast = _cast(rng, taken)
    turns, stmts = _conversation(rng, user_id, cast, taken)
    questions = _questions(rng, user_id, cast, stmts)
    return User(user_id=user_id, turns=turns, questions=questions)


def generate(seed: int, users: int = 5) -> list[User]:
    """``users`` users, each with 3 to 5 sessions and 20 questions (16 memory, 4 unanswerable)."""
    master = random.Random(seed)
    out = []
    for n in range(users):
        user_seed = master.randrange(2**63)
        # a rare dead end (vocabulary or facts short) is retried with the next derived seed
        for attempt in range(20):
            try:
                out.append(_one_user(random.Random(user_seed + attempt), f"people-{seed}-{n:02d}"))
                break
            except RuntimeError:
                continue
        else:
            raise RuntimeError("could not build a user")
    return out

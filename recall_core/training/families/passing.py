"""Facts said in passing: one personal detail tucked into a long, chatty user message.

Each fact-bearing user turn is 60-200 words of ordinary chat (a request for help, a rant, a
story) with ONE personal fact mentioned as an aside; some also carry a near-miss detail about
someone else (a neighbour's dog, a colleague's allergy). The assistant answers the main request
and mostly ignores the aside. A few facts change in a later session (a move, a new job, a new
car, a new sport, a different holiday). Questions come later, in a fresh session: about 80%
ask for something that was said, about 20% ask for something plausible that never was, usually
next to a distractor (the neighbour's cat was named, the user's cat never was).
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from recall_core.training.families.base import Question, Turn, User, normal

NAME = "passing"
DESCRIPTION = "personal facts mentioned as asides inside long chatty requests, with near-miss details about other people"

MIN_SESSIONS, MAX_SESSIONS = 3, 5
MIN_FACTS, MAX_FACTS = 14, 17
UNANSWERABLE_PER_USER = 4
MIN_WORDS, MAX_WORDS = 60, 200

# -- value pools -----------------------------------------------------------------------------------

MALE = [
    "Teodoro", "Bartek", "Kwame", "Dmitri", "Rafferty", "Yusuf", "Thiago", "Ishaan", "Caspian",
    "Wendell", "Emeka", "Lorcan", "Hamish", "Tobias", "Cosmo", "Florian", "Desmond", "Oisin",
    "Rupert", "Idris", "Kofi", "Bram", "Jasper", "Percival", "Ezra", "Anton", "Mateo", "Cyrus",
    "Lukas", "Farid", "Alistair", "Benedikt", "Ciaran", "Dario", "Evander", "Gideon", "Horatio",
    "Ilya", "Jonas", "Leander", "Magnus", "Nikhil", "Osric", "Quentin", "Rohan", "Stellan",
]
FEMALE = [
    "Ottilie", "Marisol", "Ingrid", "Saoirse", "Anouk", "Leocadia", "Freya", "Beatrix", "Noor",
    "Zofia", "Greta", "Priya", "Soraya", "Agnieszka", "Ines", "Lucinda", "Paloma", "Sunniva",
    "Matilda", "Valentina", "Esme", "Nadia", "Ylva", "Delphine", "Rosalind", "Harriet", "Elodie",
    "Imogen", "Clementine", "Aurelia", "Bronwen", "Cressida", "Dagny", "Elspeth", "Fenella",
    "Giedre", "Henrike", "Isolde", "Juniper", "Kalinda", "Liesel", "Mirela", "Nerys", "Odile",
]
OLD_FEMALE = [
    "Wilhelmina", "Dorothea", "Edna", "Mavis", "Philomena", "Hildegard", "Winifred", "Agatha",
    "Constance", "Eunice", "Myrtle", "Ethelwyn", "Gwendolyn", "Ludmila", "Ottoline",
]
OLD_MALE = ["Cuthbert", "Ambrose", "Reginald", "Bertram", "Lionel", "Mordecai", "Thaddeus", "Wilfred"]
PET_NAMES = [
    "Pickle", "Mungo", "Toffee", "Bramble", "Ziggy", "Figaro", "Pretzel", "Kipper", "Marmalade",
    "Gatsby", "Rocket", "Bilbo", "Sprout", "Crumpet", "Moose", "Gizmo", "Wombat", "Dobby",
    "Pistachio", "Bagel", "Ravioli", "Hobnob", "Clover", "Snickers", "Mochi", "Tinkerbell",
    "Brisket", "Parsnip", "Chewbacca", "Loki", "Bumble",
]
BREEDS = {
    "dog": ["whippet", "beagle", "border collie", "dachshund", "Staffy", "greyhound",
            "springer spaniel", "Labrador", "pug", "schnauzer", "husky", "lurcher"],
    "cat": ["tabby", "Maine Coon", "Siamese", "tortoiseshell", "Bengal", "ragdoll",
            "Russian Blue", "Burmese"],
    "rabbit": ["lop", "Netherland dwarf", "Rex", "lionhead", "Dutch rabbit", "Harlequin"],
}
HOMETOWNS = [
    "Galway", "Dundee", "Bendigo", "Ghent", "Tucson", "Bergen", "Aarhus", "Hobart", "Duluth",
    "Trieste", "Nantes", "Inverness", "Cork", "Leeuwarden", "Bozeman", "Whanganui",
    "Aberystwyth", "Timaru", "Tampere", "Ballarat", "Kilkenny", "Stavanger",
]
CITIES = [
    "Bristol", "Glasgow", "Melbourne", "Rotterdam", "Montreal", "Leipzig", "Portland",
    "Wellington", "Manchester", "Lyon", "Vancouver", "Utrecht", "Brighton", "Pittsburgh",
    "Adelaide", "Gothenburg", "Edinburgh", "Toronto", "Bologna", "Cardiff", "Antwerp", "Halifax",
]
DESTINATIONS = [
    "Lisbon", "Ljubljana", "Kyoto", "Marrakesh", "Tallinn", "Reykjavik", "Hanoi", "Cape Town",
    "Seville", "Crete", "Sicily", "Oaxaca", "Tbilisi", "Krakow", "Istanbul", "Buenos Aires",
    "Dubrovnik", "Hokkaido", "Zanzibar", "Vilnius", "Sardinia", "Montenegro",
]
EMPLOYERS = [
    ("Harbourline Ferries", "Harbourline"), ("Quillfeather Press", "Quillfeather"),
    ("Brightwater Optics", "Brightwater"), ("Mossgiel Dental Lab", "Mossgiel"),
    ("Kestrel Logistics", "Kestrel"), ("Thornbury Veterinary", "Thornbury"),
    ("Ardent Robotics", "Ardent"), ("Saltmarsh Brewing", "Saltmarsh"),
    ("Pemberton Insurance", "Pemberton"), ("Lantern Games", "Lantern"),
    ("Oakhurst Hospice", "Oakhurst"), ("Verdigris Architects", "Verdigris"),
    ("Tidewater Labs", "Tidewater"), ("Halloran Engineering", "Halloran"),
    ("Corvid Analytics", "Corvid"), ("Bellweather Foods", "Bellweather"),
    ("Fairlight Studios", "Fairlight"), ("Glenmorrow Distillery", "Glenmorrow"),
]
JOBS = [
    ("paramedic",), ("sound engineer",), ("court stenographer", "stenographer"),
    ("dental technician",), ("tree surgeon",), ("pharmacist",), ("landscape architect",),
    ("sommelier",), ("locksmith",), ("occupational therapist",), ("air traffic controller",),
    ("quantity surveyor",), ("bookbinder",), ("zookeeper",), ("midwife",), ("actuary",),
    ("lighting technician",), ("piano tuner",), ("museum conservator", "conservator"),
    ("sign language interpreter", "interpreter"),
]
CARS = [
    ("Volvo V70", "Volvo"), ("Honda Jazz", "Honda"), ("Fiat Panda", "Fiat"),
    ("Toyota Yaris", "Toyota", "Yaris"), ("Subaru Outback", "Subaru", "Outback"),
    ("Mazda MX-5", "Mazda", "MX-5"), ("Kia Picanto", "Kia", "Picanto"),
    ("Renault Clio", "Renault", "Clio"), ("Nissan Leaf", "Nissan"),
    ("Skoda Octavia", "Skoda", "Octavia"), ("Citroen Berlingo", "Citroen", "Berlingo"),
    ("Saab 9-3", "Saab"), ("Peugeot 208", "Peugeot"), ("Vauxhall Corsa", "Vauxhall", "Corsa"),
    ("Land Rover Defender", "Land Rover", "Defender"), ("Hyundai Ioniq", "Hyundai", "Ioniq"),
]
INSTRUMENTS = [
    ("cello",), ("ukulele",), ("bassoon",), ("banjo",), ("accordion",), ("harp",),
    ("trombone",), ("mandolin",), ("clarinet",), ("double bass",), ("oboe",), ("saxophone", "sax"),
    ("French horn",), ("viola",),
]
SPORTS = [
    ("bouldering",), ("rowing",), ("fencing",), ("roller derby", "derby"),
    ("ultimate frisbee", "frisbee"), ("open-water swimming", "swimming"), ("archery",),
    ("table tennis",), ("kayaking",), ("netball",), ("badminton",), ("water polo",), ("judo",),
    ("squash",), ("capoeira",), ("trail running",),
]
ALLERGENS = [
    ("cashews", "cashew"), ("shellfish",), ("kiwi", "kiwis"), ("sesame",), ("peanuts", "peanut"),
    ("walnuts", "walnut"), ("pistachios", "pistachio"), ("buckwheat",), ("lupin",),
    ("hazelnuts", "hazelnut"), ("prawns", "prawn"),
]
BODY_PARTS = [
    ("left knee", "knee"), ("right shoulder", "shoulder"), ("lower back",), ("left ankle", "ankle"),
    ("right wrist", "wrist"), ("left hip", "hip"), ("right elbow", "elbow"), ("left Achilles", "Achilles"),
]
COMFORT_FOODS = [
    ("shakshuka",), ("pierogi",), ("laksa",), ("khachapuri",), ("jollof rice", "jollof"),
    ("pho",), ("bibimbap",), ("moussaka",), ("gumbo",), ("tartiflette",), ("congee",),
    ("chilaquiles",), ("okonomiyaki",), ("cullen skink",), ("dal makhani",), ("ramen",),
]
LANGUAGES = [
    "Portuguese", "Korean", "Welsh", "Icelandic", "Tagalog", "Finnish", "Swahili", "Hungarian",
    "Catalan", "Vietnamese", "Hebrew", "Norwegian", "Basque", "Estonian",
]
DEGREES = [
    ("marine biology",), ("art history",), ("geology",), ("linguistics",), ("civil engineering",),
    ("philosophy",), ("astrophysics",), ("archaeology",), ("economics",), ("classics",),
    ("music technology",), ("anthropology",), ("zoology",), ("medieval history",),
]
COLLECTIONS = [
    ("fountain pens", "fountain pen"), ("enamel pins", "enamel pin"), ("vinyl records", "vinyl"),
    ("snow globes", "snow globe"), ("tin robots", "tin robot"), ("Polaroid cameras", "Polaroid"),
    ("vintage maps",), ("teapots", "teapot"), ("Lego minifigures", "minifigures"),
    ("typewriters", "typewriter"), ("seed packets",), ("cacti", "cactus"), ("matchbox cars",),
]
ORDINALS = {
    3: "third", 4: "fourth", 5: "fifth", 6: "sixth", 7: "seventh", 8: "eighth", 9: "ninth",
    10: "tenth", 11: "eleventh", 12: "twelfth", 14: "fourteenth", 15: "fifteenth",
}
MONTHS = [
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
]
SCHOOLS = ["St Aldhelm's", "Marlowe Academy", "Brookfield Primary", "Holloway Park School",
           "Larchwood Primary", "Copperfield Academy"]
UNIVERSITIES = ["Durham", "St Andrews", "McGill", "Leiden", "Uppsala", "Trinity College Dublin",
                "Monash", "Otago", "Aberdeen", "Heriot-Watt"]
AIRLINES = ["Aer Lingus", "Icelandair", "Finnair", "Vueling", "KLM", "Wizz Air", "Loganair",
            "Condor"]
COLOURS = ["mustard yellow", "teal", "lime green", "burgundy", "baby blue", "bright orange"]
BLOOD_TYPES = ["O negative", "AB positive", "B negative", "A positive"]
RENTS = ["£850", "£1,100", "£975", "$1,400", "£720", "$2,050"]
FILMS = ["Paddington 2", "The Princess Bride", "Groundhog Day", "Jurassic Park", "Spirited Away",
         "Hot Fuzz", "Moonstruck", "Local Hero"]
DATE_FORMS = ("{d} {m}", "{m} {d}", "{o} of {m}", "{m} {o}", "{o} {m}")


def _ordinal_suffix(n: int) -> str:
    if 10 <= n % 100 <= 20:
        return f"{n}th"
    return f"{n}" + {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


def _date_aliases(day: int, month: str) -> tuple[str, ...]:
    o = _ordinal_suffix(day)
    return tuple(f.format(d=day, m=month, o=o) for f in DATE_FORMS)


# -- helpers ----------------------------------------------------------------------------------------

_FMT = string.Formatter()


def fill(template: str, slots: dict[str, str]) -> tuple[str, list[str]]:
    """Format ``template``; return the text and the value strings inserted (slots not starting with _)."""
    out: list[str] = []
    values: list[str] = []
    for literal, name, _spec, _conv in _FMT.parse(template):
        out.append(literal)
        if name is None:
            continue
        v = slots[name]
        out.append(v)
        if not name.startswith("_") and v and v not in values:
            values.append(v)
    return "".join(out), values


def _tidy(text: str) -> str:
    while "  " in text:
        text = text.replace("  ", " ")
    return text.strip()


def _words(text: str) -> int:
    return len(text.split())


def _aliases(item) -> tuple[str, ...]:
    return item if isinstance(item, tuple) else (item,)


def _lower_first(q: str) -> str:
    first = q.split(" ", 1)[0]
    if first in ("What", "What's", "Where", "Where's", "Which", "When", "When's", "Who", "Who's",
                 "How", "Do", "Did", "Is", "Am"):
        return q[0].lower() + q[1:]
    return q


class Registry:
    """Values already used for one user; keeps every value (and alias) distinct as whole words."""

    def __init__(self) -> None:
        self.taken: list[str] = []

    def clashes(self, value: str) -> bool:
        n = normal(value)
        return any(n in t or t in n for t in self.taken)

    def add(self, *values: str) -> None:
        for v in values:
            self.taken.append(normal(v))

    def pick(self, rng: random.Random, pool):
        free = [p for p in pool if not any(self.clashes(a) for a in _aliases(p))]
        if not free:
            raise RuntimeError("value pool exhausted")
        choice = rng.choice(free)
        self.add(*_aliases(choice))
        return choice


@dataclass
class Ctx:
    rng: random.Random
    reg: Registry
    chosen: dict = field(default_factory=dict)  # kind key -> slots of the current value

    def name(self, gender: str) -> str:
        pool = MALE if gender == "m" else FEMALE
        return self.reg.pick(self.rng, pool)

    def anyone(self) -> tuple[str, str]:
        g = self.rng.choice(("m", "f"))
        return self.name(g), g

    def date(self) -> tuple[str, tuple[str, ...]]:
        while True:
            day = self.rng.randint(1, 28)
            month = self.rng.choice(MONTHS)
            aliases = _date_aliases(day, month)
            if not any(self.reg.clashes(a) for a in aliases):
                self.reg.add(*aliases)
                return self.rng.choice(aliases), aliases


def _pron(g: str) -> dict[str, str]:
    if g == "m":
        return {"_he": "he", "_He": "He", "_him": "him", "_his": "his"}
    return {"_he": "she", "_He": "She", "_him": "her", "_his": "her"}


def _article(word: str) -> str:
    return "an" if word[0].lower() in "aeiou" else "a"


# -- fact kinds -------------------------------------------------------------------------------------
# A body is (user template, assistant template, condition on slots or None). Templates may use
# {_near} where a near-miss remark about someone else can go, and {_ack} (assistant) for an
# optional acknowledgement of the aside.


@dataclass
class Kind:
    key: str
    make: Callable[[Ctx], dict]
    bodies: list
    q: list[str]
    c: list[str]
    n: list[str]
    acks: list[str] = field(default_factory=list)
    near: list[str] = field(default_factory=list)
    near_make: Callable[[Ctx, dict], dict] | None = None
    change: list = field(default_factory=list)
    change_make: Callable[[Ctx, dict], dict] | None = None
    group: str = ""


def _pet(ctx: Ctx) -> dict:
    species = ctx.rng.choice(("dog", "dog", "cat", "cat", "rabbit"))
    g = ctx.rng.choice(("m", "f"))
    pet = ctx.reg.pick(ctx.rng, PET_NAMES)
    breed = ctx.rng.choice(BREEDS[species])
    s = {"species": species, "pet": pet, "breed": breed, **_pron(g)}
    s.update(fact=f"{species}_name", answers=(pet,), value=pet)
    return s


def _pet_near(ctx: Ctx, s: dict) -> dict:
    return {"dpet": ctx.reg.pick(ctx.rng, PET_NAMES),
            "dbreed": ctx.rng.choice([b for b in BREEDS[s["species"]] if b != s["breed"]]),
            "species": s["species"]}


PET = Kind(
    key="pet",
    make=_pet,
    bodies=[
        ("Do you know anything about cordless vacuums? Mine died mid-hoover yesterday, naturally "
         "right as I got to the rug that {pet} treats as a personal shedding zone. For context, "
         "{pet} is a {breed} and the fur situation in this house is honestly biblical. {_near}I don't "
         "need anything fancy, I just want something that copes with hair on carpets, doesn't weigh "
         "a ton and won't need replacing in a year. What should I actually be looking at?",
         "{_ack}For a fur-heavy home I'd prioritise three things: a motorised brush head with an "
         "anti-tangle roller, a bin big enough that you're not emptying it every few minutes, and a "
         "washable filter. Run time matters less than people think if you do rooms in bursts. It's "
         "also worth checking that the brand sells replacement batteries, since that's usually the "
         "first part to go.", None),
        ("Could you help me write a note for a pet-sitter? I'm away for a long weekend and a friend's "
         "teenager is popping in twice a day to look after {pet}, my {breed}. {_He}'s fairly "
         "low-maintenance but has strong opinions about breakfast being late. {_near}I want the note "
         "friendly and clear without reading like a hostage negotiator's manual: feeding, water, "
         "where the spare key lives and who to ring if something goes wrong. Short enough to stick "
         "on the fridge, ideally.",
         "Here's a fridge-friendly version:\n\nHi, and thanks so much for looking after {pet}! "
         "Breakfast around 7, dinner around 6 (the portions are marked on the tub). Fresh water "
         "every visit, please. The spare key is wherever we agreed, and if anything seems off, ring "
         "me first, then the vet, whose number is on the board. Thank you!\n\nFeel free to swap in "
         "the real times and numbers.", None),
        ("Okay, I need a sanity check. I've been trying to get into running before work, and this "
         "morning I was out the door early feeling very smug, right up until {pet}, my {breed}, "
         "decided a squirrel was worth dragging me into a hedge for. Muddy leggings, bruised pride, "
         "the works. {_near}Anyway, what I actually wanted to ask: is it better to stretch before a "
         "run or after? I keep reading completely opposite advice and I'd like to not pull something "
         "in my first fortnight.",
         "{_ack}The current consensus is: warm up dynamically before (a brisk walk, leg swings, a few "
         "easy minutes of jogging) and save longer static stretches for afterwards, when your muscles "
         "are warm. Static stretching from cold doesn't do much to prevent injury and can make you "
         "feel sluggish. Build up slowly and you'll be fine.", lambda s: s["species"] == "dog"),
        ("Rant incoming. The council has shut the canal footpath for 'resurfacing' with zero warning, "
         "so my morning loop with {pet}, my {breed}, who is a creature of deep routine, is now a detour "
         "past a building site. {_He} sulked the whole way round. {_near}Meanwhile I'm meant to be "
         "hosting a little garden thing on Saturday and have no plan whatsoever. Could you give me "
         "three easy finger-food ideas I can make the night before?",
         "{_ack}Three make-ahead options: a tray of savoury palmiers (shop-bought puff pastry, pesto "
         "and cheese, sliced and baked), a big frittata cut into squares that's great at room "
         "temperature, and skewers of tomato, mozzarella and basil with a drizzle of balsamic. All "
         "three keep well overnight in the fridge.", lambda s: s["species"] == "dog"),
        ("Right, odd request. I'm working from home more and my desk setup is a disaster: laptop on a "
         "stack of cookbooks, neck permanently crunched. On top of that {pet}, my {breed}, has decided "
         "the keyboard is the warmest spot in the flat, so half my emails go out with extra letters in "
         "them. {_near}What's a cheap way to get the screen up to a sensible height, and is a separate "
         "keyboard worth buying?",
         "{_ack}Cheapest fix: a laptop stand (or a sturdy box) so the top of the screen sits roughly at "
         "eye level, plus a separate keyboard and mouse so your arms can stay low and relaxed. Yes, the "
         "keyboard is worth it; a basic wired one is inexpensive and transforms the setup.",
         lambda s: s["species"] == "cat"),
        ("Quick garden question. I'm putting in a couple of raised beds this weekend and want to grow "
         "herbs, but I need to know which ones are safe around a rabbit, because {pet}, my {breed}, has "
         "the run of the lawn in the afternoons and eats absolutely anything at nose height. {_near}Which "
         "herbs are fine for {_him} to nibble and which should I plant somewhere out of reach?",
         "{_ack}Generally safe for rabbits in moderation: basil, coriander, dill, mint, parsley and "
         "thyme. Keep things like chives and other alliums, and anything grown from bulbs, well out of "
         "reach. When in doubt, check with your vet, and introduce new greens gradually.",
         lambda s: s["species"] == "rabbit"),
    ],
    q=["What did I say my {species} is called?", "What's the name of my {species}?",
       "What name did I give my {species}?"],
    c=["what my {species} is called", "what my {species}'s name is"],
    n=["my {species}'s name"],
    acks=["{pet} sounds like a character! ", "Ha, poor you, and lucky {pet}. ",
          "A {breed} with opinions, I love it. "],
    near=["(My neighbour has a {dbreed} called {dpet} who is the exact opposite, for the record.) ",
          "My sister-in-law's {species}, {dpet}, stayed with us last month and it was chaos. "],
    near_make=_pet_near,
)


def _sibling(ctx: Ctx) -> dict:
    rel = ctx.rng.choice(("sister", "brother"))
    g = "f" if rel == "sister" else "m"
    sib = ctx.name(g)
    return {"rel": rel, "sib": sib, **_pron(g), "fact": f"{rel}_name", "answers": (sib,), "value": sib}


def _sibling_near(ctx: Ctx, s: dict) -> dict:
    dname = ctx.name("f")
    return {"rel": s["rel"], "dname": dname, "dsib": ctx.name("f" if s["rel"] == "sister" else "m")}


SIBLING = Kind(
    key="sibling",
    make=_sibling,
    bodies=[
        ("Can you help me write a birthday message that isn't just 'happy birthday, have a good one'? "
         "It's for my {rel} {sib}, who's turning forty and pretending not to care about it. We're close "
         "but we mostly communicate in sarcasm, so I want something a bit funny, a bit warm, and "
         "definitely nothing that could make anyone cry if it got read out. {_near}Two or three options "
         "would be great.",
         "{_ack}Here are three:\n1. \"Forty looks good on you. Suspiciously good. What's the secret?\"\n"
         "2. \"Happy birthday to the only person allowed to be this annoying to me. Love you, mostly.\"\n"
         "3. \"Another year older and still not as wise as me. Have a brilliant day.\"\nPick whichever "
         "sounds most like your voice.", None),
        ("So I finally caved and joined a book club, mostly because my {rel}, {sib}, kept sending me "
         "photos from theirs and it looked fun. First meeting is Thursday and the pick is a "
         "nine-hundred-page historical doorstop I've managed about eighty pages of. {_near}Is it "
         "terrible to turn up having only skimmed it? And any tips for sounding like I have opinions "
         "about a book I've half read?",
         "Not terrible at all, half the room will be in the same boat. Read the opening and closing "
         "chapters, skim a summary of the middle, and pick one character or scene you had a real "
         "reaction to. Asking good questions (\"did anyone else find the ending rushed?\") is often more "
         "welcome than having all the answers.", None),
        ("Weekend plans: helping my {rel} {sib} move flats, which in practice means me carrying a sofa "
         "down several flights of stairs while {_he} 'supervises'. {_near}Is there a trick to getting a "
         "big sofa round a tight stairwell corner without gouging the walls? I'd like to keep both my "
         "spine and {_his} deposit intact, and we can't afford proper movers this time.",
         "{_ack}A few tricks: take the feet and any removable cushions off first, wrap the corners in "
         "blankets, and try standing the sofa on its end to 'hook' it around the turn rather than "
         "carrying it flat. Measure the stairwell diagonal beforehand so you know which way will fit, "
         "and lift with your legs, not your back.", None),
    ],
    q=["What did I say my {rel}'s name was?", "What's my {rel} called, do you know?",
       "Who's my {rel} again, name-wise?"],
    c=["what my {rel} is called", "what my {rel}'s name is"],
    n=["my {rel}'s name"],
    acks=["That's a lovely thing to do for {sib}. ", "{sib} is lucky to have you. "],
    near=["Someone at work, {dname}, also has a {rel} called {dsib}, which caused chaos in a group chat "
          "last week. ",
          "(My neighbour {dname} says {dsib}, her own {rel}, is exactly the same.) "],
    near_make=_sibling_near,
)


def _partner(ctx: Ctx) -> dict:
    role = ctx.rng.choice(("husband", "wife", "partner", "girlfriend", "boyfriend"))
    g = {"husband": "m", "boyfriend": "m", "wife": "f", "girlfriend": "f"}.get(role) or ctx.rng.choice("mf")
    pname = ctx.name(g)
    return {"role": role, "pname": pname, **_pron(g), "fact": f"{role}_name", "answers": (pname,),
            "value": pname}


def _partner_near(ctx: Ctx, s: dict) -> dict:
    dname = ctx.name("f")
    return {"dname": dname, "dpname": ctx.anyone()[0]}


PARTNER = Kind(
    key="partner",
    make=_partner,
    bodies=[
        ("I need a dinner idea that's impressive but secretly easy. My {role}, {pname}, has had the week "
         "from hell at work and I want to do something nice on Friday without spending three hours in "
         "the kitchen and then being too tired to enjoy it. {_near}We both eat pretty much everything, "
         "but nothing too spicy please, {_he}'s a total wimp about chilli. Ideas?",
         "{_ack}Try a one-tray roast: chicken thighs, new potatoes, lemon, garlic and a few sprigs of "
         "rosemary, all in one dish for about 45 minutes. While it cooks, make a simple green salad and "
         "buy a good dessert. It looks generous, tastes great and leaves you with one tray to wash.",
         None),
        ("Bit of a tech support question. {pname}, my {role}, bought us one of those smart speakers and "
         "now it randomly starts playing jazz at two in the morning. Nobody asked it to. I'm fairly sure "
         "it's a routine one of us set up by accident, but I can't for the life of me find where those "
         "settings live in the app. {_near}Where would I even start looking?",
         "In most of these apps it's under a tab called something like Routines or Automations, often "
         "hidden in a 'More' menu. Look for anything with a time-based trigger around 2am and either "
         "delete it or switch it off. Also check for alarms set with music instead of a tone, which can "
         "look a lot like a phantom DJ.", None),
        ("Holiday admin is breaking me. {pname} and I, {pname} being my {role} for anyone keeping track, "
         "have wildly different ideas about packing: I'm a list person, {_he} is a chuck-it-all-in-the-"
         "night-before person. {_near}Could you give me a simple shared packing list we could both tick "
         "off on our phones, for a week somewhere warm? Nothing elaborate.",
         "{_ack}Here's a lean shared list: documents (passports, tickets, insurance), chargers and "
         "adaptors, toiletries, meds, sunscreen, swimwear, a light layer for evenings, comfy walking "
         "shoes, sunglasses, a reusable bottle. Put it in a shared notes app so you can both tick items "
         "off as they go in the bag.", None),
    ],
    q=["What did I say my {role}'s name was?", "What's my {role} called, do you know?"],
    c=["what my {role} is called", "what my {role}'s name is"],
    n=["my {role}'s name"],
    acks=["{pname} is lucky to have you! ", "That sounds like a lovely plan for {pname}. "],
    near=["My friend {dname} swears her other half, {dpname}, could sort this in five minutes, but "
          "I'm not asking. ",
          "(Our neighbour {dname} had the same problem and her fiance {dpname} gave up on it.) "],
    near_make=_partner_near,
)


def _child(ctx: Ctx) -> dict:
    crel = ctx.rng.choice(("daughter", "son"))
    g = "f" if crel == "daughter" else "m"
    kid = ctx.name(g)
    return {"crel": crel, "kid": kid, **_pron(g), "fact": f"{crel}_name", "answers": (kid,), "value": kid}


def _child_near(ctx: Ctx, s: dict) -> dict:
    dcrel = ctx.rng.choice(("daughter", "son"))
    return {"dname": ctx.name("f"), "dcrel": dcrel, "dkid": ctx.name("f" if dcrel == "daughter" else "m")}


CHILD = Kind(
    key="child",
    make=_child,
    bodies=[
        ("Homework help, sort of. My {crel} {kid} has a school project on volcanoes and wants to build "
         "one that properly erupts. I remember the baking soda and vinegar thing from when I was small, "
         "but I've seen videos with way more dramatic foam. {_near}What's the best safe recipe for a "
         "good eruption, and how do I stop it turning the kitchen table into a crime scene?",
         "{_ack}For a foamier eruption, add a good squirt of washing-up liquid and some food colouring "
         "to the vinegar before pouring it onto the baking soda; warm vinegar reacts a bit faster too. "
         "Build the volcano on a large baking tray or inside a plastic storage box, and you'll catch "
         "almost all the mess.", None),
        ("Is it normal for a kid to suddenly go off reading? {kid}, my {crel}, used to devour books and "
         "now everything is 'boring' and accompanied by a world-class eye-roll. I really don't want to "
         "turn it into a battle. {_near}Any suggestions for getting {_him} back into it without it "
         "feeling like homework?",
         "Very normal, it often happens when school reading starts to feel like a chore. Let them pick "
         "anything at all, including comics, graphic novels and joke books; audiobooks on car journeys "
         "count too. Reading something yourself in the same room, with no pressure, works better than "
         "any rule.", None),
    ],
    q=["What did I say my {crel}'s name was?", "What's my {crel} called, do you know?"],
    c=["what my {crel} is called", "what my {crel}'s name is"],
    n=["my {crel}'s name"],
    acks=["{kid} sounds like a brilliant kid. ", "What a fun project for {kid}! "],
    near=["({dname} next door says her {dcrel}, {dkid}, went through exactly the same phase.) ",
          "My friend {dname}'s {dcrel} {dkid} apparently did the same thing last year. "],
    near_make=_child_near,
)


def _nibling(ctx: Ctx) -> dict:
    nrel = ctx.rng.choice(("nephew", "niece"))
    g = "m" if nrel == "nephew" else "f"
    nib = ctx.name(g)
    return {"nrel": nrel, "nib": nib, **_pron(g), "fact": f"{nrel}_name", "answers": (nib,), "value": nib}


def _nibling_near(ctx: Ctx, s: dict) -> dict:
    return {"dname": ctx.anyone()[0], "nrel": s["nrel"],
            "dnib": ctx.name("m" if s["nrel"] == "nephew" else "f")}


NIBLING = Kind(
    key="nibling",
    make=_nibling,
    bodies=[
        ("Baking emergency, kind of. I've volunteered to make the cake for my {nrel} {nib}'s party on "
         "Sunday, which was brave of me given my last cake sank in the middle like a crater. {_near}I need "
         "something that's hard to mess up, feeds about fifteen people, and can survive a car journey. "
         "Chocolate, ideally. Can you give me a forgiving recipe?",
         "{_ack}A chocolate traybake is your friend: it's baked flat, so there's nothing to sink. Whisk "
         "oil, sugar, eggs, buttermilk and vanilla, fold in flour, cocoa and bicarbonate of soda, and "
         "bake in a large lined tin for about 35 minutes. Top with a simple ganache once cool, and "
         "transport it in the tin.", None),
        ("Gift advice, please. My {nrel}, {nib}, has suddenly become obsessed with space and I'm meant to "
         "be the fun relative, so the pressure is on. Budget's around thirty quid. {_near}I was thinking "
         "of a telescope but I've no idea whether a cheap one is worth it or just frustrating. What would "
         "you get?",
         "At that budget I'd skip the telescope, since cheap ones tend to wobble and disappoint. A good "
         "pair of binoculars and a star chart, a glow-in-the-dark planisphere, or a planetarium "
         "projector for the bedroom ceiling will all get more use. A kids' space encyclopedia is a solid "
         "backup.", None),
    ],
    q=["What's my {nrel} called, do you know?", "What did I say my {nrel}'s name was?"],
    c=["what my {nrel} is called", "what my {nrel}'s name is"],
    n=["my {nrel}'s name"],
    acks=["You're clearly a great relative to have, {nib} is lucky. "],
    near=["(My colleague {dname} has a {nrel} called {dnib} who's the same age, so I've been getting "
          "tips.) "],
    near_make=_nibling_near,
)


def _gran(ctx: Ctx) -> dict:
    gran = ctx.reg.pick(ctx.rng, OLD_FEMALE)
    return {"gran": gran, "_granword": ctx.rng.choice(("gran", "nan", "grandma", "granny")),
            "fact": "grandmother_name", "answers": (gran,), "value": gran}


def _gran_near(ctx: Ctx, s: dict) -> dict:
    return {"dname": ctx.anyone()[0], "dgran": ctx.reg.pick(ctx.rng, OLD_FEMALE)}


GRAN = Kind(
    key="grandmother",
    make=_gran,
    bodies=[
        ("I'm trying to recreate a recipe from memory and could use some help. My {_granword}, {gran}, "
         "used to make these little lemon biscuits every Easter and nobody ever wrote the recipe down. I "
         "know there was butter, a lot of zest, and they were crumbly rather than chewy. {_near}Could you "
         "suggest a base recipe I can tweak until it tastes right?",
         "{_ack}Start with a classic shortbread ratio: one part sugar, two parts butter, three parts "
         "flour, plus the zest of two lemons. Swapping a little of the flour for cornflour or rice flour "
         "makes them more crumbly. Bake small rounds at a low-ish temperature until just pale gold, and "
         "adjust the zest from batch to batch.", None),
        ("Does anyone actually write letters any more? I want to send a proper one to my {_granword} "
         "{gran}, who's in her nineties and refuses to touch a phone, but I'm so out of practice that "
         "everything I write sounds like a work email. {_near}Can you give me a rough structure and "
         "maybe a few opening lines that don't sound stiff?",
         "{_ack}A simple structure: open warmly, share two or three small bits of news, ask her a couple "
         "of real questions, and close with something affectionate. Openers like \"I was thinking about "
         "you this morning when...\" or \"You'll laugh at what happened this week\" set a relaxed tone "
         "straight away.", None),
    ],
    q=["What's my grandmother's name?", "What was my gran called?"],
    c=["what my gran's name is", "what my grandmother is called"],
    n=["my grandmother's name"],
    acks=["What a lovely way to remember {gran}. ", "{gran} sounds wonderful. "],
    near=["(My friend {dname}'s gran, {dgran}, still does her own crossword in pen, which is "
          "terrifying.) "],
    near_make=_gran_near,
)


def _friend(ctx: Ctx) -> dict:
    bf, g = ctx.anyone()
    return {"bf": bf, **_pron(g), "fact": "best_friend_name", "answers": (bf,), "value": bf}


def _friend_near(ctx: Ctx, s: dict) -> dict:
    return {"dname": ctx.anyone()[0]}


FRIEND = Kind(
    key="best_friend",
    make=_friend,
    bodies=[
        ("Party planning, help. I'm organising a surprise thirtieth for my best friend {bf}, and the group "
         "chat has dozens of unread messages arguing about whether we do a cocktail class or axe "
         "throwing. {_near}I need a way to make a decision that doesn't start a war. Any tips for running "
         "a quick vote without the whole thing spiralling into another hundred messages?",
         "{_ack}Post one message with two options, a clear deadline (\"votes in by 6pm tomorrow\"), and "
         "a note that whichever wins, the other becomes next time's plan. A poll feature helps because "
         "it keeps the votes visible and the chatter down. Then announce the result and move straight to "
         "logistics.", None),
        ("Okay, honest opinion needed. My best friend, {bf}, and I have a tradition of a terrible-film "
         "night once a month, and it's my turn to pick. {_near}I want something properly, gloriously "
         "bad, but still watchable, nothing that's just boring-bad. Snacks are sorted, it's only the film "
         "I'm stuck on. What would you suggest?",
         "A few gloriously bad favourites: The Room (the gold standard), Troll 2, Birdemic, or Sharknado "
         "if you want knowing, self-aware silliness. For something big-budget and baffling, Battlefield "
         "Earth is a treat. Have fun!", None),
    ],
    q=["What's my best friend called?", "What's the name of my best friend?"],
    c=["who my best friend is", "what my best mate's name is"],
    n=["my best friend's name"],
    acks=["{bf} is lucky to have a friend like you. "],
    near=["(My flatmate {dname} wants to come too, which is a whole other negotiation.) "],
    near_make=_friend_near,
)


def _job(ctx: Ctx) -> dict:
    job = ctx.reg.pick(ctx.rng, JOBS)
    return {"job": job[0], "_a": _article(job[0]), "fact": "job", "answers": job, "value": job[0]}


def _job_near(ctx: Ctx, s: dict) -> dict:
    dj = ctx.reg.pick(ctx.rng, JOBS)[0]
    return {"djob": dj, "_da": _article(dj)}


JOB = Kind(
    key="job",
    group="work",
    make=_job,
    bodies=[
        ("Honestly, today was a lot. I love being {_a} {job} most days, but this morning the car park "
         "machine ate my card and then the canteen had run out of everything except a suspicious beige "
         "soup. {_near}Anyway, I've been meaning to ask: what's a decent packed lunch that doesn't need a "
         "microwave and won't be sad and soggy by mid-afternoon?",
         "Grain salads are your best bet: cooked farro, orzo or couscous with roasted veg, chickpeas, feta "
         "and a punchy dressing kept in a separate little pot. Wraps with the wet ingredients packed "
         "separately also hold up well. Add something crunchy, like nuts or seeds, so it feels like a "
         "proper meal.", None),
        ("I need to update my LinkedIn, which I've been avoiding for roughly five years. My headline just "
         "says '{job}' and nothing else, which apparently is a crime. {_near}Can you help me write a short "
         "summary that sounds human and not like I swallowed a buzzword generator? I'm not job hunting, I "
         "just don't want the profile to look abandoned.",
         "{_ack}Try this shape: one line on what you do and who for, one line on what you enjoy or are "
         "known for, and one line that's a bit personal. For example: \"I help [people] with [thing]. "
         "I'm the one colleagues call when [situation]. Outside work you'll find me [hobby].\" Short and "
         "specific beats long and shiny.", None),
    ],
    q=["What is it I do for a living?", "What's my job again?", "What line of work am I in?"],
    c=["what I do for work", "what my job is"],
    n=["my job", "my line of work"],
    acks=["Being {_a} {job} sounds like a lot of responsibility. "],
    near=["My brother-in-law is {_da} {djob} and makes his job sound like a holiday, which I refuse to "
          "believe. "],
    near_make=_job_near,
)


def _employer(ctx: Ctx) -> dict:
    emp = ctx.reg.pick(ctx.rng, EMPLOYERS)
    return {"emp": emp[0], "fact": "employer", "answers": emp, "value": emp[0]}


def _employer_change(ctx: Ctx, old: dict) -> dict:
    new = _employer(ctx)
    new["old"] = old["emp"]
    return new


def _employer_near(ctx: Ctx, s: dict) -> dict:
    return {"demp": ctx.reg.pick(ctx.rng, EMPLOYERS)[0]}


EMPLOYER = Kind(
    key="employer",
    group="work",
    make=_employer,
    bodies=[
        ("Traffic was apocalyptic this morning. There are roadworks on the ring road, so the drive in to "
         "{emp}, which normally takes twenty minutes, took well over an hour and I walked into a meeting "
         "that had already started. {_near}Is there anything that makes a long crawl in the car less "
         "miserable? Podcast recommendations welcome, nothing true crime though, I get enough stress.",
         "Sounds grim. A few ideas: save podcasts or audiobooks specifically for the car so it becomes a "
         "small treat, keep water and a snack in the glovebox, and let someone know if you're running "
         "late so the clock stops nagging at you. For podcasts, try comedy panel shows, history "
         "storytelling, or interview shows with people you admire.", None),
        ("Can you help me phrase an email? I need to tell my team at {emp} that I'm taking two weeks off "
         "in the summer, and the last person who did that got passive-aggressive replies for days. "
         "{_near}I want it friendly and matter-of-fact, and to make it clear who's covering what while I'm "
         "gone. Something short?",
         "Here's a draft:\n\n\"Hi all, a heads-up that I'll be on leave from [date] to [date]. [Name] is "
         "covering [area] and [Name] has [area]; I've shared handover notes in [place]. I'll have no "
         "access to email, so please send anything urgent to them. Thanks!\"\n\nClear, cheerful, and it "
         "leaves nothing to argue with.", None),
    ],
    change=[
        ("News! I finally handed my notice in, and as of Monday I'm at {emp}. No more {old}, no more "
         "that awful open-plan office with the broken blinds. First-day nerves are very real though. "
         "{_near}Any tips for making a decent impression in the first week without coming across as "
         "trying way too hard?",
         "Congratulations on the new job! In week one: listen more than you talk, write down names and "
         "who does what, ask one or two thoughtful questions in meetings, and offer to take on a small, "
         "concrete task so you can deliver something early. Being warm and curious goes a long way.",
         None),
        ("So the job switch is done: I left {old} on Friday and started at {emp} this week. New laptop, "
         "new badge, a coffee machine I don't understand at all. {_near}Quick question: what's a good way "
         "to keep track of a load of new names? I'm hopeless with them and I've already called someone "
         "the wrong thing twice.",
         "Congrats on the move! Repeat each name once in conversation, then jot it down with a detail "
         "(\"Sam, finance, runs marathons\") straight after. The org chart or team photos in the "
         "directory are great for revision. And people are very forgiving in someone's first weeks.",
         None),
    ],
    change_make=_employer_change,
    q=["Which company do I work for these days?", "Where am I working at the moment?",
       "Who's my employer now?"],
    c=["who I work for right now", "which company I'm at these days"],
    n=["the name of the place I work"],
    near=["My flatmate works at {demp} and they get free lunch on Fridays, which feels deeply unfair. "],
    near_make=_employer_near,
)


def _hometown(ctx: Ctx) -> dict:
    home = ctx.reg.pick(ctx.rng, HOMETOWNS)
    return {"home": home, "fact": "hometown", "answers": (home,), "value": home}


def _hometown_near(ctx: Ctx, s: dict) -> dict:
    return {"dtown": ctx.reg.pick(ctx.rng, HOMETOWNS), "dname": ctx.name("f")}


HOMETOWN = Kind(
    key="hometown",
    make=_hometown,
    bodies=[
        ("I'm trying to plan a visit home at Christmas and the train prices are frankly insulting. Getting "
         "back to {home}, where I grew up, costs more than a flight to somewhere sunny. {_near}Are there "
         "any general tricks for getting cheaper train tickets? Split ticketing, railcards, booking "
         "windows, that kind of thing? I'm flexible on times if that helps.",
         "Being flexible helps a lot. Book as soon as advance fares are released (often about twelve "
         "weeks out), check whether a railcard pays for itself in a trip or two, and try a split-ticketing "
         "site, which can shave a surprising amount off long journeys. Off-peak and midweek trains are "
         "usually cheapest.", None),
        ("Random, but I've got really into sourdough and someone told me the water makes a difference. "
         "Back in {home}, where I grew up, the tap water was soft as anything, and here it's so hard the "
         "kettle has grown fur. {_near}Does hard water actually affect bread, and if so is there a fix "
         "that doesn't involve buying bottled water?",
         "It can, a little: very hard water can tighten the gluten and slow fermentation slightly. In "
         "practice most home bakers don't notice much. If you want to test it, run your tap water through "
         "a filter jug for a few bakes and compare, and give the dough a touch more time to rise.", None),
    ],
    q=["Where did I say I grew up?", "Which town am I originally from?", "What did I say my hometown was?"],
    c=["where I grew up", "where I'm from originally"],
    n=["my hometown", "the town I grew up in"],
    acks=["{home} sounds like a lovely place to grow up. "],
    near=["(My friend {dname} grew up in {dtown} and says it's no better there.) "],
    near_make=_hometown_near,
)


def _city(ctx: Ctx) -> dict:
    city = ctx.reg.pick(ctx.rng, CITIES)
    return {"city": city, "fact": "home_city", "answers": (city,), "value": city}


def _city_change(ctx: Ctx, old: dict) -> dict:
    new = _city(ctx)
    new["old"] = old["city"]
    return new


def _city_near(ctx: Ctx, s: dict) -> dict:
    return {"dcity": ctx.reg.pick(ctx.rng, CITIES)}


CITY = Kind(
    key="home_city",
    make=_city,
    bodies=[
        ("Is it just me, or are bin collections the most confusing system ever invented? Ever since we "
         "moved here to {city} I've had four different coloured bins and a collection calendar that "
         "looks like a tube map. {_near}Can you help me set up a simple weekly reminder system so I stop "
         "missing the recycling? I have a phone and a whiteboard and very little patience.",
         "Easy win: put a recurring reminder on your phone for the evening before each collection, with "
         "the bin colour in the title. On the whiteboard, draw a simple grid with the weeks down the side "
         "and tick each bin off once it's out. After a month or so it'll be automatic.", None),
        ("Looking for weekend ideas that aren't just the pub again. I've lived in {city} for a good while "
         "now and still haven't done half the touristy stuff. {_near}What sort of things do people tend "
         "to overlook when they live somewhere? Museums, walks, markets? A checklist to get me going "
         "would be perfect.",
         "{_ack}A starter checklist: one museum or gallery you've never been in, a guided walking tour "
         "(locals always learn something), the biggest weekend market, a viewpoint at sunset, a day trip "
         "to somewhere within an hour by train, and one restaurant serving a cuisine you've never tried. "
         "Tick off one per weekend.", None),
    ],
    change=[
        ("Update from the chaos: we've done it, we've left {old} and we're now properly living in "
         "{city}. Boxes everywhere, no idea where the kettle is, and the broadband won't be connected "
         "until Thursday. {_near}What should I prioritise in the first week in a new place? I keep making "
         "lists and then losing them under more boxes.",
         "Congratulations on the move! First week priorities: unpack one 'essentials' box (kettle, "
         "mugs, loo roll, chargers), set up the bed properly, register with a GP, update your address "
         "with the bank and at work, and find the nearest supermarket. Everything else can wait a "
         "weekend.", None),
        ("So the move happened! Goodbye {old}, hello {city}. Our new street is lovely, though the "
         "neighbours' cat has already claimed our garden as its own, and someone left a welcome note "
         "on our doormat which was very sweet. {_near}Can you suggest a nice, "
         "not-too-cheesy way to introduce ourselves to the neighbours? A card, some baking, something "
         "else entirely?",
         "How exciting! A short handwritten card through the door with your names and a line like "
         "\"just moved in at number X, do knock if you ever need anything\" is perfect. Pair it with a few "
         "biscuits if you like baking. A friendly wave in the street does the rest.", None),
    ],
    change_make=_city_change,
    q=["Which city do I live in now?", "Where am I living at the minute?", "What city am I based in?"],
    c=["where I live at the moment", "which city I'm living in"],
    n=["the city I live in now"],
    acks=["{city} has a lot going for it! "],
    near=["(My cousin is moving to {dcity} next month, so I'm not the only one drowning in boxes.) ",
          "A colleague has just come back from a weekend in {dcity} raving about it. "],
    near_make=_city_near,
)


def _car(ctx: Ctx) -> dict:
    car = ctx.reg.pick(ctx.rng, CARS)
    return {"car": car[0], "fact": "car", "answers": car, "value": car[0]}


def _car_change(ctx: Ctx, old: dict) -> dict:
    new = _car(ctx)
    new["old"] = old["car"]
    return new


def _car_near(ctx: Ctx, s: dict) -> dict:
    return {"dcar": ctx.reg.pick(ctx.rng, CARS)[0]}


CAR = Kind(
    key="car",
    make=_car,
    bodies=[
        ("Mechanic question. My {car} has started making a horrible squealing noise when I turn the "
         "steering wheel all the way, mostly when I'm manoeuvring in car parks. It has a lot of miles on "
         "it, so it's hardly a spring chicken. {_near}Is this something I should get looked at urgently, "
         "or one of those noises old cars just make? I don't want to get fleeced.",
         "A squeal at full lock is often the power-steering system: low fluid or a worn drive belt are the "
         "usual suspects, and both are fairly cheap to sort. It's not normally an emergency, but don't "
         "ignore it for months. Ask a garage to check fluid level and belt condition, and get a quote "
         "before any work.", None),
        ("Road trip planning! We're doing a long drive up the coast next month in my trusty {car}, which "
         "has never let me down, touch wood. {_near}Could you give me a checklist of things to sort before "
         "a long drive? I always forget something stupid like the screenwash or the charger cable, and "
         "then spend the first hour cross.",
         "{_ack}Pre-trip checklist: tyre pressures and tread, oil and coolant levels, screenwash, lights "
         "and indicators, breakdown cover details saved on your phone, phone charger and mount, "
         "sunglasses, water and snacks, a paper map or downloaded offline maps, and a blanket in the "
         "boot just in case.", None),
    ],
    change=[
        ("Farewell to the {old}: it failed its MOT in spectacular fashion and the garage said it wasn't "
         "worth fixing. I've bought a secondhand {car} instead, which feels like driving a spaceship in "
         "comparison. {_near}Any tips for getting used to a different car? New size, new blind spots, "
         "pedals that feel nothing like what I'm used to.",
         "{_ack}Spend twenty minutes in an empty car park practising reversing, tight turns and parking "
         "before you tackle busy roads. Set up the seat and all three mirrors carefully, and check the "
         "blind spots by having someone walk around the car while you watch. It feels normal within a "
         "week or two.", None),
        ("The car saga is finally over. I traded in my {old} at the weekend and drove home in a {car}, and "
         "I've been grinning like an idiot ever since. {_near}What's the sensible stuff I should check in "
         "the first month with a used car, apart from the obvious things like fuel and tyres?",
         "{_ack}Worth doing early: check the service history and when the next service and MOT are due, "
         "look at the oil and coolant yourself, make sure the spare wheel or repair kit is actually there, "
         "and confirm the insurance and tax are in your name. Keep an ear out for any new noises in those "
         "first weeks.", None),
    ],
    change_make=_car_change,
    q=["What car have I got now?", "What am I driving at the minute?", "What's my car?"],
    c=["what car I've got", "what I drive now"],
    n=["the car I drive now"],
    acks=["Ah, the {car}! ", "A {car}, nice. "],
    near=["My dad has just bought a {dcar} and won't stop sending me photos of it. "],
    near_make=_car_near,
)


def _instrument(ctx: Ctx) -> dict:
    inst = ctx.reg.pick(ctx.rng, INSTRUMENTS)
    return {"inst": inst[0], "fact": "instrument", "answers": inst, "value": inst[0]}


def _instrument_near(ctx: Ctx, s: dict) -> dict:
    return {"dinst": ctx.reg.pick(ctx.rng, INSTRUMENTS)[0]}


INSTRUMENT = Kind(
    key="instrument",
    make=_instrument,
    bodies=[
        ("My upstairs neighbours have started complaining about noise, which is rich considering they "
         "hoover at midnight. In fairness, I do practise the {inst} most evenings and I'm not exactly "
         "concert standard yet. {_near}Is there any cheap way to soundproof a room a bit, or at least make "
         "it less awful for them? Renting, so nothing permanent.",
         "{_ack}True soundproofing is expensive, but you can reduce it: thick rugs, heavy curtains, a "
         "bookcase against the shared wall, and foam or blankets behind you all help absorb sound. "
         "Practising at agreed times, say early evening and never late, plus a friendly word with the "
         "neighbours, often solves more than any foam.", None),
        ("Confidence question. I've got my first ever little performance next month, just me and my "
         "{inst} at an open mic night, and I'm already feeling sick about it. {_near}Do you have any "
         "practical tricks for stage nerves? Breathing stuff, things to do on the day, anything at all "
         "really, I'll try it.",
         "{_ack}Practise the set in front of a friend or two beforehand, so it isn't your first time "
         "being watched. On the day: eat something light, arrive early, and do slow breathing with a "
         "longer out-breath than in-breath. Pick a friendly face in the crowd. The audience at open mics "
         "is almost always on your side.", None),
    ],
    q=["What's the instrument I'm learning?", "Which instrument do I practise?"],
    c=["what instrument I play", "which instrument I practise"],
    n=["the instrument I play"],
    acks=["The {inst}, lovely! ", "Good for you for sticking with the {inst}. "],
    near=["(A guy in my building plays the {dinst} and he's somehow even worse than me.) "],
    near_make=_instrument_near,
)


def _sport(ctx: Ctx) -> dict:
    sport = ctx.reg.pick(ctx.rng, SPORTS)
    return {"sport": sport[0], "fact": "sport", "answers": sport, "value": sport[0]}


def _sport_change(ctx: Ctx, old: dict) -> dict:
    new = _sport(ctx)
    new["old"] = old["sport"]
    return new


def _sport_near(ctx: Ctx, s: dict) -> dict:
    return {"dname": ctx.anyone()[0], "dsport": ctx.reg.pick(ctx.rng, SPORTS)[0]}


SPORT = Kind(
    key="sport",
    make=_sport,
    bodies=[
        ("Food question. I've been doing {sport} three nights a week and I'm absolutely ravenous "
         "afterwards, which means I end up eating toast at eleven at night like a raccoon. {_near}What's a "
         "quick, filling post-training dinner I could throw together in under twenty minutes? Bonus "
         "points if it's mostly cupboard stuff.",
         "{_ack}Try a big bowl of quick-cook noodles or rice with a couple of fried eggs, frozen peas or "
         "spinach, and soy sauce with chilli oil. Or a tin of beans or chickpeas warmed with tomatoes and "
         "spices, served with bread. Both give you protein and carbs and take about fifteen minutes.",
         None),
        ("I think I need new kit and I'm totally lost. Between work and {sport}, my current gear is "
         "basically held together with hope and a bit of tape. {_near}How do I work out what's actually "
         "worth spending money on versus what's just marketing? And is it worth going to a proper "
         "specialist shop?",
         "Spend on the things that touch your body the most or protect you: footwear and anything safety "
         "related. Basics like shorts and tops can be cheap. A specialist shop is worth it the first "
         "time, because they'll help with fit; after that you can often buy the same model online.",
         None),
    ],
    change=[
        ("Confession: I've quit {old}. Too many early starts, everything ached, and the club politics "
         "were getting exhausting. I've taken up {sport} "
         "instead and I'm weirdly hooked after only three sessions. {_near}How do I avoid overdoing it "
         "while I'm this enthusiastic? I have a history of going all-in on things and burning out by "
         "week six.",
         "{_ack}Cap yourself at two or three sessions a week for the first couple of months, even if you "
         "feel great, and keep at least one full rest day between hard sessions. Write down what you did "
         "each time so you can see progress without needing to push harder. Sleep and food matter as "
         "much as the training.", None),
        ("Big lifestyle update: I'm done with {old}, I just wasn't enjoying it any more. A friend dragged "
         "me along to {sport} and now I'm there twice a week, loving it. {_near}Can you suggest a simple "
         "weekly routine to fit it around work without getting burnt out? I'm out of the house ten hours "
         "on weekdays.",
         "{_ack}Something like: two sessions midweek, one gentle active day at the weekend (a walk or "
         "easy swim), and at least two proper rest evenings. Prep dinners for training nights in advance "
         "and keep your kit bag packed by the door. Review after a month and adjust.", None),
    ],
    change_make=_sport_change,
    q=["What sport am I doing these days?", "What do I do for exercise at the moment?"],
    c=["which sport I'm into now", "what I do to keep fit these days"],
    n=["my current sport"],
    acks=["Good on you for the {sport}. ", "Sounds like the {sport} is paying off! "],
    near=["My colleague {dname} does {dsport} and keeps trying to recruit me. "],
    near_make=_sport_near,
)


def _allergy(ctx: Ctx) -> dict:
    a = ctx.reg.pick(ctx.rng, ALLERGENS)
    return {"allergen": a[0], "fact": "allergy", "answers": a, "value": a[0]}


def _allergy_near(ctx: Ctx, s: dict) -> dict:
    return {"dname": ctx.anyone()[0], "dallergen": ctx.reg.pick(ctx.rng, ALLERGENS)[0]}


ALLERGY = Kind(
    key="allergy",
    make=_allergy,
    bodies=[
        ("Dinner party panic. I've got six people coming on Saturday and I'd like to do one big tray of "
         "something in the middle of the table so I'm not chained to the stove all night. Obviously "
         "nothing with {allergen} in it, since I'm allergic and would rather not spend the evening in "
         "A&E. {_near}Any crowd-pleasers that are easy to scale up?",
         "A few that scale beautifully: a big tray of slow-roasted lamb or chicken with potatoes and "
         "lemon, a baked pasta with a rich tomato sauce and mozzarella, or a huge vegetable lasagne. "
         "Serve with bread and a big salad. Just double-check every label for anything you react to, "
         "since traces turn up in odd places.", None),
        ("Travel worry. I'm going abroad soon and my allergy to {allergen} is the thing I'm most nervous "
         "about, because menus in a language I can't read are a minefield. {_near}Is there a good way to "
         "communicate an allergy when you don't speak the language? Printed cards, apps, something "
         "else? I'd rather not spend every meal anxious.",
         "Yes: get an allergy translation card in the local language, which you can hand to staff, and "
         "keep a photo of it on your phone too. Learn the words for your allergen and for 'allergy'. "
         "Carry your medication at all times, and note the local emergency number before you go.", None),
    ],
    q=["What did I say I'm allergic to?", "What's the thing I'm allergic to?"],
    c=["what I'm allergic to", "what my food allergy is"],
    n=["my food allergy"],
    near=["My colleague {dname} is allergic to {dallergen}, which makes office birthday cakes a "
          "nightmare. "],
    near_make=_allergy_near,
)


def _injury(ctx: Ctx) -> dict:
    p = ctx.reg.pick(ctx.rng, BODY_PARTS)
    return {"part": p[0], "fact": "injury", "answers": p, "value": p[0]}


def _injury_near(ctx: Ctx, s: dict) -> dict:
    return {"dpart": ctx.reg.pick(ctx.rng, BODY_PARTS)[0]}


INJURY = Kind(
    key="injury",
    make=_injury,
    bodies=[
        ("Ugh. My physio gave me a sheet of exercises for my {part} and I've already lost it. I know "
         "there were some gentle stretches and something involving a resistance band, but that's about "
         "all I remember. {_near}Can you help me come up with a way to actually stick to a daily routine? "
         "I'm great at starting things and terrible at the second week.",
         "{_ack}First, ask the physio to email the sheet or snap a photo of it next time. For sticking to "
         "it: attach the exercises to something you already do daily, like straight after brushing your "
         "teeth, keep the band somewhere visible, and tick a calendar each day. A streak is oddly "
         "motivating.", None),
        ("So, the good news is I went for a really long walk on Sunday; the bad news is my {part} has "
         "been grumbling ever since, same as it always does when I overdo it. {_near}Separate question "
         "though: can you recommend some good audiobooks for long walks? Something gripping but not "
         "gruesome, I listen while I'm out in the woods on my own.",
         "Some gripping-but-not-gruesome picks: The Thursday Murder Club, Project Hail Mary, The Martian, "
         "Circe, or anything by Bill Bryson if you want funny and easy to follow. Hope things settle down "
         "soon too; ease back into the long walks gradually.", None),
    ],
    q=["Which part of me keeps playing up?", "What's the injury I keep moaning about?"],
    c=["which bit of my body keeps giving me trouble", "where my old injury is"],
    n=["my dodgy body part"],
    acks=["Sorry to hear about the {part}. "],
    near=["My mum's been having the same kind of bother with her {dpart}, so we've been comparing "
          "notes. "],
    near_make=_injury_near,
)


def _food(ctx: Ctx) -> dict:
    f = ctx.reg.pick(ctx.rng, COMFORT_FOODS)
    return {"food": f[0], "fact": "comfort_food", "answers": f, "value": f[0]}


def _food_near(ctx: Ctx, s: dict) -> dict:
    return {"dfood": ctx.reg.pick(ctx.rng, COMFORT_FOODS)[0]}


FOOD = Kind(
    key="comfort_food",
    make=_food,
    bodies=[
        ("Meal-prep help, please. I'm trying to cook once on a Sunday and eat decently all week, "
         "instead of living on crackers. I'll still make {food} on Friday night because that's my "
         "comfort meal and totally non-negotiable, but Monday to Thursday is a blank. {_near}Can you "
         "suggest four lunches that keep well in the fridge for a few days?",
         "{_ack}Four fridge-friendly lunches: a lentil and roasted veg salad with feta, a chicken or "
         "tofu noodle salad with a zingy lime dressing, a big batch of "
         "minestrone-style soup, and a pasta salad with pesto, tomatoes and spinach. Keep dressings "
         "separate until the day.", None),
        ("I'm hosting a cooking night with friends where everyone teaches one dish, and I'm doing {food}, "
         "since it's what I make whenever I need cheering up. {_near}How do I explain a recipe to a group "
         "without it descending into chaos? Any tips for running it smoothly? There'll be about six of "
         "us in a small kitchen.",
         "{_ack}Do all the chopping and measuring beforehand, put each ingredient in a little bowl, and "
         "print a one-page version of the recipe. Give everyone a specific job, so nobody is hovering, "
         "and explain each step just before you do it rather than all at the start. Keep one person on "
         "washing-up duty.", None),
    ],
    q=["What's my comfort food?", "What do I cook when I need cheering up?"],
    c=["what my go-to comfort dish is", "what I make when I'm feeling low"],
    n=["my favourite comfort meal"],
    acks=["Ooh, {food}, excellent choice. "],
    near=["My flatmate swears by {dfood} after a rough day, but each to their own. "],
    near_make=_food_near,
)


def _birthday(ctx: Ctx) -> dict:
    said, aliases = ctx.date()
    form = "on the " if said[0].isdigit() and not said.split()[0].isdigit() else "on "
    return {"bday": said, "_on": form, "fact": "birthday", "answers": aliases, "value": said}


def _birthday_near(ctx: Ctx, s: dict) -> dict:
    said, _ = ctx.date()
    form = "on the " if said[0].isdigit() and not said.split()[0].isdigit() else "on "
    return {"dname": ctx.name("f"), "dbday": said, "_don": form}


BIRTHDAY = Kind(
    key="birthday",
    make=_birthday,
    bodies=[
        ("I'm trying to be organised for once. My birthday's {_on}{bday}, and this year I'd like to do a "
         "low-key dinner with a handful of friends rather than a big party where I talk to nobody "
         "properly. {_near}Could you help me write a short, casual invite message for the group chat? "
         "Something that doesn't sound like a corporate event.",
         "{_ack}How about: \"Hello lovely people! I'm doing a small, low-key birthday dinner and it would "
         "make my year if you came. [Place], [time]. No presents, just turn up hungry. Let me know if "
         "you're in!\" Swap in the details and add an emoji or two if that's your style.", None),
        ("Does anyone else find it awkward when their birthday falls in the middle of the week? Mine's "
         "{_on}{bday}, and this year it lands slap bang in a week full of meetings. {_near}Any ideas for "
         "making a weekday birthday feel a bit special without taking the whole day off? I don't want "
         "to just sit at my desk eating a sad supermarket cake.",
         "{_ack}A few ideas: book a nice breakfast before work, take a long lunch somewhere you love, "
         "block out the last hour of the afternoon, or plan a small dinner that evening and move the big "
         "celebration to the weekend. Treat yourself to one small thing you wouldn't normally buy.", None),
    ],
    q=["When did I say my birthday is?", "What date does my birthday fall on?"],
    c=["when my birthday is", "what day my birthday falls on"],
    n=["my birthday"],
    acks=["Happy almost-birthday! "],
    near=["(My friend {dname}'s is {_don}{dbday}, so we sometimes join forces.) "],
    near_make=_birthday_near,
)


def _floor(ctx: Ctx) -> dict:
    pool = [(_ordinal_suffix(k), v, f"floor {k}") for k, v in ORDINALS.items()]
    f = ctx.reg.pick(ctx.rng, pool)
    said = ctx.rng.choice(f[:2])
    return {"floor": said, "fact": "flat_floor", "answers": f, "value": said}


def _floor_near(ctx: Ctx, s: dict) -> dict:
    pool = [(_ordinal_suffix(k), v, f"floor {k}") for k, v in ORDINALS.items()]
    f = ctx.reg.pick(ctx.rng, pool)
    return {"dname": ctx.name("f"), "dfloor": ctx.rng.choice(f[:2])}


FLOOR = Kind(
    key="flat_floor",
    make=_floor,
    bodies=[
        ("The lift in our building has been broken for over a week now. We're on the {floor} floor, so "
         "every food shop has turned into a cardio session and I'm seriously considering ordering "
         "everything online forever. {_near}Is there a polite but firm way to email the building "
         "management about it? I've already sent one friendly message that got ignored.",
         "Here's a firmer version:\n\n\"Dear [Name], I'm following up on my message of [date] about the "
         "broken lift, which has now been out of service for over a week. This is causing real "
         "difficulty for residents on the upper floors. Could you confirm when the repair is scheduled? "
         "Many thanks.\"\n\nPolite, specific, and it asks for a date.", None),
        ("Plant question. I've got a little balcony, but since we're up on the {floor} floor it gets "
         "properly windy and my herbs keep getting flattened. {_near}What plants would actually survive up "
         "here? I'd like something green and maybe a bit of colour, but nothing that needs babying or "
         "daily attention.",
         "Wind-tolerant options: lavender, rosemary and thyme (they love it tough), ornamental grasses, "
         "sedums and other succulents, and hardy geraniums for a bit of colour. Use heavy pots, group "
         "them together so they shelter each other, and water a little more than you think, since wind "
         "dries them out.", None),
    ],
    q=["What floor is my flat on?", "Which floor do I live on?"],
    c=["what floor my flat is on", "which floor we live on"],
    n=[],
    near=["My friend {dname} is on the {dfloor} floor of her block and has the exact same problem. "],
    near_make=_floor_near,
)


def _language(ctx: Ctx) -> dict:
    lang = ctx.reg.pick(ctx.rng, LANGUAGES)
    return {"lang": lang, "fact": "language", "answers": (lang,), "value": lang}


def _language_near(ctx: Ctx, s: dict) -> dict:
    return {"dlang": ctx.reg.pick(ctx.rng, LANGUAGES)}


LANGUAGE = Kind(
    key="language",
    make=_language,
    bodies=[
        ("Motivation slump. I've been learning {lang} on and off, purely for my own amusement, and I've "
         "hit that wall where I'm too good for the beginner stuff but far too rubbish for anything real. "
         "{_near}How do people get through the intermediate plateau? I can put in maybe half an hour a "
         "day, more at weekends.",
         "{_ack}The plateau usually breaks when you switch from studying the language to using it: graded "
         "readers, podcasts for learners, and a weekly conversation exchange or tutor. Spend your half "
         "hour on real content slightly above your level, and keep a small notebook of phrases you "
         "actually want to say.", None),
        ("Can you recommend ways to sneak more listening practice into an ordinary day? My {lang} classes "
         "are on Wednesday evenings and I do the homework, but my ears are way behind my reading. "
         "{_near}Podcasts, radio, that kind of thing, or any other tricks? I have a long walk to the "
         "station each morning if that helps.",
         "{_ack}That walk is perfect. Try podcasts made for learners (they speak slower and explain "
         "things), then move on to native radio or podcasts on topics you already know well. Switch "
         "your phone's language for a bit, watch shows with subtitles in the same language, and listen "
         "to the same short clip several times rather than lots of new ones.", None),
    ],
    q=["Which language did I say I'm learning?", "What language am I trying to pick up?"],
    c=["which language I'm learning", "what language my evening classes are in"],
    n=["the language I'm learning"],
    acks=["{lang} is a great choice! "],
    near=["My flatmate is doing {dlang} and she's miles ahead of me, which is annoying. "],
    near_make=_language_near,
)


def _trip(ctx: Ctx) -> dict:
    dest = ctx.reg.pick(ctx.rng, DESTINATIONS)
    return {"dest": dest, "fact": "trip", "answers": (dest,), "value": dest}


def _trip_change(ctx: Ctx, old: dict) -> dict:
    new = _trip(ctx)
    new["old"] = old["dest"]
    return new


def _trip_near(ctx: Ctx, s: dict) -> dict:
    return {"dname": ctx.anyone()[0], "ddest": ctx.reg.pick(ctx.rng, DESTINATIONS)}


TRIP = Kind(
    key="trip",
    make=_trip,
    bodies=[
        ("Packing question. For our trip to {dest} in a few weeks I'm determined to go hand luggage only, "
         "but I'm a chronic overpacker and I know it. {_near}What's your best system for fitting ten "
         "days into a small cabin bag? I always end up bringing four jumpers 'just in case' and wearing "
         "one.",
         "{_ack}Plan outfits around a two- or three-colour palette so everything mixes, and limit "
         "yourself to two pairs of shoes (wear the bulkiest). Packing cubes help, and so does rolling. "
         "Bring travel-size toiletries, plan one laundry session mid-trip, and wear your jumper and "
         "jacket on the plane.", None),
        ("I need help with an out-of-office message. I'll be away for a fortnight, mostly wandering "
         "around {dest}, and I'd like something polite that doesn't invite people to email me 'just one "
         "quick thing'. {_near}Could you draft a short one? Friendly but firm, and it should point people "
         "to my colleague for anything urgent.",
         "Here you go:\n\n\"Thanks for your email. I'm on leave until [date] with no access to email. "
         "For anything urgent, please contact [Name] at [address]. Otherwise I'll reply when I'm back.\""
         "\n\nNo promise to check in, which is the whole point.", None),
    ],
    change=[
        ("Slight change of plan on the holiday front: {old} is off because the flight prices went "
         "absurd, so we've booked {dest} instead. Honestly it might even be better. {_near}How far ahead "
         "should I sort travel insurance, and is there anything I should watch out for when you change a "
         "trip like this?",
         "{_ack}Buy travel insurance as soon as you've booked, so you're covered for cancellation from "
         "day one. When changing plans, check the cancellation terms on anything already booked, update "
         "the destination on any existing policy, and look up entry or visa requirements for the new "
         "country.", None),
        ("Plot twist: we're not going to {old} after all. A friend talked us into {dest} instead and we "
         "booked it last night in a fit of spontaneity. {_near}Can you help me make a rough to-do list "
         "for the next few weeks so I don't forget passports, cancelling the old bookings and all the "
         "boring stuff?",
         "{_ack}Rough list: cancel or amend the old bookings (check refund deadlines), check passport "
         "expiry and any visa or entry rules, sort travel insurance, book airport transport, tell your "
         "bank, download offline maps, arrange pet or plant care, and pack a few days before. Tick them "
         "off as you go.", None),
    ],
    change_make=_trip_change,
    q=["Where am I going on holiday?", "Where's my next trip to?"],
    c=["where I'm off to on holiday", "where my upcoming trip is"],
    n=["my holiday destination"],
    acks=["{dest}, how exciting! ", "Ooh, {dest}! "],
    near=["My colleague {dname} just got back from {ddest} and won't stop showing everyone photos. "],
    near_make=_trip_near,
)


def _degree(ctx: Ctx) -> dict:
    d = ctx.reg.pick(ctx.rng, DEGREES)
    return {"deg": d[0], "fact": "degree", "answers": d, "value": d[0]}


def _degree_near(ctx: Ctx, s: dict) -> dict:
    return {"ddeg": ctx.reg.pick(ctx.rng, DEGREES)[0]}


DEGREE = Kind(
    key="degree",
    make=_degree,
    bodies=[
        ("I'm helping my cousin with her personal statement for university and having flashbacks. When I "
         "applied to do {deg}, I wrote something so earnest it makes me cringe now. {_near}What makes a "
         "good personal statement these days? She has a draft but it reads like a list of achievements "
         "with no personality.",
         "Good statements show curiosity rather than list achievements. Suggest she picks two or three "
         "moments that sparked her interest, says what she did about it (reading, projects, work), and "
         "what she learned. Every achievement should answer 'so what?'. Reading it aloud is the best test "
         "of whether it sounds like her.", None),
        ("Career-change daydream. I did {deg} at uni and then wandered into something completely "
         "unrelated, and lately I've been wondering whether a part-time course in something new would be "
         "worth it. My evenings are fairly free at the moment, which is half the problem. {_near}How do "
         "people usually weigh that kind of decision? Cost, time, whether it actually leads anywhere?",
         "{_ack}A useful approach: talk to two or three people already doing the job you'd be aiming for, "
         "look at real job adverts to see which qualifications they ask for, and add up the full cost in "
         "money and evenings. Many people try a short, cheap course first to test their interest before "
         "committing.", None),
    ],
    q=["What did I study at uni?", "What was my degree in?"],
    c=["what I studied at university", "what my degree was in"],
    n=["my degree subject"],
    acks=["Ah, {deg}, how interesting! "],
    near=["(My housemate studied {ddeg} and now sells insurance, so I'm in good company.) "],
    near_make=_degree_near,
)


def _collection(ctx: Ctx) -> dict:
    c = ctx.reg.pick(ctx.rng, COLLECTIONS)
    return {"coll": c[0], "fact": "collection", "answers": c, "value": c[0]}


def _collection_near(ctx: Ctx, s: dict) -> dict:
    return {"dcoll": ctx.reg.pick(ctx.rng, COLLECTIONS)[0]}


COLLECTION = Kind(
    key="collection",
    make=_collection,
    bodies=[
        ("Shelving question. My collection of {coll} has officially outgrown the windowsill, and my "
         "housemate has very politely suggested it's 'taking over'. To be fair, she may have a point, "
         "there's one on the bathroom shelf now. {_near}What's a good way to display "
         "small collectables so they look deliberate instead of cluttered? Ideally not a fortune, and "
         "nothing that needs drilling into the walls.",
         "{_ack}Group items by colour or size rather than scattering them, and use a few shallow "
         "freestanding shelves or a glass-fronted cabinet. Risers (even stacked books) add height "
         "variation. Leave some empty space between groups, because gaps are what make a display look "
         "curated rather than crammed.", None),
        ("I went to a car boot sale on Sunday and came back with three more {coll}, which I absolutely "
         "did not need but adore. {_near}How do I keep a collecting hobby from eating my whole budget? "
         "Some kind of rule that isn't miserable? I like the thrill of the hunt, that's the problem.",
         "{_ack}Try a 'fun fund': a fixed monthly amount that's only for the collection, so buying "
         "something is guilt-free but limited. A one-in-one-out rule for space works well too, as does a "
         "short wishlist of specific pieces you're hunting for, so you're choosy rather than buying "
         "everything.", None),
    ],
    q=["What is it that I collect?", "What do I collect?"],
    c=["what I collect", "what my collection is of"],
    n=["the stuff I collect"],
    acks=["A collection of {coll}, what fun! "],
    near=["My uncle collects {dcoll}, which is somehow an even weirder hobby. "],
    near_make=_collection_near,
)

KINDS = [PET, SIBLING, PARTNER, CHILD, NIBLING, GRAN, FRIEND, JOB, EMPLOYER, HOMETOWN, CITY, CAR,
         INSTRUMENT, SPORT, ALLERGY, INJURY, FOOD, BIRTHDAY, FLOOR, LANGUAGE, TRIP, DEGREE,
         COLLECTION]
BY_KEY = {k.key: k for k in KINDS}

# -- unanswerable questions -------------------------------------------------------------------------
# Each: key, needs (a kind the user has, or None), make(ctx, chosen) -> slots with "fact",
# question templates, and optional distractor turns (user template, assistant template) that
# mention the same kind of detail about someone else.


@dataclass
class Unans:
    key: str
    needs: str | None
    make: Callable[[Ctx, dict], dict]
    q: list[str]
    c: list[str]
    n: list[str] = field(default_factory=list)
    distract: list = field(default_factory=list)
    dmake: Callable[[Ctx, dict], dict] | None = None


def _u_other_pet(ctx: Ctx, ch: dict) -> dict:
    have = ch["pet"]["species"]
    osp = ctx.rng.choice([s for s in ("dog", "cat", "rabbit") if s != have])
    return {"osp": osp, "fact": f"{osp}_name"}


def _d_other_pet(ctx: Ctx, s: dict) -> dict:
    return {"osp": s["osp"], "dpet": ctx.reg.pick(ctx.rng, PET_NAMES)}


def _u_pet_age(ctx: Ctx, ch: dict) -> dict:
    return {"pet": ch["pet"]["pet"], "fact": f"{ch['pet']['species']}_age"}


def _u_other_sib(ctx: Ctx, ch: dict) -> dict:
    orel = "brother" if ch["sibling"]["rel"] == "sister" else "sister"
    return {"orel": orel, "fact": f"{orel}_name"}


def _d_other_sib(ctx: Ctx, s: dict) -> dict:
    return {"orel": s["orel"], "dname": ctx.name("f"),
            "dsib": ctx.name("m" if s["orel"] == "brother" else "f")}


def _u_sib_city(ctx: Ctx, ch: dict) -> dict:
    return {"rel": ch["sibling"]["rel"], "fact": f"{ch['sibling']['rel']}_city"}


def _d_sib_city(ctx: Ctx, s: dict) -> dict:
    return {"rel": s["rel"], "dname": ctx.anyone()[0], "dcity": ctx.reg.pick(ctx.rng, CITIES)}


def _u_partner_job(ctx: Ctx, ch: dict) -> dict:
    return {"role": ch["partner"]["role"], "fact": f"{ch['partner']['role']}_job"}


def _d_partner_job(ctx: Ctx, s: dict) -> dict:
    dj = ctx.reg.pick(ctx.rng, JOBS)[0]
    return {"dname": ctx.name("f"), "djob": dj, "_da": _article(dj)}


def _u_anniv(ctx: Ctx, ch: dict) -> dict:
    return {"role": ch["partner"]["role"], "fact": "anniversary"}


def _d_anniv(ctx: Ctx, s: dict) -> dict:
    said, _ = ctx.date()
    return {"ddate": said}


def _u_partner_bday(ctx: Ctx, ch: dict) -> dict:
    return {"role": ch["partner"]["role"], "fact": f"{ch['partner']['role']}_birthday"}


def _u_school(ctx: Ctx, ch: dict) -> dict:
    return {"kid": ch["child"]["kid"], "fact": f"{ch['child']['crel']}_school"}


def _d_school(ctx: Ctx, s: dict) -> dict:
    return {"dname": ctx.name("f"), "dschool": ctx.reg.pick(ctx.rng, SCHOOLS)}


def _u_fixed(fact: str) -> Callable[[Ctx, dict], dict]:
    return lambda ctx, ch: {"fact": fact}


def _d_boss(ctx: Ctx, s: dict) -> dict:
    return {"dname": ctx.name("f"), "dboss": ctx.name("m")}


def _d_car_colour(ctx: Ctx, s: dict) -> dict:
    return {"dcar": ctx.reg.pick(ctx.rng, CARS)[0], "dcolour": ctx.rng.choice(COLOURS)}


def _u_teacher(ctx: Ctx, ch: dict) -> dict:
    return {"inst": ch["instrument"]["inst"], "fact": "music_teacher_name"}


def _d_teacher(ctx: Ctx, s: dict) -> dict:
    return {"dteacher": ctx.name("f")}


def _d_physio(ctx: Ctx, s: dict) -> dict:
    return {"dphysio": ctx.name("f")}


def _d_uni(ctx: Ctx, s: dict) -> dict:
    return {"duni": ctx.reg.pick(ctx.rng, UNIVERSITIES)}


def _d_airline(ctx: Ctx, s: dict) -> dict:
    return {"dairline": ctx.reg.pick(ctx.rng, AIRLINES)}


def _d_grandad(ctx: Ctx, s: dict) -> dict:
    return {"dname": ctx.anyone()[0], "dgrand": ctx.reg.pick(ctx.rng, OLD_MALE)}


def _d_rent(ctx: Ctx, s: dict) -> dict:
    return {"dname": ctx.anyone()[0], "drent": ctx.reg.pick(ctx.rng, RENTS)}


def _u_bf_job(ctx: Ctx, ch: dict) -> dict:
    return {"bf": ch["best_friend"]["bf"], "fact": "best_friend_job"}


def _u_lang_time(ctx: Ctx, ch: dict) -> dict:
    return {"lang": ch["language"]["lang"], "fact": "language_duration"}


def _d_blood(ctx: Ctx, s: dict) -> dict:
    return {"dbtype": ctx.rng.choice(BLOOD_TYPES)}


def _d_film(ctx: Ctx, s: dict) -> dict:
    return {"dfilm": ctx.reg.pick(ctx.rng, FILMS)}


UNANS = [
    Unans("other_pet", "pet", _u_other_pet,
          q=["What's my {osp} called, do you know?", "What's the name of my {osp}?"],
          c=["what my {osp} is called"], n=["my {osp}'s name"],
          distract=[("Slightly chaotic morning. My neighbour's {osp}, {dpet}, wandered in through the back "
                     "door and made itself very at home on our sofa until she came round to collect it, "
                     "looking mortified. Anyway, totally unrelated: how long do I boil an egg for a "
                     "properly jammy yolk?",
                     "Ha, {dpet} clearly has good taste in sofas. For a jammy yolk, lower a fridge-cold egg "
                     "into already boiling water for six and a half minutes, then straight into cold water "
                     "for a couple of minutes before peeling.")],
          dmake=_d_other_pet),
    Unans("pet_age", "pet", _u_pet_age,
          q=["How old is {pet} now?", "How old is {pet}?"], c=["how old {pet} is"], n=["{pet}'s age"]),
    Unans("other_sibling", "sibling", _u_other_sib,
          q=["What's my {orel} called, do you know?", "What did I say my {orel}'s name was?"],
          c=["what my {orel}'s name is"], n=["my {orel}'s name"],
          distract=[("My coworker {dname} spent the whole lunch break moaning about her {orel}, {dsib}, who "
                     "borrowed her car and returned it with an empty tank and a parking ticket. Made me "
                     "think: is there a nice way to set boundaries with family about lending stuff?",
                     "There is: be clear up front rather than resentful afterwards. Something like \"Happy "
                     "to lend it, I just need it back with a full tank by Sunday\" sets the expectation "
                     "without any drama. If it goes wrong, say so calmly and specifically the first time.")],
          dmake=_d_other_sib),
    Unans("sibling_city", "sibling", _u_sib_city,
          q=["Where's my {rel} living?", "Which city is my {rel} based in?"],
          c=["where my {rel} lives these days"], n=[],
          distract=[("My friend {dname}'s {rel} just moved to {dcity} for work and apparently can't find a "
                     "decent flat anywhere. Out of interest, what should you look out for when viewing a "
                     "rental in a hurry?",
                     "Check water pressure and the hot water, look for damp or mould (behind furniture and "
                     "in corners), test the windows and locks, ask about bills and the deposit scheme, and "
                     "take photos of everything. And read the whole contract before signing, however rushed "
                     "it feels.")],
          dmake=_d_sib_city),
    Unans("partner_job", "partner", _u_partner_job,
          q=["What kind of work does my {role} do?", "What job does my {role} have?"],
          c=["what my {role} does for a living"], n=["my {role}'s job"],
          distract=[("My friend {dname}'s husband has just retrained as {_da} {djob} in his fifties, which I "
                     "think is brilliant. Is it actually realistic to change careers that late, in your "
                     "experience? Asking out of general curiosity.",
                     "Very realistic, and increasingly common. People who switch later tend to bring "
                     "transferable skills, reliability and life experience that employers value. The main "
                     "hurdles are usually money during retraining and confidence, not age itself.")],
          dmake=_d_partner_job),
    Unans("anniversary", "partner", _u_anniv,
          q=["When's our anniversary?", "What date is my anniversary with my {role}?"],
          c=["when our anniversary is"], n=["our anniversary date"],
          distract=[("My parents' wedding anniversary is {ddate} and I've somehow been put in charge of "
                     "organising a family meal. What's a good way to make it feel special without it "
                     "turning into a whole production?",
                     "Keep it simple but personal: book somewhere they love, and bring a few old photos or "
                     "ask everyone to share a favourite memory of them over dessert. A short toast goes a "
                     "long way. That's plenty.")],
          dmake=_d_anniv),
    Unans("partner_birthday", "partner", _u_partner_bday,
          q=["When is my {role}'s birthday, do you know?"], c=["when my {role}'s birthday is"], n=["my {role}'s birthday"]),
    Unans("child_school", "child", _u_school,
          q=["What's the name of {kid}'s school?", "Which school does {kid} go to?"],
          c=["which school {kid} goes to"], n=["the name of {kid}'s school"],
          distract=[("My friend {dname}'s little boy has just started at {dschool} and she says the "
                     "uniform list is longer than her arm. What's a sensible way to label a mountain of "
                     "school clothes quickly?",
                     "Iron-on or stick-on name labels are the fastest; a laundry marker on the care label is "
                     "the cheapest. Do it all in one sitting with a film on, and label shoes and water "
                     "bottles too, since those are what go missing most.")],
          dmake=_d_school),
    Unans("manager", "work", _u_fixed("manager_name"),
          q=["What's the name of my manager?", "Who's my boss at work?"],
          c=["what my manager is called"], n=["my boss's name"],
          distract=[("My friend {dname} has the most micromanaging boss in history, a man called {dboss} who "
                     "wants updates on everything twice a day. How would you suggest handling someone like "
                     "that without making it worse?",
                     "Get ahead of him: offer a short written update at a fixed time each day, so the "
                     "check-ins become predictable. Ask directly what he needs to feel confident. Often "
                     "micromanagement eases once someone feels informed.")],
          dmake=_d_boss),
    Unans("car_colour", "car", _u_fixed("car_colour"),
          q=["What colour is my car?"], c=["what colour my car is"], n=["the colour of my car"],
          distract=[("Our neighbour has just had his {dcar} resprayed {dcolour}, and honestly the whole "
                     "street is talking about it. Does changing a car's colour affect insurance, out of "
                     "interest?",
                     "It can: a colour change is usually something you're supposed to tell your insurer "
                     "about, and the registration details should be updated too. It rarely changes the "
                     "premium much, but not declaring it could cause problems with a claim.")],
          dmake=_d_car_colour),
    Unans("music_teacher", "instrument", _u_teacher,
          q=["What's my {inst} teacher called?", "Who teaches me the {inst}?"],
          c=["who my {inst} teacher is"], n=["my {inst} teacher's name"],
          distract=[("A friend's daughter has a piano teacher called {dteacher} who apparently makes every "
                     "pupil clap rhythms for the first ten minutes. Is that actually a good way to learn?",
                     "It's a well-regarded technique: clapping and counting rhythms separately from the "
                     "notes builds a solid sense of timing, which is often the weakest area for beginners. "
                     "Ten minutes is a reasonable warm-up.")],
          dmake=_d_teacher),
    Unans("physio", "injury", _u_fixed("physio_name"),
          q=["What's my physio called?", "Who's my physiotherapist?"],
          c=["what my physio's name is"], n=["my physio's name"],
          distract=[("My mum's physio, a very stern woman called {dphysio}, has banned her from gardening for "
                     "a month and she's furious about it. Any ideas for keeping a restless retiree "
                     "entertained indoors?",
                     "Jigsaws, audiobooks, seed catalogues and planning next year's garden (which keeps the "
                     "hobby alive without the digging), a puzzle app, or a short online course on something "
                     "she's curious about. Regular phone calls help too.")],
          dmake=_d_physio),
    Unans("university", "degree", _u_fixed("university"),
          q=["Which uni did I go to?", "Where did I do my degree?"],
          c=["which uni I went to"], n=["the name of my university"],
          distract=[("My cousin has just got an offer from {duni} and the whole family is over the moon. What "
                     "are the things people wish they'd known before their first year at uni?",
                     "Common ones: go to the freshers' events even if you're unsure, join at least one "
                     "society, learn four or five cheap recipes, keep a simple budget, and ask for help "
                     "early if the work gets too much. Everyone else is nervous too.")],
          dmake=_d_uni),
    Unans("trip_airline", "trip", _u_fixed("trip_airline"),
          q=["Which airline am I flying with for my holiday?"],
          c=["which airline I booked for my trip"], n=["the airline I'm flying with"],
          distract=[("My colleague flew with {dairline} last week and they lost her suitcase for three days. "
                     "What should you actually do if your bag doesn't turn up?",
                     "Report it at the airline's desk before leaving the airport and keep the reference "
                     "number. Keep receipts for essentials you have to buy, since these are usually "
                     "reimbursable, and check your travel insurance too.")],
          dmake=_d_airline),
    Unans("grandfather", "grandmother", _u_fixed("grandfather_name"),
          q=["What was my grandad called?", "What's my grandfather's name?"],
          c=["what my grandad's name was"], n=["my grandfather's name"],
          distract=[("My friend {dname}'s grandad, {dgrand}, is turning a hundred this month and they want to "
                     "get him something meaningful. Any ideas for a present for someone who has everything?",
                     "Experiences and memories work best: a photo book of his life, a recorded message from "
                     "family and friends, a visit from someone he hasn't seen in ages, or a favourite meal. "
                     "Many countries also send an official card for a hundredth birthday.")],
          dmake=_d_grandad),
    Unans("rent", "home_city", _u_fixed("rent"),
          q=["How much do I pay in rent?"], c=["how much my rent is"], n=["my monthly rent"],
          distract=[("My friend {dname} pays {drent} a month for a box room with a window that doesn't open. "
                     "Is there a rule of thumb for how much of your income should go on rent?",
                     "A common guideline is to keep rent to around 30% of your take-home pay, though in "
                     "expensive cities many people pay more. What matters most is that what's left covers "
                     "bills, food and some savings.")],
          dmake=_d_rent),
    Unans("best_friend_job", "best_friend", _u_bf_job,
          q=["What's {bf}'s line of work?"], c=["what {bf} does for work"], n=["{bf}'s job"]),
    Unans("language_time", "language", _u_lang_time,
          q=["How long have I been learning {lang}?"], c=["how long I've been studying {lang}"], n=[]),
    Unans("blood_type", None, _u_fixed("blood_type"),
          q=["What's my blood type?"], c=["what blood type I am"], n=["my blood type"],
          distract=[("My dad gave blood for the first time at sixty-two and found out he's {dbtype}. He's "
                     "now acting like it's a personality trait. How often are you allowed to donate?",
                     "It varies by country, but typically whole blood can be given every 12 weeks for men and "
                     "every 16 weeks for women in the UK; other places use different intervals. The donation "
                     "service will tell you when you're next eligible.")],
          dmake=_d_blood),
    Unans("mother_name", None, _u_fixed("mother_name"),
          q=["What's my mum called?", "What's my mother's name?"], c=["what my mum's name is"],
          n=["my mum's name"]),
    Unans("favourite_film", None, _u_fixed("favourite_film"),
          q=["What's my favourite film?"], c=["what my all-time favourite film is"], n=["my favourite film"],
          distract=[("My housemate has watched {dfilm} about forty times and quotes it constantly. Is there a "
                     "name for that thing where you rewatch the same comfort film over and over?",
                     "People often call them 'comfort watches'. Psychologists link rewatching to "
                     "predictability and emotional safety: you know how it ends, so it's restful.")],
          dmake=_d_film),
    Unans("dentist", None, _u_fixed("dentist_name"),
          q=["What's my dentist called?"], c=["who my dentist is"], n=["my dentist's name"]),
]

# -- filler -----------------------------------------------------------------------------------------

GREET_USER = {
    "morning": ["Morning!", "Good morning! Coffee in hand, let's go.", "Morning, hope you're well."],
    "afternoon": ["Afternoon! Got a minute?", "Hi, hope your afternoon's going okay."],
    "evening": ["Evening! Got a sec?", "Hey, late one from me tonight."],
    "any": ["Hey!", "Hiya, me again.", "Hello hello.", "Hi! Long time no chat.", "Hey, a few things today.",
            "Hi there!"],
}
GREET_ASSISTANT = {
    "morning": ["Good morning! What can I do for you?", "Morning! Fire away."],
    "afternoon": ["Good afternoon! Of course, what's up?", "Hi! Happy to help, what's on your mind?"],
    "evening": ["Evening! Sure, what's up?", "Hi! No problem, what can I help with?"],
    "any": ["Hi! Good to hear from you. What's on your mind?", "Hello again! How can I help today?",
            "Hey! I'm all ears.", "Hi! What are we tackling today?"],
}
CLOSE_USER = ["That's brilliant, thanks. I'll leave you in peace now!", "Perfect, that's all for today. Cheers!",
              "Thanks, you're a star. Speak soon.", "Right, I'd better get on. Thanks for the help!",
              "Great, that sorts me out. Bye for now!"]
CLOSE_ASSISTANT = ["Anytime! Good luck with everything.", "Happy to help, speak soon!",
                   "You're welcome! Take care.", "Enjoy the rest of your day!"]
FOLLOW_UPS = ["Want me to turn that into a quick checklist?", "Does that help, or shall I go into more "
              "detail on any of it?", "How does that sound?", "Would a shorter version be more useful?",
              "Let me know how it goes!", "Anything you'd like me to adjust?"]
TAILS = ["No rush at all, whenever you've got a minute is fine.",
         "Sorry for the essay, my brain is all over the place today.",
         "Thanks in advance, honestly, you're saving my sanity here.",
         "Any pointers at all would be hugely appreciated, even rough ones.",
         "I'd love a straight answer, the internet is full of contradictions.",
         "Keep it simple if you can, I'm running on very little sleep."]
OPENERS = ["Okay, bit of a ramble, sorry.", "Bear with me, this turned into a bit of an essay.",
           "So, slightly random one.", "Can I pick your brain about something?", "Warning: long message.",
           "Okay, different topic entirely.", "Hope you don't mind me thinking out loud here.",
           "Right, this one's been bugging me all day."]
SMALL_TALK = [
    ("Random question while I wait for the kettle: does toast really always land butter side down, or "
     "is that a myth?",
     "There's some truth to it! From table height, a slice usually only has time for about half a turn "
     "before it hits the floor, so if it starts butter side up it tends to land butter side down. Drop it "
     "from much higher and the odds even out."),
    ("Can you give me a quick way to remember the difference between affect and effect? I get it wrong "
     "in every email.",
     "A handy trick: Affect is an Action (a verb), Effect is the End result (a noun). \"The rain affected "
     "my mood; the effect was a grumpy afternoon.\""),
    ("Is descaling a kettle actually worth doing, or is that something invented to sell products?",
     "It's worth it if you live in a hard-water area: limescale makes the kettle slower and less "
     "efficient. Boil a half-and-half mix of water and white vinegar (or use citric acid), leave it for "
     "an hour, then rinse and boil fresh water a couple of times."),
    ("How do I get candle wax out of a tablecloth? Asking for a clumsy friend. The friend is me.",
     "Scrape off what you can once it's hard, then lay brown paper or kitchen roll over the stain and "
     "press with a warm iron: the wax melts into the paper. Repeat with fresh paper, then treat any "
     "colour left behind with stain remover before washing."),
    ("Settle an argument for me: is a hot dog a sandwich?",
     "By a strict definition (filling between bread), you could argue yes. But most people, and most "
     "menus, treat it as its own thing. I'd say it's a sandwich technically and a hot dog spiritually."),
    ("Can you explain what an index fund is like I'm five?",
     "Imagine instead of picking one sweet from a shop, you buy a tiny piece of every sweet in it. If some "
     "go stale, others do fine, so overall you're okay. An index fund does that with companies: it buys a "
     "little of everything in a market list, cheaply."),
    ("Why do onions make you cry, and is there any trick that actually works?",
     "Cutting an onion releases a gas that irritates your eyes. What helps most: a very sharp knife "
     "(fewer damaged cells), chilling the onion first, and cutting near an extractor fan or open window."),
    ("What's a nice short poem I could read at a leaving do? Something light, not soppy.",
     "Something like: \"You're off to pastures new and bright, / We'll miss your jokes, your cake, your "
     "light. / Go conquer worlds, but now and then, / Come back and make the tea again.\" Easy to adapt!"),
    ("How long can cooked rice safely sit in the fridge?",
     "Cool it quickly (within an hour), refrigerate it, and eat it within about a day. When reheating, "
     "make sure it's piping hot all the way through, and only reheat it once."),
    ("Could you write me a two-line reply to a group chat, turning down a Saturday plan without "
     "sounding rude?",
     "\"Gutted to miss this one, Saturday's already spoken for! Have the best time and send photos.\""),
    ("Do houseplants actually clean the air, or is that a myth?",
     "Mostly a myth at normal home scale: you'd need an enormous number of plants to match a simple "
     "open window or an air purifier. They're still great for mood, though."),
    ("What's the trick to folding a fitted sheet? I've given up and just ball it up.",
     "Put your hands into two corners, tuck one corner into the other, repeat on the other side, then "
     "lay it flat, fold the elasticated edges in to make a rectangle, and fold as normal."),
    ("Is there a word for being tired but also wired? There must be one.",
     "People often say 'tired but wired', and you might also see 'overtired'. Some use the phrase "
     "'second wind' for the burst of energy that arrives just as you should be sleeping."),
    ("Why is the sky darker blue straight overhead than near the horizon?",
     "Near the horizon you're looking through much more atmosphere, which scatters light of all colours "
     "and washes the blue out towards white. Straight up there's less air in the way, so it looks deeper."),
    ("How do I stop my glasses fogging up when I wear a scarf?",
     "Keep the scarf below your nose, or tuck it so your breath goes down rather than up. An anti-fog "
     "spray or wipe helps a lot, and washing the lenses with a little washing-up liquid works as a "
     "cheap fix."),
    ("Quick one: what's the difference between baking soda and baking powder?",
     "Baking soda is pure bicarbonate and needs an acid in the recipe (yoghurt, lemon, buttermilk) to "
     "work. Baking powder already contains the acid, so it works with just moisture and heat."),
]

QUESTION_PRE = [
    "Knackered after work.", "Just back from the supermarket and my brain is fried.",
    "I'm filling in a form and I've gone blank.", "On the bus, so I'll keep this short.",
    "Weird question, I know.", "Sorry, bit scatterbrained today.", "Hope your week's going okay!",
    "Okay, testing my own memory here.", "Bear with me, my memory is shot this week.",
    "Coffee hasn't kicked in yet.",
]
WRAP_Q = ["{Q}", "Jog my memory: {q}", "Quick one, {q}", "{PRE} {Q}", "{PRE} Quick one: {q}",
          "Odd question, but {q}", "{Q} I've gone totally blank.", "Hey, {q}"]
WRAP_C = ["Could you jog my memory about {c}?", "Do you still remember {c}?",
          "Any idea {c}? I'm sure I told you.", "{PRE} Could you jog my memory about {c}?",
          "I'm trying to remember {c}. Help?", "Have you any idea {c}?",
          "{PRE} Can you help me remember {c}?"]
WRAP_N = ["What was {n} again?", "I've blanked on {n}. Got it handy?", "{PRE} Any idea what {n} is?",
          "Memory failing me here: what's {n}?"]


def _question_text(rng: random.Random, q: list[str], c: list[str], n: list[str],
                   slots: dict) -> tuple[str, list[str]]:
    forms = [("q", t) for t in q] + [("c", t) for t in c] + [("n", t) for t in n]
    form, tpl = rng.choice(forms)
    core, values = fill(tpl, slots)
    pre = rng.choice(QUESTION_PRE)
    if form == "q":
        wrap = rng.choice(WRAP_Q)
        text = wrap.replace("{PRE}", pre).replace("{Q}", core).replace("{q}", _lower_first(core))
    elif form == "c":
        text = rng.choice(WRAP_C).replace("{PRE}", pre).replace("{c}", core)
    else:
        text = rng.choice(WRAP_N).replace("{PRE}", pre).replace("{n}", core)
    return text, values


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

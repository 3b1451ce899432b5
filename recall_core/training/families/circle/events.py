"""What the user's friends get up to: event kinds, how the user tells them, how they are asked about.

Every kind has a value pool, a few ways the user reports it (third person, about a named friend:
"Noor finally booked her trip to Oaxaca"), a way it changes (a plan moved, a choice swapped) and
questions asked later by the friend's name ("Where is Noor going on her trip?"). Slots:
``{n}`` the friend's name, ``{v}`` the value, ``{p}`` / ``{o}`` the friend's pronoun (she/he,
her/him), ``{ps}`` the possessive (her/his). Every sentence is this family's own.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Kind:
    """One kind of news about a friend."""

    key: str
    values: tuple[str, ...]
    tell: tuple[str, ...]  # the user reports it
    change: tuple[str, ...]  # the user reports that it changed ({v}: the new value)
    ask: tuple[str, ...]  # asked later, by name


KINDS: tuple[Kind, ...] = (
    Kind(
        "trip",
        ("Oaxaca", "Lake Bled", "the Faroe Islands", "Marrakesh", "Tasmania", "the Dolomites", "Kyoto", "Cape Breton",
         "Sardinia", "Patagonia", "Hokkaido", "the Azores"),
        ("Big news from {n}: {p} finally booked a trip to {v} for the autumn.",
         "{n} spent the whole of lunch showing me photos from {v}, {p} only got back on Sunday.",
         "Apparently {n} is off to {v} next month and has already packed twice."),
        ("Turns out {n} swapped destinations: {ps} trip is now to {v} instead.",
         "Update on {n}: the trip changed, {p} is going to {v} now."),
        ("Where is {n} going on {ps} trip?", "Which place did {n} travel to?", "Where's {n}'s holiday this year?"),
    ),
    Kind(
        "course",
        ("pottery", "beekeeping", "sign language", "welding", "improv comedy", "life drawing", "bookbinding",
         "sourdough baking", "stand-up paddling", "watch repair", "glassblowing", "first aid"),
        ("{n} signed up for a {v} course on Tuesday evenings, which I did not see coming.",
         "Guess who's taking a {v} class? {n}! {p} says it's the best part of {ps} week.",
         "{n} has been going to {v} lessons at the community centre since spring."),
        ("{n} dropped the old class and moved over to {v} instead.",),
        ("What class is {n} taking?", "What did {n} sign up to learn?", "Which course has {n} been going to?"),
    ),
    Kind(
        "pet",
        ("a greyhound", "two guinea pigs", "a tortoise", "a rescue ferret", "a cockatiel", "a corgi puppy",
         "a pair of rabbits", "a Maine Coon", "an axolotl", "a border collie"),
        ("{n} adopted {v} from the shelter last week and won't stop sending pictures.",
         "So {n} came home with {v}. {ps} landlord doesn't know yet."),
        ("{n} had to give the first one back, but {p} has {v} now.",),
        ("What animal did {n} adopt?", "What pet did {n} bring home?", "Which animal does {n} have now?"),
    ),
    Kind(
        "job",
        ("a bike repair shop", "the city aquarium", "a recording studio", "a children's hospital", "a vineyard",
         "the planetarium", "a ferry company", "a chocolate factory", "the botanic garden", "an architecture firm"),
        ("{n} started a new job at {v}, first week went really well apparently.",
         "Remember how {n} hated {ps} old office? {p} just got hired by {v}."),
        ("{n} left after a month and took an offer from {v}.",),
        ("Where did {n} start working?", "Who hired {n}?", "Where does {n} work these days?"),
    ),
    Kind(
        "purchase",
        ("a vintage motorbike", "a rowing machine", "a telescope", "an electric piano", "a camper van", "a kayak",
         "a sewing machine", "a 3D printer", "a record player", "an espresso machine", "a canoe", "a drone"),
        ("{n} went and bought {v}, no idea where {p}'ll keep it.",
         "Saw {n} at the weekend, {p} just splashed out on {v}."),
        ("{n} returned it and got {v} instead.",),
        ("What did {n} buy?", "What did {n} splash out on?", "What's the big thing {n} just bought?"),
    ),
    Kind(
        "date",
        ("12 June", "3 March", "27 September", "8 November", "19 April", "30 July", "14 February", "5 October",
         "22 August", "1 December"),
        ("{n}'s wedding is on {v}, so I need to sort out a suit or a dress soon.",
         "{n} told me the big day is {v}: {p} is finally getting married!"),
        ("{n} had to move the wedding, it's on {v} now.",),
        ("When is {n} getting married?", "What date is {n}'s wedding?", "When's {n}'s big day?"),
    ),
    Kind(
        "race",
        ("the Berlin marathon", "a half-Ironman", "the Three Peaks", "a 100 km bike ride", "an ultramarathon",
         "a charity swim across the lake", "the city 10K", "a triathlon"),
        ("{n} is training for {v} and runs before work every single day.",
         "Did I tell you {n} entered {v}? {p} is raising money for the hospice."),
        ("{n} switched events, {p} is doing {v} now.",),
        ("What is {n} training for?", "Which event did {n} enter?", "What race is {n} doing?"),
    ),
    Kind(
        "book",
        ("a cookbook about dumplings", "a thriller set in Lagos", "a history of lighthouses", "a memoir about sailing",
         "a guide to urban foraging", "a novel about a circus", "a children's book about owls"),
        ("{n} is writing {v}! {p} showed me the first chapter.",
         "I found out {n} has a publisher for {v}, which {p} kept secret for a year."),
        ("{n} shelved that project and is writing {v} now.",),
        ("What is {n} writing?", "What's {n}'s book about?", "What kind of book is {n} working on?"),
    ),
    Kind(
        "move",
        ("Glasgow", "Lisbon", "Montreal", "Bristol", "Tallinn", "Wellington", "Bruges", "Valencia", "Halifax",
         "Ljubljana"),
        ("{n} is moving to {v} in the spring, I'll miss {o} loads.",
         "{n} has found a flat in {v} and hands in {ps} notice next week."),
        ("{n} changed {ps} mind about the move, it's {v} now.",),
        ("Where is {n} moving to?", "Which city is {n} relocating to?", "Where did {n} find a flat?"),
    ),
    Kind(
        "gift",
        ("a hand-knitted blanket", "a framed map", "concert tickets", "a bonsai tree", "a pizza oven",
         "a signed football", "a hot-air balloon ride", "a weekend in a treehouse"),
        ("For {ps} mum's birthday {n} gave {v}, which beats my gift by miles.",
         "{n} surprised {ps} partner with {v} for their anniversary."),
        ("{n} couldn't get the first present in time and gave {v} instead.",),
        ("What present did {n} give?", "What did {n} give as a present?", "What was {n}'s surprise present?"),
    ),
)

#: Friends' first names, she/he.
NAMES = (
    ("Noor", "she"), ("Tomasz", "he"), ("Ines", "she"), ("Kwame", "he"), ("Freya", "she"), ("Mateo", "he"),
    ("Yuki", "she"), ("Oskar", "he"), ("Priyanka", "she"), ("Declan", "he"), ("Leilani", "she"), ("Bastien", "he"),
    ("Marisol", "she"), ("Rufus", "he"), ("Astrid", "she"), ("Jomo", "he"), ("Celeste", "she"), ("Anselm", "he"),
    ("Dagny", "she"), ("Emeka", "he"), ("Solveig", "she"), ("Ignacio", "he"), ("Wren", "she"), ("Casimir", "he"),
)

#: How the assistant answers news about a friend.
ACKS = (
    "Oh, that's lovely news about {n}!", "Wow, good for {n}.", "Ha, that sounds just like {n} from what you've said.",
    "That's a big step for {n}.", "Thanks for keeping me posted about {n}.", "Exciting times for {n}, then.",
    "Noted! I hope it goes well for {o}.",
)
#: Wrappers around a question asked later ({q}: the question).
WRAP = (
    "{q}", "{q}", "{q}", "Quick one about {n}: {q}", "I was just thinking about {n}. {q}",
    "{q} I can't keep track of everyone.", "Settle something for me. {q}",
)

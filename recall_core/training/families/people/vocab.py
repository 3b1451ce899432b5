"""The vocabularies of the people family: attribute values (jobs, cities, pets, hobbies, months, cars,
studies), first names and nicknames, the relations a cast member can have, and pronouns.
"""

from __future__ import annotations

from dataclasses import dataclass

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

"""The values a changes-family fact can take, and the aliases that name each of them.

Each pool entry is a tuple of aliases, the first the form written in text; :func:`aliases` maps
any written form (a pooled value, an amount of money, a date) back to all of its aliases.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# -- value vocabularies --------------------------------------------------------------------------
# Each entry is a tuple of aliases; the first is the canonical form used in text.

_POOLS: dict[str, list[tuple[str, ...]]] = {
    "city": [
        ("Lisbon",), ("Porto",), ("Ghent",), ("Utrecht",), ("Leeds",), ("Glasgow",), ("Bristol",),
        ("Valencia",), ("Gothenburg",), ("Tallinn",), ("Montreal",), ("Halifax",), ("Wellington",),
        ("Hobart",), ("Galway",), ("Bologna",), ("Lyon",), ("Leipzig",), ("Krakow",), ("Brighton",),
        ("Norwich",), ("Edinburgh",), ("Seville",), ("Rotterdam",), ("Aarhus",), ("Bergen",),
        ("Ljubljana",), ("Vancouver",), ("Pittsburgh",), ("Dunedin",), ("Adelaide",), ("Inverness",),
        ("Antwerp",), ("Trieste",), ("Bordeaux",), ("Cardiff",), ("Belfast",), ("Reykjavik",),
        ("Marseille",), ("Dresden",),
    ],
    "job": [
        ("physiotherapist", "physio"), ("paralegal",), ("sous chef",), ("quantity surveyor",),
        ("UX researcher",), ("dental hygienist",), ("air traffic controller",), ("locksmith",),
        ("sommelier",), ("data engineer",), ("museum curator", "curator"), ("speech therapist",),
        ("park ranger",), ("translator",), ("copywriter",), ("bike mechanic",), ("radiographer",),
        ("florist",), ("tattoo artist",), ("supply chain analyst",), ("midwife",), ("electrician",),
    ],
    "name_f": [
        ("Ines",), ("Oksana",), ("Marguerite",), ("Saoirse",), ("Anouk",), ("Priya",), ("Mireille",),
        ("Hana",), ("Leilani",), ("Nkechi",), ("Rosalind",), ("Esme",), ("Freya",), ("Ottilie",),
        ("Amara",), ("Paloma",), ("Signe",), ("Yara",), ("Tamsin",), ("Ingrid",), ("Delphine",),
        ("Beatrix",), ("Zainab",), ("Marisol",), ("Orla",), ("Fenella",), ("Agnieszka",), ("Thandiwe",),
    ],
    "name_m": [
        ("Tomasz",), ("Raffaele",), ("Kofi",), ("Bilal",), ("Fergus",), ("Yusuf",), ("Teodor",),
        ("Callum",), ("Bastian",), ("Oskar",), ("Matteo",), ("Joaquin",), ("Ravi",), ("Dmitri",),
        ("Gideon",), ("Emeka",), ("Cormac",), ("Lorcan",), ("Hamish",), ("Caspar",), ("Arjun",),
        ("Soren",), ("Rufus",), ("Kenji",), ("Wendell",), ("Anselm",), ("Benedek",), ("Ruairi",),
    ],
    "car": [
        ("Skoda Octavia", "Octavia"), ("Mazda MX-5", "MX-5"), ("Volvo V70", "V70"), ("Nissan Leaf",),
        ("Fiat Panda",), ("Subaru Outback",), ("Kia Niro", "Niro"), ("Toyota Yaris", "Yaris"),
        ("Land Rover Defender", "Defender"), ("Tesla Model 3", "Model 3"), ("Ford Fiesta", "Fiesta"),
        ("Peugeot 208",), ("Hyundai Ioniq 5", "Ioniq 5"), ("Citroen Berlingo", "Berlingo"),
        ("Dacia Duster", "Duster"), ("Mini Cooper",),
    ],
    "phone": [
        ("Pixel 7a",), ("iPhone 12 mini", "12 mini"), ("Galaxy S23", "Samsung Galaxy S23"),
        ("Fairphone 5",), ("OnePlus 11",), ("Moto G84",), ("iPhone 15 Pro",), ("Xperia 10",),
        ("Galaxy Z Flip 5", "Z Flip 5"), ("Pixel 8 Pro",), ("iPhone SE",), ("Nokia G42",),
    ],
    "laptop": [
        ("ThinkPad X1 Carbon", "X1 Carbon"), ("MacBook Air",), ("MacBook Pro",),
        ("Framework 13",), ("Dell XPS 13", "XPS 13"), ("Surface Laptop 5", "Surface Laptop"),
        ("ASUS Zenbook", "Zenbook"), ("HP Spectre", "Spectre"), ("Acer Swift 3",),
    ],
    "diet": [
        ("vegetarian", "veggie"), ("vegan",), ("pescatarian", "pescetarian"), ("keto",),
        ("gluten-free",), ("paleo",), ("flexitarian",), ("low-FODMAP", "FODMAP"), ("dairy-free",),
        ("macrobiotic",), ("Whole30", "Whole 30"), ("high-protein",),
    ],
    "gym": [
        ("bouldering",), ("spin class", "spin classes", "spinning"), ("CrossFit",),
        ("reformer Pilates", "Pilates"), ("kickboxing",), ("lane swimming",), ("powerlifting",),
        ("Muay Thai",), ("trail running",), ("barre",), ("calisthenics",), ("aqua aerobics",),
    ],
    "project": [
        ("Project Kestrel", "Kestrel"), ("Project Lighthouse", "Lighthouse"),
        ("Project Marigold", "Marigold"), ("Project Sundial", "Sundial"),
        ("Project Tangerine", "Tangerine"), ("Project Nightjar", "Nightjar"),
        ("Project Driftwood", "Driftwood"), ("Project Copperline", "Copperline"),
        ("Project Halcyon", "Halcyon"), ("Project Saltmarsh", "Saltmarsh"),
        ("Project Foxglove", "Foxglove"), ("Project Quarrystone", "Quarrystone"),
    ],
    "show": [
        ("Severance",), ("Slow Horses",), ("Taskmaster",), ("Derry Girls",), ("Shogun",),
        ("Only Murders in the Building", "Only Murders"), ("Great British Bake Off", "Bake Off"),
        ("Succession",), ("Ted Lasso",), ("Detectorists",), ("The White Lotus", "White Lotus"),
        ("Fleabag",), ("Frasier",), ("Abbott Elementary",), ("Reservation Dogs",), ("Andor",),
    ],
    "language": [
        ("Portuguese",), ("Japanese",), ("Welsh",), ("Korean",), ("Italian",), ("Dutch",),
        ("Turkish",), ("Mandarin",), ("Icelandic",), ("Swahili",), ("Greek",), ("Polish",),
    ],
    "coffee": [
        ("cortado",), ("oat latte",), ("double espresso",), ("iced americano",), ("matcha latte",),
        ("macchiato",), ("cold brew",), ("mocha",), ("chai latte",), ("piccolo",),
    ],
    "pet": [
        ("Biscuit",), ("Pickle",), ("Waffles",), ("Turnip",), ("Bramble",), ("Crumpet",),
        ("Gizmo",), ("Marmalade",), ("Sprout",), ("Ziggy",), ("Porridge",), ("Pepperpot",),
        ("Moomin",), ("Sir Wobbles", "Wobbles"),
    ],
    "allergy": [
        ("sesame",), ("shellfish",), ("hazelnuts", "hazelnut"), ("peanuts", "peanut"),
        ("strawberries", "strawberry"), ("celery",), ("kiwi fruit", "kiwi"), ("mustard",),
        ("walnuts", "walnut"),
    ],
    "instrument": [
        ("cello",), ("trombone",), ("ukulele",), ("accordion",), ("clarinet",), ("bass guitar",),
        ("harp",), ("banjo",), ("oboe",), ("viola",), ("saxophone", "sax"), ("mandolin",),
    ],
}
_POOLS["name"] = _POOLS["name_f"] + _POOLS["name_m"]
#: pools whose later mentions may use a shorter alias in text
_SHORT_OK = ("car", "phone", "laptop", "project", "show")

_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")
_CURRENCY = ("£", "€", "$")
_SPECIES = ("cat", "dog", "rabbit", "parrot", "ferret")
_TERMS = ("girlfriend", "boyfriend", "partner")
_NAMED_RELS = ("sister", "brother", "flatmate", "cousin", "neighbour", "best mate", "coworker", "boss")
_PARENTS = ("mum", "dad")
_REL_POOL = {"sister": "name_f", "brother": "name_m"}
_REL_PAIR = {"sister": "brother", "brother": "sister", "flatmate": "neighbour",
             "neighbour": "flatmate", "cousin": "best mate", "best mate": "cousin",
             "coworker": "boss", "boss": "coworker"}


@dataclass(frozen=True)
class _V:
    """A value: its aliases (answers) and the forms that may appear in text."""

    aliases: tuple[str, ...]
    forms: tuple[str, ...]

    @property
    def key(self) -> str:
        return self.aliases[0]


def _normal(text: str) -> str:
    return " " + re.sub(r"[^a-z0-9]+", " ", text.lower()).strip() + " "


def _clash(a: str, b: str) -> bool:
    na, nb = _normal(a), _normal(b)
    return na in nb or nb in na


_REGISTRY: dict[str, tuple[str, ...]] = {}
for _entries in _POOLS.values():
    for _entry in _entries:
        for _alias in _entry:
            if _REGISTRY.setdefault(_normal(_alias), _entry) != _entry:
                raise AssertionError(f"alias {_alias!r} is in two entries")

_MONEY = re.compile(r"^[£€$]?(\d{1,3}(?:,\d{3})*|\d+)$")
_DATE_DM = re.compile(r"^(\d{1,2})(?:st|nd|rd|th)?(?: of)? ([A-Z][a-z]+)$")
_DATE_MD = re.compile(r"^([A-Z][a-z]+) (\d{1,2})(?:st|nd|rd|th)?$")


def _ordinal(d: int) -> str:
    suffix = "th" if 10 <= d % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(d % 10, "th")
    return f"{d}{suffix}"


def _date_aliases(day: int, month: str) -> tuple[str, ...]:
    o = _ordinal(day)
    return (f"{day} {month}", f"{month} {day}", f"{o} of {month}", f"{month} {o}", f"{o} {month}")


def _money_aliases(amount: int, symbol: str) -> tuple[str, ...]:
    return (f"{symbol}{amount:,}", f"{amount:,}", str(amount))


def aliases(surface: str) -> tuple[str, ...]:
    """The acceptable ways to name the value that the text form ``surface`` names."""
    hit = _REGISTRY.get(_normal(surface))
    if hit is not None:
        return hit
    m = _MONEY.match(surface)
    if m:
        symbol = surface[0] if surface[0] in _CURRENCY else "£"
        return _money_aliases(int(m.group(1).replace(",", "")), symbol)
    m = _DATE_DM.match(surface)
    if m and m.group(2) in _MONTHS:
        return _date_aliases(int(m.group(1)), m.group(2))
    m = _DATE_MD.match(surface)
    if m and m.group(1) in _MONTHS:
        return _date_aliases(int(m.group(2)), m.group(1))
    return (surface,)

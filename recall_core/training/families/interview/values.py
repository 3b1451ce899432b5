"""The values an interview-family fact can take, and how dates, times and numbers are written.

A ``Val`` holds the forms the generator may write and every alias a reply may use instead.
"""

from __future__ import annotations

from dataclasses import dataclass

# -- values ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Val:
    """A value: the surface forms the generator may write, and every acceptable alias."""

    forms: tuple[str, ...]
    answers: tuple[str, ...]
    field: str = ""  # job only: the line of work ("radiography")


def _simple(word: str, *aliases: str) -> Val:
    return Val((word,), (word,) + aliases)


_MONTHS = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)
_NUMBER_WORDS = (
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
)


def _ordinal(d: int) -> str:
    if 10 <= d % 100 <= 20:
        return f"{d}th"
    return str(d) + {1: "st", 2: "nd", 3: "rd"}.get(d % 10, "th")


def _date(day: int, month: int) -> Val:
    m = _MONTHS[month - 1]
    o = _ordinal(day)
    forms = (f"{day} {m}", f"{m} {day}", f"the {o} of {m}", f"{m} {o}")
    return Val(forms, (f"{day} {m}", f"{m} {day}", f"{o} of {m}", f"{m} {o}", f"{o} {m}"))


def _time(h24: int, minute: int) -> Val:
    h12 = h24 if h24 <= 12 else h24 - 12
    ampm = "am" if h24 < 12 else "pm"
    w = _NUMBER_WORDS[h12]
    nxt = _NUMBER_WORDS[h12 % 12 + 1]
    digits = f"{h12}:{minute:02d}"
    extra = (f"{digits}{ampm}", f"{digits} {ampm}")
    if h24 > 12:
        extra += (f"{h24}:{minute:02d}",)
    if minute == 0:
        forms = (f"{h12}{ampm}", f"{w} o'clock", digits)
        answers = forms + (f"{h12} {ampm}", f"{h12} o'clock") + extra
    elif minute == 30:
        forms = (digits, f"half {w}", f"half past {w}")
        answers = forms + (f"{w} thirty",) + extra
    elif minute == 15:
        forms = (digits, f"quarter past {w}")
        answers = forms + (f"{w} fifteen",) + extra
    else:  # 45
        forms = (digits, f"quarter to {nxt}")
        answers = forms + (f"{w} forty-five",) + extra
    return Val(forms, answers)


def _number(n: int) -> Val:
    return Val((str(n), _NUMBER_WORDS[n]), (str(n), _NUMBER_WORDS[n]))


PET_NAMES = tuple(_simple(x) for x in (
    "Pickle", "Mochi", "Bramble", "Turnip", "Noodle", "Waffle", "Pippin", "Clementine",
    "Sprocket", "Marmite", "Dumpling", "Gizmo", "Juniper", "Crumpet", "Ziggy", "Hercules",
    "Pretzel", "Tofu", "Bagel", "Moose", "Wellington", "Custard", "Nacho", "Ludo",
))
PERSON_NAMES = tuple(_simple(x) for x in (
    "Ines", "Tomasz", "Priyanka", "Declan", "Marisol", "Anouk", "Rafe", "Saoirse", "Kwame",
    "Lotte", "Ezra", "Mirela", "Hamish", "Yusuf", "Beatriz", "Calum", "Ingrid", "Niamh",
    "Teodor", "Farah", "Luca", "Greta", "Oisin", "Zainab", "Bartek", "Esme",
))
JOBS = (
    Val(("radiographer",), ("radiographer", "radiography"), "radiography"),
    Val(("pharmacist",), ("pharmacist", "pharmacy"), "pharmacy"),
    Val(("tree surgeon",), ("tree surgeon", "arborist")),
    Val(("actuary",), ("actuary", "actuarial")),
    Val(("locksmith",), ("locksmith",)),
    Val(("welder",), ("welder", "welding"), "welding"),
    Val(("midwife",), ("midwife", "midwifery"), "midwifery"),
    Val(("paralegal",), ("paralegal",)),
    Val(("physiotherapist",), ("physiotherapist", "physio", "physiotherapy"), "physio"),
    Val(("sound engineer",), ("sound engineer", "sound engineering")),
    Val(("translator",), ("translator", "translation"), "translation"),
    Val(("dental hygienist",), ("dental hygienist", "hygienist")),
    Val(("quantity surveyor",), ("quantity surveyor", "surveyor")),
    Val(("bus driver",), ("bus driver",)),
    Val(("florist",), ("florist",)),
    Val(("archivist",), ("archivist",)),
    Val(("sommelier",), ("sommelier",)),
    Val(("air traffic controller",), ("air traffic controller", "air traffic control"),
        "air traffic control"),
    Val(("speech therapist",), ("speech therapist", "speech therapy"), "speech therapy"),
    Val(("veterinary nurse",), ("veterinary nurse", "vet nurse", "vet nursing"), "vet nursing"),
    Val(("cartographer",), ("cartographer",)),
    Val(("stonemason",), ("stonemason",)),
)
TRIP_CITIES = tuple(_simple(x) for x in (
    "Tallinn", "Porto", "Ljubljana", "Valletta", "Bergen", "Gdansk", "Trieste", "Lyon",
    "Seville", "Hanoi", "Montreal", "Osaka", "Antwerp", "Tbilisi", "Marrakech", "Reykjavik",
    "Bologna", "Vilnius", "Krakow", "Copenhagen", "Naples", "Busan",
))
HOMETOWNS = tuple(_simple(x) for x in (
    "Dundee", "Swansea", "Galway", "Duluth", "Ballarat", "Hobart", "Limerick", "Tulsa",
    "Spokane", "Aberystwyth", "Inverness", "Wollongong", "Saskatoon", "Bendigo", "Whitby",
    "Penzance", "Kilkenny", "Dunedin", "Boise", "Lancaster",
))
CARS = (
    _simple("Skoda Octavia", "Octavia"), _simple("Honda Jazz"), _simple("Toyota Yaris", "Yaris"),
    _simple("Mazda MX-5", "MX-5", "MX5"), _simple("Kia Niro", "Niro"), _simple("Volvo V70", "V70"),
    _simple("Subaru Outback", "Outback"), _simple("Fiat Panda"), _simple("Nissan Leaf"),
    _simple("Renault Zoe"), _simple("Ford Fiesta", "Fiesta"), _simple("Citroen Berlingo", "Berlingo"),
    _simple("Hyundai Ioniq", "Ioniq"), _simple("Dacia Duster", "Duster"), _simple("Mini Cooper"),
)
INSTRUMENTS = (
    _simple("cello"), _simple("ukulele", "uke"), _simple("bassoon"), _simple("banjo"),
    _simple("accordion"), _simple("harp"), _simple("trombone"), _simple("mandolin"),
    _simple("oboe"), _simple("clarinet"), _simple("saxophone", "sax"), _simple("violin", "fiddle"),
    _simple("bagpipes"), _simple("double bass"), _simple("flute"), _simple("piano"),
)
ALLERGENS = (
    _simple("sesame"), _simple("shellfish"), _simple("peanuts", "peanut"), _simple("kiwi"),
    _simple("mustard"), _simple("celery"), _simple("walnuts", "walnut"), _simple("coconut"),
    _simple("lupin"), _simple("buckwheat"), _simple("strawberries", "strawberry"),
    _simple("soya", "soy"),
)
BOOKS = (
    _simple("Middlemarch"), _simple("The Remains of the Day", "Remains of the Day"),
    _simple("Piranesi"), _simple("Stoner"), _simple("Wolf Hall"), _simple("Circe"),
    _simple("Moby-Dick", "Moby Dick"), _simple("The Overstory", "Overstory"),
    _simple("Lonesome Dove"), _simple("Station Eleven"), _simple("Hamnet"), _simple("Kindred"),
    _simple("Jane Eyre"), _simple("Dune"), _simple("The Secret History", "Secret History"),
    _simple("Anna Karenina"),
)
RACES = (
    _simple("half marathon", "half-marathon"), _simple("10k", "10 k"), _simple("triathlon"),
    _simple("ultramarathon", "ultra marathon"), _simple("5k", "5 k"), _simple("fell race"),
    _simple("marathon"), _simple("duathlon"), _simple("Tough Mudder"), _simple("aquathlon"),
)
NEIGHBOURHOODS = tuple(_simple(x) for x in (
    "Leith", "Hillhead", "Ancoats", "Jericho", "Clifton", "Headingley", "Stokes Croft",
    "Moseley", "Roath", "Portobello", "Kemptown", "Didsbury", "Walthamstow", "Meanwood",
    "Jesmond", "Stockbridge", "Gorgie", "Rathmines", "Easton", "Partick",
))
GUEST_COUNTS = tuple(_number(n) for n in range(6, 17))
CROPS = (
    _simple("runner beans"), _simple("courgettes", "courgette", "zucchini"), _simple("kohlrabi"),
    _simple("rhubarb"), _simple("fennel"), _simple("chard", "Swiss chard"),
    _simple("pumpkins", "pumpkin"), _simple("sweetcorn"), _simple("broad beans"),
    _simple("asparagus"), _simple("leeks", "leek"), _simple("beetroot"),
    _simple("tomatillos", "tomatillo"), _simple("artichokes", "artichoke"),
)
LANGUAGES = tuple(_simple(x) for x in (
    "Portuguese", "Korean", "Welsh", "Finnish", "Greek", "Turkish", "Icelandic", "Swahili",
    "Dutch", "Japanese", "Polish", "Hungarian", "Tagalog", "Arabic", "Basque", "Mandarin",
))
DATES = tuple(_date(d, m) for m in range(1, 13) for d in (1, 2, 3, 4, 5, 7, 9, 11, 12, 14, 17,
                                                         19, 21, 22, 23, 25, 27, 28, 30)
              if not (m == 2 and d == 30))
TIMES = tuple(_time(h, m) for h in range(8, 18) for m in (0, 15, 30, 45))

SPECIES = ("puppy", "kitten", "rabbit", "greyhound", "spaniel", "ferret", "guinea pig", "lurcher")
APPOINTMENTS = ("dentist", "optician", "GP", "vet", "hairdresser", "osteopath")
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")

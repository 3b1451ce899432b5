"""The values a passing-family fact can take: names, pets, places, jobs, things, dates.

Each pool lists distinct values (a tuple item is a value and its aliases); a user draws from
them through the registry in :mod:`.common`, so no two of a user's values overlap.
"""

from __future__ import annotations

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

"""The people and things a dates-family user talks about: names, relations, cities, companies,
pets, appointments, deadlines and other people's events.
"""

from __future__ import annotations

# -- people and things -----------------------------------------------------------------------------

FEMALE = ("Odile", "Ayesha", "Bronwen", "Saoirse", "Hana", "Mireille", "Astrid", "Noor", "Greta",
          "Imogen", "Yara", "Tamsin", "Esme", "Marisol", "Ottilie", "Leonie", "Zainab", "Ingrid",
          "Philippa", "Rosalind", "Keziah", "Annika", "Delphine", "Wren")
MALE = ("Tomasz", "Kofi", "Matteo", "Yusuf", "Bram", "Callum", "Dmitri", "Anders", "Rohan",
        "Declan", "Emeka", "Teodor", "Ciaran", "Hamish", "Florian", "Ignatius", "Laszlo", "Obi",
        "Rafferty", "Soren", "Gideon", "Mateus", "Barnaby", "Idris")
REL_F = ("sister", "mum", "niece", "grandma", "aunt", "goddaughter", "stepmum")
REL_M = ("brother", "dad", "nephew", "grandad", "uncle", "godson", "stepdad")
REL_N = ("cousin", "friend", "colleague", "neighbour", "flatmate")
PARTNER_F = ("wife", "girlfriend", "partner")
PARTNER_M = ("husband", "boyfriend", "partner")
CITIES = ("Lisbon", "Porto", "Reykjavik", "Tbilisi", "Split", "Valencia", "Krakow", "Bergen",
          "Palermo", "Ljubljana", "Tallinn", "Seville", "Bilbao", "Marrakech", "Naples", "Bordeaux",
          "Gdansk", "Dubrovnik", "Thessaloniki", "Trieste", "Riga", "Cagliari", "Innsbruck",
          "Vilnius")
COMPANIES = ("Brightwell Analytics", "Halden & Voss", "Corrie Print", "Northgate Surveys",
             "Pellow Foods", "Marram Studio", "Quillfeather Press", "Ashgrove Logistics",
             "Tessellate Labs", "Bramblecote Vets")
PETS = ("Biscuit", "Pickle", "Mochi", "Juniper", "Dumpling", "Nutmeg", "Ziggy", "Bramble",
        "Olive", "Crumpet", "Fennel", "Sprout")

# (noun phrase after "the", words that name it, why one would go)
APPTS = (
    ("periodontist", ("periodontist",), "my gums have been bleeding every time I brush"),
    ("physio", ("physio", "physiotherapist", "physiotherapy"),
     "my shoulder still clicks whenever I reach for a high shelf"),
    ("optician", ("optician", "opticians", "eye test"), "I've been squinting at my laptop like a mole"),
    ("dermatologist", ("dermatologist",), "there's a mole on my back I want someone to actually look at"),
    ("osteopath", ("osteopath",), "my lower back has been grumbling after we moved the sofa"),
    ("audiologist", ("audiologist", "hearing test"), "I keep asking everyone to repeat themselves"),
    ("podiatrist", ("podiatrist",), "my heel's been killing me on the morning runs"),
    ("hygienist", ("hygienist",), "I'm well overdue a scale and polish"),
    ("allergist", ("allergist", "allergy"), "I want the hay fever thing properly tested this year"),
    ("vet", ("vet",), "the cat's due her booster jabs"),
    ("barber", ("barber", "haircut"), "I'm starting to look like an unmade bed"),
    ("mortgage adviser", ("mortgage",), "our fixed rate's about to run out"),
    ("acupuncturist", ("acupuncturist", "acupuncture"), "my neck has been stiff for weeks"),
    ("orthodontist", ("orthodontist",), "my retainer cracked and I'm scared my teeth will wander off"),
)
# appointments that read oddly when someone else "has" them
_NOT_FOR_OTHERS = ("vet", "mortgage adviser")

DEADLINES = (
    ("grant application", ("grant",)),
    ("tax return", ("tax return", "tax")),
    ("dissertation draft", ("dissertation",)),
    ("visa renewal", ("visa",)),
    ("tender submission", ("tender",)),
    ("conference abstract", ("abstract",)),
    ("scholarship application", ("scholarship",)),
    ("portfolio review", ("portfolio",)),
    ("insurance claim", ("insurance",)),
    ("quarterly report", ("quarterly report",)),
)

# (event, words that name it, relations who would have it, earliest and latest start hour)
EVENTS = (
    ("piano recital", ("recital",), ("niece", "nephew", "goddaughter", "godson"), (16, 19)),
    ("graduation", ("graduation",), ("niece", "nephew", "cousin", "friend", "goddaughter", "godson"),
     (10, 15)),
    ("book launch", ("book launch", "launch"), ("friend", "colleague", "cousin", "neighbour"), (18, 20)),
    ("christening", ("christening",), ("niece", "nephew", "goddaughter", "godson"), (10, 14)),
    ("retirement do", ("retirement",), ("colleague", "aunt", "uncle", "neighbour"), (16, 20)),
    ("exhibition opening", ("exhibition",), ("friend", "cousin", "flatmate", "colleague"), (18, 20)),
    ("engagement party", ("engagement",), ("cousin", "friend", "colleague", "flatmate"), (18, 20)),
    ("choir concert", ("choir",), ("aunt", "uncle", "neighbour", "friend", "niece", "nephew"), (18, 20)),
    ("dance show", ("dance show",), ("niece", "goddaughter", "nephew", "godson"), (16, 19)),
    ("cup final", ("cup final",), ("nephew", "godson", "niece", "cousin"), (10, 15)),
    ("leaving drinks", ("leaving drinks",), ("colleague", "flatmate", "friend"), (17, 19)),
    ("poetry reading", ("poetry",), ("friend", "neighbour", "aunt", "cousin"), (18, 20)),
)

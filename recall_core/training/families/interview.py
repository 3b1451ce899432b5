"""Interview family: facts the user gives as short answers to the assistant's own questions.

The assistant keeps asking things ("What did you end up calling her?", "Which city are you flying
to?") and the user answers tersely ("Pickle. The kids voted.", "Tallinn, for a week"), so most facts
can only be understood from the assistant's question together with the user's reply. Mixed in:
facts the user states outright, near-miss facts about other people (the sister's kitten, the
flatmate's job), values that change in a later session, questions the user declines to answer
("I'd rather not say"), small talk and requests for help.

Sizes: ``generate(seed, users=5)`` returns ``users`` users; each has 3 to 5 dated sessions and
``QUESTIONS_PER_USER`` (20) questions, ``UNANSWERABLE_PER_USER`` (4) of them unanswerable.

Fact ids: ``<kind>`` for the user's own fact, ``<kind>:<relation>`` for the same kind of fact
about someone else (``job:flatmate``), ``declined:<topic>`` for a question the user declined.
"""

from __future__ import annotations

import random
import re
import string
from dataclasses import dataclass
from datetime import datetime, timedelta

from recall_core.training.families.base import Question, Turn, User

NAME = "interview"
DESCRIPTION = (
    "Facts given as terse answers to the assistant's own questions (only the question makes the "
    "answer meaningful), with declined questions, near-miss facts about others and later changes."
)

QUESTIONS_PER_USER = 20
UNANSWERABLE_PER_USER = 4
MEMORY_PER_USER = QUESTIONS_PER_USER - UNANSWERABLE_PER_USER


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


# -- kinds of fact --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Kind:
    """Everything needed to talk and ask about one kind of fact.

    ``opener``: (user line that makes the assistant curious, assistant questions that fit it).
    ``short``: the user's terse answers. ``ack``: the assistant's reply, either a line or
    (line, user follow-up, assistant follow-up). ``state``: the user saying it outright and the
    assistant's reply. ``q``/``qi``: direct questions and wh-clauses for the later question.
    ``ch_*``: the same for a change of value. ``d_*``, ``rq``/``rqi``: the fact about someone else.
    """

    key: str
    pool: tuple[Val, ...]
    opener: tuple
    short: tuple[str, ...]
    ack: tuple
    state: tuple
    q: tuple[str, ...]
    qi: tuple[str, ...]
    aux: str = ""  # "pet", "appt" or ""
    ch_open: tuple = ()
    ch_short: tuple[str, ...] = ()
    ch_state: tuple = ()
    ch_ack: tuple[str, ...] = ()
    rels: tuple[str, ...] = ()
    d_state: tuple = ()
    d_open: tuple = ()
    d_short: tuple[str, ...] = ("{V}.", "{V}, apparently.", "{V}. Don't ask me why.", "Ha, {v}.")
    d_ack: tuple[str, ...] = ("{V}, good to know!", "Ah, {v}. Noted!")
    rq: tuple[str, ...] = ()
    rqi: tuple[str, ...] = ()


KINDS: dict[str, Kind] = {}


def _kind(**kw) -> None:
    KINDS[kw["key"]] = Kind(**kw)


_kind(
    key="pet_name", pool=PET_NAMES, aux="pet",
    opener=(
        ("Guess who finally brought a {sp} home yesterday!!",
         ("Oh, that's wonderful! What did you end up calling them?",
          "Congratulations! Has the {sp} got a name yet?")),
        ("So we caved. There's now a {sp} asleep on my feet while I type this.",
         ("Ha, resistance was futile! Go on then, what's the name?",
          "A {sp}, lovely! Did you settle on a name?")),
        ("Life update: we adopted a {sp} at the weekend and the flat is chaos.",
         ("How exciting! What are you calling the little one?",
          "Chaos, but the good kind, I hope! What's the {sp} called?")),
        ("okay so I may have accidentally agreed to take in a {sp}",
         ("Accidentally! Ha. Does this accidental {sp} have a name?",)),
    ),
    short=("{V}. The kids voted and I lost.", "{V}!", "We went with {v} in the end",
           "{V}, after about a week of arguing", "{V}. Not my pick, for the record",
           "ha, {v}. it suits them, trust me"),
    ack=(
        ("{V} is a brilliant name! How are the first few nights going?",
         "Bit of crying at 3am but otherwise fine.",
         "That's really normal early on. Something that smells of you in their bed can help a "
         "lot, and it usually settles within a week or two."),
        "Ha, {v}! I love it. Shout if you want a checklist for the first vet visit.",
        ("{V}, that's got real character. Is the {sp} settling in okay?",
         "Mostly, yeah. Sleeps most of the day.",
         "That's a good sign, young animals need loads of sleep. Keep the sleeping spot quiet "
         "and the routine consistent."),
        "Oh, {v} is adorable. Enjoy the chaos!",
    ),
    state=(
        ("Need advice: our new {sp}, {v}, keeps crying at night. Any tips?",
         "Poor {v}! That's really common in the first week or two. A consistent bedtime, "
         "something that smells of you nearby, and not rushing in at every whimper usually help."),
        ("Meet {v}, the newest member of the family. A {sp}! I'm obsessed.",
         "Hello, {v}! What a lovely name. Let me know if you'd like a list of first-week "
         "essentials."),
        ("Can you suggest some safe chew toys? {V} (the {sp}) has started on the skirting boards.",
         "Ah, the skirting board phase! For {v}, sturdy rubber toys you can stuff with food are "
         "great. Redirect calmly every time they go for the wood."),
    ),
    q=("What did I tell you the {sp} is called?", "What name did we give the {sp}?",
       "What did we end up calling the {sp}?"),
    qi=("what my {sp} is called", "what we named the {sp}", "what name we gave our {sp}"),
    ch_open=(
        ("Slightly embarrassing update about the {sp}.",
         ("Ha, go on, what happened?", "Oh no, what's the {sp} done now?")),
        ("You'll laugh at this, it's about the {sp}.", ("Try me! What's the news?",)),
    ),
    ch_short=("We renamed them. {Old} just never stuck, so it's {v} now.",
              "New name! {V}. Nobody ever actually called them {old}."),
    ch_state=(
        ("Update: the {sp} has been renamed. Goodbye {old}, hello {v}.",
         "Ha! {V} it is. Names often change once you get to know an animal's personality."),
    ),
    ch_ack=("{V} it is, then! They'll pick it up quickly if you pair it with treats.",
            "Ha, {v}! Honestly, that suits a {sp}."),
    rels=("sister", "neighbour", "flatmate", "cousin", "best mate", "colleague"),
    d_state=(
        ("My {rel}'s {sp} is called {v}, which is somehow worse than anything we came up with.",
         "Ha, {v} is a strong choice! Pets always grow into their names."),
        ("Spent the whole afternoon minding my {rel}'s {sp}, {v}. I'm exhausted.",
         "Pet-sitting is hard work! I hope {v} at least behaved."),
    ),
    d_open=(
        ("My {rel} has just got a {sp} as well, so now we're comparing notes constantly.",
         ("Aw, that's sweet! What's your {rel}'s {sp} called?",)),
        ("Been {sp}-sitting for my {rel} all week.",
         ("Ha, how's that going? What's the {sp}'s name?",)),
    ),
    d_ack=("{V}, ha! Cute.", "Aw, {v}. Sounds like a character."),
    rq=("What's my {rel}'s {sp} called?", "What did my {rel} name their {sp}?"),
    rqi=("what my {rel}'s {sp} is called", "what my {rel} named their {sp}"),
)

_kind(
    key="job", pool=JOBS,
    opener=(
        ("Work has been absolutely relentless lately.",
         ("Sorry to hear that! What do you do for work, if you don't mind me asking?",
          "Oof. What line of work are you in?")),
        ("Can't believe it's Monday again. Back to the grind.",
         ("Ha, the Monday feeling. What's the grind, if you don't mind me asking?",)),
        ("Sorry if I'm slow today, work completely wiped me out.",
         ("No need to apologise! What is it you do, out of interest?",)),
        ("I'm thinking about asking for a pay rise and I'm nervous about it.",
         ("Good for you for considering it. What's your job, so I can tailor the advice?",)),
    ),
    short=("{A_v}, believe it or not.", "{F}, mostly early shifts", "I'm {a_v}. Have been for ages.",
           "{V}. It's less glamorous than it sounds.", "{F}. Don't get me started."),
    ack=(
        ("{A_v}! That sounds like a job with a lot of stories. Is it the workload that's getting "
         "to you?", "Mostly the workload, yeah.",
         "That's really common. Writing down what's on your plate for a week makes the "
         "conversation with your manager much more concrete."),
        "{V}, that's skilled work. No wonder you're tired. Be kind to yourself this week.",
        ("{F}, wow. How did you get into that?", "Fell into it, honestly.",
         "Some of the best careers start that way! It sounds like it stuck for a reason."),
        "Ah, {f}. I can imagine the weeks blur together. Make sure you get a proper break.",
    ),
    state=(
        ("I'm {a_v} and I need a short bio for our team page. Can you make it sound less dull?",
         "Of course! Something like: 'Hi, I'm the team's {v}. Ask me anything about the job, "
         "I'm always happy to help.' Want it punchier or more formal?"),
        ("Honestly, being {a_v} is great most days, but this week has been brutal.",
         "Sorry it's been a rough week. Even jobs we like have stretches like that; it doesn't "
         "mean being {a_v} is the wrong fit."),
    ),
    q=("What did I tell you I do for a living?", "What job did I say I have?", "What do I do for work?"),
    qi=("what I do for a living", "what my job is", "what line of work I'm in"),
    ch_open=(
        ("Big news, I've handed my notice in.",
         ("Wow, that's a big move! What are you doing now?",)),
        ("So... I've changed jobs.", ("Oh, exciting! What's the new role?",)),
    ),
    ch_short=("Retraining as {a_v}. Terrifying but good.",
              "{A_v}! Total change from being {a_old}."),
    ch_state=(
        ("Officially no longer {a_old}! Started as {a_v} on Monday.",
         "Congratulations on the new start! The first few weeks as {a_v} will be a lot to take "
         "in, so go easy on yourself."),
    ),
    ch_ack=("{A_v}, what a switch! Good luck with it.",
            "That's brave, and exciting. I hope life as {a_v} treats you well."),
    rels=("sister", "brother", "flatmate", "best mate", "cousin", "neighbour", "partner", "dad",
          "mum", "uncle"),
    d_state=(
        ("My {rel} is {a_v} and keeps telling me my job is easy. Cheeky.",
         "Ha, family and friends banter! Every job looks easy from the outside, even to {a_v}."),
        ("My {rel} just qualified as {a_v}, so we're out celebrating tonight.",
         "Congratulations to your {rel}! Have a lovely evening."),
    ),
    d_open=(
        ("Had dinner with my {rel} last night and they moaned about work the entire time.",
         ("Ha, classic. What does your {rel} do?", "Oh dear! What's their job?")),
    ),
    d_short=("{A_v}.", "{A_v}, so a lot of moaning is justified.", "{V}, and apparently it's hell."),
    d_ack=("{A_v}, fair enough, that can be a tough gig.", "Ah, {a_v}. I'd probably moan too!"),
    rq=("What did I tell you my {rel} does for a living?", "What job did I say my {rel} has?"),
    rqi=("what my {rel} does for work", "what job my {rel} has"),
)

_kind(
    key="trip_city", pool=TRIP_CITIES,
    opener=(
        ("Finally booked a holiday!!! First one in ages.",
         ("Oh, brilliant! Where are you off to?", "You deserve it! Where's the trip?")),
        ("Can you help me make a packing list? I'm off on a trip soon.",
         ("Happy to! Which city are you heading to? It changes what you need.",)),
        ("Work's sending me abroad for a conference, which is exciting and stressful.",
         ("Ooh, where are they sending you?",)),
        ("How do people deal with jet lag? I'm travelling next month.",
         ("Good idea to plan ahead. Where are you flying to?",)),
    ),
    short=("{V}, for a week", "{V}! Never been.", "{V}. Flights were cheap, so why not.", "{v} :)",
           "{V}, just a long weekend though"),
    ack=(
        ("{V}! Great choice. Want some tips for the trip?", "Go on then, a few.",
         "Walk everywhere you can, eat where the locals queue, and check whether any museums "
         "have a free day while you're there. And pack layers!"),
        "Oh, {v} sounds lovely. Have a wonderful time!",
        ("{V}, nice! Is it your first time there?", "First time, yeah.",
         "Exciting! Leave yourself a slow first day to get your bearings; it makes the rest of "
         "the trip more relaxed."),
    ),
    state=(
        ("I'm going to {v} next month. What should I absolutely not miss?",
         "Ooh, {v}! Wander the old streets on foot, try whatever the local pastry is, and leave "
         "one afternoon with nothing planned. That's often the best part."),
        ("Booked {v} for the spring. Is travel insurance worth it for a short trip?",
         "Lovely choice! Yes, even for a short trip to {v} it's worth it for cancellations and "
         "medical cover. Check your bank account too; some include it."),
    ),
    q=("Where am I going on my trip?", "Which city am I flying to?", "Where's my trip to?"),
    qi=("where I'm going on my trip", "which city I'm flying to", "where I'm travelling to"),
    ch_open=(
        ("Slight change of plan with the trip.",
         ("Oh no, what happened? Where are you going now?",)),
        ("Ugh, the holiday plans have gone sideways.", ("Oh dear, what's changed?",)),
    ),
    ch_short=("{Old} fell through, so it's {v} now.", "We switched to {v}. Cheaper, and nicer."),
    ch_state=(
        ("Cancelled {old}, rebooked for {v}. Long story involving a strike.",
         "Sorry about the hassle, but {v} is a great consolation prize! Want a fresh packing "
         "list?"),
    ),
    ch_ack=("{V} instead, that could turn out even better!", "Ah well, {v} it is. Fingers crossed "
            "this one sticks!"),
    rels=("brother", "sister", "mum", "dad", "flatmate", "best mate", "colleague", "boss"),
    d_state=(
        ("My {rel} is off to {v} next week and I'm very jealous.",
         "Understandable! {V} sounds lovely; maybe you'll get a souvenir out of it."),
        ("My {rel} keeps sending me photos from {v}. Rude.",
         "Ha, the classic holiday flex! Hopefully your turn comes soon."),
    ),
    d_open=(
        ("My {rel} is going away for a bit and I'm stuck watering the plants.",
         ("Ha, the glamorous job! Where's your {rel} off to?",)),
    ),
    d_ack=("{V}, lucky them!", "Oh, {v}. Very jealous on your behalf."),
    rq=("Where is my {rel} travelling to?", "Which city is my {rel} going to?"),
    rqi=("where my {rel} is going", "which city my {rel} is off to"),
)

_kind(
    key="trip_date", pool=DATES,
    opener=(
        ("I keep forgetting to check in for my flight.",
         ("Easy to do! When do you fly out?",)),
        ("Need to find someone to water the plants while I'm away.",
         ("Good thinking. When are you leaving?",)),
        ("Can you remind me to renew my passport? I'm travelling soon.",
         ("I can't set reminders, unfortunately, but let's work it out. When's the flight?",)),
        ("Trying to work out when to book airport parking.",
         ("Happy to help you plan it. What date are you flying?",)),
    ),
    short=("{V}, early morning", "{V}. Ridiculously early flight.", "On {v}",
           "{V}, assuming nothing gets cancelled"),
    ack=(
        ("{V}, okay! Do you have everything you need?", "Mostly. Need adapters.",
         "Worth grabbing a universal adapter; one with USB ports saves a lot of faff."),
        "Got it, {v}. I'd check in online as soon as it opens, usually a day or two before.",
        "{V}, lovely. Not long to wait!",
    ),
    state=(
        ("I fly out on {v} and I haven't even found my passport yet.",
         "Best to find it now! Check it's valid well beyond your travel dates, since some "
         "countries insist on that. Fingers crossed for {v}."),
        ("My flight's on {v}. How early should I get to the airport?",
         "For {v}, aim for around two hours before an international flight, and a bit more at "
         "peak times or if you're checking a bag."),
    ),
    q=("When do I fly out?", "What date is my flight?", "What day am I leaving for my trip?"),
    qi=("when my flight is", "what date I fly out", "which day I'm leaving for my trip"),
    ch_open=(
        ("The airline's messed with my flight.", ("Oh no. Have they moved the date?",)),
        ("Annoying news on the flight front.", ("What's happened, is there a new date?",)),
    ),
    ch_short=("Yep, pushed to {v} instead of {old}.", "It's {v} now. Ugh."),
    ch_state=(
        ("My flight's been moved from {old} to {v}. Do I get compensation?",
         "Sorry, that's annoying. It depends on the airline and how much notice they gave; check "
         "their terms and the passenger rights rules. At minimum you can usually ask for a "
         "refund or rebooking if {v} doesn't work."),
    ),
    ch_ack=("{V} then. Annoying, but at least it's still happening!",
            "Right, {v}. Worth checking any hotel bookings still line up."),
    rels=("brother", "sister", "mum", "dad", "flatmate", "best mate"),
    d_state=(
        ("My {rel} flies out on {v}, so I'm on airport-run duty.",
         "That's kind of you! Hopefully it's not a silly-o'clock flight on {v}."),
    ),
    d_open=(
        ("Agreed to drive my {rel} to the airport, God help me.",
         ("That's generous! When's the flight?",)),
    ),
    d_ack=("{V}, noted. Good luck with the traffic!", "Okay, {v}. Bring coffee."),
    rq=("When does my {rel} fly out?", "What date is my {rel}'s flight?"),
    rqi=("when my {rel} flies out", "what date my {rel}'s flight is"),
)

_kind(
    key="hometown", pool=HOMETOWNS,
    opener=(
        ("Feeling weirdly homesick today.",
         ("That's a real feeling. Where did you grow up?",)),
        ("Going back to visit family soon, haven't been in years.",
         ("Oh, nice! Where's home originally?",)),
        ("My accent came out on a work call today and everyone laughed.",
         ("Ha! Where are you from originally?",)),
    ),
    short=("{V}, born and raised", "Just outside {v}", "{V}. Small, windy, you know the type.",
           "{v}, believe it or not"),
    ack=(
        ("{V}! Do you still have family there?", "My parents, yeah.",
         "That's nice, it means you've always got a reason to go back."),
        "Ah, {v}. It's funny how a place stays with you.",
        "{V}, I bet it's changed a lot since you were little.",
    ),
    state=(
        ("I grew up in {v} and I still miss it sometimes.",
         "That's completely natural. Do you manage to get back to {v} much?"),
        ("Does anyone ever really lose their accent? I left {v} ages ago and people still clock "
         "it.", "Accents are stubborn! Most people keep traces of where they grew up, and they "
         "often come back when you're tired. {V} leaves a mark."),
    ),
    q=("Where did I tell you I grew up?", "Which town am I from originally?", "Where's my hometown?"),
    qi=("where I grew up", "which town I'm from originally", "where my hometown is"),
    rels=("partner", "flatmate", "best mate", "boss", "colleague", "neighbour"),
    d_state=(
        ("My {rel} grew up in {v} and won't stop talking about it.",
         "Ha, people are loyal to their hometowns! {V} clearly left an impression."),
        ("Turns out my {rel} is from {v}. Small world.", "Small world indeed!"),
    ),
    d_open=(
        ("Found out where my {rel} grew up today, totally not what I expected.",
         ("Ha, where?",)),
    ),
    d_ack=("{V}! I can see why that surprised you.", "Oh, {v}. Fun fact to file away."),
    rq=("Where did my {rel} grow up?", "Which town is my {rel} from?"),
    rqi=("where my {rel} grew up", "which town my {rel} is from"),
)

_kind(
    key="partner_name", pool=PERSON_NAMES,
    opener=(
        ("It's our anniversary next week and I have zero ideas.",
         ("Oh, lovely! What's your partner's name, by the way? Makes it easier to brainstorm.",)),
        ("Had a silly argument with my other half about the dishwasher.",
         ("Ha, the eternal dishwasher debate. What's your other half called?",)),
        ("My partner's birthday is coming up and they're impossible to buy for.",
         ("I can help! What's their name?", "Aww. What's your partner called?")),
    ),
    short=("{V}.", "{V}, and they'd hate that I'm asking a chatbot", "It's {v}", "{V} :)"),
    ack=(
        ("{V}, lovely name. What sort of things do they enjoy?", "Cooking, mostly. And old films.",
         "Then a cooking class for two, or a cosy film night with a fancy picnic at home, could "
         "go down well."),
        "Thanks! Okay, let's think about what {v} would actually enjoy.",
        "Nice. I'm sure {v} will appreciate the effort whatever you pick.",
    ),
    state=(
        ("{V} and I have been together for ages and I still never know what to get them.",
         "That's the classic problem! Maybe something experience-based for {v}: a class or a day "
         "out you can do together?"),
        ("Can you help me write a sweet note for {v}? My partner's had a rough week.",
         "Of course! How about: '{V}, I know this week has been a lot. I'm proud of you, and "
         "I'm making dinner tonight, no arguments.' Want it softer or funnier?"),
    ),
    q=("What did I tell you my partner is called?", "What's my other half called?",
       "What name did I give you for my partner?"),
    qi=("what my partner is called", "what my other half's name is"),
    rels=("sister", "brother", "best mate", "cousin", "flatmate"),
    d_state=(
        ("My {rel} is bringing their new partner {v} to dinner. I'm nervous on their behalf.",
         "Meeting the family is a big step! I hope {v} gets a warm welcome."),
    ),
    d_open=(
        ("My {rel} has a new partner and it's getting serious.",
         ("Oh, how exciting! What's their name?",)),
    ),
    d_ack=("{V}, lovely. Fingers crossed it goes well for them!", "Aw, {v}. Exciting times."),
    rq=("What's my {rel}'s partner called?", "What did I tell you my {rel}'s partner is called?"),
    rqi=("what my {rel}'s partner is called", "what my {rel}'s partner's name is"),
)

_kind(
    key="manager_name", pool=PERSON_NAMES,
    opener=(
        ("My manager is driving me up the wall this week.",
         ("Oh dear. What's your manager's name? It helps to talk it through.",)),
        ("Got a one-to-one with my boss tomorrow and I'm dreading it.",
         ("Ah, those can be nerve-racking. What's your boss called?",)),
        ("Need to email my manager to ask for a day off.",
         ("Let's draft something. Who should I address it to?",)),
    ),
    short=("{V}.", "{V}. Lovely person, terrible at emails", "It's {v}"),
    ack=(
        "Okay, {v}. Try going in with two or three concrete points written down; it keeps "
        "things focused.",
        ("{V}, got it. What's the main thing you want out of it?", "Mostly to be taken seriously.",
         "That's fair. Specific examples and a clear ask usually land better than general "
         "frustration."),
        "Thanks. With {v}, short and specific is probably the way to go.",
    ),
    state=(
        ("My boss, {v}, has scheduled a meeting for the very end of a Friday. Who does that?",
         "Ha, bold move from {v}. If it becomes a habit, it might be worth politely suggesting "
         "an earlier slot."),
        ("Can you draft a polite email asking {v}, my manager, for Friday off?",
         "Sure: 'Hi {v}, would it be possible for me to take this Friday as annual leave? I'll "
         "make sure everything's covered before then. Thanks!'"),
    ),
    q=("What's my manager's name?", "What's my boss called?", "Who's my manager at work?"),
    qi=("what my manager is called", "what my boss's name is", "who my manager is"),
)

_kind(
    key="car", pool=CARS,
    opener=(
        ("Finally got a new car after the old one died!",
         ("Oh, nice! What did you go for?", "Congrats! What is it?")),
        ("Just picked up a secondhand car, fingers crossed it's not a lemon.",
         ("Exciting! What did you end up with?",)),
        ("Just finished car shopping. Worst week of my life.",
         ("Ugh, it really is stressful. What did you get in the end?",)),
    ),
    short=("{A_v}. Secondhand but mint.", "{V}! In a very sensible grey.", "{a_v}, nothing fancy",
           "{V}. The dealer loved me."),
    ack=(
        "{A_v}, good, reliable choice. Happy driving!",
        ("Oh, {a_v}! How does it drive?", "Smooth. Much better than the old one.",
         "Lovely. Make a note of when the next service is due so it stays that way."),
        "Nice, {a_v}. Get it serviced early so you know where you stand.",
    ),
    state=(
        ("Any tips for keeping {a_v} running well? Just bought one.",
         "Congrats on the {v}! Regular oil changes, keeping the tyres at the right pressure, and "
         "not ignoring new noises go a long way."),
        ("My {v} is making a weird rattle when I brake. Should I be worried?",
         "I'd get that checked soon. Rattles when braking can be worn pads or something loose, "
         "so it's safer to have a garage look at the {v} than guess."),
    ),
    q=("What car did I tell you I drive?", "What car did I get?", "What am I driving now?"),
    qi=("what car I drive", "what I'm driving at the moment", "which car I ended up with"),
    ch_open=(
        ("Okay, car update. Don't judge.", ("Ha, no judgement! What happened?",)),
        ("So the car situation has changed again.", ("Uh oh, what are you driving now?",)),
    ),
    ch_short=("Traded it in. Got {a_v} now.", "Sold the {old}, bought {a_v}."),
    ch_state=(
        ("Said goodbye to the {old} and got {a_v}. Insurance is cheaper too!",
         "Nice upgrade! Cheaper insurance is a lovely bonus. Enjoy the {v}."),
    ),
    ch_ack=("{A_v}! Hope this one's a keeper.", "Ooh, {a_v}. Fresh start!"),
    rels=("dad", "mum", "brother", "sister", "neighbour", "boss", "uncle"),
    d_state=(
        ("My {rel} drives {a_v} and acts like it's a spaceship.",
         "Ha! People do get attached to their cars, even {a_v}."),
        ("Borrowed my {rel}'s {v} today and nearly stalled it twice.",
         "Unfamiliar cars are tricky! The clutch bite point is always somewhere different."),
    ),
    d_open=(
        ("My {rel} just bought a new car and won't shut up about it.",
         ("Ha! What did they get?",)),
    ),
    d_short=("{A_v}.", "{A_v}, apparently.", "{A_v}. I don't see the fuss."),
    d_ack=("{A_v}, ha, fair enough!", "Ah, {a_v}. I can see why they're excited."),
    rq=("What car did I tell you my {rel} drives?", "What does my {rel} drive?"),
    rqi=("what car my {rel} drives", "what my {rel} drives"),
)

_kind(
    key="instrument", pool=INSTRUMENTS,
    opener=(
        ("Fulfilling a childhood dream: I've started music lessons!",
         ("That's fantastic! Which instrument?",)),
        ("My neighbours probably hate me, I've started learning an instrument.",
         ("Ha, they'll get over it. What are you learning?",)),
        ("Signed up for music lessons. Bit late in life, but why not?",
         ("Never too late! What are you going to play?",)),
    ),
    short=("The {v}!", "{V}, believe it or not", "{V}. Badly, so far.", "the {v}. my fingers hurt"),
    ack=(
        ("The {v}! Love that. Are you having lessons or teaching yourself?",
         "Lessons, once a week.",
         "Perfect. A weekly lesson plus a little daily practice is the fastest way to progress."),
        "Oh, the {v} is a wonderful choice. Enjoy it!",
        "{V}, brilliant! Be patient with yourself for the first few months.",
    ),
    state=(
        ("How long should I practise the {v} each day as a beginner?",
         "For a beginner on the {v}, twenty to thirty minutes a day is plenty. Short, regular "
         "sessions beat one long weekend slog."),
        ("I've been learning the {v} for a month and I sound like a goose.",
         "Everyone sounds like a goose at first on the {v}! A month in is exactly when it starts "
         "to turn a corner, so keep going."),
    ),
    q=("Which instrument am I learning?", "What instrument did I tell you I play?",
       "What am I learning to play?"),
    qi=("which instrument I'm learning", "what I'm learning to play"),
    ch_open=(
        ("Music lesson update: I've switched.", ("Oh? What are you learning now?",)),
        ("Confession: I quit my music lessons. Well, sort of.", ("Sort of? What happened?",)),
    ),
    ch_short=("Gave up the {old}, I'm on the {v} now.", "The {v}. The {old} just wasn't for me."),
    ch_state=(
        ("Quit the {old}. Started the {v} instead and I actually like it.",
         "That's great, finding the right instrument makes all the difference. Enjoy the {v}!"),
    ),
    ch_ack=("The {v}, good switch if it feels more fun!", "Ooh, the {v}. New adventure!"),
    rels=("sister", "brother", "flatmate", "cousin", "neighbour", "best mate", "dad"),
    d_state=(
        ("My {rel} plays the {v} at all hours. Send help.",
         "Ha, that's a lot of {v}! Maybe suggest a practice schedule?"),
        ("My {rel} is in a folk band, plays the {v}. They're actually good!",
         "That sounds fun. Live folk music is such a treat."),
    ),
    d_open=(
        ("Went to watch my {rel}'s concert last night.",
         ("Oh, lovely! What do they play?",)),
    ),
    d_short=("The {v}.", "{V}. Very loudly.", "The {v}, and they were great!"),
    d_ack=("The {v}! How lovely.", "Ah, the {v}. I'd have liked to hear that."),
    rq=("What instrument does my {rel} play?", "Which instrument does my {rel} play?"),
    rqi=("what instrument my {rel} plays", "which instrument my {rel} plays"),
)

_kind(
    key="allergy", pool=ALLERGENS,
    opener=(
        ("Can you give me a stir-fry recipe? Something quick.",
         ("Sure! Any allergies or things you avoid?",)),
        ("Planning to bake something for a work do.",
         ("Lovely idea. Anything you're allergic to that I should steer clear of?",)),
        ("Want to try meal prepping this week, any ideas?",
         ("Happy to. Before I suggest anything, any allergies?",)),
    ),
    short=("Just {v}.", "{V}, annoyingly", "{v}. everything else is fine",
           "Only {v}, I'm fine with the rest"),
    ack=(
        "Got it, no {v}. Quick idea: chicken with greens and rice, done in twenty minutes.",
        "Noted, {v}-free it is. A lemon drizzle traybake is easy and travels well.",
        ("Okay, I'll keep {v} out of everything. Want veggie options too?",
         "Yeah, a couple would be great.",
         "Easy: a chickpea and spinach curry and a lentil bolognese both freeze well."),
    ),
    state=(
        ("I'm allergic to {v}. Could you check a recipe for me?",
         "Of course. Paste it in and I'll flag anything that might contain {v}, including sneaky "
         "sources like sauces and dressings."),
        ("Eating out is a nightmare when you're allergic to {v}. Any tips?",
         "That sounds frustrating. Calling ahead, telling staff clearly that {v} is an allergy "
         "rather than a preference, and carrying your medication all help."),
    ),
    q=("What did I tell you I'm allergic to?", "What's my allergy?",
       "What do I need to avoid because of my allergy?"),
    qi=("what I'm allergic to", "what my allergy is"),
    rels=("best mate", "flatmate", "cousin", "sister", "brother", "colleague", "boss"),
    d_state=(
        ("My {rel} is allergic to {v}, so I'm cooking around that tonight.",
         "That's thoughtful of you. Plenty of lovely dishes avoid {v} easily."),
        ("Cooking for my {rel} on Saturday and they can't have {v}.",
         "Good to know in advance! Check labels carefully, {v} turns up in surprising places."),
    ),
    d_open=(
        ("Cooking for my {rel} at the weekend, they've got an allergy.",
         ("Good to plan ahead. What are they allergic to?",)),
    ),
    d_ack=("{V}, okay. Easy enough to work around.", "Ah, {v}. Labels will be your friend."),
    rq=("What is my {rel} allergic to?", "What allergy does my {rel} have?"),
    rqi=("what my {rel} is allergic to", "what my {rel}'s allergy is"),
)

_kind(
    key="book", pool=BOOKS,
    opener=(
        ("Finally back into reading after a long slump!",
         ("Love that. What are you reading?",)),
        ("Book club meets next week and I'm behind as usual.",
         ("Ha, classic! What's the book this time?",)),
        ("Any tips for reading more? I've just started a new book.",
         ("Little and often works! What's the book?",)),
    ),
    short=("{V}. Finally.", "{V}! About halfway through", "{V}, and it's slower than I expected"),
    ack=(
        ("{V}, great choice. How are you finding it?", "Slow start, but it's picking up.",
         "That's often the way; the good ones reward a bit of patience."),
        "Ooh, {v}. Enjoy!",
        "{V}! Ten pages before bed is a lovely habit to build around it.",
    ),
    state=(
        ("Reading {v} at the moment and I can't put it down.",
         "Oh, {v} is a great one to be gripped by! Let me know what you think when you finish."),
        ("Is {v} worth sticking with? I'm a few chapters in and not sure.",
         "Give {v} a few more chapters; lots of people say it clicks a bit later. If it still "
         "doesn't, it's fine to stop."),
    ),
    q=("What book am I reading at the moment?", "What am I reading right now?",
       "Which book am I currently on?"),
    qi=("what I'm reading at the moment", "which book I'm reading"),
    ch_open=(
        ("Abandoned my book, by the way.", ("Fair enough! What's replaced it?",)),
        ("Finished my book! On to the next.", ("Nice! What's next?",)),
    ),
    ch_short=("{V}. Much better so far.", "Moved on to {v}."),
    ch_state=(
        ("Gave up on {old} and started {v}. No regrets.",
         "Life's too short for books you're not enjoying! I hope {v} grabs you."),
    ),
    ch_ack=("{V}! Good pick.", "Ooh, {v}, enjoy."),
)

_kind(
    key="race", pool=RACES,
    opener=(
        ("Signed up for my first race. What have I done.", ("Amazing! Which race?",)),
        ("Training is going terribly, my knees hate me.", ("Oh no. What are you training for?",)),
        ("Need a training plan, I've got an event in the autumn.",
         ("Let's sort you out. What's the event?",)),
    ),
    short=("{A_v}. Gulp.", "{A_v}, apparently. I was very optimistic when I signed up.",
           "{A_v}. Don't laugh."),
    ack=(
        ("{A_v}, exciting! How long have you got to train?", "A good few months.",
         "That's a decent runway. Build up gradually and include an easy week every month or so."),
        "Ooh, {a_v}. You'll smash it.",
        "{A_v}, nice. Sleep and rest days count as training too, remember!",
    ),
    state=(
        ("I'm training for {a_v} and my knees are killing me. Normal?",
         "Some soreness is normal when training for {a_v}, but sharp or persistent knee pain isn't, "
         "so ease off, check your shoes, and get it looked at if it hangs around."),
        ("What should I eat the night before {a_v}?",
         "Something familiar and carb-heavy, like pasta or rice, without too much fibre or spice. "
         "Nothing new before {a_v}!"),
    ),
    q=("What race am I training for?", "What event did I sign up for?", "Which race am I doing?"),
    qi=("what race I'm training for", "what event I signed up for"),
    ch_open=(
        ("I've changed my race plans.", ("Oh? What are you doing instead?",)),
        ("Race news: I've switched events.", ("Ooh, to what?",)),
    ),
    ch_short=("Going for {a_v} instead.", "{A_v}. Go big or go home, or something like that."),
    ch_state=(
        ("Switched from {a_old} to {a_v}. Brave or stupid?",
         "A bit of both, which is the best kind of challenge! Adjust the plan for {a_v} and "
         "you'll be fine."),
    ),
    ch_ack=("{A_v} it is!", "Okay, {a_v}. We can tweak the training."),
    rels=("brother", "sister", "colleague", "best mate", "boss", "flatmate"),
    d_state=(
        ("My {rel} is doing {a_v} this weekend, so I'm on cheering duty.",
         "Ha, cheering is an underrated job! Bring snacks and a silly sign."),
    ),
    d_open=(
        ("My {rel} has roped me into being their support crew.", ("Ha! Support for what?",)),
    ),
    d_short=("{A_v}.", "{A_v}. I'm in charge of bananas.", "{A_v}, God help us."),
    d_ack=("{A_v}, great! You'll be a brilliant cheerleader.", "Ah, {a_v}. Bring a flask!"),
    rq=("What race is my {rel} doing?", "What event is my {rel} training for?"),
    rqi=("what race my {rel} is doing", "what my {rel} is training for"),
)

_kind(
    key="neighbourhood", pool=NEIGHBOURHOODS,
    opener=(
        ("We finally moved house. Every muscle hurts.",
         ("Congratulations! Which part of town are you in now?",)),
        ("Moving day is nearly here and I've packed one box.",
         ("Ha, one box is a start. Where are you moving to?",)),
        ("We got the flat we wanted!!",
         ("Oh, well done! Where's the new place?",)),
    ),
    short=("{V}! Near the park", "{V}. Finally out of the flat above the chip shop",
           "{v}, walking distance from work"),
    ack=(
        ("{V}, lovely! How are you finding it so far?", "Quiet, which I like.",
         "Quiet is underrated. Enjoy it!"),
        "Oh, {v}! Happy moving.",
        "{V}, nice. Introduce yourself to the neighbours early, it makes a difference.",
    ),
    state=(
        ("Just moved to {v}. Any tips for meeting people in a new area?",
         "Congrats on the move to {v}! Try a local club, saying yes to invites, and becoming a "
         "regular at one café. Familiarity builds fast."),
    ),
    q=("Which part of town do I live in?", "What area did I move to?",
       "What neighbourhood do I live in now?"),
    qi=("which area I live in", "what part of town I moved to"),
    ch_open=(
        ("We're moving again, would you believe.", ("Again! Where to this time?",)),
        ("The flat situation changed, we've had to move.", ("Oh no, where are you now?",)),
    ),
    ch_short=("{V}. Landlord sold the place in {old}.", "Over in {v} now."),
    ch_state=(
        ("Moved out of {old} and into {v} last weekend. So much cardboard.",
         "So much cardboard indeed! I hope {v} feels like home quickly."),
    ),
    ch_ack=("{V}, fresh start!", "Ah, {v}. Hope you settle in fast."),
    rels=("sister", "brother", "best mate", "cousin", "colleague", "mum"),
    d_state=(
        ("My {rel} lives in {v}, so I'm there most weekends.",
         "Sounds like {v} is a second home then!"),
    ),
    d_open=(
        ("My {rel} has just bought a flat!", ("Oh, amazing! Whereabouts?",)),
    ),
    d_ack=("{V}, lovely! Good news all round.", "Ooh, {v}. Housewarming incoming!"),
    rq=("Which part of town does my {rel} live in?", "What area does my {rel} live in?"),
    rqi=("where my {rel} lives", "which area my {rel} lives in"),
)

_kind(
    key="birthday", pool=DATES,
    opener=(
        ("Getting older is wild. Birthday's coming up.",
         ("Oh, happy almost-birthday! When is it?",)),
        ("Trying to plan a small party for my birthday.", ("Fun! When's the big day?",)),
        ("People keep asking what I want for my birthday and I have no idea.",
         ("Ha, the hardest question. When's your birthday?",)),
    ),
    short=("{V}.", "{V}. Please don't sing.", "It's {v}", "{V}, same as every year, sadly"),
    ack=(
        ("{V}, noted! Do you want ideas for what to ask for?", "Go on.",
         "A nice experience, a book you've been eyeing, or a good pair of slippers. Nobody "
         "regrets good slippers."),
        ("Lovely, {v}! Any plans?", "Dinner with friends probably.",
         "Perfect. Simple is often best."),
        "{V}! I promise not to sing.",
    ),
    state=(
        ("My birthday's on {v}, and I'd love ideas for a low-key day.",
         "How about a long brunch, a walk somewhere pretty and a film night? Simple and lovely "
         "for {v}."),
    ),
    q=("When's my birthday?", "What date is my birthday?", "When is my birthday again?"),
    qi=("when my birthday is", "what date my birthday falls on"),
    rels=("sister", "brother", "mum", "dad", "partner", "best mate", "cousin"),
    d_state=(
        ("It's my {rel}'s birthday on {v} and I still haven't got a present.",
         "Still time! A thoughtful card and something small they've mentioned wanting always "
         "works."),
    ),
    d_open=(
        ("I always forget my {rel}'s birthday. Every year. Terrible.",
         ("Let's fix that! When is it?",)),
    ),
    d_ack=("{V}, write it on the calendar right now!", "Okay, {v}. Set two reminders!"),
    rq=("When did I tell you my {rel}'s birthday is?", "What date is my {rel}'s birthday?"),
    rqi=("when my {rel}'s birthday is", "what date my {rel}'s birthday is"),
)

_kind(
    key="appointment", pool=TIMES, aux="appt",
    opener=(
        ("Got a {appt} appointment this week that I'm dreading.",
         ("I get it. What time is it?", "What time are you booked in for?")),
        ("Can you help me not forget my {appt} appointment?",
         ("I can't set alarms, but let's plan around it. What time's the appointment?",)),
    ),
    short=("{V} on {day}", "{day}, {v}. Ugh.", "{V}, {day}. Right in the middle of the day."),
    ack=(
        "{V} on {day}, got it. Set two alarms, just in case!",
        ("Okay, {v}. Want some tips for staying calm beforehand?", "Yes please.",
         "Breathe out for longer than you breathe in for a minute or so, and bring something to "
         "distract you in the waiting room."),
        "Right, {day} at {v}. Put it in your phone now while you're thinking about it.",
    ),
    state=(
        ("My {appt} appointment is at {v} on {day}. What should I do to prepare?",
         "Write your questions down beforehand so nothing slips your mind, and aim to get there "
         "a few minutes early on {day}."),
    ),
    q=("What time is my {appt} appointment?", "What time am I booked in at the {appt}?",
       "When is my {appt} appointment, time-wise?"),
    qi=("what time my {appt} appointment is", "what time I'm seeing the {appt}"),
    ch_open=(
        ("The {appt} rang this morning.", ("Oh? Did they move your appointment?",)),
        ("Ugh, my {appt} appointment got moved.", ("Annoying! What's the new time?",)),
    ),
    ch_short=("Yep, it's {v} now.", "{V} now, same day. Not {old}."),
    ch_state=(
        ("They moved my {appt} appointment from {old} to {v}.",
         "Thanks for the heads-up, {v} it is. Does that still fit around your day?"),
    ),
    ch_ack=("{V}, noted.", "Okay, {v} then. Update that alarm!"),
)

_kind(
    key="guests", pool=GUEST_COUNTS,
    opener=(
        ("Hosting dinner on Saturday and panicking slightly.",
         ("Ha, you'll be fine! How many people are coming?",)),
        ("I've foolishly offered to do Christmas dinner this year.",
         ("Brave! How many are you feeding?",)),
        ("Doing a birthday barbecue and I need to work out food quantities.",
         ("Happy to help with quantities. How many guests?",)),
    ),
    short=("{V}, if everyone turns up", "{V}. Including the kids.", "{V}, maybe", "{V} of us"),
    ack=(
        ("{V}, totally doable. Want a menu that mostly cooks itself?", "Yes please.",
         "A slow-cooked stew or a big veggie lasagne, a couple of salads and a shop-bought "
         "dessert you dress up. Minimal stress."),
        "Okay, {v}. I'd go for one big dish rather than lots of small ones.",
        "{V}! Very manageable. Prep as much as you can the day before.",
    ),
    state=(
        ("Cooking for {v} people on Saturday. How much pasta do I need?",
         "A good rule is roughly a hundred grams of dried pasta per person for a main, a bit "
         "more if they're big eaters. With {v}, round up rather than down."),
    ),
    q=("How many people am I cooking for?", "How many guests are coming to my dinner?",
       "How many people did I say were coming to eat?"),
    qi=("how many people I'm cooking for", "how many guests are coming to my dinner"),
    ch_open=(
        ("Dinner numbers have changed. Again.", ("Ha, of course they have. How many now?",)),
        ("Update on the food situation, the guest list moved.", ("Okay! What's the number now?",)),
    ),
    ch_short=("{V} now, apparently.", "Now it's {v}. Don't ask."),
    ch_state=(
        ("It's {v} for dinner now, not {old}. Help.",
         "No problem, just scale the main dish and add an extra side. It'll be fine for {v}."),
    ),
    ch_ack=("{V}, okay, we can work with that.", "Right, {v}. Still very doable."),
)

_kind(
    key="crop", pool=CROPS,
    opener=(
        ("Got an allotment plot at last after years on the waiting list!",
         ("Oh, congratulations! What are you planning to grow?",)),
        ("Planning this year's veg patch.", ("Fun! What's going in first?",)),
        ("My garden was a disaster last year but I'm trying again.",
         ("Good for you. What are you going to grow?",)),
    ),
    short=("Mostly {v}", "{V}, loads of them", "{V}. Ambitious, I know.", "{v} to start with"),
    ack=(
        "{V}, good choice. Watch out for slugs!",
        ("Ooh, {v}. Have you got a sunny spot?", "Pretty sunny, yeah.",
         "Perfect, that'll help a lot. Water at the base in the mornings if you can."),
        "{V}! Lovely. Keep a little notebook of what you sow and when.",
    ),
    state=(
        ("Growing {v} this year. Any tips for a total beginner?",
         "Lovely choice! With {v}, good soil, regular watering and keeping the slugs off early "
         "make a big difference."),
    ),
    q=("What am I growing this year?", "What veg am I growing?",
       "What did I say I was planting this year?"),
    qi=("what I'm growing this year", "what veg I'm planting"),
    rels=("dad", "mum", "neighbour", "uncle", "aunt"),
    d_state=(
        ("My {rel} grows {v} and gives me bags of them every week.",
         "What a lovely problem to have! Soups and roasts are good ways to use up a glut."),
    ),
    d_ack=("{V}, lovely!", "Ah, {v}. Fresh veg is the best."),
    rq=("What does my {rel} grow?", "What veg does my {rel} grow?"),
    rqi=("what my {rel} grows", "what veg my {rel} grows"),
)

_kind(
    key="language", pool=LANGUAGES,
    opener=(
        ("I've started learning a language on my commute.",
         ("Oh, great use of the time! Which language?",)),
        ("Decided to finally learn a second language!", ("Brilliant! Which one?",)),
        ("Any tips for sticking with language learning? I keep giving up.",
         ("Happy to help. What language are you learning?",)),
    ),
    short=("{V}!", "{V}. It's hard.", "{V}, for when I visit family",
           "{V}, don't ask me to say anything yet"),
    ack=(
        ("{V}, great choice! How long have you been at it?", "Only a couple of weeks.",
         "That's the hardest bit done: starting. Little and often is the way."),
        "Ooh, {v}. Lovely language!",
        "{V}! Try labelling things around the house, it sounds silly but it works.",
    ),
    state=(
        ("Learning {v} at the moment. Can you give me a simple phrase to practise?",
         "Of course! 'Thank you very much' is a good one. Learn it in {v} and say it out loud a "
         "few times a day. Want a few more beginner phrases?"),
    ),
    q=("Which language did I tell you I'm learning?", "What language am I studying?",
       "What language did I take up?"),
    qi=("which language I'm learning", "what language I'm studying"),
    ch_open=(
        ("I've switched languages, ha.", ("Ha! To what?",)),
        ("Language learning update: new language.", ("Ooh, which one now?",)),
    ),
    ch_short=("{V} now. {Old} was breaking my brain.", "Swapped to {v}."),
    ch_state=(
        ("Gave up {old} and started {v} instead.",
         "Nothing wrong with a switch, motivation matters most. Good luck with {v}!"),
    ),
    ch_ack=("{V}, exciting!", "Ah, {v}. Fresh start!"),
    rels=("sister", "brother", "flatmate", "best mate", "colleague", "partner"),
    d_state=(
        ("My {rel} is learning {v} and keeps practising on me.",
         "Ha, free lessons for you! Maybe you'll pick some {v} up too."),
    ),
    d_open=(
        ("My {rel} has started language lessons and talks about nothing else.",
         ("Ha, the enthusiasm phase! Which language?",)),
    ),
    d_ack=("{V}, nice!", "Ooh, {v}. Good for them."),
    rq=("Which language is my {rel} learning?", "What language is my {rel} studying?"),
    rqi=("which language my {rel} is learning", "what language my {rel} is studying"),
)

KIND_KEYS = tuple(KINDS)
CHANGEABLE = tuple(k for k in KIND_KEYS if KINDS[k].ch_short)
WITH_RELS = tuple(k for k in KIND_KEYS if KINDS[k].rels)


# -- declined questions ---------------------------------------------------------------------------

DECLINES: dict[str, dict] = {
    "age": dict(
        scripts=(
            ("I want to get back into running but I'm worried I've left it too late.",
             "It's rarely too late! Do you mind me asking how old you are? It helps me pitch the "
             "plan.",
             "The trick at any age is starting gently: run-walk intervals a few times a week, "
             "building up slowly."),
            ("Thinking about a fitness plan, nothing too intense.",
             "Sure. Roughly what age bracket are you in, if you don't mind sharing?",
             "A gentle start works for everyone: brisk walks most days, short jogging bursts, and "
             "proper rest when you need it."),
        ),
        declines=("Rather not say, if that's alright. Let's just say not a spring chicken.",
                  "I'd prefer to keep that to myself, ha.", "Pass! Just give me something gentle."),
        q=("How old am I?", "What age am I?"),
        qi=("how old I am", "what age I am"),
    ),
    "salary": dict(
        scripts=(
            ("Can you help me put together a monthly budget? Things are tight.",
             "Happy to help. Roughly what's your take-home pay, if you're comfortable sharing?",
             "A common starting point: about half for needs, under a third for wants, and the "
             "rest towards savings or debt. Adjust it to suit you."),
            ("I want to start saving properly but I never know how much to put away.",
             "Sure! What do you earn a month, roughly? Only if you're happy to say.",
             "Then try paying yourself first: move a fixed amount into savings on payday, even a "
             "small one, and build it up when you can."),
        ),
        declines=("I'd honestly rather not put numbers in here. Can you keep it general?",
                  "Not comfortable sharing that, sorry.", "Let's leave my salary out of it, ha."),
        q=("How much do I earn?", "What's my salary?", "What's my take-home pay?"),
        qi=("how much I earn", "what my salary is"),
    ),
    "rent": dict(
        scripts=(
            ("Trying to decide whether to renew my lease or look elsewhere.",
             "That's worth weighing up. How much are you paying at the moment?",
             "Compare a few similar listings nearby, factor in moving costs, and remember you can "
             "often negotiate; landlords like reliable tenants."),
            ("My landlord wants to put the rent up and I'm annoyed.",
             "Ugh. What's the rent now, if you don't mind me asking?",
             "Check your tenancy agreement for how increases are allowed, and it's fine to ask "
             "politely whether there's any flexibility."),
        ),
        declines=("I'll keep that to myself, if that's okay.",
                  "Rather not say, it's a bit embarrassing honestly."),
        q=("How much rent do I pay?", "What's my rent?"),
        qi=("how much my rent is", "what I pay in rent"),
    ),
    "surname": dict(
        scripts=(
            ("Can you help me write a short email to my landlord about a broken boiler?",
             "Of course. How should I sign it off, what's your full name?",
             "Here's a draft: 'Hello, the boiler has stopped working and we have no hot water. "
             "Could you arrange a repair as soon as possible? Many thanks, [Name]'"),
            ("Need a formal letter to the council about missed bin collections.",
             "Sure! What surname should I put at the bottom?",
             "Draft: 'Dear Sir or Madam, our bins have been missed repeatedly this month. Please "
             "could you look into this? Yours faithfully, [Name]'"),
        ),
        declines=("Just leave a blank, I'd rather not type my full name in here.",
                  "Leave it as [Name], I'll fill it in myself."),
        q=("What's my surname?", "What's my last name?"),
        qi=("what my surname is", "what my last name is"),
    ),
    "employer": dict(
        scripts=(
            ("Work's been a nightmare this month, lots of restructuring.",
             "That sounds stressful. Which company are you with, if you don't mind me asking?",
             "Restructures are unsettling wherever you are. Keep a note of your achievements and "
             "don't be shy about asking HR direct questions."),
            ("Got a job interview internally next week!",
             "Oh, well done! Which company is it, out of interest?",
             "For an internal interview, lean on what you already know about the team's problems "
             "and show how you'd help solve them."),
        ),
        declines=("I'd rather not say, it's a small industry.", "Prefer not to name them, sorry!",
                  "Ha, I'll keep that quiet if you don't mind."),
        q=("Which company do I work for?", "Who's my employer?"),
        qi=("which company I work for", "who my employer is"),
    ),
    "university": dict(
        scripts=(
            ("Got invited to a uni reunion and I'm not sure I want to go.",
             "Reunions can be a mixed bag! Which university was it?",
             "If you're on the fence, go for an hour and leave if it's not fun. Low commitment, "
             "and you might be pleasantly surprised."),
            ("Should I put my degree at the top of my CV or my experience?",
             "Depends a little. Where did you study?",
             "Generally, once you've a few years of work behind you, experience goes first and "
             "education moves to the bottom."),
        ),
        declines=("I'd rather not say, if that's okay.", "Eh, I'll skip that one."),
        q=("Which university did I go to?", "Where did I study?"),
        qi=("which university I went to", "where I studied"),
    ),
    "weight": dict(
        scripts=(
            ("I've been trying to eat a bit better lately.",
             "Good for you! Would you mind sharing your height and weight? I can suggest "
             "portion sizes.",
             "A simple rule of thumb: half the plate veg, a quarter protein, a quarter carbs, and "
             "drink water before reaching for snacks."),
        ),
        declines=("Nah, I'd prefer not to share that.", "I'd rather not, if that's alright."),
        q=("How much do I weigh?", "What's my weight?"),
        qi=("how much I weigh", "what my weight is"),
    ),
}
DECLINE_KEYS = tuple(DECLINES)
_DECLINE_PREFIX = ("No problem at all.", "Fair enough!", "Totally fine.", "That's absolutely okay.")


# -- small talk, greetings ------------------------------------------------------------------------

SMALL_TALK = (
    ("Random question: why do onions make you cry?",
     "Cutting an onion breaks its cells and releases a gas that reacts with the moisture in your "
     "eyes, which makes them sting. A sharp knife and a cold onion help."),
    ("Can you give me a quick recipe for a weeknight dal?",
     "Sure: soften an onion with garlic, ginger and cumin, add rinsed red lentils, a tin of "
     "tomatoes and water, simmer until soft, then finish with lemon and coriander."),
    ("How do I get a red wine stain out of a rug?",
     "Blot (don't rub) as much as you can, then dab with cold water and a little washing-up "
     "liquid. Salt or bicarbonate of soda on a fresh stain helps lift it too."),
    ("Write me a two-line out-of-office message? Nothing fancy.",
     "'Thanks for your email. I'm away at the moment with limited access to messages and will "
     "reply as soon as I'm back.'"),
    ("What's a good trick for remembering people's names at events?",
     "Repeat the name straight away ('Nice to meet you, Sam'), link it to something vivid, and "
     "use it once more before you part."),
    ("Is it weird to reply to work emails late at night?",
     "Not weird, but it can set expectations. Scheduling the email to send in the morning is a "
     "neat compromise."),
    ("Any tips for falling asleep when your brain won't shut up?",
     "Try writing a quick to-do list for tomorrow before bed, keep the room cool, and if you're "
     "still awake after a while, get up and do something dull in dim light."),
    ("What's the difference between baking soda and baking powder?",
     "Baking soda needs an acid in the recipe to react; baking powder already contains the acid, "
     "so it works on its own."),
    ("How long should I boil an egg for a jammy yolk?",
     "Around six and a half minutes from boiling for a large egg, then straight into cold water."),
    ("Can you explain why the sky is blue like I'm five?",
     "Sunlight is made of lots of colours. The air bounces the blue bits around the most, so "
     "blue comes at your eyes from every direction!"),
    ("Help me word a polite no to a party invite?",
     "'Thank you so much for the invitation! I'm afraid I can't make it, but I hope it's a "
     "wonderful evening. Let's catch up soon.'"),
    ("What's the best way to keep basil alive on a windowsill?",
     "Lots of light, water when the top of the soil feels dry, and pinch off the top leaves "
     "regularly so it bushes out instead of flowering."),
    ("How do I stop my glasses steaming up?",
     "A tiny drop of washing-up liquid rubbed on the lenses and buffed off leaves a film that "
     "stops fogging."),
    ("Any ideas for a cheap, fun Saturday?",
     "A long walk with a flask, a free museum, a charity-shop challenge with a small budget, or "
     "a board game afternoon with friends."),
    ("Is it 'affect' or 'effect' in 'this will ___ the outcome'?",
     "'Affect'. Affect is usually the verb and effect the noun: this will affect the outcome; "
     "the effect was huge."),
    ("Why does my bread always come out dense?",
     "Usually not enough kneading or proving, or yeast that's past its best. Give the dough "
     "longer somewhere warm, until it's properly doubled."),
)

GREET_USER = ("hey", "Morning!", "hi again", "Evening. Got a few minutes?", "hello hello",
              "Right, I'm back.", "Hiya", "Afternoon!", "ok I'm back with more questions",
              "Hi there")
GREET_ASSISTANT = ("Hi! Good to hear from you. What's on your mind today?",
                   "Morning! How's your week shaping up?", "Hey, welcome back. What can I help with?",
                   "Of course, fire away.", "Hello! How are things?",
                   "Hi! Always happy to chat. What's up?")
CLOSE_USER = ("That's all for now, thanks!", "Cheers, you're a star.", "Right, gotta run. Thanks!",
              "Okay, that's me done. Thank you!", "brilliant, thanks")
CLOSE_ASSISTANT = ("Anytime! Take care.", "You're welcome, speak soon.",
                   "Glad to help. Have a good one!", "My pleasure! Good luck with everything.")

DIRECT_WRAPS = ("{q}", "{q}", "Refresh my memory, {ql}", "Quick q: {ql}",
                "Brain's mush after work, so {ql}", "Pop quiz for you: {ql}",
                "{q} It's on the tip of my tongue.", "Forgive me if this is a repeat, {ql}",
                "Hiya! Before anything else, {ql}", "Need this for some paperwork. {q}",
                "yo, {ql}", "{q} Someone asked me earlier and my mind went blank.")
INDIRECT_WRAPS = ("Did I ever tell you {i}?", "Can you remind me {i}?",
                  "I've completely forgotten {i}. Rescue me?",
                  "Sorry, random one: do you happen to remember {i}?",
                  "Any chance you remember {i}?", "My memory's shocking this week. Do you know {i}?",
                  "Weird one, but would you know {i}?",
                  "A friend's quizzing me: {i}, do you remember?")


# -- helpers --------------------------------------------------------------------------------------

_FORMATTER = string.Formatter()
_BASE_SLOT = {"v": "v", "V": "v", "a_v": "v", "A_v": "v", "f": "f", "F": "f",
              "old": "old", "Old": "old", "a_old": "old", "A_old": "old",
              "sp": "sp", "rel": "rel", "appt": "appt", "day": "day"}


def _slots_of(tpl: str) -> list[str]:
    return [f for _, f, _, _ in _FORMATTER.parse(tpl) if f]


def _bases(tpl: str) -> set[str]:
    return {_BASE_SLOT[s] for s in _slots_of(tpl)}


def _cap(s: str) -> str:
    return s[:1].upper() + s[1:]


def _article(word: str) -> str:
    w = word.lower()
    if w.startswith(("uk", "uni", "eu")):
        return "a"
    return "an" if w[:1] in "aeiou" else "a"


def _normal(text: str) -> str:
    return " " + re.sub(r"[^a-z0-9]+", " ", text.lower()).strip() + " "


def _fill(tpl: str, slots: dict[str, str]) -> tuple[str, tuple[str, ...]]:
    """Format ``tpl`` and return the text with the value strings it inserted (deduplicated)."""
    text = tpl.format(**slots)
    values: list[str] = []
    for name in _slots_of(tpl):
        raw = slots[name]
        if name in ("a_v", "A_v", "a_old", "A_old"):
            raw = raw.split(" ", 1)[1]  # the value without its article
        if raw not in values:
            values.append(raw)
    return text, tuple(values)


def _value_slots(val: Val, rng: random.Random, prefix: str = "v") -> dict[str, str]:
    form = rng.choice(val.forms)
    a = f"{_article(form)} {form}"
    if prefix == "v":
        out = {"v": form, "V": _cap(form), "a_v": a, "A_v": _cap(a)}
        if val.field:
            out.update(f=val.field, F=_cap(val.field))
        return out
    return {"old": form, "Old": _cap(form), "a_old": a, "A_old": _cap(a)}


def _usable(templates, have: set[str]) -> list:
    """Templates (or tuples whose first item is the template) whose slots are all available."""
    out = []
    for t in templates:
        first = t[0] if isinstance(t, tuple) else t
        if _bases(first) <= have:
            out.append(t)
    return out


def _ql(q: str) -> str:
    return q if q.startswith(("I ", "I'")) else q[:1].lower() + q[1:]


def _question_text(rng: random.Random, direct: tuple[str, ...], indirect: tuple[str, ...],
                   slots: dict[str, str]) -> tuple[str, tuple[str, ...]]:
    if indirect and rng.random() < 0.5:
        clause = rng.choice(indirect)
        wrap = rng.choice(INDIRECT_WRAPS)
        tpl = wrap.replace("{i}", clause)
    else:
        q = rng.choice(direct)
        wrap = rng.choice(DIRECT_WRAPS)
        tpl = wrap.replace("{ql}", _ql(q)).replace("{q}", q)
    return _fill(tpl, slots)


# -- one user -------------------------------------------------------------------------------------


class _Conversation:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.turns: list[Turn] = []
        self.session = 0
        self.index = 0
        self.date = ""
        self.stated: dict[str, list[tuple[Val, tuple[int, int]]]] = {}

    def start(self, date: str) -> None:
        self.session += 1
        self.index = 0
        self.date = date

    def add(self, role: str, tpl: str, slots: dict[str, str] | None = None,
            fact: str = "", val: Val | None = None) -> tuple[int, int]:
        text, values = _fill(tpl, slots or {})
        where = (self.session, self.index)
        self.turns.append(Turn(role=role, content=text, session=self.session, date=self.date,
                               index=self.index, facts=(fact,) if fact else (), values=values))
        self.index += 1
        if fact:
            assert val is not None
            self.stated.setdefault(fact, []).append((val, where))
        return where

    def reply(self, options, slots: dict[str, str], have: set[str]) -> None:
        """An assistant reply from ``options`` using only slots the user just said."""
        choice = self.rng.choice(_usable(options, have))
        if isinstance(choice, tuple):
            self.add("assistant", choice[0], slots)
            if len(choice) > 1 and choice[1]:
                self.add("user", choice[1])
                self.add("assistant", choice[2])
        else:
            self.add("assistant", choice, slots)


def _aux_slots(kind: Kind, rng: random.Random) -> dict[str, str]:
    if kind.aux == "pet":
        return {"sp": rng.choice(SPECIES)}
    if kind.aux == "appt":
        return {"appt": rng.choice(APPOINTMENTS), "day": rng.choice(WEEKDAYS)}
    return {}


def _say_fact(conv: _Conversation, kind: Kind, fact: str, val: Val, aux: dict[str, str],
              interview: bool) -> None:
    """The user's own fact, as an answer to the assistant's question or said outright."""
    rng = conv.rng
    slots = dict(aux)
    slots.update(_value_slots(val, rng))
    have = set(aux) | {"v"} | ({"f"} if val.field else set())
    if interview:
        opener, asks = rng.choice(kind.opener)
        conv.add("user", opener, slots)
        conv.add("assistant", rng.choice(asks), slots)
        tpl = rng.choice(_usable(kind.short, have))
        conv.add("user", tpl, slots, fact, val)
        conv.reply(kind.ack, slots, _bases(tpl) | _bases(opener))
    else:
        user, assistant = rng.choice(kind.state)
        conv.add("user", user, slots, fact, val)
        conv.add("assistant", assistant, slots)


def _say_change(conv: _Conversation, kind: Kind, fact: str, old: Val, val: Val,
                aux: dict[str, str], interview: bool) -> None:
    rng = conv.rng
    slots = dict(aux)
    slots.update(_value_slots(val, rng))
    slots.update(_value_slots(old, rng, "old"))
    if interview:
        opener, asks = rng.choice(kind.ch_open)
        conv.add("user", opener, slots)
        conv.add("assistant", rng.choice(asks), slots)
        tpl = rng.choice(kind.ch_short)
        conv.add("user", tpl, slots, fact, val)
        conv.reply(kind.ch_ack, slots, (_bases(tpl) | _bases(opener)) - {"old"})
    else:
        user, assistant = rng.choice(kind.ch_state)
        conv.add("user", user, slots, fact, val)
        conv.add("assistant", assistant, slots)


def _say_other(conv: _Conversation, kind: Kind, fact: str, rel: str, val: Val,
               aux: dict[str, str], interview: bool) -> None:
    """The same kind of fact about someone else (a near-miss distractor)."""
    rng = conv.rng
    slots = dict(aux)
    slots["rel"] = rel
    slots.update(_value_slots(val, rng))
    if interview and kind.d_open:
        opener, asks = rng.choice(kind.d_open)
        conv.add("user", opener, slots)
        conv.add("assistant", rng.choice(asks), slots)
        tpl = rng.choice(kind.d_short)
        conv.add("user", tpl, slots, fact, val)
        conv.reply(kind.d_ack, slots, _bases(tpl) | _bases(opener))
    else:
        user, assistant = rng.choice(kind.d_state)
        conv.add("user", user, slots, fact, val)
        conv.add("assistant", assistant, slots)


def _say_decline(conv: _Conversation, topic: str) -> None:
    rng = conv.rng
    spec = DECLINES[topic]
    opener, ask, advice = rng.choice(spec["scripts"])
    conv.add("user", opener)
    conv.add("assistant", ask)
    conv.add("user", rng.choice(spec["declines"]))
    conv.add("assistant", f"{rng.choice(_DECLINE_PREFIX)} {advice}")


class _Values:
    """Draws values so that no two values of one user name each other (whole words)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.taken: list[str] = []

    def clash(self, val: Val) -> bool:
        for a in val.answers:
            na = _normal(a)
            for t in self.taken:
                if na in t or t in na:
                    return True
        return False

    def draw(self, pool: tuple[Val, ...]) -> Val:
        for _ in range(500):
            val = self.rng.choice(pool)
            if not self.clash(val):
                self.taken.extend(_normal(a) for a in val.answers)
                return val
        raise RuntimeError("value pool exhausted")


def _session_dates(rng: random.Random, n: int) -> list[str]:
    when = datetime(2023, 1, 1) + timedelta(days=rng.randint(0, 700))
    out = []
    for _ in range(n):
        when = when.replace(hour=rng.randint(7, 22), minute=rng.randint(0, 59))
        out.append(when.strftime("%Y-%m-%dT%H:%M"))
        when += timedelta(days=rng.randint(2, 40))
    return out


def _rel_id(rel: str) -> str:
    return rel.replace(" ", "_")


def _user(seed: int, n: int) -> User:
    rng = random.Random(seed * 1_000_003 + n)
    uid = f"interview-{seed}-{n:02d}"
    values = _Values(rng)
    n_sessions = rng.randint(3, 5)

    # Which facts this user gives.
    order = list(KIND_KEYS)
    rng.shuffle(order)
    n_own = rng.randint(12, 14)
    own = order[:n_own]
    missing = order[n_own:]
    n_other_q = MEMORY_PER_USER - n_own

    own_aux = {k: _aux_slots(KINDS[k], rng) for k in own}
    changing = [k for k in own if k in CHANGEABLE]
    rng.shuffle(changing)
    changing = changing[:rng.randint(2, 3)]
    chains: dict[str, list[Val]] = {}
    for k in own:
        length = 1
        if k in changing:
            length = 3 if (n_sessions >= 4 and k == changing[0] and rng.random() < 0.4) else 2
        chains[k] = [values.draw(KINDS[k].pool) for _ in range(length)]

    # Near-miss facts about other people: some for kinds the user also has, some not.
    n_others = n_other_q + rng.randint(1, 2)
    others: list[tuple[str, str]] = []  # (kind, rel)
    candidates = [k for k in order if k in WITH_RELS]
    while len(others) < n_others:
        k = rng.choice(candidates)
        used = {r for kk, r in others if kk == k}
        free = [r for r in KINDS[k].rels if r not in used]
        if len(free) < 2:  # keep a relation free for a near-miss question
            continue
        others.append((k, rng.choice(free)))
    other_vals = {o: values.draw(KINDS[o[0]].pool) for o in others}
    other_aux = {o: _aux_slots(KINDS[o[0]], rng) for o in others}

    declined = rng.sample(DECLINE_KEYS, rng.randint(1, 2))

    # Schedule everything over the sessions.
    events: list[tuple[int, tuple]] = []
    for k in own:
        chain = chains[k]
        if len(chain) == 1:
            events.append((rng.randint(1, n_sessions), ("own", k)))
            continue
        sessions = sorted(rng.sample(range(1, n_sessions + 1), len(chain)))
        events.append((sessions[0], ("own", k)))
        for step, s in enumerate(sessions[1:], start=1):
            events.append((s, ("change", k, step)))
    for o in others:
        events.append((rng.randint(1, n_sessions), ("other", o)))
    for topic in declined:
        events.append((rng.randint(1, n_sessions), ("decline", topic)))
    chats = list(range(len(SMALL_TALK)))
    rng.shuffle(chats)
    for s in range(1, n_sessions + 1):
        for _ in range(rng.randint(1, 2)):
            events.append((s, ("chat", chats.pop())))

    conv = _Conversation(rng)
    for s, date in enumerate(_session_dates(rng, n_sessions), start=1):
        conv.start(date)
        conv.add("user", rng.choice(GREET_USER))
        conv.add("assistant", rng.choice(GREET_ASSISTANT))
        todays = [e for es, e in events if es == s]
        rng.shuffle(todays)
        for e in todays:
            if e[0] == "own":
                k = e[1]
                _say_fact(conv, KINDS[k], k, chains[k][0], own_aux[k], rng.random() < 0.75)
            elif e[0] == "change":
                k, step = e[1], e[2]
                _say_change(conv, KINDS[k], k, chains[k][step - 1], chains[k][step], own_aux[k],
                            rng.random() < 0.65)
            elif e[0] == "other":
                k, rel = e[1]
                _say_other(conv, KINDS[k], f"{k}:{_rel_id(rel)}", rel, other_vals[e[1]],
                           other_aux[e[1]], rng.random() < 0.55)
            elif e[0] == "decline":
                _say_decline(conv, e[1])
            else:
                u, a = SMALL_TALK[e[1]]
                conv.add("user", u)
                conv.add("assistant", a)
        if rng.random() < 0.7:
            conv.add("user", rng.choice(CLOSE_USER))
            conv.add("assistant", rng.choice(CLOSE_ASSISTANT))

    # Questions.
    drafts: list[dict] = []
    for k in own:
        kind = KINDS[k]
        current = chains[k][-1]
        _, where = conv.stated[k][-1]
        stale: list[str] = []
        for old in chains[k][:-1]:
            stale.extend(a for a in old.answers if a not in stale)
        text, qvals = _question_text(rng, kind.q, kind.qi, own_aux[k])
        drafts.append(dict(fact=k, text=text, kind="memory", answers=current.answers,
                           stale=tuple(stale), evidence=(where,), values=qvals))
    asked_others = rng.sample(others, n_other_q)
    for o in asked_others:
        k, rel = o
        kind = KINDS[k]
        fact = f"{k}:{_rel_id(rel)}"
        _, where = conv.stated[fact][-1]
        slots = dict(other_aux[o], rel=rel)
        text, qvals = _question_text(rng, kind.rq, kind.rqi, slots)
        drafts.append(dict(fact=fact, text=text, kind="memory", answers=other_vals[o].answers,
                           evidence=(where,), values=qvals))

    for topic in declined:
        spec = DECLINES[topic]
        text, qvals = _question_text(rng, spec["q"], spec["qi"], {})
        drafts.append(dict(fact=f"declined:{topic}", text=text, kind="unanswerable", values=qvals))

    # Near misses: the same kind of fact about a relation never mentioned for it, or the user's
    # own fact of a kind only mentioned about someone else.
    near: list[tuple[str, dict, tuple, tuple]] = []
    other_kinds = [k for k, _ in others]
    for k in dict.fromkeys(other_kinds):
        used = {r for kk, r in others if kk == k}
        rel = rng.choice([r for r in KINDS[k].rels if r not in used])
        aux = next(other_aux[o] for o in others if o[0] == k)
        near.append((f"{k}:{_rel_id(rel)}", dict(aux, rel=rel), KINDS[k].rq, KINDS[k].rqi))
        if k in missing:
            near.append((k, dict(aux), KINDS[k].q, KINDS[k].qi))
    for k in own:
        if KINDS[k].rels and k not in other_kinds:
            rel = rng.choice(KINDS[k].rels)
            near.append((f"{k}:{_rel_id(rel)}", dict(own_aux[k], rel=rel), KINDS[k].rq,
                         KINDS[k].rqi))
    rng.shuffle(near)
    near.sort(key=lambda x: 0 if x[0] in missing or x[0].split(":")[0] in other_kinds else 1)
    seen_facts = set()
    for fact, slots, q, qi in near:
        if len(drafts) >= QUESTIONS_PER_USER:
            break
        if fact in seen_facts or fact in conv.stated:
            continue
        seen_facts.add(fact)
        text, qvals = _question_text(rng, q, qi, slots)
        drafts.append(dict(fact=fact, text=text, kind="unanswerable", values=qvals))
    for k in missing:  # fallback, rarely needed
        if len(drafts) >= QUESTIONS_PER_USER:
            break
        if k in seen_facts:
            continue
        seen_facts.add(k)
        text, qvals = _question_text(rng, KINDS[k].q, KINDS[k].qi, _aux_slots(KINDS[k], rng))
        drafts.append(dict(fact=k, text=text, kind="unanswerable", values=qvals))

    rng.shuffle(drafts)
    questions = [Question(key=f"{uid}-q{j:02d}", user_id=uid, **d) for j, d in enumerate(drafts)]
    return User(user_id=uid, turns=conv.turns, questions=questions)


def generate(seed: int, users: int = 5) -> list[User]:
    """``users`` users, each with 3 to 5 sessions and ``QUESTIONS_PER_USER`` questions."""
    return [_user(seed, n) for n in range(users)]

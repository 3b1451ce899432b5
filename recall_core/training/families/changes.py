"""changes: personal facts that change several times across sessions.

Each user talks to the assistant over 3 to 5 dated sessions. Six or seven facts about the user
move through 2 to 4 values: a move to another city, a new job, a new partner, a new car, phone or
laptop, a new diet, workout, team project, rent, favourite show, language or coffee order. Some
changes are announced and happen ("we're moving to X" ... "got the keys in X"), some are announced
and then cancelled ("X fell through, we're staying in Y"), some happen without warning and some are
reversed ("back to being vegetarian"). Three facts, drawn from hometown, pet, birthday, allergy and
instrument, never change and serve as controls. Near-miss distractors state the same kind of fact about a
sister, a flatmate, a neighbour, mum...

Every user gets 20 questions (``QUESTIONS_PER_USER``): 16 about the current value of a fact
(``stale`` lists every earlier or abandoned value) and 4 (``UNANSWERABLE_PER_USER``) about a
plausible fact that was never stated, usually next to a distractor.

``aliases(surface)`` returns the acceptable ways to name the value that ``surface`` (one of a
turn's ``values``) names; tests use it to check stale values against earlier turns.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from recall_core.training.families.base import Question, Turn, User

NAME = "changes"
DESCRIPTION = (
    "Facts about the user (home, job, partner, car, phone, diet, workout, project, rent, show...) "
    "change, get planned, cancelled or reversed across sessions; questions ask the current value."
)

QUESTIONS_PER_USER = 20
UNANSWERABLE_PER_USER = 4
MIN_SESSIONS, MAX_SESSIONS = 3, 5

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


# -- templates -----------------------------------------------------------------------------------
# A user template is paired with assistant replies that echo the same slots. Slots: {v} (the value
# stated at first mention), {cur} (value before the event), {new} (value the event is about),
# {term}, {species} (plain words), {who}/{Who} (a person), {rel} (a relation word). {an:x} and
# {An:x} put an indefinite article before the slot.
#
# Event meaning: init states {v}; plan announces {new} while {cur} still holds; done makes the
# planned {new} current; cancel abandons {new} and keeps {cur}; switch makes {new} current without
# warning; revert goes back to an earlier value {new}, leaving {cur}.

_K: dict[str, dict] = {}

_K["home"] = {
    "pool": "city",
    "events": ("switch", "plan", "done", "cancel", "revert"),
    "init": [
        ("Writing this from my sofa in {v} while it absolutely chucks it down outside.",
         ("Proper sofa weather in {v}, then! Got a good film lined up, or is it a nap kind of afternoon?",
          "Rainy afternoons in {v} are made for blankets and tea. Anything I can help you fill the time with?")),
        ("Our flat in {v} is tiny, but there's a bakery right underneath it so I'm not complaining.",
         ("A bakery under your flat in {v}? Dangerous, in the best way. What do you always end up buying there?",)),
        ("The wind in {v} today, honestly. My umbrella turned inside out before I'd even reached the bus stop.",
         ("Ha, a classic {v} umbrella casualty! A compact windproof one with a vented canopy is worth paying a bit more for.",)),
        ("fyi I'm based in {v}, in case any of my questions end up weirdly local",
         ("Good to know, {v} it is. Ask away, local or not!",)),
    ],
    "plan": [
        ("We've put an offer in on a place in {new}. If it goes through we'd be leaving {cur} in a couple of months.",
         ("Fingers crossed for the {new} offer! Leaving {cur} would be a big change. What's pulling you towards {new}?",)),
        ("Okay, don't laugh, but I'm seriously thinking about moving to {new}. I've been scrolling flat listings there every night.",
         ("No laughing here, {new} could be a real adventure. Is it work pulling you there, or more of a fresh-start thing?",)),
        ("Work offered me a transfer to their {new} office and I'm leaning towards yes.",
         ("A transfer to {new}, exciting! Do check whether they'll cover relocation costs before you commit.",)),
    ],
    "done": [
        ("Update: we got the keys! Officially living in {new} now, surrounded by boxes.",
         ("Congratulations on the keys! Welcome to {new}. Which box gets unpacked first, the kettle?",)),
        ("The move actually happened, I'm in {new}. {cur} already feels like a lifetime ago.",
         ("You did it! Settling into {new} takes a while, so go easy on yourself. Found a favourite local spot yet?",)),
        ("Made it to {new} in one piece. The van broke down halfway, but we got there.",
         ("Oh no, the van! Still, you're in {new} now, which is what counts. Have a proper rest tonight.",)),
    ],
    "cancel": [
        ("The move to {new} fell through at the last minute. So we're staying put in {cur}, for now anyway.",
         ("Ugh, I'm sorry the {new} move fell through, that's so deflating. At least {cur} is familiar. Will you keep looking?",)),
        ("Scrapped the whole {new} plan. Ran the numbers and staying in {cur} just makes more sense.",
         ("Sensible call, even if it stings a bit. Anything you'd like to change about your place in {cur} now that you're staying?",)),
        ("Well, {new} isn't happening. Long story, but I'm staying in {cur}.",
         ("Sorry it didn't work out with {new}. Staying in {cur} has its upsides though. Want to talk through the long story?",)),
    ],
    "switch": [
        ("Bit of news: I moved to {new} a couple of weeks ago. Left {cur} on pretty short notice.",
         ("That's big news! Short-notice moves are exhausting. How are you finding {new} so far?",)),
        ("New address alert, I'm in {new} now. The flat-share in {cur} was driving me up the wall.",
         ("A fresh start in {new}, then! Hope the new place is calmer than that flat-share.",)),
        ("I packed up and left {cur}. Renting a little place in {new} now.",
         ("Wow, that's a big step. How's the little place in {new} treating you?",)),
    ],
    "revert": [
        ("Plot twist: I've moved back to {new}. {cur} just never felt like home.",
         ("Sometimes you have to leave to know where home is. Welcome back to {new}!",)),
        ("I'm back in {new}! Turns out I missed it way more than I expected while I was in {cur}.",
         ("Back in {new}, how lovely. What did you miss most while you were away?",)),
    ],
    "ask": [
        "Where am I living these days?",
        "Remind me which city I'm in now?",
        "Do you remember where I ended up living?",
        "Which city do I currently live in?",
        "What city should you assume I'm in when I ask for local recommendations?",
    ],
}

_K["job"] = {
    "pool": "job",
    "events": ("switch", "plan", "done", "cancel", "revert"),
    "init": [
        ("Long shift today. That's the glamorous life of {an:v}, I suppose.",
         ("Sounds draining. Being {an:v} takes a lot out of you, so make sure you eat something proper tonight.",)),
        ("I've been {an:v} for about six years now and Sunday evenings still fill me with dread.",
         ("Six years as {an:v} and still the Sunday dread, that's more common than you'd think. Anything specific looming this week?",)),
        ("Work was chaos. Anyone who says being {an:v} is a calm job has never done it.",
         ("Ha, I'll take your word for it! What made today so chaotic?",)),
    ],
    "plan": [
        ("I've got a second interview for {an:new} role on Thursday and I'm kind of terrified.",
         ("A second interview, well done! Want to run through some likely questions for the {new} role?",)),
        ("Thinking about retraining as {an:new}. Being {an:cur} is wearing me down.",
         ("Retraining as {an:new} is a big step, and it sounds like being {an:cur} is taking its toll. Have you looked into what the training involves?",)),
        ("There's an opening for {an:new} on another team and my manager reckons I should go for it.",
         ("If your manager's backing you, that's a great sign! What appeals to you about being {an:new}?",)),
    ],
    "done": [
        ("I got it!! Starting as {an:new} on Monday, still can't quite believe it.",
         ("Congratulations, that's brilliant news! The first weeks as {an:new} can be a whirlwind, so be kind to yourself.",)),
        ("It's official, I'm {an:new} now. Handed in my notice as {an:cur} last week.",
         ("Huge congratulations! Leaving life as {an:cur} behind must feel strange. How's the new role?",)),
        ("First full week as {an:new} done. My brain is full but I love it.",
         ("A full brain is a good sign in a new job! Glad you're loving being {an:new}.",)),
    ],
    "cancel": [
        ("Didn't get the {new} job. So I'm still {an:cur}, still grumbling about it.",
         ("Sorry about the {new} job, that's really disappointing. Did they give you any feedback you could use next time?",)),
        ("Decided against the {new} thing in the end. I'm staying {an:cur}, the pay cut would've hurt too much.",
         ("That's a very reasonable call. Staying {an:cur} gives you time to plan the next move properly.",)),
        ("They gave the {new} job to an internal candidate. So it's business as usual being {an:cur}.",
         ("That's frustrating, especially after all the prep. Being {an:cur} a bit longer isn't the end of the road, though.",)),
    ],
    "switch": [
        ("Huge news: I quit being {an:cur}! I'm working as {an:new} now.",
         ("Wow, that's a big leap! How are you finding life as {an:new} so far?",)),
        ("Career change happened faster than I expected. I'm {an:new} now, never thought I'd stop being {an:cur}.",
         ("Life moves fast sometimes! What's been the biggest surprise about being {an:new}?",)),
        ("So I'm {an:new} now. Long story, involves a very persuasive old boss.",
         ("I'd love to hear the long story! Congratulations on becoming {an:new}.",)),
    ],
    "revert": [
        ("I've gone back to being {an:new}. The {cur} stint taught me a lot, but it wasn't me.",
         ("It takes guts to admit something isn't right and go back. Welcome back to life as {an:new}!",)),
        ("Guess who's {an:new} again? My old place took me back after the {cur} experiment.",
         ("That's great they took you back! Sounds like being {an:new} is where you fit.",)),
    ],
    "ask": [
        "What do I do for work now?",
        "Remind me what my job is?",
        "What's my job at the moment?",
        "Do you remember what I do for a living?",
        "What would you put down as my occupation?",
    ],
}

_K["partner"] = {
    "pool": "partner",
    "events": ("switch", "revert"),
    "init": [
        ("My {term} {v} and I are doing a pottery class tonight. Wish us luck.",
         ("A pottery class with {v} sounds like a lovely date night. Don't judge your first bowl too harshly!",)),
        ("Two years with {v} this week! My {term}, I mean, not a coworker lol.",
         ("Ha, got it! Two years with {v}, congratulations. Are you doing anything to celebrate?",)),
        ("My {term}, {v}, thinks I'm overthinking this, so I'm asking you instead.",
         ("A second opinion, then! {v} might have a point, but tell me what's going on and we'll figure it out.",)),
    ],
    "switch": [
        ("So, {cur} and I split up a while ago. I've been seeing someone new, {new}, and it's going really well.",
         ("Breakups are hard even when they're the right call. I'm really glad things with {new} are going well.",)),
        ("Life update: not with {cur} anymore. My {term} now is {new}, we met at a friend's barbecue.",
         ("A barbecue meet-cute, love that! How are things going with {new}?",)),
        ("I've started seeing {new}! After {cur} I honestly didn't think I'd be ready this soon.",
         ("That's lovely news. Sounds like {new} came along at the right time.",)),
    ],
    "revert": [
        ("Okay, don't judge: {new} and I are back together. It never really felt right with {cur}.",
         ("No judgement at all! Sounds like you know what you want. How are things with {new} this time round?",)),
        ("So {new} and I got back together. Yes, again. Things with {cur} fizzled out pretty fast.",
         ("Second chances can work out really well. I hope things with {new} feel easier this time.",)),
    ],
    "ask": [
        "Who am I dating at the moment?",
        "Remind me what my {term} is called?",
        "What's my {term}'s name these days?",
        "Do you remember the name of the person I'm seeing?",
        "Who's my other half right now?",
    ],
}

_K["car"] = {
    "pool": "car",
    "events": ("switch", "plan", "done", "cancel"),
    "init": [
        ("The {v} made that grinding noise again this morning. Should I be worried?",
         ("A grinding noise often points to worn brakes, so I'd get the {v} checked sooner rather than later. Does it happen when you brake or when you turn?",)),
        ("Took the {v} through a car wash for the first time in a year. Turns out it's silver, who knew.",
         ("Ha, a surprise paint colour! The {v} must be feeling very fresh. Maybe a quick wax while it's clean?",)),
        ("Filled up the {v} today and nearly cried at the price.",
         ("Fuel prices are painful. Gentle acceleration and the right tyre pressures can squeeze a few more miles out of the {v}.",)),
    ],
    "plan": [
        ("I'm test-driving {an:new} on Saturday. The {cur} is on its last legs.",
         ("Exciting! On the test drive, take the {new} on a fast road and try parking it too, that's where the differences show.",)),
        ("Seriously thinking of trading in the {cur} for {an:new}. Talk me out of it?",
         ("I wouldn't talk you out of it without knowing more! Is it running costs, space, or just fancying something new that's drawing you to the {new}?",)),
        ("There's {an:new} for sale two streets over and I can't stop thinking about it.",
         ("The classic two-streets-over temptation! Worth getting a history check on that {new} before you fall too hard.",)),
    ],
    "done": [
        ("Picked up the {new} yesterday! Goodbye {cur}, you served me well.",
         ("Congratulations on the {new}! A fond farewell to the {cur} too. How does it drive?",)),
        ("The {new} is officially mine. It even smells new. Well, new-ish.",
         ("New-ish car smell still counts! Enjoy the {new}, and maybe book it a first check-up so you know where you stand.",)),
        ("Went for it and bought the {new}. Any tips for keeping the inside clean?",
         ("Congrats on the {new}! Rubber mats, a small bin bag in the door pocket and a five-minute tidy every time you fill up keep things under control.",)),
    ],
    "cancel": [
        ("Passed on the {new} in the end, the dealer wanted silly money. Keeping the {cur} going a bit longer.",
         ("Walking away from silly money is always the right move. A decent service might buy the {cur} a good few more months.",)),
        ("Test drive was a disaster, the {new} felt like driving a fridge. Sticking with my {cur}.",
         ("Ha, driving a fridge! Good that you found out before buying. The {cur} lives to fight another day.",)),
        ("Nope, no {new}. Put the money towards fixing up the {cur} instead.",
         ("Fair enough, fixing up the {cur} is often the cheaper option anyway. What needed doing?",)),
    ],
    "switch": [
        ("Finally got rid of the {cur}. Driving {an:new} now and it's so much smoother.",
         ("Smooth is good! Enjoy the {new}. Did you get a decent price for the {cur}?",)),
        ("The {cur} died on the motorway so I ended up buying {an:new} in a hurry.",
         ("Oh no, a motorway breakdown is the worst. Hope the {new} is treating you better already.",)),
        ("Swapped the {cur} for {an:new}. Don't ask how many hours I spent on comparison sites.",
         ("Those hours were an investment! How are you getting on with the {new}?",)),
    ],
    "ask": [
        "What car am I driving at the moment?",
        "Remind me what I drive?",
        "What's my car these days?",
        "Do you know what car I've got?",
        "If I said 'meet me by my car', what would you be looking for?",
    ],
}

_K["phone"] = {
    "pool": "phone",
    "events": ("switch", "plan", "done", "cancel"),
    "init": [
        ("My {v} battery is dead by lunchtime now. Is that normal?",
         ("Batteries do wear down after a couple of years. On the {v}, check the battery settings to see which apps are draining it first.",)),
        ("Dropped my {v} in the sink this morning. It survived. I'm still recovering.",
         ("Glad the {v} made it! If it got properly wet, leave it switched off somewhere dry for a few hours, just in case.",)),
        ("How do I take a screenshot on my {v}? I always forget.",
         ("It varies a little by model, but on the {v} it's usually two side buttons pressed together. Searching 'screenshot' in the settings app will show the exact combo.",)),
    ],
    "plan": [
        ("Eyeing up {an:new} for when my contract runs out. The {cur} is getting so slow.",
         ("The {new} could be a nice upgrade. Worth checking whether buying it outright with a SIM-only deal works out cheaper than a contract.",)),
        ("Pre-ordered {an:new}, supposedly it arrives in a few weeks.",
         ("Exciting! Back everything up before the {new} arrives so the switch is painless.",)),
    ],
    "done": [
        ("The {new} arrived! Spent all evening moving stuff over from the {cur}.",
         ("Setting up a new phone always takes longer than expected! Enjoy the {new}.",)),
        ("Finally on the {new}. The camera is ridiculously good.",
         ("Nice! With the {new} you've got no excuse for blurry photos now.",)),
    ],
    "cancel": [
        ("Cancelled the {new} order, the reviews were rough. Getting a new battery put in the {cur} instead.",
         ("Smart move, a fresh battery can make the {cur} feel almost new again.",)),
        ("Couldn't justify the {new} in the end. The {cur} lives on.",
         ("Long live the {cur}! Keeping a phone going longer is kinder to your wallet anyway.",)),
    ],
    "switch": [
        ("My {cur} got nicked on the bus, so I'm on {an:new} now. Still fuming.",
         ("Ugh, I'm sorry, that's horrible. Make sure the {cur} is marked as lost so it's locked. Hope the {new} is working out.",)),
        ("Caved and got {an:new}. The {cur} is in a drawer for emergencies.",
         ("A drawer backup phone is very sensible! How are you finding the {new}?",)),
    ],
    "ask": [
        "What phone am I using now?",
        "Which phone have I got at the moment?",
        "Remind me what phone I have?",
        "Do you remember what my phone is?",
    ],
}

_K["laptop"] = {
    "pool": "laptop",
    "events": ("switch", "plan", "done", "cancel"),
    "init": [
        ("The fan on my {v} sounds like a jet engine whenever I open more than three tabs.",
         ("The {v} is clearly working hard! Cleaning the vents with a bit of compressed air often quietens the fan.",)),
        ("Spilled tea right next to my {v} this morning. Next to, thankfully.",
         ("Phew, close call! A cheap keyboard cover might save the {v} next time.",)),
        ("Typing this on my {v} on the train, so forgive the typos.",
         ("No forgiveness needed! Typing on a moving train is a skill. What can I help with?",)),
    ],
    "plan": [
        ("Work says they'll replace my {cur} with {an:new} next quarter.",
         ("Nice, the {new} should be a decent step up. Make a list of what you need to move across from the {cur} before the swap.",)),
        ("Saving up for {an:new}. My {cur} is held together by stickers at this point.",
         ("Stickers are load-bearing, clearly! Keep an eye out for refurbished deals on the {new}, they can save a fair bit.",)),
    ],
    "done": [
        ("The {new} has landed on my desk. Setting it up now.",
         ("Enjoy setting up the {new}! Good time to clear out old files rather than copying everything over.",)),
        ("Sold the {cur} and bought {an:new}. Finally!",
         ("Finally indeed! How does the {new} feel after the {cur}?",)),
    ],
    "cancel": [
        ("The {new} upgrade got cancelled, so it's the trusty {cur} for another year.",
         ("Ah well, the trusty {cur} soldiers on. A fresh system install can give an old machine a bit of a boost.",)),
        ("Decided not to buy the {new}. Got more memory for my {cur} instead.",
         ("Good call, a memory upgrade can give the {cur} a whole new lease of life.",)),
    ],
    "switch": [
        ("My {cur} finally died, so I'm typing this on {an:new}.",
         ("RIP the {cur}! Hope the {new} treats you well. Did you manage to get your files off?",)),
        ("IT swapped my {cur} for {an:new} without warning. I keep hitting the wrong keys.",
         ("New keyboard muscle memory takes a week or so. You'll be flying on the {new} soon.",)),
    ],
    "ask": [
        "What laptop do I use these days?",
        "Which laptop am I on right now?",
        "Remind me what computer I'm working on?",
        "What laptop have I got?",
    ],
}

_K["diet"] = {
    "pool": "diet",
    "events": ("switch", "plan", "done", "cancel", "revert"),
    "init": [
        ("Need a quick dinner idea, and remember I'm {v}.",
         ("Sure! Since you're {v}, how about a big tray bake with whatever veg you have and a punchy sauce? Easy to adapt.",)),
        ("I've been {v} for about a year and honestly feel great.",
         ("A year of being {v}, that's real commitment! What's been the hardest thing to give up?",)),
        ("Being {v} at a work barbecue is always an adventure.",
         ("Ha, barbecues can be a minefield! Bringing one dish you know you can eat takes the pressure off when you're {v}.",)),
    ],
    "plan": [
        ("Thinking about going {new}. I've already ordered a cookbook, which is how you know I'm serious.",
         ("Ordering the cookbook is definitely the serious stage! Going {new} is easier if you change a few meals at a time.",)),
        ("My doctor suggested I try going {new}, so I might give it a go.",
         ("It's worth a try if your doctor suggested it. Want a few simple {new} meals to start with?",)),
    ],
    "done": [
        ("Officially {new} as of this week! My fridge looks very different.",
         ("Congrats on going {new}! A fridge makeover is half the battle. What's your go-to meal so far?",)),
        ("Okay, I did it. I'm {new} now. Three weeks in and no cravings... mostly.",
         ("Three weeks {new}, well done! Want a few easy recipes to keep things interesting?",)),
    ],
    "cancel": [
        ("The {new} idea lasted about four days. Still just {cur} over here.",
         ("Four days is still an experiment! Nothing wrong with staying {cur} if it suits you.",)),
        ("Decided against going {new}, too much faff. Staying {cur}.",
         ("Totally fair, a diet you can stick to beats a perfect one you can't. Staying {cur} it is, then!",)),
    ],
    "switch": [
        ("Small update: I've gone {new}. Being {cur} was fine, I just fancied a change.",
         ("Ooh, a big switch! How are you finding being {new} so far?",)),
        ("I'm not {cur} anymore, switched to {new} last month.",
         ("That's quite a change! Let me know if you want some {new} recipe ideas.",)),
    ],
    "revert": [
        ("Went back to being {new}. The {cur} experiment is over.",
         ("Sometimes the old way just works better. Back to {new}, then!",)),
        ("Okay so I'm {new} again. Turns out {cur} wasn't for me.",
         ("Fair enough! Being {new} clearly suits you better.",)),
    ],
    "ask": [
        "What diet am I following now?",
        "If you were planning a dinner menu for me, what diet should it fit?",
        "Remind me how I eat these days, diet-wise?",
        "What's my diet at the moment?",
    ],
}

_K["gym"] = {
    "pool": "gym",
    "events": ("switch", "plan", "done", "cancel", "revert"),
    "init": [
        ("Back from {v} and I can't feel my arms.",
         ("Sounds like {v} did its job! Drink plenty of water and maybe have a warm shower for those arms.",)),
        ("My {v} sessions are the only thing keeping me sane at the moment.",
         ("Having something like {v} to clear your head makes such a difference. How often do you manage to go?",)),
        ("Doing {v} twice a week is the plan. Plans are nice, aren't they.",
         ("Ha, plans are lovely! Twice a week of {v} is very doable if you book the slots in advance.",)),
    ],
    "plan": [
        ("Thinking of switching from {cur} to {new}, a friend swears by it.",
         ("Worth a try! Most places offering {new} do a taster, so you could test it before giving up {cur}.",)),
        ("Booked {an:new} taster for next week. Nervous!",
         ("A taster is the perfect low-pressure way in. Enjoy the {new} session and don't worry about being new!",)),
    ],
    "done": [
        ("Update: I've properly switched to {new}. Three sessions in and hooked.",
         ("Hooked after three sessions, that's a great sign! Enjoy the {new}.",)),
        ("Cancelled my {cur} membership, it's all {new} now.",
         ("A full commitment to {new}! Hope it keeps being fun.",)),
    ],
    "cancel": [
        ("Tried the {new} taster. Nope. Sticking to {cur}, thanks.",
         ("Ha, at least you know! Nothing wrong with sticking to {cur} if you enjoy it.",)),
        ("The {new} place closed before I'd even started, so it's still {cur} for me.",
         ("That's annoying timing! At least {cur} has kept you going in the meantime.",)),
    ],
    "switch": [
        ("I've dropped {cur}, doing {new} these days instead.",
         ("Nice change! What made you pick {new}?",)),
        ("New routine: {new} three mornings a week. I got bored of {cur}.",
         ("Three mornings of {new} is impressive! Boredom is a good reason to mix things up.",)),
    ],
    "revert": [
        ("I'm back doing {new}. Turns out I missed it after all that {cur}.",
         ("Welcome back to {new}! Sometimes a break makes you appreciate it more.",)),
    ],
    "ask": [
        "What's my workout routine these days?",
        "What kind of exercise am I doing at the moment?",
        "Which workout have I settled on?",
        "Remind me what I do to keep fit?",
    ],
}

_K["project"] = {
    "pool": "project",
    "events": ("switch", "plan", "done", "cancel", "revert"),
    "init": [
        ("We're heads-down on {v} at work and it's eating my whole week.",
         ("Sounds intense! Is {v} up against a deadline, or is this the new normal?",)),
        ("My team's on {v} right now, which is basically rebuilding the booking system from scratch.",
         ("Rebuilding from scratch is a big job! How's {v} going so far?",)),
        ("Planning meeting for {v} ran two hours over. Two. Hours.",
         ("Two hours over is brutal. For the next {v} meeting, maybe suggest a hard stop and a written agenda?",)),
    ],
    "plan": [
        ("Rumour is they're moving us off {cur} and onto {new} next quarter.",
         ("Rumours are rumours until they're official, but {new} sounds like a big shift. How do you feel about leaving {cur}?",)),
        ("My manager hinted we might get pulled onto {new} soon.",
         ("Interesting! Do you know much about what {new} involves yet?",)),
    ],
    "done": [
        ("It's official, the team's been moved to {new}. Goodbye {cur}!",
         ("A fresh start on {new}! Any handover notes from {cur} worth keeping?",)),
        ("First standup on {new} today. New codebase, new acronyms, new everything.",
         ("New acronyms are the worst part! Maybe keep a little glossary for {new} as you go.",)),
    ],
    "cancel": [
        ("{new} got shelved, so we're staying on {cur} for the foreseeable.",
         ("Shelved projects are frustrating. At least {cur} is familiar territory.",)),
        ("Leadership killed the {new} idea. We're still on {cur}.",
         ("That's a shame after all the talk about {new}. Still, continuity on {cur} isn't the worst thing.",)),
    ],
    "switch": [
        ("{cur} shipped last week! Now we're on something called {new}.",
         ("Congrats on shipping {cur}! What's {new} all about?",)),
        ("They reshuffled the teams and I'm on {new} now instead of {cur}.",
         ("Reshuffles can be a nice reset. How's {new} looking?",)),
    ],
    "revert": [
        ("They've pulled us back onto {new}. Apparently {cur} wasn't a priority after all.",
         ("Back to {new}, then! At least you know that codebase already.",)),
    ],
    "ask": [
        "What's my team working on right now?",
        "Which project is my team on these days?",
        "Remind me what project we're doing at work?",
        "What's the name of the project I'm on?",
    ],
}

_K["rent"] = {
    "pool": "rent",
    "events": ("switch", "plan", "done", "cancel"),
    "init": [
        ("Rent here is {v} a month, which is apparently 'reasonable' now.",
         ("{v} a month is a big chunk of anyone's pay. Want help putting together a simple budget around it?",)),
        ("After paying {v} in rent there isn't much left for fun, so cheap date ideas welcome.",
         ("Totally get it, {v} doesn't leave much wiggle room. Picnics, free gallery evenings and cooking something ambitious together are all cheap and fun.",)),
    ],
    "plan": [
        ("The letting agent says the rent might go up to {new} at renewal. It's {cur} now.",
         ("Going from {cur} to {new} would sting. It's worth asking them to justify the increase, or offering a longer lease for a smaller rise.",)),
        ("Landlord's 'reviewing' the rent. Could be {new} soon, apparently.",
         ("'Reviewing' is never a fun word. Check your tenancy agreement for how much notice they have to give before anything like {new} kicks in.",)),
    ],
    "done": [
        ("Yep, the rent's {new} now. Cool cool cool.",
         ("Ouch, {new} is a lot. Want a hand re-jigging your budget?",)),
        ("The increase went through, {new} a month from now on.",
         ("Sorry, that's a pain. We could look for a few easy savings elsewhere to absorb the {new} if you like.",)),
    ],
    "cancel": [
        ("Rent's staying at {cur}! We pushed back on the jump to {new} and they backed down.",
         ("Brilliant, well done for pushing back! Keeping it at {cur} is a real win.",)),
        ("Good news, the landlord dropped the {new} idea. Still {cur}.",
         ("That's a relief! Staying at {cur} gives you a bit of breathing room.",)),
    ],
    "switch": [
        ("Landlord bumped the rent to {new}, up from {cur}, with a month's notice.",
         ("A month's notice is stingy! Going up to {new} is a lot, so it might be worth checking the local rules on rent increases.",)),
        ("Renewed the lease and we're paying {new} now instead of {cur}. Could've been worse.",
         ("Glad it could've been worse! Want to rework the budget around {new}?",)),
    ],
    "ask": [
        "How much is my rent now?",
        "What am I paying in rent these days?",
        "Remind me what my monthly rent is?",
        "How much do I pay for rent each month?",
    ],
}

_K["show"] = {
    "pool": "show",
    "events": ("switch", "plan", "done", "cancel", "revert"),
    "init": [
        ("Currently obsessed with {v}. Watched three episodes last night and regret nothing.",
         ("Three episodes of {v} in one night, that's dedication! What's got you hooked?",)),
        ("Rewatching {v} for the fourth time. It's my comfort show.",
         ("Everyone needs a comfort show, and {v} is a solid pick. What keeps pulling you back?",)),
    ],
    "plan": [
        ("Everyone keeps telling me to start {new}. Worth it?",
         ("If everyone's saying it, {new} is probably worth a couple of episodes at least! Give it until episode three before deciding.",)),
        ("Going to start {new} this weekend once I've finished {cur}.",
         ("Nice plan! Finishing {cur} first is very disciplined.",)),
    ],
    "done": [
        ("Okay, everyone was right, I'm hooked on {new}.",
         ("Ha, welcome to the club! What's your favourite thing about {new} so far?",)),
        ("Started {new} and I've barely slept since.",
         ("The {new} sleep deprivation is real! Maybe set an episode limit on work nights.",)),
    ],
    "cancel": [
        ("Tried {new}, couldn't get into it. Back to {cur} for the hundredth time.",
         ("Not every show clicks! Nothing wrong with another round of {cur}.",)),
        ("Gave up on {new} after one episode. It's {cur} on repeat for me.",
         ("One episode is a fair trial! {cur} on repeat sounds very cosy.",)),
    ],
    "switch": [
        ("Finished {cur}, and now {new} has completely taken over my evenings.",
         ("From {cur} to {new}, good taste! Are you bingeing or rationing?",)),
        ("New favourite: {new}. Sorry, {cur}.",
         ("Ha, {cur} will understand! What hooked you on {new}?",)),
    ],
    "revert": [
        ("I'm back on {new}. Nothing else hits the same, especially not {cur}.",
         ("A comeback for {new}! Sometimes the old favourite just wins.",)),
    ],
    "ask": [
        "What show am I hooked on at the moment?",
        "What's my favourite thing to watch right now?",
        "Remind me which series I'm obsessed with?",
        "What am I watching these days?",
    ],
}

_K["language"] = {
    "pool": "language",
    "events": ("switch", "plan", "done", "cancel", "revert"),
    "init": [
        ("Doing my {v} flashcards on the bus every morning, the streak is at 40 days.",
         ("A 40-day streak, nice one! Are you learning {v} for a trip or just for fun?",)),
        ("My {v} teacher says my pronunciation is improving, which is a lie, but a kind one.",
         ("Teachers rarely fib about that! Sounds like your {v} is coming along.",)),
    ],
    "plan": [
        ("I'm tempted to drop {cur} and try {new} instead.",
         ("That's a big switch! What's tempting you about {new}?",)),
        ("Might sign up for {new} evening classes. Still deciding.",
         ("Evening classes are a great way to stay accountable. Any particular reason for picking {new}?",)),
    ],
    "done": [
        ("Started {new} evening classes this week. My brain hurts.",
         ("That's the good kind of brain ache! How was the first {new} class?",)),
        ("Switched my app over to {new}. RIP my {cur} streak.",
         ("A moment's silence for the {cur} streak! Good luck with {new}.",)),
    ],
    "cancel": [
        ("The {new} class got cancelled, not enough people signed up. So it's still {cur} for me.",
         ("That's a shame about the {new} class. At least your {cur} won't get rusty!",)),
        ("Thought about it properly and I'm sticking with {cur}. {new} can wait.",
         ("Depth before breadth, very wise. {new} will still be there later.",)),
    ],
    "switch": [
        ("I've given up on {cur}. Learning {new} now instead.",
         ("Fresh start! What made you choose {new}?",)),
        ("New obsession: {new}. Sorry to my old {cur} tutor.",
         ("Ha, your {cur} tutor will survive! How are you learning {new}?",)),
    ],
    "revert": [
        ("I've picked {new} back up. The {cur} detour was fun while it lasted.",
         ("Welcome back to {new}! You'll probably find more of it stuck than you think.",)),
    ],
    "ask": [
        "Which language am I learning now?",
        "What language am I studying these days?",
        "Remind me what language I'm working on?",
    ],
}

_K["coffee"] = {
    "pool": "coffee",
    "events": ("switch", "plan", "done", "cancel", "revert"),
    "init": [
        ("I need my {v} before I can function as a human in the mornings.",
         ("{An:v} to start the day sounds like a solid ritual. What's on today's list?",)),
        ("The barista now starts making my {v} the second I walk in. Lovely or a cry for help?",
         ("Definitely lovely! Having your {v} ready without asking is peak regular status.",)),
    ],
    "plan": [
        ("Thinking of switching from {cur} to {new} to cut down a bit.",
         ("Makes sense! {An:new} could be a gentle way to ease off.",)),
        ("Tried {an:new} yesterday and I might be a convert.",
         ("Ooh, {an:new} convert in the making! What did you like about it?",)),
    ],
    "done": [
        ("Fully converted. My usual is {an:new} now.",
         ("Welcome to team {new}! Does the barista know yet?",)),
        ("I'm {an:new} person now. The barista had to relearn my order.",
         ("Ha, a whole new identity! Enjoy the {new}.",)),
    ],
    "cancel": [
        ("Tried {an:new} for a week, then went straight back to my {cur}.",
         ("Can't argue with a classic. The {cur} wins again!",)),
        ("Nah, {new} isn't for me. Still {an:cur} person.",
         ("Fair enough, no need to fix what works. Enjoy your {cur}.",)),
    ],
    "switch": [
        ("New coffee order: {an:new}. I've gone right off {cur}, weirdly.",
         ("Tastes change! Enjoy the {new}.",)),
        ("Swapped my {cur} for {an:new}, trying to be a bit healthier.",
         ("Small swaps add up! How are you finding the {new}?",)),
    ],
    "revert": [
        ("I'm back on {new}. Whatever I was doing with {cur} was a phase.",
         ("Ha, we all have phases! Welcome back to {new}.",)),
    ],
    "ask": [
        "What's my usual coffee order these days?",
        "If you were grabbing me a coffee, what would you get?",
        "Remind me how I take my coffee now?",
        "What do I order at the coffee shop?",
    ],
}

CHANGING_KINDS = tuple(_K)
#: pairs of changing kinds that would contradict each other if both were told
_EXCLUSIVE = (("home", "rent"), ("job", "project"))

# -- controls: facts that never change ------------------------------------------------------------

_C: dict[str, dict] = {}
_C["hometown"] = {
    "pool": "city",
    "state": [
        ("I grew up in {v}, so I have very strong opinions about the local chips.",
         ("Growing up in {v} would do that! What makes a chip worthy, in your opinion?",)),
        ("Heading to {v} this weekend to see where I grew up. It's been years.",
         ("A trip back to {v} after years away sounds lovely and a bit strange. Anywhere you want to revisit?",)),
        ("Fun fact: I'm originally from {v}. Nobody ever guesses.",
         ("Ha, {v} born and bred! What do people usually guess instead?",)),
    ],
    "ask": ["Where was I brought up?", "Remind me where I'm originally from?", "Which town did I grow up in?"],
}
_C["pet"] = {
    "pool": "pet",
    "state": [
        ("{v}, our {species}, has decided 5am is breakfast time. Send help.",
         ("Ha, {v} clearly runs the household! Shifting breakfast a few minutes later each day can slowly move the wake-up call.",)),
        ("Took the {species}, {v}, to the vet today. Just a check-up, all fine.",
         ("Glad {v} got a clean bill of health! Was the vet trip dramatic?",)),
        ("My {species} {v} just chewed through my headphone cable. Again.",
         ("Oh no, {v}! Spiral cable wraps might save the next pair.",)),
    ],
    "ask": ["What do I call my {species}?", "Remind me of my {species}'s name?",
         "Do you remember the name of my {species}?"],
}
_C["birthday"] = {
    "pool": "date",
    "state": [
        ("My birthday's on {v} and I still have no plans. Help.",
         ("There's still time to sort something for {v}! Are you in the mood for low-key or a proper party?",)),
        ("Booked {v} off work because it's my birthday. Planning to do absolutely nothing.",
         ("A birthday of doing absolutely nothing sounds perfect. Enjoy {v}!",)),
        ("Getting a year older on {v}, not thrilled about it.",
         ("Another year wiser, though! Anything you'd like to do to mark {v}?",)),
    ],
    "ask": ["Which day is my birthday?", "What date is my birthday, do you remember?", "Remind me when my birthday is?"],
}
_C["allergy"] = {
    "pool": "allergy",
    "state": [
        ("I'm allergic to {v}, so I read every label like it's a contract.",
         ("Label-reading is tiring but worth it. I'll keep your allergy to {v} in mind whenever we talk recipes.",)),
        ("Eating out tonight, which is always a gamble when you're allergic to {v}.",
         ("Ringing ahead to flag the allergy to {v} can make it a lot less stressful. Hope it's a good meal!",)),
    ],
    "ask": ["Which food am I allergic to?", "Remind me what my allergy is?",
         "What food do I have to avoid because of my allergy?"],
}
_C["instrument"] = {
    "pool": "instrument",
    "state": [
        ("Practised the {v} for an hour and the people upstairs started stomping.",
         ("Ha, a captive audience! Maybe agree on practice hours so the {v} doesn't start a feud.",)),
        ("I've played the {v} since I was a kid, but I still can't sight-read to save my life.",
         ("Playing the {v} since childhood is lovely! Sight-reading improves fastest with ten minutes of brand-new music a day.",)),
    ],
    "ask": ["What instrument is it that I play?", "Which instrument did I say I play?",
            "Remind me what I play, music-wise?"],
}
CONTROL_KINDS = tuple(_C)

# -- near-miss distractors: the same kind of fact about someone else ------------------------------

_O: dict[str, dict] = {}
_O["home"] = {
    "pool": "city",
    "say": [
        ("{Who} just moved to {v}, so at least I've got somewhere to crash now.",
         ("A free place to crash in {v} is a great perk! Any plans to visit soon?",)),
        ("{Who} has lived in {v} for years and keeps nagging me to visit.",
         ("Maybe this is the year you finally visit {v}! Want a few ideas for a long weekend?",)),
        ("Spent the weekend helping {who} pack for the move to {v}. My back is ruined.",
         ("Helping with a move is a true act of love. Rest that back, and I hope the move to {v} goes smoothly!",)),
    ],
    "ask": ["Where does my {rel} live?", "Which city is my {rel} in these days?"],
}
_O["job"] = {
    "pool": "job",
    "say": [
        ("{Who} just started a new job as {an:v} and won't stop talking about it.",
         ("Ha, new-job excitement! Being {an:v} must be a big change.",)),
        ("Had dinner with {who} last night. Being {an:v} sounds exhausting, honestly.",
         ("It does sound like a demanding job! Nice that you got to catch up over dinner.",)),
    ],
    "ask": ["What does my {rel} do for work?", "What's my {rel}'s job?"],
}
_O["car"] = {
    "pool": "car",
    "say": [
        ("{Who} bought {an:v} and now offers everyone lifts whether they want one or not.",
         ("Ha, the new-car enthusiasm! Enjoy the free lifts in the {v} while it lasts.",)),
        ("{Who} is lending us their {v} for the weekend, which is very generous.",
         ("That's kind! Returning the {v} with a full tank would be a nice thank-you.",)),
    ],
    "ask": ["What car has my {rel} got now?", "What does my {rel} drive these days?"],
}
_O["phone"] = {
    "pool": "phone",
    "say": [
        ("{Who} just got {an:v} and keeps sending me blurry photos of the moon with it.",
         ("Ha, every new phone owner goes through the moon phase! Has the {v} won them over?",)),
        ("{Who} dropped their {v} in a lake. A whole lake!",
         ("Oh no! A lake is a tough one for {an:v}. Hope it was insured.",)),
    ],
    "ask": ["What phone does my {rel} have?", "Which phone is my {rel} using?"],
}
_O["diet"] = {
    "pool": "diet",
    "say": [
        ("{Who} has gone {v}, so planning the family dinner is going to be fun.",
         ("Family dinners can still work! A build-your-own style meal makes it easy to keep things {v}-friendly.",)),
        ("Cooking for {who} on Friday and they're {v}. Any ideas?",
         ("A big one-pot dish is a safe bet. Want me to suggest a few that work for someone who's {v}?",)),
    ],
    "ask": ["What diet is my {rel} on?", "How does my {rel} eat these days, diet-wise?"],
}
_O["show"] = {
    "pool": "show",
    "say": [
        ("{Who} won't stop quoting {v} at me.",
         ("Ha, the sign of a true fan! Have you watched {v} yourself?",)),
        ("{Who} made me watch two episodes of {v} last night.",
         ("Two episodes in one go! Did {v} win you over?",)),
    ],
    "ask": ["What show is my {rel} obsessed with?", "What's my {rel} watching at the moment?"],
}
_O["language"] = {
    "pool": "language",
    "say": [
        ("{Who} is learning {v} for a work trip.",
         ("Nice! A work trip is a great deadline for learning {v}.",)),
        ("{Who} has started {v} lessons and keeps practising on me.",
         ("Ha, you're the unofficial {v} conversation partner now!",)),
    ],
    "ask": ["What language is my {rel} learning?"],
}
_O["gym"] = {
    "pool": "gym",
    "say": [
        ("{Who} is trying to get me into {v}. Not happening.",
         ("Ha, noted! Not everyone's cut out for {v}, and that's fine.",)),
        ("{Who} has just signed up for {v} and is already sore.",
         ("The first week of {v} is always the hardest! Hope there's some stretching going on.",)),
    ],
    "ask": ["What workout is my {rel} into?", "What kind of exercise does my {rel} do?"],
}
_O["partner"] = {
    "pool": "name",
    "say": [
        ("{Who} just got engaged to someone called {v}. I'm thrilled!",
         ("How exciting, congratulations to them and {v}! Are you expecting a wedding invite soon?",)),
        ("{Who} is bringing their new partner, {v}, to dinner on Sunday. Should be interesting.",
         ("Meeting a new partner is always a bit nerve-racking! Hope Sunday with {v} goes well.",)),
    ],
    "ask": ["What's the name of my {rel}'s partner?", "Who is my {rel} seeing?"],
}
OTHER_ATTRS = tuple(_O)

_REL_NAME_ASK = ["What's my {rel}'s name again?", "Remind me what my {rel} is called?",
                 "Do you remember my {rel}'s name?"]

# -- chat filler ----------------------------------------------------------------------------------

_HELP = [
    ("Can you give me a quick dinner idea? I've got eggs, a bit of spinach and some leftover rice.",
     "Egg fried rice would be perfect. Get the pan really hot, fry the rice first so it crisps a little, push it to one side and scramble the eggs, then stir the spinach through at the end so it just wilts. A splash of soy sauce and you're done in fifteen minutes."),
    ("How long do I boil an egg for a jammy yolk?",
     "About six and a half minutes from when it goes into already-boiling water, then straight into cold water for a minute or two. Go to seven minutes if the eggs are large or fridge-cold."),
    ("Could you draft a short email to my manager asking to swap my Thursday shift for Friday?",
     "Sure, here's a short one:\n\nHi,\n\nWould it be possible to swap my Thursday shift for Friday this week? Something's come up on Thursday, and I'm happy to cover the full Friday shift. Let me know if that works.\n\nThanks!\n\nFeel free to tweak the tone."),
    ("What's a polite way to say no to a wedding invite without offending anyone?",
     "Keep it warm and brief: thank them, say you're sorry you can't make it, and wish them a wonderful day. Something like 'We're so touched to be invited and really sad we can't be there, we'll be raising a glass to you both.' No need to over-explain, and a card goes a long way."),
    ("Any tips for falling asleep when my brain just won't switch off?",
     "A few that help a lot of people: jot down whatever's looping in your head so it feels parked, keep the room cool and dark, and if you're still awake after twenty minutes, get up and do something dull in dim light until you feel sleepy. Keeping the same wake-up time every day helps too."),
    ("How do I get candle wax out of a tablecloth?",
     "Scrape off what you can once it's hard, then lay a paper towel over the spot and press it with a warm iron; the paper soaks up the melted wax. Swap the towel as it fills. Any leftover mark usually comes out in a normal wash."),
    ("What's a houseplant that's basically impossible to kill?",
     "A snake plant or a ZZ plant. Both cope with low light and being forgotten for weeks. Only water when the soil is completely dry, because overwatering is the main way people kill them."),
    ("Explain compound interest to me like I'm very tired.",
     "You earn interest, then next time you earn interest on the original money plus the interest you already got. So the pile grows a little faster each round. Over years that snowball is huge, which is why starting early matters more than starting big."),
    ("We need a name for our pub quiz team. Go.",
     "A few to pick from: 'Let's Get Quizzical', 'The Smarty Pints', 'Agatha Quiztie', 'Universally Challenged' or 'Quizteama Aguilera'. 'The Smarty Pints' always gets a laugh from the quizmaster."),
    ("Is it 'affect' or 'effect' in 'the rain will ___ our plans'?",
     "'Affect'. Affect is usually the verb (to influence something) and effect is usually the noun (the result). So the rain will affect your plans, and the effect might be a soggy picnic."),
    ("What's a good stretch for a stiff lower back? I sit at a desk all day.",
     "Try lying on your back and hugging your knees to your chest for about thirty seconds, then child's pose for another thirty. A gentle seated twist at your desk every hour helps too. If the pain is sharp or shoots down your leg, get it checked."),
    ("Convert 180C to Fahrenheit for me?",
     "180C is about 356F, which most recipes round to 350F."),
    ("How do I remind a friend they owe me money without it being awkward?",
     "Keep it light and specific: 'Hey, no rush, but could you send over the thirty for the tickets when you get a sec?' Naming exactly what it was for makes it feel like admin rather than an accusation."),
    ("What can I bring to a potluck that travels well?",
     "A big grain salad, a tray of brownies or a pasta bake are all safe bets: they're fine at room temperature and don't mind a bumpy journey. Bring a serving spoon, people always forget those."),
    ("Ideas for a cheap day out when it's raining?",
     "Free museums or galleries, a long lunch somewhere cosy, an afternoon at the library, a charity shop crawl, or a board game cafe if you don't mind buying a drink. Cinema matinees are often cheaper too."),
    ("What's the actual difference between stock and broth?",
     "Stock is mostly made from bones and simmered for a long time, so it's richer and a bit gelatinous; broth leans on meat or veg, is lighter and is seasoned to be sipped as it is. In most recipes you can swap one for the other."),
    ("Write me a two-line birthday message for someone at work I barely know.",
     "'Happy birthday! Hope you get a proper break from the inbox today and something delicious with candles on it.' Friendly without being too personal."),
    ("How often should I water a cactus?",
     "Much less than you'd think: every two to four weeks in spring and summer, and hardly at all in winter. Let the soil dry out completely between waterings."),
    ("Write a haiku about Monday mornings, please.",
     "Alarm sings too soon\nthe kettle sighs, keys go missing\nthe week clears its throat"),
    ("Why do onions make you cry?",
     "Cutting an onion breaks its cells and releases a compound that turns into a mild irritant gas when it hits the air; it reaches your eyes and they water to flush it out. A sharp knife and a chilled onion help a lot."),
    ("How do I start a toast at a friend's leaving do without it being cringe?",
     "Open with a short, specific memory rather than a joke you're not sure of, say one thing you'll genuinely miss about them, then raise your glass to whatever's next. Under a minute is perfect."),
    ("Give me a ten-minute workout I can do in the living room.",
     "Do three rounds of: 40 seconds of squats, 40 seconds of push-ups (knees are fine), 40 seconds of glute bridges and 40 seconds of mountain climbers, resting 20 seconds between each. Short, but it'll get your heart going."),
    ("How do I stop my glasses fogging up when I wear a scarf?",
     "Tuck the scarf under the bridge of the glasses rather than over it so your breath goes downwards, and try an anti-fog wipe or a drop of washing-up liquid polished off the lenses. Both make a surprising difference."),
    ("Is it rude to bring shop-bought dessert to a dinner party?",
     "Not at all. Most hosts are just happy not to make pudding themselves. Pop it on a nice plate if you want to make it feel a bit more special."),
    ("Random, but why is the sky red at sunset?",
     "At sunset the light has to travel through much more air to reach you, and the shorter blue wavelengths get scattered away along the route, so the longer reds and oranges are what's left."),
    ("How many bones are in a human hand? Settling an argument.",
     "27 in each hand, counting the eight little wrist bones. Hope you win the argument!"),
    ("Honestly, this week has been a lot.",
     "Sorry it's been a heavy one. Do you want to offload about it, or would a distraction help more right now?"),
    ("Sunny for once, so I'm eating lunch outside like a lizard.",
     "Sounds perfect! Soak it up while it lasts, and maybe a bit of sun cream if you're out for long."),
    ("Do you have a good trick for remembering people's names?",
     "Say the name back straight away ('Nice to meet you, Sam'), use it once more in the conversation, and link it to something vivid about the person. Repetition in the first minute does most of the work."),
    ("What's a decent way to stop procrastinating on a boring task?",
     "Shrink the first step until it's almost silly, like 'open the document and write one line', and set a timer for ten minutes. Starting is the hard part; once you're moving, it's easier to keep going."),
]

_HELP_WHO = [
    ("Can you help me write a thank-you text to {who}? They kept my plants alive for two weeks.",
     ("Of course! Something like: 'Thank you so much for keeping my plants alive while I was away, you're a star. Next round's on me!' Want it more jokey or more heartfelt?",)),
    ("{Who} has a birthday coming up and I have zero gift ideas. Help?",
     ("Experiences are easy wins: tickets to something, a class they'd never book themselves, or a nice dinner out. Tell me a couple of their hobbies and I can get more specific.",)),
    ("I need to apologise to {who} for missing their party. How do I word it?",
     ("Keep it simple and sincere: 'I'm really sorry I missed your party, I hate that I wasn't there. Can I take you out for a drink to make up for it?' Owning it without a long excuse usually lands best.",)),
]

_GREET_USER = {
    "morning": ["Morning!", "morning, got a sec?", "Hi! Early one today."],
    "afternoon": ["Afternoon!", "hey, lunch break chat?"],
    "evening": ["Evening! Got a minute?", "hey, finally sat down for the day"],
    "any": ["hey!", "hi again", "Hello, me again.", "hiya", "hey, you around?", "ok I'm back", "Hi! Quick chat?"],
}
_GREET_ASSISTANT = {
    "morning": ["Good morning! What's on your mind today?", "Morning! Always got a sec. What's up?"],
    "afternoon": ["Good afternoon! Good to hear from you. What's going on?", "Hi! Happy to chat. What's up?"],
    "evening": ["Evening! Of course. How's your day been?", "Hi! Glad you've got a moment to sit down. What's going on?"],
}
_CLOSE = [
    ("Right, that's me done. Cheers!", "Anytime! Take care."),
    ("ok gotta run, thanks for the help", "Glad I could help. Have a good one!"),
    ("Thanks, that's really useful.", "You're welcome! Shout if anything else comes up."),
    ("brb, something's boiling over", "Go, go! I'll be here when you're back."),
    ("That's all for now, thanks!", "Any time. Talk soon!"),
]
_CONNECTORS = ["Oh, also: ", "Anyway, ", "Unrelated, but ", "Other news: ", "Before I forget, "]
_NO_CONNECTOR = ("Okay", "So", "Plot", "Huge", "Yep", "Nope", "Nah", "Well", "fyi", "Update", "Bit",
                 "Life", "Small", "New", "Fun", "Guess", "Career", "Fully", "Officially", "Two")

_Q_WRAP = [
    "Catching up on life admin today. {q}",
    "Help me out here, {ql}",
    "{q} So much has changed lately that I've lost track.",
    "Settle something for me: {ql}",
    "Hey again! {q}",
    "Okay, tell me, {ql}",
    "{q} I keep mixing it up.",
    "{q} Been a hectic few months.",
]

# -- rendering ------------------------------------------------------------------------------------

_SLOT = re.compile(r"\{(?:(an|An):)?(\w+)\}")


def _article(text: str) -> str:
    w = text.split()[0]
    low = w.lower()
    if low.startswith(("one", "uni", "use", "eu", "ux")):
        return "a"
    if w[0].isupper() and len(w) > 1 and (w[:2].isupper() or any(c.isdigit() for c in w)):
        return "an" if w[0] in "AEFHILMNORSX" else "a"
    return "an" if low[0] in "aeiou" else "a"


def _render(tpl: str, fill: dict) -> tuple[str, list[str], list[tuple]]:
    """Fill ``tpl``; ``fill`` maps a slot to (text, [(value string, mention or None), ...])."""
    out: list[str] = []
    values: list[str] = []
    mentions: list[tuple] = []
    pos = 0
    for m in _SLOT.finditer(tpl):
        out.append(tpl[pos:m.start()])
        art, name = m.group(1), m.group(2)
        cap = name == "Who"
        text, parts = fill["who" if cap else name]
        if cap:
            text = text[0].upper() + text[1:]
        if art:
            a = _article(text)
            out.append((a.capitalize() if art == "An" else a) + " ")
        out.append(text)
        for value, mention in parts:
            values.append(value)
            if mention is not None:
                mentions.append(mention)
        pos = m.end()
    out.append(tpl[pos:])
    text = "".join(out)
    return text[0].upper() + text[1:] if tpl.startswith("{") else text, values, mentions


def _lower_first(text: str) -> str:
    first = text.split()[0]
    if first == "I" or first.startswith("I'") or first.isupper():
        return text
    return text[0].lower() + text[1:]


# -- generation -----------------------------------------------------------------------------------


class _UserGen:
    def __init__(self, rng: random.Random, user_id: str):
        self.rng = rng
        self.user_id = user_id
        self.used: list[str] = []  # every alias drawn for this user
        self.mentioned: list[str] = []  # value keys already mentioned in text
        self.currency = rng.choice(_CURRENCY)
        self.term = rng.choice(_TERMS)
        self.species = rng.choice(_SPECIES)
        self.cast: dict[str, _V] = {}
        self.final: dict[str, _V] = {}
        #: (session, index of the user turn) -> [(fact, value key, asserted), ...]
        self._mentions: dict[tuple[int, int], list[tuple]] = {}
        self.seen: list = []  # templates already used for this user

    def pick(self, options: list):
        """A random option, preferring ones this user has not seen yet."""
        fresh = [o for o in options if o not in self.seen]
        choice = self.rng.choice(fresh or options)
        self.seen.append(choice)
        return choice

    # values

    def _free(self, entry: tuple[str, ...]) -> bool:
        return not any(_clash(a, u) for a in entry for u in self.used)

    def _take(self, entry: tuple[str, ...], forms: tuple[str, ...] | None = None) -> _V:
        self.used.extend(entry)
        return _V(entry, forms or entry)

    def draw(self, pool: str) -> _V:
        if pool == "partner":
            pool = {"girlfriend": "name_f", "boyfriend": "name_m"}.get(self.term, "name")
        if pool == "date":
            while True:
                month = self.rng.randrange(12)
                day = self.rng.randint(1, (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)[month])
                entry = _date_aliases(day, _MONTHS[month])
                if self._free(entry):
                    k = self.rng.randrange(len(entry))
                    return self._take(entry, entry[k:] + entry[:k])
        if pool == "rent":
            return self.rent(self.rng.randrange(700, 2000, 25))
        entries = [e for e in _POOLS[pool] if self._free(e)]
        entry = self.rng.choice(entries)
        forms = entry if pool in _SHORT_OK else entry[:1]
        return self._take(entry, forms)

    def rent(self, amount: int) -> _V:
        entry = _money_aliases(amount, self.currency)
        return self._take(entry, entry[:1])

    def next_value(self, kind: str, cur: _V) -> _V:
        if kind == "rent":
            amount = int(cur.aliases[2])
            while True:
                new = amount + self.rng.choice((50, 75, 100, 125, 150, 200, 250))
                if self._free(_money_aliases(new, self.currency)):
                    return self.rent(new)
                amount = new
        return self.draw(_K[kind]["pool"])

    def surface(self, v: _V) -> str:
        if v.key not in self.mentioned:
            self.mentioned.append(v.key)
            return v.forms[0]
        return self.rng.choice(v.forms)

    # slots

    def vslot(self, fact: str, v: _V, asserted: bool):
        """A slot filled lazily (only if a template uses it) with a value that states ``fact``."""

        def make() -> tuple[str, list]:
            s = self.surface(v)
            return s, [(s, (fact, v.key, asserted))]

        return make

    @staticmethod
    def plain(word: str) -> tuple[str, list]:
        return word, [(word, None)]

    def who_slot(self, rel: str):
        return lambda: self.who(rel)

    def who(self, rel: str) -> tuple[str, list]:
        rel_id = rel.replace(" ", "_")
        if rel in _PARENTS:
            return f"my {rel}", [(rel, None)]
        name = self.cast[rel]
        s = self.surface(name)
        mention = (f"{rel_id}.name", name.key, True)
        if self.rng.random() < 0.7:
            return f"my {rel} {s}", [(rel, None), (s, mention)]
        return f"{s} (my {rel})", [(s, mention), (rel, None)]

    # exchanges

    def exchange(self, pair: tuple, fill: dict, connector: bool = True) -> dict:
        utpl, replies = pair
        if isinstance(replies, str):
            replies = (replies,)
        used = _slots_of((utpl,) + tuple(replies))
        fill = {k: (v() if callable(v) else v) for k, v in fill.items() if k in used}
        user, uvals, ments = _render(utpl, fill)
        first = utpl.split()[0].rstrip(":,!")
        if (connector and not utpl.startswith("{") and first not in _NO_CONNECTOR
                and self.rng.random() < 0.25):
            user = self.rng.choice(_CONNECTORS) + _lower_first(user)
        reply, avals, _ = _render(self.rng.choice(replies), fill)
        return {"user": user, "uvals": uvals, "ments": ments, "asst": reply, "avals": avals}

    # the plan

    def pattern(self, kind: str, n_sessions: int) -> list[str]:
        allowed = _K[kind]["events"]
        top = min(n_sessions, 4)
        length = self.rng.choices(range(2, top + 1), weights=[3, 4, 2][: top - 1])[0]
        events = ["init"]
        pending = False
        held = 1
        for step in range(1, length):
            last = step == length - 1
            if pending:
                e = self.rng.choice(["done", "cancel"])
                pending = False
            else:
                opts, weights = ["switch"], [4]
                if not last and "plan" in allowed:
                    opts.append("plan")
                    weights.append(5)
                if held >= 2 and "revert" in allowed and events[-1] != "revert":
                    opts.append("revert")
                    weights.append(3)
                e = self.rng.choices(opts, weights=weights)[0]
                pending = e == "plan"
            if e in ("switch", "done"):
                held += 1
            events.append(e)
        return events

    def build(self) -> User:
        rng = self.rng
        n_sessions = rng.randint(MIN_SESSIONS, MAX_SESSIONS)
        # which facts this user has
        kinds = list(CHANGING_KINDS)
        rng.shuffle(kinds)
        chosen: list[str] = []
        want = rng.randint(6, 7)
        for k in kinds:
            if len(chosen) == want:
                break
            if any(k in pair and (pair[0] in chosen or pair[1] in chosen) for pair in _EXCLUSIVE):
                continue
            chosen.append(k)
        controls = rng.sample(list(CONTROL_KINDS), 3)
        rels = rng.sample(list(_NAMED_RELS), 3)
        self.cast = {rel: self.draw(_REL_POOL.get(rel, "name")) for rel in rels}
        for rel, name in self.cast.items():
            self.final[f"{rel.replace(' ', '_')}.name"] = name
        people = rels + list(_PARENTS)

        sessions: list[list[dict]] = [[] for _ in range(n_sessions)]

        # changing facts
        for kind in chosen:
            spec = _K[kind]
            events = self.pattern(kind, n_sessions)
            slots = sorted(rng.sample(range(n_sessions), len(events)))
            cur = self.draw(spec["pool"])
            pending = None
            history = [cur]
            for event, s in zip(events, slots, strict=True):
                pair = self.pick(spec[event])
                fill = {"term": self.plain(self.term)}
                if event == "init":
                    fill["v"] = self.vslot(kind, cur, True)
                elif event == "plan":
                    pending = self.next_value(kind, cur)
                    fill["new"] = self.vslot(kind, pending, False)
                    fill["cur"] = self.vslot(kind, cur, True)
                elif event in ("done", "switch", "revert"):
                    if event == "done":
                        new = pending
                    elif event == "switch":
                        new = self.next_value(kind, cur)
                    else:
                        new = rng.choice([v for v in history if v.key != cur.key])
                    fill["new"] = self.vslot(kind, new, True)
                    fill["cur"] = self.vslot(kind, cur, False)
                    cur = new
                    if all(v.key != new.key for v in history):
                        history.append(new)
                else:  # cancel
                    fill["new"] = self.vslot(kind, pending, False)
                    fill["cur"] = self.vslot(kind, cur, True)
                sessions[s].append(self.exchange(pair, fill))
            self.final[kind] = cur

        # controls, sometimes mentioned twice
        for kind in controls:
            spec = _C[kind]
            fact = f"{self.species}.name" if kind == "pet" else kind
            v = self.draw(spec["pool"])
            self.final[fact] = v
            times = 2 if rng.random() < 0.3 and n_sessions > 1 else 1
            for s in sorted(rng.sample(range(n_sessions), times)):
                pair = self.pick(spec["state"])
                fill = {"v": self.vslot(fact, v, True), "species": self.plain(self.species)}
                sessions[s].append(self.exchange(pair, fill))

        # distractors about other people
        user_attrs = [a for a in OTHER_ATTRS if a in chosen]
        other_attrs = [a for a in OTHER_ATTRS if a not in chosen]
        done_pairs: list[str] = []
        for _ in range(rng.randint(3, 5)):
            for _try in range(20):
                near = user_attrs and (rng.random() < 0.55 or not other_attrs)
                attr = rng.choice(user_attrs if near else other_attrs)
                rel = rng.choice(people)
                fact = f"{rel.replace(' ', '_')}.{attr}"
                if fact not in done_pairs and not (rel in _PARENTS and attr == "partner"):
                    break
            else:
                continue
            done_pairs.append(fact)
            v = self.draw(_O[attr]["pool"])
            self.final[fact] = v
            pair = self.pick(_O[attr]["say"])
            fill = {"v": self.vslot(fact, v, True), "who": self.who_slot(rel)}
            sessions[rng.randrange(n_sessions)].append(self.exchange(pair, fill))

        # help requests, small talk
        helps = list(_HELP)
        rng.shuffle(helps)
        for s in range(n_sessions):
            for _ in range(rng.randint(1, 2)):
                sessions[s].append(self.exchange(helps.pop(), {}, connector=False))
            while len(sessions[s]) < 4:
                sessions[s].append(self.exchange(helps.pop(), {}, connector=False))
        for _ in range(rng.randint(0, 2)):
            pair = self.pick(_HELP_WHO)
            fill = {"who": self.who_slot(rng.choice(rels))}
            sessions[rng.randrange(n_sessions)].append(self.exchange(pair, fill, connector=False))

        turns = self.lay_out(sessions)
        questions = self.questions(turns, chosen, controls, people)
        return User(self.user_id, turns, questions)

    def lay_out(self, sessions: list[list[dict]]) -> list[Turn]:
        rng = self.rng
        turns: list[Turn] = []
        when = datetime(2023, 1, 1) + timedelta(days=rng.randint(0, 600))
        for s, exchanges in enumerate(sessions, start=1):
            if s > 1:
                when = when.replace(hour=0, minute=0) + timedelta(days=rng.randint(3, 40))
            when = when.replace(hour=rng.randint(7, 22), minute=rng.randint(0, 59))
            period = "morning" if when.hour < 12 else "afternoon" if when.hour < 18 else "evening"
            rng.shuffle(exchanges)
            greet = self.pick(_GREET_USER[period] + _GREET_USER["any"])
            items = [{"user": greet, "uvals": [], "ments": [], "asst": self.pick(_GREET_ASSISTANT[period]), "avals": []}]
            items += exchanges
            if rng.random() < 0.75:
                u, a = self.pick(_CLOSE)
                items.append({"user": u, "uvals": [], "ments": [], "asst": a, "avals": []})
            clock = when
            for i, item in enumerate(items):
                stamp = clock.strftime("%Y-%m-%dT%H:%M")
                facts = tuple(dict.fromkeys(m[0] for m in item["ments"]))
                turns.append(Turn("user", item["user"], s, stamp, 2 * i, facts, tuple(item["uvals"])))
                turns.append(Turn("assistant", item["asst"], s, stamp, 2 * i + 1, (), tuple(item["avals"])))
                self._mentions[(s, 2 * i)] = item["ments"]
                clock += timedelta(minutes=rng.randint(1, 3))
        return turns

    # questions

    def _text(self, tpl: str, fill: dict) -> tuple[str, tuple[str, ...]]:
        text, values, _ = _render(tpl, fill)
        wrap = "{q}" if self.rng.random() < 0.45 else self.pick(_Q_WRAP)
        return wrap.format(q=text, ql=_lower_first(text)), tuple(values)

    def _rel_fill(self, rel: str, allow_name: bool) -> dict:
        if allow_name and rel in self.cast and self.rng.random() < 0.4:
            s = self.surface(self.cast[rel])
            return {"rel": (f"{rel} {s}", [(rel, None), (s, None)])}
        return {"rel": self.plain(rel)}

    def questions(self, turns: list[Turn], chosen: list[str], controls: list[str],
                  people: list[str]) -> list[Question]:
        rng = self.rng
        stated = [m[0] for ments in self._mentions.values() for m in ments]
        # (fact, template list, fill) for every memory question candidate
        memory: list[tuple[str, list[str], dict]] = []
        for kind in chosen:
            memory.append((kind, _K[kind]["ask"], {"term": self.plain(self.term)}))
        for kind in controls:
            fact = f"{self.species}.name" if kind == "pet" else kind
            memory.append((fact, _C[kind]["ask"], {"species": self.plain(self.species)}))
        others = [f for f in self.final if "." in f and f.split(".")[1] in _O]
        mentioned_rels = [r for r in people if any(f.startswith(r.replace(" ", "_") + ".") for f in stated)]
        if others:
            fact = rng.choice(others)
            rel = _rel_of(fact)
            memory.append((fact, _O[fact.split(".")[1]]["ask"], self._rel_fill(rel, True)))
        named = [r for r in mentioned_rels if r in self.cast]
        if named:
            rel = rng.choice(named)
            memory.append((f"{rel.replace(' ', '_')}.name", _REL_NAME_ASK, self._rel_fill(rel, False)))
        extra = sorted(chosen, key=lambda k: -len(self._fact_keys(k)))
        i = 0
        n_memory = QUESTIONS_PER_USER - UNANSWERABLE_PER_USER
        while len(memory) < n_memory:
            kind = extra[i % len(extra)]
            memory.append((kind, _K[kind]["ask"], {"term": self.plain(self.term)}))
            i += 1
        memory = memory[:n_memory]

        out: list[tuple[str, str, str, tuple, tuple, tuple, tuple]] = []
        asked: dict[str, list[str]] = {}
        for fact, templates, fill in memory:
            free = [t for t in templates if t not in asked.get(fact, [])] or templates
            tpl = rng.choice(free)
            asked.setdefault(fact, []).append(tpl)
            text, values = self._text(tpl, fill)
            final = self.final[fact]
            stale: list[str] = []
            for key in self._fact_keys(fact):
                if key != final.key:
                    stale.extend(aliases(key))
            evidence = tuple(pos for pos, ments in self._mentions.items()
                             if (fact, final.key, True) in ments)
            out.append(("memory", fact, text, final.aliases, tuple(stale), evidence, values))

        for fact, tpl, fill in self.unanswerable(stated, chosen, controls, people, mentioned_rels):
            text, values = self._text(tpl, fill)
            out.append(("unanswerable", fact, text, (), (), (), values))

        rng.shuffle(out)
        return [Question(key=f"{self.user_id}-q{i:02d}", user_id=self.user_id, fact=fact, text=text,
                         kind=kind, answers=answers, stale=stale, evidence=evidence, values=values)
                for i, (kind, fact, text, answers, stale, evidence, values) in enumerate(out)]

    def _fact_keys(self, fact: str) -> list[str]:
        keys: list[str] = []
        for ments in self._mentions.values():
            for f, key, _ in ments:
                if f == fact and key not in keys:
                    keys.append(key)
        return keys

    def unanswerable(self, stated, chosen, controls, people, mentioned_rels):
        rng = self.rng
        groups: dict[str, list[tuple[str, str, dict]]] = {"other": [], "name": [], "self": [], "ctrl": []}
        # another attribute of someone who was mentioned
        for rel in mentioned_rels:
            rid = rel.replace(" ", "_")
            for attr in OTHER_ATTRS:
                fact = f"{rid}.{attr}"
                if fact not in stated and not (rel in _PARENTS and attr == "partner"):
                    tpl = rng.choice(_O[attr]["ask"])
                    groups["other"].append((fact, tpl, self._rel_fill(rel, True)))
        # the name of a relation next to one that was mentioned, or of a parent
        for rel in mentioned_rels:
            near = _REL_PAIR.get(rel, rel)  # a parent's name is never told
            if near not in mentioned_rels or near in _PARENTS:
                groups["name"].append((f"{near.replace(' ', '_')}.name", rng.choice(_REL_NAME_ASK),
                                       {"rel": self.plain(near)}))
        # the user's own facts never told
        near_kinds = [f.split(".")[1] for f in stated if "." in f]
        for kind in CHANGING_KINDS:
            if kind not in chosen:
                tpl = rng.choice(_K[kind]["ask"])
                entry = (kind, tpl, {"term": self.plain(self.term)})
                groups["self"].append(entry)
                if kind in near_kinds:  # a distractor of the same kind: weigh it up
                    groups["self"].extend([entry, entry])
        for kind in CONTROL_KINDS:
            if kind == "pet":
                species = rng.choice([s for s in _SPECIES if s != self.species])
                if kind in controls or rng.random() < 0.5:
                    groups["ctrl"].append((f"{species}.name", rng.choice(_C["pet"]["ask"]),
                                           {"species": self.plain(species)}))
            elif kind not in controls:
                groups["ctrl"].append((kind, rng.choice(_C[kind]["ask"]), {}))
        picked: list[tuple[str, str, dict]] = []
        order = ["other", "name", "self", rng.choice(["ctrl", "other", "self"])]
        for g in order + ["ctrl", "other", "self", "name"]:
            if len(picked) == UNANSWERABLE_PER_USER:
                break
            options = [c for c in groups[g] if c[0] not in [p[0] for p in picked]]
            if options:
                picked.append(rng.choice(options))
        return picked


def _rel_of(fact: str) -> str:
    return fact.split(".")[0].replace("_", " ")


def _slots_of(templates: tuple[str, ...]) -> list[str]:
    """The slot names that ``templates`` use."""
    used: list[str] = []
    for tpl in templates:
        for m in _SLOT.finditer(tpl):
            name = "who" if m.group(2) == "Who" else m.group(2)
            if name not in used:
                used.append(name)
    return used


def generate(seed: int, users: int = 5) -> list[User]:
    """``users`` users, each with 3-5 sessions and ``QUESTIONS_PER_USER`` questions."""
    master = random.Random(seed)
    out = []
    for n in range(users):
        rng = random.Random(master.getrandbits(64))
        out.append(_UserGen(rng, f"changes-{seed}-{n:02d}").build())
    return out

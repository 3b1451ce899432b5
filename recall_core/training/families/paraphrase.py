"""Paraphrase family: a fact is stated one way and asked about in quite different words.

The user mentions things in passing, idiomatically ("our little one, Hana, started
kindergarten", "I spend most Saturdays restoring old motorbikes"), and the later question uses
other words for the same thing ("what's my daughter called?", "what do I get up to on my days
off?"). Near-miss distractors about other people deliberately reuse the question's own words
("my sister's daughter Priya ..."), so plain keyword overlap points to the wrong turn.
Some facts change later (new job, a move, a new car); the earlier value is then stale.

Standard library only; deterministic for a seed.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache
from string import Formatter

from recall_core.training.families.base import Question, Turn, User, normal

NAME = "paraphrase"
DESCRIPTION = (
    "Facts said idiomatically in passing, asked later in different words; distractors about "
    "other people share the question's keywords."
)

#: Questions per user: this many memory questions and this many unanswerable ones.
MEMORY_PER_USER = 16
UNANSWERABLE_PER_USER = 4
#: Sessions per user (inclusive range).
MIN_SESSIONS, MAX_SESSIONS = 3, 5


# -- fact catalogue ------------------------------------------------------------------------------


def P(inserted: str, *aliases: str) -> tuple[str, tuple[str, ...]]:
    """A pool entry: the text put into a sentence and every acceptable way to name it."""
    return inserted, (inserted, *aliases)


@dataclass(frozen=True)
class Slot:
    """One fact about the user: its id, possible values and the ways it is asked about."""

    fid: str
    pool: tuple[tuple[str, tuple[str, ...]], ...]
    asks: tuple[str, ...]
    open_ok: bool = True  # may be asked as an unanswerable question when never stated
    blocked_by: tuple[str, ...] = ()  # spec names whose presence would make it answerable


@dataclass(frozen=True)
class Spec:
    """A topic: one or two slots (placeholders ``v`` and ``w``), how the user says it, how
    someone else's version is mentioned (``others``) and, optionally, how it changes."""

    name: str
    slots: tuple[Slot, ...]
    says: tuple[tuple[str, tuple[str, ...]], ...]
    others: tuple[tuple[str, tuple[str, ...]], ...]
    moves: tuple[tuple[str, tuple[str, ...]], ...] = ()
    excludes: tuple[str, ...] = ()


GIRLS = ("Hana", "Ines", "Maren", "Zofia", "Amaya", "Ottilie", "Rosalind", "Noor", "Elodie",
         "Signe", "Anouk", "Leonie", "Thea", "Wren")
BOYS = ("Teodor", "Rafferty", "Idris", "Caspian", "Mateo", "Finlay", "Oisin", "Soren", "Kofi",
        "Laszlo", "Emeric", "Benedek")
PARTNERS = ("Robin", "Sasha", "Jules", "Ari", "Remy", "Dana", "Rowan", "Quinn", "Emery", "Reese",
            "Alexis", "Noa")
SISTERS = ("Greta", "Marisol", "Ffion", "Priya", "Annika", "Delphine", "Beatrix", "Saoirse",
           "Yasmin", "Lotte")
BROTHERS = ("Tobias", "Declan", "Anselm", "Ravi", "Hamish", "Bastian", "Cormac", "Joaquin",
            "Stellan", "Ewan")
PET_NAMES = ("Biscuit", "Pickle", "Mochi", "Bramble", "Nugget", "Waffles", "Clementine", "Ziggy",
             "Dumpling", "Crumpet", "Marmalade", "Noodle")
CITIES = ("Galway", "Porto", "Dundee", "Ghent", "Trieste", "Bergen", "Hobart", "Leipzig",
          "Tampere", "Halifax", "Bilbao", "Lyon", "Aarhus", "Wellington", "Gothenburg", "Utrecht",
          "Bratislava", "Tallinn")

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December")
ORDINAL_WORDS = ("zeroth", "first", "second", "third", "fourth", "fifth", "sixth", "seventh",
                 "eighth", "ninth", "tenth", "eleventh", "twelfth", "thirteenth", "fourteenth",
                 "fifteenth")


def _suffix(n: int) -> str:
    if 10 <= n % 100 <= 20:
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


def _dates() -> tuple[tuple[str, tuple[str, ...]], ...]:
    out = []
    k = 0
    for m in range(12):
        for d in range(1, 29, 3):
            month, nth = MONTHS[m], f"{d}{_suffix(d)}"
            forms = (f"{d} {month}", f"{month} {d}", f"{nth} of {month}", f"{month} {nth}",
                     f"{nth} {month}")
            out.append((forms[k % 4], forms))
            k += 1
    return tuple(out)


def _floors() -> tuple[tuple[str, tuple[str, ...]], ...]:
    out = []
    for n in range(4, 16):
        nth = f"{n}{_suffix(n)}"
        forms = (nth, ORDINAL_WORDS[n], str(n))
        out.append((ORDINAL_WORDS[n] if n % 2 else nth, forms))
    return tuple(out)


SPECS: tuple[Spec, ...] = (
    Spec(
        "pastime",
        (Slot("weekend_pastime", (
            P("restoring old motorbikes", "motorbikes", "motorbike", "motorcycles"),
            P("bouldering", "climbing"),
            P("throwing pots at the community studio", "pottery", "pots", "ceramics"),
            P("birdwatching on the estuary", "birdwatching", "birding"),
            P("fly fishing", "fishing"),
            P("building model railways", "model railways", "model railway", "model trains"),
            P("metal detecting", "metal detector"),
            P("geocaching"),
            P("woodcarving", "wood carving", "carving"),
            P("orienteering"),
        ), (
            "What do I get up to on my days off?",
            "Remind me what my weekend pastime is?",
            "Do you remember what I like doing when I'm not working?",
            "How do I usually unwind at weekends?",
        ), open_ok=False),),
        (
            ("I spend most Saturdays {v}. It's the only thing that properly switches my brain off.",
             ("{V}, what a brilliant way to switch off! How did you first get into it?",
              "A Saturday spent {v} sounds like the perfect reset. Do you go solo or with a crowd?")),
            ("Saturday mornings are sacred: phone off, flask of tea, {v}. Nothing beats it.",
             ("Phone off, flask of tea and {v}, that's a proper ritual. What's the best bit for you?",)),
            ("Confession: I've turned into one of those people who won't shut up about {v}. "
             "Every Saturday, without fail.",
             ("Ha, there are worse things to be evangelical about than {v}! What hooked you?",)),
        ),
        (
            ("My boss spends all her days off {v}, apparently. I just nod and smile.",
             ("Nodding and smiling is a valid strategy! Has she tried to recruit you into {v} yet?",)),
            ("My flatmate's new weekend obsession is {v}. The hallway is full of gear.",
             ("A hallway full of gear is the classic sign of a new passion! Is it getting in the way?",)),
            ("My dad says the only way he can unwind is {v}. Mum says it's the only way he can avoid chores.",
             ("Ha, both can be true! {V} does sound relaxing, chores or no chores.",)),
        ),
    ),
    Spec(
        "daughter",
        (Slot("daughter_name", tuple(P(n) for n in GIRLS), (
            "What name does my daughter answer to?",
            "Remind me of my daughter's name?",
            "Do you remember what my daughter's name is?",
            "What did we name our girl?",
        )),),
        (
            ("Big week here: our little one, {v}, started kindergarten on Monday and didn't even "
             "look back at the gate.",
             ("Didn't even look back, {v} sounds brave! How are you holding up after the first week "
              "of kindergarten?",)),
            ("My youngest, {v}, has announced she's a dinosaur now and will only answer to roars. "
             "Four-year-olds are something else.",
             ("A dinosaur! {v} clearly has excellent taste. Has she picked a species yet?",)),
            ("Had to leave early today: {v} lost her first tooth at nursery and was inconsolable "
             "until I mentioned the tooth fairy.",
             ("Poor {v}! The tooth fairy is a powerful negotiator. Is the tooth going under the pillow tonight?",)),
        ),
        (
            ("My sister's daughter {v} just got into vet school, the whole family is buzzing.",
             ("Vet school, that's fantastic news for {v}! Your sister must be so proud.",)),
            ("Our neighbours' daughter, {v}, babysits for half the street. She's booked up till Christmas.",
             ("Booked up till Christmas, {v} is clearly in demand! Lucky street.",)),
            ("A colleague's daughter, {v}, is doing a sponsored swim and I've been guilted into donating.",
             ("Guilted or not, it's for a good cause! Good luck to {v}.",)),
        ),
    ),
    Spec(
        "son",
        (Slot("son_name", tuple(P(n) for n in BOYS), (
            "What name does my son answer to?",
            "Remind me what my son's name is?",
            "Do you remember my boy's name?",
            "What's the name of my son?",
        )),),
        (
            ("My eldest, {v}, passed his driving test first time. I'm equal parts proud and terrified.",
             ("First time, well done {v}! Has he asked to borrow the keys yet?",)),
            ("Parents' evening tonight. {v}'s form tutor says he's 'a delight but chatty'. No idea "
             "where he gets that from.",
             ("'A delight but chatty' is a pretty lovely report! How did {v} take it?",)),
            ("Our lad {v} has discovered skateboarding and I've discovered the price of helmets.",
             ("Skateboarding and helmets go hand in hand! Is {v} practising at a skatepark?",)),
        ),
        (
            ("My cousin's son {v} is staying with us this weekend and he eats like a horse.",
             ("Teenage appetites are no joke! Stock up on snacks before {v} arrives.",)),
            ("Our neighbours' son, {v}, mows our lawn for a fiver. Absolute bargain.",
             ("A fiver for a mown lawn is a steal! {v} sounds like a budding entrepreneur.",)),
        ),
    ),
    Spec(
        "partner",
        (Slot("partner_name", tuple(P(n) for n in PARTNERS), (
            "What's the name of the love of my life?",
            "Who am I in a relationship with?",
            "Do you remember my partner's name?",
            "Remind me what my sweetheart is called?",
        )),),
        (
            ("My other half, {v}, has booked us a surprise getaway. I've been told to pack wellies, "
             "which is ominous.",
             ("Wellies is a very mysterious clue! Any guesses what {v} has planned?",)),
            ("Ten years with {v} next month and we still can't agree on how to load a dishwasher.",
             ("Ten years, congratulations! The dishwasher debate may be eternal. Are you and {v} "
              "doing anything to celebrate?",)),
        ),
        (
            ("My best mate's partner, {v}, keeps feeding us leftovers from the restaurant.",
             ("Free restaurant leftovers are the best kind of friendship perk! What has {v} brought round?",)),
            ("Had dinner with my boss and her partner {v}, who talked about cryptocurrency for two hours.",
             ("Two hours of crypto is an endurance event! Did {v} at least pick up the bill?",)),
        ),
    ),
    Spec(
        "sister",
        (Slot("sister_name", tuple(P(n) for n in SISTERS), (
            "What name does my sister answer to?",
            "Remind me of my sister's name?",
            "Can you recall what my sister's name is?",
        )),),
        (
            ("My big sis {v} is getting married in the spring and somehow I'm in charge of the speech.",
             ("A speech for {v}'s wedding, what an honour (and a bit of pressure)! Want help with an outline?",)),
            ("{v} and I still aren't speaking. She borrowed my tent and returned it full of sand. Siblings, eh?",
             ("A sandy tent is a classic sibling crime! Do you think {v} will own up?",)),
        ),
        (
            ("My flatmate's sister {v} is crashing on our sofa all week.",
             ("A week on the sofa is a long stay! Is {v} at least doing the washing up?",)),
            ("My colleague's sister, {v}, does stand-up and we're all going to her gig on Friday.",
             ("A stand-up gig sounds like a great night out! I hope {v} brings the house down.",)),
        ),
    ),
    Spec(
        "brother",
        (Slot("brother_name", tuple(P(n) for n in BROTHERS), (
            "What name does my brother answer to?",
            "Remind me what my brother's name is?",
            "Can you recall my brother's name?",
        )),),
        (
            ("My little bro {v} just moved back in with Mum and Dad, aged thirty-one. The jokes write themselves.",
             ("Ha, thirty-one and back with Mum and Dad! How is {v} taking the teasing?",)),
            ("{v} rang me at midnight to ask how to cook pasta. He's thirty-four. I fear for him.",
             ("A midnight pasta emergency! At least {v} knows who to call.",)),
        ),
        (
            ("My mate's brother, {v}, fixed my laptop for a pint. Legend.",
             ("A laptop repair for a pint is a fantastic deal. {v} deserves a second one!",)),
            ("My partner's brother {v} is coming for Christmas and bringing his drum kit.",
             ("A drum kit at Christmas is a bold move! Maybe {v} can be persuaded to play quietly.",)),
        ),
    ),
    Spec(
        "pet",
        (
            Slot("pet_kind", (
                P("greyhound", "dog"), P("whippet", "dog"), P("beagle", "dog"), P("ferret"),
                P("tortoise"), P("cockatiel", "bird", "parrot"), P("rabbit", "bunny"),
                P("guinea pig"), P("Maine Coon", "cat"), P("bearded dragon", "lizard"),
            ), (
                "What kind of animal do I keep?",
                "Remind me what species my pet is?",
                "Do you remember what type of animal lives with me?",
            )),
            Slot("pet_name", tuple(P(n) for n in PET_NAMES), (
                "What name does my pet answer to?",
                "Remind me of my pet's name?",
                "Do you remember what my pet is called?",
            )),
        ),
        (
            ("We finally caved and brought home a rescue {v}! {w} has been with us four days and "
             "already rules the household.",
             ("A rescue {v}, how lovely! How is {w} settling in?",)),
            ("Vet bill today for {w}, our {v}. Apparently 'eats everything' is not a personality trait.",
             ("Oh no, poor {w}! Did the vet have any tips for keeping {a_v} out of trouble?",)),
            ("Working from the sofa today with {w} the {v} snoozing next to me. Productivity: questionable.",
             ("Honestly, a snoozing {v} is the best kind of office mate. Give {w} a scratch from me!",)),
        ),
        (
            ("My neighbour's pet {v}, {w}, keeps escaping into our garden and eating the lettuce.",
             ("Ha, {w} sounds like a determined escape artist! Maybe a word with the neighbour about the fence?",)),
            ("I'm pet-sitting a friend's {v} called {w} this week. Chaos.",
             ("Pet-sitting {a_v} sounds like an adventure! What has {w} got up to so far?",)),
        ),
    ),
    Spec(
        "job",
        (Slot("job", (
            P("paramedic"), P("locksmith"), P("midwife"), P("tree surgeon", "arborist"),
            P("translator"), P("pastry chef"), P("sound engineer", "audio engineer"),
            P("dental hygienist", "hygienist"), P("air traffic controller", "air traffic control"),
            P("physiotherapist", "physio"), P("optician"), P("court stenographer", "stenographer"),
            P("plumber"),
        ), (
            "What do I do to pay the bills?",
            "Remind me how I earn my wage?",
            "What's my occupation?",
            "Do you remember my profession?",
        ), blocked_by=("employer",)),),
        (
            ("Twelve-hour shift done and I can't feel my feet. Being {a_v} is not for the faint-hearted.",
             ("Twelve hours on your feet, you've earned a sit-down! Being {a_v} must take it out of "
              "you. What was the hardest bit today?",)),
            ("Nine years as {a_v} and people still ask me for freebies at parties.",
             ("Nine years as {a_v}, that's serious experience! What's the strangest thing anyone's "
              "asked you at a party?",)),
            ("Everyone assumes being {a_v} is glamorous. It's mostly paperwork and cold tea.",
             ("Paperwork and cold tea, the unglamorous truth! What's the part of being {a_v} you "
              "actually enjoy?",)),
        ),
        (
            ("My dad's job is ridiculous: he's {a_v} and somehow always done by three.",
             ("Done by three sounds like the dream! Being {a_v} clearly has its perks.",)),
            ("My cousin just qualified as {a_v}, so the family group chat is unbearable.",
             ("Ha, a proud family chat is a lot! Qualifying as {a_v} is a big deal though.",)),
        ),
        (
            ("Big news: I handed in my notice! As of Monday I'm {a_v}. Terrified but excited.",
             ("Congratulations, that's a huge step! How are you feeling about starting as {a_v}?",)),
            ("Officially done with being {a_old}. My first week as {a_v} starts tomorrow, wish me luck!",
             ("Good luck! Going from {old} to {v} is a big change. What made you take the leap?",)),
        ),
        excludes=("employer",),
    ),
    Spec(
        "employer",
        (Slot("employer", (
            P("Hollowbrook Logistics", "Hollowbrook"), P("Quillfeather Press", "Quillfeather"),
            P("Brightmoor Analytics", "Brightmoor"), P("Tarn & Vale", "Tarn and Vale"),
            P("Saltmarsh Games", "Saltmarsh"), P("Orrin Biotech", "Orrin"),
            P("Kestrel Freight", "Kestrel"), P("Pennyworth Insurance", "Pennyworth"),
            P("Fernhollow Studios", "Fernhollow"), P("Corvid Robotics", "Corvid"),
        ), (
            "Who do I work for?",
            "Remind me which company employs me?",
            "What's the name of my employer?",
        ), blocked_by=("job",)),),
        (
            ("Payday at {v} at last, and they've 'restructured' the canteen into one vending machine.",
             ("Payday is always welcome, even if the {v} canteen isn't! Anything decent in the vending machine?",)),
            ("Six years at {v} now and they still spell my surname wrong on my badge.",
             ("Six years and still misspelled, that's impressive in the wrong way! Have you told "
              "anyone at {v}?",)),
        ),
        (
            ("My best mate just got headhunted by {v}. The company's offering her nearly double.",
             ("Nearly double is a serious offer! Is she tempted to go to {v}?",)),
            ("A recruiter keeps trying to get me to work for {v} and I can't be bothered to reply.",
             ("A polite 'not right now' usually stops them. Want me to draft one for the {v} recruiter?",)),
        ),
        excludes=("job",),
    ),
    Spec(
        "city",
        (Slot("home_city", tuple(P(c) for c in CITIES), (
            "Which city do I call home?",
            "Where am I based these days?",
            "Do you remember where I live?",
        )),),
        (
            ("Three years in {v} now and I still get lost walking back from the station.",
             ("Three years and {v} still has surprises for you! Got a favourite corner yet?",)),
            ("Rent in {v} has gone up again, and our landlord still calls the damp 'character'.",
             ("'Character' is a generous word for damp! Is rent in {v} getting hard to manage?",)),
        ),
        (
            ("My parents still live in {v} and refuse to visit us because of the traffic.",
             ("Ha, traffic is a classic excuse! Maybe meet them halfway, or head to {v} yourself?",)),
            ("Half my team is based in {v}, so every meeting starts with a weather report.",
             ("A weather report from {v} is a pretty gentle icebreaker!",)),
        ),
        (
            ("The removal van has been and gone: we're officially in {v} now! Boxes everywhere.",
             ("Welcome to {v}! Unpacking is a marathon, so start with the kettle.",)),
            ("Goodbye {old}, hello {v}! First night in the new flat and I've no idea where the kettle is.",
             ("Hello {v}! The kettle is always in the last box you open. How does the new place feel?",)),
        ),
    ),
    Spec(
        "hometown",
        (Slot("hometown", tuple(P(c) for c in CITIES), (
            "Where am I originally from?",
            "What town was I raised in?",
            "Do you remember where I spent my childhood?",
        )),),
        (
            ("I grew up in {v}, so anything above ten degrees feels like a heatwave to me.",
             ("Ha, growing up in {v} would calibrate anyone's thermostat! Do you get back there much?",)),
            ("Went back to {v} for the first time since school. The chippy by the harbour is still there!",
             ("Going back to {v} after all that time must have been surreal. Did the chips live up to it?",)),
        ),
        (
            ("My boss was raised in {v} and never lets anyone forget it.",
             ("Some people carry their hometown like a badge! Does your boss bring up {v} in every meeting?",)),
            ("My partner's originally from {v}, so Christmas there is non-negotiable.",
             ("Christmas in {v} sounds rather lovely, non-negotiable or not!",)),
        ),
    ),
    Spec(
        "diet",
        (Slot("diet", (
            P("vegetarian", "meat"), P("vegan", "animal products", "dairy"),
            P("pescatarian", "meat"),
        ), (
            "What don't I eat?",
            "Is there anything I avoid food-wise?",
            "Remind me of my dietary restriction before you suggest a recipe?",
        ), blocked_by=("allergy",)),),
        (
            ("I've been {v} since uni, so work barbecues are always a bit of a lottery for me.",
             ("Being {v} at a barbecue can mean slim pickings! Want a couple of ideas you could bring along?",)),
            ("Went {v} about six years ago and honestly never looked back.",
             ("Six years {v}, that's a real commitment! Have you got a favourite go-to dinner?",)),
            ("Dinner party at mine on Friday. Being {v}, I'm just cooking what I'd have anyway, "
             "hope nobody minds.",
             ("Cooking what you'd have anyway is the smartest way to host! What's on the {v} menu?",)),
        ),
        (
            ("My dad's gone {v} at seventy-two and thinks he invented it.",
             ("Ha, good for him, going {v} at seventy-two! Is he converting the rest of the family?",)),
            ("My flatmate doesn't eat half of what I cook because she's {v} now.",
             ("Cooking for someone who's {v} can be a fun challenge! Want some recipes that suit you both?",)),
        ),
    ),
    Spec(
        "allergy",
        (Slot("allergy", (
            P("cashews", "cashew"), P("shellfish"), P("sesame"), P("kiwi", "kiwis", "kiwi fruit"),
            P("peanuts", "peanut"), P("mustard"), P("celery"), P("hazelnuts", "hazelnut"),
        ), (
            "Which food does my body react badly to?",
            "Which food could land me in hospital?",
            "Do you remember what I have an allergy to?",
        )),),
        (
            ("The waiter swore blind there was no {v} in the satay. Cue a very dramatic evening with my EpiPen.",
             ("That sounds really frightening, I'm glad the EpiPen did its job. Are you okay now? "
              "It might be worth asking for the allergen sheet when {v} could be involved.",)),
            ("One bite of anything with {v} in it and my throat starts closing up, so eating out is "
             "an adventure.",
             ("That must make eating out stressful. Do you usually ring ahead to check for {v}?",)),
        ),
        (
            ("My nephew's school has banned {v} from lunchboxes because a boy in his class is allergic.",
             ("That's a sensible rule, {v} reactions can be serious. Is your nephew bothered by the ban?",)),
            ("My flatmate is allergic to {v}, so we've had to clear out half the cupboard.",
             ("Better safe than sorry! Want help finding swaps for the things with {v} in them?",)),
        ),
    ),
    Spec(
        "car",
        (Slot("car", (
            P("Fiat Panda", "Panda"), P("Skoda Octavia", "Octavia", "Skoda"),
            P("Land Rover Defender", "Defender", "Land Rover"), P("Mazda MX-5", "MX-5", "Mazda"),
            P("Renault Clio", "Clio", "Renault"), P("Subaru Forester", "Forester", "Subaru"),
            P("Volvo estate", "Volvo"), P("Citroen Berlingo", "Berlingo", "Citroen"),
            P("Toyota Prius", "Prius", "Toyota"), P("Honda Jazz", "Honda"),
        ), (
            "What car do I have?",
            "What do I drive?",
            "Remind me what vehicle I own?",
        )),),
        (
            ("The {v} failed its MOT again. The exhaust is basically held on with hope and a coat hanger.",
             ("Oh no, not the {v} again! A coat hanger is creative engineering, but it might be "
              "worth getting a proper quote.",)),
            ("Just did a 400-mile round trip in the {v} with a boot full of camping stuff and zero legroom.",
             ("400 miles with no legroom is heroic! How did the {v} cope with the load?",)),
        ),
        (
            ("My neighbour's new car is {a_v} and he polishes it every Sunday without fail.",
             ("Every Sunday! That {v} must be the shiniest on the street.",)),
            ("My boss drives a brand-new {v} and parks it across two spaces.",
             ("Parking across two spaces in a brand-new {v} is a bold way to make friends!",)),
        ),
        (
            ("Finally said goodbye to the {old}. Picked up a secondhand {v} this morning and it "
             "smells like new plastic.",
             ("Farewell {old}, hello {v}! That new-plastic smell is half the fun.",)),
            ("Traded the old banger in. I am now the proud owner of {a_v}, and I keep going outside to look at it.",
             ("Ha, that's the sign of a happy purchase! Enjoy the {v}.",)),
        ),
    ),
    Spec(
        "instrument",
        (Slot("instrument", (
            P("cello"), P("banjo"), P("bassoon"), P("ukulele"), P("harmonica"), P("trombone"),
            P("accordion"), P("harp"), P("double bass"), P("mandolin"), P("clarinet"),
        ), (
            "Which instrument am I getting to grips with?",
            "What do I play?",
            "Do you remember which instrument I practise?",
        )),),
        (
            ("Spent the evening murdering scales on the {v}. The neighbours must love me.",
             ("Scales on the {v} are a rite of passage, the neighbours will thank you eventually! "
              "How long have you been at it?",)),
            ("Grade four {v} exam is in three weeks and my hands shake just thinking about it.",
             ("Nerves before a grade four {v} exam are totally normal. Want some tips for calming "
              "the shakes on the day?",)),
            ("Took the {v} to an open mic last night. Knees were knocking but I got through both songs!",
             ("You got through both songs, that's brilliant! Taking {a_v} to an open mic takes guts.",)),
        ),
        (
            ("My housemate likes to play the {v} at 7am every single day.",
             ("7am {v} is a very specific kind of alarm! Have you had a gentle word?",)),
            ("My nephew is learning a new instrument, the {v}, and my sister is slowly losing her mind.",
             ("Ha, the early days of learning the {v} can be a lot for everyone in earshot!",)),
        ),
    ),
    Spec(
        "commute",
        (Slot("commute", (
            P("tram"), P("ferry"), P("train"), P("bus"), P("river boat", "boat"),
            P("shuttle coach", "coach"),
        ), (
            "How do I get to work?",
            "What do I take for my commute?",
            "Remind me how I travel in to my job?",
        )),),
        (
            ("Another morning wedged onto the {v} with someone's rucksack in my face. Living the dream.",
             ("A rucksack to the face on the {v} is nobody's dream! Any chance of a later one?",)),
            ("The {v} into the office was forty minutes late, so I missed half the all-hands.",
             ("Forty minutes late, how frustrating! Did you catch up on what you missed from the all-hands?",)),
        ),
        (
            ("My partner gets the {v} to work and it's always on time, which is deeply unfair.",
             ("The {v} being reliable is a rare luxury! Some people have all the luck.",)),
            ("My boss commutes on the {v} and takes all her calls from it, which is chaotic.",
             ("Calls from the {v} do sound chaotic! Lots of background noise, I imagine.",)),
        ),
        (
            ("New routine: I've ditched the {old} and started taking the {v} in. Way calmer.",
             ("Way calmer is a great trade! How long does the {v} take compared to before?",)),
            ("Week one of getting the {v} to the office instead. I can actually read a book now!",
             ("Reading on the {v}, that's a lovely upgrade! What book have you started?",)),
        ),
    ),
    Spec(
        "drink",
        (Slot("drink", (
            P("flat white"), P("cortado"), P("chai latte", "chai"), P("matcha"),
            P("double espresso", "espresso"), P("cappuccino"), P("Earl Grey"), P("mocha"),
        ), (
            "What's my usual morning drink?",
            "What do I order at the café?",
            "Remind me what my caffeine fix of choice is?",
        )),),
        (
            ("Can't string a sentence together before my first {v}, honestly.",
             ("The first {v} of the day is sacred! Do you make it at home or grab one on the way?",)),
            ("Third {v} and it's not even eleven. Send help.",
             ("Three before eleven is impressive dedication! Maybe a glass of water between {v} number "
              "three and four?",)),
        ),
        (
            ("My coworker drinks nothing but {v} and judges everyone else's order.",
             ("Ha, every office has {a_v} purist! Does your coworker at least make a round?",)),
            ("My mum's started ordering {a_v} every time we go out, very fancy.",
             ("Very fancy indeed! {A_v} is a nice treat.",)),
        ),
    ),
    Spec(
        "cuisine",
        (Slot("cuisine", (
            P("Ethiopian"), P("Sichuan"), P("Georgian"), P("Peruvian"), P("Lebanese"),
            P("Vietnamese"), P("Oaxacan"), P("Malaysian"), P("Sri Lankan"),
        ), (
            "What's my favourite cuisine?",
            "Which type of cooking do I love most?",
            "If you were picking a restaurant for me, what style of food should it be?",
        )),),
        (
            ("If it were up to me, it'd be {v} every single night. I'd never get bored.",
             ("{v} every night sounds delicious! Do you cook it yourself or have a go-to spot?",)),
            ("Found a tiny {v} place round the corner and I think I've been three times this week.",
             ("Three times in a week means they're doing something right! What's your go-to dish "
              "at the {v} place?",)),
        ),
        (
            ("My sister-in-law's favourite food is {v}, so that's where we always end up for her birthday.",
             ("{A_v} birthday dinner is a tradition worth keeping!",)),
            ("A new {v} restaurant opened near work, my colleagues won't stop raving.",
             ("When colleagues rave, it's usually worth a try! Maybe a team lunch at the {v} place?",)),
        ),
    ),
    Spec(
        "language",
        (Slot("language", (
            P("Portuguese"), P("Korean"), P("Icelandic"), P("Welsh"), P("Swahili"), P("Turkish"),
            P("Hungarian"), P("Finnish"), P("Japanese"), P("Greek"),
        ), (
            "Which language am I working on?",
            "What am I learning to speak?",
            "Do you remember what language I'm picking up?",
        )),),
        (
            ("Day 212 of my streak on the app. My {v} is now good enough to order a coffee and then panic.",
             ("212 days is impressive! Ordering a coffee in {v} is a real milestone, panic and all.",)),
            ("Trying to get my {v} good enough to chat with my in-laws without pointing at things.",
             ("Pointing is a perfectly valid stage! Are you doing {v} classes or teaching yourself?",)),
        ),
        (
            ("My colleague is studying {v} for a trip and keeps practising on me.",
             ("Ha, you're the {v} practice partner now! Are you picking any up by osmosis?",)),
            ("Turns out my flatmate can speak {v}. I only found out when she was on the phone to her gran.",
             ("Fluent {v}, what a hidden talent! Do you ever try to eavesdrop?",)),
        ),
    ),
    Spec(
        "birthday",
        (Slot("birthday", _dates(), (
            "When do I blow out the candles each year?",
            "What date do I get a year older?",
            "Do you remember when I was born, the day and month?",
        )),),
        (
            ("Mark your calendar: {v}. I'm turning forty and I fully expect cake.",
             ("Forty on {v}, that deserves a proper cake! Any plans for the day?",)),
            ("Everyone keeps asking what I want for my big day on {v}. Socks, probably. It's always socks.",
             ("Ha, socks are the eternal present! Want some gift ideas to drop as hints before {v}?",)),
        ),
        (
            ("My best friend's birthday is {v} and I forget every single year.",
             ("A calendar reminder a week before {v} could save the friendship!",)),
            ("The office is doing cake for my manager's birthday on {v}. I've been put in charge of the card.",
             ("In charge of the card for {v}! Want some ideas for a message?",)),
        ),
    ),
    Spec(
        "wake",
        (Slot("wake_time", (
            P("5:15", "5.15", "05:15", "quarter past five"),
            P("5:30", "5.30", "05:30", "half five", "half past five"),
            P("5:45", "5.45", "05:45", "quarter to six"),
            P("6:15", "6.15", "06:15", "quarter past six"),
            P("6:30", "6.30", "06:30", "half six", "half past six"),
            P("4:45", "4.45", "04:45", "quarter to five"),
            P("6:45", "6.45", "06:45", "quarter to seven"),
        ), (
            "What time do I get up?",
            "When does my day usually start?",
            "Remind me how early I'm out of bed?",
        )),),
        (
            ("My alarm goes off at {v} every day, weekends included. My body has forgotten how to lie in.",
             ("{v} every day, weekends too, that's dedication! Do you ever manage a nap?",)),
            ("Up at {v} again to squeeze a run in before the house stirs.",
             ("A run at {v} before anyone else is awake is very impressive! How far did you go?",)),
        ),
        (
            ("My flatmate gets up at {v} for the gym and her alarm wakes the whole building.",
             ("{A_v} alarm through the walls is rough! Maybe suggest she tries a vibrating one?",)),
            ("My partner's shifts mean his day starts at {v}, so I've learned to sleep through anything.",
             ("Sleeping through {a_v} start is a real skill!",)),
        ),
    ),
    Spec(
        "injury",
        (Slot("injury", (
            P("knee"), P("ankle"), P("wrist"), P("shoulder"), P("hamstring"),
            P("Achilles", "Achilles tendon"), P("elbow"),
        ), (
            "What part of me is hurt at the moment?",
            "Remind me what I injured?",
            "Do you remember what bit of my body is giving me grief?",
        )),),
        (
            ("Did my {v} in at five-a-side on Thursday. The GP says six weeks of boring exercises.",
             ("Ouch, sorry about the {v}! Six weeks is a slog, but sticking to the exercises really "
              "does pay off.",)),
            ("Still strapping up this {v} every morning. Healing is slower than I'd like.",
             ("Healing always feels slow! Is the {v} any less sore than last week?",)),
        ),
        (
            ("My dad's having an operation on his {v} next week and he's mostly worried about hospital food.",
             ("Ha, priorities! I hope the {v} operation goes smoothly for him.",)),
            ("My colleague is off with {a_v} injury from skiing, so I'm covering her work.",
             ("{A_v} injury from skiing sounds painful. Covering for her must be a lot on top of your own stuff.",)),
        ),
    ),
    Spec(
        "home_type",
        (Slot("home_type", (
            P("narrowboat", "canal boat"), P("houseboat"), P("converted barn", "barn"),
            P("bungalow"), P("tiny house"), P("static caravan", "caravan"),
            P("lighthouse keeper's cottage", "lighthouse"), P("yurt"),
        ), (
            "What sort of place do I live in?",
            "What kind of home have I got?",
            "Do you remember what my house is like, what type it is?",
        ), blocked_by=("floor",)),),
        (
            ("Life on {a_v} is great until the heating packs in, which it did at 2am.",
             ("A 2am heating failure sounds miserable! Is there a backup heater on the {v}?",)),
            ("People think {a_v} is romantic. Tell that to my back and the condensation.",
             ("Ha, the romance of {a_v} does wear thin with condensation! Have you tried a dehumidifier?",)),
        ),
        (
            ("My cousin's just bought {a_v} and keeps sending me photos of the view.",
             ("{A_v} with a view, lucky cousin! Are you planning a visit?",)),
            ("My best friend is moving into {a_v} full-time, says it's his dream home.",
             ("{A_v} as a dream home is quite something! Has he done the maths on heating it?",)),
        ),
        excludes=("floor",),
    ),
    Spec(
        "floor",
        (Slot("floor", _floors(), (
            "How high up is my flat?",
            "Which storey is my apartment on?",
            "Remind me what level my place is on?",
        ), blocked_by=("home_type",)),),
        (
            ("We're on the {v} floor and the lift has been broken for a week. My calves are enormous now.",
             ("A week of stairs to the {v} floor is a workout! Has the building said when the lift will be fixed?",)),
            ("Carrying the weekly shop up to the {v} floor is my only cardio.",
             ("Up to the {v} floor with shopping bags is serious cardio! Ever considered delivery?",)),
        ),
        (
            ("My sister's flat is on the {v} floor and she can see the whole city from it.",
             ("A view from the {v} floor sounds amazing! Is it worth the stairs?",)),
            ("A colleague's flat is on the {v} floor and her kitten still climbs up the balcony.",
             ("A kitten reaching the {v} floor is frankly impressive!",)),
        ),
        excludes=("home_type",),
    ),
    Spec(
        "phobia",
        (Slot("phobia", (
            P("moths", "moth"), P("pigeons", "pigeon"), P("wasps", "wasp"), P("jellyfish"),
            P("clowns", "clown"), P("balloons", "balloon"), P("escalators", "escalator"),
            P("crabs", "crab"),
        ), (
            "What am I scared of?",
            "What's my phobia?",
            "Do you remember what freaks me out?",
        )),),
        (
            ("There's something about {v} that makes me want to leave the country. Completely irrational, I know.",
             ("Irrational fears are still very real! Has it always been {v} for you?",)),
            ("I know {v} can't actually hurt me, but I still make a noise like a boiling kettle.",
             ("Ha, the boiling-kettle noise is a fair response! Lots of people feel the same about {v}.",)),
        ),
        (
            ("My colleague is scared stiff of {v}, so guess who deals with them at the office.",
             ("The designated {v} handler! That's a noble role.",)),
            ("My nephew has a proper phobia of {v} and we've all been sworn to secrecy.",
             ("Your nephew's secret about {v} is safe with me!",)),
        ),
    ),
    Spec(
        "volunteer",
        (Slot("volunteer", (
            P("food bank"), P("animal shelter", "shelter"), P("hospice shop", "hospice"),
            P("lifeboat station", "lifeboat"), P("refugee drop-in", "refugee"),
            P("library homework club", "homework club"), P("community fridge"),
            P("city farm"),
        ), (
            "Where do I volunteer?",
            "Where do I give my time for nothing?",
            "Do you remember where I do charity work?",
        )),),
        (
            ("Did my usual Tuesday shift at the {v}. My feet hurt but I always leave in a better mood.",
             ("Leaving in a better mood is the best sign! How long have you been helping at the {v}?",)),
            ("At the {v} again tonight, unpaid as always, but it's honestly the best bit of my week.",
             ("That's lovely to hear. What do you enjoy most about the {v}?",)),
        ),
        (
            ("My mum volunteers at the {v} and has roped in half the street.",
             ("Ha, roping in the street is peak mum energy! The {v} must love her.",)),
            ("My friend does charity work at the {v} and keeps asking if I'll join.",
             ("It sounds like the {v} could use the help! Are you tempted?",)),
        ),
    ),
    Spec(
        "talent",
        (Slot("talent", (
            P("juggle", "juggling"), P("yodel", "yodelling", "yodeling"),
            P("solve a Rubik's cube in under a minute", "Rubik", "Rubik's cube"),
            P("do card tricks", "card tricks"), P("ride a unicycle", "unicycle"),
            P("recite the alphabet backwards", "alphabet"), P("whistle with two fingers", "whistling"),
        ), (
            "What's my hidden talent?",
            "What unusual skill have I got?",
            "Do you remember my secret ability?",
        )),),
        (
            ("My one party trick is that I can {v}. It's gone down a storm at every wedding I've been to.",
             ("Being able to {v} is a brilliant party trick! How long did it take you to learn?",)),
            ("Tried to {v} at my cousin's engagement do and got a round of applause. Peak of my career.",
             ("A round of applause for being able to {v}, that's a proper highlight!",)),
        ),
        (
            ("My nephew's got a weird hidden talent: he can {v}. No idea where he learned it.",
             ("Ha, a nephew who can {v} is very entertaining! Maybe a YouTube education?",)),
            ("Turns out my boss has a secret skill: he can {v}. Revealed at the Christmas party, no less.",
             ("Finding out your boss can {v} at the Christmas party is a great plot twist!",)),
        ),
    ),
    Spec(
        "trip",
        (Slot("trip", (
            P("Madeira"), P("Lofoten"), P("Zanzibar"), P("Sardinia"), P("Hokkaido"),
            P("the Azores", "Azores"), P("Patagonia"), P("Crete"), P("Tasmania"), P("Sicily"),
        ), (
            "Where am I jetting off to?",
            "Remind me where I'm heading for my next getaway?",
            "Do you remember where I'm off to on my break?",
        )),),
        (
            ("Flights are booked: {v} in October! I've never been so excited about a spreadsheet.",
             ("{V} in October, how exciting! Want help planning the itinerary?",)),
            ("Counting down the weeks till {v}. I've already packed twice in my head.",
             ("Mental packing is half the fun! What are you most looking forward to in {v}?",)),
        ),
        (
            ("My parents are off to {v} next month and keep asking me to sort their holiday insurance.",
             ("Ha, the family travel agent! Want a checklist for their {v} holiday insurance?",)),
            ("My colleague just got back from {v} and won't stop showing everyone photos on her holiday.",
             ("Holiday photo slideshows are a rite of passage! Did {v} look nice at least?",)),
        ),
        (
            ("Change of plan: the {old} flights got cancelled, so we've rebooked for {v} instead.",
             ("Annoying about {old}, but {v} sounds like a great plan B! When do you fly?",)),
            ("We've swapped {old} for {v}. Cheaper and apparently warmer, so no complaints.",
             ("Cheaper and warmer is a win-win! {V} it is.",)),
        ),
    ),
    Spec(
        "heirloom",
        (Slot("heirloom", (
            P("pocket watch", "watch"), P("typewriter"), P("Leica camera", "Leica"),
            P("wind-up gramophone", "gramophone"), P("signed cricket bat", "cricket bat"),
            P("brass telescope", "telescope"), P("rocking chair"), P("cuckoo clock"),
        ), (
            "What have I inherited from my family?",
            "What's my most treasured belonging?",
            "Do you remember what I was handed down by family?",
        )),),
        (
            ("Grandad left me his {v} and I'm terrified of breaking it.",
             ("What a special thing to be left! Keeping {a_v} safe is a good kind of worry. Do you use it?",)),
            ("Grandad's old {v} lives on my desk now and I check it every morning like a ritual.",
             ("That's a lovely ritual. {A_v} with that history is irreplaceable.",)),
        ),
        (
            ("My friend inherited {a_v} from his great-aunt and has no idea what to do with it.",
             ("An inherited {v} can be a lovely conversation piece! Might be worth getting it valued.",)),
            ("My cousin's most treasured belonging is our great-uncle's {v}, and the family is still bickering about the will.",
             ("Wills do bring out the bickering! {A_v} can carry a lot of sentimental weight.",)),
        ),
    ),
    Spec(
        "allotment",
        (Slot("allotment", (
            P("courgettes", "courgette", "zucchini"), P("chillies", "chilli", "chili"),
            P("rhubarb"), P("pumpkins", "pumpkin"), P("asparagus"), P("beetroot"),
            P("runner beans"), P("kale"),
        ), (
            "What am I growing at the moment?",
            "What's taking over my vegetable plot?",
            "Do you remember what's sprouting in my veg patch?",
        )),),
        (
            ("The allotment has gone mad. I've got {v} coming out of my ears. Take some, please.",
             ("A glut of {v} is a nice problem to have! Want some recipes to use them up?",)),
            ("Spent the whole evening at the allotment picking {v}. My back is killing me but look at this haul!",
             ("That's a proper haul of {v}! Soups, chutney, freezing?",)),
        ),
        (
            ("My neighbour is growing prize-winning {v} on his plot and guards them like the crown jewels.",
             ("Prize-winning {v} deserve guarding! Has he ever shared his secret?",)),
            ("My aunt is growing {v} on her balcony and sends me daily progress reports.",
             ("Daily {v} updates, that's dedication!",)),
        ),
    ),
    Spec(
        "marathon",
        (Slot("marathon", (
            P("Berlin"), P("Lisbon"), P("Chicago"), P("Rotterdam"), P("Seville"), P("Copenhagen"),
            P("Edinburgh"), P("Valencia"),
        ), (
            "What race am I preparing for?",
            "Which city's race have I entered?",
            "Do you remember which run I've got a place in?",
        )),),
        (
            ("Eighteen miles in the rain this morning. The {v} marathon is eight weeks away and my "
             "toenails are already giving up.",
             ("Eighteen miles in the rain, that's grit! Eight weeks to {v} is plenty of time to "
              "taper sensibly.",)),
            ("Got my bib number for {v} through the post. It's real now, I'm actually doing a marathon.",
             ("It's real! Running {v} is a huge goal. How's the training plan going?",)),
        ),
        (
            ("My colleague has entered the {v} race this year and wants everyone to sponsor him.",
             ("Running {v} is a big undertaking! Sponsorship is a nice way to cheer him on.",)),
            ("My cousin is preparing for {v} next spring and is already talking about carb loading.",
             ("Carb loading talk already! {v} must be keeping your cousin very focused.",)),
        ),
    ),
)

SPEC_BY_NAME = {spec.name: spec for spec in SPECS}


# -- small talk ----------------------------------------------------------------------------------

GREETINGS = (
    ("Morning!", "Good morning! What can I do for you today?"),
    ("Hey, you about?", "I'm here! What's up?"),
    ("Evening. Bit of a ramble coming, sorry in advance.", "Ramble away, I'm all ears."),
    ("Hiya", "Hi there! How's your day going?"),
    ("Hello again!", "Hello! Nice to hear from you. What's on your mind?"),
    ("Ugh, what a day. Hi.", "Hi! Sounds like a long one. Want to talk it through, or shall we get "
     "stuck into something?"),
    ("Hi hi. Got a few things for you today.", "Fire away!"),
)

CLOSINGS = (
    ("Right, I'd better get on. Thanks!", "Anytime, take care!"),
    ("That's me for now, cheers.", "Cheers! Speak soon."),
    ("Thanks, that's really helpful.", "Glad it helped! Shout if you need anything else."),
    ("Okay, enough chat, back to it.", "Good luck with the rest of your day!"),
)

CONNECTORS = ("", "", "", "", "Anyway! ", "Ha, fair enough. ", "Oh, totally unrelated! ",
              "Right, next thing. ", "Also! ", "Okay, different topic. ")

#: Small talk and requests for help: (user, assistant, fillers) where fillers names the pools
#: used for placeholders in both texts.
FILLER_POOLS = {
    "room": ("bathroom", "kitchen", "utility room"),
    "ing1": ("chickpeas", "lentils", "mushrooms", "sweet potato"),
    "ing2": ("spinach", "aubergine", "butter beans", "leeks"),
    "event": ("housewarming", "leaving do", "quiz night"),
    "n": ("three", "four", "six"),
}

SMALL_TALK = (
    ("Random one: what's actually the difference between baking soda and baking powder?",
     "Baking soda is pure bicarbonate, so it needs something acidic in the recipe to react. Baking "
     "powder already contains the acid, so it works on its own once it meets moisture and heat."),
    ("Can you help me write a short email to my landlord about a dripping tap in the {room}?",
     "Of course! Here's a draft:\n\nHi,\n\nJust to let you know, the tap in the {room} has started "
     "dripping constantly. Could you arrange for someone to take a look when convenient? I'm "
     "flexible on timing.\n\nThanks very much,\n[Your name]"),
    ("Give me a quick dinner idea with {ing1} and {ing2}? Fridge is looking bleak.",
     "How about a one-pan stew: soften an onion in olive oil, add the {ing1} and {ing2}, a tin of "
     "chopped tomatoes and a spoonful of smoked paprika, then simmer for twenty minutes. Serve "
     "with rice or crusty bread."),
    ("How do I get candle wax off a carpet?",
     "Let it harden, scrape off what you can, then lay brown paper over the rest and press with a "
     "warm iron. The paper soaks the wax up; move to a clean patch and repeat."),
    ("Any tips for getting to sleep when my brain won't stop buzzing?",
     "A few that help lots of people: keep the same bedtime, put the phone in another room, and "
     "jot a quick to-do list before bed so your mind can let go of it. If you're still awake after "
     "twenty minutes, get up and do something dull in dim light."),
    ("Settle an argument for me: does pineapple belong on pizza?",
     "It's one of the great divides! Sweet and salty is a classic pairing, so it works for plenty "
     "of people, and purists will never accept it. Order half and half and everyone wins."),
    ("Can you explain what an index fund is in two sentences?",
     "An index fund buys all the shares in a market index instead of trying to pick winners. That "
     "keeps fees low, and over the long term it's a solid option for most savers."),
    ("What's a houseplant that's basically impossible to kill?",
     "A snake plant or a ZZ plant: both cope with low light and forgetful watering. Pothos is "
     "another forgiving one."),
    ("Help me politely turn down a {event} invite? I just can't face it this time.",
     "Sure! Something like: 'Thank you so much for thinking of me! I can't make it this time, but "
     "I hope the {event} is brilliant and I'd love to catch up soon.'"),
    ("Is it 'affect' or 'effect' in 'the rain will ___ our plans'?",
     "It's 'affect', the verb. 'Effect' is usually the noun, as in 'the rain had an effect on our plans'."),
    ("Rainy couple of days ahead. Any ideas that aren't just scrolling?",
     "A few: try a new recipe, do a jigsaw, have a film afternoon with snacks, or tackle one small "
     "job you've been putting off and reward yourself after."),
    ("Roughly how many grams is a cup of flour?",
     "Around 120 to 125 grams for plain flour, spooned in and levelled. It varies a bit with how "
     "tightly you pack it."),
    ("What's a nicer way to say 'per my last email'?",
     "You could try 'Just to recap what I mentioned earlier...' or 'Flagging this again in case it "
     "got buried'. Both keep it friendly."),
    ("Can you suggest a card game for {n} people that doesn't take all night?",
     "For {n} players, try Sushi Go or Love Letter: quick to learn, twenty minutes a round, and "
     "plenty of laughs."),
)

#: Prefixes that put a question inside a longer message; the flag says whether the question's
#: first letter is lowered after it.
WRAPPERS = (
    ("", False), ("", False), ("", False),
    ("Head's all over the place today. ", False),
    ("Humour me: ", True),
    ("Out of curiosity, ", True),
    ("Let's see if you remember. ", False),
    ("My brain's fried today. ", False),
    ("While I think of it: ", True),
)


# -- rendering -----------------------------------------------------------------------------------


def _article(x: str) -> str:
    return "an" if x[:1].lower() in "aeiou" else "a"


def _cap(x: str) -> str:
    return x[:1].upper() + x[1:]


def _fields(key: str, value: str) -> dict[str, tuple[str, str]]:
    """Placeholder ``key`` and its variants, each as (text put in, value string recorded)."""
    return {
        key: (value, value),
        key.upper() if len(key) == 1 else _cap(key): (_cap(value), _cap(value)),
        f"a_{key}": (f"{_article(value)} {value}", value),
        f"A_{key}": (f"{_cap(_article(value))} {value}", value),
    }


def _render(template: str, fields: dict[str, tuple[str, str]]) -> tuple[str, tuple[str, ...]]:
    used = [name for _, name, _, _ in Formatter().parse(template) if name]
    text = template.format(**{name: fields[name][0] for name in used})
    values: list[str] = []
    for name in used:
        value = fields[name][1]
        if value not in values:
            values.append(value)
    return text, tuple(values)


# -- generation ----------------------------------------------------------------------------------


@dataclass
class _Item:
    """One exchange to place in a session: a user turn and the assistant's reply."""

    session: int
    user: str
    assistant: str
    fields: dict[str, tuple[str, str]]
    facts: tuple[str, ...] = ()
    role: str = "filler"  # "say", "move", "other", "filler"
    spec: str = ""


@lru_cache(maxsize=1 << 16)
def _norm(text: str) -> str:
    return normal(text)


def names(text: str, value: str) -> bool:
    """``base.names``, cached."""
    return _norm(value) in _norm(text)


def _clash(a: str, b: str) -> bool:
    return names(a, b) or names(b, a)


class _Values:
    """Every value string used for one user, so that no two are confusable."""

    def __init__(self) -> None:
        self.taken: list[str] = []  # normalised

    def free(self, entry: tuple[str, tuple[str, ...]]) -> bool:
        for alias in entry[1]:
            a = _norm(alias)
            for t in self.taken:
                if a in t or t in a:
                    return False
        return True

    def take(self, entry: tuple[str, tuple[str, ...]]) -> None:
        self.taken.extend(_norm(alias) for alias in entry[1])

    def pick(self, rng: random.Random, pool) -> tuple[str, tuple[str, ...]] | None:
        options = [e for e in pool if self.free(e)]
        if not options:
            return None
        entry = rng.choice(options)
        self.take(entry)
        return entry


def _dates_for(rng: random.Random, count: int) -> list[str]:
    day = datetime(2023, 1, 1) + timedelta(days=rng.randint(0, 560))
    out = []
    for k in range(count):
        if k:
            day += timedelta(days=rng.randint(3, 35))
        stamp = day.replace(hour=rng.randint(7, 22), minute=rng.randrange(60))
        out.append(stamp.strftime("%Y-%m-%dT%H:%M"))
    return out


def _user(rng: random.Random, user_id: str) -> User:
    sessions = rng.randint(MIN_SESSIONS, MAX_SESSIONS)
    dates = _dates_for(rng, sessions)
    values = _Values()

    # Which topics this user talks about, until there are enough facts to ask about.
    order = list(SPECS)
    rng.shuffle(order)
    chosen: list[Spec] = []
    slots_count = 0
    for spec in order:
        if slots_count >= MEMORY_PER_USER:
            break
        if any(spec.name in c.excludes or c.name in spec.excludes for c in chosen):
            continue
        chosen.append(spec)
        slots_count += len(spec.slots)
    chosen_names = [c.name for c in chosen]

    current: dict[str, tuple[str, tuple[str, ...]]] = {}
    for spec in chosen:
        for slot in spec.slots:
            entry = values.pick(rng, slot.pool)
            assert entry is not None, slot.fid
            current[slot.fid] = entry

    # Facts that change later: one to three of the topics that have a way to change.
    movable = [s for s in chosen if s.moves]
    rng.shuffle(movable)
    changes: dict[str, tuple[str, tuple[str, ...]]] = {}
    for spec in movable[: rng.choice((1, 2, 2, 3))]:
        entry = values.pick(rng, spec.slots[0].pool)
        if entry is not None:
            changes[spec.name] = entry

    # Unanswerable questions: facts never stated, asked about near a distractor.
    candidates = []
    for spec in SPECS:
        if spec.name in chosen_names:
            continue
        for slot in spec.slots:
            if slot.open_ok and not any(b in chosen_names for b in slot.blocked_by):
                candidates.append((spec, slot))
    rng.shuffle(candidates)
    open_slots: list[tuple[Spec, Slot]] = []
    for spec, slot in candidates:
        if len(open_slots) == UNANSWERABLE_PER_USER:
            break
        if all(spec.name != s.name for s, _ in open_slots):
            open_slots.append((spec, slot))
    assert len(open_slots) == UNANSWERABLE_PER_USER

    items: list[_Item] = []

    def other_item(spec: Spec) -> None:
        fields: dict[str, tuple[str, str]] = {}
        for key, slot in zip("vw", spec.slots, strict=False):
            entry = values.pick(rng, slot.pool)
            if entry is None:
                return
            fields.update(_fields(key, entry[0]))
        user, replies = rng.choice(spec.others)
        items.append(_Item(rng.randint(1, sessions), user, rng.choice(replies), fields,
                           role="other", spec=spec.name))

    # What the user says about themselves, and how it changes.
    for spec in chosen:
        fields: dict[str, tuple[str, str]] = {}
        for key, slot in zip("vw", spec.slots, strict=False):
            fields.update(_fields(key, current[slot.fid][0]))
        user, replies = rng.choice(spec.says)
        facts = tuple(slot.fid for slot in spec.slots)
        if spec.name in changes:
            first = rng.randint(1, sessions - 1)
            items.append(_Item(first, user, rng.choice(replies), fields, facts, "say", spec.name))
            new = changes[spec.name]
            move_fields = _fields("v", new[0])
            move_fields.update(_fields("old", current[spec.slots[0].fid][0]))
            user, replies = rng.choice(spec.moves)
            items.append(_Item(rng.randint(first + 1, sessions), user, rng.choice(replies),
                               move_fields, facts, "move", spec.name))
        else:
            items.append(_Item(rng.randint(1, sessions), user, rng.choice(replies), fields,
                               facts, "say", spec.name))

    # Near misses: other people's versions of stated facts, and of the unanswerable ones.
    near = list(chosen)
    rng.shuffle(near)
    for spec in near[: rng.randint(6, 9)]:
        other_item(spec)
    for spec, _ in open_slots:
        if rng.random() < 0.85:
            other_item(spec)

    # Small talk and requests for help, one or two per session.
    talk = list(SMALL_TALK)
    rng.shuffle(talk)
    for session in range(1, sessions + 1):
        for _ in range(rng.randint(1, 2)):
            while talk:
                user, reply = talk.pop()
                keys = [n for _, n, _, _ in Formatter().parse(user + reply) if n]
                fields = {}
                ok = True
                for key in keys:
                    if key in fields:
                        continue
                    entry = values.pick(rng, [P(x) for x in FILLER_POOLS[key]])
                    if entry is None:
                        ok = False
                        break
                    fields[key] = (entry[0], entry[0])
                if ok:
                    items.append(_Item(session, user, reply, fields))
                    break

    # Lay the sessions out.
    turns: list[Turn] = []
    placed: dict[int, tuple[int, int]] = {}  # id(item) -> (session, index of the user turn)
    greetings = list(GREETINGS)
    rng.shuffle(greetings)
    for session in range(1, sessions + 1):
        date = dates[session - 1]
        here = [it for it in items if it.session == session]
        rng.shuffle(here)
        # A change is always after the first statement (they are in different sessions).
        exchanges: list[tuple[str, str, tuple[str, ...], tuple[str, ...], tuple[str, ...], _Item | None]] = []
        hello, hi = greetings[(session - 1) % len(greetings)]
        exchanges.append((hello, hi, (), (), (), None))
        for k, it in enumerate(here):
            text, vals = _render(it.user, it.fields)
            reply, rvals = _render(it.assistant, it.fields)
            if k:
                text = rng.choice(CONNECTORS) + text
            exchanges.append((text, reply, it.facts, vals, rvals, it))
        if rng.random() < 0.8:
            bye, ok = rng.choice(CLOSINGS)
            exchanges.append((bye, ok, (), (), (), None))
        index = 0
        for text, reply, facts, vals, rvals, it in exchanges:
            if it is not None:
                placed[id(it)] = (session, index)
            turns.append(Turn("user", text, session, date, index, facts, vals))
            turns.append(Turn("assistant", reply, session, date, index + 1, (), rvals))
            index += 2

    by_pos = {(t.session, t.index): t for t in turns}

    # Questions.
    wrappers = list(WRAPPERS)
    questions: list[tuple[str, dict]] = []
    memory: list[tuple[Spec, Slot]] = [(spec, slot) for spec in chosen for slot in spec.slots]
    rng.shuffle(memory)
    memory = memory[:MEMORY_PER_USER]
    for spec, slot in memory:
        says = [it for it in items if it.spec == spec.name and it.role == "say"]
        moves = [it for it in items if it.spec == spec.name and it.role == "move"]
        if moves:
            entry = changes[spec.name]
            old = current[slot.fid]
            evidence = (placed[id(moves[0])],)
            old_turn = by_pos[placed[id(says[0])]]
            stale = tuple(a for a in old[1] if names(old_turn.content, a)
                          and not any(_clash(a, b) for b in entry[1]))
        else:
            entry = current[slot.fid]
            evidence = (placed[id(says[0])],)
            stale = ()
        for pos in evidence:
            assert any(names(by_pos[pos].content, a) for a in entry[1]), (pos, entry)
        questions.append(("memory", dict(fact=slot.fid, text=rng.choice(slot.asks),
                                         answers=entry[1], stale=stale, evidence=evidence)))
    for _spec, slot in open_slots:
        questions.append(("unanswerable", dict(fact=slot.fid, text=rng.choice(slot.asks))))
    rng.shuffle(questions)

    out: list[Question] = []
    for n, (kind, q) in enumerate(questions):
        prefix, lower = rng.choice(wrappers)
        text = q.pop("text")
        if prefix and lower:
            text = text[:1].lower() + text[1:]
        out.append(Question(key=f"{user_id}-q{n:02d}", user_id=user_id, kind=kind,
                            text=prefix + text, **q))
    return User(user_id=user_id, turns=turns, questions=out)


def generate(seed: int, users: int = 5) -> list[User]:
    """``users`` users, each with 3 to 5 sessions and 20 questions (16 memory, 4 unanswerable)."""
    master = random.Random(seed)
    out = []
    for n in range(users):
        rng = random.Random(master.getrandbits(64))
        out.append(_user(rng, f"{NAME}-{seed}-{n:02d}"))
    return out

"""Family "dates": when things happen.

Each user mentions appointments, flights, birthdays, deadlines, other people's events and
past milestones, always as absolute dates (day + month, sometimes a year or a weekday) and
clock times. Some of them are rescheduled in a later session (the old date or time becomes
stale). Around them: other people's dates in the same month (near misses), things mentioned
without any date (so a question about them is unanswerable), small talk and requests for help.

Standard library only, deterministic for a seed.
"""

from __future__ import annotations

import datetime as _dt
import random
import string

from recall_core.training.families.base import Question, Turn, User

NAME = "dates"
DESCRIPTION = (
    "Appointments, flights, birthdays, deadlines, events and past milestones given as absolute "
    "dates and clock times, some rescheduled, with other people's dates as near misses."
)

# -- calendar vocabulary -------------------------------------------------------------------------

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")
MON_ABBR = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
ORD_WORDS = (
    "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth",
    "tenth", "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth",
    "seventeenth", "eighteenth", "nineteenth", "twentieth", "twenty-first", "twenty-second",
    "twenty-third", "twenty-fourth", "twenty-fifth", "twenty-sixth", "twenty-seventh",
    "twenty-eighth", "twenty-ninth", "thirtieth", "thirty-first",
)
HOUR_WORDS = ("twelve", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
              "ten", "eleven", "twelve")
MIN_WORDS = {5: "five", 10: "ten", 20: "twenty", 25: "twenty-five"}
# no ":10": "7:10am" would also name "10am" for the scorer (colon becomes a space)
MINUTES = (0, 0, 5, 15, 15, 20, 30, 30, 40, 45, 45, 50)


def ordinal(n: int) -> str:
    if 10 <= n % 100 <= 20:
        suffix = "th"
    else:
        suffix = {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _dedupe(items):
    out, seen = [], []
    for it in items:
        key = " ".join("".join(c if c.isalnum() else " " for c in it.lower()).split())
        if key not in seen:
            seen.append(key)
            out.append(it)
    return tuple(out)


def date_aliases(d: _dt.date, year_known: bool = False) -> tuple[str, ...]:
    """Ways to name a day of the year: 14 March, March 14, 14th March, March 14th, ..."""
    day, month, abbr = d.day, MONTHS[d.month - 1], MON_ABBR[d.month - 1]
    o, w = ordinal(day), ORD_WORDS[day - 1]
    al = [f"{day} {month}", f"{month} {day}", f"{o} {month}", f"{month} {o}", f"{o} of {month}"]
    if day >= 10:  # "eighth of March" would also be named by "twenty-eighth of March"
        al += [f"{w} of {month}", f"{month} {w}"]
    if abbr != month:
        al += [f"{day} {abbr}", f"{abbr} {day}", f"{o} {abbr}", f"{abbr} {o}"]
    if d.month == 9:
        al += [f"{day} Sept", f"Sept {day}"]
    if year_known:
        al.append(d.isoformat())
    return _dedupe(al)


def time_aliases(t: tuple[int, int]) -> tuple[str, ...]:
    """Ways to name a clock time: 4:15 / 4.15 / 4:15pm / 16:15 / quarter past four ..."""
    h, m = t
    h12 = h % 12 or 12
    ap = "am" if h < 12 else "pm"
    w, nxt = HOUR_WORDS[h12], h12 % 12 + 1
    wn = HOUR_WORDS[nxt]
    mm = f"{m:02d}"
    if m == 0:
        al = [f"{h12}{ap}", f"{h12} {ap}", f"{h12} {ap[0]}.m.", f"{h12}:00", f"{h12}.00",
              f"{h12}:00{ap}", f"{h12}.00{ap}", f"{h:02d}:00", f"{h}:00", f"{w} o'clock",
              f"{h12} o'clock", f"{w} {ap}"]
        if h == 12:
            al += ["noon", "midday"]
    else:
        al = [f"{h12}:{mm}", f"{h12}.{mm}", f"{h12}:{mm}{ap}", f"{h12}.{mm}{ap}", f"{h:02d}:{mm}",
              f"{h}:{mm}"]
        if m == 15:
            al += [f"quarter past {w}", f"quarter past {h12}"]
        elif m == 30:
            al += [f"half past {w}", f"half past {h12}", f"half {w}"]
        elif m == 45:
            al += [f"quarter to {wn}", f"quarter to {nxt}"]
        elif m in MIN_WORDS:
            al += [f"{MIN_WORDS[m]} past {w}"]
        elif 60 - m in MIN_WORDS:
            al += [f"{MIN_WORDS[60 - m]} to {wn}"]
    return _dedupe(al)


def render_date(rng: random.Random, d: _dt.date, weekday: bool = False, year: bool = False) -> str:
    """One way a person would type the date; always contains one of date_aliases(d)."""
    day, month = d.day, MONTHS[d.month - 1]
    o = ordinal(day)
    if weekday:
        wd = WEEKDAYS[d.weekday()]
        forms = [f"{wd} {day} {month}", f"{wd} the {o} of {month}", f"{wd}, {month} {o}",
                 f"{wd} {o} {month}", f"{wd} {o} {MON_ABBR[d.month - 1]}"]
    else:
        forms = [f"{day} {month}", f"{month} {day}", f"{o} {month}", f"{month} {o}",
                 f"the {o} of {month}"]
    out = rng.choice(forms)
    if year:
        out = f"{out}, {d.year}" if rng.random() < 0.5 else f"{out} {d.year}"
    return out


def echo_date(rng: random.Random, d: _dt.date) -> str:
    """A short form the assistant uses when it repeats a date."""
    return rng.choice([f"{d.day} {MONTHS[d.month - 1]}", f"{MONTHS[d.month - 1]} {ordinal(d.day)}",
                       f"{ordinal(d.day)} {MONTHS[d.month - 1]}"])


def render_time(rng: random.Random, t: tuple[int, int]) -> str:
    """One way a person would type the time; always one of time_aliases(t)."""
    h, m = t
    h12 = h % 12 or 12
    ap = "am" if h < 12 else "pm"
    w = HOUR_WORDS[h12]
    if m == 0:
        forms = [f"{h12}{ap}", f"{h12} {ap}", f"{h12}:00", f"{h:02d}:00", f"{w} o'clock"]
        if h == 12:
            forms.append("midday")
    else:
        forms = [f"{h12}:{m:02d}", f"{h12}.{m:02d}", f"{h12}:{m:02d}{ap}", f"{h:02d}:{m:02d}"]
        if m == 15:
            forms.append(f"quarter past {w}")
        elif m == 30:
            forms += [f"half past {w}", f"half {w}"]
        elif m == 45:
            forms.append(f"quarter to {HOUR_WORDS[h12 % 12 + 1]}")
    return rng.choice(forms)


def echo_time(t: tuple[int, int]) -> str:
    h, m = t
    h12 = h % 12 or 12
    ap = "am" if h < 12 else "pm"
    return f"{h12}{ap}" if m == 0 else f"{h12}:{m:02d}"


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

# -- templates ---------------------------------------------------------------------------------------
# A field whose name starts with "_" is grammar (pronouns, a word like "later"); every other field
# is a value and is recorded in Turn.values / Question.values.

# (user, assistant, only for a returning user)
GREETINGS = (
    ("Morning! Hope your day's going better than mine so far.",
     "Morning! Sorry to hear it's been a bumpy start. What's going on?", False),
    ("hiya, me again", "Hi again! What can I do for you today?", True),
    ("Hey hey. Got a minute?", "Always. What's up?", False),
    ("Evening! Finally sat down with a cup of tea.",
     "Evening! Tea and a sit-down sounds well earned. What's on your mind?", False),
    ("Hello again, brain dump incoming.", "Dump away, I'm all ears.", True),
    ("Hi! Back from a properly chaotic week.",
     "Welcome back! Chaotic how, the good kind or the other kind?", True),
    ("yo. quick catch-up?", "Sure thing, go for it.", True),
    ("Afternoon! I've got a list of random stuff, bear with me.",
     "Afternoon! Lists are my favourite. Fire away.", False),
    ("Hey, it's been a while!", "Hey! Good to hear from you. How have things been?", True),
    ("ok I'm procrastinating, talk to me", "Happy to be your procrastination buddy. What's up?", False),
    ("Hi there. Someone told me you're good at keeping track of stuff, so here goes.",
     "Hi! Happy to help keep track. What have you got?", False),
)

CLOSINGS = (
    ("Right, that's me for now. Thanks!", "Anytime! Have a good rest of your day."),
    ("Cheers, you're a star.", "Happy to help. Shout if anything else comes up!"),
    ("ok off to make dinner, ta", "Enjoy your dinner!"),
    ("Thanks, that's really helped clear my head.", "Glad to hear it. Good luck with everything!"),
    ("Brilliant, I'll leave you in peace now.", "You're never a bother. Take care!"),
)

FILLERS = (
    ("Random one: how long do I boil an egg if I want the yolk still jammy?",
     "About six and a half minutes from when it goes into boiling water, then straight into cold "
     "water for a minute so it stops cooking. Easier to peel that way too."),
    ("Can you help me word a quick email to my landlord about the dripping kitchen tap? Polite but firm.",
     "Sure, how about: \"Hi, just flagging that the kitchen tap has been dripping constantly and it's "
     "getting worse. Could you arrange for someone to take a look in the next few days? Thanks "
     "very much.\" Want it a touch firmer?"),
    ("what can I make with half a tin of coconut milk and some sad looking spinach",
     "A quick dal would be perfect: soften an onion with garlic and ginger, add red lentils, water "
     "and the coconut milk, simmer until soft, then wilt the spinach in at the end. A squeeze of "
     "lime lifts it."),
    ("Any tips for falling asleep when my brain just won't shut up?",
     "A few that help a lot of people: jot down whatever's looping on paper before bed, keep the "
     "room cool, and if you're awake for ages get up and do something dull in dim light rather "
     "than lying there stewing."),
    ("is it affect or effect in 'this will ___ the schedule'?",
     "Affect: it's the verb there. Effect is usually the noun, as in 'the effect on the schedule'."),
    ("What's the actual difference between baking soda and baking powder?",
     "Baking soda needs an acid in the recipe (buttermilk, yoghurt, lemon) to react; baking powder "
     "already has the acid mixed in, so it works on its own."),
    ("how do I get candle wax out of a tablecloth",
     "Scrape off what you can once it's hard, then put brown paper or kitchen roll over the spot "
     "and press with a warm iron. The paper soaks the wax up. Wash as normal afterwards."),
    ("Give me a quick stretching routine for after sitting at a desk all day?",
     "Try: neck rolls, a doorway chest stretch, a standing hip flexor lunge on each side, a seated "
     "twist, and hanging forward to let your back loosen. Half a minute each is plenty."),
    ("The weather here has been grim all week, just endless drizzle.",
     "Endless drizzle is the worst kind, not even dramatic enough to be interesting. Managing to "
     "get out at all?"),
    ("I'm reading a thriller that's so badly written I genuinely can't put it down",
     "The best kind of guilty pleasure! What's the most ridiculous twist so far?"),
    ("What's a polite way to turn down extra work without sounding lazy?",
     "Something like: \"I'd like to help, but I'm at capacity with the current priorities. If this "
     "one's more urgent, which should I move down the list?\" It shows willingness and puts the "
     "trade-off back on them."),
    ("How long does cooked rice keep in the fridge?",
     "Best eaten within a day. Cool it quickly, keep it covered in the fridge, and reheat it until "
     "it's piping hot all the way through."),
    ("Tell me a fun fact, I need distracting",
     "Octopuses have three hearts, and two of them stop beating while they swim. No wonder they "
     "prefer crawling."),
    ("How do you keep a supermarket basil plant alive? Mine always die.",
     "Split the pot into a few clumps and repot them, since they're massively overcrowded. Then "
     "give it a sunny windowsill, water from below, and pinch off the tops rather than single leaves."),
    ("Need a name for our pub quiz team. Something punny.",
     "A few: Quizteama Aguilera, Let's Get Quizzical, The Universally Challenged, Agatha Quiztie. "
     "Want more in a particular direction?"),
    ("is it weird to bring a bottle to a dinner party and then drink it",
     "Not weird at all! Once it's handed over it's the host's to serve, and most hosts open what "
     "people bring. Just don't take it home at the end."),
    ("What's a good way to remember people's names when I meet them?",
     "Say the name back straight away (\"Nice to meet you, Sam\"), use it once more before you "
     "part, and link it to something about them. Repetition does most of the work."),
    ("Any ideas for a cheap lunch I can take to work that isn't a sad sandwich?",
     "Big batch of orzo salad with roasted veg and feta keeps well for days. Or noodle jars: "
     "noodles, veg and a stock cube, and you just add boiling water at work."),
    ("how do I stop my glasses steaming up when I wear a scarf",
     "Pull the scarf up over your nose a bit so your breath goes down rather than up, or try an "
     "anti-fog spray. A tiny bit of washing-up liquid rubbed on and buffed off works in a pinch."),
    ("Can you explain what a 'soft launch' is? My teenager keeps saying it.",
     "It's when you hint at something, usually a new relationship, online without fully "
     "announcing it. A hand in a photo, two coffee cups, that kind of thing."),
)

# appointments ------------------------------------------------------------------------------------

APPT_STATE = (
    "Finally got a slot with the {np}: {date} at {time}. Only took three phone calls and a hold "
    "playlist I'll never unhear.",
    "Okay so {reason}, and I've caved and booked the {np}: {date} at {time}.",
    "The {np} could only squeeze me in on {date} at {time}, right in the middle of the workday, naturally.",
    "Putting this here so I don't lose it: {np} at {time} on {date}.",
    "Got the confirmation text from the {np}: {time} on {date}. Remind me to actually leave the "
    "house on time for once, ha.",
    "Since {reason}, I've booked the {np} for {date} at {time}.",
)
APPT_ACK = (
    "Good on you for booking the {np}, that's usually the hardest bit. Want help jotting down a "
    "few questions to ask while you're there?",
    "{date_echo} at {time_echo} with the {np}, got it. If it's a new place, check whether they want "
    "you there ten minutes early for forms.",
    "Glad it's in the diary at last. Will you head there straight from work?",
    "Good call getting the {np} booked. Is it somewhere you've been before?",
)
APPT_MOVE_BOTH = (
    "Ugh, the {np} rang and they've had to move me. Now it's {date} at {time} instead of {old_date}.",
    "Change of plan: the {np} is now {date} at {time}. The old slot got cancelled on their end.",
    "Annoyingly the {np} bumped me. New slot is {date} at {time}.",
)
APPT_MOVE_DATE_T = (
    "The {np} has shuffled me to {date}, same time though ({time}).",
    "Heads up, the {np} moved to {date}. Still {time}.",
)
APPT_MOVE_DATE = (
    "The {np}'s been pushed to {date}, same time as before.",
)
APPT_MOVE_TIME = (
    "Small tweak from the {np}: same day, but they've made it {_shift}, {time}.",
    "The {np} called. Still the same date, just {_shift} now: {time}.",
)
APPT_MOVE_ACK = (
    "Annoying, but better they tell you now than on the day. Does the new slot work with everything else?",
    "Fair enough, the {np} moves, you adapt. Anything else that needs shuffling around it?",
    "Noted the change for the {np}. Hopefully that's the last time they move it!",
)
APPT_MENTION = (
    ("Bit nervous about the {np} if I'm honest.",
     "That's completely normal. It can help to write down what you want to ask so you don't blank "
     "in the moment. What's worrying you most?"),
    ("Do I need to bring anything to the {np}, do you reckon?",
     "Usually just ID and a list of any medication or previous notes, if relevant. If in doubt, "
     "the confirmation email or a quick call will tell you."),
)

# flights -------------------------------------------------------------------------------------------

FLIGHT_STATE = (
    "Booked the flights to {city}!! We go out on {date} with a {time} departure{_aside}.",
    "Flight to {city} is {date}, leaving at {time}. First proper holiday in ages.",
    "Work are sending me to {city}. Flying out {date} at {time}, and back whenever the workshop "
    "wraps up.",
    "So I finally did it, {city} is booked. Outbound's {date}, takes off at {time}.",
    "Just got the booking confirmation for {city}: {date}, departing {time}. Need to dig out my passport.",
)
FLIGHT_ACK = (
    "{city}, how exciting! Is it your first time there?",
    "Ooh, {city}, lovely. If you want, I can throw together a packing list or a few things worth seeing.",
    "Nice one. For a {time_echo} flight I'd aim to be at the airport about two hours before, "
    "especially if you're checking a bag.",
)
FLIGHT_MOVE_BOTH = (
    "The airline's changed our {city} flight, grr. Now it's {date} at {time} instead.",
    "Email from the airline: {city} flight moved to {date}, departing {time}. Typical.",
)
FLIGHT_MOVE_DATE_T = ("They've moved the {city} flight to {date}. Same departure time, {time}.",)
FLIGHT_MOVE_DATE = ("They've moved the {city} flight to {date}, same departure time at least.",)
FLIGHT_MOVE_TIME = (
    "Tiny change to {city}: same day, but it now leaves {_shift}, at {time}.",
    "The {city} flight's been retimed. Same date, {time} now.",
)
FLIGHT_MOVE_ACK = (
    "Airlines, honestly. Worth double-checking any hotel or transfer bookings still line up with it.",
    "Ugh, sorry. At least they told you in advance. Anything you need to change on the {city} end?",
)
FLIGHT_MENTION = (
    ("Started a packing list for {city} already, is that tragic?",
     "Not tragic at all, it's organised! Want me to check it for anything you might forget?"),
    ("What's the one thing I shouldn't miss in {city}, do you think?",
     "Depends what you're into, but wandering the old town early in the morning before the crowds "
     "is hard to beat almost anywhere. Food or sights, which matters more to you?"),
)

# birthdays ------------------------------------------------------------------------------------------

BDAY_STATE = (
    "It's my {rel} {name}'s birthday on {date} and I have absolutely no idea what to get {_her}.",
    "{name}, my {rel}, has a birthday on {date}. Any ideas for someone who claims to want nothing?",
    "Writing this down before I forget again: {name}'s birthday is {date}. My {rel}. I missed it "
    "last year and {_she}'s still bringing it up.",
    "My {rel}'s birthday is {date} (that's {name}, for the record). Thinking of doing something "
    "low-key but nice.",
    "{name}'s birthday is on {date} and I still haven't sorted a card. My {rel} deserves better, honestly.",
)
BDAY_ACK = (
    "Experiences often land better than things: a class, a tasting, tickets to something. "
    "What's {name} into at the moment?",
    "Getting it in the diary early is half the battle. Want a few gift ideas for your {rel}?",
    "What sort of things does {name} like? Happy to brainstorm.",
    "Want help planning something for the day, or just present ideas?",
)

# past milestones: (id, needs partner, statements, date questions, year questions, acks) ---------

MILESTONES = (
    ("keys", False,
     ("We got the keys to the flat on {date}{year_part} and it still doesn't feel like ours.",
      "Can't believe it's been this long since we got the keys to the flat. That was {date}{year_part}."),
     ("When did we get the keys to the flat?", "Do you remember the date we got the keys to the flat?",
      "What day did we move into the flat, again?"),
     ("What year did we get the keys to the flat?", "Remind me what year we moved into the flat?")),
    ("job", False,
     ("I started at {company} on {date}{year_part}, and honestly it's flown by.",
      "My first day at {company} was {date}{year_part}. Still remember getting lost looking for the loos."),
     ("When did I start at {company}?", "Do you remember what date my first day at {company} was?"),
     ("What year did I join {company}?", "Remind me what year I started at {company}?")),
    ("married", True,
     ("{partner} and I got married on {date}{year_part}. Tiny registry office do, best day ever.",
      "For the record, {partner} and I tied the knot on {date}{year_part}."),
     ("What's the date of our wedding anniversary?", "What date did {partner} and I get married?"),
     ("What year did {partner} and I get married?", "Remind me what year we got married?")),
    ("pet", False,
     ("We brought {pet} home from the rescue on {date}{year_part}. Still the best decision we've made.",
      "{pet}'s gotcha day is {date}{year_part}, when we picked {_pet_them} up from the shelter."),
     ("When did we adopt {pet}?", "What's {pet}'s gotcha day again?"),
     ("What year did we get {pet}?", "Remind me what year we adopted {pet}?")),
    ("driving", False,
     ("I passed my driving test on {date}{year_part}, third attempt, not that anyone's counting.",
      "Fun fact: I passed my driving test on {date}{year_part}. Still can't parallel park."),
     ("When did I pass my driving test?", "Do you remember what date I passed my driving test?"),
     ("What year did I pass my driving test?",)),
    ("met", True,
     ("{partner} and I first met on {date}{year_part}, at a truly terrible fancy dress party.",
      "The day {partner} and I met was {date}{year_part}. I was dressed as a pineapple, long story."),
     ("What date did {partner} and I first meet?", "Do you remember when I met {partner}?"),
     ("What year did I meet {partner}?",)),
)
MILESTONE_ACK = (
    "That's a lovely thing to have pinned down. Funny which dates stick, isn't it?",
    "Ha, some dates just stick. Does it feel like ages ago or like yesterday?",
    "What a nice memory. Is there a story behind the day itself?",
)

# deadlines -----------------------------------------------------------------------------------------

DEADLINE_STATE = (
    "The {np} has to be in by {date}. Current progress: one heading and a lot of dread.",
    "Deadline for the {np} is {date} and I've done nothing. Nothing!",
    "Just checked and the {np} is due {date}, earlier than I'd assumed.",
    "Got confirmation the {np} closes on {date}. Time to actually start, I suppose.",
)
DEADLINE_ACK = (
    "Working back from {date_echo}, you could split the {np} into a few chunks. Want a rough plan?",
    "Deep breath, you've got time if you start small. Which part of the {np} are you dreading most?",
    "Classic. Shall we make a quick checklist for the {np} so it feels less enormous?",
)
DEADLINE_LATER = (
    "Extension granted!! The {np} is now due {date}.",
    "Good news for once: they've pushed the {np} deadline back to {date}.",
)
DEADLINE_EARLIER = (
    "Well, they've brought the {np} deadline forward to {date}. Brilliant. Love that for me.",
    "Update on the {np}: the deadline moved up to {date}, so that changes things.",
)
DEADLINE_LATER_ACK = (
    "That's a relief! Extra breathing room for the {np}.",
    "Nice, take the win. Want to rework the plan around the new date?",
)
DEADLINE_EARLIER_ACK = (
    "Oof, less time. Want to rework the plan for the {np} around it?",
    "That's annoying. Which bits of the {np} are already done?",
)
DEADLINE_MENTION = (
    ("Made a start on the {np}, finally.",
     "That's the hardest bit done! Starting is always the worst part."),
)

# other people's events -----------------------------------------------------------------------------

EVENT_STATE = (
    "{name}'s {event} is on {date} at {time}. I've promised I'll be in the front row.",
    "My {rel} {name} has {_her} {event} on {date}. Starts {time}, so I'll need to leave work early.",
    "Can you keep track of this for me? {name}'s {event}, {time} on {date}. {_She}'s so excited about it.",
    "Can't miss this one: {date} at {time}, {name}'s {event}. My {rel} would never forgive me.",
)
EVENT_ACK = (
    "{name} will be thrilled you're coming. Is it a big deal in the family?",
    "That sounds like a big day for {name}. Are you bringing anything, flowers or a card?",
    "Aw, a {event}! Want help finding something nice to bring {name}?",
)
EVENT_MOVE_BOTH = (
    "{name}'s {event} got moved, some venue mix-up. It's now {date} at {time}.",
    "Change to {name}'s {event}: it's {date} now, starting {time}.",
)
EVENT_MOVE_DATE_T = ("Update: {name}'s {event} is now {date}, same start time, {time}.",)
EVENT_MOVE_DATE = ("Update: {name}'s {event} has moved to {date}. Same start time though.",)
EVENT_MOVE_TIME = ("{name}'s {event} is still the same day but now starts {_shift}, {time}.",)
EVENT_MOVE_ACK = (
    "Good that you heard in time. Does the change still work for you?",
    "Thanks for the update. Hopefully {name} isn't too stressed about the change!",
)

# near misses: the same kind of date, about someone else ----------------------------------------------

D_APPT_STATE = (
    "{partner}'s got the {np} on {date}, so I'm on dinner duty that day.",
    "Meanwhile {partner} has finally booked the {np} too, {date} for {_her}.",
    "Oh and my {prel} {partner}'s seeing the {np} on {date}, so I'm driving {_her} there.",
)
D_APPT_ACK = (
    "A busy stretch of appointments in your house, then! Is {partner} nervous about it?",
    "Hope it all goes smoothly for {partner}.",
)
D_FLIGHT_STATE = (
    "My {rel} {name} is off to {city} on {date}, so I'm covering {_her} accounts that week.",
    "{name} (my {rel}) flies out to {city} on {date}. Jealous doesn't begin to cover it.",
)
D_FLIGHT_ACK = (
    "Lucky {name}! Maybe a trip of your own is due?",
    "Ooh, {city}. Hope {name} brings you something nice back!",
)
D_EVENT_STATE = (
    "And then {name}'s {event} is {date}, so that month is basically fully booked.",
    "Oh, my {rel} {name} also invited me to {_her} {event} on {date}. Busy month!",
)
D_EVENT_ACK = (
    "Your social calendar is filling up nicely! Are you looking forward to it?",
    "A {event} as well, you'll need a nap in between.",
)

# things mentioned without a date (their date question is unanswerable) ----------------------------------

UNDATED = (
    ("wedding",
     "My {rel} {name} got engaged! No date for the wedding yet, they're still arguing about venues.",
     "Congratulations to {name}! Venue debates can go on for a while. Do you think it'll be a big do?",
     ("When's {name}'s wedding?", "Do you remember when my {rel}'s wedding is?")),
    ("visit",
     "{name} keeps threatening to come and stay with us at some point. Nothing booked, naturally.",
     "Ha, the classic 'at some point'. Would be nice to have {_her} over though.",
     ("When is {name} coming to stay?", "Remind me which dates {name} is visiting?")),
    ("appt",
     "I really should book the {np} at some point, it's been years.",
     "Worth doing. Even just getting it booked takes a weight off.",
     ("When's my {np} appointment?", "Remind me what day I'm seeing the {np}?")),
)

# questions ---------------------------------------------------------------------------------------------

Q_APPT_DATE = (
    "When am I seeing the {np}?",
    "Remind me which day I'm booked in with the {np}?",
    "Do you remember what date the {np} appointment ended up on?",
    "What day's the {np} again?",
    "I need to book time off for the {np}. Which date was it?",
)
Q_APPT_TIME = (
    "What time do I have to be at the {np}?",
    "Remind me what time the {np} appointment is?",
    "Do you remember what time my {np} slot is?",
    "Trying to plan my day around the {np}. What time was it?",
)
Q_ON_DATE = (
    "What have I got on {qdate}?",
    "Is anything happening on {qdate}? I feel like there was something.",
    "Do you remember what's on {qdate}?",
    "Someone's asked if I'm free on {qdate}. Am I? What was on that day?",
    "What was it I had on {qdate}?",
)
Q_FLIGHT_DATE = (
    "What day do I fly out to {city}?",
    "Remind me when the {city} flight is?",
    "When am I off to {city} again?",
    "Do you remember the date of my flight to {city}?",
)
Q_FLIGHT_TIME = (
    "What time does my {city} flight leave?",
    "Remind me what time I'm flying to {city}? Need to book a taxi.",
    "What time's the flight to {city}?",
)
Q_BDAY_DATE = (
    "When's {name}'s birthday?",
    "Remind me when my {rel}'s birthday is?",
    "Do you remember when {name}'s birthday is? Want to order something in time.",
    "What date is my {rel} {name}'s birthday?",
)
Q_DEADLINE_DATE = (
    "When's the {np} due?",
    "Remind me of the {np} deadline?",
    "What's the cut-off for the {np} again?",
    "Do you remember when I have to get the {np} in by?",
)
Q_EVENT_DATE = (
    "When's {name}'s {event}?",
    "Remind me what date {name}'s {event} is?",
    "Do you remember when the {event} is? {name}'s one.",
)
Q_EVENT_TIME = (
    "What time does {name}'s {event} start?",
    "What time should I be at {name}'s {event}?",
    "Remind me when {name}'s {event} kicks off, time-wise?",
)
Q_D_APPT_DATE = (
    "When is {partner}'s {np} appointment?",
    "Remind me which day {partner} is seeing the {np}?",
)
Q_D_FLIGHT_DATE = ("When does {name} fly to {city}?", "Remind me when {name} heads off to {city}?")
Q_D_EVENT_DATE = ("When's {name}'s {event}?", "Do you remember the date of {name}'s {event}?")

U_BDAY = (
    "What day does my {rel}'s birthday fall on?",
    "Remind me when my {rel}'s birthday is?",
    "Do you know when my {rel}'s birthday is? I want to get something in the post.",
)
U_RETURN = ("When do I fly back from {city}?", "What's the date of my return flight from {city}?")
U_DEADLINE_TIME = ("What time on the day does the {np} have to be submitted?",
                   "Is there a cut-off time for the {np}, like noon or midnight? Which one?")
U_EVENT_END = ("What time does {name}'s {event} finish?", "How late does {name}'s {event} go on?")
U_D_APPT_TIME = ("What time is {partner}'s {np} appointment?",)
U_D_FLIGHT_TIME = ("What time is {name}'s flight to {city}?",)
U_D_EVENT_TIME = ("What time does {name}'s {event} start?",)
U_APPT_NEVER = ("When's my {np} appointment?", "Remind me when I'm seeing the {np}?")

Q_PREFIX = (
    ("Sorting out my diary. ", False),
    ("Sorry, brain like a sieve today. ", False),
    ("Calendar question: ", False),
    ("Before I double-book myself, ", True),
    ("Right, planning the month. ", False),
    ("Morning! Hope you're well. ", False),
    ("Scheduling brain is off today, so ", True),
    ("Date check: ", False),
    ("My phone died and I lost my notes, so: ", False),
    ("Evening. ", False),
)
Q_SUFFIX = (" Thanks!", " I've completely lost track.", " No rush.", " Cheers.")

_FMT = string.Formatter()


def fill(template: str, slots: dict) -> tuple[str, list[str]]:
    """Format ``template``; return the text and the values it inserted (fields not starting with _)."""
    out: list[str] = []
    values: list[str] = []
    for literal, field, _spec, _conv in _FMT.parse(template):
        out.append(literal)
        if field is None:
            continue
        value = slots[field]
        out.append(value)
        if not field.startswith("_") and value and value not in values:
            values.append(value)
    return "".join(out), values


# -- building blocks ---------------------------------------------------------------------------------


class _T:
    """A turn under construction (session and index are set when the sessions are assembled)."""

    def __init__(self, role: str, content: str, values, facts=()):
        self.role = role
        self.content = content
        self.values = tuple(values)
        self.facts = tuple(facts)
        self.session = 0
        self.index = 0


def _pair(user_tpl, asst_tpl, slots, facts=()):
    u, uv = fill(user_tpl, slots)
    a, av = fill(asst_tpl, slots)
    return [_T("user", u, uv, facts), _T("assistant", a, av)]


class _Fact:
    def __init__(self, fid: str, kind: str, slots: dict, on_words=(), year_known=False):
        self.fid = fid
        self.kind = kind
        self.slots = slots
        self.on_words = tuple(on_words)
        self.year_known = year_known
        self.dates: list = []  # [(date, _T)]
        self.times: list = []  # [((h, m), _T)]
        self.year: int | None = None
        self.year_turn: _T | None = None
        self.session = 1
        self.move_session = 0  # 0: never rescheduled

    @property
    def date(self):
        return self.dates[-1][0]

    @property
    def time(self):
        return self.times[-1][0] if self.times else None


def _pronouns(gender: str) -> dict:
    if gender == "f":
        return {"_she": "she", "_She": "She", "_her": "her", "_hers": "hers"}
    return {"_she": "he", "_She": "He", "_her": "him", "_hers": "his"}


def _possessive_pronouns(gender: str) -> dict:
    """For templates where {_her} is a possessive ("has her recital")."""
    return {"_she": "she" if gender == "f" else "he", "_She": "She" if gender == "f" else "He",
            "_her": "her" if gender == "f" else "his"}


class _Alloc:
    """Hands out values that are unique for one user."""

    def __init__(self, rng: random.Random, first: _dt.date, last: _dt.date):
        self.rng = rng
        self.first, self.last = first, last
        self.days: list = []  # (month, day) used
        self.times: list = []  # (h12, minute) used
        self.years: list = []
        self.names: list = []
        self.rels: list = []
        self.window = [last + _dt.timedelta(days=k) for k in range(6, 101)]

    def _free(self, d):
        return (d.month, d.day) not in self.days and not (d.month == 2 and d.day == 29)

    def _take(self, d):
        self.days.append((d.month, d.day))
        return d

    def future(self, month: int | None = None, near: _dt.date | None = None,
               weekday_only: bool = False) -> _dt.date:
        pool = [d for d in self.window if self._free(d) and not (weekday_only and d.weekday() == 6)]
        if near is not None:
            close = [d for d in pool if 3 <= abs((d - near).days) <= 21]
            pool = close or pool
        if month is not None:
            same = [d for d in pool if d.month == month]
            pool = same or pool
        return self._take(self.rng.choice(pool))

    def any_day(self, month: int | None = None) -> _dt.date:
        while True:
            m = month or self.rng.randint(1, 12)
            d = _dt.date(2023, m, self.rng.randint(1, 28 if m == 2 else (30 if m in (4, 6, 9, 11) else 31)))
            if self._free(d):
                return self._take(d)

    def past(self) -> _dt.date:
        while True:
            y = self.rng.randint(2010, 2022)
            if y in self.years:
                continue
            d = _dt.date(y, self.rng.randint(1, 12), self.rng.randint(1, 28))
            if self._free(d):
                self.years.append(y)
                return self._take(d)

    def time(self, lo: int, hi: int) -> tuple[int, int]:
        while True:
            t = (self.rng.randint(lo, hi), self.rng.choice(MINUTES))
            key = (t[0] % 12, t[1])
            if key not in self.times:
                self.times.append(key)
                return t

    def person(self, rels, gender: str | None = None):
        rels = [r for r in rels if r not in self.rels] or [r for r in REL_N if r not in self.rels]
        rel = self.rng.choice(rels)
        if rel in REL_F or rel in PARTNER_F and rel != "partner":
            g = "f"
        elif rel in REL_M or rel in PARTNER_M and rel != "partner":
            g = "m"
        else:
            g = gender or self.rng.choice("fm")
        pool = [n for n in (FEMALE if g == "f" else MALE) if n not in self.names]
        name = self.rng.choice(pool)
        self.names.append(name)
        self.rels.append(rel)
        return name, rel, g


# -- one user ------------------------------------------------------------------------------------------


def _session_dates(rng: random.Random, k: int) -> list[_dt.datetime]:
    start = _dt.date(2023, 1, 4) + _dt.timedelta(days=rng.randint(0, 815))  # up to late March 2025
    out = []
    day = start
    for i in range(k):
        if i:
            day = day + _dt.timedelta(days=rng.randint(3, 27))
        out.append(_dt.datetime(day.year, day.month, day.day, rng.randint(7, 21), rng.randint(0, 59)))
    return out


def _shift_word(old, new) -> str:
    return "later" if new[0] * 60 + new[1] > old[0] * 60 + old[1] else "earlier"


def _make_user(rng: random.Random, user_id: str, n_questions: int) -> User:
    k = rng.randint(3, 5)
    sdates = _session_dates(rng, k)
    al = _Alloc(rng, sdates[0].date(), sdates[-1].date())
    blocks: dict[int, list[list[_T]]] = {s: [] for s in range(1, k + 1)}
    late_blocks: dict[int, list[list[_T]]] = {s: [] for s in range(1, k + 1)}  # go after the others
    facts: list[_Fact] = []
    unans: list[tuple[str, tuple[str, ...], dict]] = []  # (fact id, templates, slots)

    has_partner = rng.random() < 0.8
    partner = al.person(PARTNER_F + PARTNER_M) if has_partner else None

    def place(fact: _Fact, movable: bool):
        if movable and k >= 2:
            fact.session = rng.randint(1, k - 1)
        else:
            fact.session = rng.randint(1, k)

    # which facts get rescheduled
    appt_kinds = rng.sample(range(len(APPTS)), 2)
    movable_ids = ["appt1", "appt2", "flight", "deadline", "event"]
    n_moves = 1 if rng.random() < 0.45 else 2
    moving = rng.sample(movable_ids, n_moves)

    def time_move_mode(fid):
        return rng.choice(("both", "both", "date_t", "date", "time"))

    # appointments
    for i, ak in enumerate(appt_kinds, 1):
        np_, words, reason = APPTS[ak]
        f = _Fact(f"appt{i}", "appointment", {"np": np_, "reason": reason}, words, year_known=True)
        f.slots["_akind"] = ak
        facts.append(f)
    # flight
    if rng.random() < 0.85:
        city = rng.choice(CITIES)
        facts.append(_Fact("flight", "flight", {"city": city}, (city,), year_known=True))
    # birthdays
    n_bday = 2 if rng.random() < 0.55 else 1
    for i in range(1, n_bday + 1):
        name, rel, g = al.person(REL_F + REL_M + REL_N[:2])
        words = (name, rel) if rel not in REL_N else (name,)
        f = _Fact(f"bday{i}", "birthday", {"name": name, "rel": rel, "_g": g}, words)
        facts.append(f)
    # milestones
    ms_pool = [m for m in MILESTONES if has_partner or not m[1]]
    for ms in rng.sample(ms_pool, rng.choice((1, 2, 2))):
        slots = {"_ms": ms}
        if ms[0] == "job":
            slots["company"] = rng.choice(COMPANIES)
        if ms[0] == "pet":
            slots["pet"] = rng.choice(PETS)
            slots["_pet_them"] = rng.choice(("her", "him"))
        if ms[1]:
            slots["partner"] = partner[0]
        facts.append(_Fact(f"ms_{ms[0]}", "milestone", slots))
    # deadline
    if rng.random() < 0.85:
        dk = rng.randrange(len(DEADLINES))
        np_, words = DEADLINES[dk]
        facts.append(_Fact("deadline", "deadline", {"np": np_}, words, year_known=True))
    # event
    ev_order = rng.sample(range(len(EVENTS)), len(EVENTS))
    ev_main = None
    for ei in ev_order:
        if any(r not in al.rels for r in EVENTS[ei][2]):
            ev_main = ei
            break
    event, ewords, erels, _hours = EVENTS[ev_main]
    name, rel, g = al.person(erels)
    facts.append(_Fact("event", "event", {"name": name, "rel": rel, "event": event, "_g": g},
                       ewords + (name,), year_known=True))

    byid = {f.fid: f for f in facts}
    moving = [m for m in moving if m in byid]

    # ---- allocate dates and times (distinct (month, day) and distinct clock times per user)
    for f in facts:
        if f.kind in ("appointment", "flight", "deadline", "event"):
            f.dates.append([al.future(weekday_only=f.kind in ("appointment", "deadline")), None])
        if f.kind == "appointment":
            f.times.append([al.time(8, 17), None])
        elif f.kind == "flight":
            f.times.append([al.time(6, 21), None])
        elif f.kind == "event":
            lo, hi = EVENTS[ev_main][3]
            f.times.append([al.time(lo, hi), None])
        elif f.kind == "birthday":
            other = byid.get("bday1")
            same_month = f.fid == "bday2" and rng.random() < 0.6
            f.dates.append([al.any_day(other.date.month if same_month else None), None])
        elif f.kind == "milestone":
            d = al.past()
            f.dates.append([d, None])
            if rng.random() < 0.6:
                f.year = d.year

    # ---- statements
    def render(f: _Fact, with_weekday_ok=True):
        d = f.date
        if f.kind == "milestone" or f.kind == "birthday":
            return render_date(rng, d)
        return render_date(rng, d, weekday=with_weekday_ok and rng.random() < 0.45,
                           year=rng.random() < 0.12)

    for f in facts:
        movable = f.fid in moving
        place(f, movable)
        slots = dict(f.slots)
        slots["date"] = render(f)
        slots["date_echo"] = echo_date(rng, f.date)
        if f.times:
            slots["time"] = render_time(rng, f.time)
            slots["time_echo"] = echo_time(f.time)
        if f.kind == "appointment":
            blk = _pair(rng.choice(APPT_STATE), rng.choice(APPT_ACK), slots, (f.fid,))
        elif f.kind == "flight":
            h = f.time[0]
            slots["_aside"] = (", so that's a horrible alarm" if h < 9 else
                               ", so at least I get a lie-in first" if h >= 15 else "")
            blk = _pair(rng.choice(FLIGHT_STATE), rng.choice(FLIGHT_ACK), slots, (f.fid,))
        elif f.kind == "birthday":
            slots.update(_pronouns(slots["_g"]))
            blk = _pair(rng.choice(BDAY_STATE), rng.choice(BDAY_ACK), slots, (f.fid,))
        elif f.kind == "milestone":
            ms = slots["_ms"]
            if f.year is not None:
                slots["year"] = str(f.year)
                tpl = rng.choice(ms[2])
                yp = rng.choice((", {year}", " {year}", ", back in {year}"))
            else:
                tpl = rng.choice(ms[2])
                yp = ""
            tpl = tpl.replace("{year_part}", yp)
            blk = _pair(tpl, rng.choice(MILESTONE_ACK), slots, (f.fid,))
            if f.year is not None:
                f.year_turn = blk[0]
        elif f.kind == "deadline":
            blk = _pair(rng.choice(DEADLINE_STATE), rng.choice(DEADLINE_ACK), slots, (f.fid,))
        else:  # event
            slots.update(_possessive_pronouns(slots["_g"]))
            blk = _pair(rng.choice(EVENT_STATE), rng.choice(EVENT_ACK), slots, (f.fid,))
        f.dates[-1][1] = blk[0]
        if f.times:
            f.times[-1][1] = blk[0]
        blocks[f.session].append(blk)

    # ---- reschedules, in a later session
    for fid in moving:
        f = byid[fid]
        f.move_session = rng.randint(f.session + 1, k)
        old_d, old_t = f.date, f.time
        mode = "date" if f.kind == "deadline" else time_move_mode(fid)
        slots = dict(f.slots)
        if f.kind == "event":
            slots.update(_possessive_pronouns(slots["_g"]))
        new_d = old_d
        if mode in ("both", "date_t", "date"):
            new_d = al.future(near=old_d, weekday_only=f.kind in ("appointment", "deadline"))
        new_t = old_t
        if mode in ("both", "time"):
            lo, hi = {"appointment": (8, 17), "flight": (6, 21)}.get(f.kind, EVENTS[ev_main][3])
            new_t = al.time(lo, hi)
        slots["date"] = render_date(rng, new_d, weekday=rng.random() < 0.4)
        slots["old_date"] = echo_date(rng, old_d)
        if new_t is not None:
            slots["time"] = render_time(rng, new_t)
            slots["_shift"] = _shift_word(old_t, new_t)
        table = {
            "appointment": (APPT_MOVE_BOTH, APPT_MOVE_DATE_T, APPT_MOVE_DATE, APPT_MOVE_TIME, APPT_MOVE_ACK),
            "flight": (FLIGHT_MOVE_BOTH, FLIGHT_MOVE_DATE_T, FLIGHT_MOVE_DATE, FLIGHT_MOVE_TIME,
                       FLIGHT_MOVE_ACK),
            "event": (EVENT_MOVE_BOTH, EVENT_MOVE_DATE_T, EVENT_MOVE_DATE, EVENT_MOVE_TIME, EVENT_MOVE_ACK),
        }
        if f.kind == "deadline":
            later = new_d > old_d
            tpl = rng.choice(DEADLINE_LATER if later else DEADLINE_EARLIER)
            ack = rng.choice(DEADLINE_LATER_ACK if later else DEADLINE_EARLIER_ACK)
        else:
            both, date_t, date_only, time_only, acks = table[f.kind]
            tpl = rng.choice({"both": both, "date_t": date_t, "date": date_only, "time": time_only}[mode])
            ack = rng.choice(acks)
        blk = _pair(tpl, ack, slots, (f.fid,))
        if mode in ("both", "date_t", "date"):
            f.dates.append([new_d, blk[0]])
        if mode in ("both", "date_t", "time"):
            f.times.append([new_t, blk[0]])
        blocks[f.move_session].append(blk)

    # ---- a mention without values, in a later session
    for f in facts:
        pool = {"appointment": APPT_MENTION, "flight": FLIGHT_MENTION, "deadline": DEADLINE_MENTION}.get(f.kind)
        if pool and f.session < k and rng.random() < 0.4:
            s = rng.randint(f.session + 1, k)
            u, a = rng.choice(pool)
            late_blocks[s].append(_pair(u, a, dict(f.slots)))

    # ---- near misses: the same kind of date for someone else
    near: list[_Fact] = []
    if has_partner and rng.random() < 0.85:
        mine = [f for f in facts if f.kind == "appointment"]
        anchor = rng.choice(mine)
        choices = [a for a in APPTS if a[0] not in _NOT_FOR_OTHERS]
        if rng.random() < 0.5 and anchor.slots["np"] not in _NOT_FOR_OTHERS:
            np_, words, _r = APPTS[anchor.slots["_akind"]]
        else:
            np_, words, _r = rng.choice(choices)
        pname, prel, pg = partner
        slots = {"partner": pname, "prel": prel, "np": np_}
        slots.update(_pronouns(pg))
        f = _Fact("other_appt", "other_appt", slots, words, year_known=True)
        f.dates.append([al.future(month=anchor.date.month, weekday_only=True), None])
        near.append(f)
        unans.append(("other_appt_time", U_D_APPT_TIME, slots))
    if "flight" in byid and rng.random() < 0.6:
        city = rng.choice([c for c in CITIES if c != byid["flight"].slots["city"]])
        name, rel, g = al.person(("colleague", "flatmate", "cousin", "friend", "neighbour"))
        slots = {"name": name, "rel": rel, "city": city}
        slots.update(_possessive_pronouns(g))
        f = _Fact("other_flight", "other_flight", slots, (city, name), year_known=True)
        f.dates.append([al.future(month=byid["flight"].date.month), None])
        near.append(f)
        unans.append(("other_flight_time", U_D_FLIGHT_TIME, slots))
    if rng.random() < 0.65:
        options = [ei for ei in ev_order if ei != ev_main and any(r not in al.rels for r in EVENTS[ei][2])]
        ei = options[0]
        ev2, w2, r2, _h = EVENTS[ei]
        name, rel, g = al.person(r2)
        slots = {"name": name, "rel": rel, "event": ev2}
        slots.update(_possessive_pronouns(g))
        f = _Fact("other_event", "other_event", slots, w2 + (name,), year_known=True)
        f.dates.append([al.future(month=byid["event"].date.month), None])
        near.append(f)
        unans.append(("other_event_time", U_D_EVENT_TIME, slots))
    table = {"other_appt": (D_APPT_STATE, D_APPT_ACK), "other_flight": (D_FLIGHT_STATE, D_FLIGHT_ACK),
             "other_event": (D_EVENT_STATE, D_EVENT_ACK)}
    for f in near:
        st, ack = table[f.kind]
        slots = dict(f.slots)
        slots["date"] = render_date(rng, f.date, weekday=rng.random() < 0.3)
        blk = _pair(rng.choice(st), rng.choice(ack), slots, (f.fid,))
        f.dates[-1][1] = blk[0]
        f.session = rng.randint(1, k)
        blocks[f.session].append(blk)
    facts.extend(near)

    # ---- things mentioned with no date
    used_np = [f.slots["np"] for f in facts if "np" in f.slots]
    for kind, utpl, atpl, qtpls in rng.sample(UNDATED, rng.choice((1, 2, 2))):
        if kind == "appt":
            np_ = rng.choice([a[0] for a in APPTS if a[0] not in used_np])
            used_np.append(np_)
            slots = {"np": np_}
        else:
            rels = ("cousin", "friend", "sister", "brother", "colleague") if kind == "wedding" else \
                ("friend", "aunt", "uncle", "cousin", "grandma", "grandad", "flatmate")
            name, rel, g = al.person(rels)
            slots = {"name": name, "rel": rel}
            slots.update(_pronouns(g))
        late_blocks[rng.randint(1, k)].insert(0, _pair(utpl, atpl, slots))
        unans.append((f"undated_{kind}", qtpls, slots))

    # ---- other unanswerables, close to what was said
    if "flight" in byid:
        unans.append(("return_flight", U_RETURN, byid["flight"].slots))
    if "deadline" in byid:
        unans.append(("deadline_time", U_DEADLINE_TIME, byid["deadline"].slots))
    unans.append(("event_end", U_EVENT_END, byid["event"].slots))
    family = [r for r in REL_F + REL_M if r not in al.rels and r not in ("goddaughter", "godson", "stepmum",
                                                                          "stepdad")]
    for rel in rng.sample(family, 2):
        unans.append((f"birthday_{rel}", U_BDAY, {"rel": rel}))
    never = [a[0] for a in APPTS if a[0] not in used_np]
    unans.append(("appt_never", U_APPT_NEVER, {"np": rng.choice(never)}))
    for f in facts:
        if f.kind == "milestone" and f.year is None:
            unans.append((f"{f.fid}_year", f.slots["_ms"][4], f.slots))

    # ---- assemble the sessions
    fillers = rng.sample(FILLERS, len(FILLERS))
    turns: list[_T] = []
    for s in range(1, k + 1):
        g_u, g_a, _again = rng.choice([g for g in GREETINGS if s > 1 or not g[2]])
        seq = [_pair(g_u, g_a, {})]
        n_fill = rng.randint(1, 2)
        n_fill = max(n_fill, 2 - len(blocks[s]) - len(late_blocks[s]))
        body = blocks[s] + [_pair(*fillers.pop(), {}) for _ in range(n_fill)]
        rng.shuffle(body)
        seq += body + late_blocks[s]
        if rng.random() < 0.5:
            seq.append(_pair(*rng.choice(CLOSINGS), {}))
        for i, t in enumerate(t for blk in seq for t in blk):
            t.session, t.index = s, i
            turns.append(t)

    def stamp(t: _T) -> str:
        return (sdates[t.session - 1] + _dt.timedelta(minutes=t.index)).strftime("%Y-%m-%dT%H:%M")

    user = User(user_id=user_id)
    user.turns = [Turn(role=t.role, content=t.content, session=t.session, date=stamp(t), index=t.index,
                       facts=t.facts, values=t.values) for t in turns]

    # ---- questions
    on_counts: dict[str, int] = {}
    for f in facts:
        for w in f.on_words[:1]:
            on_counts[w] = on_counts.get(w, 0) + 1

    def hist(entries, aliases):
        current = entries[-1][0]
        ev = tuple((t.session, t.index) for v, t in entries if v == current)
        stale = []
        for v, _t in entries:
            if v != current:
                for a in aliases(v):
                    if a not in stale:
                        stale.append(a)
        return aliases(current), tuple(stale), ev

    cands: dict[str, list] = {}  # fact id -> [(priority, fact id, templates, slots, answers, stale, evidence)]

    def add(f: _Fact, tpls, slots, answers, stale, evidence):
        cands.setdefault(f.fid, []).append((1 if stale else 0, f.fid, tpls, slots, answers, stale, evidence))

    date_tpls = {"appointment": Q_APPT_DATE, "flight": Q_FLIGHT_DATE, "birthday": Q_BDAY_DATE,
                 "deadline": Q_DEADLINE_DATE, "event": Q_EVENT_DATE, "other_appt": Q_D_APPT_DATE,
                 "other_flight": Q_D_FLIGHT_DATE, "other_event": Q_D_EVENT_DATE}
    time_tpls = {"appointment": Q_APPT_TIME, "flight": Q_FLIGHT_TIME, "event": Q_EVENT_TIME}
    for f in facts:
        answers, stale, ev = hist(f.dates, lambda d, yk=f.year_known: date_aliases(d, yk))
        tpls = f.slots["_ms"][3] if f.kind == "milestone" else date_tpls[f.kind]
        add(f, tpls, f.slots, answers, stale, ev)
        if f.times and f.kind in time_tpls:
            answers, stale, ev = hist(f.times, time_aliases)
            add(f, time_tpls[f.kind], f.slots, answers, stale, ev)
        if f.kind == "milestone" and f.year is not None:
            add(f, f.slots["_ms"][4], f.slots, (str(f.year),), (), ((f.year_turn.session, f.year_turn.index),))
        if f.on_words and on_counts.get(f.on_words[0], 0) == 1 and not f.kind.startswith("other"):
            ev = tuple((t.session, t.index) for v, t in f.dates if v == f.date)
            qslots = {"qdate": render_date(rng, f.date, weekday=f.year_known and rng.random() < 0.3)}
            add(f, Q_ON_DATE, qslots, f.on_words, (), ev)

    groups = list(cands.values())
    for g in groups:
        rng.shuffle(g)
        g.sort(key=lambda c: -c[0])
    rng.shuffle(groups)
    groups.sort(key=lambda g: -g[0][0])
    n_mem = round(n_questions * 0.8)
    picked = []
    while len(picked) < n_mem and any(groups):
        for g in groups:
            if g and len(picked) < n_mem:
                picked.append(g.pop(0))

    n_un = n_questions - n_mem
    un_picked = rng.sample(unans, min(n_un, len(unans)))

    def phrase(tpls, slots):
        tpl = rng.choice(tpls)
        text, values = fill(tpl, slots)
        r = rng.random()
        if r < 0.35:
            pre, lower = rng.choice(Q_PREFIX)
            if lower and not tpl.startswith("{") and not tpl.startswith(("I ", "I'")):
                text = text[0].lower() + text[1:]
            text = pre + text
        elif r < 0.45:
            text = text + rng.choice(Q_SUFFIX)
        return text, tuple(values)

    questions = []
    for _p, fid, tpls, slots, answers, stale, ev in picked:
        text, values = phrase(tpls, slots)
        questions.append(dict(fact=fid, text=text, kind="memory", answers=tuple(answers),
                              stale=tuple(stale), evidence=tuple(sorted(ev)), values=values))
    for fid, tpls, slots in un_picked:
        text, values = phrase(tpls, slots)
        questions.append(dict(fact=f"unsaid_{fid}", text=text, kind="unanswerable", values=values))
    rng.shuffle(questions)
    user.questions = [Question(key=f"{user_id}-q{i:02d}", user_id=user_id, **q) for i, q in enumerate(questions)]
    return user


def generate(seed: int, users: int = 5, questions: int = 20) -> list[User]:
    """``users`` users, each with 3 to 5 sessions and about ``questions`` questions (80% memory)."""
    master = random.Random(seed)
    out = []
    for n in range(users):
        rng = random.Random(master.getrandbits(64))
        out.append(_make_user(rng, f"dates-{seed}-{n:02d}", questions))
    return out

"""Fact kinds about dates, plans and learning: birthday, floor, language, trip, degree, collection."""

from __future__ import annotations

from recall_core.training.families.passing.common import Ctx, Kind
from recall_core.training.families.passing.pools import (
    COLLECTIONS,
    DEGREES,
    DESTINATIONS,
    LANGUAGES,
    ORDINALS,
    _ordinal_suffix,
)


def _birthday(ctx: Ctx) -> dict:
    said, aliases = ctx.date()
    form = "on the " if said[0].isdigit() and not said.split()[0].isdigit() else "on "
    return {"bday": said, "_on": form, "fact": "birthday", "answers": aliases, "value": said}


def _birthday_near(ctx: Ctx, s: dict) -> dict:
    said, _ = ctx.date()
    form = "on the " if said[0].isdigit() and not said.split()[0].isdigit() else "on "
    return {"dname": ctx.name("f"), "dbday": said, "_don": form}


BIRTHDAY = Kind(
    key="birthday",
    make=_birthday,
    bodies=[
        ("I'm trying to be organised for once. My birthday's {_on}{bday}, and this year I'd like to do a "
         "low-key dinner with a handful of friends rather than a big party where I talk to nobody "
         "properly. {_near}Could you help me write a short, casual invite message for the group chat? "
         "Something that doesn't sound like a corporate event.",
         "{_ack}How about: \"Hello lovely people! I'm doing a small, low-key birthday dinner and it would "
         "make my year if you came. [Place], [time]. No presents, just turn up hungry. Let me know if "
         "you're in!\" Swap in the details and add an emoji or two if that's your style.", None),
        ("Does anyone else find it awkward when their birthday falls in the middle of the week? Mine's "
         "{_on}{bday}, and this year it lands slap bang in a week full of meetings. {_near}Any ideas for "
         "making a weekday birthday feel a bit special without taking the whole day off? I don't want "
         "to just sit at my desk eating a sad supermarket cake.",
         "{_ack}A few ideas: book a nice breakfast before work, take a long lunch somewhere you love, "
         "block out the last hour of the afternoon, or plan a small dinner that evening and move the big "
         "celebration to the weekend. Treat yourself to one small thing you wouldn't normally buy.", None),
    ],
    q=["When did I say my birthday is?", "What date does my birthday fall on?"],
    c=["when my birthday is", "what day my birthday falls on"],
    n=["my birthday"],
    acks=["Happy almost-birthday! "],
    near=["(My friend {dname}'s is {_don}{dbday}, so we sometimes join forces.) "],
    near_make=_birthday_near,
)


def _floor(ctx: Ctx) -> dict:
    pool = [(_ordinal_suffix(k), v, f"floor {k}") for k, v in ORDINALS.items()]
    f = ctx.reg.pick(ctx.rng, pool)
    said = ctx.rng.choice(f[:2])
    return {"floor": said, "fact": "flat_floor", "answers": f, "value": said}


def _floor_near(ctx: Ctx, s: dict) -> dict:
    pool = [(_ordinal_suffix(k), v, f"floor {k}") for k, v in ORDINALS.items()]
    f = ctx.reg.pick(ctx.rng, pool)
    return {"dname": ctx.name("f"), "dfloor": ctx.rng.choice(f[:2])}


FLOOR = Kind(
    key="flat_floor",
    make=_floor,
    bodies=[
        ("The lift in our building has been broken for over a week now. We're on the {floor} floor, so "
         "every food shop has turned into a cardio session and I'm seriously considering ordering "
         "everything online forever. {_near}Is there a polite but firm way to email the building "
         "management about it? I've already sent one friendly message that got ignored.",
         "Here's a firmer version:\n\n\"Dear [Name], I'm following up on my message of [date] about the "
         "broken lift, which has now been out of service for over a week. This is causing real "
         "difficulty for residents on the upper floors. Could you confirm when the repair is scheduled? "
         "Many thanks.\"\n\nPolite, specific, and it asks for a date.", None),
        ("Plant question. I've got a little balcony, but since we're up on the {floor} floor it gets "
         "properly windy and my herbs keep getting flattened. {_near}What plants would actually survive up "
         "here? I'd like something green and maybe a bit of colour, but nothing that needs babying or "
         "daily attention.",
         "Wind-tolerant options: lavender, rosemary and thyme (they love it tough), ornamental grasses, "
         "sedums and other succulents, and hardy geraniums for a bit of colour. Use heavy pots, group "
         "them together so they shelter each other, and water a little more than you think, since wind "
         "dries them out.", None),
    ],
    q=["What floor is my flat on?", "Which floor do I live on?"],
    c=["what floor my flat is on", "which floor we live on"],
    n=[],
    near=["My friend {dname} is on the {dfloor} floor of her block and has the exact same problem. "],
    near_make=_floor_near,
)


def _language(ctx: Ctx) -> dict:
    lang = ctx.reg.pick(ctx.rng, LANGUAGES)
    return {"lang": lang, "fact": "language", "answers": (lang,), "value": lang}


def _language_near(ctx: Ctx, s: dict) -> dict:
    return {"dlang": ctx.reg.pick(ctx.rng, LANGUAGES)}


LANGUAGE = Kind(
    key="language",
    make=_language,
    bodies=[
        ("Motivation slump. I've been learning {lang} on and off, purely for my own amusement, and I've "
         "hit that wall where I'm too good for the beginner stuff but far too rubbish for anything real. "
         "{_near}How do people get through the intermediate plateau? I can put in maybe half an hour a "
         "day, more at weekends.",
         "{_ack}The plateau usually breaks when you switch from studying the language to using it: graded "
         "readers, podcasts for learners, and a weekly conversation exchange or tutor. Spend your half "
         "hour on real content slightly above your level, and keep a small notebook of phrases you "
         "actually want to say.", None),
        ("Can you recommend ways to sneak more listening practice into an ordinary day? My {lang} classes "
         "are on Wednesday evenings and I do the homework, but my ears are way behind my reading. "
         "{_near}Podcasts, radio, that kind of thing, or any other tricks? I have a long walk to the "
         "station each morning if that helps.",
         "{_ack}That walk is perfect. Try podcasts made for learners (they speak slower and explain "
         "things), then move on to native radio or podcasts on topics you already know well. Switch "
         "your phone's language for a bit, watch shows with subtitles in the same language, and listen "
         "to the same short clip several times rather than lots of new ones.", None),
    ],
    q=["Which language did I say I'm learning?", "What language am I trying to pick up?"],
    c=["which language I'm learning", "what language my evening classes are in"],
    n=["the language I'm learning"],
    acks=["{lang} is a great choice! "],
    near=["My flatmate is doing {dlang} and she's miles ahead of me, which is annoying. "],
    near_make=_language_near,
)


def _trip(ctx: Ctx) -> dict:
    dest = ctx.reg.pick(ctx.rng, DESTINATIONS)
    return {"dest": dest, "fact": "trip", "answers": (dest,), "value": dest}


def _trip_change(ctx: Ctx, old: dict) -> dict:
    new = _trip(ctx)
    new["old"] = old["dest"]
    return new


def _trip_near(ctx: Ctx, s: dict) -> dict:
    return {"dname": ctx.anyone()[0], "ddest": ctx.reg.pick(ctx.rng, DESTINATIONS)}


TRIP = Kind(
    key="trip",
    make=_trip,
    bodies=[
        ("Packing question. For our trip to {dest} in a few weeks I'm determined to go hand luggage only, "
         "but I'm a chronic overpacker and I know it. {_near}What's your best system for fitting ten "
         "days into a small cabin bag? I always end up bringing four jumpers 'just in case' and wearing "
         "one.",
         "{_ack}Plan outfits around a two- or three-colour palette so everything mixes, and limit "
         "yourself to two pairs of shoes (wear the bulkiest). Packing cubes help, and so does rolling. "
         "Bring travel-size toiletries, plan one laundry session mid-trip, and wear your jumper and "
         "jacket on the plane.", None),
        ("I need help with an out-of-office message. I'll be away for a fortnight, mostly wandering "
         "around {dest}, and I'd like something polite that doesn't invite people to email me 'just one "
         "quick thing'. {_near}Could you draft a short one? Friendly but firm, and it should point people "
         "to my colleague for anything urgent.",
         "Here you go:\n\n\"Thanks for your email. I'm on leave until [date] with no access to email. "
         "For anything urgent, please contact [Name] at [address]. Otherwise I'll reply when I'm back.\""
         "\n\nNo promise to check in, which is the whole point.", None),
    ],
    change=[
        ("Slight change of plan on the holiday front: {old} is off because the flight prices went "
         "absurd, so we've booked {dest} instead. Honestly it might even be better. {_near}How far ahead "
         "should I sort travel insurance, and is there anything I should watch out for when you change a "
         "trip like this?",
         "{_ack}Buy travel insurance as soon as you've booked, so you're covered for cancellation from "
         "day one. When changing plans, check the cancellation terms on anything already booked, update "
         "the destination on any existing policy, and look up entry or visa requirements for the new "
         "country.", None),
        ("Plot twist: we're not going to {old} after all. A friend talked us into {dest} instead and we "
         "booked it last night in a fit of spontaneity. {_near}Can you help me make a rough to-do list "
         "for the next few weeks so I don't forget passports, cancelling the old bookings and all the "
         "boring stuff?",
         "{_ack}Rough list: cancel or amend the old bookings (check refund deadlines), check passport "
         "expiry and any visa or entry rules, sort travel insurance, book airport transport, tell your "
         "bank, download offline maps, arrange pet or plant care, and pack a few days before. Tick them "
         "off as you go.", None),
    ],
    change_make=_trip_change,
    q=["Where am I going on holiday?", "Where's my next trip to?"],
    c=["where I'm off to on holiday", "where my upcoming trip is"],
    n=["my holiday destination"],
    acks=["{dest}, how exciting! ", "Ooh, {dest}! "],
    near=["My colleague {dname} just got back from {ddest} and won't stop showing everyone photos. "],
    near_make=_trip_near,
)


def _degree(ctx: Ctx) -> dict:
    d = ctx.reg.pick(ctx.rng, DEGREES)
    return {"deg": d[0], "fact": "degree", "answers": d, "value": d[0]}


def _degree_near(ctx: Ctx, s: dict) -> dict:
    return {"ddeg": ctx.reg.pick(ctx.rng, DEGREES)[0]}


DEGREE = Kind(
    key="degree",
    make=_degree,
    bodies=[
        ("I'm helping my cousin with her personal statement for university and having flashbacks. When I "
         "applied to do {deg}, I wrote something so earnest it makes me cringe now. {_near}What makes a "
         "good personal statement these days? She has a draft but it reads like a list of achievements "
         "with no personality.",
         "Good statements show curiosity rather than list achievements. Suggest she picks two or three "
         "moments that sparked her interest, says what she did about it (reading, projects, work), and "
         "what she learned. Every achievement should answer 'so what?'. Reading it aloud is the best test "
         "of whether it sounds like her.", None),
        ("Career-change daydream. I did {deg} at uni and then wandered into something completely "
         "unrelated, and lately I've been wondering whether a part-time course in something new would be "
         "worth it. My evenings are fairly free at the moment, which is half the problem. {_near}How do "
         "people usually weigh that kind of decision? Cost, time, whether it actually leads anywhere?",
         "{_ack}A useful approach: talk to two or three people already doing the job you'd be aiming for, "
         "look at real job adverts to see which qualifications they ask for, and add up the full cost in "
         "money and evenings. Many people try a short, cheap course first to test their interest before "
         "committing.", None),
    ],
    q=["What did I study at uni?", "What was my degree in?"],
    c=["what I studied at university", "what my degree was in"],
    n=["my degree subject"],
    acks=["Ah, {deg}, how interesting! "],
    near=["(My housemate studied {ddeg} and now sells insurance, so I'm in good company.) "],
    near_make=_degree_near,
)


def _collection(ctx: Ctx) -> dict:
    c = ctx.reg.pick(ctx.rng, COLLECTIONS)
    return {"coll": c[0], "fact": "collection", "answers": c, "value": c[0]}


def _collection_near(ctx: Ctx, s: dict) -> dict:
    return {"dcoll": ctx.reg.pick(ctx.rng, COLLECTIONS)[0]}


COLLECTION = Kind(
    key="collection",
    make=_collection,
    bodies=[
        ("Shelving question. My collection of {coll} has officially outgrown the windowsill, and my "
         "housemate has very politely suggested it's 'taking over'. To be fair, she may have a point, "
         "there's one on the bathroom shelf now. {_near}What's a good way to display "
         "small collectables so they look deliberate instead of cluttered? Ideally not a fortune, and "
         "nothing that needs drilling into the walls.",
         "{_ack}Group items by colour or size rather than scattering them, and use a few shallow "
         "freestanding shelves or a glass-fronted cabinet. Risers (even stacked books) add height "
         "variation. Leave some empty space between groups, because gaps are what make a display look "
         "curated rather than crammed.", None),
        ("I went to a car boot sale on Sunday and came back with three more {coll}, which I absolutely "
         "did not need but adore. {_near}How do I keep a collecting hobby from eating my whole budget? "
         "Some kind of rule that isn't miserable? I like the thrill of the hunt, that's the problem.",
         "{_ack}Try a 'fun fund': a fixed monthly amount that's only for the collection, so buying "
         "something is guilt-free but limited. A one-in-one-out rule for space works well too, as does a "
         "short wishlist of specific pieces you're hunting for, so you're choosy rather than buying "
         "everything.", None),
    ],
    q=["What is it that I collect?", "What do I collect?"],
    c=["what I collect", "what my collection is of"],
    n=["the stuff I collect"],
    acks=["A collection of {coll}, what fun! "],
    near=["My uncle collects {dcoll}, which is somehow an even weirder hobby. "],
    near_make=_collection_near,
)

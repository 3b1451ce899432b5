"""Fact kinds about work and home: job, employer, hometown, city, car."""

from __future__ import annotations

from recall_core.training.families.passing.common import Ctx, Kind, _article
from recall_core.training.families.passing.pools import CARS, CITIES, EMPLOYERS, HOMETOWNS, JOBS


def _job(ctx: Ctx) -> dict:
    job = ctx.reg.pick(ctx.rng, JOBS)
    return {"job": job[0], "_a": _article(job[0]), "fact": "job", "answers": job, "value": job[0]}


def _job_near(ctx: Ctx, s: dict) -> dict:
    dj = ctx.reg.pick(ctx.rng, JOBS)[0]
    return {"djob": dj, "_da": _article(dj)}


JOB = Kind(
    key="job",
    group="work",
    make=_job,
    bodies=[
        ("Honestly, today was a lot. I love being {_a} {job} most days, but this morning the car park "
         "machine ate my card and then the canteen had run out of everything except a suspicious beige "
         "soup. {_near}Anyway, I've been meaning to ask: what's a decent packed lunch that doesn't need a "
         "microwave and won't be sad and soggy by mid-afternoon?",
         "Grain salads are your best bet: cooked farro, orzo or couscous with roasted veg, chickpeas, feta "
         "and a punchy dressing kept in a separate little pot. Wraps with the wet ingredients packed "
         "separately also hold up well. Add something crunchy, like nuts or seeds, so it feels like a "
         "proper meal.", None),
        ("I need to update my LinkedIn, which I've been avoiding for roughly five years. My headline just "
         "says '{job}' and nothing else, which apparently is a crime. {_near}Can you help me write a short "
         "summary that sounds human and not like I swallowed a buzzword generator? I'm not job hunting, I "
         "just don't want the profile to look abandoned.",
         "{_ack}Try this shape: one line on what you do and who for, one line on what you enjoy or are "
         "known for, and one line that's a bit personal. For example: \"I help [people] with [thing]. "
         "I'm the one colleagues call when [situation]. Outside work you'll find me [hobby].\" Short and "
         "specific beats long and shiny.", None),
    ],
    q=["What is it I do for a living?", "What's my job again?", "What line of work am I in?"],
    c=["what I do for work", "what my job is"],
    n=["my job", "my line of work"],
    acks=["Being {_a} {job} sounds like a lot of responsibility. "],
    near=["My brother-in-law is {_da} {djob} and makes his job sound like a holiday, which I refuse to "
          "believe. "],
    near_make=_job_near,
)


def _employer(ctx: Ctx) -> dict:
    emp = ctx.reg.pick(ctx.rng, EMPLOYERS)
    return {"emp": emp[0], "fact": "employer", "answers": emp, "value": emp[0]}


def _employer_change(ctx: Ctx, old: dict) -> dict:
    new = _employer(ctx)
    new["old"] = old["emp"]
    return new


def _employer_near(ctx: Ctx, s: dict) -> dict:
    return {"demp": ctx.reg.pick(ctx.rng, EMPLOYERS)[0]}


EMPLOYER = Kind(
    key="employer",
    group="work",
    make=_employer,
    bodies=[
        ("Traffic was apocalyptic this morning. There are roadworks on the ring road, so the drive in to "
         "{emp}, which normally takes twenty minutes, took well over an hour and I walked into a meeting "
         "that had already started. {_near}Is there anything that makes a long crawl in the car less "
         "miserable? Podcast recommendations welcome, nothing true crime though, I get enough stress.",
         "Sounds grim. A few ideas: save podcasts or audiobooks specifically for the car so it becomes a "
         "small treat, keep water and a snack in the glovebox, and let someone know if you're running "
         "late so the clock stops nagging at you. For podcasts, try comedy panel shows, history "
         "storytelling, or interview shows with people you admire.", None),
        ("Can you help me phrase an email? I need to tell my team at {emp} that I'm taking two weeks off "
         "in the summer, and the last person who did that got passive-aggressive replies for days. "
         "{_near}I want it friendly and matter-of-fact, and to make it clear who's covering what while I'm "
         "gone. Something short?",
         "Here's a draft:\n\n\"Hi all, a heads-up that I'll be on leave from [date] to [date]. [Name] is "
         "covering [area] and [Name] has [area]; I've shared handover notes in [place]. I'll have no "
         "access to email, so please send anything urgent to them. Thanks!\"\n\nClear, cheerful, and it "
         "leaves nothing to argue with.", None),
    ],
    change=[
        ("News! I finally handed my notice in, and as of Monday I'm at {emp}. No more {old}, no more "
         "that awful open-plan office with the broken blinds. First-day nerves are very real though. "
         "{_near}Any tips for making a decent impression in the first week without coming across as "
         "trying way too hard?",
         "Congratulations on the new job! In week one: listen more than you talk, write down names and "
         "who does what, ask one or two thoughtful questions in meetings, and offer to take on a small, "
         "concrete task so you can deliver something early. Being warm and curious goes a long way.",
         None),
        ("So the job switch is done: I left {old} on Friday and started at {emp} this week. New laptop, "
         "new badge, a coffee machine I don't understand at all. {_near}Quick question: what's a good way "
         "to keep track of a load of new names? I'm hopeless with them and I've already called someone "
         "the wrong thing twice.",
         "Congrats on the move! Repeat each name once in conversation, then jot it down with a detail "
         "(\"Sam, finance, runs marathons\") straight after. The org chart or team photos in the "
         "directory are great for revision. And people are very forgiving in someone's first weeks.",
         None),
    ],
    change_make=_employer_change,
    q=["Which company do I work for these days?", "Where am I working at the moment?",
       "Who's my employer now?"],
    c=["who I work for right now", "which company I'm at these days"],
    n=["the name of the place I work"],
    near=["My flatmate works at {demp} and they get free lunch on Fridays, which feels deeply unfair. "],
    near_make=_employer_near,
)


def _hometown(ctx: Ctx) -> dict:
    home = ctx.reg.pick(ctx.rng, HOMETOWNS)
    return {"home": home, "fact": "hometown", "answers": (home,), "value": home}


def _hometown_near(ctx: Ctx, s: dict) -> dict:
    return {"dtown": ctx.reg.pick(ctx.rng, HOMETOWNS), "dname": ctx.name("f")}


HOMETOWN = Kind(
    key="hometown",
    make=_hometown,
    bodies=[
        ("I'm trying to plan a visit home at Christmas and the train prices are frankly insulting. Getting "
         "back to {home}, where I grew up, costs more than a flight to somewhere sunny. {_near}Are there "
         "any general tricks for getting cheaper train tickets? Split ticketing, railcards, booking "
         "windows, that kind of thing? I'm flexible on times if that helps.",
         "Being flexible helps a lot. Book as soon as advance fares are released (often about twelve "
         "weeks out), check whether a railcard pays for itself in a trip or two, and try a split-ticketing "
         "site, which can shave a surprising amount off long journeys. Off-peak and midweek trains are "
         "usually cheapest.", None),
        ("Random, but I've got really into sourdough and someone told me the water makes a difference. "
         "Back in {home}, where I grew up, the tap water was soft as anything, and here it's so hard the "
         "kettle has grown fur. {_near}Does hard water actually affect bread, and if so is there a fix "
         "that doesn't involve buying bottled water?",
         "It can, a little: very hard water can tighten the gluten and slow fermentation slightly. In "
         "practice most home bakers don't notice much. If you want to test it, run your tap water through "
         "a filter jug for a few bakes and compare, and give the dough a touch more time to rise.", None),
    ],
    q=["Where did I say I grew up?", "Which town am I originally from?", "What did I say my hometown was?"],
    c=["where I grew up", "where I'm from originally"],
    n=["my hometown", "the town I grew up in"],
    acks=["{home} sounds like a lovely place to grow up. "],
    near=["(My friend {dname} grew up in {dtown} and says it's no better there.) "],
    near_make=_hometown_near,
)


def _city(ctx: Ctx) -> dict:
    city = ctx.reg.pick(ctx.rng, CITIES)
    return {"city": city, "fact": "home_city", "answers": (city,), "value": city}


def _city_change(ctx: Ctx, old: dict) -> dict:
    new = _city(ctx)
    new["old"] = old["city"]
    return new


def _city_near(ctx: Ctx, s: dict) -> dict:
    return {"dcity": ctx.reg.pick(ctx.rng, CITIES)}


CITY = Kind(
    key="home_city",
    make=_city,
    bodies=[
        ("Is it just me, or are bin collections the most confusing system ever invented? Ever since we "
         "moved here to {city} I've had four different coloured bins and a collection calendar that "
         "looks like a tube map. {_near}Can you help me set up a simple weekly reminder system so I stop "
         "missing the recycling? I have a phone and a whiteboard and very little patience.",
         "Easy win: put a recurring reminder on your phone for the evening before each collection, with "
         "the bin colour in the title. On the whiteboard, draw a simple grid with the weeks down the side "
         "and tick each bin off once it's out. After a month or so it'll be automatic.", None),
        ("Looking for weekend ideas that aren't just the pub again. I've lived in {city} for a good while "
         "now and still haven't done half the touristy stuff. {_near}What sort of things do people tend "
         "to overlook when they live somewhere? Museums, walks, markets? A checklist to get me going "
         "would be perfect.",
         "{_ack}A starter checklist: one museum or gallery you've never been in, a guided walking tour "
         "(locals always learn something), the biggest weekend market, a viewpoint at sunset, a day trip "
         "to somewhere within an hour by train, and one restaurant serving a cuisine you've never tried. "
         "Tick off one per weekend.", None),
    ],
    change=[
        ("Update from the chaos: we've done it, we've left {old} and we're now properly living in "
         "{city}. Boxes everywhere, no idea where the kettle is, and the broadband won't be connected "
         "until Thursday. {_near}What should I prioritise in the first week in a new place? I keep making "
         "lists and then losing them under more boxes.",
         "Congratulations on the move! First week priorities: unpack one 'essentials' box (kettle, "
         "mugs, loo roll, chargers), set up the bed properly, register with a GP, update your address "
         "with the bank and at work, and find the nearest supermarket. Everything else can wait a "
         "weekend.", None),
        ("So the move happened! Goodbye {old}, hello {city}. Our new street is lovely, though the "
         "neighbours' cat has already claimed our garden as its own, and someone left a welcome note "
         "on our doormat which was very sweet. {_near}Can you suggest a nice, "
         "not-too-cheesy way to introduce ourselves to the neighbours? A card, some baking, something "
         "else entirely?",
         "How exciting! A short handwritten card through the door with your names and a line like "
         "\"just moved in at number X, do knock if you ever need anything\" is perfect. Pair it with a few "
         "biscuits if you like baking. A friendly wave in the street does the rest.", None),
    ],
    change_make=_city_change,
    q=["Which city do I live in now?", "Where am I living at the minute?", "What city am I based in?"],
    c=["where I live at the moment", "which city I'm living in"],
    n=["the city I live in now"],
    acks=["{city} has a lot going for it! "],
    near=["(My cousin is moving to {dcity} next month, so I'm not the only one drowning in boxes.) ",
          "A colleague has just come back from a weekend in {dcity} raving about it. "],
    near_make=_city_near,
)


def _car(ctx: Ctx) -> dict:
    car = ctx.reg.pick(ctx.rng, CARS)
    return {"car": car[0], "fact": "car", "answers": car, "value": car[0]}


def _car_change(ctx: Ctx, old: dict) -> dict:
    new = _car(ctx)
    new["old"] = old["car"]
    return new


def _car_near(ctx: Ctx, s: dict) -> dict:
    return {"dcar": ctx.reg.pick(ctx.rng, CARS)[0]}


CAR = Kind(
    key="car",
    make=_car,
    bodies=[
        ("Mechanic question. My {car} has started making a horrible squealing noise when I turn the "
         "steering wheel all the way, mostly when I'm manoeuvring in car parks. It has a lot of miles on "
         "it, so it's hardly a spring chicken. {_near}Is this something I should get looked at urgently, "
         "or one of those noises old cars just make? I don't want to get fleeced.",
         "A squeal at full lock is often the power-steering system: low fluid or a worn drive belt are the "
         "usual suspects, and both are fairly cheap to sort. It's not normally an emergency, but don't "
         "ignore it for months. Ask a garage to check fluid level and belt condition, and get a quote "
         "before any work.", None),
        ("Road trip planning! We're doing a long drive up the coast next month in my trusty {car}, which "
         "has never let me down, touch wood. {_near}Could you give me a checklist of things to sort before "
         "a long drive? I always forget something stupid like the screenwash or the charger cable, and "
         "then spend the first hour cross.",
         "{_ack}Pre-trip checklist: tyre pressures and tread, oil and coolant levels, screenwash, lights "
         "and indicators, breakdown cover details saved on your phone, phone charger and mount, "
         "sunglasses, water and snacks, a paper map or downloaded offline maps, and a blanket in the "
         "boot just in case.", None),
    ],
    change=[
        ("Farewell to the {old}: it failed its MOT in spectacular fashion and the garage said it wasn't "
         "worth fixing. I've bought a secondhand {car} instead, which feels like driving a spaceship in "
         "comparison. {_near}Any tips for getting used to a different car? New size, new blind spots, "
         "pedals that feel nothing like what I'm used to.",
         "{_ack}Spend twenty minutes in an empty car park practising reversing, tight turns and parking "
         "before you tackle busy roads. Set up the seat and all three mirrors carefully, and check the "
         "blind spots by having someone walk around the car while you watch. It feels normal within a "
         "week or two.", None),
        ("The car saga is finally over. I traded in my {old} at the weekend and drove home in a {car}, and "
         "I've been grinning like an idiot ever since. {_near}What's the sensible stuff I should check in "
         "the first month with a used car, apart from the obvious things like fuel and tyres?",
         "{_ack}Worth doing early: check the service history and when the next service and MOT are due, "
         "look at the oil and coolant yourself, make sure the spare wheel or repair kit is actually there, "
         "and confirm the insurance and tax are in your name. Keep an ear out for any new noises in those "
         "first weeks.", None),
    ],
    change_make=_car_change,
    q=["What car have I got now?", "What am I driving at the minute?", "What's my car?"],
    c=["what car I've got", "what I drive now"],
    n=["the car I drive now"],
    acks=["Ah, the {car}! ", "A {car}, nice. "],
    near=["My dad has just bought a {dcar} and won't stop sending me photos of it. "],
    near_make=_car_near,
)

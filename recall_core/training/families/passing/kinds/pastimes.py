"""Fact kinds about pastimes and health: instrument, sport, allergy, injury, comfort food."""

from __future__ import annotations

from recall_core.training.families.passing.common import Ctx, Kind
from recall_core.training.families.passing.pools import (
    ALLERGENS,
    BODY_PARTS,
    COMFORT_FOODS,
    INSTRUMENTS,
    SPORTS,
)


def _instrument(ctx: Ctx) -> dict:
    inst = ctx.reg.pick(ctx.rng, INSTRUMENTS)
    return {"inst": inst[0], "fact": "instrument", "answers": inst, "value": inst[0]}


def _instrument_near(ctx: Ctx, s: dict) -> dict:
    return {"dinst": ctx.reg.pick(ctx.rng, INSTRUMENTS)[0]}


INSTRUMENT = Kind(
    key="instrument",
    make=_instrument,
    bodies=[
        ("My upstairs neighbours have started complaining about noise, which is rich considering they "
         "hoover at midnight. In fairness, I do practise the {inst} most evenings and I'm not exactly "
         "concert standard yet. {_near}Is there any cheap way to soundproof a room a bit, or at least make "
         "it less awful for them? Renting, so nothing permanent.",
         "{_ack}True soundproofing is expensive, but you can reduce it: thick rugs, heavy curtains, a "
         "bookcase against the shared wall, and foam or blankets behind you all help absorb sound. "
         "Practising at agreed times, say early evening and never late, plus a friendly word with the "
         "neighbours, often solves more than any foam.", None),
        ("Confidence question. I've got my first ever little performance next month, just me and my "
         "{inst} at an open mic night, and I'm already feeling sick about it. {_near}Do you have any "
         "practical tricks for stage nerves? Breathing stuff, things to do on the day, anything at all "
         "really, I'll try it.",
         "{_ack}Practise the set in front of a friend or two beforehand, so it isn't your first time "
         "being watched. On the day: eat something light, arrive early, and do slow breathing with a "
         "longer out-breath than in-breath. Pick a friendly face in the crowd. The audience at open mics "
         "is almost always on your side.", None),
    ],
    q=["What's the instrument I'm learning?", "Which instrument do I practise?"],
    c=["what instrument I play", "which instrument I practise"],
    n=["the instrument I play"],
    acks=["The {inst}, lovely! ", "Good for you for sticking with the {inst}. "],
    near=["(A guy in my building plays the {dinst} and he's somehow even worse than me.) "],
    near_make=_instrument_near,
)


def _sport(ctx: Ctx) -> dict:
    sport = ctx.reg.pick(ctx.rng, SPORTS)
    return {"sport": sport[0], "fact": "sport", "answers": sport, "value": sport[0]}


def _sport_change(ctx: Ctx, old: dict) -> dict:
    new = _sport(ctx)
    new["old"] = old["sport"]
    return new


def _sport_near(ctx: Ctx, s: dict) -> dict:
    return {"dname": ctx.anyone()[0], "dsport": ctx.reg.pick(ctx.rng, SPORTS)[0]}


SPORT = Kind(
    key="sport",
    make=_sport,
    bodies=[
        ("Food question. I've been doing {sport} three nights a week and I'm absolutely ravenous "
         "afterwards, which means I end up eating toast at eleven at night like a raccoon. {_near}What's a "
         "quick, filling post-training dinner I could throw together in under twenty minutes? Bonus "
         "points if it's mostly cupboard stuff.",
         "{_ack}Try a big bowl of quick-cook noodles or rice with a couple of fried eggs, frozen peas or "
         "spinach, and soy sauce with chilli oil. Or a tin of beans or chickpeas warmed with tomatoes and "
         "spices, served with bread. Both give you protein and carbs and take about fifteen minutes.",
         None),
        ("I think I need new kit and I'm totally lost. Between work and {sport}, my current gear is "
         "basically held together with hope and a bit of tape. {_near}How do I work out what's actually "
         "worth spending money on versus what's just marketing? And is it worth going to a proper "
         "specialist shop?",
         "Spend on the things that touch your body the most or protect you: footwear and anything safety "
         "related. Basics like shorts and tops can be cheap. A specialist shop is worth it the first "
         "time, because they'll help with fit; after that you can often buy the same model online.",
         None),
    ],
    change=[
        ("Confession: I've quit {old}. Too many early starts, everything ached, and the club politics "
         "were getting exhausting. I've taken up {sport} "
         "instead and I'm weirdly hooked after only three sessions. {_near}How do I avoid overdoing it "
         "while I'm this enthusiastic? I have a history of going all-in on things and burning out by "
         "week six.",
         "{_ack}Cap yourself at two or three sessions a week for the first couple of months, even if you "
         "feel great, and keep at least one full rest day between hard sessions. Write down what you did "
         "each time so you can see progress without needing to push harder. Sleep and food matter as "
         "much as the training.", None),
        ("Big lifestyle update: I'm done with {old}, I just wasn't enjoying it any more. A friend dragged "
         "me along to {sport} and now I'm there twice a week, loving it. {_near}Can you suggest a simple "
         "weekly routine to fit it around work without getting burnt out? I'm out of the house ten hours "
         "on weekdays.",
         "{_ack}Something like: two sessions midweek, one gentle active day at the weekend (a walk or "
         "easy swim), and at least two proper rest evenings. Prep dinners for training nights in advance "
         "and keep your kit bag packed by the door. Review after a month and adjust.", None),
    ],
    change_make=_sport_change,
    q=["What sport am I doing these days?", "What do I do for exercise at the moment?"],
    c=["which sport I'm into now", "what I do to keep fit these days"],
    n=["my current sport"],
    acks=["Good on you for the {sport}. ", "Sounds like the {sport} is paying off! "],
    near=["My colleague {dname} does {dsport} and keeps trying to recruit me. "],
    near_make=_sport_near,
)


def _allergy(ctx: Ctx) -> dict:
    a = ctx.reg.pick(ctx.rng, ALLERGENS)
    return {"allergen": a[0], "fact": "allergy", "answers": a, "value": a[0]}


def _allergy_near(ctx: Ctx, s: dict) -> dict:
    return {"dname": ctx.anyone()[0], "dallergen": ctx.reg.pick(ctx.rng, ALLERGENS)[0]}


ALLERGY = Kind(
    key="allergy",
    make=_allergy,
    bodies=[
        ("Dinner party panic. I've got six people coming on Saturday and I'd like to do one big tray of "
         "something in the middle of the table so I'm not chained to the stove all night. Obviously "
         "nothing with {allergen} in it, since I'm allergic and would rather not spend the evening in "
         "A&E. {_near}Any crowd-pleasers that are easy to scale up?",
         "A few that scale beautifully: a big tray of slow-roasted lamb or chicken with potatoes and "
         "lemon, a baked pasta with a rich tomato sauce and mozzarella, or a huge vegetable lasagne. "
         "Serve with bread and a big salad. Just double-check every label for anything you react to, "
         "since traces turn up in odd places.", None),
        ("Travel worry. I'm going abroad soon and my allergy to {allergen} is the thing I'm most nervous "
         "about, because menus in a language I can't read are a minefield. {_near}Is there a good way to "
         "communicate an allergy when you don't speak the language? Printed cards, apps, something "
         "else? I'd rather not spend every meal anxious.",
         "Yes: get an allergy translation card in the local language, which you can hand to staff, and "
         "keep a photo of it on your phone too. Learn the words for your allergen and for 'allergy'. "
         "Carry your medication at all times, and note the local emergency number before you go.", None),
    ],
    q=["What did I say I'm allergic to?", "What's the thing I'm allergic to?"],
    c=["what I'm allergic to", "what my food allergy is"],
    n=["my food allergy"],
    near=["My colleague {dname} is allergic to {dallergen}, which makes office birthday cakes a "
          "nightmare. "],
    near_make=_allergy_near,
)


def _injury(ctx: Ctx) -> dict:
    p = ctx.reg.pick(ctx.rng, BODY_PARTS)
    return {"part": p[0], "fact": "injury", "answers": p, "value": p[0]}


def _injury_near(ctx: Ctx, s: dict) -> dict:
    return {"dpart": ctx.reg.pick(ctx.rng, BODY_PARTS)[0]}


INJURY = Kind(
    key="injury",
    make=_injury,
    bodies=[
        ("Ugh. My physio gave me a sheet of exercises for my {part} and I've already lost it. I know "
         "there were some gentle stretches and something involving a resistance band, but that's about "
         "all I remember. {_near}Can you help me come up with a way to actually stick to a daily routine? "
         "I'm great at starting things and terrible at the second week.",
         "{_ack}First, ask the physio to email the sheet or snap a photo of it next time. For sticking to "
         "it: attach the exercises to something you already do daily, like straight after brushing your "
         "teeth, keep the band somewhere visible, and tick a calendar each day. A streak is oddly "
         "motivating.", None),
        ("So, the good news is I went for a really long walk on Sunday; the bad news is my {part} has "
         "been grumbling ever since, same as it always does when I overdo it. {_near}Separate question "
         "though: can you recommend some good audiobooks for long walks? Something gripping but not "
         "gruesome, I listen while I'm out in the woods on my own.",
         "Some gripping-but-not-gruesome picks: The Thursday Murder Club, Project Hail Mary, The Martian, "
         "Circe, or anything by Bill Bryson if you want funny and easy to follow. Hope things settle down "
         "soon too; ease back into the long walks gradually.", None),
    ],
    q=["Which part of me keeps playing up?", "What's the injury I keep moaning about?"],
    c=["which bit of my body keeps giving me trouble", "where my old injury is"],
    n=["my dodgy body part"],
    acks=["Sorry to hear about the {part}. "],
    near=["My mum's been having the same kind of bother with her {dpart}, so we've been comparing "
          "notes. "],
    near_make=_injury_near,
)


def _food(ctx: Ctx) -> dict:
    f = ctx.reg.pick(ctx.rng, COMFORT_FOODS)
    return {"food": f[0], "fact": "comfort_food", "answers": f, "value": f[0]}


def _food_near(ctx: Ctx, s: dict) -> dict:
    return {"dfood": ctx.reg.pick(ctx.rng, COMFORT_FOODS)[0]}


FOOD = Kind(
    key="comfort_food",
    make=_food,
    bodies=[
        ("Meal-prep help, please. I'm trying to cook once on a Sunday and eat decently all week, "
         "instead of living on crackers. I'll still make {food} on Friday night because that's my "
         "comfort meal and totally non-negotiable, but Monday to Thursday is a blank. {_near}Can you "
         "suggest four lunches that keep well in the fridge for a few days?",
         "{_ack}Four fridge-friendly lunches: a lentil and roasted veg salad with feta, a chicken or "
         "tofu noodle salad with a zingy lime dressing, a big batch of "
         "minestrone-style soup, and a pasta salad with pesto, tomatoes and spinach. Keep dressings "
         "separate until the day.", None),
        ("I'm hosting a cooking night with friends where everyone teaches one dish, and I'm doing {food}, "
         "since it's what I make whenever I need cheering up. {_near}How do I explain a recipe to a group "
         "without it descending into chaos? Any tips for running it smoothly? There'll be about six of "
         "us in a small kitchen.",
         "{_ack}Do all the chopping and measuring beforehand, put each ingredient in a little bowl, and "
         "print a one-page version of the recipe. Give everyone a specific job, so nobody is hovering, "
         "and explain each step just before you do it rather than all at the start. Keep one person on "
         "washing-up duty.", None),
    ],
    q=["What's my comfort food?", "What do I cook when I need cheering up?"],
    c=["what my go-to comfort dish is", "what I make when I'm feeling low"],
    n=["my favourite comfort meal"],
    acks=["Ooh, {food}, excellent choice. "],
    near=["My flatmate swears by {dfood} after a rough day, but each to their own. "],
    near_make=_food_near,
)

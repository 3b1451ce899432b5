"""Fact kinds about the people and pets around the user: pet, sibling, partner, child, niece or
nephew, grandparent, friend.
"""

from __future__ import annotations

from recall_core.training.families.passing.common import Ctx, Kind, _pron
from recall_core.training.families.passing.pools import BREEDS, OLD_FEMALE, PET_NAMES


def _pet(ctx: Ctx) -> dict:
    species = ctx.rng.choice(("dog", "dog", "cat", "cat", "rabbit"))
    g = ctx.rng.choice(("m", "f"))
    pet = ctx.reg.pick(ctx.rng, PET_NAMES)
    breed = ctx.rng.choice(BREEDS[species])
    s = {"species": species, "pet": pet, "breed": breed, **_pron(g)}
    s.update(fact=f"{species}_name", answers=(pet,), value=pet)
    return s


def _pet_near(ctx: Ctx, s: dict) -> dict:
    return {"dpet": ctx.reg.pick(ctx.rng, PET_NAMES),
            "dbreed": ctx.rng.choice([b for b in BREEDS[s["species"]] if b != s["breed"]]),
            "species": s["species"]}


PET = Kind(
    key="pet",
    make=_pet,
    bodies=[
        ("Do you know anything about cordless vacuums? Mine died mid-hoover yesterday, naturally "
         "right as I got to the rug that {pet} treats as a personal shedding zone. For context, "
         "{pet} is a {breed} and the fur situation in this house is honestly biblical. {_near}I don't "
         "need anything fancy, I just want something that copes with hair on carpets, doesn't weigh "
         "a ton and won't need replacing in a year. What should I actually be looking at?",
         "{_ack}For a fur-heavy home I'd prioritise three things: a motorised brush head with an "
         "anti-tangle roller, a bin big enough that you're not emptying it every few minutes, and a "
         "washable filter. Run time matters less than people think if you do rooms in bursts. It's "
         "also worth checking that the brand sells replacement batteries, since that's usually the "
         "first part to go.", None),
        ("Could you help me write a note for a pet-sitter? I'm away for a long weekend and a friend's "
         "teenager is popping in twice a day to look after {pet}, my {breed}. {_He}'s fairly "
         "low-maintenance but has strong opinions about breakfast being late. {_near}I want the note "
         "friendly and clear without reading like a hostage negotiator's manual: feeding, water, "
         "where the spare key lives and who to ring if something goes wrong. Short enough to stick "
         "on the fridge, ideally.",
         "Here's a fridge-friendly version:\n\nHi, and thanks so much for looking after {pet}! "
         "Breakfast around 7, dinner around 6 (the portions are marked on the tub). Fresh water "
         "every visit, please. The spare key is wherever we agreed, and if anything seems off, ring "
         "me first, then the vet, whose number is on the board. Thank you!\n\nFeel free to swap in "
         "the real times and numbers.", None),
        ("Okay, I need a sanity check. I've been trying to get into running before work, and this "
         "morning I was out the door early feeling very smug, right up until {pet}, my {breed}, "
         "decided a squirrel was worth dragging me into a hedge for. Muddy leggings, bruised pride, "
         "the works. {_near}Anyway, what I actually wanted to ask: is it better to stretch before a "
         "run or after? I keep reading completely opposite advice and I'd like to not pull something "
         "in my first fortnight.",
         "{_ack}The current consensus is: warm up dynamically before (a brisk walk, leg swings, a few "
         "easy minutes of jogging) and save longer static stretches for afterwards, when your muscles "
         "are warm. Static stretching from cold doesn't do much to prevent injury and can make you "
         "feel sluggish. Build up slowly and you'll be fine.", lambda s: s["species"] == "dog"),
        ("Rant incoming. The council has shut the canal footpath for 'resurfacing' with zero warning, "
         "so my morning loop with {pet}, my {breed}, who is a creature of deep routine, is now a detour "
         "past a building site. {_He} sulked the whole way round. {_near}Meanwhile I'm meant to be "
         "hosting a little garden thing on Saturday and have no plan whatsoever. Could you give me "
         "three easy finger-food ideas I can make the night before?",
         "{_ack}Three make-ahead options: a tray of savoury palmiers (shop-bought puff pastry, pesto "
         "and cheese, sliced and baked), a big frittata cut into squares that's great at room "
         "temperature, and skewers of tomato, mozzarella and basil with a drizzle of balsamic. All "
         "three keep well overnight in the fridge.", lambda s: s["species"] == "dog"),
        ("Right, odd request. I'm working from home more and my desk setup is a disaster: laptop on a "
         "stack of cookbooks, neck permanently crunched. On top of that {pet}, my {breed}, has decided "
         "the keyboard is the warmest spot in the flat, so half my emails go out with extra letters in "
         "them. {_near}What's a cheap way to get the screen up to a sensible height, and is a separate "
         "keyboard worth buying?",
         "{_ack}Cheapest fix: a laptop stand (or a sturdy box) so the top of the screen sits roughly at "
         "eye level, plus a separate keyboard and mouse so your arms can stay low and relaxed. Yes, the "
         "keyboard is worth it; a basic wired one is inexpensive and transforms the setup.",
         lambda s: s["species"] == "cat"),
        ("Quick garden question. I'm putting in a couple of raised beds this weekend and want to grow "
         "herbs, but I need to know which ones are safe around a rabbit, because {pet}, my {breed}, has "
         "the run of the lawn in the afternoons and eats absolutely anything at nose height. {_near}Which "
         "herbs are fine for {_him} to nibble and which should I plant somewhere out of reach?",
         "{_ack}Generally safe for rabbits in moderation: basil, coriander, dill, mint, parsley and "
         "thyme. Keep things like chives and other alliums, and anything grown from bulbs, well out of "
         "reach. When in doubt, check with your vet, and introduce new greens gradually.",
         lambda s: s["species"] == "rabbit"),
    ],
    q=["What did I say my {species} is called?", "What's the name of my {species}?",
       "What name did I give my {species}?"],
    c=["what my {species} is called", "what my {species}'s name is"],
    n=["my {species}'s name"],
    acks=["{pet} sounds like a character! ", "Ha, poor you, and lucky {pet}. ",
          "A {breed} with opinions, I love it. "],
    near=["(My neighbour has a {dbreed} called {dpet} who is the exact opposite, for the record.) ",
          "My sister-in-law's {species}, {dpet}, stayed with us last month and it was chaos. "],
    near_make=_pet_near,
)


def _sibling(ctx: Ctx) -> dict:
    rel = ctx.rng.choice(("sister", "brother"))
    g = "f" if rel == "sister" else "m"
    sib = ctx.name(g)
    return {"rel": rel, "sib": sib, **_pron(g), "fact": f"{rel}_name", "answers": (sib,), "value": sib}


def _sibling_near(ctx: Ctx, s: dict) -> dict:
    dname = ctx.name("f")
    return {"rel": s["rel"], "dname": dname, "dsib": ctx.name("f" if s["rel"] == "sister" else "m")}


SIBLING = Kind(
    key="sibling",
    make=_sibling,
    bodies=[
        ("Can you help me write a birthday message that isn't just 'happy birthday, have a good one'? "
         "It's for my {rel} {sib}, who's turning forty and pretending not to care about it. We're close "
         "but we mostly communicate in sarcasm, so I want something a bit funny, a bit warm, and "
         "definitely nothing that could make anyone cry if it got read out. {_near}Two or three options "
         "would be great.",
         "{_ack}Here are three:\n1. \"Forty looks good on you. Suspiciously good. What's the secret?\"\n"
         "2. \"Happy birthday to the only person allowed to be this annoying to me. Love you, mostly.\"\n"
         "3. \"Another year older and still not as wise as me. Have a brilliant day.\"\nPick whichever "
         "sounds most like your voice.", None),
        ("So I finally caved and joined a book club, mostly because my {rel}, {sib}, kept sending me "
         "photos from theirs and it looked fun. First meeting is Thursday and the pick is a "
         "nine-hundred-page historical doorstop I've managed about eighty pages of. {_near}Is it "
         "terrible to turn up having only skimmed it? And any tips for sounding like I have opinions "
         "about a book I've half read?",
         "Not terrible at all, half the room will be in the same boat. Read the opening and closing "
         "chapters, skim a summary of the middle, and pick one character or scene you had a real "
         "reaction to. Asking good questions (\"did anyone else find the ending rushed?\") is often more "
         "welcome than having all the answers.", None),
        ("Weekend plans: helping my {rel} {sib} move flats, which in practice means me carrying a sofa "
         "down several flights of stairs while {_he} 'supervises'. {_near}Is there a trick to getting a "
         "big sofa round a tight stairwell corner without gouging the walls? I'd like to keep both my "
         "spine and {_his} deposit intact, and we can't afford proper movers this time.",
         "{_ack}A few tricks: take the feet and any removable cushions off first, wrap the corners in "
         "blankets, and try standing the sofa on its end to 'hook' it around the turn rather than "
         "carrying it flat. Measure the stairwell diagonal beforehand so you know which way will fit, "
         "and lift with your legs, not your back.", None),
    ],
    q=["What did I say my {rel}'s name was?", "What's my {rel} called, do you know?",
       "Who's my {rel} again, name-wise?"],
    c=["what my {rel} is called", "what my {rel}'s name is"],
    n=["my {rel}'s name"],
    acks=["That's a lovely thing to do for {sib}. ", "{sib} is lucky to have you. "],
    near=["Someone at work, {dname}, also has a {rel} called {dsib}, which caused chaos in a group chat "
          "last week. ",
          "(My neighbour {dname} says {dsib}, her own {rel}, is exactly the same.) "],
    near_make=_sibling_near,
)


def _partner(ctx: Ctx) -> dict:
    role = ctx.rng.choice(("husband", "wife", "partner", "girlfriend", "boyfriend"))
    g = {"husband": "m", "boyfriend": "m", "wife": "f", "girlfriend": "f"}.get(role) or ctx.rng.choice("mf")
    pname = ctx.name(g)
    return {"role": role, "pname": pname, **_pron(g), "fact": f"{role}_name", "answers": (pname,),
            "value": pname}


def _partner_near(ctx: Ctx, s: dict) -> dict:
    dname = ctx.name("f")
    return {"dname": dname, "dpname": ctx.anyone()[0]}


PARTNER = Kind(
    key="partner",
    make=_partner,
    bodies=[
        ("I need a dinner idea that's impressive but secretly easy. My {role}, {pname}, has had the week "
         "from hell at work and I want to do something nice on Friday without spending three hours in "
         "the kitchen and then being too tired to enjoy it. {_near}We both eat pretty much everything, "
         "but nothing too spicy please, {_he}'s a total wimp about chilli. Ideas?",
         "{_ack}Try a one-tray roast: chicken thighs, new potatoes, lemon, garlic and a few sprigs of "
         "rosemary, all in one dish for about 45 minutes. While it cooks, make a simple green salad and "
         "buy a good dessert. It looks generous, tastes great and leaves you with one tray to wash.",
         None),
        ("Bit of a tech support question. {pname}, my {role}, bought us one of those smart speakers and "
         "now it randomly starts playing jazz at two in the morning. Nobody asked it to. I'm fairly sure "
         "it's a routine one of us set up by accident, but I can't for the life of me find where those "
         "settings live in the app. {_near}Where would I even start looking?",
         "In most of these apps it's under a tab called something like Routines or Automations, often "
         "hidden in a 'More' menu. Look for anything with a time-based trigger around 2am and either "
         "delete it or switch it off. Also check for alarms set with music instead of a tone, which can "
         "look a lot like a phantom DJ.", None),
        ("Holiday admin is breaking me. {pname} and I, {pname} being my {role} for anyone keeping track, "
         "have wildly different ideas about packing: I'm a list person, {_he} is a chuck-it-all-in-the-"
         "night-before person. {_near}Could you give me a simple shared packing list we could both tick "
         "off on our phones, for a week somewhere warm? Nothing elaborate.",
         "{_ack}Here's a lean shared list: documents (passports, tickets, insurance), chargers and "
         "adaptors, toiletries, meds, sunscreen, swimwear, a light layer for evenings, comfy walking "
         "shoes, sunglasses, a reusable bottle. Put it in a shared notes app so you can both tick items "
         "off as they go in the bag.", None),
    ],
    q=["What did I say my {role}'s name was?", "What's my {role} called, do you know?"],
    c=["what my {role} is called", "what my {role}'s name is"],
    n=["my {role}'s name"],
    acks=["{pname} is lucky to have you! ", "That sounds like a lovely plan for {pname}. "],
    near=["My friend {dname} swears her other half, {dpname}, could sort this in five minutes, but "
          "I'm not asking. ",
          "(Our neighbour {dname} had the same problem and her fiance {dpname} gave up on it.) "],
    near_make=_partner_near,
)


def _child(ctx: Ctx) -> dict:
    crel = ctx.rng.choice(("daughter", "son"))
    g = "f" if crel == "daughter" else "m"
    kid = ctx.name(g)
    return {"crel": crel, "kid": kid, **_pron(g), "fact": f"{crel}_name", "answers": (kid,), "value": kid}


def _child_near(ctx: Ctx, s: dict) -> dict:
    dcrel = ctx.rng.choice(("daughter", "son"))
    return {"dname": ctx.name("f"), "dcrel": dcrel, "dkid": ctx.name("f" if dcrel == "daughter" else "m")}


CHILD = Kind(
    key="child",
    make=_child,
    bodies=[
        ("Homework help, sort of. My {crel} {kid} has a school project on volcanoes and wants to build "
         "one that properly erupts. I remember the baking soda and vinegar thing from when I was small, "
         "but I've seen videos with way more dramatic foam. {_near}What's the best safe recipe for a "
         "good eruption, and how do I stop it turning the kitchen table into a crime scene?",
         "{_ack}For a foamier eruption, add a good squirt of washing-up liquid and some food colouring "
         "to the vinegar before pouring it onto the baking soda; warm vinegar reacts a bit faster too. "
         "Build the volcano on a large baking tray or inside a plastic storage box, and you'll catch "
         "almost all the mess.", None),
        ("Is it normal for a kid to suddenly go off reading? {kid}, my {crel}, used to devour books and "
         "now everything is 'boring' and accompanied by a world-class eye-roll. I really don't want to "
         "turn it into a battle. {_near}Any suggestions for getting {_him} back into it without it "
         "feeling like homework?",
         "Very normal, it often happens when school reading starts to feel like a chore. Let them pick "
         "anything at all, including comics, graphic novels and joke books; audiobooks on car journeys "
         "count too. Reading something yourself in the same room, with no pressure, works better than "
         "any rule.", None),
    ],
    q=["What did I say my {crel}'s name was?", "What's my {crel} called, do you know?"],
    c=["what my {crel} is called", "what my {crel}'s name is"],
    n=["my {crel}'s name"],
    acks=["{kid} sounds like a brilliant kid. ", "What a fun project for {kid}! "],
    near=["({dname} next door says her {dcrel}, {dkid}, went through exactly the same phase.) ",
          "My friend {dname}'s {dcrel} {dkid} apparently did the same thing last year. "],
    near_make=_child_near,
)


def _nibling(ctx: Ctx) -> dict:
    nrel = ctx.rng.choice(("nephew", "niece"))
    g = "m" if nrel == "nephew" else "f"
    nib = ctx.name(g)
    return {"nrel": nrel, "nib": nib, **_pron(g), "fact": f"{nrel}_name", "answers": (nib,), "value": nib}


def _nibling_near(ctx: Ctx, s: dict) -> dict:
    return {"dname": ctx.anyone()[0], "nrel": s["nrel"],
            "dnib": ctx.name("m" if s["nrel"] == "nephew" else "f")}


NIBLING = Kind(
    key="nibling",
    make=_nibling,
    bodies=[
        ("Baking emergency, kind of. I've volunteered to make the cake for my {nrel} {nib}'s party on "
         "Sunday, which was brave of me given my last cake sank in the middle like a crater. {_near}I need "
         "something that's hard to mess up, feeds about fifteen people, and can survive a car journey. "
         "Chocolate, ideally. Can you give me a forgiving recipe?",
         "{_ack}A chocolate traybake is your friend: it's baked flat, so there's nothing to sink. Whisk "
         "oil, sugar, eggs, buttermilk and vanilla, fold in flour, cocoa and bicarbonate of soda, and "
         "bake in a large lined tin for about 35 minutes. Top with a simple ganache once cool, and "
         "transport it in the tin.", None),
        ("Gift advice, please. My {nrel}, {nib}, has suddenly become obsessed with space and I'm meant to "
         "be the fun relative, so the pressure is on. Budget's around thirty quid. {_near}I was thinking "
         "of a telescope but I've no idea whether a cheap one is worth it or just frustrating. What would "
         "you get?",
         "At that budget I'd skip the telescope, since cheap ones tend to wobble and disappoint. A good "
         "pair of binoculars and a star chart, a glow-in-the-dark planisphere, or a planetarium "
         "projector for the bedroom ceiling will all get more use. A kids' space encyclopedia is a solid "
         "backup.", None),
    ],
    q=["What's my {nrel} called, do you know?", "What did I say my {nrel}'s name was?"],
    c=["what my {nrel} is called", "what my {nrel}'s name is"],
    n=["my {nrel}'s name"],
    acks=["You're clearly a great relative to have, {nib} is lucky. "],
    near=["(My colleague {dname} has a {nrel} called {dnib} who's the same age, so I've been getting "
          "tips.) "],
    near_make=_nibling_near,
)


def _gran(ctx: Ctx) -> dict:
    gran = ctx.reg.pick(ctx.rng, OLD_FEMALE)
    return {"gran": gran, "_granword": ctx.rng.choice(("gran", "nan", "grandma", "granny")),
            "fact": "grandmother_name", "answers": (gran,), "value": gran}


def _gran_near(ctx: Ctx, s: dict) -> dict:
    return {"dname": ctx.anyone()[0], "dgran": ctx.reg.pick(ctx.rng, OLD_FEMALE)}


GRAN = Kind(
    key="grandmother",
    make=_gran,
    bodies=[
        ("I'm trying to recreate a recipe from memory and could use some help. My {_granword}, {gran}, "
         "used to make these little lemon biscuits every Easter and nobody ever wrote the recipe down. I "
         "know there was butter, a lot of zest, and they were crumbly rather than chewy. {_near}Could you "
         "suggest a base recipe I can tweak until it tastes right?",
         "{_ack}Start with a classic shortbread ratio: one part sugar, two parts butter, three parts "
         "flour, plus the zest of two lemons. Swapping a little of the flour for cornflour or rice flour "
         "makes them more crumbly. Bake small rounds at a low-ish temperature until just pale gold, and "
         "adjust the zest from batch to batch.", None),
        ("Does anyone actually write letters any more? I want to send a proper one to my {_granword} "
         "{gran}, who's in her nineties and refuses to touch a phone, but I'm so out of practice that "
         "everything I write sounds like a work email. {_near}Can you give me a rough structure and "
         "maybe a few opening lines that don't sound stiff?",
         "{_ack}A simple structure: open warmly, share two or three small bits of news, ask her a couple "
         "of real questions, and close with something affectionate. Openers like \"I was thinking about "
         "you this morning when...\" or \"You'll laugh at what happened this week\" set a relaxed tone "
         "straight away.", None),
    ],
    q=["What's my grandmother's name?", "What was my gran called?"],
    c=["what my gran's name is", "what my grandmother is called"],
    n=["my grandmother's name"],
    acks=["What a lovely way to remember {gran}. ", "{gran} sounds wonderful. "],
    near=["(My friend {dname}'s gran, {dgran}, still does her own crossword in pen, which is "
          "terrifying.) "],
    near_make=_gran_near,
)


def _friend(ctx: Ctx) -> dict:
    bf, g = ctx.anyone()
    return {"bf": bf, **_pron(g), "fact": "best_friend_name", "answers": (bf,), "value": bf}


def _friend_near(ctx: Ctx, s: dict) -> dict:
    return {"dname": ctx.anyone()[0]}


FRIEND = Kind(
    key="best_friend",
    make=_friend,
    bodies=[
        ("Party planning, help. I'm organising a surprise thirtieth for my best friend {bf}, and the group "
         "chat has dozens of unread messages arguing about whether we do a cocktail class or axe "
         "throwing. {_near}I need a way to make a decision that doesn't start a war. Any tips for running "
         "a quick vote without the whole thing spiralling into another hundred messages?",
         "{_ack}Post one message with two options, a clear deadline (\"votes in by 6pm tomorrow\"), and "
         "a note that whichever wins, the other becomes next time's plan. A poll feature helps because "
         "it keeps the votes visible and the chatter down. Then announce the result and move straight to "
         "logistics.", None),
        ("Okay, honest opinion needed. My best friend, {bf}, and I have a tradition of a terrible-film "
         "night once a month, and it's my turn to pick. {_near}I want something properly, gloriously "
         "bad, but still watchable, nothing that's just boring-bad. Snacks are sorted, it's only the film "
         "I'm stuck on. What would you suggest?",
         "A few gloriously bad favourites: The Room (the gold standard), Troll 2, Birdemic, or Sharknado "
         "if you want knowing, self-aware silliness. For something big-budget and baffling, Battlefield "
         "Earth is a treat. Have fun!", None),
    ],
    q=["What's my best friend called?", "What's the name of my best friend?"],
    c=["who my best friend is", "what my best mate's name is"],
    n=["my best friend's name"],
    acks=["{bf} is lucky to have a friend like you. "],
    near=["(My flatmate {dname} wants to come too, which is a whole other negotiation.) "],
    near_make=_friend_near,
)

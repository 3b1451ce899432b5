"""Topics about daily life, food and health: diet, allergy, drink, cuisine, waking time, injury
and phobia.
"""

from __future__ import annotations

from recall_core.training.families.paraphrase.facts import P, Slot, Spec

SPECS: tuple[Spec, ...] = (  # this module's topics, in the order written
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
)

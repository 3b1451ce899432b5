"""Changing facts about habits and tastes: the diet, the workout, the show, the language being learnt
and the coffee order.
"""

from __future__ import annotations

_K: dict[str, dict] = {}  # this module's kinds, by key, in the order written

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

"""Changing facts about things the user owns: the car, the phone and the laptop."""

from __future__ import annotations

_K: dict[str, dict] = {}  # this module's kinds, by key, in the order written

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

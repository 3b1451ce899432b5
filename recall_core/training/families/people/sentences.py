"""What is said about the cast: introductions, statements and changes of an attribute, the
assistant's acknowledgements, and strangers' near-miss facts.
"""

from __future__ import annotations

# ------------------------------------------------------------------------------------------------
# user sentences. Slots: who / whos (the person, possessive), he him his hes hed, and values.

INTRO = [
    ("Had a long lunch with my {rel} {name} yesterday. We hadn't properly caught up in ages.",
     ["Long lunches are the best kind of catch-up! Was it good to see {name} after so long?",
      "That sounds lovely. What did you and {name} end up talking about?"]),
    ("My {rel} {name} rang me at eleven last night purely to talk about a TV show. Classic {name}.",
     ["Ha, a late-night call just to discuss telly! Which show has {name} hooked?"]),
    ("Just so you've got the cast list straight: {name} is my {rel}. {He} comes up a lot.",
     ["Got it, thanks for the context! Always happy to hear how {name} is getting on."]),
    ("{name}, my {rel}, is coming to stay for two nights and I haven't even changed the sheets.",
     ["You've still got time! Fresh sheets and a spare towel go a long way. Anything fun planned "
      "with {name} while {he}'s there?"]),
    ("Got a voice note from my {rel} {name} this morning that was literally nine minutes long.",
     ["Nine minutes! That's practically a podcast episode. Was it good news from {name}, at least?"]),
    ("I owe my {rel} {name} a call. {He}'s left me two messages this week and I keep forgetting.",
     ["Maybe pick a time tonight and set a reminder? I'm sure {name} will just be glad to hear from you."]),
    ("Spent the afternoon helping my {rel}, {name}, build a wardrobe. Three hours, two leftover screws.",
     ["The mysterious leftover screws are a flat-pack tradition! Nice of you to help {name} out, "
      "hopefully the wardrobe is still standing."]),
    ("Bumped into {name} at the supermarket (that's my {rel}, by the way) and we ended up chatting "
     "by the frozen peas for half an hour.",
     ["The frozen aisle catch-up is a classic! Nice that you and {name} got a proper chat in."]),
]
INTRO_NICK = [
    ("My {rel} is {name}, though nobody's called {him} that since school. It's {nick} to everyone.",
     ["{nick} it is, then! Thanks for the heads-up."]),
    ("Went for a walk by the river with my {rel} {name} ({nick} to pretty much everyone) this morning.",
     ["A morning walk by the river sounds perfect. How's {nick} doing?"]),
]

STATE = {
    "job": [
        "{Who} just landed a job as {job_a}! {He}'s been applying for months, so it's a massive relief.",
        "Did I ever mention {who} works as {job_a}? Means {he}'s never free when the rest of us are.",
        "{Whos} {job} job sounds so intense. I honestly don't know how {he} does it.",
        "Found out last week that {who} is {job_a}. All these years and I had no clue!",
        "{Who} has been {job_a} for about a decade and somehow still loves it.",
        "{Who} retrained during lockdown and {hes} {job_a} now. Suits {him} perfectly.",
        "Fun fact about {who}: {hes} {job_a}. People never guess.",
    ],
    "city": [
        "{Who} lives out in {city}, so I only get to see {him} a couple of times a year.",
        "{Who} just moved to {city} for a fresh start. Brave!",
        "{Whos} flat in {city} has the most ridiculous view, I'm so jealous.",
        "{Who} has been living in {city} for years now and says {he}'s never leaving.",
        "I might finally visit {who} in {city} this summer. {Hes} lived there for ages and I've never been.",
    ],
    "pet": [
        "{Who} has {pet_a} called {petname} who basically runs the whole household.",
        "{Who} just adopted {pet_a}! It's called {petname} and it's already ruling the roost.",
        "{Whos} {pet}, {petname}, eats better than I do. No exaggeration.",
        "Went round to {whos} place and finally met {petname}, {his} {pet}. Instantly obsessed.",
        "{Who} sent me about forty photos of {his} {pet} {petname} today. Not complaining.",
    ],
    "hobby": [
        "{Who} has got seriously into {hobby} lately. It's all {he} talks about.",
        "{Who} took up {hobby} this year and is annoyingly good at it already.",
        "Apparently {whos} big passion is {hobby}. Who knew!",
        "{Who} keeps trying to drag me along to {hobby} and I keep inventing excuses.",
        "{Whos} whole weekend revolves around {hobby} these days.",
    ],
    "birthday": [
        "{Whos} birthday is in {month}, so I should probably start thinking about a present.",
        "{Who} is a {month} baby and never lets anyone forget it.",
        "Writing this down before I forget: {whos} birthday is the {day} of {month}.",
        "{Who} has a big birthday coming up in {month} and is already talking about a party.",
    ],
    "car": [
        "{Who} just bought {car_a} and is ridiculously proud of it.",
        "{Who} drives {car_a} that sounds like a tractor on cold mornings.",
        "{Who} picked me up from the station in {his} {car} yesterday. Very smooth ride.",
        "{Whos} {car} broke down on the motorway again, poor thing.",
        "{Who} finally passed {his} driving test and bought {car_a} the same week.",
    ],
    "study": [
        "{Who} is studying {study} at uni and seems to actually enjoy it.",
        "{Who} just started a degree in {study}. The reading list is enormous.",
        "{Who} is doing a part-time master's in {study} on top of everything else.",
        "{Who} has exams coming up. Second year of {study} is no joke, apparently.",
        "{Who} got a place to do {study}! The offer came through this morning.",
    ],
}

CHANGE = {
    "job": [
        "Big news from {who}: {he} quit being {old_job_a} and started as {job_a} this week.",
        "{Who} has finally packed in the {old_job} work. {Hes} {job_a} now!",
        "{Who} switched careers, can you believe it? {Hes} working as {job_a} these days.",
        "Update on {who}: no longer {old_job_a}. {He} got taken on as {job_a} instead.",
    ],
    "city": [
        "{Who} has moved again! {Old_city} to {city} this time.",
        "{Who} left {old_city} last month, {hes} living in {city} now.",
        "Helped {who} load the van at the weekend: {hes} officially moved to {city}.",
        "Turns out {who} didn't last long in {old_city}. {Hes} relocated to {city}.",
    ],
    "car": [
        "{Who} finally got rid of the {old_car} and bought {car_a}.",
        "{Who} traded in {his} {old_car} for {car_a}. Very fancy.",
        "{Who} has a new car, {car_a}! The old one went to the scrapyard.",
    ],
    "hobby": [
        "{Who} has given up {old_hobby} and is all about {hobby} now.",
        "{Who} dropped {old_hobby}, apparently. The new obsession is {hobby}.",
        "No more {old_hobby} for {who}. {Hes} switched to {hobby}.",
    ],
    "study": [
        "{Who} switched courses and dropped {old_study} for {study}.",
        "{Who} is doing {study} now instead of {old_study}. Much happier, apparently.",
        "Turns out {who} changed degree. {Hes} studying {study} now.",
    ],
}

# assistant acknowledgements. Slots: ref (how the assistant names the person), he him his, values.
ACK = {
    "job": [
        "{Job_a}! That's a job with real responsibility. Does {he} enjoy it?",
        "Being {job_a} must keep {ref} busy. I bet {he} has some stories!",
        "Oh, that's interesting! What got {ref} into working as {job_a}?",
    ],
    "city": [
        "{City} is a lovely place! Have you been out to see {him} there?",
        "Ooh, {city}! If you ever plan a trip to see {ref}, I'm happy to help with an itinerary.",
        "Sounds like {city} suits {ref}. Is it far from you?",
    ],
    "pet": [
        "{Petname} sounds like a total character! {Pet_a} can have so much personality.",
        "Aww, {pet_a} called {petname}! Do you ever get to pet-sit?",
        "Ha, I love that. How is {petname} with visitors?",
    ],
    "hobby": [
        "{Hobby} is such a good way to switch off. Have you ever been tempted to join {him}?",
        "Good for {ref}! {Hobby} takes a lot of patience.",
        "That's brilliant. It's great when something like {hobby} really clicks for someone.",
    ],
    "birthday": [
        "A {month} birthday, so you've got a bit of time. Want some gift ideas nearer the date?",
        "{Month} it is! Does {ref} like a big fuss, or something low-key?",
        "Good call getting ahead of it. I can help brainstorm presents closer to {month} if you like.",
    ],
    "car": [
        "{Car_a}, nice! Is {he} enjoying driving it?",
        "Ah, the {car}! Hopefully it treats {him} well.",
        "Cars really do have personalities, don't they? I hope the {car} keeps going for {ref}.",
    ],
    "study": [
        "{Study} is a fascinating subject. What got {ref} interested in it?",
        "That's a lot of work, but {study} sounds really rewarding. Wishing {him} luck with it!",
        "Good for {ref}! Is {he} finding the {study} course manageable so far?",
    ],
}
ACK_CHANGE = {
    "job": [
        "What a change! Starting out as {job_a} takes guts. I hope it's going well for {him}.",
        "Good for {ref}! A new career as {job_a} is exciting. How's {he} finding it so far?",
    ],
    "city": [
        "Another move! I hope {ref} settles into {city} quickly.",
        "Moving is exhausting, so fingers crossed {city} is the place that sticks for {him}.",
    ],
    "car": [
        "New wheels! {Car_a} is quite an upgrade. Has {he} taken you for a spin yet?",
        "Out with the old! I hope the {car} is more reliable for {ref}.",
    ],
    "hobby": [
        "A whole new hobby! {Hobby} sounds like a fun change. What made {him} switch?",
        "Ha, fair enough. {Hobby} sounds like a good fit for {ref}.",
    ],
    "study": [
        "Switching courses is a big decision. I hope {study} feels like a better fit for {him}!",
        "It's brave to change direction. Fingers crossed {ref} loves {study}.",
    ],
}
MERGED_PREFIX = ["Lots of news! ", "Busy times for everyone! ", "Wow, a lot going on. "]
JOINERS = ["Oh, and ", "Also, ", "And while I think of it, ", "Other news: "]

# strangers' near-miss facts. Slots: drel (a relation word), values.
DISTRACT = {
    "job": [
        ("Chatting to my hairdresser today, and it turns out her {drel} is {job_a}. I had so many questions.",
         "Hairdressers always have the best stories! Sounds like you got a good chat out of it."),
        ("The guy who came to fix the boiler said his {drel} works as {job_a}. He talked the entire time.",
         "Ha, a chatty repair visit! At least the boiler's sorted, I hope."),
    ],
    "city": [
        ("The woman next to me on the train was telling me her {drel} just moved to {city}.",
         "Train conversations can be surprisingly fun! {City} is supposed to be lovely."),
        ("My dentist spent the whole check-up talking about her {drel}'s new place in {city}. I could only nod.",
         "The classic dentist chat, where you can't reply! Hope the check-up went well otherwise."),
    ],
    "pet": [
        ("There's a man at my gym who shows everyone photos of his {drel}'s {pet}.",
         "Ha! A {pet} is a pretty good conversation starter, to be fair."),
        ("Our postie told me her {drel} has {pet_a} called {petname}. Made my morning.",
         "That's adorable. {Petname} is a brilliant name."),
    ],
    "hobby": [
        ("Someone at work was showing off videos of their {drel} doing {hobby}. Looked terrifying.",
         "{Hobby} can look intense from the outside! Would you ever give it a go?"),
    ],
    "car": [
        ("A bloke in the car park was bragging that his {drel} drives {car_a}. Okay, mate.",
         "Car park bragging, a proud tradition! {Car_a} is a nice car, to be fair."),
    ],
    "study": [
        ("The barista said her {drel} just started studying {study}. She seemed so proud.",
         "That's sweet. {Study} is a great subject to get into."),
    ],
    "birthday": [
        ("The cashier at the bakery said it's her {drel}'s birthday in {month}, and she's already stressed about the cake.",
         "Ha, a bakery worker stressed about a cake! I'm sure it'll be a good one."),
    ],
}

"""Topics about pastimes and plans: the weekend pastime, an instrument, a language, volunteering,
a talent, a trip, an heirloom, the allotment and a marathon.
"""

from __future__ import annotations

from recall_core.training.families.paraphrase.facts import P, Slot, Spec

SPECS: tuple[Spec, ...] = (  # this module's topics, in the order written
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

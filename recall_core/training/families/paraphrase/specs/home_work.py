"""Topics about work, home and getting about: the job, the employer, the city, the hometown, the
car, the commute, the kind of home and its floor.
"""

from __future__ import annotations

from recall_core.training.families.paraphrase.facts import CITIES, P, Slot, Spec, _floors

SPECS: tuple[Spec, ...] = (  # this module's topics, in the order written
    Spec(
        "job",
        (Slot("job", (
            P("paramedic"), P("locksmith"), P("midwife"), P("tree surgeon", "arborist"),
            P("translator"), P("pastry chef"), P("sound engineer", "audio engineer"),
            P("dental hygienist", "hygienist"), P("air traffic controller", "air traffic control"),
            P("physiotherapist", "physio"), P("optician"), P("court stenographer", "stenographer"),
            P("plumber"),
        ), (
            "What do I do to pay the bills?",
            "Remind me how I earn my wage?",
            "What's my occupation?",
            "Do you remember my profession?",
        ), blocked_by=("employer",)),),
        (
            ("Twelve-hour shift done and I can't feel my feet. Being {a_v} is not for the faint-hearted.",
             ("Twelve hours on your feet, you've earned a sit-down! Being {a_v} must take it out of "
              "you. What was the hardest bit today?",)),
            ("Nine years as {a_v} and people still ask me for freebies at parties.",
             ("Nine years as {a_v}, that's serious experience! What's the strangest thing anyone's "
              "asked you at a party?",)),
            ("Everyone assumes being {a_v} is glamorous. It's mostly paperwork and cold tea.",
             ("Paperwork and cold tea, the unglamorous truth! What's the part of being {a_v} you "
              "actually enjoy?",)),
        ),
        (
            ("My dad's job is ridiculous: he's {a_v} and somehow always done by three.",
             ("Done by three sounds like the dream! Being {a_v} clearly has its perks.",)),
            ("My cousin just qualified as {a_v}, so the family group chat is unbearable.",
             ("Ha, a proud family chat is a lot! Qualifying as {a_v} is a big deal though.",)),
        ),
        (
            ("Big news: I handed in my notice! As of Monday I'm {a_v}. Terrified but excited.",
             ("Congratulations, that's a huge step! How are you feeling about starting as {a_v}?",)),
            ("Officially done with being {a_old}. My first week as {a_v} starts tomorrow, wish me luck!",
             ("Good luck! Going from {old} to {v} is a big change. What made you take the leap?",)),
        ),
        excludes=("employer",),
    ),
    Spec(
        "employer",
        (Slot("employer", (
            P("Hollowbrook Logistics", "Hollowbrook"), P("Quillfeather Press", "Quillfeather"),
            P("Brightmoor Analytics", "Brightmoor"), P("Tarn & Vale", "Tarn and Vale"),
            P("Saltmarsh Games", "Saltmarsh"), P("Orrin Biotech", "Orrin"),
            P("Kestrel Freight", "Kestrel"), P("Pennyworth Insurance", "Pennyworth"),
            P("Fernhollow Studios", "Fernhollow"), P("Corvid Robotics", "Corvid"),
        ), (
            "Who do I work for?",
            "Remind me which company employs me?",
            "What's the name of my employer?",
        ), blocked_by=("job",)),),
        (
            ("Payday at {v} at last, and they've 'restructured' the canteen into one vending machine.",
             ("Payday is always welcome, even if the {v} canteen isn't! Anything decent in the vending machine?",)),
            ("Six years at {v} now and they still spell my surname wrong on my badge.",
             ("Six years and still misspelled, that's impressive in the wrong way! Have you told "
              "anyone at {v}?",)),
        ),
        (
            ("My best mate just got headhunted by {v}. The company's offering her nearly double.",
             ("Nearly double is a serious offer! Is she tempted to go to {v}?",)),
            ("A recruiter keeps trying to get me to work for {v} and I can't be bothered to reply.",
             ("A polite 'not right now' usually stops them. Want me to draft one for the {v} recruiter?",)),
        ),
        excludes=("job",),
    ),
    Spec(
        "city",
        (Slot("home_city", tuple(P(c) for c in CITIES), (
            "Which city do I call home?",
            "Where am I based these days?",
            "Do you remember where I live?",
        )),),
        (
            ("Three years in {v} now and I still get lost walking back from the station.",
             ("Three years and {v} still has surprises for you! Got a favourite corner yet?",)),
            ("Rent in {v} has gone up again, and our landlord still calls the damp 'character'.",
             ("'Character' is a generous word for damp! Is rent in {v} getting hard to manage?",)),
        ),
        (
            ("My parents still live in {v} and refuse to visit us because of the traffic.",
             ("Ha, traffic is a classic excuse! Maybe meet them halfway, or head to {v} yourself?",)),
            ("Half my team is based in {v}, so every meeting starts with a weather report.",
             ("A weather report from {v} is a pretty gentle icebreaker!",)),
        ),
        (
            ("The removal van has been and gone: we're officially in {v} now! Boxes everywhere.",
             ("Welcome to {v}! Unpacking is a marathon, so start with the kettle.",)),
            ("Goodbye {old}, hello {v}! First night in the new flat and I've no idea where the kettle is.",
             ("Hello {v}! The kettle is always in the last box you open. How does the new place feel?",)),
        ),
    ),
    Spec(
        "hometown",
        (Slot("hometown", tuple(P(c) for c in CITIES), (
            "Where am I originally from?",
            "What town was I raised in?",
            "Do you remember where I spent my childhood?",
        )),),
        (
            ("I grew up in {v}, so anything above ten degrees feels like a heatwave to me.",
             ("Ha, growing up in {v} would calibrate anyone's thermostat! Do you get back there much?",)),
            ("Went back to {v} for the first time since school. The chippy by the harbour is still there!",
             ("Going back to {v} after all that time must have been surreal. Did the chips live up to it?",)),
        ),
        (
            ("My boss was raised in {v} and never lets anyone forget it.",
             ("Some people carry their hometown like a badge! Does your boss bring up {v} in every meeting?",)),
            ("My partner's originally from {v}, so Christmas there is non-negotiable.",
             ("Christmas in {v} sounds rather lovely, non-negotiable or not!",)),
        ),
    ),
    Spec(
        "car",
        (Slot("car", (
            P("Fiat Panda", "Panda"), P("Skoda Octavia", "Octavia", "Skoda"),
            P("Land Rover Defender", "Defender", "Land Rover"), P("Mazda MX-5", "MX-5", "Mazda"),
            P("Renault Clio", "Clio", "Renault"), P("Subaru Forester", "Forester", "Subaru"),
            P("Volvo estate", "Volvo"), P("Citroen Berlingo", "Berlingo", "Citroen"),
            P("Toyota Prius", "Prius", "Toyota"), P("Honda Jazz", "Honda"),
        ), (
            "What car do I have?",
            "What do I drive?",
            "Remind me what vehicle I own?",
        )),),
        (
            ("The {v} failed its MOT again. The exhaust is basically held on with hope and a coat hanger.",
             ("Oh no, not the {v} again! A coat hanger is creative engineering, but it might be "
              "worth getting a proper quote.",)),
            ("Just did a 400-mile round trip in the {v} with a boot full of camping stuff and zero legroom.",
             ("400 miles with no legroom is heroic! How did the {v} cope with the load?",)),
        ),
        (
            ("My neighbour's new car is {a_v} and he polishes it every Sunday without fail.",
             ("Every Sunday! That {v} must be the shiniest on the street.",)),
            ("My boss drives a brand-new {v} and parks it across two spaces.",
             ("Parking across two spaces in a brand-new {v} is a bold way to make friends!",)),
        ),
        (
            ("Finally said goodbye to the {old}. Picked up a secondhand {v} this morning and it "
             "smells like new plastic.",
             ("Farewell {old}, hello {v}! That new-plastic smell is half the fun.",)),
            ("Traded the old banger in. I am now the proud owner of {a_v}, and I keep going outside to look at it.",
             ("Ha, that's the sign of a happy purchase! Enjoy the {v}.",)),
        ),
    ),
    Spec(
        "commute",
        (Slot("commute", (
            P("tram"), P("ferry"), P("train"), P("bus"), P("river boat", "boat"),
            P("shuttle coach", "coach"),
        ), (
            "How do I get to work?",
            "What do I take for my commute?",
            "Remind me how I travel in to my job?",
        )),),
        (
            ("Another morning wedged onto the {v} with someone's rucksack in my face. Living the dream.",
             ("A rucksack to the face on the {v} is nobody's dream! Any chance of a later one?",)),
            ("The {v} into the office was forty minutes late, so I missed half the all-hands.",
             ("Forty minutes late, how frustrating! Did you catch up on what you missed from the all-hands?",)),
        ),
        (
            ("My partner gets the {v} to work and it's always on time, which is deeply unfair.",
             ("The {v} being reliable is a rare luxury! Some people have all the luck.",)),
            ("My boss commutes on the {v} and takes all her calls from it, which is chaotic.",
             ("Calls from the {v} do sound chaotic! Lots of background noise, I imagine.",)),
        ),
        (
            ("New routine: I've ditched the {old} and started taking the {v} in. Way calmer.",
             ("Way calmer is a great trade! How long does the {v} take compared to before?",)),
            ("Week one of getting the {v} to the office instead. I can actually read a book now!",
             ("Reading on the {v}, that's a lovely upgrade! What book have you started?",)),
        ),
    ),
    Spec(
        "home_type",
        (Slot("home_type", (
            P("narrowboat", "canal boat"), P("houseboat"), P("converted barn", "barn"),
            P("bungalow"), P("tiny house"), P("static caravan", "caravan"),
            P("lighthouse keeper's cottage", "lighthouse"), P("yurt"),
        ), (
            "What sort of place do I live in?",
            "What kind of home have I got?",
            "Do you remember what my house is like, what type it is?",
        ), blocked_by=("floor",)),),
        (
            ("Life on {a_v} is great until the heating packs in, which it did at 2am.",
             ("A 2am heating failure sounds miserable! Is there a backup heater on the {v}?",)),
            ("People think {a_v} is romantic. Tell that to my back and the condensation.",
             ("Ha, the romance of {a_v} does wear thin with condensation! Have you tried a dehumidifier?",)),
        ),
        (
            ("My cousin's just bought {a_v} and keeps sending me photos of the view.",
             ("{A_v} with a view, lucky cousin! Are you planning a visit?",)),
            ("My best friend is moving into {a_v} full-time, says it's his dream home.",
             ("{A_v} as a dream home is quite something! Has he done the maths on heating it?",)),
        ),
        excludes=("floor",),
    ),
    Spec(
        "floor",
        (Slot("floor", _floors(), (
            "How high up is my flat?",
            "Which storey is my apartment on?",
            "Remind me what level my place is on?",
        ), blocked_by=("home_type",)),),
        (
            ("We're on the {v} floor and the lift has been broken for a week. My calves are enormous now.",
             ("A week of stairs to the {v} floor is a workout! Has the building said when the lift will be fixed?",)),
            ("Carrying the weekly shop up to the {v} floor is my only cardio.",
             ("Up to the {v} floor with shopping bags is serious cardio! Ever considered delivery?",)),
        ),
        (
            ("My sister's flat is on the {v} floor and she can see the whole city from it.",
             ("A view from the {v} floor sounds amazing! Is it worth the stairs?",)),
            ("A colleague's flat is on the {v} floor and her kitten still climbs up the balcony.",
             ("A kitten reaching the {v} floor is frankly impressive!",)),
        ),
        excludes=("home_type",),
    ),
)

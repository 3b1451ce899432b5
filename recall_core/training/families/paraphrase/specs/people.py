"""Topics about the user's family and pet, and the user's birthday."""

from __future__ import annotations

from recall_core.training.families.paraphrase.facts import (
    BOYS,
    BROTHERS,
    GIRLS,
    PARTNERS,
    PET_NAMES,
    SISTERS,
    P,
    Slot,
    Spec,
    _dates,
)

SPECS: tuple[Spec, ...] = (  # this module's topics, in the order written
    Spec(
        "daughter",
        (Slot("daughter_name", tuple(P(n) for n in GIRLS), (
            "What name does my daughter answer to?",
            "Remind me of my daughter's name?",
            "Do you remember what my daughter's name is?",
            "What did we name our girl?",
        )),),
        (
            ("Big week here: our little one, {v}, started kindergarten on Monday and didn't even "
             "look back at the gate.",
             ("Didn't even look back, {v} sounds brave! How are you holding up after the first week "
              "of kindergarten?",)),
            ("My youngest, {v}, has announced she's a dinosaur now and will only answer to roars. "
             "Four-year-olds are something else.",
             ("A dinosaur! {v} clearly has excellent taste. Has she picked a species yet?",)),
            ("Had to leave early today: {v} lost her first tooth at nursery and was inconsolable "
             "until I mentioned the tooth fairy.",
             ("Poor {v}! The tooth fairy is a powerful negotiator. Is the tooth going under the pillow tonight?",)),
        ),
        (
            ("My sister's daughter {v} just got into vet school, the whole family is buzzing.",
             ("Vet school, that's fantastic news for {v}! Your sister must be so proud.",)),
            ("Our neighbours' daughter, {v}, babysits for half the street. She's booked up till Christmas.",
             ("Booked up till Christmas, {v} is clearly in demand! Lucky street.",)),
            ("A colleague's daughter, {v}, is doing a sponsored swim and I've been guilted into donating.",
             ("Guilted or not, it's for a good cause! Good luck to {v}.",)),
        ),
    ),
    Spec(
        "son",
        (Slot("son_name", tuple(P(n) for n in BOYS), (
            "What name does my son answer to?",
            "Remind me what my son's name is?",
            "Do you remember my boy's name?",
            "What's the name of my son?",
        )),),
        (
            ("My eldest, {v}, passed his driving test first time. I'm equal parts proud and terrified.",
             ("First time, well done {v}! Has he asked to borrow the keys yet?",)),
            ("Parents' evening tonight. {v}'s form tutor says he's 'a delight but chatty'. No idea "
             "where he gets that from.",
             ("'A delight but chatty' is a pretty lovely report! How did {v} take it?",)),
            ("Our lad {v} has discovered skateboarding and I've discovered the price of helmets.",
             ("Skateboarding and helmets go hand in hand! Is {v} practising at a skatepark?",)),
        ),
        (
            ("My cousin's son {v} is staying with us this weekend and he eats like a horse.",
             ("Teenage appetites are no joke! Stock up on snacks before {v} arrives.",)),
            ("Our neighbours' son, {v}, mows our lawn for a fiver. Absolute bargain.",
             ("A fiver for a mown lawn is a steal! {v} sounds like a budding entrepreneur.",)),
        ),
    ),
    Spec(
        "partner",
        (Slot("partner_name", tuple(P(n) for n in PARTNERS), (
            "What's the name of the love of my life?",
            "Who am I in a relationship with?",
            "Do you remember my partner's name?",
            "Remind me what my sweetheart is called?",
        )),),
        (
            ("My other half, {v}, has booked us a surprise getaway. I've been told to pack wellies, "
             "which is ominous.",
             ("Wellies is a very mysterious clue! Any guesses what {v} has planned?",)),
            ("Ten years with {v} next month and we still can't agree on how to load a dishwasher.",
             ("Ten years, congratulations! The dishwasher debate may be eternal. Are you and {v} "
              "doing anything to celebrate?",)),
        ),
        (
            ("My best mate's partner, {v}, keeps feeding us leftovers from the restaurant.",
             ("Free restaurant leftovers are the best kind of friendship perk! What has {v} brought round?",)),
            ("Had dinner with my boss and her partner {v}, who talked about cryptocurrency for two hours.",
             ("Two hours of crypto is an endurance event! Did {v} at least pick up the bill?",)),
        ),
    ),
    Spec(
        "sister",
        (Slot("sister_name", tuple(P(n) for n in SISTERS), (
            "What name does my sister answer to?",
            "Remind me of my sister's name?",
            "Can you recall what my sister's name is?",
        )),),
        (
            ("My big sis {v} is getting married in the spring and somehow I'm in charge of the speech.",
             ("A speech for {v}'s wedding, what an honour (and a bit of pressure)! Want help with an outline?",)),
            ("{v} and I still aren't speaking. She borrowed my tent and returned it full of sand. Siblings, eh?",
             ("A sandy tent is a classic sibling crime! Do you think {v} will own up?",)),
        ),
        (
            ("My flatmate's sister {v} is crashing on our sofa all week.",
             ("A week on the sofa is a long stay! Is {v} at least doing the washing up?",)),
            ("My colleague's sister, {v}, does stand-up and we're all going to her gig on Friday.",
             ("A stand-up gig sounds like a great night out! I hope {v} brings the house down.",)),
        ),
    ),
    Spec(
        "brother",
        (Slot("brother_name", tuple(P(n) for n in BROTHERS), (
            "What name does my brother answer to?",
            "Remind me what my brother's name is?",
            "Can you recall my brother's name?",
        )),),
        (
            ("My little bro {v} just moved back in with Mum and Dad, aged thirty-one. The jokes write themselves.",
             ("Ha, thirty-one and back with Mum and Dad! How is {v} taking the teasing?",)),
            ("{v} rang me at midnight to ask how to cook pasta. He's thirty-four. I fear for him.",
             ("A midnight pasta emergency! At least {v} knows who to call.",)),
        ),
        (
            ("My mate's brother, {v}, fixed my laptop for a pint. Legend.",
             ("A laptop repair for a pint is a fantastic deal. {v} deserves a second one!",)),
            ("My partner's brother {v} is coming for Christmas and bringing his drum kit.",
             ("A drum kit at Christmas is a bold move! Maybe {v} can be persuaded to play quietly.",)),
        ),
    ),
    Spec(
        "pet",
        (
            Slot("pet_kind", (
                P("greyhound", "dog"), P("whippet", "dog"), P("beagle", "dog"), P("ferret"),
                P("tortoise"), P("cockatiel", "bird", "parrot"), P("rabbit", "bunny"),
                P("guinea pig"), P("Maine Coon", "cat"), P("bearded dragon", "lizard"),
            ), (
                "What kind of animal do I keep?",
                "Remind me what species my pet is?",
                "Do you remember what type of animal lives with me?",
            )),
            Slot("pet_name", tuple(P(n) for n in PET_NAMES), (
                "What name does my pet answer to?",
                "Remind me of my pet's name?",
                "Do you remember what my pet is called?",
            )),
        ),
        (
            ("We finally caved and brought home a rescue {v}! {w} has been with us four days and "
             "already rules the household.",
             ("A rescue {v}, how lovely! How is {w} settling in?",)),
            ("Vet bill today for {w}, our {v}. Apparently 'eats everything' is not a personality trait.",
             ("Oh no, poor {w}! Did the vet have any tips for keeping {a_v} out of trouble?",)),
            ("Working from the sofa today with {w} the {v} snoozing next to me. Productivity: questionable.",
             ("Honestly, a snoozing {v} is the best kind of office mate. Give {w} a scratch from me!",)),
        ),
        (
            ("My neighbour's pet {v}, {w}, keeps escaping into our garden and eating the lettuce.",
             ("Ha, {w} sounds like a determined escape artist! Maybe a word with the neighbour about the fence?",)),
            ("I'm pet-sitting a friend's {v} called {w} this week. Chaos.",
             ("Pet-sitting {a_v} sounds like an adventure! What has {w} got up to so far?",)),
        ),
    ),
    Spec(
        "birthday",
        (Slot("birthday", _dates(), (
            "When do I blow out the candles each year?",
            "What date do I get a year older?",
            "Do you remember when I was born, the day and month?",
        )),),
        (
            ("Mark your calendar: {v}. I'm turning forty and I fully expect cake.",
             ("Forty on {v}, that deserves a proper cake! Any plans for the day?",)),
            ("Everyone keeps asking what I want for my big day on {v}. Socks, probably. It's always socks.",
             ("Ha, socks are the eternal present! Want some gift ideas to drop as hints before {v}?",)),
        ),
        (
            ("My best friend's birthday is {v} and I forget every single year.",
             ("A calendar reminder a week before {v} could save the friendship!",)),
            ("The office is doing cake for my manager's birthday on {v}. I've been put in charge of the card.",
             ("In charge of the card for {v}! Want some ideas for a message?",)),
        ),
    ),
)

"""The chat around the facts: greetings, closings, connectors, small talk and requests for help
(with the pools their placeholders draw from), and the prefixes that wrap a question.
"""

from __future__ import annotations

# -- small talk ----------------------------------------------------------------------------------

GREETINGS = (
    ("Morning!", "Good morning! What can I do for you today?"),
    ("Hey, you about?", "I'm here! What's up?"),
    ("Evening. Bit of a ramble coming, sorry in advance.", "Ramble away, I'm all ears."),
    ("Hiya", "Hi there! How's your day going?"),
    ("Hello again!", "Hello! Nice to hear from you. What's on your mind?"),
    ("Ugh, what a day. Hi.", "Hi! Sounds like a long one. Want to talk it through, or shall we get "
     "stuck into something?"),
    ("Hi hi. Got a few things for you today.", "Fire away!"),
)

CLOSINGS = (
    ("Right, I'd better get on. Thanks!", "Anytime, take care!"),
    ("That's me for now, cheers.", "Cheers! Speak soon."),
    ("Thanks, that's really helpful.", "Glad it helped! Shout if you need anything else."),
    ("Okay, enough chat, back to it.", "Good luck with the rest of your day!"),
)

CONNECTORS = ("", "", "", "", "Anyway! ", "Ha, fair enough. ", "Oh, totally unrelated! ",
              "Right, next thing. ", "Also! ", "Okay, different topic. ")

#: Small talk and requests for help: (user, assistant, fillers) where fillers names the pools
#: used for placeholders in both texts.
FILLER_POOLS = {
    "room": ("bathroom", "kitchen", "utility room"),
    "ing1": ("chickpeas", "lentils", "mushrooms", "sweet potato"),
    "ing2": ("spinach", "aubergine", "butter beans", "leeks"),
    "event": ("housewarming", "leaving do", "quiz night"),
    "n": ("three", "four", "six"),
}

SMALL_TALK = (
    ("Random one: what's actually the difference between baking soda and baking powder?",
     "Baking soda is pure bicarbonate, so it needs something acidic in the recipe to react. Baking "
     "powder already contains the acid, so it works on its own once it meets moisture and heat."),
    ("Can you help me write a short email to my landlord about a dripping tap in the {room}?",
     "Of course! Here's a draft:\n\nHi,\n\nJust to let you know, the tap in the {room} has started "
     "dripping constantly. Could you arrange for someone to take a look when convenient? I'm "
     "flexible on timing.\n\nThanks very much,\n[Your name]"),
    ("Give me a quick dinner idea with {ing1} and {ing2}? Fridge is looking bleak.",
     "How about a one-pan stew: soften an onion in olive oil, add the {ing1} and {ing2}, a tin of "
     "chopped tomatoes and a spoonful of smoked paprika, then simmer for twenty minutes. Serve "
     "with rice or crusty bread."),
    ("How do I get candle wax off a carpet?",
     "Let it harden, scrape off what you can, then lay brown paper over the rest and press with a "
     "warm iron. The paper soaks the wax up; move to a clean patch and repeat."),
    ("Any tips for getting to sleep when my brain won't stop buzzing?",
     "A few that help lots of people: keep the same bedtime, put the phone in another room, and "
     "jot a quick to-do list before bed so your mind can let go of it. If you're still awake after "
     "twenty minutes, get up and do something dull in dim light."),
    ("Settle an argument for me: does pineapple belong on pizza?",
     "It's one of the great divides! Sweet and salty is a classic pairing, so it works for plenty "
     "of people, and purists will never accept it. Order half and half and everyone wins."),
    ("Can you explain what an index fund is in two sentences?",
     "An index fund buys all the shares in a market index instead of trying to pick winners. That "
     "keeps fees low, and over the long term it's a solid option for most savers."),
    ("What's a houseplant that's basically impossible to kill?",
     "A snake plant or a ZZ plant: both cope with low light and forgetful watering. Pothos is "
     "another forgiving one."),
    ("Help me politely turn down a {event} invite? I just can't face it this time.",
     "Sure! Something like: 'Thank you so much for thinking of me! I can't make it this time, but "
     "I hope the {event} is brilliant and I'd love to catch up soon.'"),
    ("Is it 'affect' or 'effect' in 'the rain will ___ our plans'?",
     "It's 'affect', the verb. 'Effect' is usually the noun, as in 'the rain had an effect on our plans'."),
    ("Rainy couple of days ahead. Any ideas that aren't just scrolling?",
     "A few: try a new recipe, do a jigsaw, have a film afternoon with snacks, or tackle one small "
     "job you've been putting off and reward yourself after."),
    ("Roughly how many grams is a cup of flour?",
     "Around 120 to 125 grams for plain flour, spooned in and levelled. It varies a bit with how "
     "tightly you pack it."),
    ("What's a nicer way to say 'per my last email'?",
     "You could try 'Just to recap what I mentioned earlier...' or 'Flagging this again in case it "
     "got buried'. Both keep it friendly."),
    ("Can you suggest a card game for {n} people that doesn't take all night?",
     "For {n} players, try Sushi Go or Love Letter: quick to learn, twenty minutes a round, and "
     "plenty of laughs."),
)

#: Prefixes that put a question inside a longer message; the flag says whether the question's
#: first letter is lowered after it.
WRAPPERS = (
    ("", False), ("", False), ("", False),
    ("Head's all over the place today. ", False),
    ("Humour me: ", True),
    ("Out of curiosity, ", True),
    ("Let's see if you remember. ", False),
    ("My brain's fried today. ", False),
    ("While I think of it: ", True),
)

"""The chat around the dates: greetings, closings and small talk or requests for help."""

from __future__ import annotations

# -- templates ---------------------------------------------------------------------------------------

# (user, assistant, only for a returning user)
GREETINGS = (
    ("Morning! Hope your day's going better than mine so far.",
     "Morning! Sorry to hear it's been a bumpy start. What's going on?", False),
    ("hiya, me again", "Hi again! What can I do for you today?", True),
    ("Hey hey. Got a minute?", "Always. What's up?", False),
    ("Evening! Finally sat down with a cup of tea.",
     "Evening! Tea and a sit-down sounds well earned. What's on your mind?", False),
    ("Hello again, brain dump incoming.", "Dump away, I'm all ears.", True),
    ("Hi! Back from a properly chaotic week.",
     "Welcome back! Chaotic how, the good kind or the other kind?", True),
    ("yo. quick catch-up?", "Sure thing, go for it.", True),
    ("Afternoon! I've got a list of random stuff, bear with me.",
     "Afternoon! Lists are my favourite. Fire away.", False),
    ("Hey, it's been a while!", "Hey! Good to hear from you. How have things been?", True),
    ("ok I'm procrastinating, talk to me", "Happy to be your procrastination buddy. What's up?", False),
    ("Hi there. Someone told me you're good at keeping track of stuff, so here goes.",
     "Hi! Happy to help keep track. What have you got?", False),
)

CLOSINGS = (
    ("Right, that's me for now. Thanks!", "Anytime! Have a good rest of your day."),
    ("Cheers, you're a star.", "Happy to help. Shout if anything else comes up!"),
    ("ok off to make dinner, ta", "Enjoy your dinner!"),
    ("Thanks, that's really helped clear my head.", "Glad to hear it. Good luck with everything!"),
    ("Brilliant, I'll leave you in peace now.", "You're never a bother. Take care!"),
)

FILLERS = (
    ("Random one: how long do I boil an egg if I want the yolk still jammy?",
     "About six and a half minutes from when it goes into boiling water, then straight into cold "
     "water for a minute so it stops cooking. Easier to peel that way too."),
    ("Can you help me word a quick email to my landlord about the dripping kitchen tap? Polite but firm.",
     "Sure, how about: \"Hi, just flagging that the kitchen tap has been dripping constantly and it's "
     "getting worse. Could you arrange for someone to take a look in the next few days? Thanks "
     "very much.\" Want it a touch firmer?"),
    ("what can I make with half a tin of coconut milk and some sad looking spinach",
     "A quick dal would be perfect: soften an onion with garlic and ginger, add red lentils, water "
     "and the coconut milk, simmer until soft, then wilt the spinach in at the end. A squeeze of "
     "lime lifts it."),
    ("Any tips for falling asleep when my brain just won't shut up?",
     "A few that help a lot of people: jot down whatever's looping on paper before bed, keep the "
     "room cool, and if you're awake for ages get up and do something dull in dim light rather "
     "than lying there stewing."),
    ("is it affect or effect in 'this will ___ the schedule'?",
     "Affect: it's the verb there. Effect is usually the noun, as in 'the effect on the schedule'."),
    ("What's the actual difference between baking soda and baking powder?",
     "Baking soda needs an acid in the recipe (buttermilk, yoghurt, lemon) to react; baking powder "
     "already has the acid mixed in, so it works on its own."),
    ("how do I get candle wax out of a tablecloth",
     "Scrape off what you can once it's hard, then put brown paper or kitchen roll over the spot "
     "and press with a warm iron. The paper soaks the wax up. Wash as normal afterwards."),
    ("Give me a quick stretching routine for after sitting at a desk all day?",
     "Try: neck rolls, a doorway chest stretch, a standing hip flexor lunge on each side, a seated "
     "twist, and hanging forward to let your back loosen. Half a minute each is plenty."),
    ("The weather here has been grim all week, just endless drizzle.",
     "Endless drizzle is the worst kind, not even dramatic enough to be interesting. Managing to "
     "get out at all?"),
    ("I'm reading a thriller that's so badly written I genuinely can't put it down",
     "The best kind of guilty pleasure! What's the most ridiculous twist so far?"),
    ("What's a polite way to turn down extra work without sounding lazy?",
     "Something like: \"I'd like to help, but I'm at capacity with the current priorities. If this "
     "one's more urgent, which should I move down the list?\" It shows willingness and puts the "
     "trade-off back on them."),
    ("How long does cooked rice keep in the fridge?",
     "Best eaten within a day. Cool it quickly, keep it covered in the fridge, and reheat it until "
     "it's piping hot all the way through."),
    ("Tell me a fun fact, I need distracting",
     "Octopuses have three hearts, and two of them stop beating while they swim. No wonder they "
     "prefer crawling."),
    ("How do you keep a supermarket basil plant alive? Mine always die.",
     "Split the pot into a few clumps and repot them, since they're massively overcrowded. Then "
     "give it a sunny windowsill, water from below, and pinch off the tops rather than single leaves."),
    ("Need a name for our pub quiz team. Something punny.",
     "A few: Quizteama Aguilera, Let's Get Quizzical, The Universally Challenged, Agatha Quiztie. "
     "Want more in a particular direction?"),
    ("is it weird to bring a bottle to a dinner party and then drink it",
     "Not weird at all! Once it's handed over it's the host's to serve, and most hosts open what "
     "people bring. Just don't take it home at the end."),
    ("What's a good way to remember people's names when I meet them?",
     "Say the name back straight away (\"Nice to meet you, Sam\"), use it once more before you "
     "part, and link it to something about them. Repetition does most of the work."),
    ("Any ideas for a cheap lunch I can take to work that isn't a sad sandwich?",
     "Big batch of orzo salad with roasted veg and feta keeps well for days. Or noodle jars: "
     "noodles, veg and a stock cube, and you just add boiling water at work."),
    ("how do I stop my glasses steaming up when I wear a scarf",
     "Pull the scarf up over your nose a bit so your breath goes down rather than up, or try an "
     "anti-fog spray. A tiny bit of washing-up liquid rubbed on and buffed off works in a pinch."),
    ("Can you explain what a 'soft launch' is? My teenager keeps saying it.",
     "It's when you hint at something, usually a new relationship, online without fully "
     "announcing it. A hand in a photo, two coffee cups, that kind of thing."),
)

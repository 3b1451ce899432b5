"""The chat around the facts: greetings, closings, openers and tails that pad a turn, small talk,
and the wrappers that turn a question's core into what the user asks.
"""

from __future__ import annotations

import random

from recall_core.training.families.passing.common import _lower_first, fill

# -- filler -----------------------------------------------------------------------------------------

GREET_USER = {
    "morning": ["Morning!", "Good morning! Coffee in hand, let's go.", "Morning, hope you're well."],
    "afternoon": ["Afternoon! Got a minute?", "Hi, hope your afternoon's going okay."],
    "evening": ["Evening! Got a sec?", "Hey, late one from me tonight."],
    "any": ["Hey!", "Hiya, me again.", "Hello hello.", "Hi! Long time no chat.", "Hey, a few things today.",
            "Hi there!"],
}
GREET_ASSISTANT = {
    "morning": ["Good morning! What can I do for you?", "Morning! Fire away."],
    "afternoon": ["Good afternoon! Of course, what's up?", "Hi! Happy to help, what's on your mind?"],
    "evening": ["Evening! Sure, what's up?", "Hi! No problem, what can I help with?"],
    "any": ["Hi! Good to hear from you. What's on your mind?", "Hello again! How can I help today?",
            "Hey! I'm all ears.", "Hi! What are we tackling today?"],
}
CLOSE_USER = ["That's brilliant, thanks. I'll leave you in peace now!", "Perfect, that's all for today. Cheers!",
              "Thanks, you're a star. Speak soon.", "Right, I'd better get on. Thanks for the help!",
              "Great, that sorts me out. Bye for now!"]
CLOSE_ASSISTANT = ["Anytime! Good luck with everything.", "Happy to help, speak soon!",
                   "You're welcome! Take care.", "Enjoy the rest of your day!"]
FOLLOW_UPS = ["Want me to turn that into a quick checklist?", "Does that help, or shall I go into more "
              "detail on any of it?", "How does that sound?", "Would a shorter version be more useful?",
              "Let me know how it goes!", "Anything you'd like me to adjust?"]
TAILS = ["No rush at all, whenever you've got a minute is fine.",
         "Sorry for the essay, my brain is all over the place today.",
         "Thanks in advance, honestly, you're saving my sanity here.",
         "Any pointers at all would be hugely appreciated, even rough ones.",
         "I'd love a straight answer, the internet is full of contradictions.",
         "Keep it simple if you can, I'm running on very little sleep."]
OPENERS = ["Okay, bit of a ramble, sorry.", "Bear with me, this turned into a bit of an essay.",
           "So, slightly random one.", "Can I pick your brain about something?", "Warning: long message.",
           "Okay, different topic entirely.", "Hope you don't mind me thinking out loud here.",
           "Right, this one's been bugging me all day."]
SMALL_TALK = [
    ("Random question while I wait for the kettle: does toast really always land butter side down, or "
     "is that a myth?",
     "There's some truth to it! From table height, a slice usually only has time for about half a turn "
     "before it hits the floor, so if it starts butter side up it tends to land butter side down. Drop it "
     "from much higher and the odds even out."),
    ("Can you give me a quick way to remember the difference between affect and effect? I get it wrong "
     "in every email.",
     "A handy trick: Affect is an Action (a verb), Effect is the End result (a noun). \"The rain affected "
     "my mood; the effect was a grumpy afternoon.\""),
    ("Is descaling a kettle actually worth doing, or is that something invented to sell products?",
     "It's worth it if you live in a hard-water area: limescale makes the kettle slower and less "
     "efficient. Boil a half-and-half mix of water and white vinegar (or use citric acid), leave it for "
     "an hour, then rinse and boil fresh water a couple of times."),
    ("How do I get candle wax out of a tablecloth? Asking for a clumsy friend. The friend is me.",
     "Scrape off what you can once it's hard, then lay brown paper or kitchen roll over the stain and "
     "press with a warm iron: the wax melts into the paper. Repeat with fresh paper, then treat any "
     "colour left behind with stain remover before washing."),
    ("Settle an argument for me: is a hot dog a sandwich?",
     "By a strict definition (filling between bread), you could argue yes. But most people, and most "
     "menus, treat it as its own thing. I'd say it's a sandwich technically and a hot dog spiritually."),
    ("Can you explain what an index fund is like I'm five?",
     "Imagine instead of picking one sweet from a shop, you buy a tiny piece of every sweet in it. If some "
     "go stale, others do fine, so overall you're okay. An index fund does that with companies: it buys a "
     "little of everything in a market list, cheaply."),
    ("Why do onions make you cry, and is there any trick that actually works?",
     "Cutting an onion releases a gas that irritates your eyes. What helps most: a very sharp knife "
     "(fewer damaged cells), chilling the onion first, and cutting near an extractor fan or open window."),
    ("What's a nice short poem I could read at a leaving do? Something light, not soppy.",
     "Something like: \"You're off to pastures new and bright, / We'll miss your jokes, your cake, your "
     "light. / Go conquer worlds, but now and then, / Come back and make the tea again.\" Easy to adapt!"),
    ("How long can cooked rice safely sit in the fridge?",
     "Cool it quickly (within an hour), refrigerate it, and eat it within about a day. When reheating, "
     "make sure it's piping hot all the way through, and only reheat it once."),
    ("Could you write me a two-line reply to a group chat, turning down a Saturday plan without "
     "sounding rude?",
     "\"Gutted to miss this one, Saturday's already spoken for! Have the best time and send photos.\""),
    ("Do houseplants actually clean the air, or is that a myth?",
     "Mostly a myth at normal home scale: you'd need an enormous number of plants to match a simple "
     "open window or an air purifier. They're still great for mood, though."),
    ("What's the trick to folding a fitted sheet? I've given up and just ball it up.",
     "Put your hands into two corners, tuck one corner into the other, repeat on the other side, then "
     "lay it flat, fold the elasticated edges in to make a rectangle, and fold as normal."),
    ("Is there a word for being tired but also wired? There must be one.",
     "People often say 'tired but wired', and you might also see 'overtired'. Some use the phrase "
     "'second wind' for the burst of energy that arrives just as you should be sleeping."),
    ("Why is the sky darker blue straight overhead than near the horizon?",
     "Near the horizon you're looking through much more atmosphere, which scatters light of all colours "
     "and washes the blue out towards white. Straight up there's less air in the way, so it looks deeper."),
    ("How do I stop my glasses fogging up when I wear a scarf?",
     "Keep the scarf below your nose, or tuck it so your breath goes down rather than up. An anti-fog "
     "spray or wipe helps a lot, and washing the lenses with a little washing-up liquid works as a "
     "cheap fix."),
    ("Quick one: what's the difference between baking soda and baking powder?",
     "Baking soda is pure bicarbonate and needs an acid in the recipe (yoghurt, lemon, buttermilk) to "
     "work. Baking powder already contains the acid, so it works with just moisture and heat."),
]

QUESTION_PRE = [
    "Knackered after work.", "Just back from the supermarket and my brain is fried.",
    "I'm filling in a form and I've gone blank.", "On the bus, so I'll keep this short.",
    "Weird question, I know.", "Sorry, bit scatterbrained today.", "Hope your week's going okay!",
    "Okay, testing my own memory here.", "Bear with me, my memory is shot this week.",
    "Coffee hasn't kicked in yet.",
]
WRAP_Q = ["{Q}", "Jog my memory: {q}", "Quick one, {q}", "{PRE} {Q}", "{PRE} Quick one: {q}",
          "Odd question, but {q}", "{Q} I've gone totally blank.", "Hey, {q}"]
WRAP_C = ["Could you jog my memory about {c}?", "Do you still remember {c}?",
          "Any idea {c}? I'm sure I told you.", "{PRE} Could you jog my memory about {c}?",
          "I'm trying to remember {c}. Help?", "Have you any idea {c}?",
          "{PRE} Can you help me remember {c}?"]
WRAP_N = ["What was {n} again?", "I've blanked on {n}. Got it handy?", "{PRE} Any idea what {n} is?",
          "Memory failing me here: what's {n}?"]


def _question_text(rng: random.Random, q: list[str], c: list[str], n: list[str],
                   slots: dict) -> tuple[str, list[str]]:
    forms = [("q", t) for t in q] + [("c", t) for t in c] + [("n", t) for t in n]
    form, tpl = rng.choice(forms)
    core, values = fill(tpl, slots)
    pre = rng.choice(QUESTION_PRE)
    if form == "q":
        wrap = rng.choice(WRAP_Q)
        text = wrap.replace("{PRE}", pre).replace("{Q}", core).replace("{q}", _lower_first(core))
    elif form == "c":
        text = rng.choice(WRAP_C).replace("{PRE}", pre).replace("{c}", core)
    else:
        text = rng.choice(WRAP_N).replace("{PRE}", pre).replace("{n}", core)
    return text, values

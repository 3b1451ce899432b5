"""The chat around the facts: small talk, greetings and closings, and the wrappers that turn a
question into what the user asks.
"""

from __future__ import annotations

import random

from recall_core.training.families.interview.text import _fill, _ql

# -- small talk, greetings ------------------------------------------------------------------------

SMALL_TALK = (
    ("Random question: why do onions make you cry?",
     "Cutting an onion breaks its cells and releases a gas that reacts with the moisture in your "
     "eyes, which makes them sting. A sharp knife and a cold onion help."),
    ("Can you give me a quick recipe for a weeknight dal?",
     "Sure: soften an onion with garlic, ginger and cumin, add rinsed red lentils, a tin of "
     "tomatoes and water, simmer until soft, then finish with lemon and coriander."),
    ("How do I get a red wine stain out of a rug?",
     "Blot (don't rub) as much as you can, then dab with cold water and a little washing-up "
     "liquid. Salt or bicarbonate of soda on a fresh stain helps lift it too."),
    ("Write me a two-line out-of-office message? Nothing fancy.",
     "'Thanks for your email. I'm away at the moment with limited access to messages and will "
     "reply as soon as I'm back.'"),
    ("What's a good trick for remembering people's names at events?",
     "Repeat the name straight away ('Nice to meet you, Sam'), link it to something vivid, and "
     "use it once more before you part."),
    ("Is it weird to reply to work emails late at night?",
     "Not weird, but it can set expectations. Scheduling the email to send in the morning is a "
     "neat compromise."),
    ("Any tips for falling asleep when your brain won't shut up?",
     "Try writing a quick to-do list for tomorrow before bed, keep the room cool, and if you're "
     "still awake after a while, get up and do something dull in dim light."),
    ("What's the difference between baking soda and baking powder?",
     "Baking soda needs an acid in the recipe to react; baking powder already contains the acid, "
     "so it works on its own."),
    ("How long should I boil an egg for a jammy yolk?",
     "Around six and a half minutes from boiling for a large egg, then straight into cold water."),
    ("Can you explain why the sky is blue like I'm five?",
     "Sunlight is made of lots of colours. The air bounces the blue bits around the most, so "
     "blue comes at your eyes from every direction!"),
    ("Help me word a polite no to a party invite?",
     "'Thank you so much for the invitation! I'm afraid I can't make it, but I hope it's a "
     "wonderful evening. Let's catch up soon.'"),
    ("What's the best way to keep basil alive on a windowsill?",
     "Lots of light, water when the top of the soil feels dry, and pinch off the top leaves "
     "regularly so it bushes out instead of flowering."),
    ("How do I stop my glasses steaming up?",
     "A tiny drop of washing-up liquid rubbed on the lenses and buffed off leaves a film that "
     "stops fogging."),
    ("Any ideas for a cheap, fun Saturday?",
     "A long walk with a flask, a free museum, a charity-shop challenge with a small budget, or "
     "a board game afternoon with friends."),
    ("Is it 'affect' or 'effect' in 'this will ___ the outcome'?",
     "'Affect'. Affect is usually the verb and effect the noun: this will affect the outcome; "
     "the effect was huge."),
    ("Why does my bread always come out dense?",
     "Usually not enough kneading or proving, or yeast that's past its best. Give the dough "
     "longer somewhere warm, until it's properly doubled."),
)

GREET_USER = ("hey", "Morning!", "hi again", "Evening. Got a few minutes?", "hello hello",
              "Right, I'm back.", "Hiya", "Afternoon!", "ok I'm back with more questions",
              "Hi there")
GREET_ASSISTANT = ("Hi! Good to hear from you. What's on your mind today?",
                   "Morning! How's your week shaping up?", "Hey, welcome back. What can I help with?",
                   "Of course, fire away.", "Hello! How are things?",
                   "Hi! Always happy to chat. What's up?")
CLOSE_USER = ("That's all for now, thanks!", "Cheers, you're a star.", "Right, gotta run. Thanks!",
              "Okay, that's me done. Thank you!", "brilliant, thanks")
CLOSE_ASSISTANT = ("Anytime! Take care.", "You're welcome, speak soon.",
                   "Glad to help. Have a good one!", "My pleasure! Good luck with everything.")

DIRECT_WRAPS = ("{q}", "{q}", "Refresh my memory, {ql}", "Quick q: {ql}",
                "Brain's mush after work, so {ql}", "Pop quiz for you: {ql}",
                "{q} It's on the tip of my tongue.", "Forgive me if this is a repeat, {ql}",
                "Hiya! Before anything else, {ql}", "Need this for some paperwork. {q}",
                "yo, {ql}", "{q} Someone asked me earlier and my mind went blank.")
INDIRECT_WRAPS = ("Did I ever tell you {i}?", "Can you remind me {i}?",
                  "I've completely forgotten {i}. Rescue me?",
                  "Sorry, random one: do you happen to remember {i}?",
                  "Any chance you remember {i}?", "My memory's shocking this week. Do you know {i}?",
                  "Weird one, but would you know {i}?",
                  "A friend's quizzing me: {i}, do you remember?")


def _question_text(rng: random.Random, direct: tuple[str, ...], indirect: tuple[str, ...],
                   slots: dict[str, str]) -> tuple[str, tuple[str, ...]]:
    if indirect and rng.random() < 0.5:
        clause = rng.choice(indirect)
        wrap = rng.choice(INDIRECT_WRAPS)
        tpl = wrap.replace("{i}", clause)
    else:
        q = rng.choice(direct)
        wrap = rng.choice(DIRECT_WRAPS)
        tpl = wrap.replace("{ql}", _ql(q)).replace("{q}", q)
    return _fill(tpl, slots)

"""The chat around the facts: requests for help, greetings, closings, connectors and the wrappers
that turn a question into what the user asks.
"""

from __future__ import annotations

# -- chat filler ----------------------------------------------------------------------------------

_HELP = [
    ("Can you give me a quick dinner idea? I've got eggs, a bit of spinach and some leftover rice.",
     "Egg fried rice would be perfect. Get the pan really hot, fry the rice first so it crisps a little, push it to one side and scramble the eggs, then stir the spinach through at the end so it just wilts. A splash of soy sauce and you're done in fifteen minutes."),
    ("How long do I boil an egg for a jammy yolk?",
     "About six and a half minutes from when it goes into already-boiling water, then straight into cold water for a minute or two. Go to seven minutes if the eggs are large or fridge-cold."),
    ("Could you draft a short email to my manager asking to swap my Thursday shift for Friday?",
     "Sure, here's a short one:\n\nHi,\n\nWould it be possible to swap my Thursday shift for Friday this week? Something's come up on Thursday, and I'm happy to cover the full Friday shift. Let me know if that works.\n\nThanks!\n\nFeel free to tweak the tone."),
    ("What's a polite way to say no to a wedding invite without offending anyone?",
     "Keep it warm and brief: thank them, say you're sorry you can't make it, and wish them a wonderful day. Something like 'We're so touched to be invited and really sad we can't be there, we'll be raising a glass to you both.' No need to over-explain, and a card goes a long way."),
    ("Any tips for falling asleep when my brain just won't switch off?",
     "A few that help a lot of people: jot down whatever's looping in your head so it feels parked, keep the room cool and dark, and if you're still awake after twenty minutes, get up and do something dull in dim light until you feel sleepy. Keeping the same wake-up time every day helps too."),
    ("How do I get candle wax out of a tablecloth?",
     "Scrape off what you can once it's hard, then lay a paper towel over the spot and press it with a warm iron; the paper soaks up the melted wax. Swap the towel as it fills. Any leftover mark usually comes out in a normal wash."),
    ("What's a houseplant that's basically impossible to kill?",
     "A snake plant or a ZZ plant. Both cope with low light and being forgotten for weeks. Only water when the soil is completely dry, because overwatering is the main way people kill them."),
    ("Explain compound interest to me like I'm very tired.",
     "You earn interest, then next time you earn interest on the original money plus the interest you already got. So the pile grows a little faster each round. Over years that snowball is huge, which is why starting early matters more than starting big."),
    ("We need a name for our pub quiz team. Go.",
     "A few to pick from: 'Let's Get Quizzical', 'The Smarty Pints', 'Agatha Quiztie', 'Universally Challenged' or 'Quizteama Aguilera'. 'The Smarty Pints' always gets a laugh from the quizmaster."),
    ("Is it 'affect' or 'effect' in 'the rain will ___ our plans'?",
     "'Affect'. Affect is usually the verb (to influence something) and effect is usually the noun (the result). So the rain will affect your plans, and the effect might be a soggy picnic."),
    ("What's a good stretch for a stiff lower back? I sit at a desk all day.",
     "Try lying on your back and hugging your knees to your chest for about thirty seconds, then child's pose for another thirty. A gentle seated twist at your desk every hour helps too. If the pain is sharp or shoots down your leg, get it checked."),
    ("Convert 180C to Fahrenheit for me?",
     "180C is about 356F, which most recipes round to 350F."),
    ("How do I remind a friend they owe me money without it being awkward?",
     "Keep it light and specific: 'Hey, no rush, but could you send over the thirty for the tickets when you get a sec?' Naming exactly what it was for makes it feel like admin rather than an accusation."),
    ("What can I bring to a potluck that travels well?",
     "A big grain salad, a tray of brownies or a pasta bake are all safe bets: they're fine at room temperature and don't mind a bumpy journey. Bring a serving spoon, people always forget those."),
    ("Ideas for a cheap day out when it's raining?",
     "Free museums or galleries, a long lunch somewhere cosy, an afternoon at the library, a charity shop crawl, or a board game cafe if you don't mind buying a drink. Cinema matinees are often cheaper too."),
    ("What's the actual difference between stock and broth?",
     "Stock is mostly made from bones and simmered for a long time, so it's richer and a bit gelatinous; broth leans on meat or veg, is lighter and is seasoned to be sipped as it is. In most recipes you can swap one for the other."),
    ("Write me a two-line birthday message for someone at work I barely know.",
     "'Happy birthday! Hope you get a proper break from the inbox today and something delicious with candles on it.' Friendly without being too personal."),
    ("How often should I water a cactus?",
     "Much less than you'd think: every two to four weeks in spring and summer, and hardly at all in winter. Let the soil dry out completely between waterings."),
    ("Write a haiku about Monday mornings, please.",
     "Alarm sings too soon\nthe kettle sighs, keys go missing\nthe week clears its throat"),
    ("Why do onions make you cry?",
     "Cutting an onion breaks its cells and releases a compound that turns into a mild irritant gas when it hits the air; it reaches your eyes and they water to flush it out. A sharp knife and a chilled onion help a lot."),
    ("How do I start a toast at a friend's leaving do without it being cringe?",
     "Open with a short, specific memory rather than a joke you're not sure of, say one thing you'll genuinely miss about them, then raise your glass to whatever's next. Under a minute is perfect."),
    ("Give me a ten-minute workout I can do in the living room.",
     "Do three rounds of: 40 seconds of squats, 40 seconds of push-ups (knees are fine), 40 seconds of glute bridges and 40 seconds of mountain climbers, resting 20 seconds between each. Short, but it'll get your heart going."),
    ("How do I stop my glasses fogging up when I wear a scarf?",
     "Tuck the scarf under the bridge of the glasses rather than over it so your breath goes downwards, and try an anti-fog wipe or a drop of washing-up liquid polished off the lenses. Both make a surprising difference."),
    ("Is it rude to bring shop-bought dessert to a dinner party?",
     "Not at all. Most hosts are just happy not to make pudding themselves. Pop it on a nice plate if you want to make it feel a bit more special."),
    ("Random, but why is the sky red at sunset?",
     "At sunset the light has to travel through much more air to reach you, and the shorter blue wavelengths get scattered away along the route, so the longer reds and oranges are what's left."),
    ("How many bones are in a human hand? Settling an argument.",
     "27 in each hand, counting the eight little wrist bones. Hope you win the argument!"),
    ("Honestly, this week has been a lot.",
     "Sorry it's been a heavy one. Do you want to offload about it, or would a distraction help more right now?"),
    ("Sunny for once, so I'm eating lunch outside like a lizard.",
     "Sounds perfect! Soak it up while it lasts, and maybe a bit of sun cream if you're out for long."),
    ("Do you have a good trick for remembering people's names?",
     "Say the name back straight away ('Nice to meet you, Sam'), use it once more in the conversation, and link it to something vivid about the person. Repetition in the first minute does most of the work."),
    ("What's a decent way to stop procrastinating on a boring task?",
     "Shrink the first step until it's almost silly, like 'open the document and write one line', and set a timer for ten minutes. Starting is the hard part; once you're moving, it's easier to keep going."),
]

_HELP_WHO = [
    ("Can you help me write a thank-you text to {who}? They kept my plants alive for two weeks.",
     ("Of course! Something like: 'Thank you so much for keeping my plants alive while I was away, you're a star. Next round's on me!' Want it more jokey or more heartfelt?",)),
    ("{Who} has a birthday coming up and I have zero gift ideas. Help?",
     ("Experiences are easy wins: tickets to something, a class they'd never book themselves, or a nice dinner out. Tell me a couple of their hobbies and I can get more specific.",)),
    ("I need to apologise to {who} for missing their party. How do I word it?",
     ("Keep it simple and sincere: 'I'm really sorry I missed your party, I hate that I wasn't there. Can I take you out for a drink to make up for it?' Owning it without a long excuse usually lands best.",)),
]

_GREET_USER = {
    "morning": ["Morning!", "morning, got a sec?", "Hi! Early one today."],
    "afternoon": ["Afternoon!", "hey, lunch break chat?"],
    "evening": ["Evening! Got a minute?", "hey, finally sat down for the day"],
    "any": ["hey!", "hi again", "Hello, me again.", "hiya", "hey, you around?", "ok I'm back", "Hi! Quick chat?"],
}
_GREET_ASSISTANT = {
    "morning": ["Good morning! What's on your mind today?", "Morning! Always got a sec. What's up?"],
    "afternoon": ["Good afternoon! Good to hear from you. What's going on?", "Hi! Happy to chat. What's up?"],
    "evening": ["Evening! Of course. How's your day been?", "Hi! Glad you've got a moment to sit down. What's going on?"],
}
_CLOSE = [
    ("Right, that's me done. Cheers!", "Anytime! Take care."),
    ("ok gotta run, thanks for the help", "Glad I could help. Have a good one!"),
    ("Thanks, that's really useful.", "You're welcome! Shout if anything else comes up."),
    ("brb, something's boiling over", "Go, go! I'll be here when you're back."),
    ("That's all for now, thanks!", "Any time. Talk soon!"),
]
_CONNECTORS = ["Oh, also: ", "Anyway, ", "Unrelated, but ", "Other news: ", "Before I forget, "]
_NO_CONNECTOR = ("Okay", "So", "Plot", "Huge", "Yep", "Nope", "Nah", "Well", "fyi", "Update", "Bit",
                 "Life", "Small", "New", "Fun", "Guess", "Career", "Fully", "Officially", "Two")

_Q_WRAP = [
    "Catching up on life admin today. {q}",
    "Help me out here, {ql}",
    "{q} So much has changed lately that I've lost track.",
    "Settle something for me: {ql}",
    "Hey again! {q}",
    "Okay, tell me, {ql}",
    "{q} I keep mixing it up.",
    "{q} Been a hectic few months.",
]

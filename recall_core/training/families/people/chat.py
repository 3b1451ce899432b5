"""The chat around the facts: small talk, requests for help, greetings and closings."""

from __future__ import annotations

SMALL = [
    ("Random question: why do cats knead blankets?",
     "It's a leftover kitten behaviour. Kittens knead while feeding, and adult cats keep doing it when "
     "they feel safe and relaxed, so it's usually a sign of contentment."),
    ("How long do I boil an egg if I want a jammy yolk?",
     "About six and a half minutes once it goes into boiling water, then straight into cold water to "
     "stop it cooking. Seven minutes if you like it a touch firmer."),
    ("Any tips for falling asleep when my brain just won't switch off?",
     "A few things help: keep a notepad by the bed to offload your thoughts, keep the room cool, and "
     "try slow breathing, in for four and out for six. If you're still awake after twenty minutes, "
     "get up and do something dull in dim light."),
    ("What's actually the difference between baking soda and baking powder?",
     "Baking soda is pure bicarbonate and needs an acid in the recipe, like yoghurt or lemon, to react. "
     "Baking powder already has the acid mixed in, so it works on its own."),
    ("Give me a stretch I can do at my desk without looking weird?",
     "Try a seated twist: sit tall, put your right hand on the back of the chair and gently turn right "
     "for five slow breaths, then switch sides. Very subtle!"),
    ("How do I get candle wax out of a tablecloth?",
     "Let it harden, scrape off what you can, then lay a paper towel over the spot and press with a "
     "warm iron. The paper soaks up the wax; repeat with fresh paper until it's gone."),
    ("What's a polite way to say no to a wedding invite?",
     "Keep it short and warm: thank them for including you, say you're sorry you can't make it, and "
     "wish them a wonderful day. A card or a small gift is a nice touch."),
    ("Can you suggest a quick dinner? I've got eggs, spinach and some sad-looking feta.",
     "That's a frittata waiting to happen! Wilt the spinach, pour in beaten eggs, crumble the feta on "
     "top, cook gently until nearly set, then finish under the grill for a couple of minutes."),
    ("How often should I actually water a spider plant?",
     "Not often! Every two to three weeks is plenty, less in winter. Let the soil dry out completely "
     "between waterings, since overwatering is what usually kills them."),
    ("Why does my homemade bread always come out so dense?",
     "Usually it's under-proofing or not enough kneading. Let the dough rise until it's roughly doubled, "
     "knead until it's smooth and springy, and check your yeast isn't out of date."),
    ("Any ideas for a rainy Sunday that don't involve a screen?",
     "A jigsaw, a long bath with a book, batch-cooking soup for the week, or finally sorting that one "
     "drawer everyone has. Baking is good too: lots of waiting around with tea."),
    ("Can you draft a short email to my landlord about a dripping kitchen tap?",
     "Sure: \"Hi, I wanted to let you know the kitchen tap has started dripping constantly. Could you "
     "arrange for someone to take a look this week? I'm around most evenings. Thanks!\""),
    ("How do I stop my glasses fogging up when I wear a scarf?",
     "Tuck the scarf under the bridge of your glasses rather than over it, or try an anti-fog wipe. A "
     "tiny bit of washing-up liquid rubbed on and buffed off works surprisingly well too."),
    ("Is it weird that I've rewatched the same sitcom for three months straight?",
     "Not at all! Rewatching something familiar is comforting and takes zero effort, which is exactly "
     "what a lot of people need after a long day."),
]

HELP = [
    ("Could you help me write a short thank-you message to {name}? {He} really helped me out last week.",
     "Of course! How about: \"Hi {name}, just wanted to say a huge thank you for last week. You really "
     "didn't have to, and it meant a lot. Next coffee's on me!\" Tweak the tone as you like."),
    ("I want to cook something nice for {name} on Friday. Any ideas for a veggie main that isn't risotto?",
     "How about a roasted squash and feta galette? It looks impressive, most of it can be prepped "
     "ahead, and a simple green salad is all it needs. A mushroom and chestnut pie is another winner."),
    ("{name} and I had a silly argument about nothing. What could I text to smooth it over?",
     "Something short and warm usually works: \"Hey {name}, sorry about earlier, I was being a grump. "
     "Fancy a coffee this week?\" Keeping it light helps."),
    ("I need to cancel plans with {name} tomorrow and I feel awful. Help me word it?",
     "Try: \"Hi {name}, I'm really sorry but I have to cancel tomorrow. Can we rearrange for next "
     "week? I'd still love to see you.\" Offering a new date shows you still care."),
    ("What's a good little present for {name}, just to say thanks? Under twenty quid ideally.",
     "A few ideas: a bag of good coffee or loose-leaf tea, a nice notebook, a secondhand book you "
     "think {hed} enjoy, or a small plant. A handwritten note makes it feel personal."),
]

GREET = [
    ("Hey! Hope your day's going okay.", "Hi! It's going well, thanks for asking. What's on your mind?"),
    ("Morning! Coffee in hand, ready to go.", "Good morning! Coffee is always a good start. What can I help with?"),
    ("Evening. Finally sat down after a mad day.", "Evening! Glad you've got a moment to yourself. How can I help?"),
    ("Hi again!", "Hi, welcome back! What's up?"),
    ("Hello hello. Got a few minutes to chat?", "Always! What would you like to talk about?"),
    ("Hiya, it's me again.", "Hiya! Nice to hear from you. What's going on?"),
]
GREET_PREFIX = [("Hey! ", "Hi! "), ("Morning! ", "Good morning! "), ("Hi again. ", "Hello again! "),
                ("Evening! ", "Evening! ")]
CLOSE = [
    ("Anyway, that's me for now. Thanks!", "Any time! Enjoy the rest of your day."),
    ("Right, I'd better get on. Cheers for the chat.", "Cheers! Talk soon."),
    ("Okay, off to make dinner. Bye for now!", "Enjoy your dinner! Bye for now."),
]

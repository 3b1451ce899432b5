"""What the user and the assistant say around the news: greetings, small talk, sign-offs."""

from __future__ import annotations

GREET = (
    "Hey, it's me again.", "Morning! Got a minute?", "Evening. Long day, but a good one.", "Hi hi.",
    "Back again, sorry!", "Hello from a very crowded train.",
)
GREET_REPLY = (
    "Hi! Always got a minute for you.", "Hello! What's on your mind?", "Hey there, good to hear from you.",
    "Hi! What's new?",
)
SMALL = (
    ("Is it normal that my houseplants look sadder in winter?",
     "Yes, most of them slow right down with less light. Water less, move them nearer a window and skip "
     "the feeding until spring."),
    ("What's a good way to remember people's birthdays?",
     "Put them all in one calendar with a reminder a week before, so there's time to post a card."),
    ("Why do onions make me cry but leeks don't?",
     "Onions release a sulphur compound when cut that irritates your eyes; leeks have much less of it. "
     "A sharp knife and a cold onion help."),
    ("Can you suggest a board game for six people that isn't too long?",
     "Codenames or Just One both work well for six and take about twenty minutes a round."),
    ("How do I stop my coffee tasting burnt?",
     "Use water just off the boil, around 93 degrees, and don't leave it sitting on a hot plate."),
    ("Any tips for writing a toast for a friend?",
     "Keep it under three minutes: one funny story, one sincere line about what they mean to you, and "
     "raise the glass."),
    ("What should I bring to a housewarming?",
     "A plant, a nice bottle, or something practical like good tea towels. Flowers are lovely but need a vase."),
    ("Is it rude to leave a party without saying goodbye?",
     "It's common at big parties, but a quick thank-you to the host, in person or by message, is kind."),
)
BYE = ("Right, off to make dinner.", "Thanks, chat later!", "That's all for now.", "Cheers, bye!")
BYE_REPLY = ("Enjoy! Talk soon.", "Any time. Bye for now!", "Take care!")

"""What the two friends say around their news: greetings, reactions, small talk, sign-offs.

Reactions never restate the news (the note that holds a value is the teller's own), and some name
the teller (``{o}``), so a reply about someone's news is itself a note naming them.
"""

from __future__ import annotations

GREET = (
    "Hey {o}! How's your week going?", "Morning {o}, got a sec?", "Hiya, long time no chat!",
    "{o}! I have news.", "Hey you. Quiet evening here, so I thought I'd message.",
)
GREET_REPLY = (
    "Hey! Busy but good. What's up?", "Always. Go on!", "I know, it's been ages. Tell me everything.",
    "Ooh, news? Spill.", "Hi! Perfect timing, I was just making tea.",
)
REACT = (
    "No way, that's amazing!", "Wow, {o}, I'm so happy for you.", "That sounds like a lot of fun.",
    "Honestly, I'm a little jealous.", "Good for you! You deserve it.", "Haha, that is so you, {o}.",
    "I want to hear all about it next time we meet.", "That's brilliant news.",
)
SMALL = (
    ("Has it been raining where you are too?", "Non-stop. My umbrella gave up on Tuesday."),
    ("Did you watch the match last night?", "Only the second half, I fell asleep on the sofa."),
    ("I can't decide what to have for dinner.", "Toast is always a valid answer."),
    ("Work has been chaos this week.", "Same here. Roll on the weekend."),
    ("Are you still up for coffee sometime?", "Definitely, let's pick a day soon."),
    ("My phone screen cracked again.", "Oh no, not again! Get a proper case this time."),
)
BYE = ("Anyway, I should get going. Talk soon!", "Right, bedtime for me. Night!", "Gotta run, catch you later.")
BYE_REPLY = ("Bye! Speak soon.", "Night night!", "Later, take care!")

"""Near-miss distractors: the same kind of fact as a changing one, about someone else (a sister's
new flat, a flatmate's job), and the questions about them.
"""

from __future__ import annotations

# -- near-miss distractors: the same kind of fact about someone else ------------------------------

_O: dict[str, dict] = {}
_O["home"] = {
    "pool": "city",
    "say": [
        ("{Who} just moved to {v}, so at least I've got somewhere to crash now.",
         ("A free place to crash in {v} is a great perk! Any plans to visit soon?",)),
        ("{Who} has lived in {v} for years and keeps nagging me to visit.",
         ("Maybe this is the year you finally visit {v}! Want a few ideas for a long weekend?",)),
        ("Spent the weekend helping {who} pack for the move to {v}. My back is ruined.",
         ("Helping with a move is a true act of love. Rest that back, and I hope the move to {v} goes smoothly!",)),
    ],
    "ask": ["Where does my {rel} live?", "Which city is my {rel} in these days?"],
}
_O["job"] = {
    "pool": "job",
    "say": [
        ("{Who} just started a new job as {an:v} and won't stop talking about it.",
         ("Ha, new-job excitement! Being {an:v} must be a big change.",)),
        ("Had dinner with {who} last night. Being {an:v} sounds exhausting, honestly.",
         ("It does sound like a demanding job! Nice that you got to catch up over dinner.",)),
    ],
    "ask": ["What does my {rel} do for work?", "What's my {rel}'s job?"],
}
_O["car"] = {
    "pool": "car",
    "say": [
        ("{Who} bought {an:v} and now offers everyone lifts whether they want one or not.",
         ("Ha, the new-car enthusiasm! Enjoy the free lifts in the {v} while it lasts.",)),
        ("{Who} is lending us their {v} for the weekend, which is very generous.",
         ("That's kind! Returning the {v} with a full tank would be a nice thank-you.",)),
    ],
    "ask": ["What car has my {rel} got now?", "What does my {rel} drive these days?"],
}
_O["phone"] = {
    "pool": "phone",
    "say": [
        ("{Who} just got {an:v} and keeps sending me blurry photos of the moon with it.",
         ("Ha, every new phone owner goes through the moon phase! Has the {v} won them over?",)),
        ("{Who} dropped their {v} in a lake. A whole lake!",
         ("Oh no! A lake is a tough one for {an:v}. Hope it was insured.",)),
    ],
    "ask": ["What phone does my {rel} have?", "Which phone is my {rel} using?"],
}
_O["diet"] = {
    "pool": "diet",
    "say": [
        ("{Who} has gone {v}, so planning the family dinner is going to be fun.",
         ("Family dinners can still work! A build-your-own style meal makes it easy to keep things {v}-friendly.",)),
        ("Cooking for {who} on Friday and they're {v}. Any ideas?",
         ("A big one-pot dish is a safe bet. Want me to suggest a few that work for someone who's {v}?",)),
    ],
    "ask": ["What diet is my {rel} on?", "How does my {rel} eat these days, diet-wise?"],
}
_O["show"] = {
    "pool": "show",
    "say": [
        ("{Who} won't stop quoting {v} at me.",
         ("Ha, the sign of a true fan! Have you watched {v} yourself?",)),
        ("{Who} made me watch two episodes of {v} last night.",
         ("Two episodes in one go! Did {v} win you over?",)),
    ],
    "ask": ["What show is my {rel} obsessed with?", "What's my {rel} watching at the moment?"],
}
_O["language"] = {
    "pool": "language",
    "say": [
        ("{Who} is learning {v} for a work trip.",
         ("Nice! A work trip is a great deadline for learning {v}.",)),
        ("{Who} has started {v} lessons and keeps practising on me.",
         ("Ha, you're the unofficial {v} conversation partner now!",)),
    ],
    "ask": ["What language is my {rel} learning?"],
}
_O["gym"] = {
    "pool": "gym",
    "say": [
        ("{Who} is trying to get me into {v}. Not happening.",
         ("Ha, noted! Not everyone's cut out for {v}, and that's fine.",)),
        ("{Who} has just signed up for {v} and is already sore.",
         ("The first week of {v} is always the hardest! Hope there's some stretching going on.",)),
    ],
    "ask": ["What workout is my {rel} into?", "What kind of exercise does my {rel} do?"],
}
_O["partner"] = {
    "pool": "name",
    "say": [
        ("{Who} just got engaged to someone called {v}. I'm thrilled!",
         ("How exciting, congratulations to them and {v}! Are you expecting a wedding invite soon?",)),
        ("{Who} is bringing their new partner, {v}, to dinner on Sunday. Should be interesting.",
         ("Meeting a new partner is always a bit nerve-racking! Hope Sunday with {v} goes well.",)),
    ],
    "ask": ["What's the name of my {rel}'s partner?", "Who is my {rel} seeing?"],
}
OTHER_ATTRS = tuple(_O)

_REL_NAME_ASK = ["What's my {rel}'s name again?", "Remind me what my {rel} is called?",
                 "Do you remember my {rel}'s name?"]

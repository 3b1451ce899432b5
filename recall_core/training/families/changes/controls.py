"""Control facts: the user's facts that never change (hometown, pet, birthday, allergy, instrument)."""

from __future__ import annotations

# -- controls: facts that never change ------------------------------------------------------------

_C: dict[str, dict] = {}
_C["hometown"] = {
    "pool": "city",
    "state": [
        ("I grew up in {v}, so I have very strong opinions about the local chips.",
         ("Growing up in {v} would do that! What makes a chip worthy, in your opinion?",)),
        ("Heading to {v} this weekend to see where I grew up. It's been years.",
         ("A trip back to {v} after years away sounds lovely and a bit strange. Anywhere you want to revisit?",)),
        ("Fun fact: I'm originally from {v}. Nobody ever guesses.",
         ("Ha, {v} born and bred! What do people usually guess instead?",)),
    ],
    "ask": ["Where was I brought up?", "Remind me where I'm originally from?", "Which town did I grow up in?"],
}
_C["pet"] = {
    "pool": "pet",
    "state": [
        ("{v}, our {species}, has decided 5am is breakfast time. Send help.",
         ("Ha, {v} clearly runs the household! Shifting breakfast a few minutes later each day can slowly move the wake-up call.",)),
        ("Took the {species}, {v}, to the vet today. Just a check-up, all fine.",
         ("Glad {v} got a clean bill of health! Was the vet trip dramatic?",)),
        ("My {species} {v} just chewed through my headphone cable. Again.",
         ("Oh no, {v}! Spiral cable wraps might save the next pair.",)),
    ],
    "ask": ["What do I call my {species}?", "Remind me of my {species}'s name?",
         "Do you remember the name of my {species}?"],
}
_C["birthday"] = {
    "pool": "date",
    "state": [
        ("My birthday's on {v} and I still have no plans. Help.",
         ("There's still time to sort something for {v}! Are you in the mood for low-key or a proper party?",)),
        ("Booked {v} off work because it's my birthday. Planning to do absolutely nothing.",
         ("A birthday of doing absolutely nothing sounds perfect. Enjoy {v}!",)),
        ("Getting a year older on {v}, not thrilled about it.",
         ("Another year wiser, though! Anything you'd like to do to mark {v}?",)),
    ],
    "ask": ["Which day is my birthday?", "What date is my birthday, do you remember?", "Remind me when my birthday is?"],
}
_C["allergy"] = {
    "pool": "allergy",
    "state": [
        ("I'm allergic to {v}, so I read every label like it's a contract.",
         ("Label-reading is tiring but worth it. I'll keep your allergy to {v} in mind whenever we talk recipes.",)),
        ("Eating out tonight, which is always a gamble when you're allergic to {v}.",
         ("Ringing ahead to flag the allergy to {v} can make it a lot less stressful. Hope it's a good meal!",)),
    ],
    "ask": ["Which food am I allergic to?", "Remind me what my allergy is?",
         "What food do I have to avoid because of my allergy?"],
}
_C["instrument"] = {
    "pool": "instrument",
    "state": [
        ("Practised the {v} for an hour and the people upstairs started stomping.",
         ("Ha, a captive audience! Maybe agree on practice hours so the {v} doesn't start a feud.",)),
        ("I've played the {v} since I was a kid, but I still can't sight-read to save my life.",
         ("Playing the {v} since childhood is lovely! Sight-reading improves fastest with ten minutes of brand-new music a day.",)),
    ],
    "ask": ["What instrument is it that I play?", "Which instrument did I say I play?",
            "Remind me what I play, music-wise?"],
}
CONTROL_KINDS = tuple(_C)

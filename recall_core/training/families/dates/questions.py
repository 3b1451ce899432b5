"""The questions asked later: about each kind of date, the unanswerable ones, and the prefixes and
suffixes that put a question inside a message.
"""

from __future__ import annotations

# questions ---------------------------------------------------------------------------------------------

Q_APPT_DATE = (
    "When am I seeing the {np}?",
    "Remind me which day I'm booked in with the {np}?",
    "Do you remember what date the {np} appointment ended up on?",
    "What day's the {np} again?",
    "I need to book time off for the {np}. Which date was it?",
)
Q_APPT_TIME = (
    "What time do I have to be at the {np}?",
    "Remind me what time the {np} appointment is?",
    "Do you remember what time my {np} slot is?",
    "Trying to plan my day around the {np}. What time was it?",
)
Q_ON_DATE = (
    "What have I got on {qdate}?",
    "Is anything happening on {qdate}? I feel like there was something.",
    "Do you remember what's on {qdate}?",
    "Someone's asked if I'm free on {qdate}. Am I? What was on that day?",
    "What was it I had on {qdate}?",
)
Q_FLIGHT_DATE = (
    "What day do I fly out to {city}?",
    "Remind me when the {city} flight is?",
    "When am I off to {city} again?",
    "Do you remember the date of my flight to {city}?",
)
Q_FLIGHT_TIME = (
    "What time does my {city} flight leave?",
    "Remind me what time I'm flying to {city}? Need to book a taxi.",
    "What time's the flight to {city}?",
)
Q_BDAY_DATE = (
    "When's {name}'s birthday?",
    "Remind me when my {rel}'s birthday is?",
    "Do you remember when {name}'s birthday is? Want to order something in time.",
    "What date is my {rel} {name}'s birthday?",
)
Q_DEADLINE_DATE = (
    "When's the {np} due?",
    "Remind me of the {np} deadline?",
    "What's the cut-off for the {np} again?",
    "Do you remember when I have to get the {np} in by?",
)
Q_EVENT_DATE = (
    "When's {name}'s {event}?",
    "Remind me what date {name}'s {event} is?",
    "Do you remember when the {event} is? {name}'s one.",
)
Q_EVENT_TIME = (
    "What time does {name}'s {event} start?",
    "What time should I be at {name}'s {event}?",
    "Remind me when {name}'s {event} kicks off, time-wise?",
)
Q_D_APPT_DATE = (
    "When is {partner}'s {np} appointment?",
    "Remind me which day {partner} is seeing the {np}?",
)
Q_D_FLIGHT_DATE = ("When does {name} fly to {city}?", "Remind me when {name} heads off to {city}?")
Q_D_EVENT_DATE = ("When's {name}'s {event}?", "Do you remember the date of {name}'s {event}?")

U_BDAY = (
    "What day does my {rel}'s birthday fall on?",
    "Remind me when my {rel}'s birthday is?",
    "Do you know when my {rel}'s birthday is? I want to get something in the post.",
)
U_RETURN = ("When do I fly back from {city}?", "What's the date of my return flight from {city}?")
U_DEADLINE_TIME = ("What time on the day does the {np} have to be submitted?",
                   "Is there a cut-off time for the {np}, like noon or midnight? Which one?")
U_EVENT_END = ("What time does {name}'s {event} finish?", "How late does {name}'s {event} go on?")
U_D_APPT_TIME = ("What time is {partner}'s {np} appointment?",)
U_D_FLIGHT_TIME = ("What time is {name}'s flight to {city}?",)
U_D_EVENT_TIME = ("What time does {name}'s {event} start?",)
U_APPT_NEVER = ("When's my {np} appointment?", "Remind me when I'm seeing the {np}?")

Q_PREFIX = (
    ("Sorting out my diary. ", False),
    ("Sorry, brain like a sieve today. ", False),
    ("Calendar question: ", False),
    ("Before I double-book myself, ", True),
    ("Right, planning the month. ", False),
    ("Morning! Hope you're well. ", False),
    ("Scheduling brain is off today, so ", True),
    ("Date check: ", False),
    ("My phone died and I lost my notes, so: ", False),
    ("Evening. ", False),
)
Q_SUFFIX = (" Thanks!", " I've completely lost track.", " No rush.", " Cheers.")

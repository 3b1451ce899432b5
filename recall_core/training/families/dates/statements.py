"""What the user says about dates: appointments, flights, birthdays, past milestones, deadlines and
other people's events, their moves, the near misses about someone else and things said without
a date.
"""

from __future__ import annotations

# appointments ------------------------------------------------------------------------------------

APPT_STATE = (
    "Finally got a slot with the {np}: {date} at {time}. Only took three phone calls and a hold "
    "playlist I'll never unhear.",
    "Okay so {reason}, and I've caved and booked the {np}: {date} at {time}.",
    "The {np} could only squeeze me in on {date} at {time}, right in the middle of the workday, naturally.",
    "Putting this here so I don't lose it: {np} at {time} on {date}.",
    "Got the confirmation text from the {np}: {time} on {date}. Remind me to actually leave the "
    "house on time for once, ha.",
    "Since {reason}, I've booked the {np} for {date} at {time}.",
)
APPT_ACK = (
    "Good on you for booking the {np}, that's usually the hardest bit. Want help jotting down a "
    "few questions to ask while you're there?",
    "{date_echo} at {time_echo} with the {np}, got it. If it's a new place, check whether they want "
    "you there ten minutes early for forms.",
    "Glad it's in the diary at last. Will you head there straight from work?",
    "Good call getting the {np} booked. Is it somewhere you've been before?",
)
APPT_MOVE_BOTH = (
    "Ugh, the {np} rang and they've had to move me. Now it's {date} at {time} instead of {old_date}.",
    "Change of plan: the {np} is now {date} at {time}. The old slot got cancelled on their end.",
    "Annoyingly the {np} bumped me. New slot is {date} at {time}.",
)
APPT_MOVE_DATE_T = (
    "The {np} has shuffled me to {date}, same time though ({time}).",
    "Heads up, the {np} moved to {date}. Still {time}.",
)
APPT_MOVE_DATE = (
    "The {np}'s been pushed to {date}, same time as before.",
)
APPT_MOVE_TIME = (
    "Small tweak from the {np}: same day, but they've made it {_shift}, {time}.",
    "The {np} called. Still the same date, just {_shift} now: {time}.",
)
APPT_MOVE_ACK = (
    "Annoying, but better they tell you now than on the day. Does the new slot work with everything else?",
    "Fair enough, the {np} moves, you adapt. Anything else that needs shuffling around it?",
    "Noted the change for the {np}. Hopefully that's the last time they move it!",
)
APPT_MENTION = (
    ("Bit nervous about the {np} if I'm honest.",
     "That's completely normal. It can help to write down what you want to ask so you don't blank "
     "in the moment. What's worrying you most?"),
    ("Do I need to bring anything to the {np}, do you reckon?",
     "Usually just ID and a list of any medication or previous notes, if relevant. If in doubt, "
     "the confirmation email or a quick call will tell you."),
)

# flights -------------------------------------------------------------------------------------------

FLIGHT_STATE = (
    "Booked the flights to {city}!! We go out on {date} with a {time} departure{_aside}.",
    "Flight to {city} is {date}, leaving at {time}. First proper holiday in ages.",
    "Work are sending me to {city}. Flying out {date} at {time}, and back whenever the workshop "
    "wraps up.",
    "So I finally did it, {city} is booked. Outbound's {date}, takes off at {time}.",
    "Just got the booking confirmation for {city}: {date}, departing {time}. Need to dig out my passport.",
)
FLIGHT_ACK = (
    "{city}, how exciting! Is it your first time there?",
    "Ooh, {city}, lovely. If you want, I can throw together a packing list or a few things worth seeing.",
    "Nice one. For a {time_echo} flight I'd aim to be at the airport about two hours before, "
    "especially if you're checking a bag.",
)
FLIGHT_MOVE_BOTH = (
    "The airline's changed our {city} flight, grr. Now it's {date} at {time} instead.",
    "Email from the airline: {city} flight moved to {date}, departing {time}. Typical.",
)
FLIGHT_MOVE_DATE_T = ("They've moved the {city} flight to {date}. Same departure time, {time}.",)
FLIGHT_MOVE_DATE = ("They've moved the {city} flight to {date}, same departure time at least.",)
FLIGHT_MOVE_TIME = (
    "Tiny change to {city}: same day, but it now leaves {_shift}, at {time}.",
    "The {city} flight's been retimed. Same date, {time} now.",
)
FLIGHT_MOVE_ACK = (
    "Airlines, honestly. Worth double-checking any hotel or transfer bookings still line up with it.",
    "Ugh, sorry. At least they told you in advance. Anything you need to change on the {city} end?",
)
FLIGHT_MENTION = (
    ("Started a packing list for {city} already, is that tragic?",
     "Not tragic at all, it's organised! Want me to check it for anything you might forget?"),
    ("What's the one thing I shouldn't miss in {city}, do you think?",
     "Depends what you're into, but wandering the old town early in the morning before the crowds "
     "is hard to beat almost anywhere. Food or sights, which matters more to you?"),
)

# birthdays ------------------------------------------------------------------------------------------

BDAY_STATE = (
    "It's my {rel} {name}'s birthday on {date} and I have absolutely no idea what to get {_her}.",
    "{name}, my {rel}, has a birthday on {date}. Any ideas for someone who claims to want nothing?",
    "Writing this down before I forget again: {name}'s birthday is {date}. My {rel}. I missed it "
    "last year and {_she}'s still bringing it up.",
    "My {rel}'s birthday is {date} (that's {name}, for the record). Thinking of doing something "
    "low-key but nice.",
    "{name}'s birthday is on {date} and I still haven't sorted a card. My {rel} deserves better, honestly.",
)
BDAY_ACK = (
    "Experiences often land better than things: a class, a tasting, tickets to something. "
    "What's {name} into at the moment?",
    "Getting it in the diary early is half the battle. Want a few gift ideas for your {rel}?",
    "What sort of things does {name} like? Happy to brainstorm.",
    "Want help planning something for the day, or just present ideas?",
)

# past milestones: (id, needs partner, statements, date questions, year questions, acks) ---------

MILESTONES = (
    ("keys", False,
     ("We got the keys to the flat on {date}{year_part} and it still doesn't feel like ours.",
      "Can't believe it's been this long since we got the keys to the flat. That was {date}{year_part}."),
     ("When did we get the keys to the flat?", "Do you remember the date we got the keys to the flat?",
      "What day did we move into the flat, again?"),
     ("What year did we get the keys to the flat?", "Remind me what year we moved into the flat?")),
    ("job", False,
     ("I started at {company} on {date}{year_part}, and honestly it's flown by.",
      "My first day at {company} was {date}{year_part}. Still remember getting lost looking for the loos."),
     ("When did I start at {company}?", "Do you remember what date my first day at {company} was?"),
     ("What year did I join {company}?", "Remind me what year I started at {company}?")),
    ("married", True,
     ("{partner} and I got married on {date}{year_part}. Tiny registry office do, best day ever.",
      "For the record, {partner} and I tied the knot on {date}{year_part}."),
     ("What's the date of our wedding anniversary?", "What date did {partner} and I get married?"),
     ("What year did {partner} and I get married?", "Remind me what year we got married?")),
    ("pet", False,
     ("We brought {pet} home from the rescue on {date}{year_part}. Still the best decision we've made.",
      "{pet}'s gotcha day is {date}{year_part}, when we picked {_pet_them} up from the shelter."),
     ("When did we adopt {pet}?", "What's {pet}'s gotcha day again?"),
     ("What year did we get {pet}?", "Remind me what year we adopted {pet}?")),
    ("driving", False,
     ("I passed my driving test on {date}{year_part}, third attempt, not that anyone's counting.",
      "Fun fact: I passed my driving test on {date}{year_part}. Still can't parallel park."),
     ("When did I pass my driving test?", "Do you remember what date I passed my driving test?"),
     ("What year did I pass my driving test?",)),
    ("met", True,
     ("{partner} and I first met on {date}{year_part}, at a truly terrible fancy dress party.",
      "The day {partner} and I met was {date}{year_part}. I was dressed as a pineapple, long story."),
     ("What date did {partner} and I first meet?", "Do you remember when I met {partner}?"),
     ("What year did I meet {partner}?",)),
)
MILESTONE_ACK = (
    "That's a lovely thing to have pinned down. Funny which dates stick, isn't it?",
    "Ha, some dates just stick. Does it feel like ages ago or like yesterday?",
    "What a nice memory. Is there a story behind the day itself?",
)

# deadlines -----------------------------------------------------------------------------------------

DEADLINE_STATE = (
    "The {np} has to be in by {date}. Current progress: one heading and a lot of dread.",
    "Deadline for the {np} is {date} and I've done nothing. Nothing!",
    "Just checked and the {np} is due {date}, earlier than I'd assumed.",
    "Got confirmation the {np} closes on {date}. Time to actually start, I suppose.",
)
DEADLINE_ACK = (
    "Working back from {date_echo}, you could split the {np} into a few chunks. Want a rough plan?",
    "Deep breath, you've got time if you start small. Which part of the {np} are you dreading most?",
    "Classic. Shall we make a quick checklist for the {np} so it feels less enormous?",
)
DEADLINE_LATER = (
    "Extension granted!! The {np} is now due {date}.",
    "Good news for once: they've pushed the {np} deadline back to {date}.",
)
DEADLINE_EARLIER = (
    "Well, they've brought the {np} deadline forward to {date}. Brilliant. Love that for me.",
    "Update on the {np}: the deadline moved up to {date}, so that changes things.",
)
DEADLINE_LATER_ACK = (
    "That's a relief! Extra breathing room for the {np}.",
    "Nice, take the win. Want to rework the plan around the new date?",
)
DEADLINE_EARLIER_ACK = (
    "Oof, less time. Want to rework the plan for the {np} around it?",
    "That's annoying. Which bits of the {np} are already done?",
)
DEADLINE_MENTION = (
    ("Made a start on the {np}, finally.",
     "That's the hardest bit done! Starting is always the worst part."),
)

# other people's events -----------------------------------------------------------------------------

EVENT_STATE = (
    "{name}'s {event} is on {date} at {time}. I've promised I'll be in the front row.",
    "My {rel} {name} has {_her} {event} on {date}. Starts {time}, so I'll need to leave work early.",
    "Can you keep track of this for me? {name}'s {event}, {time} on {date}. {_She}'s so excited about it.",
    "Can't miss this one: {date} at {time}, {name}'s {event}. My {rel} would never forgive me.",
)
EVENT_ACK = (
    "{name} will be thrilled you're coming. Is it a big deal in the family?",
    "That sounds like a big day for {name}. Are you bringing anything, flowers or a card?",
    "Aw, a {event}! Want help finding something nice to bring {name}?",
)
EVENT_MOVE_BOTH = (
    "{name}'s {event} got moved, some venue mix-up. It's now {date} at {time}.",
    "Change to {name}'s {event}: it's {date} now, starting {time}.",
)
EVENT_MOVE_DATE_T = ("Update: {name}'s {event} is now {date}, same start time, {time}.",)
EVENT_MOVE_DATE = ("Update: {name}'s {event} has moved to {date}. Same start time though.",)
EVENT_MOVE_TIME = ("{name}'s {event} is still the same day but now starts {_shift}, {time}.",)
EVENT_MOVE_ACK = (
    "Good that you heard in time. Does the change still work for you?",
    "Thanks for the update. Hopefully {name} isn't too stressed about the change!",
)

# near misses: the same kind of date, about someone else ----------------------------------------------

D_APPT_STATE = (
    "{partner}'s got the {np} on {date}, so I'm on dinner duty that day.",
    "Meanwhile {partner} has finally booked the {np} too, {date} for {_her}.",
    "Oh and my {prel} {partner}'s seeing the {np} on {date}, so I'm driving {_her} there.",
)
D_APPT_ACK = (
    "A busy stretch of appointments in your house, then! Is {partner} nervous about it?",
    "Hope it all goes smoothly for {partner}.",
)
D_FLIGHT_STATE = (
    "My {rel} {name} is off to {city} on {date}, so I'm covering {_her} accounts that week.",
    "{name} (my {rel}) flies out to {city} on {date}. Jealous doesn't begin to cover it.",
)
D_FLIGHT_ACK = (
    "Lucky {name}! Maybe a trip of your own is due?",
    "Ooh, {city}. Hope {name} brings you something nice back!",
)
D_EVENT_STATE = (
    "And then {name}'s {event} is {date}, so that month is basically fully booked.",
    "Oh, my {rel} {name} also invited me to {_her} {event} on {date}. Busy month!",
)
D_EVENT_ACK = (
    "Your social calendar is filling up nicely! Are you looking forward to it?",
    "A {event} as well, you'll need a nap in between.",
)

# things mentioned without a date (their date question is unanswerable) ----------------------------------

UNDATED = (
    ("wedding",
     "My {rel} {name} got engaged! No date for the wedding yet, they're still arguing about venues.",
     "Congratulations to {name}! Venue debates can go on for a while. Do you think it'll be a big do?",
     ("When's {name}'s wedding?", "Do you remember when my {rel}'s wedding is?")),
    ("visit",
     "{name} keeps threatening to come and stay with us at some point. Nothing booked, naturally.",
     "Ha, the classic 'at some point'. Would be nice to have {_her} over though.",
     ("When is {name} coming to stay?", "Remind me which dates {name} is visiting?")),
    ("appt",
     "I really should book the {np} at some point, it's been years.",
     "Worth doing. Even just getting it booked takes a weight off.",
     ("When's my {np} appointment?", "Remind me what day I'm seeing the {np}?")),
)

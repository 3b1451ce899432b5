"""Fact kinds about work, travel and places: the job, a trip's city and date, the hometown, the
neighbourhood and an appointment.
"""

from __future__ import annotations

from recall_core.training.families.interview.kind import Kind
from recall_core.training.families.interview.values import (
    DATES,
    HOMETOWNS,
    JOBS,
    NEIGHBOURHOODS,
    TIMES,
    TRIP_CITIES,
)

KINDS: dict[str, Kind] = {}  # this module's kinds, by key, in the order written


def _kind(**kw) -> None:
    KINDS[kw["key"]] = Kind(**kw)


_kind(
    key="job", pool=JOBS,
    opener=(
        ("Work has been absolutely relentless lately.",
         ("Sorry to hear that! What do you do for work, if you don't mind me asking?",
          "Oof. What line of work are you in?")),
        ("Can't believe it's Monday again. Back to the grind.",
         ("Ha, the Monday feeling. What's the grind, if you don't mind me asking?",)),
        ("Sorry if I'm slow today, work completely wiped me out.",
         ("No need to apologise! What is it you do, out of interest?",)),
        ("I'm thinking about asking for a pay rise and I'm nervous about it.",
         ("Good for you for considering it. What's your job, so I can tailor the advice?",)),
    ),
    short=("{A_v}, believe it or not.", "{F}, mostly early shifts", "I'm {a_v}. Have been for ages.",
           "{V}. It's less glamorous than it sounds.", "{F}. Don't get me started."),
    ack=(
        ("{A_v}! That sounds like a job with a lot of stories. Is it the workload that's getting "
         "to you?", "Mostly the workload, yeah.",
         "That's really common. Writing down what's on your plate for a week makes the "
         "conversation with your manager much more concrete."),
        "{V}, that's skilled work. No wonder you're tired. Be kind to yourself this week.",
        ("{F}, wow. How did you get into that?", "Fell into it, honestly.",
         "Some of the best careers start that way! It sounds like it stuck for a reason."),
        "Ah, {f}. I can imagine the weeks blur together. Make sure you get a proper break.",
    ),
    state=(
        ("I'm {a_v} and I need a short bio for our team page. Can you make it sound less dull?",
         "Of course! Something like: 'Hi, I'm the team's {v}. Ask me anything about the job, "
         "I'm always happy to help.' Want it punchier or more formal?"),
        ("Honestly, being {a_v} is great most days, but this week has been brutal.",
         "Sorry it's been a rough week. Even jobs we like have stretches like that; it doesn't "
         "mean being {a_v} is the wrong fit."),
    ),
    q=("What did I tell you I do for a living?", "What job did I say I have?", "What do I do for work?"),
    qi=("what I do for a living", "what my job is", "what line of work I'm in"),
    ch_open=(
        ("Big news, I've handed my notice in.",
         ("Wow, that's a big move! What are you doing now?",)),
        ("So... I've changed jobs.", ("Oh, exciting! What's the new role?",)),
    ),
    ch_short=("Retraining as {a_v}. Terrifying but good.",
              "{A_v}! Total change from being {a_old}."),
    ch_state=(
        ("Officially no longer {a_old}! Started as {a_v} on Monday.",
         "Congratulations on the new start! The first few weeks as {a_v} will be a lot to take "
         "in, so go easy on yourself."),
    ),
    ch_ack=("{A_v}, what a switch! Good luck with it.",
            "That's brave, and exciting. I hope life as {a_v} treats you well."),
    rels=("sister", "brother", "flatmate", "best mate", "cousin", "neighbour", "partner", "dad",
          "mum", "uncle"),
    d_state=(
        ("My {rel} is {a_v} and keeps telling me my job is easy. Cheeky.",
         "Ha, family and friends banter! Every job looks easy from the outside, even to {a_v}."),
        ("My {rel} just qualified as {a_v}, so we're out celebrating tonight.",
         "Congratulations to your {rel}! Have a lovely evening."),
    ),
    d_open=(
        ("Had dinner with my {rel} last night and they moaned about work the entire time.",
         ("Ha, classic. What does your {rel} do?", "Oh dear! What's their job?")),
    ),
    d_short=("{A_v}.", "{A_v}, so a lot of moaning is justified.", "{V}, and apparently it's hell."),
    d_ack=("{A_v}, fair enough, that can be a tough gig.", "Ah, {a_v}. I'd probably moan too!"),
    rq=("What did I tell you my {rel} does for a living?", "What job did I say my {rel} has?"),
    rqi=("what my {rel} does for work", "what job my {rel} has"),
)

_kind(
    key="trip_city", pool=TRIP_CITIES,
    opener=(
        ("Finally booked a holiday!!! First one in ages.",
         ("Oh, brilliant! Where are you off to?", "You deserve it! Where's the trip?")),
        ("Can you help me make a packing list? I'm off on a trip soon.",
         ("Happy to! Which city are you heading to? It changes what you need.",)),
        ("Work's sending me abroad for a conference, which is exciting and stressful.",
         ("Ooh, where are they sending you?",)),
        ("How do people deal with jet lag? I'm travelling next month.",
         ("Good idea to plan ahead. Where are you flying to?",)),
    ),
    short=("{V}, for a week", "{V}! Never been.", "{V}. Flights were cheap, so why not.", "{v} :)",
           "{V}, just a long weekend though"),
    ack=(
        ("{V}! Great choice. Want some tips for the trip?", "Go on then, a few.",
         "Walk everywhere you can, eat where the locals queue, and check whether any museums "
         "have a free day while you're there. And pack layers!"),
        "Oh, {v} sounds lovely. Have a wonderful time!",
        ("{V}, nice! Is it your first time there?", "First time, yeah.",
         "Exciting! Leave yourself a slow first day to get your bearings; it makes the rest of "
         "the trip more relaxed."),
    ),
    state=(
        ("I'm going to {v} next month. What should I absolutely not miss?",
         "Ooh, {v}! Wander the old streets on foot, try whatever the local pastry is, and leave "
         "one afternoon with nothing planned. That's often the best part."),
        ("Booked {v} for the spring. Is travel insurance worth it for a short trip?",
         "Lovely choice! Yes, even for a short trip to {v} it's worth it for cancellations and "
         "medical cover. Check your bank account too; some include it."),
    ),
    q=("Where am I going on my trip?", "Which city am I flying to?", "Where's my trip to?"),
    qi=("where I'm going on my trip", "which city I'm flying to", "where I'm travelling to"),
    ch_open=(
        ("Slight change of plan with the trip.",
         ("Oh no, what happened? Where are you going now?",)),
        ("Ugh, the holiday plans have gone sideways.", ("Oh dear, what's changed?",)),
    ),
    ch_short=("{Old} fell through, so it's {v} now.", "We switched to {v}. Cheaper, and nicer."),
    ch_state=(
        ("Cancelled {old}, rebooked for {v}. Long story involving a strike.",
         "Sorry about the hassle, but {v} is a great consolation prize! Want a fresh packing "
         "list?"),
    ),
    ch_ack=("{V} instead, that could turn out even better!", "Ah well, {v} it is. Fingers crossed "
            "this one sticks!"),
    rels=("brother", "sister", "mum", "dad", "flatmate", "best mate", "colleague", "boss"),
    d_state=(
        ("My {rel} is off to {v} next week and I'm very jealous.",
         "Understandable! {V} sounds lovely; maybe you'll get a souvenir out of it."),
        ("My {rel} keeps sending me photos from {v}. Rude.",
         "Ha, the classic holiday flex! Hopefully your turn comes soon."),
    ),
    d_open=(
        ("My {rel} is going away for a bit and I'm stuck watering the plants.",
         ("Ha, the glamorous job! Where's your {rel} off to?",)),
    ),
    d_ack=("{V}, lucky them!", "Oh, {v}. Very jealous on your behalf."),
    rq=("Where is my {rel} travelling to?", "Which city is my {rel} going to?"),
    rqi=("where my {rel} is going", "which city my {rel} is off to"),
)

_kind(
    key="trip_date", pool=DATES,
    opener=(
        ("I keep forgetting to check in for my flight.",
         ("Easy to do! When do you fly out?",)),
        ("Need to find someone to water the plants while I'm away.",
         ("Good thinking. When are you leaving?",)),
        ("Can you remind me to renew my passport? I'm travelling soon.",
         ("I can't set reminders, unfortunately, but let's work it out. When's the flight?",)),
        ("Trying to work out when to book airport parking.",
         ("Happy to help you plan it. What date are you flying?",)),
    ),
    short=("{V}, early morning", "{V}. Ridiculously early flight.", "On {v}",
           "{V}, assuming nothing gets cancelled"),
    ack=(
        ("{V}, okay! Do you have everything you need?", "Mostly. Need adapters.",
         "Worth grabbing a universal adapter; one with USB ports saves a lot of faff."),
        "Got it, {v}. I'd check in online as soon as it opens, usually a day or two before.",
        "{V}, lovely. Not long to wait!",
    ),
    state=(
        ("I fly out on {v} and I haven't even found my passport yet.",
         "Best to find it now! Check it's valid well beyond your travel dates, since some "
         "countries insist on that. Fingers crossed for {v}."),
        ("My flight's on {v}. How early should I get to the airport?",
         "For {v}, aim for around two hours before an international flight, and a bit more at "
         "peak times or if you're checking a bag."),
    ),
    q=("When do I fly out?", "What date is my flight?", "What day am I leaving for my trip?"),
    qi=("when my flight is", "what date I fly out", "which day I'm leaving for my trip"),
    ch_open=(
        ("The airline's messed with my flight.", ("Oh no. Have they moved the date?",)),
        ("Annoying news on the flight front.", ("What's happened, is there a new date?",)),
    ),
    ch_short=("Yep, pushed to {v} instead of {old}.", "It's {v} now. Ugh."),
    ch_state=(
        ("My flight's been moved from {old} to {v}. Do I get compensation?",
         "Sorry, that's annoying. It depends on the airline and how much notice they gave; check "
         "their terms and the passenger rights rules. At minimum you can usually ask for a "
         "refund or rebooking if {v} doesn't work."),
    ),
    ch_ack=("{V} then. Annoying, but at least it's still happening!",
            "Right, {v}. Worth checking any hotel bookings still line up."),
    rels=("brother", "sister", "mum", "dad", "flatmate", "best mate"),
    d_state=(
        ("My {rel} flies out on {v}, so I'm on airport-run duty.",
         "That's kind of you! Hopefully it's not a silly-o'clock flight on {v}."),
    ),
    d_open=(
        ("Agreed to drive my {rel} to the airport, God help me.",
         ("That's generous! When's the flight?",)),
    ),
    d_ack=("{V}, noted. Good luck with the traffic!", "Okay, {v}. Bring coffee."),
    rq=("When does my {rel} fly out?", "What date is my {rel}'s flight?"),
    rqi=("when my {rel} flies out", "what date my {rel}'s flight is"),
)

_kind(
    key="hometown", pool=HOMETOWNS,
    opener=(
        ("Feeling weirdly homesick today.",
         ("That's a real feeling. Where did you grow up?",)),
        ("Going back to visit family soon, haven't been in years.",
         ("Oh, nice! Where's home originally?",)),
        ("My accent came out on a work call today and everyone laughed.",
         ("Ha! Where are you from originally?",)),
    ),
    short=("{V}, born and raised", "Just outside {v}", "{V}. Small, windy, you know the type.",
           "{v}, believe it or not"),
    ack=(
        ("{V}! Do you still have family there?", "My parents, yeah.",
         "That's nice, it means you've always got a reason to go back."),
        "Ah, {v}. It's funny how a place stays with you.",
        "{V}, I bet it's changed a lot since you were little.",
    ),
    state=(
        ("I grew up in {v} and I still miss it sometimes.",
         "That's completely natural. Do you manage to get back to {v} much?"),
        ("Does anyone ever really lose their accent? I left {v} ages ago and people still clock "
         "it.", "Accents are stubborn! Most people keep traces of where they grew up, and they "
         "often come back when you're tired. {V} leaves a mark."),
    ),
    q=("Where did I tell you I grew up?", "Which town am I from originally?", "Where's my hometown?"),
    qi=("where I grew up", "which town I'm from originally", "where my hometown is"),
    rels=("partner", "flatmate", "best mate", "boss", "colleague", "neighbour"),
    d_state=(
        ("My {rel} grew up in {v} and won't stop talking about it.",
         "Ha, people are loyal to their hometowns! {V} clearly left an impression."),
        ("Turns out my {rel} is from {v}. Small world.", "Small world indeed!"),
    ),
    d_open=(
        ("Found out where my {rel} grew up today, totally not what I expected.",
         ("Ha, where?",)),
    ),
    d_ack=("{V}! I can see why that surprised you.", "Oh, {v}. Fun fact to file away."),
    rq=("Where did my {rel} grow up?", "Which town is my {rel} from?"),
    rqi=("where my {rel} grew up", "which town my {rel} is from"),
)

_kind(
    key="neighbourhood", pool=NEIGHBOURHOODS,
    opener=(
        ("We finally moved house. Every muscle hurts.",
         ("Congratulations! Which part of town are you in now?",)),
        ("Moving day is nearly here and I've packed one box.",
         ("Ha, one box is a start. Where are you moving to?",)),
        ("We got the flat we wanted!!",
         ("Oh, well done! Where's the new place?",)),
    ),
    short=("{V}! Near the park", "{V}. Finally out of the flat above the chip shop",
           "{v}, walking distance from work"),
    ack=(
        ("{V}, lovely! How are you finding it so far?", "Quiet, which I like.",
         "Quiet is underrated. Enjoy it!"),
        "Oh, {v}! Happy moving.",
        "{V}, nice. Introduce yourself to the neighbours early, it makes a difference.",
    ),
    state=(
        ("Just moved to {v}. Any tips for meeting people in a new area?",
         "Congrats on the move to {v}! Try a local club, saying yes to invites, and becoming a "
         "regular at one café. Familiarity builds fast."),
    ),
    q=("Which part of town do I live in?", "What area did I move to?",
       "What neighbourhood do I live in now?"),
    qi=("which area I live in", "what part of town I moved to"),
    ch_open=(
        ("We're moving again, would you believe.", ("Again! Where to this time?",)),
        ("The flat situation changed, we've had to move.", ("Oh no, where are you now?",)),
    ),
    ch_short=("{V}. Landlord sold the place in {old}.", "Over in {v} now."),
    ch_state=(
        ("Moved out of {old} and into {v} last weekend. So much cardboard.",
         "So much cardboard indeed! I hope {v} feels like home quickly."),
    ),
    ch_ack=("{V}, fresh start!", "Ah, {v}. Hope you settle in fast."),
    rels=("sister", "brother", "best mate", "cousin", "colleague", "mum"),
    d_state=(
        ("My {rel} lives in {v}, so I'm there most weekends.",
         "Sounds like {v} is a second home then!"),
    ),
    d_open=(
        ("My {rel} has just bought a flat!", ("Oh, amazing! Whereabouts?",)),
    ),
    d_ack=("{V}, lovely! Good news all round.", "Ooh, {v}. Housewarming incoming!"),
    rq=("Which part of town does my {rel} live in?", "What area does my {rel} live in?"),
    rqi=("where my {rel} lives", "which area my {rel} lives in"),
)

_kind(
    key="appointment", pool=TIMES, aux="appt",
    opener=(
        ("Got a {appt} appointment this week that I'm dreading.",
         ("I get it. What time is it?", "What time are you booked in for?")),
        ("Can you help me not forget my {appt} appointment?",
         ("I can't set alarms, but let's plan around it. What time's the appointment?",)),
    ),
    short=("{V} on {day}", "{day}, {v}. Ugh.", "{V}, {day}. Right in the middle of the day."),
    ack=(
        "{V} on {day}, got it. Set two alarms, just in case!",
        ("Okay, {v}. Want some tips for staying calm beforehand?", "Yes please.",
         "Breathe out for longer than you breathe in for a minute or so, and bring something to "
         "distract you in the waiting room."),
        "Right, {day} at {v}. Put it in your phone now while you're thinking about it.",
    ),
    state=(
        ("My {appt} appointment is at {v} on {day}. What should I do to prepare?",
         "Write your questions down beforehand so nothing slips your mind, and aim to get there "
         "a few minutes early on {day}."),
    ),
    q=("What time is my {appt} appointment?", "What time am I booked in at the {appt}?",
       "When is my {appt} appointment, time-wise?"),
    qi=("what time my {appt} appointment is", "what time I'm seeing the {appt}"),
    ch_open=(
        ("The {appt} rang this morning.", ("Oh? Did they move your appointment?",)),
        ("Ugh, my {appt} appointment got moved.", ("Annoying! What's the new time?",)),
    ),
    ch_short=("Yep, it's {v} now.", "{V} now, same day. Not {old}."),
    ch_state=(
        ("They moved my {appt} appointment from {old} to {v}.",
         "Thanks for the heads-up, {v} it is. Does that still fit around your day?"),
    ),
    ch_ack=("{V}, noted.", "Okay, {v} then. Update that alarm!"),
)

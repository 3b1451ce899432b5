"""Fact kinds about things and pastimes: the car, an instrument, an allergy, a book, a race, a crop
and a language being learnt.
"""

from __future__ import annotations

from recall_core.training.families.interview.kind import Kind
from recall_core.training.families.interview.values import (
    ALLERGENS,
    BOOKS,
    CARS,
    CROPS,
    INSTRUMENTS,
    LANGUAGES,
    RACES,
)

KINDS: dict[str, Kind] = {}  # this module's kinds, by key, in the order written


def _kind(**kw) -> None:
    KINDS[kw["key"]] = Kind(**kw)


_kind(
    key="car", pool=CARS,
    opener=(
        ("Finally got a new car after the old one died!",
         ("Oh, nice! What did you go for?", "Congrats! What is it?")),
        ("Just picked up a secondhand car, fingers crossed it's not a lemon.",
         ("Exciting! What did you end up with?",)),
        ("Just finished car shopping. Worst week of my life.",
         ("Ugh, it really is stressful. What did you get in the end?",)),
    ),
    short=("{A_v}. Secondhand but mint.", "{V}! In a very sensible grey.", "{a_v}, nothing fancy",
           "{V}. The dealer loved me."),
    ack=(
        "{A_v}, good, reliable choice. Happy driving!",
        ("Oh, {a_v}! How does it drive?", "Smooth. Much better than the old one.",
         "Lovely. Make a note of when the next service is due so it stays that way."),
        "Nice, {a_v}. Get it serviced early so you know where you stand.",
    ),
    state=(
        ("Any tips for keeping {a_v} running well? Just bought one.",
         "Congrats on the {v}! Regular oil changes, keeping the tyres at the right pressure, and "
         "not ignoring new noises go a long way."),
        ("My {v} is making a weird rattle when I brake. Should I be worried?",
         "I'd get that checked soon. Rattles when braking can be worn pads or something loose, "
         "so it's safer to have a garage look at the {v} than guess."),
    ),
    q=("What car did I tell you I drive?", "What car did I get?", "What am I driving now?"),
    qi=("what car I drive", "what I'm driving at the moment", "which car I ended up with"),
    ch_open=(
        ("Okay, car update. Don't judge.", ("Ha, no judgement! What happened?",)),
        ("So the car situation has changed again.", ("Uh oh, what are you driving now?",)),
    ),
    ch_short=("Traded it in. Got {a_v} now.", "Sold the {old}, bought {a_v}."),
    ch_state=(
        ("Said goodbye to the {old} and got {a_v}. Insurance is cheaper too!",
         "Nice upgrade! Cheaper insurance is a lovely bonus. Enjoy the {v}."),
    ),
    ch_ack=("{A_v}! Hope this one's a keeper.", "Ooh, {a_v}. Fresh start!"),
    rels=("dad", "mum", "brother", "sister", "neighbour", "boss", "uncle"),
    d_state=(
        ("My {rel} drives {a_v} and acts like it's a spaceship.",
         "Ha! People do get attached to their cars, even {a_v}."),
        ("Borrowed my {rel}'s {v} today and nearly stalled it twice.",
         "Unfamiliar cars are tricky! The clutch bite point is always somewhere different."),
    ),
    d_open=(
        ("My {rel} just bought a new car and won't shut up about it.",
         ("Ha! What did they get?",)),
    ),
    d_short=("{A_v}.", "{A_v}, apparently.", "{A_v}. I don't see the fuss."),
    d_ack=("{A_v}, ha, fair enough!", "Ah, {a_v}. I can see why they're excited."),
    rq=("What car did I tell you my {rel} drives?", "What does my {rel} drive?"),
    rqi=("what car my {rel} drives", "what my {rel} drives"),
)

_kind(
    key="instrument", pool=INSTRUMENTS,
    opener=(
        ("Fulfilling a childhood dream: I've started music lessons!",
         ("That's fantastic! Which instrument?",)),
        ("My neighbours probably hate me, I've started learning an instrument.",
         ("Ha, they'll get over it. What are you learning?",)),
        ("Signed up for music lessons. Bit late in life, but why not?",
         ("Never too late! What are you going to play?",)),
    ),
    short=("The {v}!", "{V}, believe it or not", "{V}. Badly, so far.", "the {v}. my fingers hurt"),
    ack=(
        ("The {v}! Love that. Are you having lessons or teaching yourself?",
         "Lessons, once a week.",
         "Perfect. A weekly lesson plus a little daily practice is the fastest way to progress."),
        "Oh, the {v} is a wonderful choice. Enjoy it!",
        "{V}, brilliant! Be patient with yourself for the first few months.",
    ),
    state=(
        ("How long should I practise the {v} each day as a beginner?",
         "For a beginner on the {v}, twenty to thirty minutes a day is plenty. Short, regular "
         "sessions beat one long weekend slog."),
        ("I've been learning the {v} for a month and I sound like a goose.",
         "Everyone sounds like a goose at first on the {v}! A month in is exactly when it starts "
         "to turn a corner, so keep going."),
    ),
    q=("Which instrument am I learning?", "What instrument did I tell you I play?",
       "What am I learning to play?"),
    qi=("which instrument I'm learning", "what I'm learning to play"),
    ch_open=(
        ("Music lesson update: I've switched.", ("Oh? What are you learning now?",)),
        ("Confession: I quit my music lessons. Well, sort of.", ("Sort of? What happened?",)),
    ),
    ch_short=("Gave up the {old}, I'm on the {v} now.", "The {v}. The {old} just wasn't for me."),
    ch_state=(
        ("Quit the {old}. Started the {v} instead and I actually like it.",
         "That's great, finding the right instrument makes all the difference. Enjoy the {v}!"),
    ),
    ch_ack=("The {v}, good switch if it feels more fun!", "Ooh, the {v}. New adventure!"),
    rels=("sister", "brother", "flatmate", "cousin", "neighbour", "best mate", "dad"),
    d_state=(
        ("My {rel} plays the {v} at all hours. Send help.",
         "Ha, that's a lot of {v}! Maybe suggest a practice schedule?"),
        ("My {rel} is in a folk band, plays the {v}. They're actually good!",
         "That sounds fun. Live folk music is such a treat."),
    ),
    d_open=(
        ("Went to watch my {rel}'s concert last night.",
         ("Oh, lovely! What do they play?",)),
    ),
    d_short=("The {v}.", "{V}. Very loudly.", "The {v}, and they were great!"),
    d_ack=("The {v}! How lovely.", "Ah, the {v}. I'd have liked to hear that."),
    rq=("What instrument does my {rel} play?", "Which instrument does my {rel} play?"),
    rqi=("what instrument my {rel} plays", "which instrument my {rel} plays"),
)

_kind(
    key="allergy", pool=ALLERGENS,
    opener=(
        ("Can you give me a stir-fry recipe? Something quick.",
         ("Sure! Any allergies or things you avoid?",)),
        ("Planning to bake something for a work do.",
         ("Lovely idea. Anything you're allergic to that I should steer clear of?",)),
        ("Want to try meal prepping this week, any ideas?",
         ("Happy to. Before I suggest anything, any allergies?",)),
    ),
    short=("Just {v}.", "{V}, annoyingly", "{v}. everything else is fine",
           "Only {v}, I'm fine with the rest"),
    ack=(
        "Got it, no {v}. Quick idea: chicken with greens and rice, done in twenty minutes.",
        "Noted, {v}-free it is. A lemon drizzle traybake is easy and travels well.",
        ("Okay, I'll keep {v} out of everything. Want veggie options too?",
         "Yeah, a couple would be great.",
         "Easy: a chickpea and spinach curry and a lentil bolognese both freeze well."),
    ),
    state=(
        ("I'm allergic to {v}. Could you check a recipe for me?",
         "Of course. Paste it in and I'll flag anything that might contain {v}, including sneaky "
         "sources like sauces and dressings."),
        ("Eating out is a nightmare when you're allergic to {v}. Any tips?",
         "That sounds frustrating. Calling ahead, telling staff clearly that {v} is an allergy "
         "rather than a preference, and carrying your medication all help."),
    ),
    q=("What did I tell you I'm allergic to?", "What's my allergy?",
       "What do I need to avoid because of my allergy?"),
    qi=("what I'm allergic to", "what my allergy is"),
    rels=("best mate", "flatmate", "cousin", "sister", "brother", "colleague", "boss"),
    d_state=(
        ("My {rel} is allergic to {v}, so I'm cooking around that tonight.",
         "That's thoughtful of you. Plenty of lovely dishes avoid {v} easily."),
        ("Cooking for my {rel} on Saturday and they can't have {v}.",
         "Good to know in advance! Check labels carefully, {v} turns up in surprising places."),
    ),
    d_open=(
        ("Cooking for my {rel} at the weekend, they've got an allergy.",
         ("Good to plan ahead. What are they allergic to?",)),
    ),
    d_ack=("{V}, okay. Easy enough to work around.", "Ah, {v}. Labels will be your friend."),
    rq=("What is my {rel} allergic to?", "What allergy does my {rel} have?"),
    rqi=("what my {rel} is allergic to", "what my {rel}'s allergy is"),
)

_kind(
    key="book", pool=BOOKS,
    opener=(
        ("Finally back into reading after a long slump!",
         ("Love that. What are you reading?",)),
        ("Book club meets next week and I'm behind as usual.",
         ("Ha, classic! What's the book this time?",)),
        ("Any tips for reading more? I've just started a new book.",
         ("Little and often works! What's the book?",)),
    ),
    short=("{V}. Finally.", "{V}! About halfway through", "{V}, and it's slower than I expected"),
    ack=(
        ("{V}, great choice. How are you finding it?", "Slow start, but it's picking up.",
         "That's often the way; the good ones reward a bit of patience."),
        "Ooh, {v}. Enjoy!",
        "{V}! Ten pages before bed is a lovely habit to build around it.",
    ),
    state=(
        ("Reading {v} at the moment and I can't put it down.",
         "Oh, {v} is a great one to be gripped by! Let me know what you think when you finish."),
        ("Is {v} worth sticking with? I'm a few chapters in and not sure.",
         "Give {v} a few more chapters; lots of people say it clicks a bit later. If it still "
         "doesn't, it's fine to stop."),
    ),
    q=("What book am I reading at the moment?", "What am I reading right now?",
       "Which book am I currently on?"),
    qi=("what I'm reading at the moment", "which book I'm reading"),
    ch_open=(
        ("Abandoned my book, by the way.", ("Fair enough! What's replaced it?",)),
        ("Finished my book! On to the next.", ("Nice! What's next?",)),
    ),
    ch_short=("{V}. Much better so far.", "Moved on to {v}."),
    ch_state=(
        ("Gave up on {old} and started {v}. No regrets.",
         "Life's too short for books you're not enjoying! I hope {v} grabs you."),
    ),
    ch_ack=("{V}! Good pick.", "Ooh, {v}, enjoy."),
)

_kind(
    key="race", pool=RACES,
    opener=(
        ("Signed up for my first race. What have I done.", ("Amazing! Which race?",)),
        ("Training is going terribly, my knees hate me.", ("Oh no. What are you training for?",)),
        ("Need a training plan, I've got an event in the autumn.",
         ("Let's sort you out. What's the event?",)),
    ),
    short=("{A_v}. Gulp.", "{A_v}, apparently. I was very optimistic when I signed up.",
           "{A_v}. Don't laugh."),
    ack=(
        ("{A_v}, exciting! How long have you got to train?", "A good few months.",
         "That's a decent runway. Build up gradually and include an easy week every month or so."),
        "Ooh, {a_v}. You'll smash it.",
        "{A_v}, nice. Sleep and rest days count as training too, remember!",
    ),
    state=(
        ("I'm training for {a_v} and my knees are killing me. Normal?",
         "Some soreness is normal when training for {a_v}, but sharp or persistent knee pain isn't, "
         "so ease off, check your shoes, and get it looked at if it hangs around."),
        ("What should I eat the night before {a_v}?",
         "Something familiar and carb-heavy, like pasta or rice, without too much fibre or spice. "
         "Nothing new before {a_v}!"),
    ),
    q=("What race am I training for?", "What event did I sign up for?", "Which race am I doing?"),
    qi=("what race I'm training for", "what event I signed up for"),
    ch_open=(
        ("I've changed my race plans.", ("Oh? What are you doing instead?",)),
        ("Race news: I've switched events.", ("Ooh, to what?",)),
    ),
    ch_short=("Going for {a_v} instead.", "{A_v}. Go big or go home, or something like that."),
    ch_state=(
        ("Switched from {a_old} to {a_v}. Brave or stupid?",
         "A bit of both, which is the best kind of challenge! Adjust the plan for {a_v} and "
         "you'll be fine."),
    ),
    ch_ack=("{A_v} it is!", "Okay, {a_v}. We can tweak the training."),
    rels=("brother", "sister", "colleague", "best mate", "boss", "flatmate"),
    d_state=(
        ("My {rel} is doing {a_v} this weekend, so I'm on cheering duty.",
         "Ha, cheering is an underrated job! Bring snacks and a silly sign."),
    ),
    d_open=(
        ("My {rel} has roped me into being their support crew.", ("Ha! Support for what?",)),
    ),
    d_short=("{A_v}.", "{A_v}. I'm in charge of bananas.", "{A_v}, God help us."),
    d_ack=("{A_v}, great! You'll be a brilliant cheerleader.", "Ah, {a_v}. Bring a flask!"),
    rq=("What race is my {rel} doing?", "What event is my {rel} training for?"),
    rqi=("what race my {rel} is doing", "what my {rel} is training for"),
)

_kind(
    key="crop", pool=CROPS,
    opener=(
        ("Got an allotment plot at last after years on the waiting list!",
         ("Oh, congratulations! What are you planning to grow?",)),
        ("Planning this year's veg patch.", ("Fun! What's going in first?",)),
        ("My garden was a disaster last year but I'm trying again.",
         ("Good for you. What are you going to grow?",)),
    ),
    short=("Mostly {v}", "{V}, loads of them", "{V}. Ambitious, I know.", "{v} to start with"),
    ack=(
        "{V}, good choice. Watch out for slugs!",
        ("Ooh, {v}. Have you got a sunny spot?", "Pretty sunny, yeah.",
         "Perfect, that'll help a lot. Water at the base in the mornings if you can."),
        "{V}! Lovely. Keep a little notebook of what you sow and when.",
    ),
    state=(
        ("Growing {v} this year. Any tips for a total beginner?",
         "Lovely choice! With {v}, good soil, regular watering and keeping the slugs off early "
         "make a big difference."),
    ),
    q=("What am I growing this year?", "What veg am I growing?",
       "What did I say I was planting this year?"),
    qi=("what I'm growing this year", "what veg I'm planting"),
    rels=("dad", "mum", "neighbour", "uncle", "aunt"),
    d_state=(
        ("My {rel} grows {v} and gives me bags of them every week.",
         "What a lovely problem to have! Soups and roasts are good ways to use up a glut."),
    ),
    d_ack=("{V}, lovely!", "Ah, {v}. Fresh veg is the best."),
    rq=("What does my {rel} grow?", "What veg does my {rel} grow?"),
    rqi=("what my {rel} grows", "what veg my {rel} grows"),
)

_kind(
    key="language", pool=LANGUAGES,
    opener=(
        ("I've started learning a language on my commute.",
         ("Oh, great use of the time! Which language?",)),
        ("Decided to finally learn a second language!", ("Brilliant! Which one?",)),
        ("Any tips for sticking with language learning? I keep giving up.",
         ("Happy to help. What language are you learning?",)),
    ),
    short=("{V}!", "{V}. It's hard.", "{V}, for when I visit family",
           "{V}, don't ask me to say anything yet"),
    ack=(
        ("{V}, great choice! How long have you been at it?", "Only a couple of weeks.",
         "That's the hardest bit done: starting. Little and often is the way."),
        "Ooh, {v}. Lovely language!",
        "{V}! Try labelling things around the house, it sounds silly but it works.",
    ),
    state=(
        ("Learning {v} at the moment. Can you give me a simple phrase to practise?",
         "Of course! 'Thank you very much' is a good one. Learn it in {v} and say it out loud a "
         "few times a day. Want a few more beginner phrases?"),
    ),
    q=("Which language did I tell you I'm learning?", "What language am I studying?",
       "What language did I take up?"),
    qi=("which language I'm learning", "what language I'm studying"),
    ch_open=(
        ("I've switched languages, ha.", ("Ha! To what?",)),
        ("Language learning update: new language.", ("Ooh, which one now?",)),
    ),
    ch_short=("{V} now. {Old} was breaking my brain.", "Swapped to {v}."),
    ch_state=(
        ("Gave up {old} and started {v} instead.",
         "Nothing wrong with a switch, motivation matters most. Good luck with {v}!"),
    ),
    ch_ack=("{V}, exciting!", "Ah, {v}. Fresh start!"),
    rels=("sister", "brother", "flatmate", "best mate", "colleague", "partner"),
    d_state=(
        ("My {rel} is learning {v} and keeps practising on me.",
         "Ha, free lessons for you! Maybe you'll pick some {v} up too."),
    ),
    d_open=(
        ("My {rel} has started language lessons and talks about nothing else.",
         ("Ha, the enthusiasm phase! Which language?",)),
    ),
    d_ack=("{V}, nice!", "Ooh, {v}. Good for them."),
    rq=("Which language is my {rel} learning?", "What language is my {rel} studying?"),
    rqi=("which language my {rel} is learning", "what language my {rel} is studying"),
)

"""What the two friends get up to, in their own words, and how a third party asks about it later.

Every kind has a value pool, a few ways the speaker tells it in the first person ("I finally
adopted {v}!"), sometimes addressed to the other by name (``{o}``: a note that names the *other*
friend while telling the speaker's own news), a way it changes, and questions a third party asks
later by name (``{n}``). Every sentence is this family's own.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Kind:
    """One kind of news a speaker tells about themselves."""

    key: str
    values: tuple[str, ...]
    tell: tuple[str, ...]  # the speaker tells it ({v} the value, {o} the listener's name)
    change: tuple[str, ...]  # the speaker says it changed ({v}: the new value)
    ask: tuple[str, ...]  # asked later by a third party ({n}: the person asked about)


#: First names; two are drawn per conversation.
NAMES: tuple[str, ...] = (
    "Priya", "Tomas", "Wren", "Dario", "Keiko", "Bram", "Lucia", "Femi", "Hollis", "Anouk", "Rafe", "Signe",
    "Omar", "Talia", "Jonah", "Mireille", "Cass", "Idris",
)  # fmt: skip

#: System messages of a caller who asks about the two friends' chats ({a}, {b}: their names).
SYSTEMS: tuple[str, ...] = (
    "The notes below come from chats between {a} and {b}. Answer questions about them briefly.",
    "You are a memory assistant for {a} and {b}'s message history. Reply in a few words.",
    "Help me look things up in what {a} and {b} told each other. Keep answers short and factual.",
    "{a} and {b} are old friends who message each other often. Answer from their messages only.",
    "You answer questions about two friends, {a} and {b}, from what they said to each other.",
)

KINDS: tuple[Kind, ...] = (
    Kind(
        "pet",
        ("a greyhound", "a tabby kitten", "two rabbits", "a parrot", "a beagle", "a hedgehog", "a pair of finches",
         "a rescue pony", "a gecko", "a husky"),
        ("Guess what, {o}? I adopted {v} on Saturday, I'm completely smitten.",
         "So I finally did it: I brought home {v} from the shelter!",
         "Meet the newest member of my household: {v}. I adopted it last week."),
        ("Slight change of plan, I ended up adopting {v} instead.",),
        ("What pet did {n} adopt?", "What animal did {n} bring home?", "Which pet does {n} have now?"),
    ),
    Kind(
        "instrument",
        ("the cello", "the banjo", "the ukulele", "the trumpet", "the harp", "the accordion", "the bass guitar",
         "the saxophone", "the drums", "the violin"),
        ("I started lessons on {v} this month. My neighbours are being very patient.",
         "{o}, you won't believe it, I've been practising {v} every evening.",
         "I picked up {v} again after years away from it, and my fingers hurt."),
        ("I gave up on the old one and switched to {v}.",),
        ("What instrument is {n} learning?", "Which instrument has {n} been practising?"),
    ),
    Kind(
        "race",
        ("a half marathon", "a 10k charity run", "a triathlon", "a trail ultra", "a cycling sportive",
         "an open-water swim", "a fell race", "a rowing regatta"),
        ("I did it, {o}! I finished {v} yesterday and I can barely walk.",
         "My legs are jelly: I completed {v} this morning.",
         "I just signed my name up for {v} in the spring, so training starts now."),
        ("I changed my entry, I'm doing {v} now.",),
        ("What race did {n} take part in?", "Which event did {n} sign up for?", "Which race is {n} doing?"),
    ),
    Kind(
        "book",
        ("The Overstory", "Middlemarch", "Piranesi", "The Remains of the Day", "Dune", "Circe", "Stoner",
         "Pachinko", "The Hobbit", "Beloved"),
        ("I stayed up until two finishing {v}. I need someone to talk to about the ending.",
         "I've been reading {v} on the bus, {o}, and I keep missing my stop.",
         "My book club picked {v} and honestly I loved it."),
        ("I abandoned that one halfway and I'm on {v} now.",),
        ("What book did {n} read?", "Which novel has {n} been reading?"),
    ),
    Kind(
        "trip",
        ("Lisbon", "the Scottish Highlands", "Reykjavik", "Crete", "Vancouver Island", "the Amalfi Coast",
         "Krakow", "Zanzibar", "Tromso", "the Lake District"),
        ("I just got back from {v} and I already miss it.",
         "I booked a week in {v} for the summer, {o}, my first proper holiday in ages.",
         "My sister and I spent the long weekend in {v}, it was wonderful."),
        ("We moved the trip, I'm going to {v} now.",),
        ("Where did {n} travel?", "Which place did {n} visit?", "Where is {n} going on holiday?"),
    ),
    Kind(
        "volunteer",
        ("the food bank", "an animal shelter", "the children's hospital", "a community garden", "the library",
         "a wildlife rescue", "the soup kitchen", "a homeless shelter"),
        ("I've started volunteering at {v} on Sundays. It's the best part of my week.",
         "I spent the morning helping out at {v}, {o}. Exhausting but so worth it.",
         "I signed up to volunteer at {v} after seeing a post about it."),
        ("I stopped going there, I volunteer at {v} instead now.",),
        ("Where does {n} volunteer?", "Where has {n} been volunteering?"),
    ),
    Kind(
        "dish",
        ("a lemon tart", "beef rendang", "homemade ramen", "a sourdough loaf", "paella", "a carrot cake",
         "dumplings from scratch", "a Sunday roast"),
        ("I made {v} for the first time tonight and it actually worked!",
         "You'd be proud of me, {o}: I cooked {v} for eight people.",
         "I spent all afternoon on {v} and we finished it in ten minutes."),
        ("Scratch that, the party dish is {v} now.",),
        ("What did {n} cook?", "What dish did {n} make?"),
    ),
    Kind(
        "craft",
        ("a quilt", "a bookshelf", "a clay vase", "a watercolour of the harbour", "a knitted scarf",
         "a stained glass panel", "a birdhouse", "a mosaic table"),
        ("I finished {v} last night, my first real project.",
         "Look what I made, {o}: {v}! It took me three weekends.",
         "I'm halfway through {v} and the living room is a mess."),
        ("I changed projects, I'm making {v} now.",),
        ("What did {n} make by hand?", "What project did {n} finish?"),
    ),
    Kind(
        "job",
        ("a nurse", "a park ranger", "a sound engineer", "a primary school teacher", "a paramedic", "an architect",
         "a bike mechanic", "a florist", "a data analyst", "a pastry chef"),
        ("I got the job, {o}! I start as {v} next month.",
         "After all those interviews I'm finally working as {v}.",
         "First week as {v} done, and I think I'm going to like it."),
        ("Plot twist: I took a different offer, I'm {v} now.",),
        ("What job did {n} get?", "What does {n} work as?", "What is {n}'s new job?"),
    ),
    Kind(
        "club",
        ("a chess club", "a choir", "a climbing gym", "a rowing club", "a salsa class", "a hiking group",
         "a film society", "a pottery studio"),
        ("I joined {v} last month and I've already made friends there.",
         "{o}, I finally went along to {v} and I'm hooked.",
         "Thursday nights are busy now: I joined {v}."),
        ("I left that one and joined {v} instead.",),
        ("What did {n} join?", "Which group did {n} sign up for?"),
    ),
    Kind(
        "garden",
        ("tomatoes", "sunflowers", "an apple tree", "lavender", "strawberries", "a herb spiral", "dahlias",
         "chilli peppers"),
        ("I planted {v} in the back garden this weekend.",
         "My balcony is full of {v} now, {o}, I planted them in April.",
         "I put in {v} along the fence and I check on them every morning."),
        ("The first lot failed, so I planted {v} instead.",),
        ("What did {n} plant?", "What is {n} growing in the garden?"),
    ),
    Kind(
        "purchase",
        ("a camper van", "a road bike", "a piano", "a sailing dinghy", "an electric scooter", "a telescope",
         "a vintage Vespa", "a kayak"),
        ("I bought {v}, {o}! I've wanted one since I was a kid.",
         "Treated myself this week: I bought {v}.",
         "It's official, I'm the owner of {v}. No regrets so far."),
        ("I returned it and got {v} instead.",),
        ("What has {n} bought lately?", "What big purchase did {n} make?"),
    ),
)

"""Fact kinds about the people and pets in the user's life: the pet's name, the partner, the manager,
the user's birthday and the number of guests at a party.
"""

from __future__ import annotations

from recall_core.training.families.interview.kind import Kind
from recall_core.training.families.interview.values import DATES, GUEST_COUNTS, PERSON_NAMES, PET_NAMES

KINDS: dict[str, Kind] = {}  # this module's kinds, by key, in the order written


def _kind(**kw) -> None:
    KINDS[kw["key"]] = Kind(**kw)


_kind(
    key="pet_name", pool=PET_NAMES, aux="pet",
    opener=(
        ("Guess who finally brought a {sp} home yesterday!!",
         ("Oh, that's wonderful! What did you end up calling them?",
          "Congratulations! Has the {sp} got a name yet?")),
        ("So we caved. There's now a {sp} asleep on my feet while I type this.",
         ("Ha, resistance was futile! Go on then, what's the name?",
          "A {sp}, lovely! Did you settle on a name?")),
        ("Life update: we adopted a {sp} at the weekend and the flat is chaos.",
         ("How exciting! What are you calling the little one?",
          "Chaos, but the good kind, I hope! What's the {sp} called?")),
        ("okay so I may have accidentally agreed to take in a {sp}",
         ("Accidentally! Ha. Does this accidental {sp} have a name?",)),
    ),
    short=("{V}. The kids voted and I lost.", "{V}!", "We went with {v} in the end",
           "{V}, after about a week of arguing", "{V}. Not my pick, for the record",
           "ha, {v}. it suits them, trust me"),
    ack=(
        ("{V} is a brilliant name! How are the first few nights going?",
         "Bit of crying at 3am but otherwise fine.",
         "That's really normal early on. Something that smells of you in their bed can help a "
         "lot, and it usually settles within a week or two."),
        "Ha, {v}! I love it. Shout if you want a checklist for the first vet visit.",
        ("{V}, that's got real character. Is the {sp} settling in okay?",
         "Mostly, yeah. Sleeps most of the day.",
         "That's a good sign, young animals need loads of sleep. Keep the sleeping spot quiet "
         "and the routine consistent."),
        "Oh, {v} is adorable. Enjoy the chaos!",
    ),
    state=(
        ("Need advice: our new {sp}, {v}, keeps crying at night. Any tips?",
         "Poor {v}! That's really common in the first week or two. A consistent bedtime, "
         "something that smells of you nearby, and not rushing in at every whimper usually help."),
        ("Meet {v}, the newest member of the family. A {sp}! I'm obsessed.",
         "Hello, {v}! What a lovely name. Let me know if you'd like a list of first-week "
         "essentials."),
        ("Can you suggest some safe chew toys? {V} (the {sp}) has started on the skirting boards.",
         "Ah, the skirting board phase! For {v}, sturdy rubber toys you can stuff with food are "
         "great. Redirect calmly every time they go for the wood."),
    ),
    q=("What did I tell you the {sp} is called?", "What name did we give the {sp}?",
       "What did we end up calling the {sp}?"),
    qi=("what my {sp} is called", "what we named the {sp}", "what name we gave our {sp}"),
    ch_open=(
        ("Slightly embarrassing update about the {sp}.",
         ("Ha, go on, what happened?", "Oh no, what's the {sp} done now?")),
        ("You'll laugh at this, it's about the {sp}.", ("Try me! What's the news?",)),
    ),
    ch_short=("We renamed them. {Old} just never stuck, so it's {v} now.",
              "New name! {V}. Nobody ever actually called them {old}."),
    ch_state=(
        ("Update: the {sp} has been renamed. Goodbye {old}, hello {v}.",
         "Ha! {V} it is. Names often change once you get to know an animal's personality."),
    ),
    ch_ack=("{V} it is, then! They'll pick it up quickly if you pair it with treats.",
            "Ha, {v}! Honestly, that suits a {sp}."),
    rels=("sister", "neighbour", "flatmate", "cousin", "best mate", "colleague"),
    d_state=(
        ("My {rel}'s {sp} is called {v}, which is somehow worse than anything we came up with.",
         "Ha, {v} is a strong choice! Pets always grow into their names."),
        ("Spent the whole afternoon minding my {rel}'s {sp}, {v}. I'm exhausted.",
         "Pet-sitting is hard work! I hope {v} at least behaved."),
    ),
    d_open=(
        ("My {rel} has just got a {sp} as well, so now we're comparing notes constantly.",
         ("Aw, that's sweet! What's your {rel}'s {sp} called?",)),
        ("Been {sp}-sitting for my {rel} all week.",
         ("Ha, how's that going? What's the {sp}'s name?",)),
    ),
    d_ack=("{V}, ha! Cute.", "Aw, {v}. Sounds like a character."),
    rq=("What's my {rel}'s {sp} called?", "What did my {rel} name their {sp}?"),
    rqi=("what my {rel}'s {sp} is called", "what my {rel} named their {sp}"),
)

_kind(
    key="partner_name", pool=PERSON_NAMES,
    opener=(
        ("It's our anniversary next week and I have zero ideas.",
         ("Oh, lovely! What's your partner's name, by the way? Makes it easier to brainstorm.",)),
        ("Had a silly argument with my other half about the dishwasher.",
         ("Ha, the eternal dishwasher debate. What's your other half called?",)),
        ("My partner's birthday is coming up and they're impossible to buy for.",
         ("I can help! What's their name?", "Aww. What's your partner called?")),
    ),
    short=("{V}.", "{V}, and they'd hate that I'm asking a chatbot", "It's {v}", "{V} :)"),
    ack=(
        ("{V}, lovely name. What sort of things do they enjoy?", "Cooking, mostly. And old films.",
         "Then a cooking class for two, or a cosy film night with a fancy picnic at home, could "
         "go down well."),
        "Thanks! Okay, let's think about what {v} would actually enjoy.",
        "Nice. I'm sure {v} will appreciate the effort whatever you pick.",
    ),
    state=(
        ("{V} and I have been together for ages and I still never know what to get them.",
         "That's the classic problem! Maybe something experience-based for {v}: a class or a day "
         "out you can do together?"),
        ("Can you help me write a sweet note for {v}? My partner's had a rough week.",
         "Of course! How about: '{V}, I know this week has been a lot. I'm proud of you, and "
         "I'm making dinner tonight, no arguments.' Want it softer or funnier?"),
    ),
    q=("What did I tell you my partner is called?", "What's my other half called?",
       "What name did I give you for my partner?"),
    qi=("what my partner is called", "what my other half's name is"),
    rels=("sister", "brother", "best mate", "cousin", "flatmate"),
    d_state=(
        ("My {rel} is bringing their new partner {v} to dinner. I'm nervous on their behalf.",
         "Meeting the family is a big step! I hope {v} gets a warm welcome."),
    ),
    d_open=(
        ("My {rel} has a new partner and it's getting serious.",
         ("Oh, how exciting! What's their name?",)),
    ),
    d_ack=("{V}, lovely. Fingers crossed it goes well for them!", "Aw, {v}. Exciting times."),
    rq=("What's my {rel}'s partner called?", "What did I tell you my {rel}'s partner is called?"),
    rqi=("what my {rel}'s partner is called", "what my {rel}'s partner's name is"),
)

_kind(
    key="manager_name", pool=PERSON_NAMES,
    opener=(
        ("My manager is driving me up the wall this week.",
         ("Oh dear. What's your manager's name? It helps to talk it through.",)),
        ("Got a one-to-one with my boss tomorrow and I'm dreading it.",
         ("Ah, those can be nerve-racking. What's your boss called?",)),
        ("Need to email my manager to ask for a day off.",
         ("Let's draft something. Who should I address it to?",)),
    ),
    short=("{V}.", "{V}. Lovely person, terrible at emails", "It's {v}"),
    ack=(
        "Okay, {v}. Try going in with two or three concrete points written down; it keeps "
        "things focused.",
        ("{V}, got it. What's the main thing you want out of it?", "Mostly to be taken seriously.",
         "That's fair. Specific examples and a clear ask usually land better than general "
         "frustration."),
        "Thanks. With {v}, short and specific is probably the way to go.",
    ),
    state=(
        ("My boss, {v}, has scheduled a meeting for the very end of a Friday. Who does that?",
         "Ha, bold move from {v}. If it becomes a habit, it might be worth politely suggesting "
         "an earlier slot."),
        ("Can you draft a polite email asking {v}, my manager, for Friday off?",
         "Sure: 'Hi {v}, would it be possible for me to take this Friday as annual leave? I'll "
         "make sure everything's covered before then. Thanks!'"),
    ),
    q=("What's my manager's name?", "What's my boss called?", "Who's my manager at work?"),
    qi=("what my manager is called", "what my boss's name is", "who my manager is"),
)

_kind(
    key="birthday", pool=DATES,
    opener=(
        ("Getting older is wild. Birthday's coming up.",
         ("Oh, happy almost-birthday! When is it?",)),
        ("Trying to plan a small party for my birthday.", ("Fun! When's the big day?",)),
        ("People keep asking what I want for my birthday and I have no idea.",
         ("Ha, the hardest question. When's your birthday?",)),
    ),
    short=("{V}.", "{V}. Please don't sing.", "It's {v}", "{V}, same as every year, sadly"),
    ack=(
        ("{V}, noted! Do you want ideas for what to ask for?", "Go on.",
         "A nice experience, a book you've been eyeing, or a good pair of slippers. Nobody "
         "regrets good slippers."),
        ("Lovely, {v}! Any plans?", "Dinner with friends probably.",
         "Perfect. Simple is often best."),
        "{V}! I promise not to sing.",
    ),
    state=(
        ("My birthday's on {v}, and I'd love ideas for a low-key day.",
         "How about a long brunch, a walk somewhere pretty and a film night? Simple and lovely "
         "for {v}."),
    ),
    q=("When's my birthday?", "What date is my birthday?", "When is my birthday again?"),
    qi=("when my birthday is", "what date my birthday falls on"),
    rels=("sister", "brother", "mum", "dad", "partner", "best mate", "cousin"),
    d_state=(
        ("It's my {rel}'s birthday on {v} and I still haven't got a present.",
         "Still time! A thoughtful card and something small they've mentioned wanting always "
         "works."),
    ),
    d_open=(
        ("I always forget my {rel}'s birthday. Every year. Terrible.",
         ("Let's fix that! When is it?",)),
    ),
    d_ack=("{V}, write it on the calendar right now!", "Okay, {v}. Set two reminders!"),
    rq=("When did I tell you my {rel}'s birthday is?", "What date is my {rel}'s birthday?"),
    rqi=("when my {rel}'s birthday is", "what date my {rel}'s birthday is"),
)

_kind(
    key="guests", pool=GUEST_COUNTS,
    opener=(
        ("Hosting dinner on Saturday and panicking slightly.",
         ("Ha, you'll be fine! How many people are coming?",)),
        ("I've foolishly offered to do Christmas dinner this year.",
         ("Brave! How many are you feeding?",)),
        ("Doing a birthday barbecue and I need to work out food quantities.",
         ("Happy to help with quantities. How many guests?",)),
    ),
    short=("{V}, if everyone turns up", "{V}. Including the kids.", "{V}, maybe", "{V} of us"),
    ack=(
        ("{V}, totally doable. Want a menu that mostly cooks itself?", "Yes please.",
         "A slow-cooked stew or a big veggie lasagne, a couple of salads and a shop-bought "
         "dessert you dress up. Minimal stress."),
        "Okay, {v}. I'd go for one big dish rather than lots of small ones.",
        "{V}! Very manageable. Prep as much as you can the day before.",
    ),
    state=(
        ("Cooking for {v} people on Saturday. How much pasta do I need?",
         "A good rule is roughly a hundred grams of dried pasta per person for a main, a bit "
         "more if they're big eaters. With {v}, round up rather than down."),
    ),
    q=("How many people am I cooking for?", "How many guests are coming to my dinner?",
       "How many people did I say were coming to eat?"),
    qi=("how many people I'm cooking for", "how many guests are coming to my dinner"),
    ch_open=(
        ("Dinner numbers have changed. Again.", ("Ha, of course they have. How many now?",)),
        ("Update on the food situation, the guest list moved.", ("Okay! What's the number now?",)),
    ),
    ch_short=("{V} now, apparently.", "Now it's {v}. Don't ask."),
    ch_state=(
        ("It's {v} for dinner now, not {old}. Help.",
         "No problem, just scale the main dish and add an extra side. It'll be fine for {v}."),
    ),
    ch_ack=("{V}, okay, we can work with that.", "Right, {v}. Still very doable."),
)

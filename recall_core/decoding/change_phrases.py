"""Phrases by which a speaker says that something stated before changed: a plan moved or called
off, a fact of their life replaced ("I handed in my notice", "we're not going to Paris after all").

Why a list of its own: :data:`recall_core.decoding.supersede.CHANGE_WORDS` began as a dozen
words, and the hand-written evaluation family's stale answers showed updates said in words it
lacked. Widening it from those traces would have fitted the family, so this list was written
apart from every conversation in the project: a helper who read nothing of it listed, from
general English usage (British, American, Indian, Australian; casual and formal), the
high-precision phrases of change, each checked against an example sentence of its own. The
medium and ambiguous ones ("now", "actually", "new") stay in ``CHANGE_WORDS`` as they were.
A review then took out the phrases that say no change in notes that name a day or a time
(where the rule acts): "'s back on" ("Dad's back on the 17th"), "replacement" ("hip replacement
on the 14th"), "left the gym at 7:30", "we split" (a bill), "small change", a bare "ax".

Each entry is a regular expression over whole words, lower case, matched case-insensitively
with any run of spaces for a space (:data:`CHANGE_PHRASES`).
"""

from __future__ import annotations

import re

__all__ = ["CHANGE_PHRASES", "PHRASES"]

PHRASES: tuple[str, ...] = (
    # postponing / delaying
    r"reschedule", r"rescheduled", r"rescheduling", r"re-schedule", r"re-scheduled",
    r"postpone", r"postponed", r"postponing", r"postponement",
    r"pushed back", r"pushed (it|them|the \w+|my \w+|our \w+) back",
    r"pushed to", r"pushed (it|them|the \w+|my \w+|our \w+) to", r"pushed out to",
    r"put back (to|until|till|by|a|an)", r"put (it|them|the \w+|my \w+|our \w+) back (to|until|till|by|a|an)",
    r"put off (until|till|to)", r"put (it|them|the \w+|my \w+|our \w+) off (until|till|to)",
    r"delayed (to|until|till|by)", r"delay (it|them|the \w+) (to|until|till|by)",
    r"defer", r"deferred", r"deferring", r"deferral",
    r"adjourn", r"adjourned", r"adjourning", r"adjournment",
    r"slipped to", r"slipped (back|by)",
    r"until further notice",
    r"put on hold", r"put (it|them|the \w+|my \w+|our \w+|everything) on hold",
    r"shelve", r"shelved", r"shelving",
    r"on the back burner",
    # bringing forward
    r"brought forward", r"bring forward", r"bringing forward", r"brought (it|them|the \w+|my \w+|our \w+) forward",
    r"pulled forward", r"pulled (it|them|the \w+|my \w+) forward",
    r"moved up to", r"moved (it|them|the \w+|my \w+|our \w+) up",
    r"prepone", r"preponed", r"preponing", r"pre-poned",
    r"bumped up to", r"bumped to", r"bumped (it|them|the \w+|my \w+) (up|to|back)",
    # moving / changing a date, time, venue
    r"moved to", r"moved (it|them|the \w+|my \w+|our \w+) to",
    r"shifted to", r"shifted (it|them|the \w+|my \w+|our \w+) to",
    r"rebook", r"rebooked", r"rebooking", r"re-book", r"re-booked",
    r"rearrange", r"rearranged", r"rearranging", r"re-arrange", r"re-arranged",
    r"changed to", r"changed (it|them|the \w+|my \w+|our \w+) to", r"changing (it|the \w+) to",
    r"changed the (date|time|day|venue|location|booking|appointment|reservation|flight|slot|plan|plans)",

    r"(date|time|day|venue|location|plan|plans|schedule|timing|timings|appointment|meeting|booking) (has |have |got |was |were |is |are )?(been )?(changed|moved|shifted)",
    r"change of plan", r"change of plans", r"change in plan", r"change in plans", r"plans changed",
    r"plans have changed", r"plan has changed",
    r"change of (date|time|day|venue|location|schedule)",
    r"new (date|time|day|venue|location|slot|time slot)",
    r"(revised|updated|amended) (date|time|schedule|plan|plans|timings|itinerary)",
    r"than (originally )?(planned|scheduled|intended|booked)",
    r"originally (planned|scheduled|booked|set|supposed|meant|due|going)",
    r"cut short", r"cut (it|the \w+|our \w+|my \w+) short",
    r"new plan", r"the plan now is", r"plan b",
    r"(quick|slight|minor|last-minute|last minute) (update|change)",
    # cancelling / calling off / falling through
    r"cancel", r"cancels", r"cancelled", r"canceled", r"cancelling", r"canceling", r"cancellation",
    r"called off", r"call off", r"calling off", r"calls off", r"called (it|them|the \w+|our \w+|my \w+) off",
    r"scrap", r"scrapped", r"scrapping",
    r"nix", r"nixed",
    r"axed",
    r"ditch", r"ditched", r"ditching",
    r"fell through", r"falls through", r"falling through", r"fallen through",
    r"pulled the plug", r"pull the plug",
    r"off the table", r"off the cards",
    r"not happening (anymore|any more|now|after all)",
    r"not going ahead", r"no longer going ahead", r"won't (be )?go(ing)? ahead",
    r"rain check", r"raincheck", r"rain-check",
    r"something came up", r"something (has |'s )?come up", r"something's come up",
    r"can('t|not) make it (anymore|any more|after all|now)", r"won't be able to make it (anymore|after all)",
    r"back out", r"backed out", r"backing out", r"backs out",
    r"pulled out of", r"pulling out of", r"pull out of",
    r"bail on", r"bailed on", r"bailing on", r"bailed",
    r"flake", r"flaked", r"flaking", r"flaked on",
    r"opt out", r"opted out", r"opting out",
    r"withdraw from", r"withdrew from", r"withdrawn from", r"withdrawing from",
    r"drop out", r"dropped out", r"dropping out", r"drops out",
    r"stood (me|us|him|her|them) up",
    r"decided against", r"deciding against", r"decided not to", r"decided to not",
    # reversals / changing one's mind / "after all"
    r"changed (my|our|his|her|their) (mind|minds)", r"change my mind", r"changing my mind",
    r"change of heart",
    r"on second thought", r"on second thoughts", r"second thoughts",
    r"thought better of it",
    r"cold feet",
    r"talked (me|us|him|her|them) out of",
    r"reconsider", r"reconsidered", r"reconsidering",
    r"reversed (my|our|the|his|her|their) decision", r"went back on", r"gone back on", r"going back on",
    r"u-turn", r"u-turned", r"u-turning", r"backtrack", r"backtracked", r"backtracking",
    r"(not|never|\w+n't) (\w+ )?(\w+ )?(\w+ )?after all",
    r"(going|coming|happening|staying|joining|doing it|going ahead|on) after all",
    r"decided to (\w+ )?(\w+ )?after all",
    r"back on again",
    r"uncancelled", r"un-cancelled", r"reinstated", r"reinstate",
    r"switched back", r"changed back", r"reverted", r"reverting", r"reverted back",
    # corrections of what was said earlier
    r"correction",
    r"scratch that", r"strike that",
    r"i meant to say", r"sorry,? i meant", r"what i meant was",
    r"i misspoke", r"misspoke",
    r"ignore what i said", r"forget what i said",
    r"disregard (that|what i said|my last message|my previous message|my earlier message)",
    r"ignore my (last|previous|earlier) message",
    # replacement / negated continuation
    r"instead", r"instead of",
    r"in place of", r"in lieu of",
    r"no longer",
    r"anymore",
    # life facts: jobs
    r"quit", r"quits", r"quitting",
    r"resign", r"resigned", r"resigning", r"resignation",
    r"handed in my notice", r"hand in my notice", r"handing in my notice", r"handed in my resignation",
    r"put in my notice", r"gave (my )?notice", r"serving (my )?notice( period)?", r"served (my )?notice",

    r"left (my|our) (job|company|firm|role|position|post|band|course)",
    r"lost (my|his|her|their|our) (job|jobs)",
    r"laid off", r"been laid off",
    r"made redundant",
    r"got fired", r"been fired", r"was fired", r"got sacked", r"been sacked", r"was sacked", r"got the sack",
    r"got let go", r"been let go", r"was let go",
    r"retired", r"retiring", r"took early retirement", r"taken early retirement",

    r"changed (jobs|careers|schools|courses|majors|teams|gyms|banks|doctors|dentists|providers|networks|phones|cars|houses)",

    r"changed my (number|name|surname|address|email|diet|routine|plans|job|career|major|course|doctor|dentist|bank|provider|phone|car|gym)",
    r"career change", r"career switch", r"changing careers", r"switched careers",
    r"got a new (job|role|position|car|flat|house|place|phone|bike|partner|boyfriend|girlfriend|boss|doctor|number)",
    r"started a new (job|role|position)",
    r"transferred to", r"got transferred", r"been transferred", r"got posted to", r"been posted to",
    # life facts: switching, replacing, selling, upgrading
    r"switched to", r"switched from", r"switched over", r"switching to", r"switching from",
    r"switched (jobs|careers|teams|banks|providers|sides|schools|gyms|phones)",
    r"swap", r"swapped", r"swapping", r"swapped out", r"swapped (it|them|my \w+|the \w+) for",
    r"traded in", r"trade in", r"trading in", r"traded (it|my \w+|the \w+) (in )?for", r"part-exchanged",
    r"part exchanged",
    r"sold (my|our|the|it|them|that|his|her)", r"selling (my|our)",
    r"sold up", r"selling up",
    r"got rid of", r"getting rid of", r"get rid of",
    r"upgraded", r"upgrading", r"upgraded to", r"upgrading to",
    r"downgraded", r"downgrading", r"downsized", r"downsizing",
    # life facts: hobbies, habits, diet
    r"gave up", r"given up", r"giving up",
    r"stopped \w+ing", r"stopping \w+ing",
    r"kicked the habit", r"cold turkey",
    r"lost interest in", r"losing interest in", r"fell out of love with",
    r"weaned (myself |me )?off",

    r"(went|gone|going|turned|become|became) (vegan|vegetarian|veggie|pescatarian|keto|paleo|gluten-free|gluten free|dairy-free|dairy free|plant-based|plant based|teetotal|tee-total|sober|carnivore)",
    # life facts: home, moving
    r"moved house", r"moved home", r"moved homes", r"moved flat", r"moved flats", r"moved apartments",
    r"moved apartment", r"shifted house", r"shifted home", r"moving house",
    r"moved out", r"moving out", r"moves out", r"moved away", r"moving away",
    r"moved back (to|home|in)",
    r"moved in with", r"moving in with", r"moved in together",
    r"relocate", r"relocated", r"relocating", r"relocation",
    r"emigrate", r"emigrated", r"emigrating", r"immigrated", r"migrated to",
    r"new address",
    # life facts: relationships
    r"broke up", r"broken up", r"breaking up", r"break up with",
    r"split up", r"split from", r"splitting up", r"we've split up",
    r"separated", r"separating",
    r"divorced", r"divorcing", r"got divorced", r"getting divorced",
    r"broke off (the|our|my) engagement", r"ended (it|things|the relationship|our relationship|my marriage)",
    r"left (my )?(husband|wife|partner|boyfriend|girlfriend|fiance|fiancé|fiancee)",
    r"remarried", r"remarrying",)

#: Any of :data:`PHRASES` as whole words; curly apostrophes are read as straight ones by the caller.
_SPACE = r"\s+"
CHANGE_PHRASES = re.compile(r"\b(?:" + "|".join("(?:" + p.replace(" ", _SPACE) + ")" for p in PHRASES) + r")\b", re.IGNORECASE)

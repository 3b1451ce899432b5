"""Changing facts about home, work and love: the city, the job, the partner, the team project and
the rent.
"""

from __future__ import annotations

_K: dict[str, dict] = {}  # this module's kinds, by key, in the order written

_K["home"] = {
    "pool": "city",
    "events": ("switch", "plan", "done", "cancel", "revert"),
    "init": [
        ("Writing this from my sofa in {v} while it absolutely chucks it down outside.",
         ("Proper sofa weather in {v}, then! Got a good film lined up, or is it a nap kind of afternoon?",
          "Rainy afternoons in {v} are made for blankets and tea. Anything I can help you fill the time with?")),
        ("Our flat in {v} is tiny, but there's a bakery right underneath it so I'm not complaining.",
         ("A bakery under your flat in {v}? Dangerous, in the best way. What do you always end up buying there?",)),
        ("The wind in {v} today, honestly. My umbrella turned inside out before I'd even reached the bus stop.",
         ("Ha, a classic {v} umbrella casualty! A compact windproof one with a vented canopy is worth paying a bit more for.",)),
        ("fyi I'm based in {v}, in case any of my questions end up weirdly local",
         ("Good to know, {v} it is. Ask away, local or not!",)),
    ],
    "plan": [
        ("We've put an offer in on a place in {new}. If it goes through we'd be leaving {cur} in a couple of months.",
         ("Fingers crossed for the {new} offer! Leaving {cur} would be a big change. What's pulling you towards {new}?",)),
        ("Okay, don't laugh, but I'm seriously thinking about moving to {new}. I've been scrolling flat listings there every night.",
         ("No laughing here, {new} could be a real adventure. Is it work pulling you there, or more of a fresh-start thing?",)),
        ("Work offered me a transfer to their {new} office and I'm leaning towards yes.",
         ("A transfer to {new}, exciting! Do check whether they'll cover relocation costs before you commit.",)),
    ],
    "done": [
        ("Update: we got the keys! Officially living in {new} now, surrounded by boxes.",
         ("Congratulations on the keys! Welcome to {new}. Which box gets unpacked first, the kettle?",)),
        ("The move actually happened, I'm in {new}. {cur} already feels like a lifetime ago.",
         ("You did it! Settling into {new} takes a while, so go easy on yourself. Found a favourite local spot yet?",)),
        ("Made it to {new} in one piece. The van broke down halfway, but we got there.",
         ("Oh no, the van! Still, you're in {new} now, which is what counts. Have a proper rest tonight.",)),
    ],
    "cancel": [
        ("The move to {new} fell through at the last minute. So we're staying put in {cur}, for now anyway.",
         ("Ugh, I'm sorry the {new} move fell through, that's so deflating. At least {cur} is familiar. Will you keep looking?",)),
        ("Scrapped the whole {new} plan. Ran the numbers and staying in {cur} just makes more sense.",
         ("Sensible call, even if it stings a bit. Anything you'd like to change about your place in {cur} now that you're staying?",)),
        ("Well, {new} isn't happening. Long story, but I'm staying in {cur}.",
         ("Sorry it didn't work out with {new}. Staying in {cur} has its upsides though. Want to talk through the long story?",)),
    ],
    "switch": [
        ("Bit of news: I moved to {new} a couple of weeks ago. Left {cur} on pretty short notice.",
         ("That's big news! Short-notice moves are exhausting. How are you finding {new} so far?",)),
        ("New address alert, I'm in {new} now. The flat-share in {cur} was driving me up the wall.",
         ("A fresh start in {new}, then! Hope the new place is calmer than that flat-share.",)),
        ("I packed up and left {cur}. Renting a little place in {new} now.",
         ("Wow, that's a big step. How's the little place in {new} treating you?",)),
    ],
    "revert": [
        ("Plot twist: I've moved back to {new}. {cur} just never felt like home.",
         ("Sometimes you have to leave to know where home is. Welcome back to {new}!",)),
        ("I'm back in {new}! Turns out I missed it way more than I expected while I was in {cur}.",
         ("Back in {new}, how lovely. What did you miss most while you were away?",)),
    ],
    "ask": [
        "Where am I living these days?",
        "Remind me which city I'm in now?",
        "Do you remember where I ended up living?",
        "Which city do I currently live in?",
        "What city should you assume I'm in when I ask for local recommendations?",
    ],
}

_K["job"] = {
    "pool": "job",
    "events": ("switch", "plan", "done", "cancel", "revert"),
    "init": [
        ("Long shift today. That's the glamorous life of {an:v}, I suppose.",
         ("Sounds draining. Being {an:v} takes a lot out of you, so make sure you eat something proper tonight.",)),
        ("I've been {an:v} for about six years now and Sunday evenings still fill me with dread.",
         ("Six years as {an:v} and still the Sunday dread, that's more common than you'd think. Anything specific looming this week?",)),
        ("Work was chaos. Anyone who says being {an:v} is a calm job has never done it.",
         ("Ha, I'll take your word for it! What made today so chaotic?",)),
    ],
    "plan": [
        ("I've got a second interview for {an:new} role on Thursday and I'm kind of terrified.",
         ("A second interview, well done! Want to run through some likely questions for the {new} role?",)),
        ("Thinking about retraining as {an:new}. Being {an:cur} is wearing me down.",
         ("Retraining as {an:new} is a big step, and it sounds like being {an:cur} is taking its toll. Have you looked into what the training involves?",)),
        ("There's an opening for {an:new} on another team and my manager reckons I should go for it.",
         ("If your manager's backing you, that's a great sign! What appeals to you about being {an:new}?",)),
    ],
    "done": [
        ("I got it!! Starting as {an:new} on Monday, still can't quite believe it.",
         ("Congratulations, that's brilliant news! The first weeks as {an:new} can be a whirlwind, so be kind to yourself.",)),
        ("It's official, I'm {an:new} now. Handed in my notice as {an:cur} last week.",
         ("Huge congratulations! Leaving life as {an:cur} behind must feel strange. How's the new role?",)),
        ("First full week as {an:new} done. My brain is full but I love it.",
         ("A full brain is a good sign in a new job! Glad you're loving being {an:new}.",)),
    ],
    "cancel": [
        ("Didn't get the {new} job. So I'm still {an:cur}, still grumbling about it.",
         ("Sorry about the {new} job, that's really disappointing. Did they give you any feedback you could use next time?",)),
        ("Decided against the {new} thing in the end. I'm staying {an:cur}, the pay cut would've hurt too much.",
         ("That's a very reasonable call. Staying {an:cur} gives you time to plan the next move properly.",)),
        ("They gave the {new} job to an internal candidate. So it's business as usual being {an:cur}.",
         ("That's frustrating, especially after all the prep. Being {an:cur} a bit longer isn't the end of the road, though.",)),
    ],
    "switch": [
        ("Huge news: I quit being {an:cur}! I'm working as {an:new} now.",
         ("Wow, that's a big leap! How are you finding life as {an:new} so far?",)),
        ("Career change happened faster than I expected. I'm {an:new} now, never thought I'd stop being {an:cur}.",
         ("Life moves fast sometimes! What's been the biggest surprise about being {an:new}?",)),
        ("So I'm {an:new} now. Long story, involves a very persuasive old boss.",
         ("I'd love to hear the long story! Congratulations on becoming {an:new}.",)),
    ],
    "revert": [
        ("I've gone back to being {an:new}. The {cur} stint taught me a lot, but it wasn't me.",
         ("It takes guts to admit something isn't right and go back. Welcome back to life as {an:new}!",)),
        ("Guess who's {an:new} again? My old place took me back after the {cur} experiment.",
         ("That's great they took you back! Sounds like being {an:new} is where you fit.",)),
    ],
    "ask": [
        "What do I do for work now?",
        "Remind me what my job is?",
        "What's my job at the moment?",
        "Do you remember what I do for a living?",
        "What would you put down as my occupation?",
    ],
}

_K["partner"] = {
    "pool": "partner",
    "events": ("switch", "revert"),
    "init": [
        ("My {term} {v} and I are doing a pottery class tonight. Wish us luck.",
         ("A pottery class with {v} sounds like a lovely date night. Don't judge your first bowl too harshly!",)),
        ("Two years with {v} this week! My {term}, I mean, not a coworker lol.",
         ("Ha, got it! Two years with {v}, congratulations. Are you doing anything to celebrate?",)),
        ("My {term}, {v}, thinks I'm overthinking this, so I'm asking you instead.",
         ("A second opinion, then! {v} might have a point, but tell me what's going on and we'll figure it out.",)),
    ],
    "switch": [
        ("So, {cur} and I split up a while ago. I've been seeing someone new, {new}, and it's going really well.",
         ("Breakups are hard even when they're the right call. I'm really glad things with {new} are going well.",)),
        ("Life update: not with {cur} anymore. My {term} now is {new}, we met at a friend's barbecue.",
         ("A barbecue meet-cute, love that! How are things going with {new}?",)),
        ("I've started seeing {new}! After {cur} I honestly didn't think I'd be ready this soon.",
         ("That's lovely news. Sounds like {new} came along at the right time.",)),
    ],
    "revert": [
        ("Okay, don't judge: {new} and I are back together. It never really felt right with {cur}.",
         ("No judgement at all! Sounds like you know what you want. How are things with {new} this time round?",)),
        ("So {new} and I got back together. Yes, again. Things with {cur} fizzled out pretty fast.",
         ("Second chances can work out really well. I hope things with {new} feel easier this time.",)),
    ],
    "ask": [
        "Who am I dating at the moment?",
        "Remind me what my {term} is called?",
        "What's my {term}'s name these days?",
        "Do you remember the name of the person I'm seeing?",
        "Who's my other half right now?",
    ],
}

_K["project"] = {
    "pool": "project",
    "events": ("switch", "plan", "done", "cancel", "revert"),
    "init": [
        ("We're heads-down on {v} at work and it's eating my whole week.",
         ("Sounds intense! Is {v} up against a deadline, or is this the new normal?",)),
        ("My team's on {v} right now, which is basically rebuilding the booking system from scratch.",
         ("Rebuilding from scratch is a big job! How's {v} going so far?",)),
        ("Planning meeting for {v} ran two hours over. Two. Hours.",
         ("Two hours over is brutal. For the next {v} meeting, maybe suggest a hard stop and a written agenda?",)),
    ],
    "plan": [
        ("Rumour is they're moving us off {cur} and onto {new} next quarter.",
         ("Rumours are rumours until they're official, but {new} sounds like a big shift. How do you feel about leaving {cur}?",)),
        ("My manager hinted we might get pulled onto {new} soon.",
         ("Interesting! Do you know much about what {new} involves yet?",)),
    ],
    "done": [
        ("It's official, the team's been moved to {new}. Goodbye {cur}!",
         ("A fresh start on {new}! Any handover notes from {cur} worth keeping?",)),
        ("First standup on {new} today. New codebase, new acronyms, new everything.",
         ("New acronyms are the worst part! Maybe keep a little glossary for {new} as you go.",)),
    ],
    "cancel": [
        ("{new} got shelved, so we're staying on {cur} for the foreseeable.",
         ("Shelved projects are frustrating. At least {cur} is familiar territory.",)),
        ("Leadership killed the {new} idea. We're still on {cur}.",
         ("That's a shame after all the talk about {new}. Still, continuity on {cur} isn't the worst thing.",)),
    ],
    "switch": [
        ("{cur} shipped last week! Now we're on something called {new}.",
         ("Congrats on shipping {cur}! What's {new} all about?",)),
        ("They reshuffled the teams and I'm on {new} now instead of {cur}.",
         ("Reshuffles can be a nice reset. How's {new} looking?",)),
    ],
    "revert": [
        ("They've pulled us back onto {new}. Apparently {cur} wasn't a priority after all.",
         ("Back to {new}, then! At least you know that codebase already.",)),
    ],
    "ask": [
        "What's my team working on right now?",
        "Which project is my team on these days?",
        "Remind me what project we're doing at work?",
        "What's the name of the project I'm on?",
    ],
}

_K["rent"] = {
    "pool": "rent",
    "events": ("switch", "plan", "done", "cancel"),
    "init": [
        ("Rent here is {v} a month, which is apparently 'reasonable' now.",
         ("{v} a month is a big chunk of anyone's pay. Want help putting together a simple budget around it?",)),
        ("After paying {v} in rent there isn't much left for fun, so cheap date ideas welcome.",
         ("Totally get it, {v} doesn't leave much wiggle room. Picnics, free gallery evenings and cooking something ambitious together are all cheap and fun.",)),
    ],
    "plan": [
        ("The letting agent says the rent might go up to {new} at renewal. It's {cur} now.",
         ("Going from {cur} to {new} would sting. It's worth asking them to justify the increase, or offering a longer lease for a smaller rise.",)),
        ("Landlord's 'reviewing' the rent. Could be {new} soon, apparently.",
         ("'Reviewing' is never a fun word. Check your tenancy agreement for how much notice they have to give before anything like {new} kicks in.",)),
    ],
    "done": [
        ("Yep, the rent's {new} now. Cool cool cool.",
         ("Ouch, {new} is a lot. Want a hand re-jigging your budget?",)),
        ("The increase went through, {new} a month from now on.",
         ("Sorry, that's a pain. We could look for a few easy savings elsewhere to absorb the {new} if you like.",)),
    ],
    "cancel": [
        ("Rent's staying at {cur}! We pushed back on the jump to {new} and they backed down.",
         ("Brilliant, well done for pushing back! Keeping it at {cur} is a real win.",)),
        ("Good news, the landlord dropped the {new} idea. Still {cur}.",
         ("That's a relief! Staying at {cur} gives you a bit of breathing room.",)),
    ],
    "switch": [
        ("Landlord bumped the rent to {new}, up from {cur}, with a month's notice.",
         ("A month's notice is stingy! Going up to {new} is a lot, so it might be worth checking the local rules on rent increases.",)),
        ("Renewed the lease and we're paying {new} now instead of {cur}. Could've been worse.",
         ("Glad it could've been worse! Want to rework the budget around {new}?",)),
    ],
    "ask": [
        "How much is my rent now?",
        "What am I paying in rent these days?",
        "Remind me what my monthly rent is?",
        "How much do I pay for rent each month?",
    ],
}

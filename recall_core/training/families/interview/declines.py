"""Questions the user declines to answer ("I'd rather not say"): the scripts that ask them and the
later questions about them, which have no answer.
"""

from __future__ import annotations

# -- declined questions ---------------------------------------------------------------------------

DECLINES: dict[str, dict] = {
    "age": dict(
        scripts=(
            ("I want to get back into running but I'm worried I've left it too late.",
             "It's rarely too late! Do you mind me asking how old you are? It helps me pitch the "
             "plan.",
             "The trick at any age is starting gently: run-walk intervals a few times a week, "
             "building up slowly."),
            ("Thinking about a fitness plan, nothing too intense.",
             "Sure. Roughly what age bracket are you in, if you don't mind sharing?",
             "A gentle start works for everyone: brisk walks most days, short jogging bursts, and "
             "proper rest when you need it."),
        ),
        declines=("Rather not say, if that's alright. Let's just say not a spring chicken.",
                  "I'd prefer to keep that to myself, ha.", "Pass! Just give me something gentle."),
        q=("How old am I?", "What age am I?"),
        qi=("how old I am", "what age I am"),
    ),
    "salary": dict(
        scripts=(
            ("Can you help me put together a monthly budget? Things are tight.",
             "Happy to help. Roughly what's your take-home pay, if you're comfortable sharing?",
             "A common starting point: about half for needs, under a third for wants, and the "
             "rest towards savings or debt. Adjust it to suit you."),
            ("I want to start saving properly but I never know how much to put away.",
             "Sure! What do you earn a month, roughly? Only if you're happy to say.",
             "Then try paying yourself first: move a fixed amount into savings on payday, even a "
             "small one, and build it up when you can."),
        ),
        declines=("I'd honestly rather not put numbers in here. Can you keep it general?",
                  "Not comfortable sharing that, sorry.", "Let's leave my salary out of it, ha."),
        q=("How much do I earn?", "What's my salary?", "What's my take-home pay?"),
        qi=("how much I earn", "what my salary is"),
    ),
    "rent": dict(
        scripts=(
            ("Trying to decide whether to renew my lease or look elsewhere.",
             "That's worth weighing up. How much are you paying at the moment?",
             "Compare a few similar listings nearby, factor in moving costs, and remember you can "
             "often negotiate; landlords like reliable tenants."),
            ("My landlord wants to put the rent up and I'm annoyed.",
             "Ugh. What's the rent now, if you don't mind me asking?",
             "Check your tenancy agreement for how increases are allowed, and it's fine to ask "
             "politely whether there's any flexibility."),
        ),
        declines=("I'll keep that to myself, if that's okay.",
                  "Rather not say, it's a bit embarrassing honestly."),
        q=("How much rent do I pay?", "What's my rent?"),
        qi=("how much my rent is", "what I pay in rent"),
    ),
    "surname": dict(
        scripts=(
            ("Can you help me write a short email to my landlord about a broken boiler?",
             "Of course. How should I sign it off, what's your full name?",
             "Here's a draft: 'Hello, the boiler has stopped working and we have no hot water. "
             "Could you arrange a repair as soon as possible? Many thanks, [Name]'"),
            ("Need a formal letter to the council about missed bin collections.",
             "Sure! What surname should I put at the bottom?",
             "Draft: 'Dear Sir or Madam, our bins have been missed repeatedly this month. Please "
             "could you look into this? Yours faithfully, [Name]'"),
        ),
        declines=("Just leave a blank, I'd rather not type my full name in here.",
                  "Leave it as [Name], I'll fill it in myself."),
        q=("What's my surname?", "What's my last name?"),
        qi=("what my surname is", "what my last name is"),
    ),
    "employer": dict(
        scripts=(
            ("Work's been a nightmare this month, lots of restructuring.",
             "That sounds stressful. Which company are you with, if you don't mind me asking?",
             "Restructures are unsettling wherever you are. Keep a note of your achievements and "
             "don't be shy about asking HR direct questions."),
            ("Got a job interview internally next week!",
             "Oh, well done! Which company is it, out of interest?",
             "For an internal interview, lean on what you already know about the team's problems "
             "and show how you'd help solve them."),
        ),
        declines=("I'd rather not say, it's a small industry.", "Prefer not to name them, sorry!",
                  "Ha, I'll keep that quiet if you don't mind."),
        q=("Which company do I work for?", "Who's my employer?"),
        qi=("which company I work for", "who my employer is"),
    ),
    "university": dict(
        scripts=(
            ("Got invited to a uni reunion and I'm not sure I want to go.",
             "Reunions can be a mixed bag! Which university was it?",
             "If you're on the fence, go for an hour and leave if it's not fun. Low commitment, "
             "and you might be pleasantly surprised."),
            ("Should I put my degree at the top of my CV or my experience?",
             "Depends a little. Where did you study?",
             "Generally, once you've a few years of work behind you, experience goes first and "
             "education moves to the bottom."),
        ),
        declines=("I'd rather not say, if that's okay.", "Eh, I'll skip that one."),
        q=("Which university did I go to?", "Where did I study?"),
        qi=("which university I went to", "where I studied"),
    ),
    "weight": dict(
        scripts=(
            ("I've been trying to eat a bit better lately.",
             "Good for you! Would you mind sharing your height and weight? I can suggest "
             "portion sizes.",
             "A simple rule of thumb: half the plate veg, a quarter protein, a quarter carbs, and "
             "drink water before reaching for snacks."),
        ),
        declines=("Nah, I'd prefer not to share that.", "I'd rather not, if that's alright."),
        q=("How much do I weigh?", "What's my weight?"),
        qi=("how much I weigh", "what my weight is"),
    ),
}
DECLINE_KEYS = tuple(DECLINES)
_DECLINE_PREFIX = ("No problem at all.", "Fair enough!", "Totally fine.", "That's absolutely okay.")

"""Unanswerable questions: plausible details the user never gave, often next to a distractor
(the neighbour's cat was named; the user's cat never was).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from recall_core.training.families.passing.common import Ctx, _article
from recall_core.training.families.passing.pools import (
    AIRLINES,
    BLOOD_TYPES,
    CARS,
    CITIES,
    COLOURS,
    FILMS,
    JOBS,
    OLD_MALE,
    PET_NAMES,
    RENTS,
    SCHOOLS,
    UNIVERSITIES,
)

# -- unanswerable questions -------------------------------------------------------------------------
# Each: key, needs (a kind the user has, or None), make(ctx, chosen) -> slots with "fact",
# question templates, and optional distractor turns (user template, assistant template) that
# mention the same kind of detail about someone else.


@dataclass
class Unans:
    key: str
    needs: str | None
    make: Callable[[Ctx, dict], dict]
    q: list[str]
    c: list[str]
    n: list[str] = field(default_factory=list)
    distract: list = field(default_factory=list)
    dmake: Callable[[Ctx, dict], dict] | None = None


def _u_other_pet(ctx: Ctx, ch: dict) -> dict:
    have = ch["pet"]["species"]
    osp = ctx.rng.choice([s for s in ("dog", "cat", "rabbit") if s != have])
    return {"osp": osp, "fact": f"{osp}_name"}


def _d_other_pet(ctx: Ctx, s: dict) -> dict:
    return {"osp": s["osp"], "dpet": ctx.reg.pick(ctx.rng, PET_NAMES)}


def _u_pet_age(ctx: Ctx, ch: dict) -> dict:
    return {"pet": ch["pet"]["pet"], "fact": f"{ch['pet']['species']}_age"}


def _u_other_sib(ctx: Ctx, ch: dict) -> dict:
    orel = "brother" if ch["sibling"]["rel"] == "sister" else "sister"
    return {"orel": orel, "fact": f"{orel}_name"}


def _d_other_sib(ctx: Ctx, s: dict) -> dict:
    return {"orel": s["orel"], "dname": ctx.name("f"),
            "dsib": ctx.name("m" if s["orel"] == "brother" else "f")}


def _u_sib_city(ctx: Ctx, ch: dict) -> dict:
    return {"rel": ch["sibling"]["rel"], "fact": f"{ch['sibling']['rel']}_city"}


def _d_sib_city(ctx: Ctx, s: dict) -> dict:
    return {"rel": s["rel"], "dname": ctx.anyone()[0], "dcity": ctx.reg.pick(ctx.rng, CITIES)}


def _u_partner_job(ctx: Ctx, ch: dict) -> dict:
    return {"role": ch["partner"]["role"], "fact": f"{ch['partner']['role']}_job"}


def _d_partner_job(ctx: Ctx, s: dict) -> dict:
    dj = ctx.reg.pick(ctx.rng, JOBS)[0]
    return {"dname": ctx.name("f"), "djob": dj, "_da": _article(dj)}


def _u_anniv(ctx: Ctx, ch: dict) -> dict:
    return {"role": ch["partner"]["role"], "fact": "anniversary"}


def _d_anniv(ctx: Ctx, s: dict) -> dict:
    said, _ = ctx.date()
    return {"ddate": said}


def _u_partner_bday(ctx: Ctx, ch: dict) -> dict:
    return {"role": ch["partner"]["role"], "fact": f"{ch['partner']['role']}_birthday"}


def _u_school(ctx: Ctx, ch: dict) -> dict:
    return {"kid": ch["child"]["kid"], "fact": f"{ch['child']['crel']}_school"}


def _d_school(ctx: Ctx, s: dict) -> dict:
    return {"dname": ctx.name("f"), "dschool": ctx.reg.pick(ctx.rng, SCHOOLS)}


def _u_fixed(fact: str) -> Callable[[Ctx, dict], dict]:
    return lambda ctx, ch: {"fact": fact}


def _d_boss(ctx: Ctx, s: dict) -> dict:
    return {"dname": ctx.name("f"), "dboss": ctx.name("m")}


def _d_car_colour(ctx: Ctx, s: dict) -> dict:
    return {"dcar": ctx.reg.pick(ctx.rng, CARS)[0], "dcolour": ctx.rng.choice(COLOURS)}


def _u_teacher(ctx: Ctx, ch: dict) -> dict:
    return {"inst": ch["instrument"]["inst"], "fact": "music_teacher_name"}


def _d_teacher(ctx: Ctx, s: dict) -> dict:
    return {"dteacher": ctx.name("f")}


def _d_physio(ctx: Ctx, s: dict) -> dict:
    return {"dphysio": ctx.name("f")}


def _d_uni(ctx: Ctx, s: dict) -> dict:
    return {"duni": ctx.reg.pick(ctx.rng, UNIVERSITIES)}


def _d_airline(ctx: Ctx, s: dict) -> dict:
    return {"dairline": ctx.reg.pick(ctx.rng, AIRLINES)}


def _d_grandad(ctx: Ctx, s: dict) -> dict:
    return {"dname": ctx.anyone()[0], "dgrand": ctx.reg.pick(ctx.rng, OLD_MALE)}


def _d_rent(ctx: Ctx, s: dict) -> dict:
    return {"dname": ctx.anyone()[0], "drent": ctx.reg.pick(ctx.rng, RENTS)}


def _u_bf_job(ctx: Ctx, ch: dict) -> dict:
    return {"bf": ch["best_friend"]["bf"], "fact": "best_friend_job"}


def _u_lang_time(ctx: Ctx, ch: dict) -> dict:
    return {"lang": ch["language"]["lang"], "fact": "language_duration"}


def _d_blood(ctx: Ctx, s: dict) -> dict:
    return {"dbtype": ctx.rng.choice(BLOOD_TYPES)}


def _d_film(ctx: Ctx, s: dict) -> dict:
    return {"dfilm": ctx.reg.pick(ctx.rng, FILMS)}


UNANS = [
    Unans("other_pet", "pet", _u_other_pet,
          q=["What's my {osp} called, do you know?", "What's the name of my {osp}?"],
          c=["what my {osp} is called"], n=["my {osp}'s name"],
          distract=[("Slightly chaotic morning. My neighbour's {osp}, {dpet}, wandered in through the back "
                     "door and made itself very at home on our sofa until she came round to collect it, "
                     "looking mortified. Anyway, totally unrelated: how long do I boil an egg for a "
                     "properly jammy yolk?",
                     "Ha, {dpet} clearly has good taste in sofas. For a jammy yolk, lower a fridge-cold egg "
                     "into already boiling water for six and a half minutes, then straight into cold water "
                     "for a couple of minutes before peeling.")],
          dmake=_d_other_pet),
    Unans("pet_age", "pet", _u_pet_age,
          q=["How old is {pet} now?", "How old is {pet}?"], c=["how old {pet} is"], n=["{pet}'s age"]),
    Unans("other_sibling", "sibling", _u_other_sib,
          q=["What's my {orel} called, do you know?", "What did I say my {orel}'s name was?"],
          c=["what my {orel}'s name is"], n=["my {orel}'s name"],
          distract=[("My coworker {dname} spent the whole lunch break moaning about her {orel}, {dsib}, who "
                     "borrowed her car and returned it with an empty tank and a parking ticket. Made me "
                     "think: is there a nice way to set boundaries with family about lending stuff?",
                     "There is: be clear up front rather than resentful afterwards. Something like \"Happy "
                     "to lend it, I just need it back with a full tank by Sunday\" sets the expectation "
                     "without any drama. If it goes wrong, say so calmly and specifically the first time.")],
          dmake=_d_other_sib),
    Unans("sibling_city", "sibling", _u_sib_city,
          q=["Where's my {rel} living?", "Which city is my {rel} based in?"],
          c=["where my {rel} lives these days"], n=[],
          distract=[("My friend {dname}'s {rel} just moved to {dcity} for work and apparently can't find a "
                     "decent flat anywhere. Out of interest, what should you look out for when viewing a "
                     "rental in a hurry?",
                     "Check water pressure and the hot water, look for damp or mould (behind furniture and "
                     "in corners), test the windows and locks, ask about bills and the deposit scheme, and "
                     "take photos of everything. And read the whole contract before signing, however rushed "
                     "it feels.")],
          dmake=_d_sib_city),
    Unans("partner_job", "partner", _u_partner_job,
          q=["What kind of work does my {role} do?", "What job does my {role} have?"],
          c=["what my {role} does for a living"], n=["my {role}'s job"],
          distract=[("My friend {dname}'s husband has just retrained as {_da} {djob} in his fifties, which I "
                     "think is brilliant. Is it actually realistic to change careers that late, in your "
                     "experience? Asking out of general curiosity.",
                     "Very realistic, and increasingly common. People who switch later tend to bring "
                     "transferable skills, reliability and life experience that employers value. The main "
                     "hurdles are usually money during retraining and confidence, not age itself.")],
          dmake=_d_partner_job),
    Unans("anniversary", "partner", _u_anniv,
          q=["When's our anniversary?", "What date is my anniversary with my {role}?"],
          c=["when our anniversary is"], n=["our anniversary date"],
          distract=[("My parents' wedding anniversary is {ddate} and I've somehow been put in charge of "
                     "organising a family meal. What's a good way to make it feel special without it "
                     "turning into a whole production?",
                     "Keep it simple but personal: book somewhere they love, and bring a few old photos or "
                     "ask everyone to share a favourite memory of them over dessert. A short toast goes a "
                     "long way. That's plenty.")],
          dmake=_d_anniv),
    Unans("partner_birthday", "partner", _u_partner_bday,
          q=["When is my {role}'s birthday, do you know?"], c=["when my {role}'s birthday is"], n=["my {role}'s birthday"]),
    Unans("child_school", "child", _u_school,
          q=["What's the name of {kid}'s school?", "Which school does {kid} go to?"],
          c=["which school {kid} goes to"], n=["the name of {kid}'s school"],
          distract=[("My friend {dname}'s little boy has just started at {dschool} and she says the "
                     "uniform list is longer than her arm. What's a sensible way to label a mountain of "
                     "school clothes quickly?",
                     "Iron-on or stick-on name labels are the fastest; a laundry marker on the care label is "
                     "the cheapest. Do it all in one sitting with a film on, and label shoes and water "
                     "bottles too, since those are what go missing most.")],
          dmake=_d_school),
    Unans("manager", "work", _u_fixed("manager_name"),
          q=["What's the name of my manager?", "Who's my boss at work?"],
          c=["what my manager is called"], n=["my boss's name"],
          distract=[("My friend {dname} has the most micromanaging boss in history, a man called {dboss} who "
                     "wants updates on everything twice a day. How would you suggest handling someone like "
                     "that without making it worse?",
                     "Get ahead of him: offer a short written update at a fixed time each day, so the "
                     "check-ins become predictable. Ask directly what he needs to feel confident. Often "
                     "micromanagement eases once someone feels informed.")],
          dmake=_d_boss),
    Unans("car_colour", "car", _u_fixed("car_colour"),
          q=["What colour is my car?"], c=["what colour my car is"], n=["the colour of my car"],
          distract=[("Our neighbour has just had his {dcar} resprayed {dcolour}, and honestly the whole "
                     "street is talking about it. Does changing a car's colour affect insurance, out of "
                     "interest?",
                     "It can: a colour change is usually something you're supposed to tell your insurer "
                     "about, and the registration details should be updated too. It rarely changes the "
                     "premium much, but not declaring it could cause problems with a claim.")],
          dmake=_d_car_colour),
    Unans("music_teacher", "instrument", _u_teacher,
          q=["What's my {inst} teacher called?", "Who teaches me the {inst}?"],
          c=["who my {inst} teacher is"], n=["my {inst} teacher's name"],
          distract=[("A friend's daughter has a piano teacher called {dteacher} who apparently makes every "
                     "pupil clap rhythms for the first ten minutes. Is that actually a good way to learn?",
                     "It's a well-regarded technique: clapping and counting rhythms separately from the "
                     "notes builds a solid sense of timing, which is often the weakest area for beginners. "
                     "Ten minutes is a reasonable warm-up.")],
          dmake=_d_teacher),
    Unans("physio", "injury", _u_fixed("physio_name"),
          q=["What's my physio called?", "Who's my physiotherapist?"],
          c=["what my physio's name is"], n=["my physio's name"],
          distract=[("My mum's physio, a very stern woman called {dphysio}, has banned her from gardening for "
                     "a month and she's furious about it. Any ideas for keeping a restless retiree "
                     "entertained indoors?",
                     "Jigsaws, audiobooks, seed catalogues and planning next year's garden (which keeps the "
                     "hobby alive without the digging), a puzzle app, or a short online course on something "
                     "she's curious about. Regular phone calls help too.")],
          dmake=_d_physio),
    Unans("university", "degree", _u_fixed("university"),
          q=["Which uni did I go to?", "Where did I do my degree?"],
          c=["which uni I went to"], n=["the name of my university"],
          distract=[("My cousin has just got an offer from {duni} and the whole family is over the moon. What "
                     "are the things people wish they'd known before their first year at uni?",
                     "Common ones: go to the freshers' events even if you're unsure, join at least one "
                     "society, learn four or five cheap recipes, keep a simple budget, and ask for help "
                     "early if the work gets too much. Everyone else is nervous too.")],
          dmake=_d_uni),
    Unans("trip_airline", "trip", _u_fixed("trip_airline"),
          q=["Which airline am I flying with for my holiday?"],
          c=["which airline I booked for my trip"], n=["the airline I'm flying with"],
          distract=[("My colleague flew with {dairline} last week and they lost her suitcase for three days. "
                     "What should you actually do if your bag doesn't turn up?",
                     "Report it at the airline's desk before leaving the airport and keep the reference "
                     "number. Keep receipts for essentials you have to buy, since these are usually "
                     "reimbursable, and check your travel insurance too.")],
          dmake=_d_airline),
    Unans("grandfather", "grandmother", _u_fixed("grandfather_name"),
          q=["What was my grandad called?", "What's my grandfather's name?"],
          c=["what my grandad's name was"], n=["my grandfather's name"],
          distract=[("My friend {dname}'s grandad, {dgrand}, is turning a hundred this month and they want to "
                     "get him something meaningful. Any ideas for a present for someone who has everything?",
                     "Experiences and memories work best: a photo book of his life, a recorded message from "
                     "family and friends, a visit from someone he hasn't seen in ages, or a favourite meal. "
                     "Many countries also send an official card for a hundredth birthday.")],
          dmake=_d_grandad),
    Unans("rent", "home_city", _u_fixed("rent"),
          q=["How much do I pay in rent?"], c=["how much my rent is"], n=["my monthly rent"],
          distract=[("My friend {dname} pays {drent} a month for a box room with a window that doesn't open. "
                     "Is there a rule of thumb for how much of your income should go on rent?",
                     "A common guideline is to keep rent to around 30% of your take-home pay, though in "
                     "expensive cities many people pay more. What matters most is that what's left covers "
                     "bills, food and some savings.")],
          dmake=_d_rent),
    Unans("best_friend_job", "best_friend", _u_bf_job,
          q=["What's {bf}'s line of work?"], c=["what {bf} does for work"], n=["{bf}'s job"]),
    Unans("language_time", "language", _u_lang_time,
          q=["How long have I been learning {lang}?"], c=["how long I've been studying {lang}"], n=[]),
    Unans("blood_type", None, _u_fixed("blood_type"),
          q=["What's my blood type?"], c=["what blood type I am"], n=["my blood type"],
          distract=[("My dad gave blood for the first time at sixty-two and found out he's {dbtype}. He's "
                     "now acting like it's a personality trait. How often are you allowed to donate?",
                     "It varies by country, but typically whole blood can be given every 12 weeks for men and "
                     "every 16 weeks for women in the UK; other places use different intervals. The donation "
                     "service will tell you when you're next eligible.")],
          dmake=_d_blood),
    Unans("mother_name", None, _u_fixed("mother_name"),
          q=["What's my mum called?", "What's my mother's name?"], c=["what my mum's name is"],
          n=["my mum's name"]),
    Unans("favourite_film", None, _u_fixed("favourite_film"),
          q=["What's my favourite film?"], c=["what my all-time favourite film is"], n=["my favourite film"],
          distract=[("My housemate has watched {dfilm} about forty times and quotes it constantly. Is there a "
                     "name for that thing where you rewatch the same comfort film over and over?",
                     "People often call them 'comfort watches'. Psychologists link rewatching to "
                     "predictability and emotional safety: you know how it ends, so it's restful.")],
          dmake=_d_film),
    Unans("dentist", None, _u_fixed("dentist_name"),
          q=["What's my dentist called?"], c=["who my dentist is"], n=["my dentist's name"]),
]

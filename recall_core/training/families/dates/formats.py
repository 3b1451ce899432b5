"""How dates and clock times are written (words, ordinals, 12- and 24-hour), every alias that names
one, and how a template is filled with them.
"""

from __future__ import annotations

import datetime as _dt
import random
import string

# -- calendar vocabulary -------------------------------------------------------------------------

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")
MON_ABBR = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
ORD_WORDS = (
    "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth",
    "tenth", "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth",
    "seventeenth", "eighteenth", "nineteenth", "twentieth", "twenty-first", "twenty-second",
    "twenty-third", "twenty-fourth", "twenty-fifth", "twenty-sixth", "twenty-seventh",
    "twenty-eighth", "twenty-ninth", "thirtieth", "thirty-first",
)
HOUR_WORDS = ("twelve", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
              "ten", "eleven", "twelve")
MIN_WORDS = {5: "five", 10: "ten", 20: "twenty", 25: "twenty-five"}
# no ":10": "7:10am" would also name "10am" for the scorer (colon becomes a space)
MINUTES = (0, 0, 5, 15, 15, 20, 30, 30, 40, 45, 45, 50)


def ordinal(n: int) -> str:
    if 10 <= n % 100 <= 20:
        suffix = "th"
    else:
        suffix = {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _dedupe(items):
    out, seen = [], []
    for it in items:
        key = " ".join("".join(c if c.isalnum() else " " for c in it.lower()).split())
        if key not in seen:
            seen.append(key)
            out.append(it)
    return tuple(out)


def date_aliases(d: _dt.date, year_known: bool = False) -> tuple[str, ...]:
    """Ways to name a day of the year: 14 March, March 14, 14th March, March 14th, ..."""
    day, month, abbr = d.day, MONTHS[d.month - 1], MON_ABBR[d.month - 1]
    o, w = ordinal(day), ORD_WORDS[day - 1]
    al = [f"{day} {month}", f"{month} {day}", f"{o} {month}", f"{month} {o}", f"{o} of {month}"]
    if day >= 10:  # "eighth of March" would also be named by "twenty-eighth of March"
        al += [f"{w} of {month}", f"{month} {w}"]
    if abbr != month:
        al += [f"{day} {abbr}", f"{abbr} {day}", f"{o} {abbr}", f"{abbr} {o}"]
    if d.month == 9:
        al += [f"{day} Sept", f"Sept {day}"]
    if year_known:
        al.append(d.isoformat())
    return _dedupe(al)


def time_aliases(t: tuple[int, int]) -> tuple[str, ...]:
    """Ways to name a clock time: 4:15 / 4.15 / 4:15pm / 16:15 / quarter past four ..."""
    h, m = t
    h12 = h % 12 or 12
    ap = "am" if h < 12 else "pm"
    w, nxt = HOUR_WORDS[h12], h12 % 12 + 1
    wn = HOUR_WORDS[nxt]
    mm = f"{m:02d}"
    if m == 0:
        al = [f"{h12}{ap}", f"{h12} {ap}", f"{h12} {ap[0]}.m.", f"{h12}:00", f"{h12}.00",
              f"{h12}:00{ap}", f"{h12}.00{ap}", f"{h:02d}:00", f"{h}:00", f"{w} o'clock",
              f"{h12} o'clock", f"{w} {ap}"]
        if h == 12:
            al += ["noon", "midday"]
    else:
        al = [f"{h12}:{mm}", f"{h12}.{mm}", f"{h12}:{mm}{ap}", f"{h12}.{mm}{ap}", f"{h:02d}:{mm}",
              f"{h}:{mm}"]
        if m == 15:
            al += [f"quarter past {w}", f"quarter past {h12}"]
        elif m == 30:
            al += [f"half past {w}", f"half past {h12}", f"half {w}"]
        elif m == 45:
            al += [f"quarter to {wn}", f"quarter to {nxt}"]
        elif m in MIN_WORDS:
            al += [f"{MIN_WORDS[m]} past {w}"]
        elif 60 - m in MIN_WORDS:
            al += [f"{MIN_WORDS[60 - m]} to {wn}"]
    return _dedupe(al)


def render_date(rng: random.Random, d: _dt.date, weekday: bool = False, year: bool = False) -> str:
    """One way a person would type the date; always contains one of date_aliases(d)."""
    day, month = d.day, MONTHS[d.month - 1]
    o = ordinal(day)
    if weekday:
        wd = WEEKDAYS[d.weekday()]
        forms = [f"{wd} {day} {month}", f"{wd} the {o} of {month}", f"{wd}, {month} {o}",
                 f"{wd} {o} {month}", f"{wd} {o} {MON_ABBR[d.month - 1]}"]
    else:
        forms = [f"{day} {month}", f"{month} {day}", f"{o} {month}", f"{month} {o}",
                 f"the {o} of {month}"]
    out = rng.choice(forms)
    if year:
        out = f"{out}, {d.year}" if rng.random() < 0.5 else f"{out} {d.year}"
    return out


def echo_date(rng: random.Random, d: _dt.date) -> str:
    """A short form the assistant uses when it repeats a date."""
    return rng.choice([f"{d.day} {MONTHS[d.month - 1]}", f"{MONTHS[d.month - 1]} {ordinal(d.day)}",
                       f"{ordinal(d.day)} {MONTHS[d.month - 1]}"])


def render_time(rng: random.Random, t: tuple[int, int]) -> str:
    """One way a person would type the time; always one of time_aliases(t)."""
    h, m = t
    h12 = h % 12 or 12
    ap = "am" if h < 12 else "pm"
    w = HOUR_WORDS[h12]
    if m == 0:
        forms = [f"{h12}{ap}", f"{h12} {ap}", f"{h12}:00", f"{h:02d}:00", f"{w} o'clock"]
        if h == 12:
            forms.append("midday")
    else:
        forms = [f"{h12}:{m:02d}", f"{h12}.{m:02d}", f"{h12}:{m:02d}{ap}", f"{h:02d}:{m:02d}"]
        if m == 15:
            forms.append(f"quarter past {w}")
        elif m == 30:
            forms += [f"half past {w}", f"half {w}"]
        elif m == 45:
            forms.append(f"quarter to {HOUR_WORDS[h12 % 12 + 1]}")
    return rng.choice(forms)


def echo_time(t: tuple[int, int]) -> str:
    h, m = t
    h12 = h % 12 or 12
    ap = "am" if h < 12 else "pm"
    return f"{h12}{ap}" if m == 0 else f"{h12}:{m:02d}"


# -- templates -------------------------------------------------------------------------------------
# A field whose name starts with "_" is grammar (pronouns, a word like "later"); every other field
# is a value and is recorded in Turn.values / Question.values.

_FMT = string.Formatter()


def fill(template: str, slots: dict) -> tuple[str, list[str]]:
    """Format ``template``; return the text and the values it inserted (fields not starting with _)."""
    out: list[str] = []
    values: list[str] = []
    for literal, field, _spec, _conv in _FMT.parse(template):
        out.append(literal)
        if field is None:
            continue
        value = slots[field]
        out.append(value)
        if not field.startswith("_") and value and value not in values:
            values.append(value)
    return "".join(out), values

"""The records a topic is written with (``P`` pool entries, ``Slot``, ``Spec``) and the value
pools that several topics share: names, cities, dates, floors.
"""

from __future__ import annotations

from dataclasses import dataclass

# -- fact catalogue ------------------------------------------------------------------------------


def P(inserted: str, *aliases: str) -> tuple[str, tuple[str, ...]]:
    """A pool entry: the text put into a sentence and every acceptable way to name it."""
    return inserted, (inserted, *aliases)


@dataclass(frozen=True)
class Slot:
    """One fact about the user: its id, possible values and the ways it is asked about."""

    fid: str
    pool: tuple[tuple[str, tuple[str, ...]], ...]
    asks: tuple[str, ...]
    open_ok: bool = True  # may be asked as an unanswerable question when never stated
    blocked_by: tuple[str, ...] = ()  # spec names whose presence would make it answerable


@dataclass(frozen=True)
class Spec:
    """A topic: one or two slots (placeholders ``v`` and ``w``), how the user says it, how
    someone else's version is mentioned (``others``) and, optionally, how it changes."""

    name: str
    slots: tuple[Slot, ...]
    says: tuple[tuple[str, tuple[str, ...]], ...]
    others: tuple[tuple[str, tuple[str, ...]], ...]
    moves: tuple[tuple[str, tuple[str, ...]], ...] = ()
    excludes: tuple[str, ...] = ()


GIRLS = ("Hana", "Ines", "Maren", "Zofia", "Amaya", "Ottilie", "Rosalind", "Noor", "Elodie",
         "Signe", "Anouk", "Leonie", "Thea", "Wren")
BOYS = ("Teodor", "Rafferty", "Idris", "Caspian", "Mateo", "Finlay", "Oisin", "Soren", "Kofi",
        "Laszlo", "Emeric", "Benedek")
PARTNERS = ("Robin", "Sasha", "Jules", "Ari", "Remy", "Dana", "Rowan", "Quinn", "Emery", "Reese",
            "Alexis", "Noa")
SISTERS = ("Greta", "Marisol", "Ffion", "Priya", "Annika", "Delphine", "Beatrix", "Saoirse",
           "Yasmin", "Lotte")
BROTHERS = ("Tobias", "Declan", "Anselm", "Ravi", "Hamish", "Bastian", "Cormac", "Joaquin",
            "Stellan", "Ewan")
PET_NAMES = ("Biscuit", "Pickle", "Mochi", "Bramble", "Nugget", "Waffles", "Clementine", "Ziggy",
             "Dumpling", "Crumpet", "Marmalade", "Noodle")
CITIES = ("Galway", "Porto", "Dundee", "Ghent", "Trieste", "Bergen", "Hobart", "Leipzig",
          "Tampere", "Halifax", "Bilbao", "Lyon", "Aarhus", "Wellington", "Gothenburg", "Utrecht",
          "Bratislava", "Tallinn")

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December")
ORDINAL_WORDS = ("zeroth", "first", "second", "third", "fourth", "fifth", "sixth", "seventh",
                 "eighth", "ninth", "tenth", "eleventh", "twelfth", "thirteenth", "fourteenth",
                 "fifteenth")


def _suffix(n: int) -> str:
    if 10 <= n % 100 <= 20:
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


def _dates() -> tuple[tuple[str, tuple[str, ...]], ...]:
    out = []
    k = 0
    for m in range(12):
        for d in range(1, 29, 3):
            month, nth = MONTHS[m], f"{d}{_suffix(d)}"
            forms = (f"{d} {month}", f"{month} {d}", f"{nth} of {month}", f"{month} {nth}",
                     f"{nth} {month}")
            out.append((forms[k % 4], forms))
            k += 1
    return tuple(out)


def _floors() -> tuple[tuple[str, tuple[str, ...]], ...]:
    out = []
    for n in range(4, 16):
        nth = f"{n}{_suffix(n)}"
        forms = (nth, ORDINAL_WORDS[n], str(n))
        out.append((ORDINAL_WORDS[n] if n % 2 else nth, forms))
    return tuple(out)

"""Every fact kind of the passing family, in the order the generator draws from.

A kind says how a fact is made, the long chatty turns that state it (and change it), the
questions that ask it, and the near-miss remark about someone else that may go with it.
"""

from __future__ import annotations

from recall_core.training.families.passing.kinds.pastimes import ALLERGY, FOOD, INJURY, INSTRUMENT, SPORT
from recall_core.training.families.passing.kinds.people import (
    CHILD,
    FRIEND,
    GRAN,
    NIBLING,
    PARTNER,
    PET,
    SIBLING,
)
from recall_core.training.families.passing.kinds.plans import (
    BIRTHDAY,
    COLLECTION,
    DEGREE,
    FLOOR,
    LANGUAGE,
    TRIP,
)
from recall_core.training.families.passing.kinds.work_home import CAR, CITY, EMPLOYER, HOMETOWN, JOB

KINDS = [PET, SIBLING, PARTNER, CHILD, NIBLING, GRAN, FRIEND, JOB, EMPLOYER, HOMETOWN, CITY, CAR,
         INSTRUMENT, SPORT, ALLERGY, INJURY, FOOD, BIRTHDAY, FLOOR, LANGUAGE, TRIP, DEGREE,
         COLLECTION]
BY_KEY = {k.key: k for k in KINDS}

"""Every fact kind of the interview family, by key, in the order the generator draws from.

The kinds are written by topic in :mod:`.people`, :mod:`.work_travel` and :mod:`.pastimes`.
"""

from __future__ import annotations

from recall_core.training.families.interview.kind import Kind
from recall_core.training.families.interview.kinds import pastimes, people, work_travel

# The generator draws from the kinds in this order (its random choices depend on it), so the order
# is written here rather than following the topic modules.
_ORDER = (
    "pet_name", "job", "trip_city", "trip_date", "hometown", "partner_name", "manager_name", "car", "instrument",
    "allergy", "book", "race", "neighbourhood", "birthday", "appointment", "guests", "crop", "language",
)
_BY_KEY = {**people.KINDS, **work_travel.KINDS, **pastimes.KINDS}
if set(_BY_KEY) != set(_ORDER):  # a kind written but left out of the order, or the reverse
    raise AssertionError(f"kinds out of the order: {sorted(set(_BY_KEY) ^ set(_ORDER))}")
KINDS: dict[str, Kind] = {key: _BY_KEY[key] for key in _ORDER}

KIND_KEYS = tuple(KINDS)
CHANGEABLE = tuple(k for k in KIND_KEYS if KINDS[k].ch_short)
WITH_RELS = tuple(k for k in KIND_KEYS if KINDS[k].rels)

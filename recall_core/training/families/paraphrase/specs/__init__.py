"""Every topic of the paraphrase family, in the order the generator goes through them.

The topics are written by theme in :mod:`.people`, :mod:`.home_work`, :mod:`.daily` and
:mod:`.pastimes`.
"""

from __future__ import annotations

from recall_core.training.families.paraphrase.facts import Spec
from recall_core.training.families.paraphrase.specs import daily, home_work, pastimes, people

# The generator goes through the topics in this order (its random choices depend on it), so the
# order is written here rather than following the topic modules.
_ORDER = (
    "pastime", "daughter", "son", "partner", "sister", "brother", "pet", "job", "employer", "city",
    "hometown", "diet", "allergy", "car", "instrument", "commute", "drink", "cuisine", "language", "birthday",
    "wake", "injury", "home_type", "floor", "phobia", "volunteer", "talent", "trip", "heirloom", "allotment",
    "marathon",
)
_BY_NAME = {spec.name: spec for spec in (*people.SPECS, *home_work.SPECS, *daily.SPECS, *pastimes.SPECS)}
if set(_BY_NAME) != set(_ORDER):  # a topic written but left out of the order, or the reverse
    raise AssertionError(f"topics out of the order: {sorted(set(_BY_NAME) ^ set(_ORDER))}")
SPECS: tuple[Spec, ...] = tuple(_BY_NAME[name] for name in _ORDER)

SPEC_BY_NAME = {spec.name: spec for spec in SPECS}

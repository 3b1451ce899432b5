"""The changing facts of the changes family, by kind, in the order the generator draws from.

The kinds are written by topic in :mod:`.life`, :mod:`.things` and :mod:`.habits`. A user template
is paired with assistant replies that echo the same slots. Slots: {v} (the value stated at first
mention), {cur} (value before the event), {new} (value the event is about), {term}, {species}
(plain words), {who}/{Who} (a person), {rel} (a relation word). {an:x} and {An:x} put an
indefinite article before the slot.

Event meaning: init states {v}; plan announces {new} while {cur} still holds; done makes the
planned {new} current; cancel abandons {new} and keeps {cur}; switch makes {new} current without
warning; revert goes back to an earlier value {new}, leaving {cur}.
"""

from __future__ import annotations

from recall_core.training.families.changes.kinds import habits, life, things

# The generator draws from the kinds in this order (its random choices depend on it), so the order
# is written here rather than following the topic modules.
_ORDER = (
    "home", "job", "partner", "car", "phone", "laptop", "diet", "gym", "project", "rent", "show", "language",
    "coffee",
)
_BY_KEY = {**life._K, **things._K, **habits._K}
if set(_BY_KEY) != set(_ORDER):  # a kind written but left out of the order, or the reverse
    raise AssertionError(f"kinds out of the order: {sorted(set(_BY_KEY) ^ set(_ORDER))}")
_K: dict[str, dict] = {key: _BY_KEY[key] for key in _ORDER}

CHANGING_KINDS = tuple(_K)
#: pairs of changing kinds that would contradict each other if both were told
_EXCLUSIVE = (("home", "rent"), ("job", "project"))

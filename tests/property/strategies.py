"""Hypothesis strategies: how the property tests and state machines build their inputs.

The checks they run on what comes out are in invariants.py.
"""

from __future__ import annotations

from hypothesis import strategies as st

# --------------------------------------------------------------------------- the memory
#: A small vocabulary, so that random texts share words and searches have real rankings.
WORDS = "apple banana cherry dog eagle fox grape house island jazz kite lemon moon night ocean piano".split()
texts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=8).map(" ".join)
roles = st.sampled_from(["user", "assistant", "system"])
#: A session id, or None for the writer's default session.
sessions = st.sampled_from(["s1", "s2", None])

# --------------------------------------------------------------------------- a session's caller
#: What a chat backend does between two replies: a new user message (whole history or just the
#: text), regenerate the last reply, edit an earlier message, append turns without a reply, or
#: send the reply back changed.
session_operations = st.lists(
    st.sampled_from(["user", "new", "regenerate", "edit", "append", "rewrite_reply"]), min_size=3, max_size=8
)

# --------------------------------------------------------------------------- reply text
#: Model output with pieces of stop strings and of the recall marker in it.
reply_texts = st.text(alphabet="ab<>recal STOP", max_size=60)
#: Where a stream cuts that text into pieces (points past its end are ignored).
cut_points = st.lists(st.integers(min_value=0, max_value=60), max_size=8)

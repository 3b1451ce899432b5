"""The ``Kind`` record: everything needed to talk and ask about one kind of fact."""

from __future__ import annotations

from dataclasses import dataclass

from recall_core.training.families.interview.values import Val

# -- kinds of fact --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Kind:
    """Everything needed to talk and ask about one kind of fact.

    ``opener``: (user line that makes the assistant curious, assistant questions that fit it).
    ``short``: the user's terse answers. ``ack``: the assistant's reply, either a line or
    (line, user follow-up, assistant follow-up). ``state``: the user saying it outright and the
    assistant's reply. ``q``/``qi``: direct questions and wh-clauses for the later question.
    ``ch_*``: the same for a change of value. ``d_*``, ``rq``/``rqi``: the fact about someone else.
    """

    key: str
    pool: tuple[Val, ...]
    opener: tuple
    short: tuple[str, ...]
    ack: tuple
    state: tuple
    q: tuple[str, ...]
    qi: tuple[str, ...]
    aux: str = ""  # "pet", "appt" or ""
    ch_open: tuple = ()
    ch_short: tuple[str, ...] = ()
    ch_state: tuple = ()
    ch_ack: tuple[str, ...] = ()
    rels: tuple[str, ...] = ()
    d_state: tuple = ()
    d_open: tuple = ()
    d_short: tuple[str, ...] = ("{V}.", "{V}, apparently.", "{V}. Don't ask me why.", "Ha, {v}.")
    d_ack: tuple[str, ...] = ("{V}, good to know!", "Ah, {v}. Noted!")
    rq: tuple[str, ...] = ()
    rqi: tuple[str, ...] = ()

"""Which turns leave a bounded session cache: whole exchanges, oldest first, after the sinks.

An **exchange** is a user message and whatever answers it (assistant and tool messages);
evicting whole exchanges keeps the conversation well formed for templates that insist on
alternating roles. Only when the exchange in progress is itself too long (a run of
messages without a user turn, as an appended document) are single messages evicted. The **sinks** are the first units (at least ``sink_tokens`` positions,
rounded up to the next user message): StreamingLLM's attention sinks, and in a chat the
system message, which always stay. The exchange being answered is never evicted.

:func:`choose_eviction` only decides; :class:`~recall_core.RecallSession` cuts the cache
(:func:`recall_core.kv.cache.evict_span`) and writes the evicted messages to memory.
Exchanges that arrive in the same call as newer ones and do not fit are evicted before
they are ever computed: their ids are simply not prefilled.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from recall_core.session.units import Message, Unit


@dataclass
class Eviction:
    """What one call evicted.

    Attributes:
        tokens: cache positions evicted.
        messages: the messages evicted (cached ones, and new ones never prefilled).
        new_messages: how many of them were new in this call.
        written: ids of the memories written for them.
        error: why writing them failed, if it did.
    """

    tokens: int = 0
    messages: list[Message] = field(default_factory=list)
    new_messages: int = 0
    written: list[str] = field(default_factory=list)
    error: str | None = None

    def then(self, later: Eviction) -> Eviction:
        """This eviction and a ``later`` one of the same call, as one: a message evicted again (a
        replan that read it again, it was never prefilled: no positions) counts once."""
        seen = {m.key for m in self.messages}
        again = sum(1 for m in later.messages if m.key in seen)
        return Eviction(self.tokens + later.tokens, self.messages + [m for m in later.messages if m.key not in seen],
                        self.new_messages + later.new_messages - again, self.written + later.written,
                        later.error or self.error)  # fmt: skip


@dataclass
class Choice:
    """The units to evict: ``cached[cached_from:cached_to]`` and the ``new`` units at ``new_indices``."""

    sinks: int
    cached_from: int
    cached_to: int
    new_indices: list[int]


def sink_count(lengths: Sequence[int], exchange_starts: Sequence[bool], sink_tokens: int) -> int:
    """How many leading units are sinks: at least ``sink_tokens`` positions, up to the next user message."""
    count, total = 0, 0
    while count < len(lengths) and total < sink_tokens:
        total += lengths[count]
        count += 1
    while count < len(lengths) and not exchange_starts[count]:
        count += 1
    return count


def choose_eviction(cached: Sequence[Unit], new: Sequence[Unit], sinks: int | None, sink_tokens: int,
                    limit: int, reserve: int, split: bool = False, best_effort: bool = False) -> Choice | None:  # fmt: skip
    """The oldest exchanges to evict so that the cache, the new ids and ``reserve`` fit in ``limit``.

    ``new[0]`` may continue ``cached[-1]`` (the reply of the last call, confirmed now): the
    two are one unit here. ``sinks`` is the sink count once fixed (``None`` before the
    first eviction). With ``split`` (no reply to give), an exchange too long to keep whole
    may lose single messages, never its last. Returns ``None`` when everything fits.
    With ``best_effort`` (after a reply, whose memories were not reserved), what cannot be
    made to fit is not an error: every older exchange goes (``None``: there is none).

    Raises:
        ValueError: even with every older exchange evicted, the sinks, the exchange being
            answered and ``reserve`` do not fit in ``limit`` (the message names both numbers).
    """
    continues = bool(cached and new and cached[-1].pending and new[0].index == cached[-1].index)
    # One entry per unit, the confirmed reply joined with the rest of itself: (cached, new, starts an exchange).
    items = [(u.length, 0, u.starts_exchange) for u in cached]
    rest = new[1:] if continues else new
    if continues:
        items[-1] = (items[-1][0], new[0].length, new[0].starts_exchange)
    items += [(0, u.length, u.starts_exchange) for u in rest]
    sizes = [a + b for a, b, _ in items]
    need = sum(sizes) + reserve
    if need <= limit:
        return None
    if sinks is None:
        sinks = sink_count(sizes, [s for _, _, s in items], sink_tokens)
    sinks = min(sinks, len(items))
    floor = sum(sizes[:sinks]) + reserve
    # Whole exchanges; with `split`, when the exchange in progress alone is too long (a run of
    # messages with no user turn, as a loaded document), single messages of it, never the last.
    starts = [i for i in range(sinks + 1, len(items)) if items[i][2]]
    cuts = starts
    if split and not (starts and floor + sum(sizes[starts[-1] :]) <= limit):
        cuts = list(range(sinks + 1, len(items)))
    last = cuts[-1] if cuts else len(items)
    if not cuts or floor + sum(sizes[last:]) > limit:
        if best_effort:
            return _choice(cached, new, continues, sinks, last) if cuts else None
        kept = sum(sizes[last:]) if cuts else sum(sizes[sinks:])
        raise ValueError(
            f"max_cache_tokens ({limit}) is smaller than the sinks plus one turn ({floor + kept}: "
            f"{floor - reserve} sink positions, {kept} for the last message(s) and up to {reserve} the reply "
            "may add); raise max_cache_tokens, or lower max_new_tokens / max_recalls / max_memory_tokens"
        )
    cut = next(c for c in cuts if need - sum(sizes[sinks:c]) <= limit)
    return _choice(cached, new, continues, sinks, cut)


def _choice(cached: Sequence[Unit], new: Sequence[Unit], continues: bool, sinks: int, cut: int) -> Choice:
    """Back from entries to units: the entry of a continued reply stands for its cached and its new unit."""
    shift = len(cached) - (1 if continues else 0)  # entry index of new[j] is j + shift
    new_indices = [j for j in range(len(new)) if sinks <= j + shift < cut]
    return Choice(sinks, min(sinks, len(cached)), min(cut, len(cached)), new_indices)

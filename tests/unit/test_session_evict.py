"""Which units leave a bounded cache: whole exchanges after the sinks, oldest first (a pure function)."""

from __future__ import annotations

import pytest

from recall_core.session.evict import choose_eviction, sink_count
from recall_core.session.units import Message, Part, Unit


def unit(index: int, role: str | None, length: int, pending: bool = False) -> Unit:
    messages = [] if role is None else [Message({"role": role, "content": "x"})]
    return Unit(index, messages, [Part("text", [0] * length, "x" * length)], pending=pending)


def chat(*roles: str, length: int = 10) -> list[Unit]:
    return [unit(i, role, length) for i, role in enumerate(roles)]


def test_everything_fits():
    assert choose_eviction(chat("system", "user", "assistant"), [], None, 4, 100, 10) is None


def test_oldest_exchanges_go_first_after_the_sinks():
    cached = chat("system", "user", "assistant", "tool", "user", "assistant", "user", "assistant")
    new = [unit(8, "user", 10), unit(9, None, 5, pending=True)]
    choice = choose_eviction(cached, new, None, 4, 75, 10)  # 95 + 10 > 75: evict 30
    # Sinks: the system message (rounded up to the next user turn). Then the first exchange goes
    # whole (user, assistant, tool: 30), which is enough.
    assert (choice.sinks, choice.cached_from, choice.cached_to, choice.new_indices) == (1, 1, 4, [])
    assert choose_eviction(cached, new, None, 4, 70, 10).cached_to == 6  # 35 to go: two exchanges


def test_the_exchange_being_answered_stays():
    cached = chat("system", "user", "assistant", "user")
    new = [unit(4, None, 5, pending=True)]
    with pytest.raises(ValueError, match=r"max_cache_tokens \(30\) is smaller than the sinks plus one turn \(35: 10 sink"):
        choose_eviction(cached, new, None, 4, 30, 10)


def test_new_units_that_do_not_fit_are_evicted_unread():
    cached = chat("system")
    new = [unit(i, role, 10) for i, role in enumerate(["user", "assistant"] * 5, start=1)]
    new.append(unit(11, "user", 10))
    new.append(unit(12, None, 5, pending=True))
    choice = choose_eviction(cached, new, None, 4, 50, 5)
    assert choice.cached_to == 1 and choice.new_indices == list(range(8))  # the last two exchanges stay


def test_a_confirmed_reply_continues_its_pending_unit():
    cached = chat("system", "user") + [unit(2, None, 8, pending=True)]
    new = [unit(2, "assistant", 4), unit(3, "user", 10), unit(4, None, 5, pending=True)]
    choice = choose_eviction(cached, new, None, 4, 35, 0)  # 47 > 35: the first exchange, with its reply
    assert (choice.cached_from, choice.cached_to, choice.new_indices) == (1, 3, [0])


def test_without_split_a_long_exchange_is_an_error_with_split_single_messages_go():
    cached = chat("system", "user", "assistant", "assistant", "assistant", "assistant")
    with pytest.raises(ValueError, match="smaller than the sinks plus one turn"):
        choose_eviction(cached, [unit(6, "assistant", 10)], None, 4, 40, 0)
    choice = choose_eviction(cached, [unit(6, "assistant", 10)], None, 4, 40, 0, split=True)
    assert (choice.cached_from, choice.cached_to) == (1, 4)  # the user message and two replies


def test_sinks_round_up_to_the_next_user_message():
    assert sink_count([3, 3, 3, 3], [False, False, True, False], 4) == 2
    assert sink_count([10, 10], [True, True], 4) == 1
    assert sink_count([10, 10], [True, True], 0) == 0
    assert sink_count([2, 10, 10], [False, False, True], 0) == 2  # a leading system message stays

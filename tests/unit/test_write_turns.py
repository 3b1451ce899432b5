"""write_turns / write_reported: what an adapter reports and marks after a whole, a partly
refused and a broken write (a fake writer: the memory itself is tested elsewhere)."""

from __future__ import annotations

import copy
import pickle
import warnings

import pytest

from recall_core.memory.errors import MemoryUnavailableError
from recall_core.remember import TurnsRefused, write_reported, write_turns

EXCHANGE = [("user", "My cat is called Miso."), ("assistant", "What a lovely name!")]


class _Writer:
    """Writes each turn as one id; ``refuse`` texts raise ValueError, the ``down``-th call the index error."""

    def __init__(self, refuse: str = "\x00", down: int | None = None) -> None:
        self.refuse, self.down, self.calls = refuse, down, 0

    def add_turn(self, user_id, role, text, session_id=None):
        self.calls += 1
        if self.refuse in text:
            raise ValueError("text must not contain NUL characters")
        if self.calls == self.down:
            raise MemoryUnavailableError("the index is down; the turn is in the journal")
        return [f"{role}-{self.calls}"]


class _Store:
    def __init__(self, writer: _Writer) -> None:
        self.writer = writer


def _reported(store: _Store):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = write_reported(store, "ada", EXCHANGE)
    return report, caught


def test_a_whole_write_reports_its_ids_and_every_role_is_done():
    report, caught = _reported(_Store(_Writer()))
    assert report.metadata == {"memory_written": ["user-1", "assistant-2"]} and report.done_roles is None
    assert caught == []


def test_a_refused_turn_costs_no_other_and_both_are_done_with():
    store = _Store(_Writer())
    turns = [("user", "My cat is called Miso.\x00"), EXCHANGE[1]]
    with pytest.raises(TurnsRefused) as raised:
        write_turns(store, "ada", turns)
    assert raised.value.written == ["assistant-2"] and "turn 0 (user)" in raised.value.refused[0]
    store.writer.calls = 0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = write_reported(store, "ada", turns)
    assert report.metadata["memory_written"] == ["assistant-2"] and report.done_roles is None
    assert "1 of 2 turn(s) were refused" in report.metadata["memory_write_error"]
    assert caught[0].filename == __file__


def test_the_index_down_after_the_first_turn_reports_what_was_written_and_only_its_role():
    """The user turn is written, the reply's write finds the index down: the user turn's id is
    reported and only its role is done with (the session writes the reply at an eviction)."""
    report, caught = _reported(_Store(_Writer(down=2)))
    assert report.metadata["memory_written"] == ["user-1"]
    assert report.metadata["memory_write_error"].startswith("MemoryUnavailableError")
    assert report.done_roles == ("user",)
    report, _ = _reported(_Store(_Writer(down=1)))  # nothing written: no ids, no role done
    assert "memory_written" not in report.metadata and report.done_roles == ()
    assert [str(w.message) for w in caught][0].startswith("the reply was generated, but writing it to memory failed")


def test_turns_refused_pickles_and_copies_with_its_fields():
    error = TurnsRefused(["a-1"], ["turn 0 (user): NUL"], 2)
    for again in (pickle.loads(pickle.dumps(error)), copy.copy(error)):
        assert isinstance(again, TurnsRefused) and isinstance(again, ValueError)
        assert (again.written, again.refused, again.turns, str(again)) == (error.written, error.refused, 2, str(error))


def test_two_exchanges_of_one_user_written_at_once_stay_whole(tmp_path, monkeypatch):
    """Two requests of one user at once (one adapter serving many) interleaved their turns, and each
    reply was searched with the other request's message before it (until 2026-12-07: a reviewer, 28
    of 30 runs through ChatRecall). The exchange is one write now: its positions are taken together."""
    import threading
    import time

    from recall_core.memory import HashEncoder, MemoryStore, MemoryWriter

    real = MemoryWriter.add_turn

    def slow(self, *args, **kwargs):  # a turn-by-turn write gives the other thread its chance
        ids = real(self, *args, **kwargs)
        time.sleep(0.05)
        return ids

    with MemoryStore.local(tmp_path / "mem", encoder=HashEncoder(16)) as store:
        monkeypatch.setattr(MemoryWriter, "add_turn", slow)
        start = threading.Barrier(2)

        def request(tag: str) -> None:
            start.wait()
            write_turns(store, "ada", [("user", f"Request {tag}."), ("assistant", f"Reply {tag}.")])

        threads = [threading.Thread(target=request, args=(tag,)) for tag in "AB"]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        texts = [r.text for r in sorted(store.for_user("ada").all(), key=lambda r: r.turn_index)]
    assert len(texts) == 4
    for user, reply in zip(texts[::2], texts[1::2], strict=True):
        assert user.startswith("Request") and reply == user.replace("Request", "Reply"), texts


def test_a_reply_with_a_nul_is_written_without_it_and_a_user_turn_with_one_is_still_refused():
    """A reply is a model's words: a NUL in them (which the memory refuses) is taken out, where until
    2026-12-08 the reply was refused and never in memory. The user's words are still the user's."""
    store = _Store(_Writer())
    assert write_turns(store, "ada", [EXCHANGE[0], ("assistant", "What a\x00 lovely name!")]) == ["user-1", "assistant-2"]
    assert write_turns(store, "ada", [("assistant", "\x00\u200b")]) == []  # blank without it: nothing to write
    with pytest.raises(TurnsRefused):
        write_turns(store, "ada", [("user", "My cat\x00 is called Miso."), EXCHANGE[1]])

"""A user who only searches gets what an outage left pending indexed, in the background, after the
search has answered (recall_core/memory/upkeep/catch_up.py, since 2026-12-07).

Until then such a user's pending memories waited for their next write or ``repair``. The first
version (inside the search, 2026-12-06) was taken back after a review found it: a second timeout on
every search while a server hung, a running write's own turns embedded twice, catch-up stopped for
good after one failure, and a ``forget`` undone. Each of those is a test here.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from recall_core.memory import HashEncoder, MemoryStore, MemoryUnavailableError, doctor
from recall_core.memory.journal import PENDING
from recall_core.memory.upkeep import catch_up as catch_up_module

DIM = 32
WAIT_S = 30


class _Encoder(HashEncoder):
    """Fails while ``fail``; counts the texts holding "secret" it encodes; calls ``during`` (once)
    while it encodes one; blocks on ``gate`` (when set up) while it encodes one."""

    fail = False

    def __init__(self) -> None:
        super().__init__(DIM, name="test")
        self.during = None
        self.gate: threading.Event | None = None
        self.entered = threading.Event()
        self.secrets = 0

    def encode(self, texts, batch_size=64):
        if self.fail:
            raise RuntimeError("the encoder's service is down")
        if any("secret" in t for t in texts):
            self.secrets += 1
            self.entered.set()
            if self.gate is not None:
                self.gate.wait(WAIT_S)
            if self.during is not None:
                during, self.during = self.during, None
                during()
        return super().encode(texts, batch_size)


def _pending_secret(store: MemoryStore, encoder: _Encoder, text: str = "my secret bank pin is 4711") -> str:
    """Write ``text`` while the encoder is down: journaled (acknowledged), pending, without a vector."""
    encoder.fail = True
    with pytest.raises(RuntimeError):
        store.for_user("u").add(text)
    encoder.fail = False
    [row] = [r for r in store.journal.rows("u", (PENDING,)) if r.text == text]
    return row.id


def _texts(store: MemoryStore, query: str) -> list[str]:
    return [c.text for c in store.for_user("u").search(query, 5)]


def test_a_user_who_only_searches_gets_their_pending_memories_indexed(tmp_path: Path) -> None:
    encoder = _Encoder()
    with MemoryStore.local(tmp_path / "mem", encoder=encoder) as store:
        store.for_user("u").add("an ordinary note")
        _pending_secret(store, encoder)
        assert "my secret bank pin is 4711" not in _texts(store, "bank pin")  # answered before the catch-up
        assert store.writer.catch_up.wait(WAIT_S)
        assert store.journal.count("u", PENDING) == 0
        assert "my secret bank pin is 4711" in _texts(store, "bank pin")
        assert doctor(store).ok


def test_the_search_answers_while_the_catch_up_is_still_encoding(tmp_path: Path) -> None:
    """Off the search's thread: a catch-up that is slow (a server that hangs, a slow encoder) adds
    nothing to any search's time."""
    encoder = _Encoder()
    with MemoryStore.local(tmp_path / "mem", encoder=encoder) as store:
        store.for_user("u").add("an ordinary note")
        _pending_secret(store, encoder)
        encoder.gate, encoder.entered = threading.Event(), threading.Event()
        _texts(store, "note")
        assert encoder.entered.wait(WAIT_S)  # the catch-up is blocked inside the encoder ...
        for _ in range(3):
            assert "an ordinary note" in _texts(store, "note")  # ... and searches answer all the same
        assert store.journal.count("u", PENDING) == 1
        encoder.gate.set()
        assert store.writer.catch_up.wait(WAIT_S) and store.journal.count("u", PENDING) == 0


def test_a_failed_catch_up_backs_off_then_tries_again(tmp_path: Path, monkeypatch) -> None:
    encoder = _Encoder()
    with MemoryStore.local(tmp_path / "mem", encoder=encoder) as store:
        store.for_user("u").add("an ordinary note")
        _pending_secret(store, encoder)
        real_index = store.writer.index

        def unreachable(rows):
            raise MemoryUnavailableError("the index went away")

        monkeypatch.setattr(store.writer, "index", unreachable)
        _texts(store, "note")
        assert store.writer.catch_up.wait(WAIT_S)
        tried = encoder.secrets
        assert tried == 1 and store.journal.count("u", PENDING) == 1
        monkeypatch.setattr(store.writer, "index", real_index)
        for _ in range(3):  # backed off: the searches do not try again at once
            _texts(store, "note")
        assert store.writer.catch_up.wait(WAIT_S) and encoder.secrets == tried
        catch_up = store.writer.catch_up
        monkeypatch.setattr(catch_up, "_retry_at", {"u": time.monotonic() - 1})  # the backoff has passed
        _texts(store, "note")
        assert catch_up.wait(WAIT_S) and store.journal.count("u", PENDING) == 0
        assert "my secret bank pin is 4711" in _texts(store, "bank pin")


def test_the_backoff_doubles_and_is_bounded(tmp_path: Path) -> None:
    with MemoryStore.local(tmp_path / "mem", encoder=HashEncoder(DIM)) as store:
        catch_up = store.writer.catch_up
        waits = []
        for _ in range(8):
            before = time.monotonic()
            catch_up._failed("u", MemoryUnavailableError("down"))
            waits.append(round(catch_up._retry_at["u"] - before))
        assert waits[:3] == [catch_up_module.BACKOFF_S, 2 * catch_up_module.BACKOFF_S, 4 * catch_up_module.BACKOFF_S]
        assert max(waits) == catch_up_module.MAX_BACKOFF_S


@pytest.mark.parametrize("removal", ["forget", "delete"])
def test_a_removal_while_the_catch_up_encodes_is_not_undone(tmp_path: Path, removal: str) -> None:
    encoder = _Encoder()
    with MemoryStore.local(tmp_path / "mem", encoder=encoder) as store:
        store.for_user("u").add("an ordinary note")
        secret = _pending_secret(store, encoder)

        def remove() -> None:  # on the catch-up's thread, inside its encoding (outside the journal's lock)
            store.for_user("u").forget() if removal == "forget" else store.for_user("u").delete(secret)

        encoder.during = remove
        _texts(store, "note")
        assert store.writer.catch_up.wait(WAIT_S)
        assert store.for_user("u").get(secret) is None
        assert "my secret bank pin is 4711" not in _texts(store, "bank pin")
        assert store.index.count("u") == store.for_user("u").count()
        assert doctor(store).ok


def test_an_update_while_the_catch_up_encodes_keeps_the_new_text(tmp_path: Path) -> None:
    """The catch-up encoded the old text; the update changed it meanwhile: the old text's vector is
    neither stored nor indexed, and the index ends with the new text."""
    encoder = _Encoder()
    with MemoryStore.local(tmp_path / "mem", encoder=encoder) as store:
        store.for_user("u").add("an ordinary note")
        secret = _pending_secret(store, encoder)
        encoder.during = lambda: store.for_user("u").update(secret, "my bank pin changed to 1234")
        _texts(store, "note")
        assert store.writer.catch_up.wait(WAIT_S)
        assert store.for_user("u").get(secret).text == "my bank pin changed to 1234"
        assert _texts(store, "bank pin changed")[0] == "my bank pin changed to 1234"
        assert "my secret bank pin is 4711" not in _texts(store, "secret bank pin 4711")
        assert doctor(store).ok


def test_the_catch_up_skips_the_turns_a_running_write_is_indexing(tmp_path: Path) -> None:
    """A search while a write embeds its own turn: the write's turn is pending in the journal, but it
    is the write's to index; the catch-up does not encode it a second time."""
    encoder = _Encoder()
    with MemoryStore.local(tmp_path / "mem", encoder=encoder) as store:
        store.for_user("u").add("an ordinary note")
        encoder.gate = threading.Event()
        writer = threading.Thread(target=lambda: store.for_user("u").add("my secret diary entry"))
        writer.start()
        assert encoder.entered.wait(WAIT_S)  # the write is encoding its turn, journaled as pending
        assert store.journal.count("u", PENDING) == 1
        _texts(store, "note")
        assert store.writer.catch_up.wait(WAIT_S)
        encoder.gate.set()
        writer.join(WAIT_S)
        assert encoder.secrets == 1, "the catch-up encoded the write's own turn again"
        assert store.journal.count("u", PENDING) == 0 and doctor(store).ok


def test_a_read_only_store_never_catches_up(tmp_path: Path) -> None:
    encoder = _Encoder()
    with MemoryStore.local(tmp_path / "mem", encoder=encoder) as store:
        store.for_user("u").add("an ordinary note")
        _pending_secret(store, encoder)
    with MemoryStore.local(tmp_path / "mem", encoder=encoder, read_only=True) as reader:
        assert "an ordinary note" in _texts(reader, "note")
        assert reader._writer is None and reader.journal.count("u", PENDING) == 1


def test_closing_the_store_during_a_catch_up_loses_nothing(tmp_path: Path, monkeypatch) -> None:
    """close() waits a bounded time for the catch-up; what it had not indexed stays pending in the
    journal, and the next opening's search indexes it."""
    monkeypatch.setattr(catch_up_module, "CLOSE_WAIT_S", 0.5)
    encoder = _Encoder()
    store = MemoryStore.local(tmp_path / "mem", encoder=encoder)
    store.for_user("u").add("an ordinary note")
    _pending_secret(store, encoder)
    encoder.gate = threading.Event()
    _texts(store, "note")
    assert encoder.entered.wait(WAIT_S)
    started = time.monotonic()
    store.writer.catch_up.close(timeout=0.5)
    store.close()
    assert time.monotonic() - started < WAIT_S
    encoder.gate.set()  # the catch-up finds the store closed: it stops without a word
    time.sleep(0.2)
    encoder.gate = None
    with MemoryStore.local(tmp_path / "mem", encoder=encoder) as again:
        assert again.journal.count("u", PENDING) == 1
        _texts(again, "note")
        assert again.writer.catch_up.wait(WAIT_S) and again.journal.count("u", PENDING) == 0
        assert "my secret bank pin is 4711" in _texts(again, "bank pin")

"""``follow_updates`` on a real store (Chroma, the packaged MiniLM, BM25): the update that shares no
word with the question is found by the old note's names; on a ``chroma run`` server killed between
the question's search and the search by names, the note stays and a warning says so. Written for
this test, no family's text."""

from __future__ import annotations

from pathlib import Path

import pytest

from recall_core import RecallConfig
from recall_core.decoding.select import search_memory
from recall_core.memory import MemoryStore, MemoryUnavailableError, MemoryWriter
from recall_core.memory.chroma_server import ChromaServer
from recall_core.types import RecallQuery

TURNS = [
    ("2024-02-03T18:10", "user", "Long day. My Peugeot 208 keeps stalling at the lights and the garage can't see "
                                 "me until March. Any tips for getting by until then?"),
    ("2024-02-03T18:11", "assistant", "Let the engine warm up for a minute, and keep the revs a touch higher when "
                                      "you pull away. If it gets worse, ask the garage for a cancellation slot."),
    ("2024-02-10T09:00", "user", "What's a good way to keep basil alive on a windowsill?"),
    ("2024-02-10T09:01", "assistant", "Water it from below and pinch off the flower buds."),
    ("2024-03-01T12:30", "user", "I'm learning to make sourdough and my starter smells like nail varnish. Normal?"),
    ("2024-03-01T12:31", "assistant", "That's hungry starter: feed it more often and it will calm down."),
    ("2024-05-18T16:45", "user", "Big news! I finally sold the Peugeot 208 and picked up a Mazda 3 instead. "
                                 "It's so quiet inside."),
    ("2024-05-18T16:46", "assistant", "Congratulations on the Mazda 3! Enjoy the quiet."),
]  # fmt: skip
QUESTION = "Quick one: what am I driving these days?"


def _turns() -> list[dict]:
    return [{"user_id": "ada", "session_id": f"s{i // 2}", "timestamp": t, "role": r, "content": c, "turn_index": i % 2}
            for i, (t, r, c) in enumerate(TURNS)]  # fmt: skip


@pytest.fixture(scope="module")
def memory(tmp_path_factory: pytest.TempPathFactory):
    folder: Path = tmp_path_factory.mktemp("follow")
    with MemoryStore.local(folder) as store:  # the packaged MiniLM encoder
        MemoryWriter(store).add_turns(_turns())
        yield store.for_user("ada")


def _notes(memory, config: RecallConfig) -> str:
    chosen, reason, _ = search_memory(memory, RecallQuery(text=QUESTION), config)
    assert reason is None
    return "\n".join(c.text for c in chosen)


def test_the_update_is_found_by_the_old_notes_names(memory) -> None:
    """Four turns make every memory a candidate of the question's search: ``top_k=1`` stands for a
    memory large enough that the update ranks below the candidates (two of the selection seed's
    updates were not among eight)."""
    plain = _notes(memory, RecallConfig(top_k=1))
    assert "Peugeot 208 keeps stalling" in plain and "Mazda" not in plain  # the question's search alone
    followed = _notes(memory, RecallConfig(top_k=1, follow_updates=True))
    assert "Mazda 3" in followed and "keeps stalling" not in followed


def test_with_both_among_the_candidates_the_old_note_leaves_and_its_place_stays_empty(memory) -> None:
    plain = _notes(memory, RecallConfig())
    assert "Mazda 3" in plain and "keeps stalling" in plain
    followed = _notes(memory, RecallConfig(follow_updates=True))
    assert "Mazda 3" in followed and "keeps stalling" not in followed


class KilledAfterTheQuestion:
    """A user's memory on a server that is killed (SIGKILL) once the question's search is answered."""

    def __init__(self, memory, server: ChromaServer) -> None:
        self.memory, self.server, self.searches = memory, server, 0

    def search(self, query: RecallQuery, k: int):
        self.searches += 1
        if self.searches == 2:
            assert self.server.process is not None
            self.server.process.kill()
            self.server.process.wait(timeout=10)
        return self.memory.search(query, k)


#: follow_updates on, and a search one candidate deep: the update is found only by the note's names.
ON = RecallConfig(top_k=1, follow_updates=True)


@pytest.mark.server
def test_a_server_killed_before_the_search_by_names_leaves_the_note_and_warns(tmp_path: Path) -> None:
    with ChromaServer(tmp_path / "server-data") as server:
        with MemoryStore.server(port=server.port, journal_path=tmp_path / "journal.sqlite3", timeout=5) as store:
            MemoryWriter(store).add_turns(_turns())
            killed = KilledAfterTheQuestion(store.for_user("ada"), server)
            with pytest.warns(RuntimeWarning, match="a note's newer version not searched .*MemoryUnavailableError"):
                chosen, reason, _ = search_memory(killed, RecallQuery(text=QUESTION), ON)
            # the question's note is injected as it was found, and the call goes on
            assert reason is None and killed.searches == 2
            assert "Peugeot 208 keeps stalling" in chosen[0].text
            with pytest.raises(MemoryUnavailableError):  # "raise" asks for the error itself
                search_memory(store.for_user("ada"), RecallQuery(text=QUESTION), ON.replace(on_memory_error="raise"))
            server.start()  # back on the same port and data: nothing was lost, the update is found again
            chosen, reason, _ = search_memory(store.for_user("ada"), RecallQuery(text=QUESTION), ON)
            assert reason is None and "Mazda 3" in chosen[0].text

"""``RecallConfig.ask_on_score`` (0.4 by default): under ``"ask"`` and ``"model"`` the engine also recalls when one of the
memory's eligible candidates scores at least that, sharing ``ask_on_names``' one search
(recall_core/decoding/ask.py: ``memory_asks``, ``with_memory_search``)."""

from __future__ import annotations

import pytest
import torch

from recall_core import RecallConfig, RecallGenerator, RecallSession
from recall_core.decoding.ask import Decision, memory_asks, with_memory_search
from recall_core.serving import ServedRecallGenerator
from recall_core.tokens import RECALL_TOKEN
from recall_core.types import MemoryCandidate, RecallQuery
from tests.helpers.engines import declining_engine
from tests.helpers.memories import FixedMemory, ListMemory
from tests.helpers.tiny import tiny_model

FACT = "My vet is Dr Amara Osei at the clinic on Hill Street."
UNNAMED = [{"role": "user", "content": "whats the vet's name, need to ring them"}]
NAMED = [{"role": "user", "content": "What does Ingrid keep?"}]
SCORED = 0.4
MODEL = RecallConfig(recall_policy="model", ask_on_score=SCORED)
ASK = RecallConfig(recall_policy="ask", ask_on_score=SCORED)
AUTO = RecallConfig(recall_policy="auto")
DECLINED = RecallConfig(recall_policy="model", max_recalls=0)


class Scored:
    """A memory whose candidates have the given scores (in the order given, as a hybrid search's are)."""

    def __init__(self, *scored: tuple[str, float]) -> None:
        self.candidates = [MemoryCandidate(id=f"m{i}", score=s, text=t) for i, (t, s) in enumerate(scored)]
        self.queries: list[RecallQuery] = []

    def search(self, query: RecallQuery, k: int) -> list[MemoryCandidate]:
        self.queries.append(query)
        return self.candidates[:k]


# --------------------------------------------------------------------------- the test itself
def test_a_candidate_at_or_above_the_score_asks():
    question = UNNAMED[0]["content"]
    assert memory_asks(question, Scored((FACT, 0.45)), RecallConfig(ask_on_score=0.4)) == "score"
    assert memory_asks(question, Scored((FACT, 0.4)), RecallConfig(ask_on_score=0.4)) == "score"  # at least
    assert memory_asks(question, Scored((FACT, 0.39)), RecallConfig(ask_on_score=0.4)) is None
    # any eligible candidate counts, not only the first: a hybrid search's order is not the cosine's
    assert memory_asks(question, Scored(("Nice!", 0.3), (FACT, 0.5)), RecallConfig(ask_on_score=0.4)) == "score"
    # only candidates a recall may inject: the first top_k, at least min_score
    assert memory_asks(question, Scored(("Nice!", 0.3), (FACT, 0.5)), RecallConfig(ask_on_score=0.4, top_k=1)) is None
    assert memory_asks(question, Scored((FACT, 0.5)), RecallConfig(ask_on_score=0.4, min_score=0.6)) is None


def test_off_searches_nothing_for_a_question_without_names():
    memory = Scored((FACT, 0.9))
    assert memory_asks(UNNAMED[0]["content"].capitalize(), memory, RecallConfig(ask_on_score=0.0)) is None
    assert memory.queries == []
    assert memory_asks(UNNAMED[0]["content"], memory, RecallConfig(ask_on_score=0.4, max_recalls=0)) is None
    assert memory_asks(UNNAMED[0]["content"], None, RecallConfig(ask_on_score=0.4)) is None
    assert memory_asks("  ", memory, RecallConfig(ask_on_score=0.4)) is None  # an empty message
    assert memory.queries == []


def test_names_and_score_share_one_search_and_names_come_first():
    memory = FixedMemory("My friend Ingrid keeps three hives of bees.")  # scores 1.0
    assert memory_asks("What does Ingrid keep?", memory, RecallConfig(ask_on_score=0.4)) == "names"
    assert len(memory.queries) == 1
    assert memory_asks("What does Ingrid keep?", memory, RecallConfig(ask_on_score=0.4, ask_on_names=False)) == "score"
    # a named question whose name no candidate says still asks upon the score
    other = Scored(("The user's dog is called Biscuit.", 0.5))
    assert memory_asks("What does Ingrid keep?", other, RecallConfig(ask_on_score=0.4)) == "score"
    assert len(other.queries) == 1


def test_a_failed_search_warns_and_does_not_ask_or_raises_when_told():
    failing = ListMemory({"m0": FACT}, fail=ConnectionError("server down"))
    with pytest.warns(RuntimeWarning, match="ask_on_score"):
        assert memory_asks(UNNAMED[0]["content"], failing, RecallConfig(ask_on_score=0.4)) is None
    with pytest.raises(ConnectionError):
        memory_asks(UNNAMED[0]["content"], failing, RecallConfig(ask_on_score=0.4, on_memory_error="raise"))


def test_the_models_own_decision_comes_first_and_the_trace_says_score():
    memory = Scored((FACT, 0.9))
    asked = Decision(0.9, True)
    assert with_memory_search(asked, UNNAMED[0]["content"], memory, MODEL) is asked and memory.queries == []
    scored = with_memory_search(Decision.unread(), UNNAMED[0]["content"], memory, MODEL)
    assert scored.asked and scored.placed == "score" and not scored.abstained


@pytest.mark.parametrize("value", [-0.1, 1.5, float("nan")])
def test_ask_on_score_outside_its_range_names_the_field_and_the_range(value: float):
    with pytest.raises(ValueError, match=r"ask_on_score.*\[0, 1\]"):
        RecallConfig(ask_on_score=value)


def test_the_default_asks_at_0_4():
    """Chosen on the development families for the default encoder (docs/configuration.md)."""
    assert RecallConfig().ask_on_score == 0.4
    assert memory_asks(UNNAMED[0]["content"], Scored((FACT, 0.41)), RecallConfig()) == "score"


# --------------------------------------------------------------------------- in process
def _generator(score: float = 0.9) -> RecallGenerator:
    model, tokenizer = tiny_model("llama")
    return RecallGenerator(model, tokenizer, memory=Scored((FACT, score)), generation_defaults={"max_new_tokens": 8})


def test_model_opens_the_reply_with_recall_upon_the_score():
    """The tiny model never asks; its reply opens with ``<recall>`` where its own first marker would
    stand, traced ``"score"``; below the score, or off, nothing is recalled."""
    gen = _generator()
    got = gen.generate(UNNAMED, config=MODEL, return_dict_in_generate=True)
    recall_id = gen.tokenizer.convert_tokens_to_ids(RECALL_TOKEN)
    ids = gen.encode(UNNAMED, config=MODEL)
    marked = torch.cat([ids, ids.new_full((1, 1), recall_id)], dim=-1)
    expected = gen.generate_ids(marked, recall_query=UNNAMED[-1]["content"], config=MODEL, max_new_tokens=8)
    assert torch.equal(got.sequences, expected.sequences) and got.text == expected.text
    assert [r.trigger for r in got.recalls] == [r.trigger for r in got.output.recalls] == ["score"]
    assert FACT in got.recalls[0].text
    assert gen.generate(UNNAMED, config=MODEL.replace(ask_on_score=0.0)).recalls == []
    assert _generator(0.3).generate(UNNAMED, config=MODEL).recalls == []


def test_ask_recalls_as_auto_upon_the_score():
    gen = _generator()
    got = gen.generate(UNNAMED, config=ASK)
    expected = RecallGenerator.generate(gen, UNNAMED, config=AUTO)
    assert torch.equal(got.sequences, expected.sequences) and [r.trigger for r in got.recalls] == ["score"]
    low = _generator(0.3)
    off = low.generate(UNNAMED, config=ASK)
    assert off.recalls == [] and torch.equal(off.sequences, RecallGenerator.generate(low, UNNAMED, config=DECLINED).sequences)


@pytest.mark.parametrize("config", [ASK, MODEL, MODEL.replace(ask_on_abstention=False)])
def test_a_session_recalls_upon_the_score(config: RecallConfig):
    session = RecallSession(_generator(), recall_config=config)
    traced = []
    got = session.reply(UNNAMED, on_recall=traced.append)
    assert [r.trigger for r in got.recalls] == [r.trigger for r in traced] == ["score"] and FACT in got.recalls[0].text


@pytest.mark.parametrize("policy", ["ask", "model"])
def test_served_recalls_upon_the_score_after_the_decision_request(policy: str):
    """The engine's one-token decision says no; the memory's score sends the notes with the call."""
    _, tokenizer = tiny_model("llama")
    client = declining_engine(tokenizer.eos_token_id)
    served = ServedRecallGenerator(client, tokenizer, context_window=512, memory=Scored((FACT, 0.9)))
    config = RecallConfig(recall_policy=policy, ask_on_score=SCORED)
    result = served.generate(UNNAMED, config=config, max_new_tokens=6)
    assert len(client.bodies) == 2 and [r.trigger for r in result.recalls] == ["score"]
    assert result.recalls[0].length > 0 and len(client.bodies[-1]["prompt"]) > len(client.bodies[0]["prompt"])


def test_a_named_question_is_still_traced_names():
    gen = RecallGenerator(*tiny_model("llama"), memory=FixedMemory("My friend Ingrid keeps three hives of bees."),
                          generation_defaults={"max_new_tokens": 8})  # fmt: skip
    assert [r.trigger for r in gen.generate(NAMED, config=MODEL).recalls] == ["names"]

"""``RecallConfig.ask_on_names``: under ``"ask"`` and ``"model"`` the engine also recalls when the
question names someone or something that the memory's search candidates say
(recall_core/decoding/ask.py: ``names_memory``, ``with_memory_search``)."""

from __future__ import annotations

import math

import pytest
import torch

from recall_core import RecallConfig, RecallGenerator, RecallSession
from recall_core.decoding.ask import Decision, names_memory, with_memory_search
from recall_core.serving import ServedRecallGenerator
from recall_core.tokens import RECALL_TOKEN
from recall_core.types import MemoryCandidate, RecallQuery
from tests.helpers.engines import declining_engine
from tests.helpers.memories import FixedMemory, ListMemory
from tests.helpers.tiny import tiny_model

FACT = "Ingrid keeps three hives of bees on her allotment."
NAMED = [{"role": "user", "content": "What does Ingrid keep?"}]
UNNAMED = [{"role": "user", "content": "What is my dog called?"}]
# ask_on_score off: the test memories' candidates score up to 1.0, which would ask on every call (test_engine_ask_score.py)
ASK = RecallConfig(recall_policy="ask", ask_on_score=0.0)
MODEL = RecallConfig(recall_policy="model", ask_on_score=0.0)
AUTO = RecallConfig(recall_policy="auto")
DECLINED = RecallConfig(recall_policy="model", max_recalls=0)


class Labelled:
    """A memory whose one candidate is labelled with its speaker, as a named speaker's turn is stored."""

    def __init__(self, speaker: str, text: str) -> None:
        self.candidate = MemoryCandidate(id="m0", score=0.5, text=text, metadata={"speaker": speaker})

    def search(self, query: RecallQuery, k: int) -> list[MemoryCandidate]:
        return [self.candidate]


# --------------------------------------------------------------------------- the test itself
def test_a_question_naming_what_a_candidate_says_asks():
    config = RecallConfig()
    assert names_memory("What does Ingrid keep?", FixedMemory(FACT), config)
    assert names_memory("Remind me, what did Ingrid's sister study?", FixedMemory(FACT), config)  # possessive
    assert names_memory("What is Ingrid up to these days?", Labelled("Ingrid", "I keep bees now."), config)
    assert not names_memory("What does Ingrid keep?", FixedMemory("The user's dog is called Biscuit."), config)
    assert not names_memory("What does Ingridson keep?", FixedMemory(FACT), config)  # whole words only
    # the memory must name it too: the word in lower case is not the name
    assert not names_memory("What does Ingrid keep?", FixedMemory("i met ingrid at the market."), config)
    assert not names_memory("Tell me about the Great Wall.", FixedMemory("That's great! A wall of books."), config)


def test_a_question_typed_in_lower_case_asks_about_what_the_memory_names():
    """A user who types in lower case writes names in lower case too: its words that a candidate says
    as a name count (recall_core.decoding.names.asked_names)."""
    memory = FixedMemory("My friend Ingrid keeps three hives of bees.")
    assert names_memory("what does ingrid keep?", memory, RecallConfig()) and memory.queries
    assert not names_memory("what does ingrid keep?", FixedMemory("i met ingrid at the market."), RecallConfig())
    assert not names_memory("what does ingrid keep?", FixedMemory(FACT), RecallConfig())  # a sentence's first word
    unnamed = FixedMemory(FACT)
    assert not names_memory("what do i keep on my allotment?", unnamed, RecallConfig())
    assert unnamed.queries  # searched (no capitals to tell), and nothing it asks is a name the memory says


@pytest.mark.parametrize(
    "question",
    ["What is my dog called?", "Ingrid keeps what?", "OK, what do I keep?", "What did I do on Monday?", ""],
)
def test_a_question_without_names_is_not_searched(question: str):
    """A name is a capitalised word inside a sentence: a sentence's first word, "I", "OK" and days
    are not names, so nothing is searched."""
    memory = FixedMemory(FACT, "Monday I keep free.")
    assert not names_memory(question, memory, RecallConfig()) and memory.queries == []


@pytest.mark.parametrize("config", [RecallConfig(ask_on_names=False), RecallConfig(max_recalls=0)])
def test_off_or_with_no_recall_allowed_nothing_is_searched(config: RecallConfig):
    memory = FixedMemory(FACT)
    assert not names_memory("What does Ingrid keep?", memory, config) and memory.queries == []
    assert not names_memory("What does Ingrid keep?", None, RecallConfig())


def test_a_memory_error_warns_and_does_not_ask_or_raises_as_configured():
    failing = ListMemory({"m0": FACT}, fail=ConnectionError("server down"))
    with pytest.warns(RuntimeWarning, match="server down"):
        assert not names_memory("What does Ingrid keep?", failing, RecallConfig())
    with pytest.raises(ConnectionError):
        names_memory("What does Ingrid keep?", failing, RecallConfig(on_memory_error="raise"))


def test_the_models_own_decision_comes_first():
    memory = FixedMemory(FACT)
    asked = Decision(0.9, True)
    assert with_memory_search(asked, "What does Ingrid keep?", memory, RecallConfig()) is asked and memory.queries == []
    named = with_memory_search(Decision.unread(), "What does Ingrid keep?", memory, RecallConfig())
    assert named.asked and named.placed == "names" and not named.abstained
    assert math.isnan(named.probability)


def test_ask_on_names_must_be_a_bool():
    with pytest.raises(ValueError, match="ask_on_names must be True or False"):
        RecallConfig(ask_on_names="yes")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- in process
def _generator(text: str = FACT) -> RecallGenerator:
    model, tokenizer = tiny_model("llama")
    return RecallGenerator(model, tokenizer, memory=FixedMemory(text), generation_defaults={"max_new_tokens": 8})


def _plain(gen: RecallGenerator, chat, config: RecallConfig, **kwargs):
    return RecallGenerator.generate(gen, chat, config=config, **kwargs)


def test_ask_recalls_on_a_named_question_as_auto_and_traces_names():
    """The tiny model never asks; the question names Ingrid, whom the memory says: the call is
    ``"auto"``'s token for token, and the recall is traced ``"names"``."""
    gen = _generator()
    traced = []
    got = gen.generate(NAMED, config=ASK, on_recall=traced.append)
    expected = _plain(gen, NAMED, AUTO)
    assert torch.equal(got.sequences, expected.sequences) and got.text == expected.text
    assert [r.trigger for r in got.recalls] == [r.trigger for r in traced] == ["names"]
    assert FACT in got.recalls[0].text
    off = gen.generate(NAMED, config=ASK.replace(ask_on_names=False))
    assert off.recalls == [] and torch.equal(off.sequences, _plain(gen, NAMED, DECLINED).sequences)
    unnamed = gen.generate(UNNAMED, config=ASK)
    assert unnamed.recalls == [] and torch.equal(unnamed.sequences, _plain(gen, UNNAMED, DECLINED).sequences)


def test_ask_does_not_recall_when_no_candidate_says_the_name():
    gen = _generator("The user's dog is called Biscuit.")
    got = gen.generate(NAMED, config=ASK)
    assert got.recalls == [] and torch.equal(got.sequences, _plain(gen, NAMED, DECLINED).sequences)


@pytest.mark.parametrize("abstention_check", [True, False])
def test_model_opens_a_named_question_with_recall(abstention_check: bool, monkeypatch: pytest.MonkeyPatch):
    """Under ``"model"`` the reply opens with ``<recall>`` where the model's own first marker would
    stand; without the abstention's check no first pass is run at all."""
    gen = _generator()
    passes = []
    real = gen._first_pass
    monkeypatch.setattr(gen, "_first_pass", lambda ids, config: passes.append(1) or real(ids, config))
    config = MODEL.replace(ask_on_abstention=abstention_check)
    got = gen.generate(NAMED, config=config, return_dict_in_generate=True)
    recall_id = gen.tokenizer.convert_tokens_to_ids(RECALL_TOKEN)
    ids = gen.encode(NAMED, config=config)
    marked = torch.cat([ids, ids.new_full((1, 1), recall_id)], dim=-1)
    expected = gen.generate_ids(marked, recall_query=NAMED[-1]["content"], config=config, max_new_tokens=8)
    assert torch.equal(got.sequences, expected.sequences) and got.text == expected.text
    assert [r.trigger for r in got.recalls] == [r.trigger for r in got.output.recalls] == ["names"]
    assert len(passes) == int(abstention_check)
    off = gen.generate(NAMED, config=config.replace(ask_on_names=False))
    assert off.recalls == []


# --------------------------------------------------------------------------- sessions
@pytest.mark.parametrize("config", [ASK, MODEL, MODEL.replace(ask_on_abstention=False)])
def test_a_session_recalls_on_a_named_question_and_keeps_its_cache(config: RecallConfig):
    """The reply is the one a fresh ``generate()`` gives the same conversation, the recall placed
    where the session places it (``"ask"``: the start of the user message; ``"model"``: the reply's
    start), and on_recall sees it traced "names"."""
    from recall_core.prompt import with_system_prompt

    session = RecallSession(_generator(), recall_config=config)
    traced = []
    got = session.reply(NAMED, on_recall=traced.append)
    assert [r.trigger for r in got.recalls] == [r.trigger for r in traced] == ["names"] and FACT in got.recalls[0].text
    chat = with_system_prompt(NAMED, config.system_prompt)
    if config.recall_policy == "ask":
        expected = _plain(session.generator, chat, AUTO.replace(recall_position="user_start"))
    else:
        ids = session.generator.encode(chat, config=config)
        recall_id = session.generator.tokenizer.convert_tokens_to_ids(RECALL_TOKEN)
        marked = torch.cat([ids, ids.new_full((1, 1), recall_id)], dim=-1)
        expected = session.generator.generate_ids(marked, recall_query=NAMED[-1]["content"], config=config,
                                                  max_new_tokens=8)  # fmt: skip
    assert got.text == expected.text
    again = session.reply({"role": "user", "content": "And what is my dog called?"})
    assert again.recalls == [] and not again.session.fresh_prefill and again.session.reused_tokens > 0


@pytest.mark.parametrize("config", [ASK, MODEL, MODEL.replace(ask_on_abstention=False)])
def test_a_session_whose_names_search_fails_is_left_as_it_was(config: RecallConfig):
    """A memory that raises during the check (``on_memory_error="raise"``) leaves the session's
    messages and cache as they were; the next turn goes on from the cache and replies as a session
    that never failed."""
    config = config.replace(on_memory_error="raise")
    session = RecallSession(_generator(), recall_config=config)
    session.reply(UNNAMED)
    before = session.messages
    failing = ListMemory({"m0": FACT}, fail=ConnectionError("server down"))
    with pytest.raises(ConnectionError):
        session.reply(NAMED[0], memory=failing)  # a new turn (a list would be the whole conversation)
    # the cache keeps what the turn's plan kept of it (the last reply's closing tokens are rendered again)
    assert session.messages == before and session.cache_tokens > 0
    kept = session.cache_tokens
    again = session.reply(NAMED[0])
    assert [r.trigger for r in again.recalls] == ["names"]
    assert not again.session.fresh_prefill and again.session.reused_tokens == kept
    never_failed = RecallSession(_generator(), recall_config=config)
    never_failed.reply(UNNAMED)
    assert again.text == never_failed.reply(NAMED[0]).text


def test_a_candidate_below_min_score_does_not_ask():
    """Only a candidate a recall may inject counts: the first ``top_k``, at least ``min_score``."""
    weak = FixedMemory("The user's dog is called Biscuit.", FACT)  # scores 1.0 and 0.9
    assert names_memory("What does Ingrid keep?", weak, RecallConfig())
    assert not names_memory("What does Ingrid keep?", weak, RecallConfig(min_score=0.95))
    assert not names_memory("What does Ingrid keep?", weak, RecallConfig(top_k=1))


def test_the_check_draws_nothing_from_the_random_generator():
    """Choosing notes may draw (``temperature`` above 0); the check only reads the candidates, so a
    seeded sampled reply does not depend on whether its question has names."""
    torch.manual_seed(3)
    names_memory("What does Ingrid keep?", FixedMemory(FACT, "Ingrid's hives."), RecallConfig(temperature=1.0))
    after = torch.rand(1)
    torch.manual_seed(3)
    assert torch.equal(after, torch.rand(1))


# --------------------------------------------------------------------------- served
@pytest.mark.parametrize("policy", ["ask", "model"])
def test_served_recalls_on_a_named_question_after_the_decision_request(policy: str):
    """The engine's one-token decision says no; the question's names send the notes with the call."""
    _, tokenizer = tiny_model("llama")
    client = declining_engine(tokenizer.eos_token_id)
    served = ServedRecallGenerator(client, tokenizer, context_window=512, memory=FixedMemory(FACT))
    result = served.generate(NAMED, config=RecallConfig(recall_policy=policy), max_new_tokens=6)
    prompt, sent = client.bodies[0]["prompt"], client.bodies[-1]["prompt"]
    assert len(client.bodies) == 2 and [r.trigger for r in result.recalls] == ["names"]
    assert result.recalls[0].length > 0 and len(sent) > len(prompt)


@pytest.mark.parametrize("policy", ["ask", "model"])
def test_a_constrained_reply_to_a_named_question_recalls_and_keeps_its_format(policy: str):
    """The abstention's check is skipped under a constraint (such a reply cannot be "I don't know."),
    the names' is not: the notes come first, and the constrained reply after them is valid JSON."""
    import json

    gen = _generator()
    got = gen.generate(NAMED, config=RecallConfig(recall_policy=policy), response_format={"type": "json_object"},
                       max_new_tokens=16)  # fmt: skip
    assert [r.trigger for r in got.recalls] == ["names"] and got.recalls[0].length > 0
    if got.finish_reason == "stop":  # the tiny model may run out of tokens mid-object
        json.loads(got.text)

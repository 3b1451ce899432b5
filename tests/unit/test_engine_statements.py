"""A user's message that asks nothing, under ``"auto"``: ``ask_on_statements`` lets the model decide
(as ``"ask"``), and ``own_recall_on_statements`` keeps its ``<recall>`` off the empty notes."""

from __future__ import annotations

import pytest
import torch

from recall_core import RecallConfig, RecallSession
from recall_core.decoding.ask import statement_config
from recall_core.serving import ServedRecallGenerator
from recall_core.serving.client import Completion
from recall_core.tokens import RECALL_TOKEN
from tests.helpers.engines import ScriptedEngine
from tests.helpers.memories import FixedMemory
from tests.helpers.tiny import tiny_model
from tests.unit.test_engine_ask import AUTO, Decided

FACT = "The user's new flat in Stockport is £720 a month."
NEWS = [{"role": "user", "content": "omg we got it!! the flat in stockport, moving in march 1st"}]
QUESTION = [{"role": "user", "content": "how much is the rent on my new flat"}]
STATEMENTS = RecallConfig(ask_on_statements=True)


def test_only_a_message_that_asks_nothing_runs_as_ask_on_the_models_decision_alone():
    ask = statement_config(STATEMENTS, NEWS[0]["content"])
    assert ask.recall_policy == "ask"
    assert not (ask.ask_on_abstention or ask.ask_on_refusal or ask.ask_on_names) and ask.ask_on_score == 0.0
    assert statement_config(STATEMENTS, QUESTION[0]["content"]) == STATEMENTS  # a question word, no "?"
    assert statement_config(STATEMENTS, None) == STATEMENTS  # a text prompt: no message to read
    assert statement_config(RecallConfig(), NEWS[0]["content"]).recall_policy == "ask"  # the default
    off = RecallConfig(ask_on_statements=False)
    assert statement_config(off, NEWS[0]["content"]) == off
    model = STATEMENTS.replace(recall_policy="model")
    assert statement_config(model, NEWS[0]["content"]) == model  # "auto" only


def _generator(asked: bool) -> Decided:
    model, tokenizer = tiny_model("llama")
    return Decided(model, tokenizer, memory=FixedMemory(FACT), generation_defaults={"max_new_tokens": 8}, asked=asked)


@pytest.mark.parametrize("asked", [False, True])
def test_news_gets_notes_only_when_the_model_asks(asked: bool):
    gen = _generator(asked)
    result = gen.generate(NEWS, config=STATEMENTS)
    assert gen.passes == 1  # the decision's pass ran
    assert any(r.memory_id is not None for r in result.recalls) is asked
    if not asked:
        assert result.usage.injected_tokens == 0 and not result.recalls


def test_a_question_is_autos_whatever_the_model_would_decide():
    gen = _generator(asked=False)
    got, expected = gen.generate(QUESTION, config=STATEMENTS), gen.generate(QUESTION, config=AUTO)
    assert gen.passes == 0 and torch.equal(got.sequences, expected.sequences)
    assert got.recalls[0].trigger == "prompt" and got.recalls[0].memory_id is not None


def test_a_session_reads_the_new_message_the_same_way():
    """The session decides with its own first pass on its cache; the tiny model does not ask."""
    gen = _generator(asked=False)
    session = RecallSession(gen, memory=FixedMemory(FACT), recall_config=STATEMENTS)
    news = session.reply(NEWS[0]["content"])
    assert news.usage.injected_tokens == 0 and not any(r.memory_id for r in news.recalls)
    asked = session.reply(QUESTION[0]["content"])
    assert asked.recalls[0].trigger == "prompt" and asked.recalls[0].memory_id is not None
    auto = RecallSession(gen, memory=FixedMemory(FACT), recall_config=AUTO.replace(ask_on_statements=False)).reply(
        NEWS[0]["content"])
    assert auto.recalls[0].memory_id is not None  # "auto" alone puts the notes before news too


def test_a_served_statement_is_decided_by_one_token_first():
    _, tokenizer = tiny_model("llama")
    end = tokenizer.eos_token_id
    decision = Completion(tokens=[5], stop_type="limit", logprobs=[{5: -0.1}])
    reply = Completion(tokens=[7, end], stop_type="eos", logprobs=[{7: -0.1}, {end: -0.1}])
    client = ScriptedEngine(decision, reply)
    generator = ServedRecallGenerator(client, tokenizer, context_window=512, memory=FixedMemory(FACT))
    result = generator.generate(NEWS, config=STATEMENTS, max_new_tokens=6)
    assert client.bodies[0]["n_predict"] == 1 and len(client.bodies) == 2
    assert not result.recalls and tokenizer.convert_tokens_to_ids(RECALL_TOKEN) not in client.bodies[1]["prompt"]


def test_a_session_keeps_its_cache_across_news_and_a_question():
    """A statement's turn is rendered as "auto" renders the conversation, less its marker: the
    question's turn after it reuses the cache (the whole conversation each call, as the adapters
    send it), and so does news after a question."""
    gen = _generator(asked=False)
    session = RecallSession(gen, memory=FixedMemory(FACT), recall_config=STATEMENTS)
    first = session.reply(NEWS)
    chat = [*NEWS, {"role": "assistant", "content": first.text}, *QUESTION]
    asked = session.reply(chat)
    assert session.last_report.reused_tokens > 0 and session.last_report.reason is None
    assert asked.recalls[0].memory_id is not None  # the question's notes, at the start of its message
    session.reply([*chat, {"role": "assistant", "content": asked.text}, *NEWS])
    assert session.last_report.reused_tokens > 0 and session.last_report.reason is None


@pytest.mark.parametrize("position", ["system", "user_start", "assistant_start"])
def test_a_statement_is_decided_on_autos_rendering_less_its_marker(position: str):
    gen = _generator(asked=False)
    seen = []
    first_pass = gen._first_pass
    gen._first_pass = lambda ids, config: (seen.append(ids), first_pass(ids, config))[1]
    config = STATEMENTS.replace(recall_position=position)
    result = gen.generate(NEWS, config=config)
    recall_id = gen.tokenizer.convert_tokens_to_ids(RECALL_TOKEN)
    auto = gen.encode(NEWS, config=config)[0].tolist()
    assert auto.count(recall_id) == 1 and seen[0][0].tolist() == [i for i in auto if i != recall_id]
    assert result.sequences[0, : seen[0].shape[1]].tolist() == seen[0][0].tolist()  # the reply goes on from them


def test_a_statement_not_asked_in_a_session_replies_as_generate_does():
    gen = _generator(asked=False)
    session = RecallSession(gen, memory=FixedMemory(FACT), recall_config=STATEMENTS)
    got, expected = session.reply(NEWS), gen.generate(NEWS, config=STATEMENTS)
    assert got.text == expected.text and got.session.prefilled_tokens == expected.usage.prompt_tokens

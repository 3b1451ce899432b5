"""``ask_on_refusal``: with ``ask_on_abstention``, a reply that would open with an apology or a
disclaimer ("I'm sorry for any confusion, but ...") without memory gives up as surely as "I don't
know." (recall_core/decoding/abstain.py, recall_core/decoding/ask.py): in process, in a session, served."""

from __future__ import annotations

import math

import pytest
import torch

import recall_core.decoding.ask as ask_module
from recall_core import RecallConfig
from recall_core.decoding.abstain import GIVES_UP_TOKENS, REFUSAL_TOKENS, REFUSALS, abstention_ids, gives_up
from recall_core.decoding.ask import ReplyReader, read_limit, reads_abstention, reads_text
from recall_core.serving import ServedRecallGenerator
from recall_core.serving.client import Completion
from recall_core.tokens import RECALL_TOKEN
from tests.helpers import reading
from tests.helpers.engines import ScriptedEngine
from tests.helpers.logits import greedy_steps, scripted_run
from tests.helpers.memories import FixedMemory
from tests.helpers.tiny import tiny_model

# ask_on_score off: the test memories' candidates score up to 1.0, which would ask on every call (test_engine_ask_score.py)
MODEL = RecallConfig(recall_policy="model", ask_on_refusal=True, ask_on_score=0.0)
ASK = RecallConfig(recall_policy="ask", ask_on_refusal=True, ask_on_score=0.0)


# -- the text ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "verdict"), [
    ("I'm sorry for any confusion, but as a travel company's help desk, I", True),
    ("I am sorry, I can't", True), ("Sorry, I can't see that.", True), ("Sorry!", True),
    ("I apologize for the confusion.", True), ("I apologise, but", True), ("My apologies, I", True),
    ("Unfortunately, I don't have access to", True), ("As an AI, I don't", True),
    ("As a language model, I", True), ("I'm not sure.", True), ("I am not sure what", True),
    ("I don't know.", True),  # the abstention still counts
    ("I\u2019m sorry, but", True), ("I don\u2019t know.", True),  # typeset apostrophes
    ("Sorrowful news.", False), ("As an AIrline", False), ("Iceland.", False), ("I'm Dr. Emma", False),
    ("The dog is called Rex.", False), ("Of course. 1967.", False),
    ("Good question. I'm sorry for any confusion.", False),  # after an opener: only with openers
    ("Sorry", None), ("I'm sorry", None), ("I'm", None), ("I", None), ("As an", None), ("", None),
])  # fmt: skip
def test_a_reply_opening_with_a_refusal_gives_up(text: str, verdict: bool | None):
    assert gives_up(text, openers=False, refusals=True) is verdict


def test_refusals_count_only_when_asked_for_and_after_openers_with_openers():
    assert gives_up("I'm sorry for any confusion, but", openers=False) is False
    long = "I'm sorry for any confusion, but as a travel company's help desk, I specialise in"
    assert gives_up(long) is False and gives_up(long, refusals=True) is True  # openers alone: the abstention only
    assert gives_up("Good question. I'm sorry for any confusion.", refusals=True) is True
    assert gives_up("Good question.  I'm here to help with any kind of question.", refusals=True) is False
    assert all(gives_up(f"{refusal}, but", openers=False, refusals=True) for refusal in REFUSALS)


# -- reading a reply greedily -----------------------------------------------------------------

WORDS = {2: "I", 3: "'m", 4: " sorry", 5: " for", 6: "The", 7: " dog", 8: " is"}
END = 10
READER = ReplyReader(decode=lambda ids: "".join(WORDS.get(i, "?") for i in ids), ends=frozenset({END}),
                     openers=False, refusals=True, limit=REFUSAL_TOKENS)  # fmt: skip
ABSTENTION = (11, 12)  # the abstention's own ids: the replies here do not open with them


def test_a_refusal_is_read_one_greedy_id_at_a_time_until_its_word_ends():
    run, ran = scripted_run(2, 3, 4, 5, 7)
    assert reads_abstention(greedy_steps(2)[0], run, ABSTENTION, 0, 1, READER)
    assert ran == [[2], [3], [4]]  # "I'm sorry" may still be "I'm sorrowful": " for" says it is not


def test_a_first_word_that_opens_nothing_costs_no_step():
    run, ran = scripted_run(6, 7, 8)
    assert not reads_abstention(greedy_steps(6)[0], run, ABSTENTION, 0, 1, READER)
    assert ran == []
    run, ran = scripted_run(2, 7, 8)  # "I dog": no longer the start of anything looked for
    assert not reads_abstention(greedy_steps(2)[0], run, ABSTENTION, 0, 1, READER)
    assert ran == [[2]]


def test_the_reading_stops_at_the_replys_end_or_its_limit():
    run, ran = scripted_run(2, 3, END, 4)
    assert not reads_abstention(greedy_steps(2)[0], run, ABSTENTION, 0, 1, READER)
    assert ran == [[2], [3]]
    never_done = ReplyReader(decode=lambda ids: "I", openers=False, refusals=True, limit=REFUSAL_TOKENS)
    run, ran = scripted_run(*[2] * (GIVES_UP_TOKENS + 5))
    assert not reads_abstention(greedy_steps(2)[0], run, ABSTENTION, 0, 1, never_done)
    assert len(ran) == REFUSAL_TOKENS - 1


def test_what_the_config_reads_and_the_room_it_needs():
    assert RecallConfig().ask_on_refusal and read_limit(RecallConfig()) == REFUSAL_TOKENS  # the default
    assert read_limit(RecallConfig(ask_on_refusal=False)) == 0
    assert read_limit(MODEL) == REFUSAL_TOKENS
    assert read_limit(MODEL.replace(ask_after_openers=True)) == GIVES_UP_TOKENS
    reader = ReplyReader.of(None, (END,), MODEL)
    assert (reader.openers, reader.refusals, reader.limit) == (False, True, REFUSAL_TOKENS)
    assert ReplyReader.wanted(None, (END,), RecallConfig(ask_on_refusal=False)) is None
    assert reads_text(MODEL, 100, 100 + REFUSAL_TOKENS) and not reads_text(MODEL, 100, 100 + REFUSAL_TOKENS - 1)
    with pytest.raises(ValueError, match="ask_on_refusal"):
        RecallConfig(ask_on_refusal="yes")


# -- in the engine (the tiny model; its own greedy reply stands in for a refusal) ----------------


def test_model_opens_with_recall_when_the_reply_would_refuse(monkeypatch):
    gen = reading.reading_generator()
    calls = reading.gives_up_on(monkeypatch, gen, 3)
    reading.assert_model_opens_with_recall(gen, MODEL)
    assert calls and all(c == {"openers": False, "refusals": True} for c in calls)


def test_a_reply_that_does_not_refuse_is_the_models_token_for_token(monkeypatch):
    gen = reading.reading_generator()
    reading.gives_up_on(monkeypatch, gen, None)
    reading.assert_unasked_reply_is_the_models(gen, ASK)


def test_ask_recalls_when_the_reply_would_refuse_and_runs_as_auto(monkeypatch):
    gen = reading.reading_generator()
    reading.gives_up_on(monkeypatch, gen, 2)
    got = gen.generate(reading.CHAT, config=ASK)
    assert [r.trigger for r in got.recalls] == ["abstention"]
    assert torch.equal(got.sequences, reading.plain(gen, reading.AUTO).sequences)


def test_turned_off_no_text_is_read(monkeypatch):
    """Without ``ask_on_refusal`` only the abstention's own ids are checked (the tiny reply does
    not open with them), and the reply is ``"model"``'s without a recall."""
    gen = reading.reading_generator()
    calls = reading.gives_up_on(monkeypatch, gen, 1)
    got = gen.generate(reading.CHAT, config=ASK.replace(ask_on_refusal=False))
    assert calls == [] and got.recalls == [] and torch.equal(got.sequences, reading.plain(gen, reading.DECLINED).sequences)


@pytest.mark.parametrize("n", [2, None])
def test_a_session_reads_the_refusal_on_its_cache_and_goes_on_from_it(monkeypatch, n: int | None):
    gen = reading.reading_generator()
    reading.gives_up_on(monkeypatch, gen, n)
    reading.assert_session_reads_on_its_cache(gen, ASK, gives_up=n is not None)


def test_where_the_reading_would_not_fit_only_the_abstention_is_checked(monkeypatch):
    gen = reading.reading_generator()
    calls = reading.gives_up_on(monkeypatch, gen, 1)
    length = gen.encode(reading.CHAT, config=ASK).shape[1]
    monkeypatch.setattr(gen.model.config, "max_position_embeddings", length + REFUSAL_TOKENS - 1)
    got = gen.generate(reading.CHAT, config=ASK, max_new_tokens=1)
    assert calls == [] and got.recalls == []


# -- served: one greedy request of REFUSAL_TOKENS, only when the first token can open one --------


@pytest.mark.parametrize(("first", "said", "asked"), [
    ("I", "I'm sorry for any confusion, but", True), ("I", "I'm here to help with", False),
    ("I", "I don't know.", True), ("recall", "Unfortunately, I do not", True), ("word", None, False),
])  # fmt: skip
def test_served_reads_a_refusal_with_one_greedy_request(monkeypatch, first: str, said: str | None, asked: bool):
    """The tiny tokenizer spells most words a letter or two at a time: the request is made long
    enough for these texts here (the shipped tokenizer's fit in ``REFUSAL_TOKENS``:
    tests/integration/test_held_out_cases.py)."""
    monkeypatch.setattr(ask_module, "REFUSAL_TOKENS", 40)
    _, tokenizer = tiny_model("llama")
    recall_id, end = tokenizer.convert_tokens_to_ids(RECALL_TOKEN), tokenizer.eos_token_id
    word = next(t for t in range(5, 500) if gives_up(tokenizer.decode([t]), openers=False, refusals=True) is False)
    token = {"I": abstention_ids(tokenizer)[0], "recall": recall_id, "word": word}[first]
    decision = Completion(tokens=[token], stop_type="limit", logprobs=[{token: math.log(0.3)}])
    reply = Completion(tokens=[7, end], stop_type="eos", logprobs=[{7: -0.1}, {end: -0.1}])
    checks = []
    if said is not None:
        tokens = tokenizer.encode(said, add_special_tokens=False)
        checks = [Completion(tokens=tokens, stop_type="limit", logprobs=[{t: -0.1} for t in tokens])]
    client = ScriptedEngine(decision, *checks, reply)
    served = ServedRecallGenerator(client, tokenizer, context_window=512, memory=FixedMemory(reading.FACT))
    result = served.generate(reading.CHAT, config=ASK, max_new_tokens=6)
    assert [r.trigger for r in result.recalls] == (["abstention"] if asked else [])
    assert len(client.bodies) == 2 + len(checks)
    if checks:
        assert client.bodies[1]["n_predict"] == 40
        assert [recall_id, False] in client.bodies[1]["logit_bias"]

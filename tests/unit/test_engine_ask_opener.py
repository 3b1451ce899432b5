"""``ask_after_openers``: with ``ask_on_abstention``, a reply that would be "Of course. I don't know."
without memory gives up as surely as one that opens with "I don't know." (recall_core/decoding/abstain.py,
recall_core/decoding/ask.py). The served check is in tests/unit/test_engine_ask.py."""

from __future__ import annotations

import pytest
import torch

from recall_core import RecallConfig
from recall_core.decoding.abstain import GIVES_UP_TOKENS, OPENER_WORDS, gives_up
from recall_core.decoding.ask import ReplyReader, reads_abstention
from tests.helpers import reading
from tests.helpers.logits import greedy_steps, scripted_run

# ask_on_score off: the test memories' candidates score up to 1.0, which would ask on every call (test_engine_ask_score.py)
ASK = RecallConfig(recall_policy="ask", ask_after_openers=True, ask_on_score=0.0)
MODEL = RecallConfig(recall_policy="model", ask_after_openers=True, ask_on_score=0.0)


# -- the text ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "verdict"), [
    ("I don't know.", True),
    ("Of course. I don't know.", True),
    ("Sure! I don't know.", True),
    ("Sure, I don't know.", True),
    ("  Of course.\n\nI don't know. Is there anything else?", True),
    ("Of course.  I'm sorry for any misunderstanding.  I don't know.", True),  # sentences of 2 and 5 words
    ("Sure! 1. I don't know. 2. I don't know.", True),
    ("Of course\nI don't know.", True),  # a line's end ends a sentence too
    ("That is a great question for me! I don't know.", False),  # seven words: an answer's first sentence
    ("Of course. Your dog is called Biscuit and he loves the beach.", False),
    ("The capital of Portugal is the city of Lisbon.", False),
    ("I don", None), ("Of course.", None), ("Of course. I don't", None), ("Sure", None), ("", None),
    ("Your dog is called Biscuit.", None),  # short: it could still go on to give up
    ("Hello! How can I help you today?", None),
])  # fmt: skip
def test_the_text_gives_up_before_it_says_anything(text: str, verdict: bool | None):
    assert gives_up(text) is verdict


def test_every_sentence_before_the_abstention_has_at_most_opener_words_words():
    short, long = " ".join(["word"] * OPENER_WORDS), " ".join(["word"] * (OPENER_WORDS + 1))
    assert gives_up(f"{short}. {short}! I don't know.") is True
    assert gives_up(f"{short}. {long}! I don't know.") is False
    assert gives_up(long) is False  # no need to read further


# -- reading a reply greedily -----------------------------------------------------------------

WORDS = {2: "Sure!", 3: " I", 4: " don't", 5: " know.", 6: " Your dog is called Rex", 7: " and he loves the beach."}
END = 10
READER = ReplyReader(decode=lambda ids: "".join(WORDS.get(i, "<end>") for i in ids), ends=frozenset({END}))
ABSTENTION = (11, 12)  # the abstention's own ids: the reply does not open with them


def test_a_reply_that_gives_up_after_an_opener_is_read_one_greedy_id_at_a_time():
    run, ran = scripted_run(2, 3, 4, 5, 6)
    assert reads_abstention(greedy_steps(2)[0], run, ABSTENTION, 0, 1, READER)
    assert ran == [[2], [3], [4]]  # each id run after the one before; no further than the text tells


def test_an_answer_stops_the_reading_as_soon_as_the_text_tells():
    run, ran = scripted_run(2, 6, 7, 3, 4, 5)
    assert not reads_abstention(greedy_steps(2)[0], run, ABSTENTION, 0, 1, READER)
    assert ran == [[2], [6]]  # "Sure! Your dog is called Rex and he loves the beach.": too long for an opener


def test_the_end_of_the_reply_or_the_budget_stops_the_reading():
    run, ran = scripted_run(2, END, 3, 4, 5)
    assert not reads_abstention(greedy_steps(2)[0], run, ABSTENTION, 0, 1, READER)
    assert ran == [[2]]  # "Sure!" and the end: what the model would say after it is not the reply
    never_done = ReplyReader(decode=lambda ids: "I", ends=frozenset())  # always "too short to tell"
    run, ran = scripted_run(*[3] * (GIVES_UP_TOKENS + 5))
    assert not reads_abstention(greedy_steps(3)[0], run, ABSTENTION, 0, 1, never_done)
    assert len(ran) == GIVES_UP_TOKENS - 1


def test_with_a_reader_a_reply_opening_with_the_abstentions_first_id_is_read_too():
    """"I see. I don't know." opens with the abstention's first id: read greedily, not teacher-forced."""
    reader = ReplyReader(decode=lambda ids: "".join({11: "I", 13: " see.", **WORDS}.get(i, "?") for i in ids))
    run, ran = scripted_run(11, 13, 3, 4, 5)
    assert reads_abstention(greedy_steps(11)[0], run, ABSTENTION, 0, 1, reader)
    assert ran == [[11], [13], [3], [4]]


def test_without_a_reader_or_an_abstention_nothing_is_read():
    run, ran = scripted_run(2, 3, 4, 5)
    assert not reads_abstention(greedy_steps(2)[0], run, ABSTENTION, 0, 1)
    assert not reads_abstention(greedy_steps(2)[0], run, (), 0, 1, READER)
    assert ran == []


# -- in the engine (the tiny model; its own greedy reply stands in for the one that gives up) ----


@pytest.mark.parametrize("n", [2, 3])
def test_ask_recalls_when_the_reply_gives_up_after_an_opener_and_runs_as_auto(monkeypatch, n: int):
    gen = reading.reading_generator()
    reading.gives_up_on(monkeypatch, gen, n)
    traced = []
    got = gen.generate(reading.CHAT, config=ASK, on_recall=traced.append)
    expected = reading.plain(gen, reading.AUTO)
    assert torch.equal(got.sequences, expected.sequences) and got.recalls[0].length > 0
    assert [r.trigger for r in got.recalls] == [r.trigger for r in traced] == ["abstention"]


def test_ask_not_recalling_after_reading_the_reply_is_models_reply_token_for_token(monkeypatch):
    gen = reading.reading_generator()
    reading.gives_up_on(monkeypatch, gen, None)
    reading.assert_unasked_reply_is_the_models(gen, ASK)


def test_model_opens_with_recall_when_the_reply_gives_up_after_an_opener(monkeypatch):
    gen = reading.reading_generator()
    reading.gives_up_on(monkeypatch, gen, 3)
    reading.assert_model_opens_with_recall(gen, MODEL)


@pytest.mark.parametrize("n", [3, None])
def test_a_session_reads_the_reply_on_its_cache_and_goes_on_from_it(monkeypatch, n: int | None):
    gen = reading.reading_generator()
    reading.gives_up_on(monkeypatch, gen, n)
    reading.assert_session_reads_on_its_cache(gen, ASK, gives_up=n is not None)


def test_off_by_default_nothing_past_the_first_token_is_read(monkeypatch):
    """Without ``ask_after_openers`` (the default) a reply that gives up after an opener does not
    ask, and the call is ``"model"``'s without a recall, as before the option. (``ask_on_refusal``,
    on by default, reads the reply's first words for a refusal: off here, so that nothing is read.)"""
    gen = reading.reading_generator()
    calls = reading.gives_up_on(monkeypatch, gen, 2)
    assert not RecallConfig().ask_after_openers
    got = gen.generate(reading.CHAT, config=ASK.replace(ask_after_openers=False, ask_on_refusal=False))
    assert calls == [] and got.recalls == []
    assert torch.equal(got.sequences, reading.plain(gen, reading.DECLINED).sequences)


def test_ask_after_openers_must_be_a_bool():
    with pytest.raises(ValueError, match="ask_after_openers"):
        RecallConfig(ask_after_openers="yes")


def test_where_24_ids_would_not_fit_only_the_replys_start_is_checked(monkeypatch):
    """``ask_after_openers`` needs room for ``GIVES_UP_TOKENS`` ids; without it the abstention is
    still checked at the reply's start (teacher-forced), as with the option off."""
    import recall_core.generator as generator_module

    gen = reading.reading_generator()
    said = tuple(reading.plain(gen, reading.DECLINED, max_new_tokens=3).sequences[0, -3:].tolist())
    monkeypatch.setattr(generator_module, "abstention_ids", lambda _: said)  # the tiny reply "gives up"
    length = gen.encode(reading.CHAT, config=ASK).shape[1]
    monkeypatch.setattr(gen.model.config, "max_position_embeddings", length + len(said) + 1)
    got = gen.generate(reading.CHAT, config=ASK, max_new_tokens=1)
    assert [r.trigger for r in got.recalls] == ["abstention"]  # the start check ran, teacher-forced
    monkeypatch.setattr(gen.model.config, "max_position_embeddings", 2048)
    read = gen.generate(reading.CHAT, config=ASK, max_new_tokens=1)
    assert read.recalls == []  # with room the text is read, and the tiny model's bytes do not give up

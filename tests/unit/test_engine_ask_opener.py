"""``ask_after_openers``: with ``ask_on_abstention``, a reply that would be "Of course. I don't know."
without memory gives up as surely as one that opens with "I don't know." (recall_core/decoding/abstain.py,
recall_core/decoding/ask.py). The served check is in tests/unit/test_engine_ask.py."""

from __future__ import annotations

import pytest
import torch

import recall_core.decoding.ask as ask_module
from recall_core import RecallConfig, RecallGenerator, RecallSession
from recall_core.decoding.abstain import GIVES_UP_TOKENS, OPENER_WORDS, abstention_ids, gives_up
from recall_core.decoding.ask import ReplyReader, reads_abstention
from recall_core.prompt import with_system_prompt
from recall_core.tokens import RECALL_TOKEN
from tests.helpers.memories import FixedMemory
from tests.helpers.tiny import tiny_model

FACT = "The user's dog is called Biscuit."
CHAT = [{"role": "user", "content": "What is my dog called?"}]
ASK = RecallConfig(recall_policy="ask", ask_after_openers=True)
MODEL = RecallConfig(recall_policy="model", ask_after_openers=True)
AUTO = RecallConfig(recall_policy="auto")
DECLINED = RecallConfig(recall_policy="model", max_recalls=0)


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


def _steps(*tokens: int) -> torch.Tensor:
    """Logits whose greedy token at each step is ``tokens[i]`` once ``<recall>`` (0) and pads (1) are masked."""
    logits = torch.zeros(len(tokens), 16)
    for i, token in enumerate(tokens):
        logits[i, token] = 5.0
        logits[i, 0] = logits[i, 1] = 9.0
    return logits


def _greedy(*reply: int):
    """A ``run`` that answers each id with the next of ``reply``'s; what it was run on is in ``ran``."""
    ran: list[list[int]] = []

    def run(ids: list[int]) -> torch.Tensor:
        ran.append(ids)
        return _steps(reply[len(ran)])

    return run, ran


READER = ReplyReader(decode=lambda ids: "".join(WORDS.get(i, "<end>") for i in ids), ends=frozenset({END}))
ABSTENTION = (11, 12)  # the abstention's own ids: the reply does not open with them


def test_a_reply_that_gives_up_after_an_opener_is_read_one_greedy_id_at_a_time():
    run, ran = _greedy(2, 3, 4, 5, 6)
    assert reads_abstention(_steps(2)[0], run, ABSTENTION, 0, 1, READER)
    assert ran == [[2], [3], [4]]  # each id run after the one before; no further than the text tells


def test_an_answer_stops_the_reading_as_soon_as_the_text_tells():
    run, ran = _greedy(2, 6, 7, 3, 4, 5)
    assert not reads_abstention(_steps(2)[0], run, ABSTENTION, 0, 1, READER)
    assert ran == [[2], [6]]  # "Sure! Your dog is called Rex and he loves the beach.": too long for an opener


def test_the_end_of_the_reply_or_the_budget_stops_the_reading():
    run, ran = _greedy(2, END, 3, 4, 5)
    assert not reads_abstention(_steps(2)[0], run, ABSTENTION, 0, 1, READER)
    assert ran == [[2]]  # "Sure!" and the end: what the model would say after it is not the reply
    never_done = ReplyReader(decode=lambda ids: "I", ends=frozenset())  # always "too short to tell"
    run, ran = _greedy(*[3] * (GIVES_UP_TOKENS + 5))
    assert not reads_abstention(_steps(3)[0], run, ABSTENTION, 0, 1, never_done)
    assert len(ran) == GIVES_UP_TOKENS - 1


def test_with_a_reader_a_reply_opening_with_the_abstentions_first_id_is_read_too():
    """"I see. I don't know." opens with the abstention's first id: read greedily, not teacher-forced."""
    reader = ReplyReader(decode=lambda ids: "".join({11: "I", 13: " see.", **WORDS}.get(i, "?") for i in ids))
    run, ran = _greedy(11, 13, 3, 4, 5)
    assert reads_abstention(_steps(11)[0], run, ABSTENTION, 0, 1, reader)
    assert ran == [[11], [13], [3], [4]]


def test_without_a_reader_or_an_abstention_nothing_is_read():
    run, ran = _greedy(2, 3, 4, 5)
    assert not reads_abstention(_steps(2)[0], run, ABSTENTION, 0, 1)
    assert not reads_abstention(_steps(2)[0], run, (), 0, 1, READER)
    assert ran == []


# -- in the engine (the tiny model; its own greedy reply stands in for the one that gives up) ----


def _generator() -> RecallGenerator:
    model, tokenizer = tiny_model("llama")
    return RecallGenerator(model, tokenizer, memory=FixedMemory(FACT), generation_defaults={"max_new_tokens": 8})


def _plain(gen: RecallGenerator, config: RecallConfig, chat=CHAT, **kwargs):
    return RecallGenerator.generate(gen, chat, config=config, **kwargs)


def _gives_up_on(monkeypatch: pytest.MonkeyPatch, gen: RecallGenerator, n: int | None) -> None:
    """The check's text test says the tiny model's greedy reply gives up once it has ``n`` ids
    (``None``: never), and the reply does not open with the abstention's first id."""
    reply = _plain(gen, DECLINED, max_new_tokens=4).sequences[0, -4:].tolist()
    assert abstention_ids(gen.tokenizer)[0] != reply[0]
    decoded = [gen.tokenizer.decode(reply[:k], skip_special_tokens=True) for k in range(1, 5)]

    def said(text: str) -> bool | None:
        if n is not None and text == decoded[n - 1]:
            return True
        return None if text in decoded[: (n or 4) - 1] else False

    monkeypatch.setattr(ask_module, "gives_up", said)


@pytest.mark.parametrize("n", [2, 3])
def test_ask_recalls_when_the_reply_gives_up_after_an_opener_and_runs_as_auto(monkeypatch, n: int):
    gen = _generator()
    _gives_up_on(monkeypatch, gen, n)
    traced = []
    got = gen.generate(CHAT, config=ASK, on_recall=traced.append)
    expected = _plain(gen, AUTO)
    assert torch.equal(got.sequences, expected.sequences) and got.recalls[0].length > 0
    assert [r.trigger for r in got.recalls] == [r.trigger for r in traced] == ["abstention"]


def test_ask_not_recalling_after_reading_the_reply_is_models_reply_token_for_token(monkeypatch):
    """The greedy ids the check ran are cropped from the cache the reply goes on from."""
    gen = _generator()
    _gives_up_on(monkeypatch, gen, None)
    for sampling in ({"do_sample": False}, {"do_sample": True, "temperature": 0.8, "top_k": 20}):
        torch.manual_seed(7)
        got = gen.generate(CHAT, config=ASK, **sampling)
        torch.manual_seed(7)
        expected = _plain(gen, DECLINED, **sampling)
        assert got.recalls == [] and torch.equal(got.sequences, expected.sequences)


def test_model_opens_with_recall_when_the_reply_gives_up_after_an_opener(monkeypatch):
    gen = _generator()
    _gives_up_on(monkeypatch, gen, 3)
    got = gen.generate(CHAT, config=MODEL)
    ids = gen.encode(CHAT, config=MODEL)
    recall_id = gen.tokenizer.convert_tokens_to_ids(RECALL_TOKEN)
    marked = torch.cat([ids, ids.new_full((1, 1), recall_id)], dim=-1)
    expected = gen.generate_ids(marked, recall_query=CHAT[-1]["content"], config=MODEL, max_new_tokens=8)
    assert torch.equal(got.sequences, expected.sequences)
    assert [r.trigger for r in got.recalls] == ["abstention"] and FACT in got.recalls[0].text


@pytest.mark.parametrize("n", [3, None])
def test_a_session_reads_the_reply_on_its_cache_and_goes_on_from_it(monkeypatch, n: int | None):
    gen = _generator()
    _gives_up_on(monkeypatch, gen, n)
    session = RecallSession(gen, recall_config=ASK)
    got = session.reply(CHAT)
    chat = with_system_prompt(CHAT, ASK.system_prompt)
    if n is None:
        assert got.recalls == [] and got.text == _plain(gen, DECLINED, chat).text
    else:
        assert [r.trigger for r in got.recalls] == ["abstention"]
        assert got.text == _plain(gen, AUTO.replace(recall_position="user_start"), chat).text
    again = session.reply({"role": "user", "content": "And my cat?"})
    assert not again.session.fresh_prefill and again.session.reused_tokens > 0


def test_off_by_default_nothing_past_the_first_token_is_read(monkeypatch):
    """Without ``ask_after_openers`` (the default) a reply that gives up after an opener does not
    ask, and the call is ``"model"``'s without a recall, as before the option."""
    gen = _generator()
    _gives_up_on(monkeypatch, gen, 2)
    assert not RecallConfig().ask_after_openers
    got = gen.generate(CHAT, config=ASK.replace(ask_after_openers=False))
    assert got.recalls == [] and torch.equal(got.sequences, _plain(gen, DECLINED).sequences)


def test_ask_after_openers_must_be_a_bool():
    with pytest.raises(ValueError, match="ask_after_openers"):
        RecallConfig(ask_after_openers="yes")


def test_where_24_ids_would_not_fit_only_the_replys_start_is_checked(monkeypatch):
    """``ask_after_openers`` needs room for ``GIVES_UP_TOKENS`` ids; without it the abstention is
    still checked at the reply's start (teacher-forced), as with the option off."""
    import recall_core.generator as generator_module

    gen = _generator()
    said = tuple(_plain(gen, DECLINED, max_new_tokens=3).sequences[0, -3:].tolist())
    monkeypatch.setattr(generator_module, "abstention_ids", lambda _: said)  # the tiny reply "gives up"
    length = gen.encode(CHAT, config=ASK).shape[1]
    monkeypatch.setattr(gen.model.config, "max_position_embeddings", length + len(said) + 1)
    got = gen.generate(CHAT, config=ASK, max_new_tokens=1)
    assert [r.trigger for r in got.recalls] == ["abstention"]  # the start check ran, teacher-forced
    monkeypatch.setattr(gen.model.config, "max_position_embeddings", 2048)
    read = gen.generate(CHAT, config=ASK, max_new_tokens=1)
    assert read.recalls == []  # with room the text is read, and the tiny model's bytes do not give up

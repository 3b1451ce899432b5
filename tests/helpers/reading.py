"""The tiny model's own greedy reply standing in for one that gives up, for the tests of the
checks that read a reply without memory as text (``ask_after_openers``, ``ask_on_refusal``)."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import recall_core.decoding.ask as ask_module
from recall_core import RecallConfig, RecallGenerator, RecallSession
from recall_core.decoding.abstain import abstention_ids
from recall_core.prompt import with_system_prompt
from recall_core.tokens import RECALL_TOKEN
from tests.helpers.memories import FixedMemory
from tests.helpers.tiny import tiny_model

FACT = "The user's dog is called Biscuit."
CHAT = [{"role": "user", "content": "What is my dog called?"}]
AUTO = RecallConfig(recall_policy="auto")
DECLINED = RecallConfig(recall_policy="model", max_recalls=0)


def reading_generator() -> RecallGenerator:
    """The tiny model with :data:`FACT` in its memory."""
    model, tokenizer = tiny_model("llama")
    return RecallGenerator(model, tokenizer, memory=FixedMemory(FACT), generation_defaults={"max_new_tokens": 8})


def plain(gen: RecallGenerator, config: RecallConfig, chat: list[dict[str, str]] = CHAT, **kwargs: Any) -> Any:
    """The base class's ``generate`` (no subclass's scripted decision)."""
    return RecallGenerator.generate(gen, chat, config=config, **kwargs)


def gives_up_on(monkeypatch: pytest.MonkeyPatch, gen: RecallGenerator, n: int | None) -> list[dict[str, Any]]:
    """The check's text test says the tiny model's greedy reply gives up once it has ``n`` ids
    (``None``: never); returns the options (``openers``, ``refusals``) it is called with. The
    reply does not open with the abstention's first id, so only the text test can ask on it."""
    reply = plain(gen, DECLINED, max_new_tokens=4).sequences[0, -4:].tolist()
    assert abstention_ids(gen.tokenizer)[0] != reply[0]
    decoded = [gen.tokenizer.decode(reply[:k], skip_special_tokens=True) for k in range(1, 5)]
    calls: list[dict[str, Any]] = []

    def said(text: str, **options: Any) -> bool | None:
        calls.append(options)
        if n is not None and text == decoded[n - 1]:
            return True
        return None if text in decoded[: (n or 4) - 1] else False

    monkeypatch.setattr(ask_module, "gives_up", said)
    return calls


def assert_model_opens_with_recall(gen: RecallGenerator, config: RecallConfig) -> None:
    """Under ``"model"`` the reply is the one the prompt with ``<recall>`` after it gets, traced ``"abstention"``."""
    got = gen.generate(CHAT, config=config)
    ids = gen.encode(CHAT, config=config)
    recall_id = gen.tokenizer.convert_tokens_to_ids(RECALL_TOKEN)
    marked = torch.cat([ids, ids.new_full((1, 1), recall_id)], dim=-1)
    expected = gen.generate_ids(marked, recall_query=CHAT[-1]["content"], config=config, max_new_tokens=8)
    assert torch.equal(got.sequences, expected.sequences)
    assert [r.trigger for r in got.recalls] == ["abstention"] and FACT in got.recalls[0].text


def assert_unasked_reply_is_the_models(gen: RecallGenerator, config: RecallConfig) -> None:
    """Not asked, the reply is ``"model"``'s without recall token for token, greedy and sampled:
    the greedy ids the check ran are cropped from the cache the reply goes on from."""
    for sampling in ({"do_sample": False}, {"do_sample": True, "temperature": 0.8, "top_k": 20}):
        torch.manual_seed(7)
        got = gen.generate(CHAT, config=config, **sampling)
        torch.manual_seed(7)
        expected = plain(gen, DECLINED, **sampling)
        assert got.recalls == [] and torch.equal(got.sequences, expected.sequences)


def assert_session_reads_on_its_cache(gen: RecallGenerator, config: RecallConfig, gives_up: bool) -> None:
    """A ``"ask"`` session reads the reply on its cache: asked (``gives_up``), the reply is
    ``"auto"``'s with the notes at the user message's start; not, ``"model"``'s without recall;
    the next turn reuses the cache either way."""
    session = RecallSession(gen, recall_config=config)
    got = session.reply(CHAT)
    chat = with_system_prompt(CHAT, config.system_prompt)
    if not gives_up:
        assert got.recalls == [] and got.text == plain(gen, DECLINED, chat).text
    else:
        assert [r.trigger for r in got.recalls] == ["abstention"]
        assert got.text == plain(gen, AUTO.replace(recall_position="user_start"), chat).text
    again = session.reply({"role": "user", "content": "And my cat?"})
    assert not again.session.fresh_prefill and again.session.reused_tokens > 0

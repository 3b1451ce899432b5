"""``Mixture.chat``: a user's own messages from the training families, answered as the base model answers them."""

from __future__ import annotations

import random

import pytest

from recall_core import RecallConfig
from recall_core.training import family_data
from recall_core.training.examples import IGNORE, ExampleBuilder, Mixture
from recall_core.training.families import base
from recall_core.training.lora import TrainConfig, base_replies, build_examples, distilled_examples
from tests.helpers.tiny import tiny_model

FAMILIES = ("templated", "people")


@pytest.fixture(scope="module")
def users():
    return family_data.family_users(FAMILIES, 1)


def turn(content: str, session: int = 1, role: str = "user", speaker: str = "") -> base.Turn:
    return base.Turn(role, content, session, "2026-01-01T10:00", 0, speaker=speaker)


def one_user(*turns: base.Turn) -> dict[str, list[base.User]]:
    user = base.User("u", list(turns))
    return {"templated": [user]}


def test_a_message_is_one_to_three_of_one_sessions_user_turns_in_order():
    user = one_user(turn("A."), turn("Ok!", role="assistant"), turn("B."), turn("C."), turn("D."), turn("E.", session=2))
    messages = family_data.chat_messages(user, 100, random.Random(0))
    assert sorted(messages) == sorted(["A.", "B.", "C.", "D.", "E.", "A. B.", "B. C.", "C. D.", "A. B. C.", "B. C. D."])


def test_questions_assistant_turns_and_named_speakers_are_left_out():
    user = one_user(turn("Where is my cat?"), turn("Sure, here.", role="assistant"), turn("Rafe: I ski.", speaker="Rafe"),
                    turn("I moved to Leeds."))  # fmt: skip
    assert family_data.chat_messages(user, 10, random.Random(0)) == ["I moved to Leeds."]


def test_messages_are_distinct_deterministic_and_at_most_n(users):
    first = family_data.chat_messages(users, 30, random.Random("chat-0"))
    assert first == family_data.chat_messages(users, 30, random.Random("chat-0"))
    assert len(first) == len(set(first)) == 30
    assert first != family_data.chat_messages(users, 30, random.Random("chat-1"))
    said = {t.content.strip() for us in users.values() for u in us for t in u.turns if t.role == "user"}

    def made_of_turns(text: str) -> bool:  # one turn, or a turn then a space then what is left
        return text in said or any(text.startswith(t + " ") and made_of_turns(text[len(t) + 1 :]) for t in said)

    assert all(made_of_turns(m) for m in first)
    assert not any(m.endswith("?") for m in first)


@pytest.fixture(scope="module")
def distilling(users):
    """What distilled_examples takes besides its prompts: a tiny model, its builder, a config and notes."""
    model, tokenizer = tiny_model()
    notes = family_data.retrieved(users, RecallConfig(), encoder="hash")
    asked = family_data.asked(users, notes, random.Random(0))
    config = TrainConfig(distill_tokens=6, encoder="hash", max_length=768)
    return model, tokenizer, ExampleBuilder(tokenizer), config, [i.notes for i in asked if i.notes]


def test_distilled_examples_learn_the_base_reply_half_with_notes(users, distilling):
    model, tokenizer, builder, config, notes = distilling
    messages = family_data.chat_messages(users, 5, random.Random(0))
    examples = distilled_examples(model, tokenizer, builder, config, messages, notes, random.Random(0), "chat",
                                  progress=False)  # fmt: skip
    assert [e.kind for e in examples] == ["general"] * 2 + ["auto-general"] * 3
    assert sorted(e.meta["question"] for e in examples) == sorted(messages)
    assert all(e.meta["family"] == "chat" for e in examples)
    assert all(builder.recall_id not in [t for t in e.labels if t != IGNORE] for e in examples)
    assert all(builder.recall_id in e.input_ids for e in examples if e.kind == "auto-general")


def test_the_chat_share_adds_its_examples_and_leaves_the_others_as_they_were():
    model, tokenizer = tiny_model()
    options = dict(steps=1, batch_size=4, users=1, distill_tokens=4, agreement_prompts=1, families=FAMILIES,
                   encoder="hash", max_length=768)  # fmt: skip
    mixture = Mixture(repeats=1, general=2, auto_general=1, statements=2)
    plain = build_examples(model, tokenizer, TrainConfig(mixture=mixture, **options), progress=False)
    chat = build_examples(model, tokenizer, TrainConfig(mixture=Mixture(**{**mixture.__dict__, "chat": 4}), **options),
                          progress=False)  # fmt: skip
    assert [e.input_ids for e in chat if e.meta.get("family") != "chat"] == [e.input_ids for e in plain]
    assert sum(e.meta.get("family") == "chat" for e in chat) == 4


@pytest.mark.parametrize("value", [-1, 1.5, True])
def test_a_bad_chat_count_names_the_field(value):
    with pytest.raises(ValueError, match="chat"):
        Mixture(chat=value)


def test_keep_leaves_out_the_replies_it_refuses_and_limit_caps_the_rest(users, distilling):
    model, tokenizer, builder, config, notes = distilling
    messages = family_data.chat_messages(users, 8, random.Random(0))
    replies = base_replies(model, tokenizer, messages, max_new_tokens=6, progress=False)
    opening = replies[0][2][0]  # the first reply's opening id: refused below
    refused = {m for m, _, ids, _ in replies if ids and ids[0] == opening}
    kept = distilled_examples(model, tokenizer, builder, config, messages, notes, random.Random(0), "chat",
                              progress=False, keep=lambda ids: not ids or ids[0] != opening, limit=3)  # fmt: skip
    assert refused and len(kept) <= 3 and not {e.meta["question"] for e in kept} & refused
    learned = [[t for t in e.labels if t != IGNORE] for e in kept]
    assert all(ids and ids[0] != opening for ids in learned)


def test_not_abstention_draws_more_messages_and_keeps_no_reply_that_opens_as_the_abstention():
    from recall_core.decoding.abstain import abstention_opening

    model, tokenizer = tiny_model()
    options = dict(steps=1, batch_size=4, users=1, distill_tokens=4, agreement_prompts=1, families=FAMILIES,
                   encoder="hash", max_length=768)  # fmt: skip
    mixture = Mixture(repeats=1, general=2, auto_general=1, chat=4, chat_openings="not-abstention")
    examples = build_examples(model, tokenizer, TrainConfig(mixture=mixture, **options), progress=False)
    chat = [e for e in examples if e.meta.get("family") == "chat"]
    opening = abstention_opening(tokenizer)
    assert 0 < len(chat) <= 4
    assert all([t for t in e.labels if t != IGNORE][0] != opening for e in chat)


def test_a_bad_chat_openings_names_the_field_and_the_choices():
    with pytest.raises(ValueError, match="chat_openings must be one of any, not-abstention"):
        Mixture(chat_openings="no-sorry")

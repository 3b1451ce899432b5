"""A caller's answer format in training: labelled options or the bare answer, and a reply that keeps it."""

from __future__ import annotations

import random
import re

import pytest

from recall_core import RecallConfig
from recall_core.training import family_data
from recall_core.training.answer_formats import (
    NOT_SAID,
    distractor_pool,
    formatted,
    short_answer,
    with_options,
)
from recall_core.training.examples import IGNORE, ExampleBuilder, Mixture, memory_examples
from recall_core.training.family_data import UNKNOWN_REPLY
from tests.helpers.tiny import tiny_model

FAMILIES = ("templated", "people")


@pytest.fixture(scope="module")
def asked():
    """Every question of two users per family, with the notes a real (hash-encoded) store returned."""
    users = family_data.family_users(FAMILIES, 2)
    notes = family_data.retrieved(users, RecallConfig(), encoder="hash")
    return family_data.asked(users, notes, random.Random(0))


def _options(question: str) -> dict[str, str]:
    """``{label: option}`` as the question lists them."""
    found = re.findall(r"(?<!\w)(\(?[a-dA-D1-4][.)])\s+(.+?)(?=\s+\(?[a-dA-D1-4][.)]\s|\.\s|\n|$)", question)
    return dict(found)


def test_the_reply_picks_the_option_the_notes_support(asked):
    pool = distractor_pool(asked)
    rng = random.Random(3)
    picked_not_said = picked_value = 0
    for item in asked:
        for holds in ({item.holds, False} if item.question.answers else {False}):
            reply = item.reply if holds == item.holds else UNKNOWN_REPLY
            question, target = with_options(item, holds, reply, pool, rng)
            if question == item.question.text:  # nothing to build options from: unchanged
                assert target == reply
                continue
            label, _, said = target.partition(" ")
            options = _options(question)
            assert options.get(label, "").rstrip(".") == said.rstrip("."), (question, target)
            if holds:
                assert said.rstrip(".") == item.question.answers[0]
                picked_value += 1
            else:
                assert said.rstrip(".") in NOT_SAID
                picked_not_said += 1
            assert 2 <= len(options) <= 4
    assert picked_value and picked_not_said


def test_no_wrong_option_names_the_right_value(asked):
    pool = distractor_pool(asked)
    rng = random.Random(5)
    for item in [i for i in asked if i.holds]:
        question, target = with_options(item, True, item.reply, pool, rng)
        wrong = [o for label, o in _options(question).items() if not target.startswith(label + " ")]
        assert not any(item.question.answers[0].lower() in o.lower() for o in wrong), question


def test_the_bare_answer_is_the_value_or_i_dont_know(asked):
    rng = random.Random(0)
    for item in asked:
        question, target = short_answer(item, item.holds, rng)
        assert question.startswith(item.question.text) and len(question) > len(item.question.text)
        if item.holds:
            assert target.rstrip(".").lower() == item.question.answers[0].lower()
        else:
            assert target == UNKNOWN_REPLY


def test_formats_are_deterministic_and_never_use_locomos_wording(asked):
    pool = distractor_pool(asked)

    def draw(seed: int) -> list[tuple[str, str]]:
        rng = random.Random(seed)
        return [formatted(item, item.holds, item.reply, pool, rng) for item in asked]

    first = draw(0)
    assert first == draw(0) and first != draw(1)
    text = " ".join(q + " " + r for q, r in first + draw(1) + draw(2)).lower()
    assert "no information available" not in text and "select the correct answer" not in text


def test_format_share_changes_only_the_questions_it_draws(asked):
    """The draw is on its own generator: the examples made, their notes and the other replies stay."""
    _, tokenizer = tiny_model()
    builder = ExampleBuilder(tokenizer)

    def made(share: float) -> list:
        return memory_examples(builder, asked, Mixture(repeats=2, format_share=share), random.Random(0), [None],
                               format_rng=random.Random(1))  # fmt: skip

    plain, formatted_ = made(0.0), made(0.5)
    assert [e.meta["key"] for e in plain] == [e.meta["key"] for e in formatted_]
    assert not any(e.meta["format"] for e in plain)
    changed = [(a, b) for a, b in zip(plain, formatted_, strict=True) if b.meta["format"]]
    assert changed and len(changed) < len(plain)
    for before, after in zip(plain, formatted_, strict=True):
        if not after.meta["format"]:
            assert before.input_ids == after.input_ids and before.labels == after.labels
    # a formatted question is the last user message, and its reply is learned as any other
    before, after = changed[0]
    assert after.meta["question"] in tokenizer.decode(after.input_ids)
    assert any(label != IGNORE for label in after.labels)
    with pytest.raises(ValueError, match="format_share"):
        Mixture(format_share=1.5)


@pytest.fixture(scope="module")
def duo_asked():
    """Two users of the two-friends family (its near misses carry the other friend's value as a decoy)."""
    users = family_data.family_users(("duo",), 2)
    notes = family_data.retrieved(users, RecallConfig(), encoder="hash")
    return family_data.asked(users, notes, random.Random(0))


def test_a_decoy_is_among_the_options_and_never_the_answer(duo_asked):
    """Asked about one friend with the other's news among the options, the reply picks "never said"."""
    pool = distractor_pool(duo_asked)
    rng = random.Random(7)
    near = [i for i in duo_asked if i.question.decoys]
    assert near
    for item in near:
        question, target = with_options(item, False, UNKNOWN_REPLY, pool, rng)
        options = _options(question)
        assert item.question.decoys[0] in options.values(), question
        assert target.partition(" ")[2].rstrip(".") in NOT_SAID


def test_a_conversations_own_system_messages_are_used(duo_asked):
    """Questions about two friends' chats are mostly asked under their own callers' system messages."""
    _, tokenizer = tiny_model()
    examples = memory_examples(ExampleBuilder(tokenizer), duo_asked, Mixture(repeats=4), random.Random(0),
                               ["Generic caller."])  # fmt: skip
    systems = {s for i in duo_asked for s in i.systems}
    own = sum(any(s in tokenizer.decode(e.input_ids) for s in systems) for e in examples)
    assert 0.5 * len(examples) < own < len(examples)

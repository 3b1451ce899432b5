"""Recall tuning's examples: built through the loop's injection path from a real (hash-encoded)
search, with their perturbations, the general and statement prompts, and the example files."""

from __future__ import annotations

import random

import pytest

from recall_core import RecallConfig
from recall_core.decoding.notes import block_ids, memory_token_ids
from recall_core.prompt import chat_prompt_ids
from recall_core.tokens import RECALL_TOKEN
from recall_core.training import family_data
from recall_core.training.examples import (
    IGNORE,
    ExampleBuilder,
    Mixture,
    general_examples,
    in_passing,
    memory_examples,
    oldest_first,
    perturbed_notes,
)
from recall_core.training.families import base
from recall_core.training.lora import statement_examples
from recall_core.training.prompts import general_prompts, statement_prompts
from tests.helpers.tiny import tiny_model
from tests.helpers.training import FAMILIES, small_config


@pytest.fixture(scope="module")
def asked():
    """Every question of one user per family, with the notes a real (hash-encoded) store returned."""
    users = family_data.family_users(FAMILIES, 1)
    notes = family_data.retrieved(users, RecallConfig(), encoder="hash")
    return family_data.asked(users, notes, random.Random(0))


def test_answers_name_the_value_in_a_short_reply():
    rng = random.Random(0)
    for question, value in (("What's my cat called?", "Brisket"), ("Where do I live these days?", "Porto"),
                            ("When is the dentist?", "14 March"), ("What instrument do I play?", "oboe")):
        reply = family_data.answer_for(question, value, rng)
        assert base.names(reply, value) and len(reply.split()) <= 8, reply


def test_notes_come_from_a_real_search_and_replies_follow_them(asked):
    assert {item.family for item in asked} == set(FAMILIES)
    for item in asked:
        holds = family_data.named_value(item.notes, item.question) is not None
        assert item.holds == holds
        if item.question.kind == "unanswerable" or not holds:
            assert item.reply == family_data.UNKNOWN_REPLY
        else:
            assert any(base.names(item.reply, a) for a in item.question.answers), item


def test_a_search_miss_can_be_shown_the_note_that_answers_it():
    """``fill_share``: a question whose two notes miss the answer gets the deeper note that names
    it, in the loop's order, and learns the answer; without it, every miss learns "I don't know."."""
    users = family_data.family_users(FAMILIES, 2)
    config = RecallConfig()
    searched = family_data.retrieved(users, config, encoder="hash", depth=16)
    missed = {k for k, s in searched.items() if s.answering is not None}
    assert missed, "the hash encoder misses some answers in two notes"
    for key in missed:  # the deeper note is one that names the answer; the chosen ones did not
        assert family_data.named_value(searched[key].chosen, next(q for g in users.values() for u in g
                                                                   for q in u.questions if q.key == key)) is None
    plain = {i.question.key: i for i in family_data.asked(users, searched, random.Random(0), config, 0.0)}
    filled = {i.question.key: i for i in family_data.asked(users, searched, random.Random(0), config, 1.0)}
    assert all(not plain[k].holds and plain[k].reply == family_data.UNKNOWN_REPLY for k in missed)
    shown = [k for k in missed if filled[k].holds]
    # Shown where the loop could inject it: at or above min_score (the rest keep "I don't know.").
    assert set(shown) == {k for k in missed if searched[k].answering.score >= config.min_score} != set()
    for key in shown:
        item = filled[key]
        assert searched[key].answering in item.notes and len(item.notes) <= config.memories
        assert any(base.names(item.reply, a) for a in item.question.answers)
        moments = [str(n.metadata.get("timestamp", "")) for n in item.notes]
        assert moments == sorted(moments, reverse=True)  # newest first, as the loop orders them
    for key in set(plain) - missed:  # a question the search answered, or one never answered, is untouched
        assert filled[key].notes == plain[key].notes and filled[key].reply == plain[key].reply
    with pytest.raises(ValueError, match="fill_share"):
        family_data.asked(users, searched, random.Random(0), config, 1.5)
    with pytest.raises(ValueError, match="fill_share"):
        Mixture(fill_share=-0.1)


def test_unknown_share_keeps_that_share_of_the_dont_know_replies(asked):
    _, tokenizer = tiny_model()
    builder = ExampleBuilder(tokenizer)

    def unknown(share: float) -> tuple[int, int]:
        examples = memory_examples(builder, asked, Mixture(repeats=4, unknown_share=share), random.Random(0), [None])
        told = [e for e in examples if family_data.UNKNOWN_REPLY in tokenizer.decode([t for t in e.labels if t != IGNORE])]
        return len(told), len(examples) - len(told)

    all_unknown, all_answers = unknown(1.0)
    none_unknown, none_answers = unknown(0.0)
    half_unknown, _ = unknown(0.5)
    assert all_unknown > 0 and none_unknown == 0 and 0 < half_unknown < all_unknown
    # Only "I don't know." replies are dropped (the draws after a dropped one differ, so about as many answers).
    assert abs(none_answers - all_answers) <= all_answers // 5
    with pytest.raises(ValueError, match="unknown_share"):
        Mixture(unknown_share=1.5)


def test_a_recall_example_is_what_the_loop_would_inject(asked):
    _, tokenizer = tiny_model()
    builder = ExampleBuilder(tokenizer)
    item = next(i for i in asked if i.holds and i.notes)
    example = memory_examples(builder, [item], Mixture(repeats=1, auto_share=0.0, mid_share=0.0), random.Random(0),
                              [None])[0]  # fmt: skip
    recall_id = tokenizer.convert_tokens_to_ids(RECALL_TOKEN)
    at = example.input_ids.index(recall_id)
    assert example.labels[at] == recall_id and all(label == IGNORE for label in example.labels[:at])
    # The block after <recall> is not learned, and is exactly what the loop injects for these notes.
    block = memory_token_ids(tokenizer, list(item.notes), RecallConfig())
    assert example.input_ids[at + 1 : at + 1 + len(block)] == block
    assert all(label == IGNORE for label in example.labels[at + 1 : at + 1 + len(block)])
    assert tokenizer.decode(example.labels[at + 1 + len(block) :]).startswith(item.reply)
    assert example.meta["family"] == item.family


def test_varied_notes_keep_the_reply_right(asked):
    """Notes are varied as callers' memories vary (one to six, undated, another user's only), and
    the reply follows: the answer while the answering note is there, "I don't know." when not."""
    others = [i.notes for i in asked if i.notes]
    rng = random.Random(0)
    counts, undated, irrelevant = set(), 0, 0
    for item in asked:
        for _ in range(20):
            notes, holds = perturbed_notes(item, [n for n in others if n != item.notes], Mixture(vary_share=1.0), rng)
            assert holds == (family_data.named_value(notes, item.question) is not None), (item.question, notes)
            assert len({n.id for n in notes}) == len(notes) and min(1, len(item.notes)) <= len(notes) <= 12
            counts.add(len(notes))
            undated += all(not n.metadata for n in notes)
            irrelevant += item.holds and not holds
    assert {1, 2, 3, 4} <= counts and undated and irrelevant


def test_a_fact_can_be_buried_in_the_same_users_small_talk(asked):
    """``passing_share``: the answering line is put among things the same user said that state no
    fact; the answer is still named once, the note keeps its id, and the reply stays the answer."""
    rng = random.Random(0)
    items = [i for i in asked if i.holds and i.small_talk]
    assert items
    for item in items:
        notes = in_passing(item.notes, item, rng)
        assert [n.id for n in notes] == [n.id for n in item.notes]
        changed = [(a, b) for a, b in zip(item.notes, notes, strict=True) if a.text != b.text]
        assert len(changed) == 1
        before, after = changed[0]
        assert len(after.text) > len(before.text) and any(t in after.text for t in item.small_talk)
        assert family_data.named_value([after], item.question) is not None
        assert after.metadata == before.metadata
    _, tokenizer = tiny_model()
    examples = memory_examples(ExampleBuilder(tokenizer), items, Mixture(repeats=1, passing_share=1.0, vary_share=0.0),
                               random.Random(0), [None])  # fmt: skip
    small_talk = {t for i in items for t in i.small_talk}
    assert any(any(t in tokenizer.decode(e.input_ids) for t in small_talk) for e in examples)
    with pytest.raises(ValueError, match="passing_share"):
        Mixture(passing_share=-0.1)


def test_dated_notes_can_be_shown_oldest_first_under_a_header_that_says_so(asked):
    """``oldest_share``: dated notes oldest first, the block's header saying "oldest first", the
    reply unchanged; the draw is on a separate generator, so the examples made are the same ones."""
    _, tokenizer = tiny_model()
    builder = ExampleBuilder(tokenizer)
    items = [i for i in asked if len(i.notes) > 1]
    assert items

    def made(share: float) -> list:
        return memory_examples(builder, items, Mixture(repeats=2, vary_share=0.0, oldest_share=share),
                               random.Random(0), [None], order_rng=random.Random(1))  # fmt: skip

    plain, flipped = made(0.0), made(1.0)
    assert [e.meta["key"] for e in plain] == [e.meta["key"] for e in flipped]
    assert {e.meta["order"] for e in plain} == {"newest_first"}
    for before, after in zip(plain, flipped, strict=True):
        # The learned reply is the same; only the notes' order and the header moved.
        assert [t for t in before.labels if t != IGNORE] == [t for t in after.labels if t != IGNORE]
        if after.meta["order"] == "oldest_first":
            text = tokenizer.decode(after.input_ids)
            assert "oldest first" in text and "newest first" not in text
    dated = [e for e in flipped if e.meta["order"] == "oldest_first"]
    assert dated, "the families' notes are dated: some must be flipped"
    item = next(i for i in items if all((n.metadata or {}).get("timestamp") for n in i.notes))
    ordered = sorted(item.notes, key=lambda n: n.metadata["timestamp"])
    assert builder.block(ordered, "oldest_first") == memory_token_ids(tokenizer, ordered, RecallConfig(order="oldest_first"))
    undated = [type(n)(n.id, n.score, n.text, None, {}) for n in item.notes]
    assert oldest_first(undated, "newest_first", 1.0, random.Random(0)) == (tuple(undated), "newest_first")
    with pytest.raises(ValueError, match="oldest_share"):
        Mixture(oldest_share=2.0)


def test_a_question_asked_with_nothing_found_learns_i_dont_know_as_the_loop_shows_it(asked):
    """``empty_share``: "auto" drops a marker that found nothing (the prompt as without recall), and
    the model's own ``<recall>`` reads the loop's ``empty_notes`` block; the reply is "I don't know."
    even where the question's answer was said (and ``unknown_share`` does not drop these)."""
    _, tokenizer = tiny_model()
    builder = ExampleBuilder(tokenizer)
    config = RecallConfig()
    items = [i for i in asked if i.holds]
    examples = memory_examples(builder, items, Mixture(repeats=2, empty_share=1.0, unknown_share=0.0, vary_share=0.0),
                               random.Random(0), [None, "Be brief."])  # fmt: skip
    assert len(examples) == 2 * len(items)
    assert {e.kind for e in examples} == {"auto", "recall"}
    for item, example in zip([i for i in items for _ in range(2)], examples, strict=True):
        reply = tokenizer.decode([t for t in example.labels if t != IGNORE])
        assert family_data.UNKNOWN_REPLY in reply and example.meta["notes"] == 0
        system = "Be brief." if "Be brief." in tokenizer.decode(example.input_ids) else None
        messages = family_data.messages_for(item, system, item.earlier)
        if example.kind == "auto":
            marked = chat_prompt_ids(tokenizer, messages, "auto", "system", config.system_prompt)
            unmarked = [t for t in marked if t != builder.recall_id]
            assert builder.recall_id in marked and builder.recall_id not in example.input_ids
            assert example.input_ids[: len(unmarked)] == unmarked
        else:
            prompt = chat_prompt_ids(tokenizer, messages, "model", "system", config.system_prompt)
            at = example.input_ids.index(builder.recall_id)
            block = block_ids(tokenizer, config.empty_notes, config)
            assert example.input_ids[: len(prompt)] == prompt
            assert example.input_ids[at + 1 : at + 1 + len(block)] == block
    with pytest.raises(ValueError, match="empty_share"):
        Mixture(empty_share=2)


def test_a_mid_answer_recall_learns_the_words_before_the_marker(asked):
    _, tokenizer = tiny_model()
    builder = ExampleBuilder(tokenizer)
    item = next(i for i in asked if i.notes)
    example = memory_examples(builder, [item], Mixture(repeats=1, auto_share=0.0, mid_share=1.0), random.Random(0),
                              ["Be brief."])[0]  # fmt: skip
    at = example.input_ids.index(builder.recall_id)
    first = next(i for i, label in enumerate(example.labels) if label != IGNORE)
    assert first < at and tokenizer.decode(example.input_ids[first:at]).strip() in family_data.LEAD_INS
    assert "Be brief." in tokenizer.decode(example.input_ids[:first])


def test_auto_examples_put_the_block_where_the_system_marker_is(asked):
    _, tokenizer = tiny_model()
    builder = ExampleBuilder(tokenizer)
    item = next(i for i in asked if i.notes)
    system = "You are Max, a personal assistant."
    example = memory_examples(builder, [item], Mixture(repeats=1, auto_share=1.0), random.Random(2), [system])[0]
    messages = family_data.messages_for(item, system, item.earlier)
    marked = chat_prompt_ids(tokenizer, messages, "auto", "system", builder.system_prompt)
    at = marked.index(builder.recall_id) + 1
    assert example.input_ids[:at] == marked[:at]
    first_learned = next(i for i, label in enumerate(example.labels) if label != IGNORE)
    assert example.input_ids[first_learned - len(marked) + at :first_learned] == marked[at:]
    assert builder.recall_id not in [t for t in example.labels if t != IGNORE]


def test_general_examples_learn_the_base_reply_without_recall(asked):
    _, tokenizer = tiny_model()
    builder = ExampleBuilder(tokenizer)
    reply = tokenizer("Lightning is a spark.", add_special_tokens=False).input_ids
    notes = [i.notes for i in asked if i.notes]
    for kind in ("general", "auto-general"):
        example = general_examples(builder, [("What is lightning?", "Be brief.", reply, False)], kind, 1,
                                   random.Random(0), notes)[0]  # fmt: skip
        learned = [t for t in example.labels if t != IGNORE]
        assert learned[: len(reply)] == reply and learned[len(reply) :] == builder.end_ids
        assert builder.recall_id not in learned


def test_general_prompt_splits_share_nothing():
    train, heldout = general_prompts("train"), general_prompts("heldout")
    assert len(train) >= 200 and len(heldout) >= 50 and not set(train) & set(heldout)
    assert general_prompts("train", n=5, seed=1) == general_prompts("train", n=5, seed=1)
    with pytest.raises(ValueError, match="split"):
        general_prompts("test")


def test_statement_prompt_splits_share_no_statement_template_or_value():
    train, heldout = statement_prompts("train"), statement_prompts("heldout")
    assert len(train) >= 60 and len(heldout) >= 20 and not set(train) & set(heldout)
    assert statement_prompts("train", n=5, seed=1) == statement_prompts("train", n=5, seed=1)
    assert not any(s.endswith("?") for s in train + heldout)  # statements, not questions
    train_words = {w.strip(".!,") for s in train for w in s.split()}
    assert not {"Dmitri", "Austin", "librarian", "goldfish"} & train_words  # held-out values stay out of training
    with pytest.raises(ValueError, match="split"):
        statement_prompts("test")
    with pytest.raises(ValueError, match="statements"):
        Mixture(statements=-1)


def test_statement_examples_learn_the_base_acknowledgement_with_and_without_notes(asked):
    model, tokenizer = tiny_model()
    builder = ExampleBuilder(tokenizer)
    config = small_config(mixture=Mixture(repeats=1, general=0, auto_general=0, statements=5))
    examples = statement_examples(model, tokenizer, builder, config, [i.notes for i in asked if i.notes], progress=False)
    assert [e.kind for e in examples].count("general") == 2 and [e.kind for e in examples].count("auto-general") == 3
    assert all(e.meta["family"] == "statement" and e.meta["question"] in statement_prompts("train") for e in examples)
    assert all(builder.recall_id not in [t for t in e.labels if t != IGNORE] for e in examples)
    auto = next(e for e in examples if e.kind == "auto-general")
    assert builder.recall_id in auto.input_ids  # the notes sit in the system message after the marker



def test_examples_round_trip_a_file_and_exclude_drops_a_family(asked, tmp_path):
    from recall_core.training.lora import load_examples, save_examples

    _, tokenizer = tiny_model()
    examples = memory_examples(ExampleBuilder(tokenizer), asked, Mixture(repeats=1), random.Random(0), [None])
    path = save_examples(tmp_path / "examples.jsonl.gz", examples)
    assert load_examples(path) == examples
    kept = load_examples(path, exclude=("people",))
    assert kept and all(e.meta["family"] != "people" for e in kept)
    assert len(kept) == sum(e.meta["family"] != "people" for e in examples)

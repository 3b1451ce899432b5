"""Recall tuning: examples built through the loop's injection path, LoRA training end to end on a
tiny random model, adapters that refuse a model they were not trained for, and `recall train`."""

from __future__ import annotations

import json
import random

import pytest
import torch
from safetensors.torch import load_file

from recall_core import RecallConfig, RecallGenerator
from recall_core.decoding.notes import block_ids, memory_token_ids
from recall_core.models.base import BASE_LOADER, base_model_of, without_adapter
from recall_core.models.loading import load_model
from recall_core.models.lora import (
    ADAPTER_FOLDER,
    META_FILE,
    WEIGHTS_FILE,
    apply_adapter,
    base_fingerprint,
    check_adapter,
    read_meta,
)
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
from recall_core.training.lora import TrainConfig, agreement, statement_examples, train_recall
from recall_core.training.prompts import general_prompts, statement_prompts
from tests.helpers.tiny import tiny_model

SMALL = Mixture(repeats=1, general=4, auto_general=2)
#: Two small families and a hashing encoder: the data path runs for real, in seconds.
FAMILIES = ("templated", "people")


def small_config(**changes) -> TrainConfig:
    # max_length: the tiny tokenizer spells words in pieces, and an 'answered' note (a reply with the
    # turn it answers: the default unit) makes an auto-general example of ~500 ids, past the default 384.
    options = dict(steps=3, batch_size=4, mixture=SMALL, users=1, distill_tokens=6, agreement_prompts=2,
                   learning_rate=0.05, families=FAMILIES, encoder="hash", max_length=768)  # fmt: skip
    options.update(changes)
    return TrainConfig(**options)


@pytest.fixture(scope="module")
def asked():
    """Every question of one user per family, with the notes a real (hash-encoded) store returned."""
    users = family_data.family_users(FAMILIES, 1)
    notes = family_data.retrieved(users, RecallConfig(), encoder="hash")
    return family_data.asked(users, notes, random.Random(0))


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    model, tokenizer = tiny_model()
    out = tmp_path_factory.mktemp("adapter")
    before = {k: v.clone() for k, v in model.state_dict().items()}
    result = train_recall(model, tokenizer, out, small_config(), base_model="tiny", progress=False)
    return model, tokenizer, result, before


# --------------------------------------------------------------------------- examples
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


# --------------------------------------------------------------------------- training
def test_training_end_to_end_saves_a_small_adapter_and_leaves_the_model_alone(trained):
    model, tokenizer, result, before = trained
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
    assert len(result.losses) == 3 and all(loss == loss for loss in result.losses)
    assert result.counts["general"] == SMALL.general and result.counts["auto-general"] == SMALL.auto_general
    assert result.counts.get("recall", 0) + result.counts.get("auto", 0) > 0  # one per question (repeats=1)
    weights = load_file(str(result.adapter / WEIGHTS_FILE))
    assert weights and all(t.dtype == torch.float16 for t in weights.values())
    meta = read_meta(result.adapter)
    assert meta["base_fingerprint"] == base_fingerprint(model) and meta["recipe"]["seed"] == 0
    assert set(result.checks) >= {"recall_first_on_memory_questions", "recall_first_on_general_prompts", "agreement",
                                  "dont_know_with_nothing_found"}
    log = json.loads((result.adapter / "training_log.json").read_text())
    assert len(log["losses"]) == 3


def test_training_is_deterministic_for_a_seed(trained, tmp_path):
    _, _, result, _ = trained
    model, tokenizer = tiny_model()
    again = train_recall(model, tokenizer, tmp_path, small_config(), progress=False)
    assert again.losses == pytest.approx(result.losses, rel=1e-5)


def test_the_merged_adapter_changes_the_model_and_matches_peft(trained):
    from peft import PeftModel

    model, tokenizer, result, _ = trained
    ids = torch.tensor([[1, 5, tokenizer.convert_tokens_to_ids(RECALL_TOKEN), 7, 9]])
    with torch.no_grad():
        plain = model(input_ids=ids).logits
        peft_model = PeftModel.from_pretrained(tiny_model()[0], str(result.adapter)).eval()
        with_peft = peft_model(input_ids=ids).logits
        merged = apply_adapter(tiny_model()[0], tokenizer, result.adapter)(input_ids=ids).logits
    assert (with_peft - merged).abs().max() < 1e-4
    assert (plain - merged).abs().max() > 1e-4


def test_load_model_merges_an_adapter_for_that_folder(trained, tmp_path):
    model, tokenizer, result, _ = trained
    model.save_pretrained(tmp_path / "tiny")
    tokenizer.save_pretrained(tmp_path / "tiny")
    loaded, loaded_tokenizer = load_model(tmp_path / "tiny", device="cpu", adapter=result.adapter)
    reference = apply_adapter(tiny_model()[0], tokenizer, result.adapter)
    ids = torch.tensor([[1, 2, 3]])
    with torch.no_grad():
        assert torch.allclose(loaded(input_ids=ids).logits, reference(input_ids=ids).logits, atol=1e-5)
        # the model it was merged into, for RecallConfig.base_replies: loaded when first asked for
        names = [name for name, _ in loaded.named_parameters()]
        base = base_model_of(loaded)
        assert base is not loaded and base_model_of(loaded) is base
        assert [name for name, _ in loaded.named_parameters()] == names  # kept apart: not a submodule
        assert torch.allclose(base(input_ids=ids).logits, model(input_ids=ids).logits, atol=1e-5)
    assert base_model_of(load_model(tmp_path / "tiny", device="cpu")[0]) is None  # no adapter: nothing recorded


def test_the_base_is_the_tuned_model_less_its_adapter_sharing_its_weights(trained, tmp_path):
    """``without_adapter``: the model an adapter was merged into, made from the merged one, for
    ``base_replies``: the same logits (the recall tokens' included) and the same greedy reply as the
    model loaded again, at the cost of the adapter's factors alone; the tuned model is untouched."""
    model, tokenizer, result, _ = trained
    model.save_pretrained(tmp_path / "tiny")
    tokenizer.save_pretrained(tmp_path / "tiny")
    tuned, _ = load_model(tmp_path / "tiny", device="cpu", adapter=result.adapter)
    plain, _ = load_model(tmp_path / "tiny", device="cpu")
    ids = torch.tensor([[1, 5, tokenizer.convert_tokens_to_ids(RECALL_TOKEN), 7, 9]])
    with torch.no_grad():
        before = tuned(input_ids=ids).logits
        base = without_adapter(tuned, result.adapter)
        assert (base(input_ids=ids).logits - plain(input_ids=ids).logits).abs().max() < 1e-5
        assert torch.equal(tuned(input_ids=ids).logits, before)  # the tuned model is as it was
        assert (before - plain(input_ids=ids).logits).abs().max() > 1e-3
    weights = {p.data_ptr() for p in tuned.parameters()}
    assert all(p.data_ptr() in weights for name, p in base.named_parameters() if "lora_" not in name)
    assert not hasattr(base, BASE_LOADER) and not hasattr(base, ADAPTER_FOLDER)
    prompt = torch.tensor([[1, 5, 7, 9, 11]])
    assert torch.equal(base.generate(prompt, max_new_tokens=12, do_sample=False),
                       plain.generate(prompt, max_new_tokens=12, do_sample=False))  # fmt: skip

@pytest.mark.parametrize("kind", ["gemma3", "qwen2-padded"])
def test_the_base_is_exact_for_scaled_and_padded_embeddings(kind, tmp_path):
    """The recall tokens' untrained rows, restored by ``without_adapter``, are those training started
    from on other embeddings too: one that scales what it reads (Gemma's ScaledWordEmbedding, tied to
    the head) and a padded vocabulary whose spare rows the tokens take (Qwen2's releases). Until
    2026-12-05 the first missed the scale and the second restored values it never had (logits off by
    0.07 and 0.63 wherever ``<recall>`` was read)."""
    model, tokenizer = tiny_model(kind)
    if kind == "qwen2-padded":  # the tokens took spare rows, started as new rows are
        assert model.get_input_embeddings().num_embeddings > len(tokenizer)
    model.save_pretrained(tmp_path / "base")
    tokenizer.save_pretrained(tmp_path / "base")
    result = train_recall(model, tokenizer, tmp_path / "adapter", small_config(), base_model="tiny", progress=False)
    tuned, _ = load_model(tmp_path / "base", device="cpu", adapter=result.adapter)
    plain, _ = load_model(tmp_path / "base", device="cpu")
    ids = torch.tensor([[1, 5, tokenizer.convert_tokens_to_ids(RECALL_TOKEN), 7, 9]])
    with torch.no_grad():
        base = without_adapter(tuned, result.adapter)
        assert (base(input_ids=ids).logits - plain(input_ids=ids).logits).abs().max() < 1e-5
        assert (tuned(input_ids=ids).logits - plain(input_ids=ids).logits).abs().max() > 1e-3


@pytest.mark.parametrize("kind", ["llama", "qwen2-padded"])
def test_a_model_that_had_the_recall_tokens_keeps_its_rows_given_a_tokenizer_without_them(kind):
    """A recall-tuned model saved merged and paired with its base tokenizer: the tokens are added to
    the tokenizer again, and the model's trained rows stay (its config names the tokens). Only rows
    no model had are started (new ones, or a padded vocabulary's spare ones)."""
    from recall_core.tokens import add_recall_tokens
    from tests.helpers.tiny import tiny_tokenizer

    model, tokenizer = tiny_model(kind)
    ids = [model.config.recall_token_id, model.config.memory_pad_token_id]
    with torch.no_grad():
        model.get_input_embeddings().weight[ids] = 5.0  # as training left them
    assert add_recall_tokens(model, tiny_tokenizer()) == tuple(ids)
    assert bool((model.get_input_embeddings().weight[ids] == 5.0).all())


def test_the_base_of_a_bfloat16_model_is_the_plain_one_to_its_rounding(trained, tmp_path):
    """In bfloat16 (the default dtype on CUDA) the merged weights are rounded once: the base made
    from them is the plain model to that rounding, not further from it than the tuned model is near."""
    model, tokenizer, result, _ = trained
    model.save_pretrained(tmp_path / "tiny")
    tokenizer.save_pretrained(tmp_path / "tiny")
    tuned, _ = load_model(tmp_path / "tiny", device="cpu", dtype=torch.bfloat16, adapter=result.adapter)
    plain, _ = load_model(tmp_path / "tiny", device="cpu", dtype=torch.bfloat16)
    ids = torch.tensor([[1, 5, tokenizer.convert_tokens_to_ids(RECALL_TOKEN), 7, 9]])
    with torch.no_grad():
        base = without_adapter(tuned, result.adapter)
        assert next(base.parameters()).dtype == torch.bfloat16
        off = (base(input_ids=ids).logits.float() - plain(input_ids=ids).logits.float()).abs().max()
        tuned_off = (tuned(input_ids=ids).logits.float() - plain(input_ids=ids).logits.float()).abs().max()
        assert off < 0.05 and off < tuned_off / 5, (off, tuned_off)


def test_the_base_and_the_tuned_model_run_at_once_from_two_threads(trained, tmp_path):
    """The base model shares the tuned one's weights: run together from two threads, each gives
    what it gives alone (peft's layers at scale -1 change no shared tensor)."""
    import threading

    model, tokenizer, result, _ = trained
    model.save_pretrained(tmp_path / "tiny")
    tokenizer.save_pretrained(tmp_path / "tiny")
    tuned, _ = load_model(tmp_path / "tiny", device="cpu", adapter=result.adapter)
    base = base_model_of(tuned)
    prompt = torch.tensor([[1, 5, 7, 9, 11]])
    alone = {name: m.generate(prompt, max_new_tokens=16, do_sample=False) for name, m in (("tuned", tuned), ("base", base))}
    together: dict[str, list[torch.Tensor]] = {"tuned": [], "base": []}

    def run(name: str, m) -> None:
        for _ in range(5):
            together[name].append(m.generate(prompt, max_new_tokens=16, do_sample=False))

    threads = [threading.Thread(target=run, args=(name, m)) for name, m in (("tuned", tuned), ("base", base))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for name, outputs in together.items():
        assert len(outputs) == 5 and all(torch.equal(out, alone[name]) for out in outputs), name
    assert not torch.equal(alone["tuned"], alone["base"])


def test_train_head_beside_an_adapter_fits_the_model_with_that_adapter(trained, tmp_path, capsys):
    """``recall train-head --out ADAPTER``: the head is trained on the base with the adapter merged
    in (what loading the adapter gives), not on the base alone. Until 2026-11-30 it was the shipped
    model's whatever the folder held, and the candidate's model refused it."""
    import shutil

    from recall_core.cli import main
    from recall_core.models.query_head import RecallQueryHead

    model, tokenizer, result, _ = trained
    base, out = tmp_path / "tiny", tmp_path / "candidate"
    model.save_pretrained(base)
    tokenizer.save_pretrained(base)
    shutil.copytree(result.adapter, out)
    assert main(["train-head", "--model", str(base), "--out", str(out), "--encoder", "hash-16", "--device", "cpu",
                 "--vocabulary-texts", "0"]) == 0  # fmt: skip
    assert f"with the adapter in {out}" in capsys.readouterr().out
    tuned, _ = load_model(base, device="cpu", adapter=out)
    head = RecallQueryHead.load(out, model=tuned)  # fits the tuned weights...
    with pytest.raises(ValueError, match="fingerprint"):
        head.check(load_model(base, device="cpu")[0])  # ...and not the base's
    found = RecallGenerator.from_pretrained(str(base), device="cpu", adapter=str(out)).query_head
    assert found is not None and found.meta == head.meta  # loading the adapter finds the head beside it
    # load_model(adapter=) + a plain RecallGenerator finds it too, at the first call that needs it
    plain = RecallGenerator(tuned, tokenizer)
    assert plain._query_head_for(RecallConfig()) is None  # query_mode="text": not looked for
    assert plain._query_head_for(RecallConfig(query_mode="hidden")).meta == head.meta
    with pytest.raises(ValueError, match="fingerprint"):  # the base saved with a head for other weights
        shutil.copy(out / "query_head.safetensors", base)
        shutil.copy(out / "query_head.json", base)
        RecallGenerator(load_model(base, device="cpu")[0], tokenizer)._query_head_for(RecallConfig(query_mode="hidden"))


def test_an_adapter_for_another_base_model_is_refused(trained):
    _, tokenizer, result, _ = trained
    other, other_tokenizer = tiny_model(seed=1)
    with pytest.raises(ValueError, match="another base model"):
        apply_adapter(other, other_tokenizer, result.adapter)
    qwen, qwen_tokenizer = tiny_model("qwen2")
    with pytest.raises(ValueError, match="another base model"):
        check_adapter(qwen, qwen_tokenizer, result.adapter)


def test_the_fingerprint_ignores_the_dtype_but_not_the_weights():
    model, _ = tiny_model()
    fingerprint = base_fingerprint(model)
    assert base_fingerprint(tiny_model()[0].to(torch.bfloat16)) == fingerprint
    with torch.no_grad():
        model.model.embed_tokens.weight[0] += 1.0
    assert base_fingerprint(model) != fingerprint


def test_a_damaged_or_missing_adapter_is_a_clear_error(trained, tmp_path):
    _, tokenizer, result, _ = trained
    model, _ = tiny_model()
    with pytest.raises(ValueError, match="not a recall adapter"):
        apply_adapter(model, tokenizer, tmp_path)
    damaged = tmp_path / "damaged"
    damaged.mkdir()
    (damaged / WEIGHTS_FILE).write_bytes((result.adapter / WEIGHTS_FILE).read_bytes())
    (damaged / META_FILE).write_text("{ not json")
    with pytest.raises(ValueError, match="damaged"):
        apply_adapter(model, tokenizer, damaged)


def test_a_model_without_a_chat_template_is_refused(tmp_path):
    model, tokenizer = tiny_model()
    tokenizer.chat_template = None
    with pytest.raises(ValueError, match="no chat template"):
        train_recall(model, tokenizer, tmp_path, small_config(), progress=False)
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize(
    ("field", "value"),
    [("steps", 0), ("batch_size", 0), ("learning_rate", 0.0), ("learning_rate", 2.0), ("rank", 0),
     ("decision_weight", 0), ("max_length", 4), ("targets", ())],
)
def test_bad_training_settings_name_the_field(field, value):
    with pytest.raises(ValueError, match=field):
        TrainConfig(**{field: value})
    with pytest.raises(ValueError, match="repeats"):
        Mixture(repeats=-1)
    with pytest.raises(ValueError, match="auto_share"):
        Mixture(auto_share=1.5)
    with pytest.raises(ValueError, match="exclude leaves no family"):
        TrainConfig(families=("people",), exclude=("people",))
    with pytest.raises(ValueError, match="families"):
        TrainConfig(families=("nope",))


def test_agreement_counts_identical_replies_and_shared_prefixes():
    before = [("a", None, [1, 2, 3, 4], False), ("b", None, [5, 6], False)]
    after = [("a", None, [1, 2, 9, 9], False), ("b", None, [5, 6], False)]
    report = agreement(before, after)
    assert report["identical"] == 0.5 and report["same_first_token"] == 1.0
    assert report["shared_prefix"] == pytest.approx((0.5 + 1.0) / 2)


def test_recall_train_command_on_a_tiny_model(tmp_path, monkeypatch, capsys):
    from recall_core.cli import main

    model, tokenizer = tiny_model()
    model.save_pretrained(tmp_path / "tiny")
    tokenizer.save_pretrained(tmp_path / "tiny")
    monkeypatch.setenv("RECALL_HOME", str(tmp_path / "home"))
    small = ["--examples", "0.004", "--users", "1", "--families", "templated", "--encoder", "hash", "--repeats", "1"]
    code = main(["train", "--model", str(tmp_path / "tiny"), *small, "--steps", "2", "--oldest-share", "0.5",
                 "--company-share", "0.25", "--agreement-prompts", "2", "--device", "cpu", "--no-progress"])  # fmt: skip
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["adapter"] == str(tmp_path / "home" / "adapters" / "tiny")
    meta = read_meta(summary["adapter"])
    assert meta["base_model"] == "tiny" and meta["recipe"]["mixture"]["oldest_share"] == 0.5
    assert meta["recipe"]["mixture"]["company_share"] == 0.25
    tokenizer.chat_template = None
    tokenizer.save_pretrained(tmp_path / "plain")
    model.save_pretrained(tmp_path / "plain")
    assert main(["train", "--model", str(tmp_path / "plain"), *small, "--steps", "1", "--no-progress"]) == 2
    assert "no chat template" in capsys.readouterr().err


def test_a_run_killed_while_saving_leaves_the_old_adapter_whole(trained, tmp_path, monkeypatch):
    """The adapter is written beside its folder and moved in at the end: a failure while saving
    (a full disk, a kill) leaves the previous adapter as it was and no half-written one."""
    import shutil

    import recall_core.training.adapter as adapter_module

    _, tokenizer, result, _ = trained
    target = tmp_path / "adapter"
    shutil.copytree(result.adapter, target)
    before = {p.name: p.read_bytes() for p in target.iterdir()}

    def fail(*args, **kwargs):
        raise OSError("No space left on device")

    monkeypatch.setattr(adapter_module, "save_file", fail, raising=False)
    monkeypatch.setattr("safetensors.torch.save_file", fail)
    model, _ = tiny_model()
    with pytest.raises(OSError, match="No space"):
        train_recall(model, tokenizer, target, small_config(), progress=False)
    assert {p.name: p.read_bytes() for p in target.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adapter"]  # no staging folder left behind
    check_adapter(tiny_model()[0], tokenizer, target)


def test_examples_round_trip_a_file_and_exclude_drops_a_family(asked, tmp_path):
    from recall_core.training.lora import load_examples, save_examples

    _, tokenizer = tiny_model()
    examples = memory_examples(ExampleBuilder(tokenizer), asked, Mixture(repeats=1), random.Random(0), [None])
    path = save_examples(tmp_path / "examples.jsonl.gz", examples)
    assert load_examples(path) == examples
    kept = load_examples(path, exclude=("people",))
    assert kept and all(e.meta["family"] != "people" for e in kept)
    assert len(kept) == sum(e.meta["family"] != "people" for e in examples)


class _Scripted(torch.nn.Module):
    """A greedy "model" that writes ``script`` after its prefix: each position's most likely next
    token is the script's while the input follows it, else token 0."""

    def __init__(self, script: list[int], vocab: int) -> None:
        super().__init__()
        self.script, self.vocab = script, vocab
        self.anchor = torch.nn.Parameter(torch.zeros(1))  # a parameter: the device is read from it

    def forward(self, input_ids):
        ids = input_ids[0].tolist()
        logits = torch.zeros(1, len(ids), self.vocab)
        for j in range(len(ids)):
            follows = ids[: j + 1] == self.script[: j + 1] and j + 1 < len(self.script)
            logits[0, j, self.script[j + 1] if follows else 0] = 1.0
        return type("Out", (), {"logits": logits})()


@pytest.mark.parametrize(("via_recall", "reply", "counted"),
                         [(False, family_data.UNKNOWN_REPLY, True), (True, family_data.UNKNOWN_REPLY, True),
                          (True, "Your parrot is called Luna.", False), (False, "Luna.", False)])  # fmt: skip
def test_the_new_user_check_follows_the_greedy_path_through_the_empty_notes(via_recall, reply, counted):
    """The check counts what greedy decoding under "auto" with nothing found would say: straight
    away, or after the model's own <recall> and the loop's empty-notes block."""
    from recall_core.training.lora import dont_know_with_nothing_found

    _, tokenizer = tiny_model()
    builder = ExampleBuilder(tokenizer)
    question = "What is the name of my parrot?"
    example = builder.auto_example("x", [{"role": "user", "content": question}], reply, ())
    start = next(i for i, t in enumerate(example.labels) if t != IGNORE)
    prompt, answer = example.input_ids[:start], example.input_ids[start:]
    script = [*prompt, builder.recall_id, *builder.block(()), *answer] if via_recall else [*prompt, *answer]
    model = _Scripted(script, len(tokenizer))
    assert dont_know_with_nothing_found(model, builder, [question]) == float(counted)

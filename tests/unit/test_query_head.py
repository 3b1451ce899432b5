"""The hidden query head: features, training, save/load, refusals, and its use by the loop and memory."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from recall_core import RECALL_TOKEN, RecallConfig, RecallGenerator, load_model, recall_generate
from recall_core.memory import HashEncoder, MemoryStore, MemoryWriter
from recall_core.models.query_head import HEAD_FILE, META_FILE, RecallQueryHead
from recall_core.training.head import (
    HeadRecipe,
    fit_head,
    recall_features,
    recall_prompt_ids,
    train_query_head,
)
from recall_core.types import RecallQuery
from tests.helpers.memories import RAW_TEXT, FixedMemory
from tests.helpers.tiny import tiny_model

TEXTS = [
    "My dog is called Biscuit.", "I live in Lisbon.", "What is my name?", "Where do I live?",
    "My favourite colour is green.", "I work as a nurse at the hospital.", "What do I do for work?",
    "I was born in 1990.", "The quick brown fox jumps over the lazy dog.", "My cat is called Pepper.",
]  # fmt: skip
FAST = HeadRecipe(epochs=15, batch_size=4, lr=1e-2)


@pytest.fixture(scope="module")
def tiny():
    """One tiny random Llama for the module (nothing here changes its weights)."""
    return tiny_model("llama")


@pytest.fixture(scope="module")
def trained(tiny):
    model, tokenizer = tiny
    return train_query_head(model, tokenizer, HashEncoder(16), TEXTS, recipe=FAST)


@pytest.mark.parametrize("kind", ["llama", "gpt2"])
def test_features_are_the_recall_position_of_one_unpadded_forward(kind):
    model, tokenizer = tiny_model(kind)
    texts = ["Hi", "My dog is called Biscuit and my cat is called Pepper.", "Where do I live?"]
    features = recall_features(model, tokenizer, texts, [1, -1], batch_size=2)
    assert features.shape == (3, 2, model.config.hidden_size)
    for i, text in enumerate(texts):
        ids = recall_prompt_ids(tokenizer, text)
        assert ids[-1] == tokenizer.convert_tokens_to_ids(RECALL_TOKEN)
        assert tokenizer.decode(ids).endswith("<|im_start|>assistant\n" + RECALL_TOKEN)  # after the generation prompt
        with torch.no_grad():
            alone = model(torch.tensor([ids]), output_hidden_states=True).hidden_states
        torch.testing.assert_close(features[i, 0], alone[1][0, -1], atol=1e-4, rtol=1e-4)
        torch.testing.assert_close(features[i, 1], alone[-1][0, -1], atol=1e-4, rtol=1e-4)


def test_training_lowers_the_loss_and_is_deterministic(tiny, trained):
    model, tokenizer = tiny
    recipe = trained.meta.recipe
    assert recipe["loss_last"] < recipe["loss_first"]
    again = train_query_head(model, tokenizer, HashEncoder(16), TEXTS, recipe=FAST)
    features = recall_features(model, tokenizer, TEXTS[:3], trained.meta.layers)
    np.testing.assert_array_equal(trained.vectors(features), again.vectors(features))
    other = train_query_head(model, tokenizer, HashEncoder(16), TEXTS, recipe=FAST, seed=1)
    assert not np.allclose(trained.vectors(features), other.vectors(features))
    # the LM itself is never trained
    assert all(p.grad is None for p in model.parameters())


def test_fit_head_learns_a_linear_map():
    """On features that hold the target linearly, the head finds each text's target first."""
    torch.manual_seed(0)
    features = torch.randn(64, 2, 12)
    targets = torch.nn.functional.normalize(features.flatten(1) @ torch.randn(24, 8), dim=-1)
    head, history = fit_head(features, targets, HeadRecipe(epochs=60, batch_size=16, lr=1e-2), [1, 2])
    assert history[-1] < history[0] / 2
    with torch.no_grad():
        pred = torch.nn.functional.normalize(head(features), dim=-1)
    assert ((pred @ targets.T).argmax(1) == torch.arange(64)).float().mean() > 0.9


def test_save_load_round_trip_and_refusals(tiny, trained, tmp_path):
    model, tokenizer = tiny
    folder = trained.save(tmp_path / "head")
    assert (folder / HEAD_FILE).stat().st_size < 4_000_000 and (folder / META_FILE).is_file()
    loaded = RecallQueryHead.load(folder, model=model, encoder=HashEncoder(16))
    assert loaded.meta == trained.meta
    features = recall_features(model, tokenizer, TEXTS[:2], trained.meta.layers)
    np.testing.assert_allclose(loaded.vectors(features), trained.vectors(features), atol=1e-6)
    other, _ = tiny_model("llama", seed=1)
    with pytest.raises(ValueError, match="fingerprint"):
        RecallQueryHead.load(folder, model=other)
    with pytest.raises(ValueError, match="encoder"):
        RecallQueryHead.load(folder, encoder=HashEncoder(32))
    with pytest.raises(ValueError, match="encoder"):
        RecallQueryHead.load(folder, encoder=HashEncoder(16, name="another"))
    with pytest.raises(ValueError, match="no query head"):
        RecallQueryHead.load(tmp_path / "nothing")


def test_bad_input_is_refused(tiny, trained):
    model, tokenizer = tiny
    with pytest.raises(ValueError, match="at least 2"):
        train_query_head(model, tokenizer, HashEncoder(16), [])
    with pytest.raises(ValueError, match="at least 2"):
        train_query_head(model, tokenizer, HashEncoder(16), ["same", "same"])
    with pytest.raises(ValueError, match=r"texts\[1\]"):
        recall_features(model, tokenizer, ["fine", "  "], [1])
    with pytest.raises(ValueError, match="layers"):
        recall_features(model, tokenizer, ["fine"], [7])
    with pytest.raises(ValueError, match="shape"):
        trained.vectors(torch.zeros(1, 3, 5))
    with pytest.raises(ValueError, match="epochs"):
        HeadRecipe(epochs=0)
    with pytest.raises(ValueError, match="temperature"):
        HeadRecipe(temperature=float("nan"))


def _generate(model, tokenizer, memory, config, head=None):
    ids = torch.tensor([recall_prompt_ids(tokenizer, "Where do I live?")])
    return model.generate(ids, custom_generate=recall_generate, memory=memory, recall_config=config,
                          recall_tokenizer=tokenizer, recall_query_head=head, max_new_tokens=2, do_sample=False)  # fmt: skip


def test_the_loop_uses_the_head_in_hidden_mode_and_refuses_the_mode_without_one(tiny, trained):
    model, tokenizer = tiny
    memory = FixedMemory("You live in Lisbon.")
    _generate(model, tokenizer, memory, RecallConfig(query_mode="hidden"), trained)
    query = memory.queries[-1]
    features = recall_features(model, tokenizer, ["Where do I live?"], trained.meta.layers)
    assert query.mode == "hidden" and query.vector_space == "hash-16"
    np.testing.assert_allclose(query.vector, trained.vectors(features)[0], atol=1e-4)
    with pytest.raises(ValueError, match="needs a query head"):
        _generate(model, tokenizer, memory, RecallConfig(query_mode="hidden"))
    _generate(model, tokenizer, memory, RecallConfig(query_mode="text"), trained)
    assert memory.queries[-1].mode == "text" and memory.queries[-1].vector is None
    other, _ = tiny_model("llama", seed=1)
    with pytest.raises(ValueError, match="fingerprint"):
        _generate(other, tokenizer, memory, RecallConfig(query_mode="hidden"), trained)


def test_hidden_mode_with_no_memory_runs_as_text_mode(tiny, trained):
    """Until 2026-12-07 a prompt's marker under ``query_mode="hidden"`` with no memory attached
    raised a ``RuntimeError`` (no hidden states were kept, there being nothing to search; a reviewer)."""
    model, tokenizer = tiny
    hidden = _generate(model, tokenizer, None, RecallConfig(query_mode="hidden"), trained)
    assert torch.equal(hidden, _generate(model, tokenizer, None, RecallConfig(query_mode="text"), trained))


def test_a_head_vector_searches_the_regular_index(tmp_path):
    facts = ["My dog is called Biscuit.", "I live in Lisbon.", "My favourite colour is green."]
    encoder = HashEncoder(16)
    with MemoryStore.local(tmp_path, encoder=encoder) as store:
        writer = MemoryWriter(store, **RAW_TEXT)
        ids = [writer.add_turn("u", "user", fact)[0] for fact in facts]
        memory = store.for_user("u")
        for fact, memory_id in zip(facts, ids, strict=True):
            vector = encoder.encode([fact])[0].tolist()
            for retrieval in ("vector", "hybrid"):
                query = RecallQuery(text="", mode="hidden", vector=vector, vector_space="hash-16")
                assert memory.search(query, 2, retrieval=retrieval)[0].id == memory_id
        with pytest.raises(ValueError, match="space of the encoder"):
            memory.search(RecallQuery(text="", mode="hidden", vector=vector, vector_space="minilm"), 2)
        with pytest.raises(ValueError, match="16 finite numbers"):
            memory.search(RecallQuery(text="", mode="hidden", vector=[0.1] * 5, vector_space="hash-16"), 2)


def test_a_head_saved_in_the_model_folder_is_picked_up(tiny, tmp_path):
    model, tokenizer = tiny
    folder = tmp_path / "model"
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    assert RecallGenerator.from_pretrained(str(folder)).query_head is None
    loaded, loaded_tokenizer = load_model(str(folder))
    head = train_query_head(loaded, loaded_tokenizer, HashEncoder(16), TEXTS, recipe=FAST)
    head.save(folder)
    generator = RecallGenerator.from_pretrained(str(folder))
    assert generator.query_head is not None and generator.query_head.meta == head.meta
    memory = FixedMemory("You live in Lisbon.")
    generator.generate("Where do I live?" + RECALL_TOKEN, memory=memory, config=RecallConfig(query_mode="hidden"),
                       max_new_tokens=2)  # fmt: skip
    assert memory.queries[-1].vector is not None
    other, other_tokenizer = tiny_model("llama", seed=1)
    with pytest.raises(ValueError, match="fingerprint"):
        RecallGenerator(other, other_tokenizer, query_head=head)


def test_cli_train_head_needs_out_for_a_model_that_is_not_a_folder(capsys):
    """A head is saved beside its model by default: a hub id has no folder of ours to save it in.
    (The command end to end: tests/integration/test_cli.py.)"""
    from recall_core.cli import main

    assert main(["train-head", "--model", "no-such/model-on-the-hub", "--encoder", "hash-16"]) == 2
    assert "--out" in capsys.readouterr().err


def test_cli_train_head_out_folder_with_a_broken_adapter_is_refused_by_name(tiny, tmp_path, capsys):
    """An --out that holds adapter weights gets a head for the model with that adapter: a folder
    without the adapter's meta is refused by name, not trained past (the head would not fit it).
    (A real adapter end to end: tests/unit/test_training.py.)"""
    from recall_core.cli import main

    model, tokenizer = tiny
    base, out = tmp_path / "base", tmp_path / "candidate"
    model.save_pretrained(base)
    tokenizer.save_pretrained(base)
    out.mkdir()
    (out / "adapter_model.safetensors").write_bytes(b"a candidate")
    assert main(["train-head", "--model", str(base), "--out", str(out), "--encoder", "hash-16", "--device", "cpu"]) == 2
    assert "is not a recall adapter" in capsys.readouterr().err
    assert not (out / HEAD_FILE).exists()

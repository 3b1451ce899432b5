"""The engine on the embedded default model (SmolLM2-135M-Instruct, offline)."""

from __future__ import annotations

import pytest
import torch

from recall_core import RecallGenerator, recall_generate
from recall_core.config import DEFAULT_SYSTEM_PROMPT
from recall_core.models.loading import default_model_dir
from recall_core.prompt import chat_prompt_ids
from tests.helpers.memories import FixedMemory

# A made-up fact: the model cannot know it unless the memory is injected.
FACT = "The user's dog is called Zorblax."
QUESTION = [{"role": "user", "content": "What is my dog's name?"}]


def test_injected_memory_puts_an_unknowable_fact_into_the_answer(smollm):
    model, tokenizer = smollm
    gen = RecallGenerator(model, tokenizer, memory=FixedMemory(FACT))
    without = gen.generate(QUESTION, memory=None, max_new_tokens=30)
    with_memory = gen.generate(QUESTION, max_new_tokens=30)
    assert "Zorblax" not in without.text
    assert "Zorblax" in with_memory.text
    assert with_memory.recalls[0].injected and with_memory.recalls[0].memory_id == "m0"
    # Recall injects the memory; it is not in the prompt the user sent.
    assert "Zorblax" not in tokenizer.decode(gen.encode(QUESTION)[0])


@pytest.mark.parametrize("which", ["smollm_plain", "smollm"])
def test_no_recall_matches_generate_on_the_real_model(which, request):
    """Without a memory the loop is ``generate()`` with ``<recall>`` suppressed: the plain release
    never writes it, so that is ``generate()`` itself; the tuned default asks for its memory here,
    which it may not do with nothing to search."""
    model, tokenizer = request.getfixturevalue(which)
    ids = torch.tensor([tokenizer.apply_chat_template(QUESTION, add_generation_prompt=True, return_dict=False)])
    recall_id = model.config.recall_token_id
    plain = model.generate(ids, max_new_tokens=20, do_sample=False)
    suppressed = [*(model.generation_config.suppress_tokens or []), recall_id]
    expected = model.generate(ids, max_new_tokens=20, do_sample=False, suppress_tokens=suppressed)
    got = model.generate(ids, max_new_tokens=20, do_sample=False, custom_generate=recall_generate,
                         recall_tokenizer=tokenizer)
    assert torch.equal(got, expected)
    assert (recall_id in plain[0, ids.shape[1]:].tolist()) is (which == "smollm")
    if which == "smollm_plain":
        assert torch.equal(got, plain)


@pytest.mark.parametrize("which", ["smollm_plain", "smollm"])
def test_default_model_is_converted_once_into_a_plain_hf_folder(which, request):
    folder = default_model_dir()
    assert (folder / "config.json").is_file() and (folder / "model.safetensors").is_file()
    model, tokenizer = request.getfixturevalue(which)
    assert tokenizer.convert_tokens_to_ids("<recall>") == model.config.recall_token_id
    if which == "smollm":  # tuned: the pad row moved with the tied head's softmax (never fed, never sampled)
        assert model.config.memory_pad_token_id in model.generation_config.suppress_tokens
        return
    pad = model.config.memory_pad_token_id
    norms = model.get_input_embeddings().weight.norm(dim=-1)
    expected = 0.1 * norms[: min(pad, model.config.recall_token_id)].mean().item()
    assert norms[pad].item() == pytest.approx(expected, rel=1e-3)


def test_the_default_model_renders_the_training_prompt(smollm):
    """``recall_policy="model"`` puts the system message the model was tuned with before the chat."""
    _, tokenizer = smollm
    chat = [{"role": "user", "content": "What is my dog called?"}]
    trained = tokenizer.apply_chat_template([{"role": "system", "content": DEFAULT_SYSTEM_PROMPT}, *chat],
                                            add_generation_prompt=True, tokenize=True, return_dict=False)  # fmt: skip
    assert chat_prompt_ids(tokenizer, chat, "model", "system", DEFAULT_SYSTEM_PROMPT) == list(trained)

"""The loop's edges: where generated tokens start, the tokenizer cache, private transformers APIs."""

from __future__ import annotations

import gc
import re
import weakref
from pathlib import Path

import pytest
import torch
from transformers import LogitsProcessorList

from recall_core import RECALL_TOKEN, RecallConfig, recall_generate
from recall_core.tokens import tokenizer_info as _tokenizer_info
from tests.helpers.logits import ForceAt
from tests.helpers.memories import FixedMemory
from tests.helpers.tiny import tiny_tokenizer

CORE = Path(__file__).resolve().parents[2] / "recall_core"
FACT = "The user's dog is called Biscuit."


def _generate(model, tokenizer, text, memory, **kwargs):
    return model.generate(
        tokenizer(text, return_tensors="pt").input_ids,
        custom_generate=recall_generate,
        memory=memory,
        recall_config=RecallConfig(max_recalls=1),  # a random model may write a literal <recall> later
        recall_tokenizer=tokenizer,
        return_dict_in_generate=True,
        do_sample=False,
        **kwargs,
    )


@pytest.mark.parametrize(
    "text, memory, shift",
    [
        ("Where do I live?", FixedMemory(FACT), 0),  # no marker
        ("Where do I live?" + RECALL_TOKEN, FixedMemory(FACT), "injected"),  # a span injected in the prompt
        ("Where do I live?" + RECALL_TOKEN, None, -1),  # nothing injected: the marker is dropped
    ],
    ids=["no-marker", "injected", "dropped"],
)
def test_loop_reports_where_generated_tokens_start(tiny, text, memory, shift):
    model, tokenizer = tiny
    prompt_length = len(tokenizer(text).input_ids)
    out = _generate(model, tokenizer, text, memory, max_new_tokens=6)
    if shift == "injected":
        shift = out.recalls[0].length
    assert out.generated_start == prompt_length + shift
    assert out.sequences.shape[1] - out.generated_start == 6


def test_a_generated_recall_does_not_move_the_generated_start(tiny):
    model, tokenizer = tiny
    force = LogitsProcessorList([ForceAt(2, [model.config.recall_token_id])])
    text = "My dog is called"
    out = _generate(model, tokenizer, text, FixedMemory(FACT), max_new_tokens=8, logits_processor=force)
    assert out.recalls[0].injected and not out.recalls[0].in_prompt
    assert out.generated_start == len(tokenizer(text).input_ids)


def test_tokenizer_cache_does_not_keep_tokenizers_alive():
    tokenizer = tiny_tokenizer()
    tokenizer.add_special_tokens({"additional_special_tokens": ["<recall>", "<|memory_pad|>"]})
    vocab = tokenizer.get_vocab()
    info = _tokenizer_info(tokenizer, vocab["<recall>"], vocab["<|memory_pad|>"])
    assert _tokenizer_info(tokenizer, vocab["<recall>"], vocab["<|memory_pad|>"]) is info  # cached
    alive = weakref.ref(tokenizer)
    del tokenizer
    gc.collect()
    assert alive() is None


def test_a_tokenizer_that_grew_is_looked_at_again():
    tokenizer = tiny_tokenizer()
    tokenizer.add_special_tokens({"additional_special_tokens": ["<recall>", "<|memory_pad|>"]})
    vocab = tokenizer.get_vocab()
    before = _tokenizer_info(tokenizer, vocab["<recall>"], vocab["<|memory_pad|>"])
    tokenizer.add_tokens(["<tag>"])
    after = _tokenizer_info(tokenizer, vocab["<recall>"], vocab["<|memory_pad|>"])
    assert tokenizer.convert_tokens_to_ids("<tag>") in after.closing_ids - before.closing_ids


#: An underscore attribute read on something transformers made (a model, a config, a cache):
#: ``model._prefill``, ``self.model._x``, ``generation_config._y``... Only the compat module may.
_PRIVATE_HF = re.compile(r"\b(model|generation_config|gen|cache|past_key_values|outputs)\._[a-z]\w*")


def test_private_transformers_apis_are_used_in_the_compat_module_only():
    offenders = []
    for path in CORE.rglob("*.py"):
        if path.name == "hf_compat.py":
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if _PRIVATE_HF.search(line) or re.search(r"from transformers[\w.]* import _", line):
                offenders.append(f"{path.relative_to(CORE)}:{number}: {line.strip()}")
    assert offenders == []
    compat = (CORE / "decoding" / "hf_compat.py").read_text()
    for name in ("_prefill", "_update_model_kwargs_for_generation", "_valid_auto_compile_criteria",
                 "_optimize_model_for_decode", "get_compiled_call"):
        assert name in compat


def test_generator_output_is_kept_only_when_asked(tiny):
    from recall_core import RecallGenerator

    model, tokenizer = tiny
    gen = RecallGenerator(model, tokenizer)
    plain = gen.generate("Where do I live?", max_new_tokens=4)
    assert plain.output is None
    full = gen.generate("Where do I live?", max_new_tokens=4, return_dict_in_generate=True)
    assert torch.equal(full.output.sequences, plain.sequences)

"""The loop's edges: the tokenizer cache, private transformers APIs."""

from __future__ import annotations

import gc
import re
import weakref
from pathlib import Path

from recall_core.loop import _tokenizer_info
from tiny import tiny_tokenizer

CORE = Path(__file__).resolve().parents[1] / "core"


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
        if path.name == "transformers_compat.py":
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if _PRIVATE_HF.search(line) or re.search(r"from transformers[\w.]* import _", line):
                offenders.append(f"{path.relative_to(CORE)}:{number}: {line.strip()}")
    assert offenders == []
    compat = (CORE / "transformers_compat.py").read_text()
    for name in ("_prefill", "_update_model_kwargs_for_generation", "_valid_auto_compile_criteria",
                 "_optimize_model_for_decode", "get_compiled_call"):
        assert name in compat

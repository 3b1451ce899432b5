"""The default model's conversion reads its GGUF file once (recall_core.models.gguf_once).

A tiny random Llama is exported to GGUF, then converted the way `recall fetch-models` converts
SmolLM2; the result must be what transformers makes of the file without the shortcut.
"""

from __future__ import annotations

from pathlib import Path

import gguf
import numpy as np
import pytest
import torch
from gguf import tensor_mapping
from transformers import AutoModelForCausalLM, AutoTokenizer

from recall_core.models.gguf_once import array_reader, gguf_read_once
from recall_core.models.loading import _convert_gguf
from recall_core.serving import export_gguf
from tests.helpers.tiny import tiny_model


@pytest.fixture(scope="module")
def tiny_gguf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("tiny")
    model, tokenizer = tiny_model("llama")
    model.save_pretrained(folder / "hf")
    tokenizer.save_pretrained(folder / "hf")
    return export_gguf(folder / "hf", folder / "gguf" / "tiny.f32.gguf", "f32")


def test_the_array_reader_reads_what_gguf_reads(tiny_gguf: Path) -> None:
    plain, fast = gguf.GGUFReader(tiny_gguf), array_reader(tiny_gguf)
    assert type(fast.data) is np.ndarray and isinstance(plain.data, np.memmap)
    assert list(fast.fields) == list(plain.fields)
    for name, field in plain.fields.items():
        assert fast.fields[name].contents() == field.contents(), name
    assert [t.name for t in fast.tensors] == [t.name for t in plain.tensors]
    for ours, theirs in zip(fast.tensors, plain.tensors, strict=True):
        assert ours.tensor_type == theirs.tensor_type and np.array_equal(ours.data, theirs.data), ours.name


def test_the_conversion_reads_the_file_once_and_makes_what_transformers_makes(
    tiny_gguf: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads: list[str] = []
    build = gguf.GGUFReader.__init__

    def counted(self, path, mode="r"):  # noqa: ANN001, ANN202 - gguf's own signature
        reads.append(str(path))
        build(self, path, mode)

    monkeypatch.setattr(gguf.GGUFReader, "__init__", counted)
    _convert_gguf(tiny_gguf, tmp_path / "converted")
    assert len(reads) == 1  # tokenizer, config and weights share one reader
    reads.clear()
    assert gguf.GGUFReader.__init__ is counted and gguf.get_tensor_name_map is tensor_mapping.get_tensor_name_map

    converted = AutoModelForCausalLM.from_pretrained(tmp_path / "converted", dtype=torch.float32)
    plain = AutoModelForCausalLM.from_pretrained(tiny_gguf.parent, gguf_file=tiny_gguf.name, dtype=torch.float32)
    assert len(reads) == 2  # without the shortcut transformers reads it for the config and the weights
    ours, theirs = converted.state_dict(), plain.state_dict()
    assert ours.keys() == theirs.keys()
    assert all(torch.equal(ours[name], theirs[name]) for name in ours)
    text = "Remember: my cat <recall> is called Miso."
    ours_tok = AutoTokenizer.from_pretrained(tmp_path / "converted")
    theirs_tok = AutoTokenizer.from_pretrained(tiny_gguf.parent, gguf_file=tiny_gguf.name)
    assert ours_tok(text)["input_ids"] == theirs_tok(text)["input_ids"]


def test_only_the_given_file_is_shared_and_everything_is_restored(tiny_gguf: Path, tmp_path: Path) -> None:
    other = tmp_path / "copy.gguf"
    other.write_bytes(tiny_gguf.read_bytes())
    reader_class, name_map = gguf.GGUFReader, gguf.get_tensor_name_map
    with pytest.raises(RuntimeError, match="inside"):
        with gguf_read_once(tiny_gguf) as shared:
            assert gguf.GGUFReader(str(tiny_gguf)) is shared is gguf.GGUFReader(tiny_gguf)
            assert gguf.GGUFReader(other) is not shared and isinstance(gguf.GGUFReader(other), reader_class)
            assert gguf.GGUFReader(tiny_gguf, "c") is not shared  # a writable reader is never shared
            arch, layers = gguf.MODEL_ARCH.LLAMA, 2
            assert gguf.get_tensor_name_map(arch, layers) is gguf.get_tensor_name_map(arch, layers)
            raise RuntimeError("an error inside the block")
    assert gguf.GGUFReader is reader_class and gguf.get_tensor_name_map is name_map
    assert array_reader(tiny_gguf).fields.keys() == reader_class(tiny_gguf).fields.keys()

"""Loading a model: what fails without a network, and how it says so; how transformers' options reach it."""

from __future__ import annotations

import pytest

from recall_core.models.loading import ModelLoadError, load_model


def test_unknown_model_offline_fails_fast_with_advice(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelLoadError, match="not a local folder.*hf download"):
        load_model("someone/not-a-cached-model")


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A tiny model saved in bfloat16, its tokenizer also in a subfolder ``m``."""
    import torch

    from tests.helpers.tiny import tiny_model

    folder = tmp_path_factory.mktemp("models") / "tiny"
    model, tokenizer = tiny_model()
    model.to(torch.bfloat16).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    model.save_pretrained(folder / "m")
    tokenizer.save_pretrained(folder / "m")
    return folder


def test_dtype_is_read_as_transformers_reads_it(saved):
    """``torch_dtype=`` was passed on beside recall's own ``dtype=``, which won (float32 whatever was
    asked), and ``dtype="auto"`` meant float32 on CPU, not the checkpoint's dtype (a reviewer, 2026-12-07)."""
    import torch

    assert load_model(saved, device="cpu", torch_dtype=torch.float16)[0].dtype == torch.float16
    assert load_model(saved, device="cpu", torch_dtype="float16")[0].dtype == torch.float16
    assert load_model(saved, device="cpu", dtype="auto")[0].dtype == torch.bfloat16  # the checkpoint's
    assert load_model(saved, device="cpu")[0].dtype == torch.float32  # recall's default on CPU
    with pytest.raises(ValueError, match="give dtype= or torch_dtype=, not both"):
        load_model(saved, device="cpu", dtype="float32", torch_dtype="float16")


def test_where_the_files_are_is_where_the_tokenizer_is_read_too(saved):
    """A ``subfolder=`` (as ``revision=``, ``cache_dir=``) reached the model only: the tokenizer
    failed to load; ``local_files_only=True`` was given twice, a TypeError (a reviewer, 2026-12-07)."""
    model, tokenizer = load_model(saved, device="cpu", subfolder="m")
    assert model.get_input_embeddings().weight.shape[0] == len(tokenizer)
    with pytest.raises(ModelLoadError, match="local_files_only=True"):
        load_model("someone/not-cached-anywhere", device="cpu", local_files_only=True)

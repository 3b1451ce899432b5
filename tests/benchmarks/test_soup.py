"""benchmarks.soup: the soup of adapters is the exact mean of their merged weights, or a clear refusal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from benchmarks.soup import main, soup
from recall_core.models.lora import apply_adapter, base_fingerprint, read_meta
from recall_core.tokens import MEMORY_PAD_TOKEN, RECALL_TOKEN
from recall_core.training.adapter import save_adapter
from tests.helpers.tiny import tiny_model


def _adapter(folder: Path, seed: int, rank: int = 4) -> Path:
    """A recall adapter for the tiny model with random LoRA weights and token rows (a stand-in
    for a trained draw: the soup only does arithmetic on what is saved)."""
    from peft import LoraConfig, get_peft_model

    model, tokenizer = tiny_model()
    tokens = [tokenizer.convert_tokens_to_ids(t) for t in (RECALL_TOKEN, MEMORY_PAD_TOKEN)]
    meta = {"base_fingerprint": base_fingerprint(model), "recall_token_id": tokens[0],
            "memory_pad_token_id": tokens[1], "recipe": {"seed": seed}, "checks": {"agreement": 1.0}}  # fmt: skip
    torch.manual_seed(seed)
    config = LoraConfig(r=rank, lora_alpha=2 * rank, target_modules=["q_proj", "down_proj"],
                        init_lora_weights=False, trainable_token_indices=tokens)  # fmt: skip
    peft_model = get_peft_model(model, config)
    for name, param in peft_model.named_parameters():
        if "trainable_tokens_delta" in name:
            param.data += torch.randn_like(param)
    return save_adapter(peft_model, folder, meta)


def _merged(adapter: Path) -> dict[str, torch.Tensor]:
    model, tokenizer = tiny_model()
    return {k: v.detach().clone() for k, v in apply_adapter(model, tokenizer, adapter).state_dict().items()}


def test_the_soup_is_the_mean_of_the_merged_adapters(tmp_path: Path) -> None:
    draws = [_adapter(tmp_path / f"s{seed}", seed) for seed in (0, 1, 2)]
    folder = soup(tmp_path / "soup", draws)
    merged = [_merged(d) for d in draws]
    mixed = _merged(folder)
    plain = tiny_model()[0].state_dict()
    moved = 0
    for name, value in mixed.items():
        mean = torch.stack([m[name] for m in merged]).mean(dim=0)
        assert torch.allclose(value, mean, atol=2e-3), name  # float16 storage, as every adapter
        moved += not torch.allclose(mean, plain[name])
    assert moved >= 5  # q_proj and down_proj of both layers, and the embedding's recall rows
    config = json.loads((folder / "adapter_config.json").read_text())
    assert (config["r"], config["lora_alpha"]) == (12, 24)
    meta = read_meta(folder)
    assert [s["seed"] for s in meta["soup"]] == [0, 1, 2] and "checks" not in meta


def test_a_soup_of_adapters_that_differ_is_refused_and_names_the_field(tmp_path: Path) -> None:
    one, other_rank = _adapter(tmp_path / "a", 0), _adapter(tmp_path / "b", 1, rank=8)
    with pytest.raises(ValueError, match="adapters: a soup needs at least 2"):
        soup(tmp_path / "soup", [one])
    with pytest.raises(ValueError, match="'r'"):
        soup(tmp_path / "soup", [one, other_rank])
    other_base = _adapter(tmp_path / "c", 2)
    meta = read_meta(other_base) | {"base_fingerprint": "another model"}
    (other_base / "recall_adapter.json").write_text(json.dumps(meta))
    with pytest.raises(ValueError, match="'base_fingerprint'"):
        soup(tmp_path / "soup", [one, other_base])
    assert not (tmp_path / "soup").exists()  # nothing is written before every check has passed


def test_the_command_line_writes_the_soup(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    draws = [str(_adapter(tmp_path / f"s{seed}", seed)) for seed in (0, 1)]
    (tmp_path / "soup").mkdir()
    (tmp_path / "soup" / "query_head.json").write_text("{}")  # an older folder's file, for another model
    assert main([str(tmp_path / "soup"), *draws]) == 0
    assert "the mean of 2 adapters" in capsys.readouterr().out
    assert sorted(p.name for p in (tmp_path / "soup").iterdir()) == [
        "adapter_config.json", "adapter_model.safetensors", "recall_adapter.json"]  # the folder replaced whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s0", "s1", "soup"]  # no staging folder left
    with pytest.raises(SystemExit):
        main([str(tmp_path / "again"), draws[0]])

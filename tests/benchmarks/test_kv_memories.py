"""benchmarks/kv_memories.py at a tiny scale: it runs, its JSON holds what BENCHMARKS.md reports,
and the conversations benchmark runs recall with ``inject_mode=kv`` (a tiny model, the hash encoder)."""

from __future__ import annotations

import json

import pytest

from benchmarks import conversations, kv_memories
from recall_core import RecallConfig, RecallGenerator
from tests.helpers.tiny import tiny_model


@pytest.fixture(scope="module")
def generator() -> RecallGenerator:
    model, tokenizer = tiny_model("llama", positions=2048)
    return RecallGenerator(model, tokenizer)


def test_cost_times_every_arm_and_writes_the_ratios(generator, tmp_path):
    argv = ["cost", "--memories", "1,2", "--rounds", "2", "--out", str(tmp_path), "--no-progress"]
    assert kv_memories.main(argv, generator=generator) == 0
    result = json.loads((tmp_path / "cost.json").read_text())
    assert result["benchmark"] == "kv_memories" and result["kv_prefix"] == "shared" and result["kv_recompute"] == RecallConfig().kv_recompute == 0
    assert result["kv_bytes_per_token"] == 2 * 2 * 2 * 16 * 4  # layers, keys+values, kv heads, head dim, float32
    assert list(result["results"]) == ["1", "2"]
    for row in result["results"].values():
        assert set(row["ttft_s"]) == set(kv_memories.ARMS) and all(len(t) == 2 for t in row["ttft_s"].values())
        assert 0 < row["recomputed_tokens"] < row["injected_tokens"]
        # rag stuffs the block as text: about as many more prompt tokens as recall injects
        assert abs(row["prompt_tokens"]["rag"] - row["prompt_tokens"]["none"] - row["injected_tokens"]) <= 3
        assert row["block_bytes_per_memory"] > 0 and row["ttft_ratio_rag_over_kv"] > 0
    assert result["results"]["2"]["injected_tokens"] > result["results"]["1"]["injected_tokens"]
    assert (tmp_path / "cost.md").read_text().startswith("| memories |")
    assert (tmp_path / "cost.png").stat().st_size > 10_000


def test_bad_arguments_are_refused():
    with pytest.raises(SystemExit):
        kv_memories.parse_args(["cost", "--memories", "11"])
    with pytest.raises(SystemExit):
        kv_memories.parse_args(["cost", "--seed", "3"])
    args, rest = kv_memories.parse_args(["quality", "--kv-recompute", "all", "--seed", "3"])
    assert args.kv_recompute == "all" and rest == ["--seed", "3"]


def test_the_conversations_benchmark_runs_recall_in_kv_mode(generator, tmp_path):
    from recall_core.memory import HashEncoder

    argv = ["--seed", "3", "--users", "1", "--facts", "2", "--limit", "2", "--methods", "recall",
            "--variant", "kv:inject_mode=kv", "--max-new-tokens", "3", "--out", str(tmp_path), "--no-progress"]  # fmt: skip
    assert conversations.main(argv, generator=generator, encoder=HashEncoder(64)) == 0
    result = json.loads((tmp_path / "conversations.json").read_text())
    assert list(result["summary"]) == ["recall", "recall:kv"]
    tokens = [r for r in result["rows"] if r["method"] == "recall"]
    kv = [r for r in result["rows"] if r["method"] == "recall:kv"]
    assert [r["injected_tokens"] for r in kv] == [r["injected_tokens"] for r in tokens]  # the same blocks
    assert sum(r["injected_tokens"] > 0 for r in kv) >= 1


def test_quality_compares_kv_variants_with_tokens_mode(generator, tmp_path):
    from recall_core.memory import HashEncoder

    argv = ["quality", "--out", str(tmp_path), "--kv-variants", "kv:inject_mode=kv", "--kv-variants",
            "kv-none-0:inject_mode=kv,kv_prefix=none,kv_recompute=0", "--seed", "3", "--users", "1", "--facts", "2",
            "--limit", "2", "--max-new-tokens", "3", "--no-progress"]  # fmt: skip
    assert kv_memories.main(argv, generator=generator, encoder=HashEncoder(64)) == 0
    result = json.loads((tmp_path / "quality.json").read_text())
    assert set(result["methods"]) == {"recall", "recall:kv", "recall:kv-none-0"} and result["questions"] == 2
    assert (tmp_path / "conversations" / "conversations.json").is_file()

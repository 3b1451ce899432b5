"""benchmarks/hidden_query.py at a tiny scale: a tiny random model, a hash encoder, a synthetic LoCoMo."""

from __future__ import annotations

import json

from benchmarks import hidden_query
from recall_core.memory import HashEncoder
from recall_core.training.head import HeadRecipe, train_query_head
from recall_core.training.head_texts import composed, head_texts
from tests.benchmarks.locomo_files import write_locomo
from tests.helpers.tiny import tiny_model


def test_the_benchmark_runs_and_reports_the_ratios(tmp_path):
    model, tokenizer = tiny_model("llama")
    texts = [t for t, _ in zip(composed(0), range(40), strict=False)]
    head = train_query_head(model, tokenizer, HashEncoder(16), texts, recipe=HeadRecipe(epochs=2, batch_size=16))
    head.save(tmp_path / "head")
    data = write_locomo(tmp_path / "locomo.json")
    out = tmp_path / "out"
    argv = ["--head", str(tmp_path / "head"), "--encoder", "hash-16", "--data", str(data), "--users", "1",
            "--no-progress", "--out", str(out)]  # fmt: skip
    assert hidden_query.main(argv, model=model, tokenizer=tokenizer) == 0
    result = json.loads((out / "hidden_query.json").read_text())
    for bench in ("locomo", "conversations"):
        part = result[bench]
        assert part["questions"] > 0
        assert set(part) >= {"text/vector", "text/hybrid", "head/vector", "head/hybrid", "ratios"}
        for name in ("text/vector", "head/hybrid"):
            assert 0 <= part[name]["hit@1"] <= part[name]["hit@5"] <= 1
        assert set(part["ratios"]) == {"vector/hit@1", "vector/hit@5", "hybrid/hit@1", "hybrid/hit@5"}
    assert (out / "hidden_query.png").stat().st_size > 0
    assert "hidden / text" in (out / "hidden_query.md").read_text()


def test_training_texts_are_fixed_for_a_seed_and_come_from_every_source():
    texts, counts = head_texts(0)
    assert len(texts) == len(set(texts)) == sum(counts.values())
    assert texts == head_texts(0)[0] and texts != head_texts(1)[0]
    assert min(counts.values()) > 100 and "vocabulary" not in counts
    more, counts = head_texts(0, vocabulary_n=50)
    assert counts["vocabulary"] > 40 and set(texts) < set(more)

"""benchmarks.rerank: UPR's question likelihood, batched as computed one passage at a time, and the orders."""

from __future__ import annotations

import pytest
import torch

from benchmarks.heldout import ASKED_FAMILIES
from benchmarks.rerank import ORDERS, markdown, measure, passage_prompt, question_log_likelihood, reorder
from recall_core.memory.encoders import HashEncoder
from recall_core.types import MemoryCandidate


def test_the_batched_likelihood_is_each_passage_scored_alone(tiny):
    model, tokenizer = tiny
    question = "Which gym am I at now?"
    passages = ["User: switched gyms, Crunch now.", "User: I lift on Mondays and Wednesdays at Planet Fitness at 5:30."]
    batched = question_log_likelihood(model, tokenizer, question, passages)
    for passage, score in zip(passages, batched, strict=True):
        head = tokenizer(passage_prompt(passage), add_special_tokens=False).input_ids
        asked = tokenizer(" " + question, add_special_tokens=False).input_ids
        with torch.no_grad():
            log_p = model(input_ids=torch.tensor([head + asked])).logits[0].float().log_softmax(-1)
        alone = float(torch.stack([log_p[len(head) - 1 + i, t] for i, t in enumerate(asked)]).mean())
        assert score == pytest.approx(alone, abs=1e-4)


def test_reorder_keeps_the_search_or_follows_the_model_or_fuses_both():
    found = [MemoryCandidate(str(i), 0.9 - 0.1 * i, f"note {i}") for i in range(3)]
    lm = [-3.0, -1.0, -2.0]
    assert reorder(found, lm, "search") == found
    upr = reorder(found, lm, "upr")
    assert [c.id for c in upr] == ["1", "2", "0"] and upr[0].score > upr[1].score > upr[2].score
    assert [c.id for c in reorder(found, lm, "fuse")] == ["1", "0", "2"]  # ranks 1+0 beat 0+2 and 2+1


def test_measure_reports_every_order_and_a_time_per_recall(tiny):
    model, tokenizer = tiny
    data = {"handwritten": ASKED_FAMILIES["handwritten"].generate(20261124, users=1)}
    by_order, seconds = measure(data, HashEncoder(32), model, tokenizer, cut=16, show=False)
    assert set(by_order) == set(ORDERS) and seconds
    n = by_order["search"]["handwritten"]["questions"]
    assert n > 0 and all(by_order[o]["handwritten"]["questions"] == n for o in ORDERS)
    per = {o: {"handwritten": dict(t["handwritten"]), "all": dict(t["handwritten"])} for o, t in by_order.items()}
    table = markdown({"families": ["handwritten"], "orders": per, "ms_per_recall": {"median": 5.0, "p90": 9.0},
                      "model": "tuned", "threads": 1, "cut": 16})  # fmt: skip
    assert "| upr |" in table and "median 5 ms" in table

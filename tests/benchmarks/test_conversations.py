"""The conversations benchmark: the generator, the scoring, and a tiny run of the whole pipeline."""

from __future__ import annotations

import json

import pytest

import recall_core.training.conversations as data
from benchmarks import conversations
from benchmarks.common.args import parse_variant
from benchmarks.common.methods import Answer, hits
from tests.helpers.tiny import tiny_model


def test_the_generator_is_deterministic_for_a_seed():
    first, again, other = data.generate(5, users=3), data.generate(5, users=3), data.generate(6, users=3)
    assert data.as_dict(first) == data.as_dict(again)
    assert data.as_dict(first) != data.as_dict(other)


def test_generated_conversations_have_what_the_benchmark_needs():
    users = data.generate(data.SEEDS["eval"])
    questions = [q for u in users for q in u.questions]
    assert len(users) >= 10 and len(questions) >= 200
    for user in users:
        sessions = user.sessions()
        assert len(sessions) == 4
        dates = [s[0].date for s in sessions]
        assert dates == sorted(dates) and len(set(dates)) == 4
        assert all(s[0].role == "user" for s in sessions)
        roles = [t.role for t in user.turns]
        assert roles[::2] == ["user"] * (len(roles) // 2) and roles[1::2] == ["assistant"] * (len(roles) // 2)
        stated = {t.fact for t in user.turns if t.fact and t.version == 1}
        assert stated == {q.slot for q in user.questions}
        for question in user.questions:
            evidence = next(t for t in user.turns if (t.session, t.index) == question.evidence)
            assert evidence.role == "user" and data.contains(evidence.content, question.answer)
            if question.stale:  # updated in the last session: the old value was said before
                assert evidence.session == 4 and evidence.version == 2
                assert any(data.contains(t.content, question.stale) for t in user.turns if t.fact == question.slot)
        # Acknowledgements never repeat the fact; distractors name other values of the same kind.
        for turn, reply in zip(user.turns[::2], user.turns[1::2], strict=True):
            if turn.fact:
                question = next(q for q in user.questions if q.slot == turn.fact)
                assert not data.contains(reply.content, question.answer)
    assert sum(1 for q in questions if q.stale) >= 2 * len(users)
    assert sum(1 for u in users for t in u.turns if t.distractor) >= 4 * len(users)
    with pytest.raises(ValueError, match="sessions"):
        data.generate(1, sessions=1)


@pytest.mark.parametrize(
    "answer, value, expected",
    [
        ("Your dog is called Biscuit.", "Biscuit", True),
        ("biscuits are tasty", "Biscuit", False),  # whole words only
        ("Her birthday is March 14th.", "14 March", True),
        ("It is on 14 March.", "14 March", True),
        ("It is in March.", "14 March", False),
        ("You drive a Lada Niva.", "green Lada Niva", True),
        ("You drive a green car.", "green Lada Niva", False),
        ("At Crumbs, the bakery.", "a bakery called Crumbs", True),
        ("You love alt-J!", "Alt-J", True),
        ("Salsa dancing!", "salsa dancing", True),
    ],
)
def test_an_answer_counts_when_it_names_the_value(answer, value, expected):
    assert data.contains(answer, value) is expected


def test_stale_answers_are_counted_apart():
    question = data.Question("k", "u", "city", "Which city do I live in?", answer="Lyon", stale="Turku")
    assert data.score(question, "You live in Lyon.") == {"correct": True, "stale": False}
    assert data.score(question, "You live in Turku.") == {"correct": False, "stale": True}
    assert data.score(question, "You moved from Turku to Lyon.") == {"correct": True, "stale": False}
    assert data.score(question, "No idea.") == {"correct": False, "stale": False}


def test_hits_look_for_the_fact_turn_among_what_was_retrieved():
    answer = Answer("x", 10, retrieved=["User: hello", "User: I live in Lyon.\nAssistant: Noted!"])
    assert hits(answer, "I live in Lyon.") == {"hit@1": False, "hit@4": True}


def test_a_tiny_run_writes_the_result_schema(tmp_path):
    from recall_core import RecallGenerator
    from recall_core.memory import HashEncoder

    model, tokenizer = tiny_model("llama")
    argv = ["--seed", "3", "--users", "2", "--facts", "3", "--limit", "4", "--methods", "none,history,recall",
            "--variant", "turns:unit='turn',memories=2", "--max-new-tokens", "4", "--out", str(tmp_path),
            "--no-progress"]  # fmt: skip
    assert conversations.main(argv, generator=RecallGenerator(model, tokenizer), encoder=HashEncoder(64)) == 0
    result = json.loads((tmp_path / "conversations.json").read_text())
    assert result["benchmark"] == "conversations" and result["schema_version"] == 1
    assert result["questions"] == 4 and result["users"] == 2
    assert list(result["summary"]) == ["none", "history", "recall", "recall:turns"]
    for summary in result["summary"].values():
        assert summary["questions"] == 4
        assert {"facts_answered", "stale", "processed_tokens", "ttft_s_p50", "total_s_p50", "hit@1", "hit@4"} <= set(summary)
    rows = [r for r in result["rows"] if r["method"] == "recall"]
    assert sum(r["injected_tokens"] > 0 for r in rows) >= 3  # the hash encoder finds most stated facts
    assert all(r["processed_tokens"] == r["prompt_tokens"] + r["injected_tokens"] for r in rows)
    history = [r for r in result["rows"] if r["method"] == "history"]
    none = [r for r in result["rows"] if r["method"] == "none"]
    assert all(h["prompt_tokens"] > n["prompt_tokens"] + 100 for h, n in zip(history, none, strict=True))
    assert (tmp_path / "conversations.md").read_text().startswith("| method |")
    assert (tmp_path / "conversations.png").stat().st_size > 10_000


def test_variants_split_store_options_from_the_config():
    name, changes = parse_variant("dated:unit='window',memories=2,template='N:\\n{text}'")
    assert name == "recall:dated" and changes == {"unit": "window", "memories": 2, "template": "N:\n{text}"}


def test_a_variant_value_may_hold_commas():
    """The heldout docstring's own example: a tuple, and a string with a comma, stay whole."""
    name, changes = parse_variant("user:roles=('user',), template='a, b {text}',memories=3")
    assert name == "recall:user" and changes == {"roles": ("user",), "template": "a, b {text}", "memories": 3}


@pytest.mark.integration
def test_the_peers_answer_from_their_own_memories(tmp_path):
    """LangChain's and LlamaIndex's recipes on the real model and encoder, two questions each."""
    argv = ["--seed", "3", "--users", "1", "--facts", "2", "--methods", "langchain,llamaindex",
            "--max-new-tokens", "12", "--out", str(tmp_path), "--no-progress"]  # fmt: skip
    assert conversations.main(argv) == 0
    result = json.loads((tmp_path / "conversations.json").read_text())
    for name in ("langchain", "llamaindex"):
        rows = [r for r in result["rows"] if r["method"] == name]
        assert len(rows) == 2 and all(r["retrieved"] for r in rows)
        assert result["summary"][name]["hit@4"] == 1.0  # two facts, four notes: both found
        assert all(r["processed_tokens"] > 60 for r in rows)  # the notes are in the prompt


def test_recall_bench_runs_the_script(capfd):
    from recall_core.cli import main

    assert main(["bench", "conversations", "--help"]) == 0
    assert "--variant" in capfd.readouterr().out


def test_search_text_scores_each_window_mode_on_a_tiny_run(tmp_path):
    """benchmarks/search_text.py on one generated user with the hash encoder: every mode scored, JSON written."""
    from benchmarks import search_text
    from recall_core.memory import HashEncoder

    encoder = HashEncoder(64)
    scores = {mode: search_text.conversations_hits(encoder, 5, 1, mode) for mode in search_text.MODES}
    for row in scores.values():
        assert row["questions"] == len(data.generate(5, users=1)[0].questions)
        assert 0 <= row["hit@1"] <= row["hit@2"] <= row["hit@4"] <= 1
    # The hash encoder and BM25 still see words: the fact turn is found for some questions in every mode.
    assert all(row["hit@4"] > 0 for row in scores.values())

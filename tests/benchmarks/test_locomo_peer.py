"""(g) on LoCoMo: the LangChain recipe's documents (each session's exchanges, dated and labelled),
the option checks, and the whole recipe on the real model and encoder over the synthetic slice."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.common.locomo_data import load_locomo
from benchmarks.locomo import cli
from benchmarks.locomo.answers import DEFAULT_METHODS, METHODS
from benchmarks.locomo.peer import exchanges
from tests.benchmarks.locomo_files import synthetic_locomo


@pytest.fixture(scope="module")
def synthetic_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("locomo") / "synthetic.json"
    path.write_text(json.dumps(synthetic_locomo()))
    return path


def test_documents_are_each_sessions_exchanges_dated_and_labelled(synthetic_file):
    (conversation,) = load_locomo(synthetic_file)
    docs = exchanges(conversation)
    ids = [i for _, held in docs for i in held]
    assert ids == [t.dia_id for t in conversation.turns]  # every turn once, in order
    by_id = {t.dia_id: t for t in conversation.turns}
    for text, held in docs:
        turns = [by_id[i] for i in held]
        assert 1 <= len(turns) <= 2
        assert len({t.session for t in turns}) == 1  # an exchange never spans two sessions
        assert text.startswith("[") and "2023] " in text.split("\n")[0]  # the session's day in front
        for turn in turns:
            assert f"{turn.speaker}: {turn.text}" in text
    first_text, first_ids = docs[0]
    assert first_ids == ("D1:1", "D1:2")
    assert first_text.split("] ", 1)[1].startswith("Ada: I adopted a beagle puppy")
    assert "\nBen: What a name!" in first_text


def test_the_recipe_is_asked_for_by_name_and_needs_a_real_encoder(synthetic_file, capsys):
    assert "langchain" in METHODS and "langchain" not in DEFAULT_METHODS
    with pytest.raises(SystemExit):
        cli.parse_args(["--data", str(synthetic_file), "--methods", "langchain", "--encoder", "hash"])
    assert "--encoder hash" in capsys.readouterr().err


@pytest.mark.integration
def test_the_recipe_answers_every_category_from_its_own_documents(tmp_path, synthetic_file):
    out = tmp_path / "out"
    argv = ["--data", str(synthetic_file), "--sample", "5", "--seed", "1", "--methods", "rag,langchain",
            "--max-new-tokens", "12", "--threads", "2", "--out", str(out), "--no-progress"]  # fmt: skip
    assert cli.main(argv) == 0
    result = json.loads((out / "locomo.json").read_text())
    rows = result["answers"]["rows"]
    assert len(rows) == 5 and {r["category"] for r in rows} >= {1, 5}
    for row in rows:
        cell = row["methods"]["langchain"]
        assert cell["text"].strip() and 0 <= cell["score"] <= 1
        assert cell["injected_tokens"] == 0 and cell["processed_tokens"] == cell["prompt_tokens"] > 60
        assert len(cell["retrieved"]) == 4 and all(cell["retrieved"])  # four documents, each its dia_ids
        if row["evidence"]:
            assert cell["evidence_in_context"] in (True, False)
    summary = result["answers"]["methods"]["langchain"]
    assert summary["label"].startswith("(g)") and summary["questions"] == 5
    assert "(g) the LangChain recipe" in (out / "locomo.md").read_text()


def test_an_odd_last_turn_of_a_session_stands_alone(tmp_path):
    data = synthetic_locomo()
    data[0]["conversation"]["session_1"] = data[0]["conversation"]["session_1"][:3]
    path = tmp_path / "odd.json"
    path.write_text(json.dumps(data))
    (conversation,) = load_locomo(path)
    assert [held for _, held in exchanges(conversation)] == [
        ("D1:1", "D1:2"), ("D1:3",), ("D2:1", "D2:2"), ("D2:3", "D2:4")]

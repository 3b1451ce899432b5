"""(g) on LoCoMo: the LangChain recipe's documents (each session's exchanges, dated and labelled),
the option checks, and the whole recipe on the real model and encoder over the synthetic slice."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.common.locomo_data import load_locomo
from benchmarks.common.methods import Answer
from benchmarks.locomo import cli
from benchmarks.locomo.answers import DEFAULT_METHODS, METHODS
from benchmarks.locomo.peer import LocomoLangChain, encoder_path, exchanges
from benchmarks.locomo.prompts import Prompt
from recall_core.memory.encoders import default_encoder_path
from tests.benchmarks.locomo_files import synthetic_locomo, write_locomo


@pytest.fixture(scope="module")
def synthetic_file(tmp_path_factory) -> Path:
    return write_locomo(tmp_path_factory.mktemp("locomo") / "synthetic.json")


@pytest.fixture(scope="module")
def three_sessions(tmp_path_factory) -> Path:
    """The synthetic conversation and a third session: six exchanges, so that four are a choice."""
    data = synthetic_locomo()
    conversation = data[0]["conversation"]
    conversation["session_3_date_time"] = "4:30 pm on 2 June, 2023"
    conversation["session_3"] = [
        {"speaker": s, "dia_id": f"D3:{i + 1}", "text": t} for i, (s, t) in enumerate([
            ("Ada", "The lighthouse needs a new lamp before the winter storms."),
            ("Ben", "I baked sourdough bread for the first time, it came out flat."),
            ("Ada", "My neighbour lent me a kayak for the weekend."),
            ("Ben", "The orchestra wants me for the autumn season."),
        ])
    ]  # fmt: skip
    return write_locomo(tmp_path_factory.mktemp("locomo") / "three.json", data)


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
        for turn in turns:
            assert f"{turn.speaker}: {turn.text}" in text
    assert [held for _, held in docs] == [("D1:1", "D1:2"), ("D1:3", "D1:4"), ("D2:1", "D2:2"), ("D2:3", "D2:4")]
    assert docs[0][0].startswith("[8 May, 2023] Ada: I adopted a beagle puppy")
    assert "\nBen: What a name!" in docs[0][0]
    assert docs[2][0].startswith("[20 May, 2023] Ada: Zorblax chewed")  # each session its own day


@pytest.mark.parametrize("encoder", ["hash", "hash-16", "HASH"])
def test_the_recipe_is_asked_for_by_name_and_needs_a_real_encoder(synthetic_file, capsys, encoder):
    assert "langchain" in METHODS and "langchain" not in DEFAULT_METHODS
    with pytest.raises(SystemExit):
        cli.parse_args(["--data", str(synthetic_file), "--methods", "langchain", "--encoder", encoder])
    assert "sentence-transformers" in capsys.readouterr().err
    # without answers no recipe is built, so any encoder will do
    assert cli.parse_args(["--methods", "langchain", "--encoder", encoder, "--retrieval-only"]).encoder == encoder


def test_the_stores_names_for_its_encoder_are_the_packaged_minilm():
    packaged = str(default_encoder_path())
    for name in (None, "default", "all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"):
        assert encoder_path(name) == packaged
    assert encoder_path("/models/my-encoder") == "/models/my-encoder"


def test_each_retrieved_document_maps_to_its_turns():
    recipe = object.__new__(LocomoLangChain)  # no model: only the mapping is under test
    recipe.tokenizer = lambda text, add_special_tokens=False: type("T", (), {"input_ids": text.split()})()
    recipe.turns = {"s": {"[8 May, 2023] Ada: hi\nBen: hello": ("D1:1", "D1:2"), "[8 May, 2023] Ada: bye": ("D1:3", "D1:9")}}
    recipe.respond = lambda sample_id, question, system=None: Answer(
        "Ben said hello", 40, 0, 0.2, 0.5, ["[8 May, 2023] Ada: bye", "[8 May, 2023] Ada: hi\nBen: hello"])
    out = recipe.run("s", Prompt("system", "What did Ben say?"))
    assert out["retrieved"] == [["D1:3", "D1:9"], ["D1:1", "D1:2"]]
    assert out["processed_tokens"] == out["prompt_tokens"] == 40 and out["injected_tokens"] == 0
    assert out["generated_tokens"] == 3 and out["ttft_s"] <= out["total_s"]
    recipe.respond = lambda sample_id, question, system=None: Answer("x", 1, 0, 0.1, 0.1, ["a text it never wrote"])
    with pytest.raises(KeyError):
        recipe.run("s", Prompt("system", "?"))


@pytest.mark.integration
def test_the_recipe_answers_every_category_from_its_own_documents(tmp_path, three_sessions):
    out = tmp_path / "out"
    argv = ["--data", str(three_sessions), "--sample", "5", "--seed", "1", "--methods", "rag,langchain",
            "--max-new-tokens", "12", "--threads", "2", "--out", str(out), "--no-progress"]  # fmt: skip
    assert cli.main(argv) == 0
    result = json.loads((out / "locomo.json").read_text())
    rows = result["answers"]["rows"]
    assert len(rows) == 5 and {r["category"] for r in rows} >= {1, 5}
    for row in rows:
        cell = row["methods"]["langchain"]
        assert cell["text"].strip() and 0 <= cell["score"] <= 1
        assert cell["injected_tokens"] == 0 and cell["processed_tokens"] == cell["prompt_tokens"] > 60
        assert len(cell["retrieved"]) == 4 and all(cell["retrieved"])  # four of six documents, each its dia_ids
        assert cell["ttft_s"] <= cell["total_s"] and cell["generated_tokens"] > 0
        if row["category"] == 4:  # one turn says it, in words the question shares: found
            assert cell["evidence_in_context"] is True
    summary = result["answers"]["methods"]["langchain"]
    assert summary["label"].startswith("(g)") and summary["questions"] == 5
    assert "(g) the LangChain recipe" in (out / "locomo.md").read_text()


def test_an_odd_last_turn_of_a_session_stands_alone(tmp_path):
    data = synthetic_locomo()
    data[0]["conversation"]["session_1"] = data[0]["conversation"]["session_1"][:3]
    (conversation,) = load_locomo(write_locomo(tmp_path / "odd.json", data))
    assert [held for _, held in exchanges(conversation)] == [
        ("D1:1", "D1:2"), ("D1:3",), ("D2:1", "D2:2"), ("D2:3", "D2:4")]

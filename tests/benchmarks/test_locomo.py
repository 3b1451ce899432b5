"""The LoCoMo benchmark: metric code against hand-computed examples, and the whole pipeline
on a tiny slice (a tiny random model, the hash encoder) with its JSON schema checked.

The slice comes from ``../shared/data/locomo_dev.json`` when it is there (the first two
sessions of the first conversation and the questions about them, written to pytest's tmp
folder, never into the project), else from a synthetic file in the same schema.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import retrieval_methods
from benchmarks.common.locomo_data import clean_evidence, load_locomo, stratified_sample
from benchmarks.common.locomo_memory import ingest
from benchmarks.common.locomo_metrics import (
    STEMMER,
    first_hit_rank,
    hit_at_k,
    multi_answer_f1,
    normalize_answer,
    qa_score,
    token_f1,
)
from benchmarks.locomo import cli
from benchmarks.locomo.answers import DEFAULT_METHODS, answer_summary
from benchmarks.locomo.bench import Bench, FirstLineStop, labelled
from benchmarks.locomo.prompts import final_answer, official_answer
from benchmarks.locomo.report import by_place
from tests.benchmarks.locomo_files import dev_slice, write_locomo
from tests.helpers.tiny import tiny_model

# -- metrics ------------------------------------------------------------------------------------


def test_normalize_drops_case_punctuation_articles_and_and():
    assert normalize_answer("The Cat, and a Dog!") == "cat dog"
    assert normalize_answer("  an   apple.  ") == "apple"


def test_token_f1_on_known_strings():
    assert token_f1("7 May 2023", "7 May 2023") == 1.0
    # prediction [on, 7, may], answer [7, may, 2023]: 2 shared, P = R = 2/3
    assert token_f1("on 7 May", "7 May 2023") == pytest.approx(2 / 3)
    # prediction [she, went, to, paris], answer [paris]: P = 1/4, R = 1, F1 = 2 * .25 / 1.25
    assert token_f1("She went to Paris.", "Paris") == pytest.approx(0.4)
    assert token_f1("nothing in common", "Paris") == 0.0
    assert token_f1("", "Paris") == 0.0


@pytest.mark.skipif(not STEMMER.startswith("nltk"), reason="stemming needs nltk")
def test_token_f1_stems_like_the_official_evaluation():
    assert token_f1("running dogs", "run dog") == 1.0


def test_multi_hop_f1_averages_best_part_matches():
    # answer parts [london, berlin]: london matched (1.0), berlin not (0.0)
    assert multi_answer_f1("Paris, London", "London, Berlin") == pytest.approx(0.5)
    assert qa_score("Paris, London", "London, Berlin", 1) == pytest.approx(0.5)
    assert qa_score("Paris, London", "London, Berlin", 4) == pytest.approx(token_f1("Paris London", "London Berlin"))


def test_adversarial_score_accepts_the_official_patterns_only():
    assert qa_score("No information available", "", 5) == 1.0
    assert qa_score("That is not mentioned in the conversation.", "", 5) == 1.0
    assert qa_score("She researched adoption agencies", "", 5) == 0.0
    with pytest.raises(ValueError, match="category"):
        qa_score("x", "y", 7)


def test_hit_at_k_on_a_constructed_ranking():
    ranked = [("D1:1",), ("D1:2", "D1:3"), ("D2:1",)]
    assert not hit_at_k(ranked, ["D1:3"], 1)
    assert hit_at_k(ranked, ["D1:3"], 2)
    assert hit_at_k(ranked, ["D9:9", "D2:1"], 3)
    assert not hit_at_k(ranked, ["D9:9"], 10)
    assert first_hit_rank(ranked, ["D1:3"]) == 2
    assert first_hit_rank(ranked, ["D9:9"]) is None


def test_evidence_is_cleaned_the_same_way_for_every_question():
    known = {"D8:6", "D9:17", "D11:26"}
    assert clean_evidence(["D8:6; D9:17"], known) == ("D8:6", "D9:17")
    assert clean_evidence(["D:11:26", "D", "D10:19"], known) == ("D11:26",)


def test_category_5_options_map_by_the_first_line_and_as_the_official_code():
    """``final_answer`` maps an option named in the first line; ``official_answer`` as LoCoMo's
    ``get_cat_5_answer`` does, only a reply that is a letter or "(a)"/"(b)" (until 2026-12-07 the
    first was said to be the official mapping: a reviewer)."""
    options = {"a": "No information available", "b": "a red car"}
    assert final_answer("(a)\nmore text", options) == "No information available"
    assert final_answer("I think (b) a red car", options) == "a red car"
    assert final_answer("Not mentioned.", options) == "Not mentioned."
    assert final_answer("\n  Paris  \nLondon", None) == "Paris"
    assert official_answer("(a)\nmore text", options) == "(a)\nmore text"  # scored on its text
    assert official_answer(" (A) ", options) == official_answer("a", options) == "No information available"
    assert official_answer("b", options) == official_answer("(b)", options) == "a red car"
    assert official_answer("(a) She went to Paris.", options) == "(a) she went to paris."
    assert official_answer("\n  Paris  \nLondon", None) == "Paris"


def test_category_5_is_split_by_where_no_information_sat():
    """A model that always writes "(a)" is right on category 5 about half the time; the split by the
    no-information option's place shows it (right every time it is (a), never when it is (b))."""
    rows = [{"category": 5, "no_info_option": place, "methods": {"rag": {"score": float(place == "a"),
                                                                         **{k: 0 for k in COSTS}}}}
            for place in "aab"] + [{"category": 1, "methods": {"rag": {"score": 0.5, **{k: 0 for k in COSTS}}}}]
    summary = answer_summary(rows, "rag")
    assert summary["adversarial_accuracy"] == pytest.approx(2 / 3)
    assert summary["adversarial_by_place"] == {"a": {"right": 2, "questions": 2}, "b": {"right": 0, "questions": 1}}
    assert by_place(summary["adversarial_by_place"]) == "2/2 · 0/1"
    assert by_place(None) == "-"


COSTS = ("prompt_tokens", "injected_tokens", "processed_tokens", "generated_tokens", "ttft_s", "total_s")


def test_rrf_fuses_rankings():
    fused = retrieval_methods.rrf([["a", "b", "c"], ["c", "a"]], k=60)
    assert [memory_id for memory_id, _ in fused] == ["a", "c", "b"]
    assert fused[0][1] == pytest.approx(1 / 61 + 1 / 62)


# -- data ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def data_file(tmp_path_factory) -> Path:
    return write_locomo(tmp_path_factory.mktemp("locomo") / "slice.json", dev_slice())


def test_loader_and_stratified_sample_are_deterministic(tmp_path):
    (conversation,) = load_locomo(write_locomo(tmp_path / "s.json"))
    assert [t.dia_id for t in conversation.turns][:2] == ["D1:1", "D1:2"]
    assert conversation.turns[4].date == "10:00 am on 20 May, 2023"
    questions = conversation.questions
    assert questions[4].answer == "yes"  # category 3: the official code keeps the part before ';'
    assert questions[5].answer == "" and questions[5].adversarial_answer == "Zorblax"
    first = stratified_sample(questions, 4, seed=3)
    assert first == stratified_sample(questions, 4, seed=3)
    assert len(first) == 4 and len({q.category for q in first}) == 4


# -- the pipeline -------------------------------------------------------------------------------


def test_whole_pipeline_on_a_tiny_slice(tmp_path, data_file):
    # a window the tiny tokenizer's long notes fit in (with 512 positions a recall would have no room)
    model, tokenizer = tiny_model("llama", positions=4096)
    from recall_core import RecallGenerator

    generator = RecallGenerator(model, tokenizer)
    out = tmp_path / "out"
    argv = [
        "--data", str(data_file), "--encoder", "hash", "--sample", "6", "--seed", "1", "--out", str(out),
        "--history-tokens", "150", "--rag-k", "2", "--max-new-tokens", "4", "--no-progress",
    ]  # fmt: skip
    assert cli.main(argv, generator=generator) == 0

    result = json.loads((out / "locomo.json").read_text())
    assert result["benchmark"] == "locomo" and result["schema_version"] == 1
    assert result["ingest"]["turns"] > 0
    assert set(result["retrieval"]) == {"text/vector", "text/hybrid"}
    for summary in result["retrieval"].values():
        for k in (1, 5, 10):
            hits = summary[f"hit@{k}"]
            assert set(hits) == {"1", "2", "3", "4", "5", "1-4"}
            assert all(v is None or 0 <= v <= 1 for v in hits.values())
        assert summary["hit@1"]["1-4"] <= summary["hit@5"]["1-4"] <= summary["hit@10"]["1-4"]
    answers = result["answers"]
    assert answers["sample_size"] == 6 and len(answers["rows"]) == 6
    assert set(answers["methods"]) == set(DEFAULT_METHODS)
    for name, summary in answers["methods"].items():
        assert summary["questions"] == 6, name
        for key in ("prompt_tokens", "injected_tokens", "processed_tokens", "ttft_s", "total_s"):
            assert summary[key]["mean"] is not None and summary[key]["mean"] >= 0, (name, key)
    for row in answers["rows"]:
        assert ("no_info_option" in row) == (row["category"] == 5)
        for name, cell in row["methods"].items():
            assert {"prediction", "score", "prompt_tokens", "injected_tokens", "ttft_s", "total_s"} <= set(cell)
            assert 0 <= cell["score"] <= 1
            assert cell["ttft_s"] <= cell["total_s"] + 1e-9
            assert cell["processed_tokens"] == cell["prompt_tokens"] + cell["injected_tokens"]
            if name in ("none", "full", "rag"):
                assert cell["injected_tokens"] == 0
    methods = answers["methods"]
    assert methods["full"]["prompt_tokens"]["mean"] > methods["none"]["prompt_tokens"]["mean"]
    assert methods["rag"]["prompt_tokens"]["mean"] > methods["none"]["prompt_tokens"]["mean"]
    # (d) asks in (c)'s layout, the question before and after a <recall> where (c) writes its
    # excerpts (the user turn twice, at most): the memory comes in as injected tokens, not prompt text
    for row in result["answers"]["rows"]:
        assert row["methods"]["recall"]["prompt_tokens"] <= 2 * row["methods"]["none"]["prompt_tokens"]
    assert methods["recall"]["injected_tokens"]["mean"] > 0

    table = (out / "locomo.md").read_text()
    assert "| text/vector |" in table and "(d) recall, tokens" in table
    for png in ("locomo_f1_tokens.png", "locomo_hits.png"):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_retrieval_only_skips_answers(tmp_path, data_file):
    model, tokenizer = tiny_model("llama")
    from recall_core import RecallGenerator

    out = tmp_path / "out"
    argv = ["--data", str(data_file), "--encoder", "hash", "--retrieval-only",
            "--k", "1,3", "--out", str(out), "--no-progress"]  # fmt: skip
    assert cli.main(argv, generator=RecallGenerator(model, tokenizer)) == 0
    result = json.loads((out / "locomo.json").read_text())
    assert "answers" not in result
    assert set(result["retrieval"]) == {"text/vector", "text/hybrid"}
    assert set(result["retrieval"]["text/vector"]) >= {"hit@1", "hit@3", "latency_ms", "questions"}


def test_retrieval_methods_on_the_slice(tmp_path, data_file):
    from recall_core.memory import HashEncoder, MemoryStore

    conversations = load_locomo(data_file)
    with MemoryStore.local(tmp_path / "m", encoder=HashEncoder(64)) as store:
        ingest(store, conversations, "window")
        memory = store.for_user(conversations[0].sample_id)
        assert {r.metadata["dia_id"] for r in memory.all()} == {t.dia_id for t in conversations[0].turns}
        second = next(r for r in memory.all() if r.metadata.get("dia_id") == "D1:2")
        assert second.metadata["covers"] == "D1:1,D1:2" and "\n" in second.text
        user = conversations[0].sample_id
        question = conversations[0].questions[0]
        rrf = retrieval_methods.make_memory(retrieval_methods.Method.parse("window/rrf"), store, user)
        found = rrf.search(question.question, 5)
        assert 1 <= len(found) <= 5 and all("fused" in c.metadata for c in found)
        assert [c.metadata["fused"] for c in found] == sorted((c.metadata["fused"] for c in found), reverse=True)
        # The other rankings are the store's own searches, not copies of them.
        for ranking, retrieval in (("hybrid", "hybrid"), ("bm25", "lexical"), ("vector", "vector")):
            ranked = retrieval_methods.make_memory(retrieval_methods.Method.parse(f"window/{ranking}"), store, user)
            expected = store.for_user(user).search(question.question, 5, retrieval=retrieval)
            assert [c.id for c in ranked.search(question.question, 5)] == [c.id for c in expected]
    with pytest.raises(ValueError, match="unknown method"):
        retrieval_methods.Method.parse("plain/nope")


def test_cli_help_names_the_benchmark(capfd):
    from recall_core.cli import main

    assert main(["bench", "locomo", "--help"]) == 0  # the script runs in a process of its own
    assert "--retrieval-only" in capfd.readouterr().out


def test_full_history_cache_gives_the_answers_of_plain_generate() -> None:
    """(b) prefills a conversation's history once and crops the cache back after each question."""
    import torch

    from recall_core import RecallConfig, RecallGenerator

    model, tokenizer = tiny_model("llama")
    generator = RecallGenerator(model, tokenizer)
    args = cli.parse_args(["--max-new-tokens", "6"])
    bench = Bench(args, generator, None, {})
    history = "Conversation:\n" + "\n".join(f"A: turn {i} apples" for i in range(12))
    for question in ["When did A eat?", "Who ate the apples?", "When did A eat?"]:
        messages = [{"role": "system", "content": "Answer."}, {"role": "user", "content": f"{history}\n\nQuestion: {question}"}]
        got = bench.generate_cached("conv", messages)
        ids = generator.encode(messages, config=RecallConfig(recall_policy="explicit"))
        with torch.no_grad():
            plain = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), do_sample=False, max_new_tokens=6,
                                   stopping_criteria=[FirstLineStop(tokenizer)])  # fmt: skip
        assert got["text"] == tokenizer.decode(plain[0, ids.shape[1] :], skip_special_tokens=True)
        assert got["prompt_tokens"] == ids.shape[1] and got["cached_prefix_tokens"] > ids.shape[1] - 20
    assert list(bench.prefill_s) == ["conv"]


def test_the_recall_settings_flags_reach_the_config():
    from recall_core import RecallConfig

    def config(*flags: str) -> RecallConfig:
        return Bench(cli.parse_args(list(flags)), None, None, {}).recall_config("tokens")

    default = config()
    assert (default.order, default.abstain_threshold) == (RecallConfig().order, RecallConfig().abstain_threshold)
    changed = config("--order", "oldest_first", "--abstain-threshold", "0")
    assert (changed.order, changed.abstain_threshold) == ("oldest_first", 0.0)
    # (d) reads the engine's default notes, with the speaker the tuned default was trained on
    assert default.note_template == RecallConfig().note_template and "{speaker}" in default.note_template
    assert config("--no-memory-dates").note_template == "{speaker}: {text}"
    assert config("--note-template", "[{date}] {text}").note_template == "[{date}] {text}"
    # --set reaches any other field, as a Python literal, and a bad one stops the parser
    changed = config("--set", "match_names=False", "--set", "top_p=0.9")
    assert (changed.match_names, changed.top_p, default.match_names) == (False, 0.9, True)
    with pytest.raises(SystemExit):
        cli.parse_args(["--set", "match_names=maybe"])
    with pytest.raises(SystemExit):
        cli.parse_args(["--set", "no_such_field=1"])


def test_an_adapter_is_merged_into_the_plain_default_or_the_model_given(monkeypatch):
    """``--adapter``: a trained candidate measured without merging it into a folder first. On the
    default it must load the plain model (the tuned one has the shipped adapter merged in already)."""
    from recall_core import RecallGenerator

    calls: list[tuple[object, dict]] = []
    monkeypatch.setattr(RecallGenerator, "from_pretrained", lambda name=None, **kw: calls.append((name, kw)))
    for flags in ([], ["--adapter", "CAND"], ["--model", "M", "--adapter", "CAND"]):
        cli.load_generator(cli.parse_args(flags))
    assert calls == [(None, {"device": None}), (None, {"device": None, "adapter": "CAND", "tuned": False}),
                     ("M", {"device": None, "adapter": "CAND"})]  # fmt: skip
    assert cli.model_label(cli.parse_args(["--adapter", "CAND"])) == "SmolLM2-135M-Instruct (embedded, plain) + adapter CAND"
    assert cli.model_label(cli.parse_args([])) == "SmolLM2-135M-Instruct (embedded)"
    json.dumps(vars(cli.parse_args(["--adapter", "CAND"])))  # locomo.json keeps every argument


def test_c_and_d_both_see_who_said_each_turn():
    """(c)'s excerpts and (d)'s notes name the speaker: category 5 asks one speaker about what the other did."""
    from recall_core import RecallConfig
    from recall_core.decoding.notes import note
    from recall_core.types import MemoryCandidate

    meta = {"speaker": "Caroline", "session_date": "1:56 pm on 8 May, 2023", "timestamp": "1:56 pm on 8 May, 2023"}
    turn = MemoryCandidate("t", 0.9, "I made a stained glass window.", None, meta)
    assert labelled(turn) == "[8 May, 2023] Caroline: I made a stained glass window."
    assert labelled(turn, dated=False) == "Caroline: I made a stained glass window."
    assert labelled(turn, speakers=False) == "[8 May, 2023] I made a stained glass window."
    already = MemoryCandidate("t", 0.9, "Caroline: I made it.", None, meta)
    assert labelled(already, dated=False) == "Caroline: I made it."  # never labelled twice
    assert note(turn, Bench(cli.parse_args([]), None, None, {}).recall_config("tokens")) == labelled(turn)
    assert note(turn, RecallConfig()) == labelled(turn)  # (c) and (d) read the same line


def test_categories_keeps_only_those_of_the_drawn_sample(tmp_path, data_file):
    questions = [q for c in load_locomo(data_file) for q in c.questions]
    args = cli.parse_args(["--categories", "5,1"])
    assert args.categories == [5, 1]
    with pytest.raises(SystemExit):
        cli.parse_args(["--categories", "6"])
    drawn = stratified_sample(questions, 6, seed=1)
    kept = [q.key for q in drawn if q.category in (1, 5)]
    assert 0 < len(kept) < len(drawn)
    model, tokenizer = tiny_model("llama")
    from recall_core import RecallGenerator

    out = tmp_path / "out"
    argv = ["--data", str(data_file), "--encoder", "hash", "--sample", "6", "--seed", "1", "--out", str(out),
            "--methods", "none", "--categories", "1,5", "--max-new-tokens", "2", "--no-progress"]  # fmt: skip
    assert cli.main(argv, generator=RecallGenerator(model, tokenizer)) == 0
    rows = json.loads((out / "locomo.json").read_text())["answers"]["rows"]
    assert [r["key"] for r in rows] == kept


@pytest.fixture(scope="module")
def synthetic_file(tmp_path_factory) -> Path:
    """The synthetic slice, which has a category-5 question (the dev slice's first sessions may not)."""
    return write_locomo(tmp_path_factory.mktemp("locomo") / "synthetic.json")


def test_no_info_place_puts_the_option_where_asked_and_keeps_the_draw_otherwise(synthetic_file):
    from benchmarks.locomo.answers import places_of
    from benchmarks.locomo.prompts import NO_INFO, build_prompt

    conversations = load_locomo(synthetic_file)
    conversation = conversations[0]
    adversarial = next(q for c in conversations for q in c.questions if q.category == 5)
    other = next(q for c in conversations for q in c.questions if q.category != 5)
    drawn = build_prompt(adversarial, conversation, seed=0).options
    assert build_prompt(adversarial, conversation, 0, None).options == drawn
    assert build_prompt(adversarial, conversation, 0, "a").options["a"] == NO_INFO
    assert build_prompt(adversarial, conversation, 0, "b").options["b"] == NO_INFO
    assert build_prompt(other, conversation, 0, "a").options is None  # only category 5 has options
    with pytest.raises(ValueError, match="no_info_place must be 'a', 'b' or None"):
        build_prompt(adversarial, conversation, 0, "c")
    assert places_of(adversarial, "both") == ["a", "b"] and places_of(adversarial, "b") == ["b"]
    assert places_of(adversarial, "drawn") == [None] and places_of(other, "both") == [None]
    with pytest.raises(SystemExit):
        cli.parse_args(["--no-info-place", "c"])


def test_both_places_ask_each_adversarial_question_twice(tmp_path, synthetic_file):
    """``--no-info-place both``: every category-5 question is asked with "No information available" as
    (a) and again as (b), a row each, so the place split counts each question once in each place."""
    model, tokenizer = tiny_model("llama")
    from recall_core import RecallGenerator

    out = tmp_path / "out"
    argv = ["--data", str(synthetic_file), "--encoder", "hash", "--all", "--out", str(out), "--methods", "none",
            "--categories", "5", "--no-info-place", "both", "--max-new-tokens", "2", "--no-progress"]  # fmt: skip
    assert cli.main(argv, generator=RecallGenerator(model, tokenizer)) == 0
    answers = json.loads((out / "locomo.json").read_text())["answers"]
    rows = answers["rows"]
    assert rows and len(rows) == 2 * answers["sample_size"]
    assert [r["no_info_option"] for r in rows] == ["a", "b"] * answers["sample_size"]
    assert [r["key"] for r in rows[::2]] == [r["key"] for r in rows[1::2]]
    places = answers["methods"]["none"]["adversarial_by_place"]
    assert places["a"]["questions"] == places["b"]["questions"] == answers["sample_size"]

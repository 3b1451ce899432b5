"""benchmarks.heldout: ``--from-user`` asks the later users' questions exactly as the full run does."""

from __future__ import annotations

import pytest

from benchmarks.heldout import asked_calls, calls_of, parse_args
from recall_core.training.families import FAMILIES


def test_from_user_asks_the_later_users_exactly_as_the_full_run_does():
    users = FAMILIES["dates"].generate(20261124, users=3)
    full = calls_of("dates", users)
    later = asked_calls("dates", users, from_user=2)
    assert later and later == [c for c in full if c.question.user_id == users[2].user_id]
    assert asked_calls("dates", users) == full


@pytest.mark.parametrize("flags", [["--users", "2", "--from-user", "2"], ["--from-user", "-1"]])
def test_from_user_outside_the_users_is_refused(flags: list[str], capsys: pytest.CaptureFixture[str]):
    with pytest.raises(SystemExit):
        parse_args(flags)
    assert "--from-user must be in [0," in capsys.readouterr().err


def test_a_variants_notes_are_compared_with_the_defaults_question_by_question():
    from benchmarks.heldout_memory import against

    default = {"q1": (("a", "b"), True), "q2": (("c",), False), "q3": (("d",), None), "q4": (("e", "f"), True)}
    variant = {"q1": (("b", "x"), False), "q2": (("y",), True), "q3": (("z",), None), "q4": (("f", "e"), True)}
    # q4 holds the same notes in another order: not a change
    assert against(default, variant) == {"changed_memory": 2, "changed_unanswerable": 1, "lost": 1, "gained": 1}


def test_the_notes_table_gives_each_variants_search_times_and_searches():
    from benchmarks.heldout_memory import notes_markdown

    row = {"held": {"dates": [3, 4]}, "words": 40.2, "earlier_values": [1, 2, 4]}
    table = notes_markdown({"families": ["dates"], "notes": {
        "recall": {**row, "search_ms": 12.34, "search_ms_p90": 20.01, "searches": 1.5},
        "recall:old": {**row, "search_ms": None}}})  # fmt: skip
    assert "| recall | 3/4 | **3/4** | 40 | 1/4 · 2/4 | 12.3 · 20.0 | 1.50 |" in table
    assert "| recall:old | 3/4 | **3/4** | 40 | 1/4 · 2/4 |  |  |" in table  # a result written before the columns


def test_the_searches_of_a_question_are_counted_and_the_server_flag_is_parsed():
    from benchmarks.heldout_memory import CountedSearches

    class Memory:
        def search(self, query, k):
            return [query] * k

    memory = CountedSearches(Memory())
    assert memory.search("q", 2) == ["q", "q"] and memory.search("r", 1) == ["r"]
    assert memory.calls == 2
    assert parse_args(["--retrieval-only", "--server"]).server and not parse_args([]).server


def test_a_server_without_retrieval_only_is_refused(capsys):
    with pytest.raises(SystemExit):
        parse_args(["--server"])
    assert "--server applies to --retrieval-only" in capsys.readouterr().err


def test_two_friends_chats_keep_their_speakers_for_every_method():
    """A duo conversation is written with its speakers' names (the notes show them), the recipe's
    exchanges are labelled by name too, and no exchange of it becomes the caller's earlier turns."""
    from benchmarks.common.peers import exchanges
    from benchmarks.heldout_memory import memory_turns

    users = FAMILIES["duo"].generate(20261124, users=1)
    names = {t.speaker for t in users[0].turns}
    assert {t["metadata"]["speaker"] for t in memory_turns(users)} == names
    assert all(text.split("] ", 1)[1].split(":", 1)[0] in names for text, _, _ in exchanges(users[0]))
    assert all(not call.earlier for call in calls_of("duo", users))


def test_the_recipe_indexes_every_turn_each_with_its_day():
    """Until 2026-12-06 the LangChain recipe's documents had no date (recall's notes do), and a turn
    that answered no user turn was never indexed: 31 of duo's 210 turns, updates among them."""
    from benchmarks.common.peers import exchanges
    from recall_core.dates import day_label

    for family in ("duo", "changes", "passing"):
        for user in FAMILIES[family].generate(20261124, users=2):
            documents = [text for text, _, _ in exchanges(user)]
            assert all(any(turn.content in text for text in documents) for turn in user.turns), family
            days = {day_label(turn.date) for turn in user.turns}
            assert all(text.startswith("[") and text[1:].split("] ", 1)[0] in days for text in documents)


def test_a_plain_model_s_ways_of_not_knowing_are_read_as_not_knowing():
    """Until 2026-12-06 only the tuned model's phrasing counted: the peers' "The context does not
    mention ..." to a question never answered was scored wrong."""
    from recall_core.training.families.base import Question, abstains, score

    never = Question(key="k", user_id="u", fact="f", text="What's my blood type?", kind="unanswerable")
    for reply in ["I don't know.", "The context does not mention your blood type.", "It is not mentioned in the context.",
                  "I don't have information about your blood type.", "I cannot determine your blood type.",
                  "I'm sorry, but I don't have access to your personal information.", "I'm not able to answer that."]:
        assert score(never, reply)["correct"], reply
    assert not any(abstains(reply) for reply in ["Your sister's birthday is on 14 March.", "He does not like cats."])


def test_the_evaluations_system_messages_are_not_trainings_and_other_kinds_are_asked_in_turn():
    from benchmarks.heldout import EVAL_SYSTEM_PROMPTS, OTHER_KINDS, SYSTEM_MESSAGES
    from recall_core.training.family_data import TRAIN_SYSTEM_PROMPTS

    trained = {s for s in TRAIN_SYSTEM_PROMPTS if s}
    # The commonest message of all is in both sets (said since the first held-out run); the rest are apart.
    assert trained.intersection(EVAL_SYSTEM_PROMPTS) == {"You are a helpful assistant."}
    assert trained.isdisjoint(OTHER_KINDS) and set(OTHER_KINDS).isdisjoint(EVAL_SYSTEM_PROMPTS)
    users = FAMILIES["dates"].generate(20261124, users=1)
    calls = calls_of("dates", users, systems=SYSTEM_MESSAGES["other-kinds"])
    assert [c.system for c in calls[: len(OTHER_KINDS)]] == list(OTHER_KINDS)
    assert parse_args(["--system-messages", "other-kinds"]).system_messages == "other-kinds"
    assert parse_args([]).system_messages == "personas"


def test_families_are_parsed_and_a_bad_name_is_named(capsys):
    """``--families`` is a list of asked families' names (the type new_user shares); a bad one is refused by name."""
    assert parse_args(["--families", "passing, handwritten"]).families == ["passing", "handwritten"]
    with pytest.raises(SystemExit):
        parse_args(["--families", "passing,nope"])
    assert "--families must name families of" in capsys.readouterr().err


def test_the_stale_count_is_read_beside_the_changed_facts_answered_with_the_current_value():
    from benchmarks.heldout import markdown, summarize

    def row(correct: bool, stale: bool, changed: bool = True) -> dict:
        return {"kind": "memory", "correct": correct, "stale": stale, "stale_possible": changed, "fired": None,
                "notes_hold_answer": True, "unknown_with_answer": False, "processed_tokens": 10, "ttft_s": 0.1}  # fmt: skip

    rows = [row(True, False), row(False, True), row(True, False), row(True, False, changed=False), row(False, False)]
    summary = summarize(rows)
    assert (summary["stale"], summary["stale_possible"], summary["current_of_changed"]) == (1, 4, 2)
    table = markdown({"families": ["changes"], "summary": {"recall": {"changes": summary, "all": summary}}})
    assert "| 1/4 (2) |" in table and "stale (current)" in table


def test_a_recall_row_keeps_each_injected_notes_score_in_the_notes_order():
    """The held-out rows keep the cosine of every injected note (``note_scores``), so that a rule on
    the scores can be read against a run afterwards without searching again."""
    from benchmarks.heldout import RecallMethod, score_reply
    from recall_core import RecallGenerator
    from recall_core.memory import HashEncoder
    from tests.helpers.tiny import tiny_model

    model, tokenizer = tiny_model("llama")
    generator = RecallGenerator(model, tokenizer)
    users = FAMILIES["dates"].generate(20261124, users=1)
    method = RecallMethod("recall", generator, 4, HashEncoder(64))
    method.prepare(users)
    counts = set()
    try:
        for call in calls_of("dates", users)[:6]:
            reply = method.reply(call)
            memories = method.store.for_user(call.question.user_id)
            result = generator.generate(call.messages(), memory=memories, max_new_tokens=4)
            injected = [score for r in result.recalls if r.length > 0 for _, score in r.memories]
            assert reply.extra["note_scores"] == [round(score, 4) for score in injected]
            assert score_reply(call, reply)["note_scores"] == reply.extra["note_scores"]
            counts.add(len(injected))
    finally:
        method.close()
    assert generator.config.memories in counts  # a call with two notes among them: both scores kept


def test_a_family_named_twice_is_asked_once():
    assert parse_args(["--families", "dates,dates,paraphrase"]).families == ["dates", "paraphrase"]


def test_no_earlier_exchange_names_a_value_of_the_question_asked():
    """Small talk before a question never holds its answer (or an earlier value): the reply would
    come from the prompt, not the memory. In the shipped files 9 of 584 draws named one; they are
    left out after the draw, so every other call is drawn as it was."""
    from benchmarks import handwritten
    from benchmarks.heldout import EVAL_SEED, asked_families
    from recall_core.training.families import base

    data = asked_families(sorted(handwritten.FAMILIES), EVAL_SEED, users=8)
    calls = [call for family, users in data.items() for call in calls_of(family, users)]
    assert sum(bool(call.earlier) for call in calls) > 250  # small talk is still drawn for about half
    for call in calls:
        said = "\n".join(m["content"] for m in call.earlier)
        assert not any(base.names(said, v) for v in (*call.question.answers, *call.question.stale)), call.question.key


def test_keys_asks_only_the_questions_named_and_refuses_one_not_asked(capsys):
    from benchmarks.heldout import EVAL_SEED, asked_families, only_keys

    keys = f"dates-{EVAL_SEED}-00-q01, dates-{EVAL_SEED}-01-q00"
    args = parse_args(["--families", "dates", "--users", "2", "--keys", keys])
    assert args.keys == [f"dates-{EVAL_SEED}-00-q01", f"dates-{EVAL_SEED}-01-q00"]
    users = asked_families(["dates"], EVAL_SEED, 2)["dates"]
    full = calls_of("dates", users)
    assert only_keys({"dates": full}, args.keys) == {"dates": [full[1], full[20]]}  # each drawn as the full run draws it
    for bad in (f"dates-{EVAL_SEED}-00-q01,dates-{EVAL_SEED}-07-q00", ","):
        with pytest.raises(SystemExit):
            parse_args(["--families", "dates", "--users", "2", "--keys", bad])
        assert "--keys must name questions asked" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # past --limit: a question the run does not ask
        parse_args(["--families", "dates", "--users", "2", "--limit", "5", "--keys", f"dates-{EVAL_SEED}-00-q06"])
    assert "--keys must name questions asked" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        parse_args(["--families", "dates", "--users", "2", "--retrieval-only", "--keys", f"dates-{EVAL_SEED}-00-q01"])
    assert "--keys applies to an answers run" in capsys.readouterr().err


@pytest.mark.parametrize("name, tuned", [("langchain", False), ("langchain-tuned", True), ("llamaindex-tuned", True)])
def test_a_peer_recipe_reads_the_plain_release_or_recall_s_tuned_weights_by_its_name(name, tuned, monkeypatch, tmp_path):
    """``-tuned``: the folder ``recall`` itself loads (the shipped adapter merged in), read by
    transformers as any checkpoint; the method keeps its name in the tables."""
    import recall_core.models.loading as loading
    from benchmarks import heldout

    loaded: list[str] = []
    monkeypatch.setattr(loading, "default_model_dir", lambda: tmp_path / "plain")
    monkeypatch.setattr(loading, "tuned_model_dir", lambda: tmp_path / "tuned")

    class Auto:
        @staticmethod
        def from_pretrained(source):
            loaded.append(source)
            return type("Model", (), {"eval": lambda self: self})()

    class Recipe:
        name = "recipe"

        def __init__(self, model, tokenizer, encoder_path, max_new_tokens):
            self.args = (encoder_path, max_new_tokens)

    monkeypatch.setattr("transformers.AutoModelForCausalLM", Auto)
    monkeypatch.setattr("transformers.AutoTokenizer", Auto)
    monkeypatch.setattr(heldout, "LangChainRecipe", Recipe)
    monkeypatch.setattr(heldout, "LlamaIndexRecipe", Recipe)
    recipe = heldout.peer_recipe(name, "encoder", 48)
    assert recipe.name == name and recipe.args == ("encoder", 48)
    assert loaded == [str(tmp_path / ("tuned" if tuned else "plain"))] * 2


def test_llamaindex_s_recipe_stores_each_turn_once():
    """``Memory`` keeps the messages it flushed to its block (archived): until 2026-12-07 the recipe
    wrote every user's whole conversation again as one more document, of up to ~4,000 tokens, which
    its search then returned (a reviewer)."""
    from benchmarks.common.peers import LlamaIndexMethod
    from benchmarks.heldout import ASKED_FAMILIES, EVAL_SEED
    from recall_core.memory.encoders import default_encoder_path
    from tests.helpers.tiny import tiny_model

    model, tokenizer = tiny_model("llama")
    method = LlamaIndexMethod(model, tokenizer, str(default_encoder_path()), 8)
    user = ASKED_FAMILIES["passing"].generate(EVAL_SEED, users=1)[0]
    method.prepare([user])
    (name,) = [c.name for c in method.client.list_collections() if c.name.startswith(method.prefix)]
    documents = method.client.get_collection(name).get(include=["documents"])["documents"]
    first = user.turns[0].content[:60]
    assert sum(first in document for document in documents) == 1
    assert max(map(len, documents)) < sum(len(t.content) for t in user.turns) / 4

"""Recall's defaults on the real parts: ChatRecall, the embedded SmolLM2-135M, MiniLM and an embedded Chroma store.

Three facts are planted in a two-session conversation among small talk and a near-miss (a
friend's pet), then asked about in a fresh chat; with the defaults each answer names its fact.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage

from langchain_recall import ChatRecall
from recall_core import RECALL_TOKEN, RecallConfig, RecallGenerator
from recall_core.memory import MemoryStore

CONVERSATION = [
    ("s1", "2026-10-02T18:00:00", "user", "Hi there! Long day at work today."),
    ("s1", "2026-10-02T18:00:05", "assistant", "Sorry to hear that. Want to talk about it?"),
    ("s1", "2026-10-02T18:01:00", "user", "My parrot is called Quimby and he whistles all day."),
    ("s1", "2026-10-02T18:01:05", "assistant", "Quimby sounds like a fun companion!"),
    ("s1", "2026-10-02T18:02:00", "user", "My friend Tom has a hamster named Pebble."),
    ("s1", "2026-10-02T18:02:05", "assistant", "Pebble is a cute name for a hamster."),
    ("s2", "2026-10-09T09:00:00", "user", "I drive a red Skoda Octavia to the office."),
    ("s2", "2026-10-09T09:00:05", "assistant", "A practical car for commuting."),
    ("s2", "2026-10-09T09:01:00", "user", "I play the bassoon in a town orchestra."),
    ("s2", "2026-10-09T09:01:05", "assistant", "How wonderful, the bassoon is a rare instrument."),
    ("s2", "2026-10-09T09:02:00", "user", "The weather is nice today."),
    ("s2", "2026-10-09T09:02:05", "assistant", "Enjoy the sunshine!"),
]
QUESTIONS = {
    "What is the name of my parrot?": "Quimby",
    "What car do I drive?": "Skoda",
    "Which instrument do I play?": "bassoon",
}


@pytest.fixture(scope="module")
def chat(smollm, tmp_path_factory: pytest.TempPathFactory):
    model, tokenizer = smollm
    folder: Path = tmp_path_factory.mktemp("recall-defaults")
    with MemoryStore.local(folder) as store:  # the packaged MiniLM encoder
        store.writer.add_turns(
            [{"user_id": "ada", "session_id": s, "timestamp": t, "role": r, "content": c, "turn_index": i}
             for i, (s, t, r, c) in enumerate(CONVERSATION)]
        )
        yield ChatRecall(generator=RecallGenerator(model, tokenizer), store=store, user_id="ada", max_tokens=40)


@pytest.mark.parametrize(("question", "fact"), list(QUESTIONS.items()))
def test_each_planted_fact_is_answered_with_the_defaults(chat: ChatRecall, question: str, fact: str) -> None:
    reply = chat.invoke([HumanMessage(question)])
    recalled = [r["text"] for r in reply.response_metadata["recalls"] if r["memory_id"]]
    assert any(fact in text for text in recalled), recalled  # the memory holding the fact was found
    assert fact.lower() in reply.content.lower(), (reply.content, recalled)


def test_without_memory_the_model_does_not_know(smollm) -> None:
    model, tokenizer = smollm
    generator = RecallGenerator(model, tokenizer)
    for question, fact in QUESTIONS.items():
        answer = generator.generate([{"role": "user", "content": question}], max_new_tokens=40).text
        assert fact.lower() not in answer.lower(), answer


@pytest.mark.parametrize("news", [
    "random but I switched my phone plan to the cheaper one, should save 10 quid a month",
    "my brother's band is playing at the Crown on saturday, might go if I'm not wrecked",
])  # fmt: skip
def test_without_a_memory_the_tuned_model_answers_news_instead_of_asking(smollm, news: str) -> None:
    """Left to itself the tuned default writes ``<recall>`` on these (written for this test), and
    with nothing to search it used to end the reply there ("\n"). With no memory the marker is
    masked, so it replies in words and never runs on into another turn."""
    model, tokenizer = smollm
    result = RecallGenerator(model, tokenizer).generate([{"role": "user", "content": news}], memory=None,
                                                        max_new_tokens=16)  # fmt: skip
    recall_id = tokenizer.convert_tokens_to_ids(RECALL_TOKEN)
    assert recall_id not in result.sequences[0].tolist() and not any(r.trigger == "model" for r in result.recalls)
    assert len(result.text.split()) >= 2 and "\nuser\n" not in f"\n{result.text}\n", result.text


def test_the_tuned_model_decides_when_to_recall(chat: ChatRecall) -> None:
    """``recall_policy="model"``: the recall-tuned default writes ``<recall>`` itself on a question
    about the user, and answers a general question without one."""
    deciding = chat.model_copy(update={"recall_config": RecallConfig(recall_policy="model")})
    reply = deciding.invoke([HumanMessage("Which instrument do I play?")])
    triggers = [r["trigger"] for r in reply.response_metadata["recalls"]]
    assert triggers and triggers[0] == "model", reply.response_metadata["recalls"]
    assert "bassoon" in reply.content.lower(), reply.content
    general = deciding.invoke([HumanMessage("What is the capital of France?")])
    assert general.response_metadata["recalls"] == [], general.response_metadata["recalls"]
    assert "paris" in general.content.lower(), general.content


def test_ask_recalls_where_the_model_asks_and_reads_the_notes_as_auto(chat: ChatRecall) -> None:
    """``recall_policy="ask"`` on the recall-tuned default: the question about the user gets the
    notes and its answer; the general question gets no recall at all. With a thread id the call
    runs in the thread's KV session (notes at the start of the new user message); without one,
    afresh (notes in the system message, as ``"auto"`` puts them)."""
    asking = chat.model_copy(update={"recall_config": RecallConfig(recall_policy="ask")})
    reply = asking.invoke([HumanMessage("Which instrument do I play?")], config={"configurable": {"thread_id": "t"}})
    recalls = reply.response_metadata["recalls"]
    assert recalls and recalls[0]["memory_id"] is not None, recalls
    assert "bassoon" in reply.content.lower(), reply.content
    # A general question that names nothing: "the capital of France" would recall once an earlier
    # exchange in this module's memory names France (ask_on_names).
    thread = [HumanMessage("Which instrument do I play?"), reply, HumanMessage("How many legs does a spider have?")]
    follow = asking.invoke(thread, config={"configurable": {"thread_id": "t"}})  # the thread's session, not asked
    assert follow.usage_metadata["input_token_details"]["cache_read"] > 0 and not follow.response_metadata["recalls"]
    fresh = asking.invoke([HumanMessage("Which instrument do I play?")])
    assert fresh.response_metadata["recalls"] and "bassoon" in fresh.content.lower(), fresh.content
    # A general question the memory holds nothing close to: the thread's spider exchange is in the
    # memory now, and asked again it would recall upon its score (ask_on_score).
    general = asking.invoke([HumanMessage("How many days are there in a leap year?")])
    assert general.response_metadata["recalls"] == [], general.response_metadata["recalls"]
    assert "leap year" in general.content.lower(), general.content  # a general answer, no notes read


@pytest.mark.parametrize("policy", ["explicit", "off"])
def test_explicit_and_off_do_not_recall_though_the_tuned_model_asks(chat: ChatRecall, policy: str) -> None:
    """The recall-tuned default writes ``<recall>`` on its own (the test above); under ``"explicit"``
    (no marker in the messages) and ``"off"`` that token is masked: no recall, per call too."""
    question = [HumanMessage("Which instrument do I play?")]
    short = chat.model_copy(update={"max_tokens": 12})  # a recalled "You play the bassoon." comes first
    for reply in (short.invoke(question, recall=policy),
                  short.model_copy(update={"recall_config": RecallConfig(recall_policy=policy)}).invoke(question)):  # fmt: skip
        assert reply.response_metadata["recalls"] == [], reply.response_metadata["recalls"]
        assert reply.usage_metadata["input_token_details"]["recall_injected"] == 0
        assert "bassoon" not in reply.content.lower(), reply.content


def test_the_default_model_is_recall_tuned_and_tuned_false_is_the_release(smollm, smollm_plain) -> None:
    from recall_core.models.loading import DEFAULT_ADAPTER, default_model_dir, tuned_model_dir

    tuned, plain = smollm[0], smollm_plain[0]
    assert (DEFAULT_ADAPTER / "adapter_model.safetensors").stat().st_size < 24 << 20  # rank 32 since 2026-12-02: 19.6 MB
    assert str(tuned.name_or_path) == str(tuned_model_dir()) and str(plain.name_or_path) == str(default_model_dir())
    q_tuned = tuned.model.layers[0].self_attn.q_proj.weight
    q_plain = plain.model.layers[0].self_attn.q_proj.weight
    assert not q_tuned.equal(q_plain)  # merged into the weights: no adapter at generation time
    assert not any("lora" in name for name, _ in tuned.named_parameters())


def test_the_shipped_query_head_comes_with_the_tuned_default_only() -> None:
    """``from_pretrained()`` finds the hidden-query head merged into the tuned folder;
    the plain release has none (and a head is never applied to the wrong weights)."""
    tuned = RecallGenerator.from_pretrained(device="cpu")
    plain = RecallGenerator.from_pretrained(device="cpu", tuned=False)
    assert tuned.query_head is not None and plain.query_head is None



def test_a_generator_over_the_loaded_default_finds_its_head_when_hidden_mode_asks(smollm, tmp_path: Path) -> None:
    """``load_model()`` and a plain ``RecallGenerator(model, tokenizer)`` (what the adapters'
    ``from_model`` builds): the shipped head is looked for at the first ``query_mode="hidden"``
    call, and the search runs with it (before 2026-12-01 only ``from_pretrained`` found it)."""
    from recall_core.memory import MemoryWriter

    model, tokenizer = smollm
    with MemoryStore.local(tmp_path) as store:
        MemoryWriter(store).add_turns([{"user_id": "ada", "role": "user", "content": "My dog is called Biscuit."}])
        generator = RecallGenerator(model, tokenizer, memory=store.for_user("ada"))
        assert generator.query_head is None  # not looked for yet: text mode never needs it
        result = generator.generate([{"role": "user", "content": "What is my dog called?"}],
                                    config=RecallConfig(query_mode="hidden"), max_new_tokens=12)  # fmt: skip
        assert generator.query_head is not None and any(r.length > 0 for r in result.recalls), result.recalls


#: The rank-32 adapter (2026-12-02) answers these two of a new user's questions without asking: it
#: abstains less than the rank-8 adapter before it (docs/benchmarks/heldout.md, "right 'I don't know.'").
MADE_UP = "the rank-32 adapter (2026-12-02) does not write <recall> here and makes an answer up"
PARROT = "What is the name of my parrot?"
assert PARROT in QUESTIONS


@pytest.mark.parametrize(("policy", "question"), [
    *[("auto", q) for q in QUESTIONS],
    *[("model", q) for q in QUESTIONS if q != PARROT],
    pytest.param("model", PARROT, marks=pytest.mark.xfail(
        strict=True, reason=f"{MADE_UP}: 'The name of your parrot is called a parrot.'")),
])  # fmt: skip
def test_a_new_users_personal_question_gets_i_dont_know(smollm, tmp_path: Path, policy: str, question: str) -> None:
    """A user with no memories yet asks about themselves: the tuned default asks its memory,
    reads that there is no note (``RecallConfig.empty_notes``) and says it does not know, with
    the default policy and when it decides itself. Left at its bare ``<recall>`` it wrote text
    that made no sense ("am!am!am!")."""
    model, tokenizer = smollm
    with MemoryStore.local(tmp_path) as store:
        config = RecallConfig(recall_policy=policy)
        generator = RecallGenerator(model, tokenizer, memory=store.for_user("newcomer"), config=config)
        result = generator.generate([{"role": "user", "content": question}], max_new_tokens=20)
        asked = [r for r in result.recalls if r.trigger == "model"]
        assert asked and asked[0].reason == "no memory" and asked[0].length > 0, (result.text, result.recalls)
        assert "don't know" in result.text.lower(), (policy, question, result.text)


@pytest.mark.parametrize("question", [
    "whats my fish called",
    pytest.param("Which year did Gordon and I get married?", marks=pytest.mark.xfail(
        strict=True, reason=f"{MADE_UP}: 'Gordon and I got married in 2018.'")),
])  # fmt: skip
def test_a_new_users_question_with_a_weak_recall_still_gets_i_dont_know(smollm, tmp_path: Path, question: str) -> None:
    """Under ``"auto"`` the prompt's search found nothing, and the tuned default's own ``<recall>``
    is its most likely first token but below 0.5 on these (questions of two held-out families).
    Masked by ``recall_threshold`` as before, the reply made an answer up ("Hmm, let me see.
    2018.", "a fish named "Luna""); ``auto_recall_threshold`` 0 lets it run, reads the empty
    notes and says it does not know."""
    model, tokenizer = smollm
    with MemoryStore.local(tmp_path) as store:
        generator = RecallGenerator(model, tokenizer, memory=store.for_user("newcomer"))
        result = generator.generate([{"role": "user", "content": question}], max_new_tokens=20)
        assert [r.trigger for r in result.recalls if r.trigger == "model"], (question, result.text, result.recalls)
        assert "don't know" in result.text.lower(), (question, result.text)


def test_a_weak_recall_after_the_prompts_notes_does_not_run(smollm, tmp_path: Path) -> None:
    """Under ``"auto"``, once the prompt's recall injected notes, the model's own ``<recall>`` is
    judged by ``recall_threshold`` again, not ``auto_recall_threshold``: a question of a held-out
    family at the selection seed (1000), asked exactly as ``benchmarks.heldout`` asks it. Let
    through at any probability, the weak second recall put other notes nearest the reply, and it
    read those: "Onion with red lentils." instead of "On June 14." (2026-12-01). The rank-32 adapter
    (2026-12-02) writes no second ``<recall>`` here even when let through, so this pins the answer;
    ``recall_threshold`` after notes is pinned by the unit tests."""
    from benchmarks.heldout import calls_of
    from benchmarks.heldout_memory import memory_turns
    from recall_core.memory import MemoryWriter
    from recall_core.training.families import FAMILIES

    model, tokenizer = smollm
    users = FAMILIES["dates"].generate(1000, users=2)
    call = next(c for c in calls_of("dates", users, seed=1000) if c.question.key == "dates-1000-01-q16")
    assert call.question.text == "Calendar question: Do you remember the date of Ayesha's choir concert?"
    with MemoryStore.local(tmp_path) as store:
        MemoryWriter(store).add_turns(memory_turns([u for u in users if u.user_id == call.question.user_id]))
        generator = RecallGenerator(model, tokenizer, memory=store.for_user(call.question.user_id))
        result = generator.generate(call.messages(), max_new_tokens=32)
        assert [(r.trigger, r.memory_id is not None) for r in result.recalls] == [("prompt", True)]
        assert "June 14" in result.text, result.text


def test_a_thread_keeps_its_cache_across_news_and_a_question(chat: ChatRecall) -> None:
    """With ``ask_on_statements`` (the default), news runs as ``"ask"``; its turn is rendered as
    ``"auto"`` renders the conversation, so the question after it reuses the thread's cache and
    still gets its notes. Before that rendering, the question's turn prefilled everything again."""
    quiet = ChatRecall(generator=chat.generator, store=chat.store, user_id="ada", max_tokens=40, write_memory=False)
    news = [HumanMessage("Back from holiday, the weather was lovely all week.")]
    first = quiet.invoke(news, thread_id="news-then-question")
    assert not any(r["injected"] for r in first.response_metadata["recalls"])  # the model did not ask
    second = quiet.invoke([*news, first, HumanMessage("What car do I drive?")], thread_id="news-then-question")
    report = second.response_metadata["session"]
    assert report["reused_tokens"] > 0 and not report["fresh_prefill"], report
    assert "skoda" in second.content.lower(), second.content

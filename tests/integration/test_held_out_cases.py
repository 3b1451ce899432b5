"""The failure cases issue 19 found outside the project's own generator, on the real tuned default.

* ``make demo``'s three questions, each answered with its fact (the first said "I don't know."
  with both notes holding the dog's name);
* two undated notes, the fact first: a plain ``generate()`` answered "I don't know.";
* the caller's own system message: the notes still reach the answer under it;
* under a task-style system message ``recall_policy="model"`` gave up without asking ("I don't
  know."): ``ask_on_abstention`` opens that reply with ``<recall>``;
* under a caller's role (a hotel's front desk, a support agent) ``"model"`` apologised instead of
  asking ("I'm sorry for any confusion, but as a hotel staff, ..."): ``ask_on_refusal`` opens that
  reply with ``<recall>``;
* a question naming someone the memory knows was answered with made-up text, without asking:
  ``ask_on_names`` recalls for it;
* a question without names that the memory matches well was answered with made-up text, without
  asking: ``ask_on_score`` recalls for it;
* a user's statement about themselves was answered "I don't know." or "." (fixed by the retrain with statements, 2026-11-30).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from recall_core import RecallConfig, RecallGenerator
from recall_core.cli import DEMO_CONVERSATION, DEMO_QUESTIONS, DEMO_USER
from recall_core.memory import MemoryStore
from tests.helpers.memories import FixedMemory

DEMO_FACTS = ("Zorblax", "Berlenga", "March")


@pytest.fixture(scope="module")
def demo_store(tmp_path_factory: pytest.TempPathFactory):
    folder: Path = tmp_path_factory.mktemp("demo")
    with MemoryStore.local(folder) as store:
        store.writer.add_turns(
            [{"user_id": DEMO_USER, "session_id": "s1", "role": role, "content": text, "turn_index": i,
              "timestamp": f"2026-11-0{1 + i // 2}T10:00:00"} for i, (role, text) in enumerate(DEMO_CONVERSATION)]
        )  # fmt: skip
        yield store


#: "Where do I work?" is not answered with the place the note gives (Berlenga). The adapter retrained
#: on 2026-11-30 (with a user's statements) read the wrong part of the note, "Lighthouse keeper." (at
#: the first reply token "I" 0.44, masked by ``abstain_threshold``, then "L" 0.14 and "B" 0.08; the
#: adapter before it had "Ber" first at 0.26); the rank-32 adapter (2026-12-02) says "I don't know."
#: with the note injected (docs/benchmarks/heldout.md). Which draw of the recipe users get decides it:
#: 6 of 9 training draws of the two recipes answer with the place (docs/benchmarks/recall-tuning.md,
#: "Soups of draws"); the shipped one, the best of five on the development families, does not.
WORK_PLACE = ("the rank-32 adapter (2026-12-02) answers 'Where do I work?' with \"I don't know.\" though the note "
              "gives the place (Berlenga); the adapter before it gave the job, 'Lighthouse keeper.'")
DEMO_CASES = [pytest.param(q, f, marks=pytest.mark.xfail(strict=True, reason=WORK_PLACE)) if f == "Berlenga" else (q, f)
              for q, f in zip(DEMO_QUESTIONS, DEMO_FACTS, strict=True)]  # fmt: skip


@pytest.mark.parametrize(("question", "fact"), DEMO_CASES)
def test_the_demo_questions_are_answered_with_the_fact(smollm, demo_store, question: str, fact: str) -> None:
    model, tokenizer = smollm
    generator = RecallGenerator(model, tokenizer, memory=demo_store.for_user(DEMO_USER))
    result = generator.generate([{"role": "user", "content": question}], max_new_tokens=40)
    notes = " ".join(r.text for r in result.recalls)
    assert fact in notes, notes
    assert fact.lower() in result.text.lower(), (result.text, notes)


def test_two_undated_notes_with_the_fact_first_are_read(smollm) -> None:
    model, tokenizer = smollm
    memory = FixedMemory("My dog is called Biscuit and he loves the beach.", "I went to the beach on Sunday.")
    result = RecallGenerator(model, tokenizer, memory=memory).generate(
        [{"role": "user", "content": "What is my dog's name?"}], max_new_tokens=30
    )
    assert "biscuit" in result.text.lower(), (result.text, [r.text for r in result.recalls])


@pytest.mark.parametrize(
    "system",
    [
        pytest.param("You are a helpful assistant.", marks=pytest.mark.xfail(strict=True, reason=WORK_PLACE)),
        "You are Juniper, a thoughtful assistant inside a journaling app. Reply in plain, friendly English.",
    ],
)
def test_the_notes_are_read_under_the_callers_system_message(smollm, demo_store, system: str) -> None:
    model, tokenizer = smollm
    generator = RecallGenerator(model, tokenizer, memory=demo_store.for_user(DEMO_USER))
    result = generator.generate(
        [{"role": "system", "content": system}, {"role": "user", "content": DEMO_QUESTIONS[1]}], max_new_tokens=40
    )
    assert "berlenga" in result.text.lower(), (result.text, [r.text for r in result.recalls])


def test_a_moved_appointment_is_answered_with_the_new_day(smollm, tmp_path: Path) -> None:
    """The stale case: the older note gives its place to the newer one that says it moved
    (``RecallConfig.newest_wins``), so the model reads only the current day."""
    turns = [
        ("2026-03-02T09:00:00", "My dentist appointment is at 10am on the 3rd of April."),
        ("2026-03-20T18:00:00", "Annoying: the dentist rang and moved me. It's now Friday the 17th of April at 3pm."),
    ]
    result, notes = _asked(smollm, tmp_path, turns, "When is my dentist appointment?")
    assert "17th of April" in notes and "3rd of April" not in notes, notes
    reply = result.text.lower()
    assert ("17" in reply or "3pm" in reply) and "3rd" not in reply and "10am" not in reply, (result.text, notes)


def test_a_question_about_one_friend_is_not_answered_with_another_friends_day(smollm, tmp_path: Path) -> None:
    """The wrong-person case: the note about another friend, ranked first, gives its place to the
    one that says the asked name (``RecallConfig.match_names``), so the model reads only that one."""
    turns = [
        ("2026-03-02T09:00:00", "My friend Odile has her birthday on the 10th of April, any gift ideas?"),
        ("2026-03-05T09:00:00", "I keep forgetting to buy a card: my uncle Rohan's birthday is on the 1st of June."),
    ]
    result, notes = _asked(smollm, tmp_path, turns, "When's Rohan's birthday?")
    assert "Rohan" in notes and "Odile" not in notes, notes
    reply = result.text.lower()
    assert ("june" in reply or "1st" in reply) and "april" not in reply, (result.text, notes)


def _asked(smollm, folder: Path, turns: list[tuple[str, str]], question: str) -> tuple[Any, str]:
    """``question`` asked of a fresh store holding ``turns`` (``(timestamp, text)``, the user's,
    one session each): the result and the text of the notes injected."""
    model, tokenizer = smollm
    with MemoryStore.local(folder) as store:
        store.writer.add_turns(
            [{"user_id": "u", "session_id": f"s{i}", "role": "user", "content": text, "turn_index": 0, "timestamp": when}
             for i, (when, text) in enumerate(turns)]
        )  # fmt: skip
        generator = RecallGenerator(model, tokenizer, memory=store.for_user("u"))
        result = generator.generate([{"role": "user", "content": question}], max_new_tokens=30)
    return result, " ".join(r.text for r in result.recalls)


#: A caller's system message that sets a question-answering task (the kind under which the tuned
#: default neither asked nor read, in the two cases below).
TASK_SYSTEM = "You are a question-answering system. Give the answer in a few words."


def _without_and_with(smollm, folder: Path, exchange: tuple[str, str], question: str, config: RecallConfig,
                      without: RecallConfig, max_new_tokens: int, system: str = TASK_SYSTEM) -> tuple[Any, Any]:  # fmt: skip
    """``question`` asked under ``system`` (``""``: none) of a fresh store holding one ``exchange`` (the
    user's turn, the assistant's reply): the results under ``without`` and under ``config``."""
    model, tokenizer = smollm
    chat = [*([{"role": "system", "content": system}] if system else []), {"role": "user", "content": question}]
    with MemoryStore.local(folder) as store:
        store.writer.add_turns(
            [{"user_id": "u", "session_id": "s1", "role": role, "content": text, "turn_index": i,
              "timestamp": "2026-10-01T10:00:00"} for i, (role, text) in enumerate(zip(("user", "assistant"), exchange, strict=True))]
        )  # fmt: skip
        generator = RecallGenerator(model, tokenizer, memory=store.for_user("u"))
        return (generator.generate(chat, config=without, max_new_tokens=max_new_tokens),
                generator.generate(chat, config=config, max_new_tokens=max_new_tokens))  # fmt: skip


#: Each case below turns on one of the ways a model's reply asks (``ask_on_abstention``,
#: ``ask_on_refusal``, ``ask_on_names``, ``ask_on_score``) with the others off, so the reply says which one asked.
ASKING_OFF = {"ask_on_abstention": False, "ask_on_refusal": False, "ask_on_names": False, "ask_on_score": 0.0}
#: A case written here (not a benchmark's): news about a named cousin, asked about by name. The
#: rank-32 adapter gives up on it ("I don't know.") unless the abstention or the name asks.
TOMASZ = (("My cousin Tomasz just moved to Lisbon for a job at a bakery.", "Exciting news for him!"),
          "Where does Tomasz live now?")


def test_a_model_reply_that_would_give_up_without_asking_opens_with_recall(smollm, tmp_path: Path) -> None:
    """Under a question-answering task's system message the tuned default did not write
    ``<recall>`` and said "I don't know."; with ``ask_on_abstention`` that reply opens with
    ``<recall>`` and reads the note. (A case written here, not a benchmark's. The rank-8 adapter
    gave up on "What colour is my bike?"; the rank-32 one, 2026-12-02, asks there by itself and
    gives up on this one.)"""
    off = RecallConfig(recall_policy="model", **ASKING_OFF)
    without, result = _without_and_with(smollm, tmp_path, *TOMASZ, off.replace(ask_on_abstention=True), off, 20)
    assert without.recalls == [] and "don't know" in without.text, without.text  # the case: it gave up
    assert [r.trigger for r in result.recalls] == ["abstention"] and "lisbon" in result.text.lower(), (
        result.text, [r.text for r in result.recalls])


#: Cases written here (not a benchmark's): a caller's role, a terse question about the user's life.
#: Both were the rank-8 adapter's. The rank-32 adapter (2026-12-02) opened with an apology in none
#: of 36 pairings of six callers' roles and six such questions (these two among them) tried when it
#: shipped: it answers ("Dr. Okafor.", after asking by itself), or opens with "Good question." and
#: apologises after it ("Good question.  I'm sorry for any confusion."), which ``ask_on_refusal``
#: does not read as an opening and ``ask_after_openers`` (off) would.
RANK_32 = "the rank-32 adapter (2026-12-02) does not open with an apology here: "
REFUSED = [
    pytest.param("You are the front desk of a hotel. Be polite. Use at most two sentences.",
                 ("We named our goldfish Captain Nemo.", "Ha, great name!"), "fish's name?", "nemo",
                 marks=pytest.mark.xfail(strict=True, reason=RANK_32 + "'Good question.  I'm sorry for any confusion.'")),
    pytest.param("You are a support agent for a software company. Be polite and brief.",
                 ("My dentist is Dr. Okafor, she's great with nervous patients.", "Good to have a dentist you trust!"),
                 "the name of my dentist, please.", "okafor",
                 marks=pytest.mark.xfail(strict=True, reason=RANK_32 + "it asks by itself and answers 'Dr. Okafor.'")),
]  # fmt: skip


@pytest.mark.parametrize(("system", "exchange", "question", "fact"), REFUSED)
def test_a_model_reply_that_would_apologise_opens_with_recall(smollm, tmp_path: Path, system: str,
                                                              exchange: tuple[str, str], question: str, fact: str) -> None:  # fmt: skip
    """In its caller's role the tuned default neither asked nor said "I don't know." but apologised
    ("I'm sorry for any confusion, but as a hotel staff, ..."); with ``ask_on_refusal`` that reply
    opens with ``<recall>`` and reads the note."""
    off = RecallConfig(recall_policy="model", **ASKING_OFF)
    without, result = _without_and_with(smollm, tmp_path, exchange, question, off.replace(ask_on_refusal=True),
                                        off, 24, system)  # fmt: skip
    assert without.recalls == [] and without.text.startswith("I'm sorry"), without.text  # the case: it apologised
    assert [r.trigger for r in result.recalls] == ["abstention"] and fact in result.text.lower(), (
        result.text, [r.text for r in result.recalls])


def test_every_refusal_is_read_within_its_budget_of_ids(smollm) -> None:
    """``REFUSAL_TOKENS`` ids hold each refusal and the abstention in the shipped tokenizer, with
    the id after it that tells the word has ended."""
    from recall_core.decoding.abstain import ABSTENTION, REFUSAL_TOKENS, REFUSALS

    _, tokenizer = smollm
    for text in (ABSTENTION, *REFUSALS):
        assert len(tokenizer.encode(f"{text},", add_special_tokens=False)) <= REFUSAL_TOKENS, text


@pytest.mark.parametrize("policy", ["ask", "model"])
def test_a_question_naming_someone_the_memory_knows_recalls(smollm, tmp_path: Path, policy: str) -> None:
    """Under a task-style system message the tuned default answered a question about a named
    cousin with made-up text ("Tomasz lives in the city of Kaczenslaa ..."), neither asking nor
    saying "I don't know."; with ``ask_on_names`` (the default) the question's name, which the
    memory says, makes the call recall. (A case written here, not a benchmark's.)"""
    off = RecallConfig(recall_policy=policy, **ASKING_OFF)
    without, result = _without_and_with(smollm, tmp_path, *TOMASZ, off.replace(ask_on_names=True), off, 24)
    assert without.recalls == [] and "lisbon" not in without.text.lower(), without.text  # the case: made up
    assert [r.trigger for r in result.recalls] == ["names"] and "lisbon" in result.text.lower(), (
        result.text, [r.text for r in result.recalls])


#: Cases written here (not a benchmark's), each a fact the user said and a question about it without
#: a name: under ``"model"``, with the other ways of asking on, the rank-32 adapter made an answer up
#: ("The vet is called Dr. Elena.", "The rent at the new flat is approximately $1,200."), neither
#: writing ``<recall>`` nor giving up. The memory's best candidates score 0.48 and 0.72.
UNASKED = [
    pytest.param(("Our vet is Dr Okafor at the Riverside clinic. Pepper has her jabs there next month.",
                  "Good to know, I hope the jabs go smoothly!"), "whats the vet's name, need to ring them", "okafor", id="vet"),
    pytest.param(("The rent on the new flat is 950 a month, bills on top.", "That sounds manageable."),
                 "how much is the rent at the new flat", "950", id="rent"),
]  # fmt: skip


@pytest.mark.parametrize(("exchange", "question", "fact"), UNASKED)
def test_a_question_the_memory_matches_well_recalls_under_model(smollm, tmp_path: Path, exchange, question: str,
                                                                fact: str) -> None:  # fmt: skip
    """``ask_on_score`` 0.4 (the default): the memory's search finds a close match for the question,
    so the reply opens with ``<recall>`` and reads it (no system message: the default ``system_prompt``)."""
    default = RecallConfig(recall_policy="model")
    without, result = _without_and_with(smollm, tmp_path, exchange, question, default,
                                        default.replace(ask_on_score=0.0), 24, system="")  # fmt: skip
    assert without.recalls == [] and fact not in without.text.lower(), without.text  # the case: made up
    assert [r.trigger for r in result.recalls] == ["score"] and fact in result.text.lower(), (
        result.text, [r.text for r in result.recalls])


#: Things a user tells the assistant about themselves (no question), written for this test.
STATEMENTS = (
    "I adopted a cat from the shelter yesterday.",
    "We're having a barbecue at my place on Saturday.",
    "I finally finished painting the kitchen.",
)


def test_a_users_statement_is_acknowledged(smollm, demo_store) -> None:
    """Found 2026-11-30: the adapter trained before then wrote ``<recall>`` on a user's news and said
    "I don't know." (a memory attached) or "." (none). The retrain learns the base model's own
    acknowledgements of statements (``recall train --statements``); this pins it."""
    model, tokenizer = smollm
    replies = []
    for memory in (None, demo_store.for_user("newcomer"), demo_store.for_user(DEMO_USER)):  # none; a new user; a returning one
        generator = RecallGenerator(model, tokenizer, memory=memory)
        replies += [generator.generate([{"role": "user", "content": text}], max_new_tokens=12).text for text in STATEMENTS]
    assert all(len(reply.split()) >= 2 and "don't know" not in reply.lower() for reply in replies), replies

"""Several memories per recall: choosing them, writing them as notes, placing the block, the query."""

from __future__ import annotations

import pytest
import torch

from recall_core import RECALL_TOKEN, RecallConfig, RecallGenerator
from recall_core.decoding.notes import memory_token_ids, note, notes_text
from recall_core.decoding.select import choose_candidates
from recall_core.prompt import chat_prompt_ids, last_user_text, mark_recall
from recall_core.types import MemoryCandidate, RecallQuery


def _c(memory_id, score, text, timestamp=None, covers=None, turn=0):
    meta = {"turn_index": turn}
    if timestamp:
        meta["timestamp"] = timestamp
    if covers:
        meta["covers"] = covers
    return MemoryCandidate(memory_id, score, text, None, meta)


class Recorded:
    """A memory that returns fixed candidates and keeps the queries it was asked."""

    def __init__(self, *candidates: MemoryCandidate) -> None:
        self.candidates = list(candidates)
        self.queries: list[RecallQuery] = []

    def search(self, query: RecallQuery, k: int) -> list[MemoryCandidate]:
        self.queries.append(query)
        return self.candidates[:k]


# ---------------------------------------------------------------------- choosing
def test_several_memories_are_chosen_deduplicated_and_in_time_order():
    candidates = [
        _c("b", 0.9, "I moved to Lyon.", "2024-05-01T10:00"),
        _c("a", 0.8, "I live in Turku.", "2024-01-01T10:00"),
        _c("b2", 0.7, "I moved to  lyon.", "2024-05-02T10:00"),  # the same text again
        _c("x", 0.6, "User: I live in Turku.\nAssistant: Noted!", "2024-01-01T10:00", covers="a,ack"),  # covers a
        _c("c", 0.5, "My dog is Rex.", "2024-03-01T10:00"),
        _c("low", 0.1, "below min_score", "2023-01-01T10:00"),
    ]
    chosen, reason = choose_candidates(candidates, RecallConfig(memories=4))
    assert reason is None
    assert [c.id for c in chosen] == ["b", "c", "a"]  # newest first (the default): the current version of a fact first
    oldest = choose_candidates(candidates, RecallConfig(memories=4, order="oldest_first"))[0]
    assert [c.id for c in oldest] == ["a", "c", "b"]
    ranked = choose_candidates(candidates, RecallConfig(memories=2, order="relevance"))[0]
    assert [c.id for c in ranked] == ["b", "a"]
    assert choose_candidates(candidates, RecallConfig(memories=4, top_k=2))[0] == [candidates[0], candidates[1]]
    assert choose_candidates([], RecallConfig()) == ([], "no memory")
    assert choose_candidates(candidates[-1:], RecallConfig()) == ([], "below min_score")


def test_sampled_choice_draws_without_replacement():
    candidates = [_c(f"m{i}", 0.9 - i * 0.01, f"text {i}") for i in range(6)]
    gen = torch.Generator().manual_seed(0)
    for _ in range(20):
        chosen, _ = choose_candidates(candidates, RecallConfig(memories=3, temperature=0.5, order="relevance"), gen)
        assert len(chosen) == 3 and len({c.id for c in chosen}) == 3


# ---------------------------------------------------------------------- notes
def test_a_note_has_the_day_when_the_memory_has_one(tiny):
    _, tokenizer = tiny
    config = RecallConfig(note_template="[{date}] {text}")
    assert note(_c("a", 1.0, " I live in Lyon. ", "2024-05-01T10:00:00+00:00"), config) == "[1 May 2024] I live in Lyon."
    assert note(_c("a", 1.0, "I live in Lyon."), config) == "I live in Lyon."  # no date, no empty brackets
    assert note("plain text", RecallConfig(note_template="- {text}")) == "- plain text"
    assert note(_c("a", 1.0, "hi", "1:56 pm on 8 May, 2023"), RecallConfig(note_template="{date} ({role}): {text}")) == (
        "8 May, 2023 (): hi"
    )
    said = RecallConfig()
    assert said.note_template == "[{date}] {speaker}: {text}"  # the default
    day = "2024-05-01T10:00"
    assert note(MemoryCandidate("a", 1, "I live in Lyon.", None, {"timestamp": day, "role": "user"}), said) == (
        "[1 May 2024] User: I live in Lyon."
    )
    locomo = MemoryCandidate("a", 1, "Caroline: I went.", None, {"timestamp": day, "role": "user", "speaker": "Caroline"})
    assert note(locomo, said) == "[1 May 2024] Caroline: I went."  # not labelled twice
    exchange = MemoryCandidate("a", 1, "User: I live in Lyon.\nAssistant: Noted!", None, {"timestamp": day, "role": "user"})
    assert note(exchange, said) == "[1 May 2024] User: I live in Lyon.\nAssistant: Noted!"
    assert note(_c("a", 1.0, "no role", day), said) == "no role"
    two = [_c("a", 1.0, "first", "2024-05-01T10:00"), _c("b", 1.0, "second", "2024-05-02T10:00")]
    assert notes_text(tokenizer, two, config) == "[1 May 2024] first\n[2 May 2024] second"
    block = tokenizer.decode(memory_token_ids(tokenizer, two, config))
    assert block == config.block_text("[1 May 2024] first\n[2 May 2024] second")


@pytest.mark.parametrize(("order", "header"), [("newest_first", "Notes, newest first:\n"),
                                               ("oldest_first", "Notes, oldest first:\n"),
                                               ("relevance", "Notes, most relevant first:\n")])
def test_the_default_block_says_the_order_its_notes_are_in(order: str, header: str):
    block = RecallConfig(order=order).block_text("[1 May 2024] User: first")
    assert block.endswith(f"Keep the answer concise.\n\n{header}[1 May 2024] User: first\n")
    own = RecallConfig(order=order, template="Notes:\n{text}\n")  # a template without {order} is used as written
    assert own.block_text("x") == "Notes:\nx\n"
    with pytest.raises(ValueError, match=r"template may only use \{text\}, \{order\}"):
        RecallConfig(template="{text} {when}")


def test_a_note_of_several_turns_is_labelled_once_by_its_first_speaker():
    meta = {"timestamp": "2024-03-02T10:01:00", "role": "assistant", "covers": "a,b"}
    ack = MemoryCandidate("b", 0.5, "User: I am allergic to shellfish.\nAssistant: Noted!", None, meta)
    assert note(ack, RecallConfig()) == "[2 March 2024] User: I am allergic to shellfish.\nAssistant: Noted!"
    one = MemoryCandidate("c", 0.5, "Colon: inside a single turn", None, {**meta, "covers": "c"})
    assert note(one, RecallConfig()) == "[2 March 2024] Assistant: Colon: inside a single turn"


def test_each_memory_is_cut_to_max_memory_tokens(tiny):
    _, tokenizer = tiny
    long = _c("a", 1.0, "word " * 200)
    cut = notes_text(tokenizer, [long, _c("b", 1.0, "short")], RecallConfig(max_memory_tokens=5))
    first, second = cut.split("\n")
    assert len(tokenizer(first, add_special_tokens=False).input_ids) <= 6 and second == "short"


def test_a_unit_whose_found_turn_is_last_keeps_its_end_when_cut(tiny):
    """A long assistant question before the user's answer cut the answer off the note until
    2026-12-07 (a reviewer); a unit whose found turn is first, or a single turn, keeps its start."""
    _, tokenizer = tiny
    text = "Assistant: " + "Which area are you moving to? " * 20 + "\nUser: It is 27 Lavender Gardens, keys on 14 June."
    answer = MemoryCandidate("u", 1.0, text, None, {"covers": "a,u", "role": "user"})
    question = MemoryCandidate("a", 1.0, text, None, {"covers": "a,u", "role": "assistant"})
    config = RecallConfig(max_memory_tokens=60)
    assert notes_text(tokenizer, [answer], config) == "It is 27 Lavender Gardens, keys on 14 June."  # labelled User
    assert "14 June" not in notes_text(tokenizer, [question], config)
    # the found turn from its own label on, cut at its end if need be: a cut start, or a line such as
    # "Invoice 12: ...", was read as the speaker (second and fifth reviews)
    for limit in range(12, 120, 3):
        got = notes_text(tokenizer, [answer], RecallConfig(max_memory_tokens=limit))
        assert got.startswith("It is 27") and "Which" not in got, (limit, got)
    listed = MemoryCandidate("u", 1.0, "Assistant: " + "Invoice 12: 8808\n" * 30 + "Which one?\nUser: The sofa one.",
                             None, {"covers": "a,u", "role": "user"})  # fmt: skip
    assert notes_text(tokenizer, [listed], config) == "The sofa one."
    # a reply found after the user's turn it answers keeps its start, where the user's facts are
    reply = MemoryCandidate("r", 1.0, "User: rent is now 1025.\nAssistant: " + "Here is a budget line. " * 30, None,
                            {"covers": "u,r", "role": "assistant"})  # fmt: skip
    assert "1025" in notes_text(tokenizer, [reply], config)


REPLY = "Here's a start:\n\n## Budget\n\n**Rent:** £650\n- **Phone:** £28\n\n---\n\nSee [the form](https://x.ie/f)."


def test_plain_notes_show_a_replys_markdown_as_plain_text_before_the_cut(tiny):
    _, tokenizer = tiny
    memory = _c("a", 1.0, REPLY)
    plain = notes_text(tokenizer, [memory], RecallConfig(plain_notes=True))
    assert plain == "Here's a start:\n\nBudget\n\nRent: £650\n- Phone: £28\n\nSee the form."
    assert notes_text(tokenizer, [memory], RecallConfig()) == REPLY  # off: as written
    # the budget is spent on words, not marks: the cut note of the plain text holds more of them
    words = "**Rent:** £650. " * 40
    cut = RecallConfig(plain_notes=True, max_memory_tokens=40)
    assert notes_text(tokenizer, [_c("b", 1.0, words)], cut).count("Rent") > notes_text(
        tokenizer, [_c("b", 1.0, words)], cut.replace(plain_notes=False)).count("Rent")  # fmt: skip
    with pytest.raises(ValueError, match="plain_notes must be True or False"):
        RecallConfig(plain_notes="yes")


@pytest.mark.parametrize(
    "field, value, match",
    [
        ("memories", 0, "memories must be an int >= 1"),
        ("note_template", "{text} {who}", r"note_template may only use \{text\}, \{date\}, \{speaker\}, \{role\}"),
        ("note_template", "no text", "note_template must be a string containing"),
        ("template", "{text} {date}", r"template may only use \{text\}"),
        # a field reaching into its value: an AttributeError or TypeError at the first call, or a method's repr
        ("note_template", "{text} ({date.year})", r"note_template may only use \{text\}"),
        ("note_template", "{text} {speaker[name]}", r"note_template may only use \{text\}"),
        ("template", "{text}\n{order.upper}", r"template may only use \{text\}"),
        ("note_template", "{{text}} {date}", r"note_template .*\{text\}"),  # a literal "{text}": no field
        ("order", "random", "order must be one of 'oldest_first', 'newest_first', 'relevance'"),
        ("recall_position", "middle", "recall_position must be one of 'system', 'user_start'"),
        ("system_prompt", None, "system_prompt must be a string"),
    ],
)
def test_bad_note_settings_name_the_field(field, value, match):
    with pytest.raises(ValueError, match=match):
        RecallConfig(**{field: value})


# ---------------------------------------------------------------------- placement and query
CHAT = [{"role": "user", "content": "Hi there."}, {"role": "assistant", "content": "Hello!"},
        {"role": "user", "content": "What is my dog called?"}]  # fmt: skip


def test_where_the_marker_goes(tiny):
    _, tokenizer = tiny
    system = mark_recall(CHAT, "auto", "system", "Be brief.")
    assert system[0] == {"role": "system", "content": f"Be brief.\n\n{RECALL_TOKEN}"} and system[1:] == CHAT
    own = mark_recall([{"role": "system", "content": "Mine."}, *CHAT], "auto", "system", "Be brief.")
    assert own[0]["content"] == f"Mine.\n\n{RECALL_TOKEN}" and len(own) == 4
    assert mark_recall(CHAT, "auto", "user_start")[-1]["content"] == RECALL_TOKEN + "What is my dog called?"
    assert mark_recall(CHAT, "auto", "user_end")[-1]["content"] == "What is my dog called?" + RECALL_TOKEN
    assert mark_recall(CHAT, "explicit", "system") == CHAT
    marked = [*CHAT[:-1], {"role": "user", "content": RECALL_TOKEN + " mine"}]
    assert mark_recall(marked, "auto", "system") == marked  # a marker of the caller's own: nothing added
    ids = chat_prompt_ids(tokenizer, CHAT, "auto", "assistant_start")
    assert ids[-1] == tokenizer.convert_tokens_to_ids(RECALL_TOKEN)
    assert last_user_text(marked) == "mine" and last_user_text([{"role": "system", "content": "x"}]) is None


@pytest.mark.parametrize("position", ["system", "user_start", "user_end", "assistant_start"])
def test_every_position_searches_with_the_last_user_message_and_injects_one_block(tiny, position):
    model, tokenizer = tiny
    memory = Recorded(_c("a", 0.9, "My dog is Rex.", "2024-01-01T10:00"), _c("b", 0.8, "My cat is Tom.", "2024-02-01T10:00"))
    config = RecallConfig(recall_position=position, max_recalls=1, order="oldest_first", note_template="[{date}] {text}")
    result = RecallGenerator(model, tokenizer, memory=memory, config=config).generate(CHAT, max_new_tokens=3)
    assert [q.text for q in memory.queries] == ["What is my dog called?"]
    (recall,) = result.recalls
    assert recall.memories == (("a", 0.9), ("b", 0.8)) and recall.memory_id == "a"
    assert recall.text == "[1 January 2024] My dog is Rex.\n[1 February 2024] My cat is Tom."
    assert recall.length == len(memory_token_ids(tokenizer, memory.candidates, config))
    pad = model.config.memory_pad_token_id
    assert result.sequences[0, recall.position : recall.position + recall.length].tolist() == [pad] * recall.length


def test_injected_notes_equal_the_same_notes_written_in_the_system_message(tiny):
    """In tokens mode a recall is its notes written where the marker is: the same continuation."""
    model, tokenizer = tiny
    memory = Recorded(_c("a", 0.9, "My dog is Rex.", "2024-01-01T10:00"))
    config = RecallConfig(max_recalls=1)
    got = RecallGenerator(model, tokenizer, memory=memory, config=config).generate(
        CHAT, max_new_tokens=8, min_new_tokens=8
    )
    sequence = got.sequences[0].tolist()
    recall_id, pad = model.config.recall_token_id, model.config.memory_pad_token_id
    notes = memory_token_ids(tokenizer, memory.candidates, config)
    start, end = got.recalls[0].position, got.recalls[0].position + got.recalls[0].length
    assert sequence[start - 1] == recall_id and sequence[start:end] == [pad] * len(notes)
    marked = chat_prompt_ids(tokenizer, CHAT, "auto", "system", config.system_prompt)
    assert sequence[:start] + sequence[end:-8] == marked  # the marker sits at the end of the system message
    written = torch.tensor([sequence[:start] + notes + sequence[end:-8]])
    plain = model.generate(written, max_new_tokens=8, min_new_tokens=8, do_sample=False, suppress_tokens=[pad, recall_id])
    assert plain[0, -8:].tolist() == sequence[-8:]

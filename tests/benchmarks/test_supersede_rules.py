"""benchmarks.supersede_rules: looser newest_wins rules dropped in, and where a mark would fall."""

from __future__ import annotations

from collections import Counter

from benchmarks.heldout import ASKED_FAMILIES
from benchmarks.supersede_rules import (
    RULES,
    any_change,
    change_phrase,
    change_with_context,
    count,
    dropped,
    markdown,
    marks,
    measure,
)
from recall_core import RecallConfig
from recall_core.decoding.select import _moment
from recall_core.decoding.supersede import asked_words, updates
from recall_core.memory.encoders import HashEncoder
from recall_core.training.families import base
from recall_core.types import MemoryCandidate

QUESTION = "which gym am i at now"


def _c(memory_id: str, text: str, timestamp: str, score: float = 0.6) -> MemoryCandidate:
    return MemoryCandidate(memory_id, score, text, None, {"timestamp": timestamp, "role": "user", "turn_index": 0})


OLD = _c("old", "i lift mon/wed at the gym, planet fitness. 4 days max.", "2024-01-15T06:13", 0.7)
NEW = _c("new", "switched to another gym: crunch now, closer to office.", "2024-04-08T19:20", 0.6)
CHAT = _c("chat", "The gym was packed now that January is here.", "2024-04-09T10:00", 0.5)


def test_the_rules_differ_as_documented():
    words = asked_words(QUESTION)
    assert RULES["newest_wins"] is updates
    assert not updates(NEW, OLD, words, _moment)  # neither names a day or a time
    assert any_change(NEW, OLD, words, _moment) and change_phrase(NEW, OLD, words, _moment)
    assert any_change(CHAT, OLD, words, _moment)  # "now" is a change word...
    assert not change_phrase(CHAT, OLD, words, _moment)  # ...and no phrase of change
    assert not any_change(OLD, NEW, words, _moment)  # never the older one
    other = MemoryCandidate("o", 0.6, NEW.text, None, {**NEW.metadata, "speaker": "Sam"})
    assert not any_change(other, MemoryCandidate("p", 0.7, OLD.text, None, {**OLD.metadata, "speaker": "Ana"}), words, _moment)


def test_the_subject_may_sit_in_the_sentence_before_the_change_and_no_further():
    words = asked_words("When is my knee operation?")
    older = _c("a", "The operation is on the 14th of May.", "2024-03-19T10:00")
    before = _c("b", "They had to shift my operation. I go in on the 3rd of June, not in May after all.", "2024-04-26T10:00")
    further = _c("c", "My operation. The theatre list was full. I go in on the 3rd of June, not in May after all.",
                 "2024-04-26T10:00")  # fmt: skip
    assert change_with_context(before, older, words, _moment)
    assert not updates(before, older, words, _moment)  # the change's own sentence does not say "operation"
    assert not change_with_context(further, older, words, _moment)
    assert not change_with_context(older, before, words, _moment)  # never the older one


def test_a_dropped_note_gives_its_place_and_marks_fall_on_the_older_note():
    config = RecallConfig(memories=2)
    assert {c.id for c in dropped([OLD, NEW], QUESTION, updates, config)} == {"old", "new"}
    assert [c.id for c in dropped([OLD, NEW], QUESTION, any_change, config)] == ["new"]
    assert [c.id for c in marks([OLD, NEW], QUESTION, change_phrase)] == ["old"]
    assert marks([OLD, NEW], QUESTION, updates) == []


def test_count_tells_a_good_mark_from_a_harmful_one():
    question = base.Question("k", "u", "gym", QUESTION, answers=("crunch",), stale=("Planet Fitness",), evidence=((0, 0),))
    tally: Counter = Counter()
    count(question, [OLD, NEW], [NEW], [OLD], tally)  # the older note dropped, and marked
    assert tally == Counter({"questions": 1, "holds": 1, "changed": 1, "changed_facts": 1, "marked": 1, "mark_good": 1})
    harmful: Counter = Counter()
    count(question, [NEW, CHAT], [CHAT], [NEW], harmful)  # the only note with the answer marked, and dropped
    assert harmful["mark_harmful"] == 1 and harmful["lost"] == 1 and harmful["earlier_only"] == 0


def test_measure_runs_every_rule_on_a_family_and_newest_wins_changes_nothing():
    data = {"handwritten": ASKED_FAMILIES["handwritten"].generate(20261124, users=1)}
    by_rule = measure(data, HashEncoder(32), show=False)
    assert set(by_rule) == set(RULES)
    default = by_rule["newest_wins"]["handwritten"]
    assert default["questions"] > 0 and default["changed"] == 0 and default["lost"] == default["gained"] == 0
    table = markdown({"all": {name: per["handwritten"] for name, per in by_rule.items()}})
    assert "`any_change`" in table and table.count("\n") == 2 + len(RULES)

"""benchmarks.note_marks: every note but the newest marked, in its label; the tally per reading."""

from __future__ import annotations

from benchmarks.note_marks import MARKS, markdown, marked, tally

NOTES = ["[3 May 2024] User: Crunch now.", "[1 March 2024] User: Planet Fitness: mon/wed.\nAssistant: Noted: 5:30am."]


def test_every_note_but_the_newest_is_marked_in_its_label_only():
    out = marked(NOTES, MARKS["outdated"])
    assert out[0] == NOTES[0]
    assert out[1] == "[1 March 2024, outdated] User: Planet Fitness: mon/wed.\nAssistant: Noted: 5:30am."
    assert marked(NOTES, MARKS["earlier"])[1].startswith("[1 March 2024] User (earlier, may have changed since): Planet")
    assert marked(NOTES[:1], MARKS["earlier"]) == NOTES[:1]
    assert MARKS["outdated"]("an undated note: as it is") == "an undated note: as it is"


def test_tally_and_table_count_each_reading():
    def r(text: str, correct: bool = False, stale: bool = False) -> dict:
        return {"text": text, "correct": correct, "stale": stale, "abstained": text == "I don't know."}

    records = [{"readings": {"as_run": r("Planet Fitness.", stale=True), "outdated": r("Crunch.", correct=True)}},
               {"readings": {"as_run": r("I don't know."), "outdated": r("I don't know.")}}]
    counts = tally(records)
    assert counts["as_run"] == {"questions": 2, "correct": 0, "stale": 1, "abstained": 1}
    assert counts["outdated"] == {"questions": 2, "correct": 1, "stale": 0, "abstained": 1}
    table = markdown({"tally": counts, "records": records})
    assert "| outdated | 2 | 1 | 0 | 1 | 1 |" in table and "| as_run | 2 | 0 | 1 | 1 | 0 |" in table

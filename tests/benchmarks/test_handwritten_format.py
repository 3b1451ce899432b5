"""Your own conversations as a held-out family: the hand-written families' file format, checked
(``benchmarks.handwritten.format``), read by ``--families FILE.json``, and refused by place and field."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from benchmarks import handwritten
from benchmarks.handwritten.format import read_users
from benchmarks.heldout import asked_families, calls_of, parse_args, replies_markdown
from recall_core.training.families import base

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "conversations.json"


def _raw() -> list[dict]:
    return json.loads(EXAMPLE.read_text(encoding="utf-8"))


def _write(tmp_path: Path, raw: object, name: str = "mine.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(raw), encoding="utf-8")
    return path


def test_the_example_reads_with_its_optional_fields_filled_in():
    users = handwritten.from_file(EXAMPLE).generate(0, users=10)
    assert [u.user_id for u in users] == ["example-ines", "example-tomasz"]
    ines = users[0].questions
    assert [q.key for q in ines] == [f"example-ines-q{i:02d}" for i in range(4)]
    # evidence left out: the turns that name an answer (the class moved to Thursdays: the user's turn
    # and the assistant's reply), never one that names only the stale value
    assert ines[0].evidence == ((2, 0), (2, 1)) and ines[0].stale == ("Wednesday", "Wednesdays")
    assert ines[3].kind == "unanswerable" and ines[3].answers == () and ines[3].evidence == ()
    assert users[1].questions[0].decoys == ("Ola",)
    assert [t.session for t in users[0].turns] == [1, 1, 1, 2, 2]
    # a turn's facts: the questions whose value it says, any version (Wednesday: the class before it moved)
    assert users[0].turns[0].facts == ("example-ines-q00",) and users[0].turns[1].facts == ()
    assert set(users[0].turns[2].facts) == {"example-ines-q01", "example-ines-q02"}


@pytest.mark.parametrize("name", sorted(handwritten.FAMILIES))
def test_every_shipped_hand_written_file_is_in_the_format_and_read_unchanged(name):
    """The checks are the format's: the seven shipped files pass them, and filling in adds nothing."""
    family = handwritten.FAMILIES[name]
    raw = json.loads(family.DATA.read_text(encoding="utf-8"))
    assert list(read_users(copy.deepcopy(raw), family.DATA)) == raw


def _broken(change) -> list[dict]:
    raw = _raw()
    change(raw)
    return raw


@pytest.mark.parametrize(("change", "message"), [
    (lambda r: r.clear(), "must be a JSON list of users"),
    (lambda r: r[0].pop("sessions"), r"users\[0\]: sessions missing"),
    (lambda r: r[0].update(name="Ines"), r"users\[0\]: unknown field\(s\) name; the fields are user_id, sessions, questions"),
    (lambda r: r[1].update(user_id="example-ines"), r"users\[1\].user_id 'example-ines' is another user's"),
    (lambda r: r[0]["sessions"][1].update(date="10/03/2025"), r"sessions\[1\].date: must be an ISO 8601"),
    (lambda r: r[0]["sessions"][0]["turns"][1].update(role="bot"), r"turns\[1\].role: must be one of user, assistant, got 'bot'"),
    (lambda r: r[0]["sessions"][0]["turns"][0].update(content=" "), r"turns\[0\].content: must be non-empty text"),
    (lambda r: r[0]["questions"][0].update(kind="fact"), r"questions\[0\].kind: must be one of memory, unanswerable"),
    (lambda r: r[0]["questions"][1].pop("answers"), r"questions\[1\].answers: a memory question needs at least one answer"),
    (lambda r: r[0]["questions"][1].update(answers=["Margaret"]), r"questions\[1\].answers: none of \['Margaret'\] is said"),
    (lambda r: r[0]["questions"][1].update(answers="Marguerite"), r"questions\[1\].answers: must be a list of texts"),
    (lambda r: r[0]["questions"][3].update(answers=["10 euros"]), r"questions\[3\]: an unanswerable question has no answers"),
    (lambda r: r[0]["questions"][1].update(evidence=[[3, 0]]), r"evidence\[0\]: must be \[session, turn\] with session in \[1, 2\]"),
    (lambda r: r[0]["questions"][1].update(evidence=[[1, 3]]), r"evidence\[0\]: must be \[session, turn\]"),
    (lambda r: r[0]["questions"][1].update(key="example-ines-q00"), r"questions\[1\].key 'example-ines-q00' is another"),
    (lambda r: r[1]["questions"][0].update(key="example-ines-q00"), r"users\[1\].questions\[0\].key .* keys must be unique"),
    (lambda r: r[0]["questions"][1].update(evidence=[]), r"questions\[1\].evidence: a memory question needs at least one"),
    (lambda r: r[0]["questions"][0].update(stale=["?"]), r"stale\[0\]: '\?' has no letter or digit"),
    (lambda r: r[0]["questions"][0].update(stale=["A"]), r"stale\[0\]: 'A' would be found in replies that do not name it"),
    (lambda r: r[0]["questions"][0].update(decoys=["it's"]), r"decoys\[0\]: \"it's\" would be found .* as 'it s'"),
])  # fmt: skip
def test_a_file_not_in_the_format_is_refused_by_place_and_field(tmp_path, change, message):
    path = _write(tmp_path, _broken(change))
    with pytest.raises(ValueError, match=message) as error:
        handwritten.from_file(path)
    assert str(path) in str(error.value)


def test_values_in_any_script_are_read_with_accents_ignored(tmp_path):
    """A value in another script, or written without the accents the conversation gives it, is
    read as the conversation's: its evidence is found and a reply naming it either way is right."""
    raw = _raw()
    raw[0]["sessions"][0]["turns"][0]["content"] += " Моя сестра живёт в Łódź. 我住在東京。"
    raw[0]["questions"].append({"text": "Where does my sister live?", "answers": ["Lodz"]})
    raw[0]["questions"].append({"text": "Where do I live?", "answers": ["東京"]})  # one-character words, accepted
    questions = handwritten.from_file(_write(tmp_path, raw)).generate(0, users=1)[0].questions
    assert questions[4].evidence == questions[5].evidence == ((1, 0),)
    assert all(base.score(questions[4], reply)["correct"] for reply in ("In Łódź.", "In Lodz.", "łódź!"))
    assert not base.score(questions[4], "I'd say so.")["correct"]
    assert base.score(questions[5], "你住在東京。")["correct"] and not base.score(questions[5], "你住在京都。")["correct"]


def test_a_byte_order_mark_is_read_and_a_file_not_in_utf8_is_named(tmp_path):
    path = tmp_path / "bom.json"
    path.write_text(json.dumps(_raw()), encoding="utf-8-sig")
    assert len(handwritten.from_file(path).generate(0, users=10)) == 2
    latin = tmp_path / "latin.json"
    latin.write_bytes(json.dumps(_raw(), ensure_ascii=False).replace("Gdańsk", "Gdańsk").encode("latin-1", "replace"))
    latin.write_bytes(latin.read_bytes() + b"\xff")
    with pytest.raises(ValueError, match=r"latin.json: not a readable JSON file in UTF-8"):
        handwritten.from_file(latin)


def test_sessions_out_of_date_order_are_read_with_a_warning_that_names_the_place(tmp_path):
    """Each turn is stored at its own date, so the file is asked; LlamaIndex's recipe reads the
    sessions in the file's order, so the warning says where the order is wrong."""
    raw = _raw()
    raw[0]["sessions"][1]["date"] = "2025-01-01T09:00+01:00"  # before session 0; the offset is dropped
    with pytest.warns(UserWarning, match=r"users\[0\].sessions\[1\].date: '2025-01-01T09:00\+01:00' is before the session above it"):
        users = read_users(raw, tmp_path / "mine.json")
    assert users[0]["sessions"][1]["date"] == "2025-01-01T09:00+01:00"


def test_yes_and_no_are_answers(tmp_path):
    raw = _raw()
    raw[0]["sessions"][0]["turns"][0]["content"] += " No, I never did pass it."
    raw[0]["questions"].append({"text": "Did I pass my test?", "answers": ["No"]})
    assert read_users(raw, tmp_path / "mine.json")[0]["questions"][4]["answers"] == ["No"]


def test_a_file_saved_again_is_read_again(tmp_path):
    import os

    path = _write(tmp_path, _raw())
    family = handwritten.from_file(path)
    assert family.generate(0, users=10)[0].questions[0].text == _raw()[0]["questions"][0]["text"]
    raw = _raw()
    raw[0]["questions"][0]["text"] = "Which evening is the class now?"
    _write(tmp_path, raw)
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))  # saved a second later
    assert family.generate(0, users=10)[0].questions[0].text == "Which evening is the class now?"


def test_given_evidence_is_kept_as_given(tmp_path):
    raw = _raw()
    raw[0]["questions"][1]["evidence"] = [[1, 2]]
    raw[0]["questions"][0]["evidence"] = [[2, 0]]
    users = handwritten.from_file(_write(tmp_path, raw)).generate(0, users=1)
    assert [q.evidence for q in users[0].questions[:2]] == [((2, 0),), ((1, 2),)]


def test_families_takes_files_beside_names_and_refuses_a_broken_one_with_its_message(tmp_path, capsys):
    mine = str(_write(tmp_path, _raw()))
    assert parse_args(["--families", f"dates,{mine}"]).families == ["dates", mine]
    broken = str(_write(tmp_path, _broken(lambda r: r[0]["questions"][0].update(kind="fact")), "broken.json"))
    with pytest.raises(SystemExit):
        parse_args(["--families", broken])
    assert "questions[0].kind: must be one of memory, unanswerable" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        parse_args(["--families", str(tmp_path / "missing.json")])
    assert "no such file" in capsys.readouterr().err


def test_a_users_file_is_asked_as_every_family_is(tmp_path):
    """Each question in a fresh session, under the evaluation's system messages, after 0-2 exchanges."""
    mine = str(_write(tmp_path, _raw()))
    data = asked_families([mine], 20261124, users=10)
    calls = calls_of(mine, data[mine])
    assert [c.question.key for c in calls] == [q.key for u in data[mine] for q in u.questions]
    assert len({c.system for c in calls}) > 1 and all(c.family == mine for c in calls)


def test_a_file_is_asked_alike_from_any_folder_and_named_by_its_normalised_path(tmp_path, monkeypatch):
    (tmp_path / "a").mkdir()
    here, there = _write(tmp_path, _raw()), _write(tmp_path / "a", _raw())
    monkeypatch.chdir(tmp_path)
    assert parse_args(["--families", "./mine.json"]).families == ["mine.json"]
    drawn = [[(c.system, c.earlier) for c in calls_of(str(p), asked_families([str(p)], 7, users=10)[str(p)], seed=7)]
             for p in (here, there)]  # fmt: skip
    assert drawn[0] == drawn[1]


def test_two_families_with_the_same_user_are_refused(tmp_path):
    """They would share one memory store: a user's notes would be another's."""
    first, second = str(_write(tmp_path, _raw(), "a.json")), str(_write(tmp_path, _raw(), "b.json"))
    with pytest.raises(ValueError, match=r"user_id 'example-ines' is in .*a.json and in .*b.json"):
        asked_families([first, second], 0, users=10)


def test_two_files_with_the_same_user_are_refused_as_an_option_error(tmp_path, capsys):
    first, second = str(_write(tmp_path, _raw(), "a.json")), str(_write(tmp_path, _raw(), "b.json"))
    with pytest.raises(SystemExit):
        parse_args(["--families", f"{first},{second}"])
    assert "user_id 'example-ines' is in" in capsys.readouterr().err


def test_replies_are_shown_side_by_side_with_their_verdicts():
    def row(method: str, reply: str, **marks) -> dict:
        verdicts = {"correct": False, "stale": False, "unknown_with_answer": False, **marks}
        return {"method": method, "family": "mine.json", "key": "q0", "kind": "memory", "question": "Which evening | again?",
                "answers": ["Thursday"], "reply": reply, **verdicts}  # fmt: skip

    result = {"summary": {"recall": {}, "langchain": {}},
              "rows": [row("recall", "Thursdays.", correct=True), row("langchain", "On\nWednesday.", stale=True)]}
    table = replies_markdown(result).splitlines()
    assert table[0] == "| question | answers | recall | langchain |"
    assert table[2] == r"| Which evening \| again? | Thursday | ✓: Thursdays. | stale: On Wednesday. |"

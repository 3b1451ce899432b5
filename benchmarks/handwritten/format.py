"""The hand-written families' file format, checked and completed: also how you measure recall on
your own conversations (``python -m benchmarks.heldout --families mine.json``; docs/benchmarks/heldout.md#your-own-conversations).

A file is a JSON list of users. Each user's sessions are what they told an assistant; each
question is asked later, in a fresh session, and scored by whether the reply names one of its
``answers``::

    [{"user_id": "ada",
      "sessions": [{"date": "2025-03-01T09:00",
                    "turns": [{"role": "user", "content": "We finally adopted a dog, Biscuit!"},
                              {"role": "assistant", "content": "Congratulations! What breed?"}]}],
      "questions": [{"text": "What's my dog called?", "answers": ["Biscuit"]},
                    {"text": "What's my blood type?", "kind": "unanswerable"}]}]

A question's fields:

- ``text`` (required);
- ``kind``: ``"memory"`` (the default: the answer was said) or ``"unanswerable"`` (it never was: the
  right reply says it does not know);
- ``answers``: the ways to name the current value, any one of which counts (required for a memory
  question, none for an unanswerable one). They are matched as whole words, so list every way a
  reply may write it: a date as "11 August", "11th of August" and "August 11";
- ``stale``: the ways to name values it had before (a reply naming one and no answer is stale);
- ``decoys``: values said of something else the question could be mistaken for;
- ``evidence``: the ``[session, turn]`` (1-based session, 0-based turn) that says the answer;
  when left out, the turns that name one of ``answers``;
- ``key``: a name for the question (default ``USER-qNN``).

Whatever is wrong is refused with a ``ValueError`` that names the file, the place and the field.
Values are matched as letters and digits of any script, whole words, case, accents and punctuation
ignored (``base.normal``: "Gdańsk" and "Gdansk" are one word, "Łódź" is "lodz"; Thai, Chinese,
Japanese and Korean are read a character at a time). A value that every reply could name is
refused: one with no letter or digit, or one made only of single letters a-z and words such as
"the" or "my" ("A" for a blood type matches the "a" of any reply: write "type A" or "A positive",
as a reply would).
"""

from __future__ import annotations

import warnings
from datetime import datetime
from pathlib import Path
from typing import Any

from recall_core.training.families import base

__all__ = ["read_users"]

_USER_FIELDS = ("user_id", "sessions", "questions")
_SESSION_FIELDS = ("date", "turns")
_TURN_FIELDS = ("role", "content")
_QUESTION_FIELDS = ("key", "text", "kind", "answers", "stale", "decoys", "evidence")


def read_users(raw: Any, path: Path) -> tuple[dict[str, Any], ...]:
    """``raw`` (the JSON of the file at ``path``) checked, with every optional field filled in."""
    if not isinstance(raw, list) or not raw:
        raise ValueError(f"{path}: must be a JSON list of users (at least one), got {type(raw).__name__}")
    users = tuple(_user(user, f"{path}: users[{i}]") for i, user in enumerate(raw))
    seen: set[str] = set()
    keys: set[str] = set()
    for i, user in enumerate(users):
        if user["user_id"] in seen:
            raise ValueError(f"{path}: users[{i}].user_id {user['user_id']!r} is another user's: each must be unique")
        seen.add(user["user_id"])
        for j, question in enumerate(user["questions"]):  # a run's rows are told apart by their keys
            if question["key"] in keys:
                raise ValueError(f"{path}: users[{i}].questions[{j}].key {question['key']!r} is another question's: "
                                 "keys must be unique in the file")  # fmt: skip
            keys.add(question["key"])
    return users


def _fields(item: Any, where: str, allowed: tuple[str, ...], required: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(item, dict):
        raise ValueError(f"{where}: must be an object with {', '.join(allowed)}, got {type(item).__name__}")
    unknown = sorted(set(item) - set(allowed))
    if unknown:
        raise ValueError(f"{where}: unknown field(s) {', '.join(unknown)}; the fields are {', '.join(allowed)}")
    missing = [name for name in required if name not in item]
    if missing:
        raise ValueError(f"{where}: {', '.join(missing)} missing")
    return item


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{where}: must be non-empty text, got {value!r}")
    return value


def _texts(value: Any, where: str) -> list[str]:
    if not isinstance(value, list):
        raise ValueError(f"{where}: must be a list of texts, got {type(value).__name__}")
    return [_text(v, f"{where}[{i}]") for i, v in enumerate(value)]


# Words nearly every reply has, once punctuation is a break ("I'd" is "i d", "it's" is "it s"): a
# value made of nothing else would be found in replies that do not name it.
_EVERY_REPLY = frozenset("a an the i me my mine you your yours it its is are was be to of and or in on at for "
                         "with that this s d m t ll re ve".split())  # fmt: skip


def _values(value: Any, where: str) -> list[str]:
    """Values a reply is scored on. ``base.names`` finds them as whole words, letters and digits only,
    so a value with none, or with only words every reply has, would be found in any reply."""
    values = _texts(value, where)
    for i, text in enumerate(values):
        words = base.normal(text).split()
        if not words:
            raise ValueError(f"{where}[{i}]: {text!r} has no letter or digit, which is all the scorer reads "
                             "(whole words, case, accents and punctuation ignored)")  # fmt: skip
        if all(word in _EVERY_REPLY or len(word) == 1 and "a" <= word <= "z" for word in words):
            raise ValueError(f"{where}[{i}]: {text!r} would be found in replies that do not name it (the scorer reads "
                             f"it as {' '.join(words)!r}, words most replies have): write it as a reply would, "
                             "with a word beside it, such as 'type A' for 'A'")  # fmt: skip
    return values


def _list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list) or not value:
        raise ValueError(f"{where}: must be a non-empty list, got {value!r}")
    return value


def _user(raw: Any, where: str) -> dict[str, Any]:
    user = _fields(raw, where, _USER_FIELDS, _USER_FIELDS)
    user_id = _text(user["user_id"], f"{where}.user_id")
    sessions = [_session(s, f"{where}.sessions[{i}]") for i, s in enumerate(_list(user["sessions"], f"{where}.sessions"))]
    _in_order(sessions, f"{where}.sessions")
    questions = [_question(q, f"{where}.questions[{j}]", user_id, j, sessions)
                 for j, q in enumerate(_list(user["questions"], f"{where}.questions"))]  # fmt: skip
    return {"user_id": user_id, "sessions": sessions, "questions": questions}


def _session(raw: Any, where: str) -> dict[str, Any]:
    session = _fields(raw, where, _SESSION_FIELDS, _SESSION_FIELDS)
    date = _text(session["date"], f"{where}.date")
    try:
        datetime.fromisoformat(date)
    except ValueError:
        raise ValueError(f"{where}.date: must be an ISO 8601 date and time such as 2025-03-01T09:00, got {date!r}") from None
    turns = []
    for i, turn in enumerate(_list(session["turns"], f"{where}.turns")):
        turn = _fields(turn, f"{where}.turns[{i}]", _TURN_FIELDS, _TURN_FIELDS)
        if turn["role"] not in base.ROLES:
            raise ValueError(f"{where}.turns[{i}].role: must be one of {', '.join(base.ROLES)}, got {turn['role']!r}")
        turns.append({"role": turn["role"], "content": _text(turn["content"], f"{where}.turns[{i}].content")})
    return {"date": date, "turns": turns}


def _in_order(sessions: list[dict[str, Any]], where: str) -> None:
    """Warn when a session is dated before the one above it. Each turn is stored at its own date
    (read as written: a UTC offset is dropped), so recall reads the sessions in date order however
    they are listed, but LlamaIndex's recipe flushes them into its memory in the file's order."""
    dates = [datetime.fromisoformat(session["date"]).replace(tzinfo=None) for session in sessions]
    for i in range(1, len(dates)):
        if dates[i] < dates[i - 1]:
            warnings.warn(f"{where}[{i}].date: {sessions[i]['date']!r} is before the session above it "
                          f"({sessions[i - 1]['date']!r}): list sessions in the order they happened", stacklevel=2)  # fmt: skip


def _question(raw: Any, where: str, user_id: str, number: int, sessions: list[dict[str, Any]]) -> dict[str, Any]:
    question = _fields(raw, where, _QUESTION_FIELDS, ("text",))
    kind = question.get("kind", "memory")
    if kind not in base.KINDS:
        raise ValueError(f"{where}.kind: must be one of {', '.join(base.KINDS)}, got {kind!r}")
    answers = _values(question.get("answers", []), f"{where}.answers")
    if kind == "memory" and not answers:
        raise ValueError(f"{where}.answers: a memory question needs at least one answer (or kind \"unanswerable\")")
    if kind == "unanswerable" and (answers or question.get("evidence")):
        raise ValueError(f"{where}: an unanswerable question has no answers or evidence")
    evidence = _evidence(question["evidence"], f"{where}.evidence", sessions) if "evidence" in question else [
        [s, index] for s, session in enumerate(sessions, start=1)
        for index, turn in enumerate(session["turns"]) if base.names_any(turn["content"], answers)
    ]  # fmt: skip
    if kind == "memory" and not evidence and "evidence" in question:
        raise ValueError(f"{where}.evidence: a memory question needs at least one [session, turn] (or leave "
                         "evidence out: the turns that name one of its answers are taken)")  # fmt: skip
    if kind == "memory" and not evidence:  # evidence left out, and no turn names an answer
        raise ValueError(f"{where}.answers: none of {answers} is said in any turn: give evidence "
                         "([[session, turn]]) or an answer worded as the conversation words it")  # fmt: skip
    key = _text(question.get("key", f"{user_id}-q{number:02d}"), f"{where}.key")
    return {"key": key, "text": _text(question["text"], f"{where}.text"), "kind": kind, "answers": answers,
            "stale": _values(question.get("stale", []), f"{where}.stale"),
            "decoys": _values(question.get("decoys", []), f"{where}.decoys"), "evidence": evidence}  # fmt: skip


def _evidence(value: Any, where: str, sessions: list[dict[str, Any]]) -> list[list[int]]:
    if not isinstance(value, list):
        raise ValueError(f"{where}: must be a list of [session, turn] pairs, got {value!r}")
    out = []
    for i, pair in enumerate(value):
        ok = isinstance(pair, list) and len(pair) == 2 and all(isinstance(n, int) and not isinstance(n, bool) for n in pair)
        if not ok or not 1 <= pair[0] <= len(sessions) or not 0 <= pair[1] < len(sessions[pair[0] - 1]["turns"]):
            raise ValueError(f"{where}[{i}]: must be [session, turn] with session in [1, {len(sessions)}] and turn "
                             f"in [0, that session's turns), got {pair!r}")  # fmt: skip
        out.append(list(pair))
    return out

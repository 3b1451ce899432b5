"""Hand-written conversations: evaluation families that no generator made and no training sees.

Every other family (:mod:`recall_core.training.families`) is a generator of templates, and the
held-out ones share no template with training, but each is still one generator's idea of a
conversation. These were written by hand, each in one go, by a writer who saw neither the
families, the training code nor the benchmarks:

- ``handwritten`` (``users.json``): eight users' free-form sessions in different voices (terse
  replies, long paragraphs with a fact in passing, typos, lower case, requests for help with
  facts dropped along the way), asked later about what they said, about facts that changed,
  about people around them, and about things they never said;
- ``handwritten-changes`` (``changes.json``): six more users, written later by another writer,
  about facts that change (37 of 69 questions; 29 of those not about a day or a time), each
  change said in the user's own words: outright, implied, with a reason, in a long paragraph,
  in reply to the assistant. It was written after :mod:`recall_core.decoding.change_phrases`
  was, and measured before anyone read its replies: the held-out check of stale answers;
- ``handwritten-updates`` (``updates.json``): six more users by a third writer (2026-12-01,
  twenty-third session), briefed only on facts that change (some twice, some back, some only
  implied; other people's attributes beside the user's), written after
  :mod:`recall_core.decoding.follow` was and measured before anyone read its replies: the check
  of ``follow_updates`` and ``newest_wins`` that no rule was written from, since one trace of
  ``handwritten-changes`` was read for each;
- ``handwritten-revisions`` (``revisions.json``): six more users by a fourth writer (2026-12-01,
  twenty-fourth session), briefed like the third, with assistants' replies as a chat assistant
  writes them (long lists and drafts, follow-up questions): a second check of stale answers that
  no rule or setting was chosen on, measured before anyone read its replies (its search misses
  and ``"model"`` misses were read in the twenty-fifth session, which found the lower-case names
  rule of :func:`recall_core.decoding.names.asked_names` there: a development family since);
- ``handwritten-errands`` (``errands.json``): six more users by a fifth writer (2026-12-01,
  twenty-fifth session), each in another variety of English (Irish, Indian, Australian,
  Nigerian, American, Canadian), asking a chat assistant for help with errands; facts said in
  passing, many people around each user, dates, a few changes (19 of 66 memory questions), and
  questions with small talk of their own ("Remind me again, ... my head is like a sieve").
  Written by a helper told to read nothing of the project; no reply of it is read.
- ``handwritten-routines`` (``routines.json``): six more users by a sixth writer (2026-12-01,
  twenty-eighth session), a helper told to read nothing of the project, on routines and
  commitments (shifts, classes, standing appointments, rotas, payments), each user in another
  register (terse fragments, long rambling paragraphs, formal, lower case with abbreviations,
  a non-native speaker, voice dictation); facts that change (some twice, three back), other
  people's routines beside the user's, facts in passing and in reply to the assistant's
  follow-up questions. Measured once, before anyone read its replies; no reply of it is read.
- ``handwritten-plans`` (``plans.json``): six more users by a seventh writer (2026-12-04,
  forty-second session), a helper told to read nothing under /work, on plans and arrangements
  that keep shifting over months (a wedding, a renovation, a sister's care, a band tour, a
  research trip, a junior football season): facts changed outright, corrected in the same
  session, cancelled and replaced, only implied, reported by someone else, changed twice or
  changed and back, buried in a long message or said in reply to the assistant; others'
  attributes beside the user's. Written to check the stale goal on a set no rule, setting or
  candidate was chosen on; measured once, before anyone read its replies.
- ``handwritten-household`` (``household.json``): six more users by an eighth writer (2026-12-06,
  fifty-ninth session), a helper told to read nothing under /work, on a household and the people
  around the user (partner or ex, children, parents, in-laws, neighbours, a childminder, a GP, a
  vet), each with attributes said while asking for help with something else, so that a question
  about one person has near misses in the others; a third of the memory questions on facts that
  changed (outright, with a reason, implied, corrected, reported by someone else, changed twice),
  never-said questions that are near misses (the other child's allergy), each user in another
  register (terse, rambling, formal, a non-native speaker, voice dictation, emoji and typos).
  Measured once by a rule written before it arrived; nothing chosen on it.

The file format is :mod:`benchmarks.handwritten.format`'s, checked when a file is read;
:func:`from_file` reads any file in it as a family (your own conversations).

The data is fixed, so ``generate`` ignores the seed but for its checks; the benchmark's
perturbations (the caller's system message, earlier small talk) still follow the seed.
Neither is among the training families (:data:`recall_core.training.families.FAMILIES`):
``recall train`` refuses them by name, and they must never be trained or tuned on.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cache
from pathlib import Path
from typing import Any

from benchmarks.handwritten.format import read_users
from recall_core.training.families import base

NAME = "handwritten"
DESCRIPTION = "Eight users' conversations written by hand, not from templates (evaluation only)."
DATA = Path(__file__).with_name("users.json")

__all__ = ["CHANGES", "DATA", "DESCRIPTION", "ERRANDS", "FAMILIES", "HOUSEHOLD", "NAME", "PLANS", "REVISIONS", "ROUTINES",
           "UPDATES", "HandwrittenFamily", "from_file", "generate"]


@dataclass(frozen=True)
class HandwrittenFamily:
    """One file of hand-written users, asked like a generated family (``generate(seed, users=)``)."""

    NAME: str
    DESCRIPTION: str
    DATA: Path

    def generate(self, seed: int = 0, users: int = 8) -> list[base.User]:
        """The first ``users`` users of the file (all when ``users`` is larger); ``seed`` is not used.

        Raises ``ValueError`` when ``users`` is below 1.
        """
        if users < 1:
            raise ValueError(f"users must be at least 1, got {users}")
        return [_user(raw) for raw in self.raw_users()[:users]]

    def raw_users(self) -> tuple[dict[str, Any], ...]:
        """The file's users as written (``user_id``, ``sessions``, ``questions``), read once per version
        of the file (read again when it was saved since)."""
        try:
            version = self.DATA.stat().st_mtime_ns
        except OSError:
            version = None  # _load names the file it cannot read
        return _load(self.DATA, version)


CHANGES = HandwrittenFamily(
    "handwritten-changes",
    "Six users' conversations about facts that change, written by hand (evaluation only).",
    Path(__file__).with_name("changes.json"),
)
UPDATES = HandwrittenFamily(
    "handwritten-updates",
    "Six users' conversations about facts that change, by a third writer (evaluation only).",
    Path(__file__).with_name("updates.json"),
)
REVISIONS = HandwrittenFamily(
    "handwritten-revisions",
    "Six users' conversations about facts that change, by a fourth writer (evaluation only).",
    Path(__file__).with_name("revisions.json"),
)
ERRANDS = HandwrittenFamily(
    "handwritten-errands",
    "Six users asking a chat assistant for help with errands, by a fifth writer (evaluation only).",
    Path(__file__).with_name("errands.json"),
)
ROUTINES = HandwrittenFamily(
    "handwritten-routines",
    "Six users' routines and commitments told to a chat assistant, by a sixth writer (evaluation only).",
    Path(__file__).with_name("routines.json"),
)
PLANS = HandwrittenFamily(
    "handwritten-plans",
    "Six users' plans and arrangements that keep shifting, by a seventh writer (evaluation only).",
    Path(__file__).with_name("plans.json"),
)
HOUSEHOLD = HandwrittenFamily(
    "handwritten-household",
    "Six users among the people of their household, each person with attributes, by an eighth writer (evaluation only).",
    Path(__file__).with_name("household.json"),
)
#: Every hand-written family by name.
FAMILIES = {
    NAME: HandwrittenFamily(NAME, DESCRIPTION, DATA),
    CHANGES.NAME: CHANGES,
    UPDATES.NAME: UPDATES,
    REVISIONS.NAME: REVISIONS,
    ERRANDS.NAME: ERRANDS,
    ROUTINES.NAME: ROUTINES,
    PLANS.NAME: PLANS,
    HOUSEHOLD.NAME: HOUSEHOLD,
}


def from_file(path: str | Path) -> HandwrittenFamily:
    """The conversations in the JSON file at ``path`` (:mod:`benchmarks.handwritten.format`) as a
    family named by its normalised path: how you ask the held-out benchmark about your own.

    Raises ``ValueError`` naming the file, the place and the field when the file is not in that format.
    """
    file = Path(path)
    if not file.is_file():
        raise ValueError(f"{path}: no such file (a JSON list of users: benchmarks/handwritten/format.py)")
    name = os.path.normpath(path)  # "./mine.json" and "mine.json" are one family
    # read once per file, however its path is written (the file is read when first asked, and cached)
    family = HandwrittenFamily(name, f"Conversations read from {name}.", file.resolve())
    family.raw_users()  # checked now, not at the first question
    return family


def generate(seed: int = 0, users: int = 8) -> list[base.User]:
    """The first ``users`` users of ``handwritten`` (all eight when ``users`` is larger); ``seed`` is not used.

    Raises ``ValueError`` when ``users`` is below 1.
    """
    return FAMILIES[NAME].generate(seed, users)


@cache
def _load(path: Path, version: int | None) -> tuple[dict[str, Any], ...]:  # noqa: ARG001 - the cache's key
    try:
        raw = json.loads(path.read_text(encoding="utf-8-sig"))  # a byte-order mark, as some editors write, is fine
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{path}: not a readable JSON file in UTF-8 ({error})") from None
    return read_users(raw, path)


def _user(raw: dict[str, Any]) -> base.User:
    questions = [_question(raw["user_id"], q) for q in raw["questions"]]
    user = base.User(raw["user_id"])
    for number, session in enumerate(raw["sessions"], start=1):
        start = datetime.fromisoformat(session["date"])
        for index, turn in enumerate(session["turns"]):
            content = turn["content"]
            # the questions whose value (any version) this turn says, and those it names a near miss
            # for: a fact turn is never reused as a call's small talk
            own = [q.key for q in questions if (number, index) in q.evidence or base.names_any(content, (*q.answers, *q.stale))]
            near = [f"{q.key}:other" for q in questions if base.names_any(content, q.decoys)]
            values = tuple(v for q in questions for v in (*q.answers, *q.stale, *q.decoys) if base.names(content, v))
            stamp = (start + timedelta(minutes=index)).strftime("%Y-%m-%dT%H:%M")
            user.turns.append(base.Turn(turn["role"], content, number, stamp, index, tuple(own + near), values))
    user.questions = questions
    return user


def _question(user_id: str, raw: dict[str, Any]) -> base.Question:
    return base.Question(
        key=raw["key"], user_id=user_id, fact=raw["key"], text=raw["text"], kind=raw["kind"],
        answers=tuple(raw["answers"]), stale=tuple(raw["stale"]),
        evidence=tuple((int(s), int(i)) for s, i in raw["evidence"]), decoys=tuple(raw["decoys"]),
    )  # fmt: skip

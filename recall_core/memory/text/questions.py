"""What a chat message states, its questions left out: what a live chat writes to memory by default.

A user's question ("What is my dog called?") holds no fact. Written to memory, it comes back
as a note at the next question like it, in the place of the turn that holds the answer, and
the model reads it as something to go on: it says the question back ("Out of curiosity, what
do you play?") or answers from the question's words. Over seven conversation families asked
twice, with the first round's exchanges written back (``python -m benchmarks.hygiene``,
docs/benchmarks/hygiene.md), the notes held the answer for 25 of 114 questions with the
questions written and 54 without, and the right "I don't know."s to questions never answered
went from 7 to 19 of 26, for one fact fewer (17 against 18).

The test is punctuation, and errs towards writing:

* a message with no question mark is written as it is ("Yes.", "Thanks!", a pasted text);
* otherwise each sentence that ends with ``?`` loses its last clause (the question) and keeps
  what comes before it after a comma, semicolon or colon ("I'm moving to Lyon next week,
  any tips?" keeps "I'm moving to Lyon next week."); sentences that do not ask are kept;
* each sentence left is written when it has more than three words or holds a number: greetings
  and fillers around a question ("Hi again.", "Quick question:") are not facts. A sentence ends at
  ``.!?`` before a space (not inside "72.5" or "www.jane.io", nor after "Dr." or the "p.m." of "4:30
  p.m. on Friday"), at "。！？", or at a line break that does not start a list item.

:func:`asks` tells a message that asks something from one that only states ("I started a new job
today."), for the decoding loop (``RecallConfig.own_recall_on_statements``). People leave the
question mark out ("which gym am i at now"), so a question word anywhere counts as asking too;
the test errs towards asking, which keeps the loop as it was.
"""

from __future__ import annotations

import re
import unicodedata

from recall_core.memory.text.chunking import FULL_STOPS

__all__ = ["asks", "ends_asking", "only_asks", "turn_to_write", "without_questions"]

#: The marks that end a sentence before a space: chunking's, and "…".
_STOPS = FULL_STOPS + "\u2026"
#: Where a sentence may end: a run of ``.!?`` (or ``…``, or another script's, :data:`_STOPS`), with the quotes or brackets that close
#: after it, before a space, the end of the text or a character that joins no word ("tonight?😋 I
#: live...", "tonight?** I live..."), not inside "72.5", "3.11.4", "www.jane.io",
#: "jane.doe@example.com", "x != None", "foo()?;" or "?&a=1"; their
#: CJK forms ("。！？", which no space follows); or a line break that does not start a list item
#: ("- peanuts"). A run is matched whole from its start (the lookarounds): a long run of points
#: took quadratic time (100 kB, 2 min).
_END = re.compile(rf"(?<![{_STOPS}])[{_STOPS}]+(?![{_STOPS}])[\"'\u201d\u2019)\]]*(?=\s|$|[^\w.,/@:'\-=&;`])"
                  r"|[\u3002\uff01\uff1f]+|\n+(?![ \t]*(?:[-*\u2022]|\d+[.)])\s)")  # fmt: skip
#: Words a point follows without ending the sentence ("Dr. Patel", "St. Louis", "No. 5", "Oct. 12",
#: "5th Ave. in New York"), unless a question word follows ("I live on Main St. What is near?").
_TITLES = frozenset({"dr", "mr", "mrs", "ms", "mx", "st", "mt", "prof", "rev", "fr", "jr", "sr", "sgt", "capt", "lt",
                     "col", "gen", "vs", "no", "nr", "approx", "ca", "inc", "ltd", "co", "ave", "apt", "ext", "ft",
                     "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec"})  # fmt: skip
#: A word of initials ("U.S", "p.m", "e.g"): a point after it ends the sentence only before a capital.
_INITIALS = re.compile(r"(?:[A-Za-z]\.)+[A-Za-z]")
#: Where a question without a comma may still have a statement before it: after a point (and a
#: closing quote) and a space ("I was born in the U.K. how about you?", 'I read "Dune." any tips?').
_AFTER_POINT = re.compile(rf"(?:(?<=[{_STOPS}])|(?<=[{_STOPS}][\"'\u201d\u2019)\]]))\s+")
#: Words a question opens with: a piece of a sentence that opens with one asks too ("Where is the
#: best pizza in St." is the start of a question, not a statement).
_OPENERS = re.compile(
    r"(?i:what|where|when|who|whom|whose|which|why|how|is|are|am|was|were|do|does|did|can|could|should|would|"
    r"will|shall|may|might|any|have|has|"
    # Arabic and Persian question words (until 2026-12-07 an Arabic question with "،" in it was cut at
    # its last comma and written as a statement: a reviewer)
    # (only words that always ask: "من" is also "I" in Persian and "from" in Arabic, "ما" also "not")
    r"\u0647\u0644|\u0623\u064a\u0646|\u0627\u064a\u0646|\u0645\u062a\u0649|\u0645\u062a\u064a|\u0645\u0627\u0630\u0627|"
    r"\u0643\u064a\u0641|\u0643\u0645|\u0644\u0645\u0627\u0630\u0627|\u0622\u06cc\u0627|\u06a9\u062c\u0627|\u0686\u0631\u0627|"
    r"\u0686\u0637\u0648\u0631|\u06a9\u062f\u0627\u0645|\u0686\u0646\u062f)\b")  # fmt: skip
#: A point with no space after it before a new sentence: a capital after a word ("Paris.Where
#: should I eat?"), or any letter after a question or exclamation mark ("the weather?i'm in oslo"),
#: not inside an address (the mark's word holds no "/", "=", "@" or "&": "page?id=55").
_UNSPACED = re.compile(r"(?<=[a-z]{2})[.!?](?=[A-Z])|(?<=[a-z])[!?](?=[a-z])(?![^\s/=@&]{0,64}[/=@&])")
_CLAUSE_END = re.compile(r"(?<=[,;:\u060c\u061b])\s+|(?<=[\uff0c\uff1b\uff1a\u3001])\s*")
_WORD = re.compile(r"\w+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_QUESTION_MARKS = ("?", "\uff1f", "\u061f")  # Latin, CJK (full width), Arabic
#: Emoji that ask: the question marks of emoji keyboards, "\u2049" and the interrobang.
_QUESTION_EMOJI = frozenset("\u2753\u2754\u2049\u203d\u2047")
#: A statement this short, next to a question, is a greeting or a filler, not a fact.
FILLER_WORDS = 3
_LOWER_WORD = re.compile(r"[a-z']+")
#: Words that ask, with or without a question mark: the wh-words (and their contractions and chat
#: spellings) and the requests to say back what was said ("remind me", "tell me").
QUESTION_WORDS = frozenset({
    "what", "whats", "what's", "wat", "where", "wheres", "where's", "when", "whens", "when's", "who", "whos", "who's",
    "whom", "whose", "which", "why", "how", "hows", "how's", "remind", "tell", "recall", "remember",
})  # fmt: skip


def without_questions(text: str) -> str:
    """``text`` with its questions left out (see the module docstring); ``""`` when nothing is stated.

    A message without a question mark is returned as it is. Until 2026-12-07 a sentence ended at
    every point, and the short pieces left went as fillers: "I weigh 72.5 kg now, is that healthy?"
    wrote nothing, "I live in St. Louis, where should I eat?" wrote "I live in St." and a list's
    items went (a reviewer). A piece that holds a number is never a filler.
    """
    if not _has_question_mark(text):
        return text
    kept: list[str] = []
    for sentence in _sentences(_UNSPACED.sub(lambda mark: mark.group() + " ", text)):
        if sentence.endswith(_QUESTION_MARKS) or any(mark in sentence[-3:] for mark in _QUESTION_MARKS):
            # the pieces before the one the question opens ("U.K. how about you?", "I said no. Is that bad,
            # honestly?"), else its clauses before the last comma ("My dog Rex is sick, what should I do?")
            pieces = _AFTER_POINT.split(sentence)
            clauses = _statement_before(pieces)
            if clauses is None:  # no piece opens like a question: the last comma, else the last point
                by_comma = _CLAUSE_END.split(sentence)
                clauses = by_comma if len(by_comma) > 1 else pieces
            sentence = " ".join(clauses[:-1]).rstrip(",;: \uff0c\uff1b\uff1a\u3001\u060c\u061b")
            if sentence and not re.search(r"[.!\u2026\u3002\uff01\u06d4\u0964\u0965\u1362\u0589][\"'\u201d\u2019)\]]*$", sentence):
                sentence += "\u3002" if _CJK.match(sentence[-1]) else "."
        words = _words(sentence)
        if words > FILLER_WORDS or (words > 1 and any(c.isdigit() for c in sentence)):
            kept.append(sentence)
    return " ".join(kept)


def ends_asking(text: str) -> bool:
    """Whether ``text`` ends by asking: a question mark ("?", "\uff1f", "\u061f") or a question
    emoji ("\u2753", "\u2754", "\u2049", "\u203d", "\u2047"), after what may close a question:
    spaces, emoji, one markdown emphasis run (``**``, ``_``), one closing bracket and "!" ("Where do
    you live? \U0001f60a", "(any tips?)", "Really?!"). A closing quote ('he asked "why?"'), a code
    fence and a hedge "(?)" do not ask. Until 2026-12-07 the writer's window and the ``"answered"``
    unit asked ``endswith("?")``, and a turn after such a question was searched without it (a reviewer)."""
    end = len(text.rstrip())
    for closers in ("", "*_~", ")]\uff09\uff3d", "!\uff01"):  # at most one run of each, in this order from the end
        while end and text[end - 1] in closers:
            end -= 1
        while end and (_is_emoji(text[end - 1]) or text[end - 1].isspace()):  # "(any tips? \U0001f60a)"
            if text[end - 1] in _QUESTION_EMOJI:
                return True
            end -= 1
    return end > 1 and text[end - 1] in _QUESTION_MARKS and text[end - 2] not in "([" or end == 1 and text[0] in _QUESTION_MARKS


def _is_emoji(char: str) -> bool:
    """A symbol, an invisible format mark (a joiner, a right-to-left mark), a combining mark or a
    skin tone: what may follow a question mark without ending it. Not "°", nor the backtick and
    "^" (modifier symbols: a code fence, "? ^^")."""
    # (code points as well: an emoji newer than Python's Unicode tables is unassigned there, "Cn")
    code, category = ord(char), unicodedata.category(char)
    return ((category in ("So", "Cf", "Mn", "Me") and char != "\u00b0") or code >= 0x1F000 or 0x2600 <= code <= 0x27BF
            or char in _QUESTION_EMOJI)  # fmt: skip


def _statement_before(pieces: list[str]) -> list[str] | None:
    """The pieces of a question, split at its points, as clauses: those before the first that
    opens like a question, then that one with the rest (the clause left out); one clause where the
    first piece opens like a question ("Where is the best pizza in St. Louis?"); ``None`` where none does."""
    for index, piece in enumerate(pieces):
        if _opens_a_question(piece):
            return [*pieces[:index], " ".join(pieces[index:])] if index else [" ".join(pieces)]
    return None


def _opens_a_question(text: str) -> bool:
    """Whether ``text`` opens with a word a question opens with (:data:`_OPENERS`), quotes and marks aside."""
    return _OPENERS.match(text.lstrip("\"'(\u201c\u2018*_")) is not None


def _has_question_mark(text: str) -> bool:
    return any(mark in text for mark in _QUESTION_MARKS)


def _sentences(text: str) -> list[str]:
    """``text``'s sentences, stripped, none empty (where they end: :data:`_END`)."""
    found, start = [], 0
    for match in _END.finditer(text):
        if match.group() == "." and _no_end_after(text[max(0, match.start() - 64) : match.start()],
                                                  text[match.end() : match.end() + 64]):  # fmt: skip
            continue
        closed = match.group()[-1:] in "\"'\u201d\u2019)]"
        if (match.group() in ("...", "\u2026") or closed) and re.match(r"\s+[a-z]", text[match.end() : match.end() + 8]):
            continue  # "I'm allergic to peanuts... and shellfish", 'He yelled "No!" at dinner' go on
        found.append(text[start : match.end()].strip())
        start = match.end()
    found.append(text[start:].strip())
    return [sentence for sentence in found if sentence]


def _no_end_after(before: str, after: str) -> bool:
    """Whether a point between ``before`` and ``after`` is not a sentence's end: it follows a title
    that no question word follows ("Dr. Patel"; not "Main St. What ..."), initials that a
    lower-case word or a number follows ("4:30 p.m. on Friday"), or a list's number ("1. where ...")."""
    word = before.rsplit(None, 1)[-1].lstrip("(\"'\u201c\u2018") if before.strip() else ""
    following = re.match(r"\s+(\S+)", after)
    nxt = following.group(1) if following else ""
    if word.lower() in _TITLES:
        return bool(nxt) and not _opens_a_question(nxt)
    if word.isdigit() and before.rsplit("\n", 1)[-1].strip() == word:
        return True  # "1." opening a line: a list's number
    return nxt[:1].islower() or nxt[:1].isdigit() if _INITIALS.fullmatch(word) else False


def _words(sentence: str) -> int:
    """Words in ``sentence``; in CJK text, which writes no spaces, each character counts as one (a
    Chinese word is one or two: "谢谢！" is a filler, "我住在北京。" is not)."""
    return len(_WORD.findall(_CJK.sub(" ", sentence))) + len(_CJK.findall(sentence))


#: A sentence that opens as a yes/no question or a request to be told something, typed without its
#: question mark: an auxiliary verb and who or what it asks about ("do i have any allergies", "is my
#: appointment on monday"), or a request for something of the user's ("give me my ...", "can you
#: list my ...": not "give me a fun fact"). Until 2026-12-07 these were read as news under
#: ``ask_on_statements``, and the default answered them with no notes (a reviewer). "did my first
#: 10k today", "was my birthday", "send my love" are news: a past tense asks only of "i", "you", "we".
#: A request for a task ("can you write a bash alias") is not a question of memory: sent to the notes
#: path, 2 of 5 such replies of a returning user's third turns read a word from the notes instead (measured).
_ASKS_UNMARKED = re.compile(
    r"(?:^|[.!;:\n]\s*)(?:please\s+|so\s+|and\s+|hey\s+|ok\s+|okay\s+)?"
    r"(?:(?:do|does|did|is|are|am|was|were|have|has)(?:n't|nt)?\s+(?:i|you|we|u|there)\b"
    r"|(?:do|does|is|are|has)(?:n't|nt)?\s+(?:my|our|your|it|he|she|they|ur)\b"
    r"|(?:(?:can|could|would|will)\s+(?:you|u)\s+(?:please\s+)?)?"
    r"(?:(?:give|show|list|tell)\s+(?:(?:me|us)\s+)?(?:my|our)|send\s+(?:me|us)\s+(?:my|our))\b)")
#: Chinese questions without a question mark: a question word (not inside 几乎 "almost", 哪怕 "even if",
#: 不怎么 "not much", 没什么 "nothing much", 什么都 "anything"), or the particle 吗 that ends one.
_ASKS_CJK = re.compile(r"(?<!没)什么(?![都也])|哪(?!怕)|谁|多少|几(?!乎)|(?<!不)怎么|为什么|吗\s*[。.!！]?\s*$")


def asks(text: str) -> bool:
    """Does ``text`` ask something: a question mark, a question word anywhere (see
    :data:`QUESTION_WORDS`), or a sentence that opens as a question or a request without its mark
    (:data:`_ASKS_UNMARKED`)?"""
    lower = text.lower()
    return (
        _has_question_mark(text)
        or any(word in QUESTION_WORDS for word in _LOWER_WORD.findall(lower))
        or _ASKS_UNMARKED.search(lower.strip()) is not None
        or _ASKS_CJK.search(text.strip()) is not None
    )


def only_asks(text: str) -> bool:
    """Does ``text`` ask something and state nothing but greetings and fillers?"""
    return _has_question_mark(text) and not without_questions(text)


def turn_to_write(role: str, text: str, questions: bool) -> str:
    """What a chat turn writes to memory: a user's text without its questions unless ``questions``
    (the adapters' ``write_questions``), any other role's as it is."""
    return text if questions or role != "user" else without_questions(text)

"""A note about someone else gives way: ``RecallConfig.match_names``.

Why: the recall-tuned 135M model reads a note about the wrong person as if it answered. Asked
about one relative it answers with another's name; asked "What did Melanie make for a local
church?" it answers with what Caroline made (LoCoMo, category 5); asked where one friend is
travelling, it gives another friend's trip. A cosine or a word score ranks such a note high,
because everything but the name matches. A name is the one word a search cannot weigh enough,
and the one a question about a person cannot do without, so the test is on names alone:

a question's *names* are its capitalised words that do not open a sentence or a clause (so
"What", "Remind", "I" and "OK" are not names, nor are months, weekdays and other words of
time), with a possessive ``'s`` dropped. When a question has names and the memory knows one of
them (one of the search's candidates says it), a chosen note that says none of them but names
someone or something else (a name in its text, or the speaker it is labelled with, when that is
not just a role such as "User") is about someone else and gives way. Its place goes to the next
candidate, in rank order, that says one of the question's names, or stays empty when none does.

A note may name the person by how they are related instead ("My boss's flat in Osaka" when
another note says "my boss Siobhan"): a relation the candidates put next to an asked name ("my
boss Siobhan", "Yara, my sister", "Dmitri (my cousin)") counts as that name where a note says
"my boss" without naming someone else right after it.

A question typed in lower case ("which city is leah based in?", its first letter not a capital)
has no capitals to tell its names by. For the decision to recall (``ask_on_names``), a word of it
that the candidates say as a name (capitalised inside a sentence, or as a speaker: "Leah lives in
Leeds.") is one of its names (:func:`asked_names`); such a user writes every name the same way.
Not here: a word a note capitalises by accident ("FAFSA", the "City" of "Music City Center")
would make the notes that do not say it give way, which lost an answer's note on
``handwritten-errands``, where a false recall only costs a search.

Notes that name nothing stay ("my wifi password is..." for a question about the Wi-Fi); a
question without a name, or about a name the memory never heard ("Where is Yuki going?" with no
note saying Yuki: a misspelling, or a relation the notes use instead), changes nothing. Names
are matched as whole words, case aside. English capitalisation is the signal: a language that
capitalises every noun would need another test.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from recall_core.decoding.supersede import TEMPORAL
from recall_core.memory.text.chunking import sentences
from recall_core.types import MemoryCandidate

#: A word: letters, inner apostrophes and hyphens ("O'Neill", "Wi-Fi", "Percival's").
_WORD = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")
#: Where a clause opens inside a sentence: after a colon, a semicolon, a dash, a bracket or a quote.
_CLAUSE = re.compile(r"[:;()\[\]\"“”—–]|\s-\s")
#: A line labelled with its speaker: "Caroline: ..." (an exchange's turns are labelled so): one to
#: three capitalised words, so that "Quick question: ..." is not a speaker.
LABEL = re.compile(r"^\s*((?-i:[A-Z][\w'’-]*(?: [A-Z][\w'’-]*){0,2})):\s", re.MULTILINE)
#: Capitalised words that are not names: the pronoun, interjections, roles, titles said alone.
NOT_NAMES = frozenset(
    "i i'm i've i'd i'll ok okay hi hey oh yes no user assistant system mr mrs ms dr".split()
)
#: A relation said next to a name: a lower-case word, maybe after a word such as "best" or "older"
#: ("boss", "best friend", "father-in-law").
_RELATION = r"(?-i:(?:(?:best|older|younger|little|big|old|new|ex|late|great|step)[ -])?[a-z]+(?:-in-law)?)"
_POSSESSIVE = re.compile(r"['’]s$", re.IGNORECASE)


def _straight(text: str) -> str:
    """``text`` with the typographic apostrophe iPhones type ("I’m", "O’Neill") as the straight one:
    NOT_NAMES lists the straight forms, and a name is one name typed either way."""
    return text.replace("\u2019", "'")


def names(text: str) -> set[str]:
    """The names ``text`` says, lower-cased: capitalised words that do not open a sentence or a
    clause, less :data:`NOT_NAMES` and words of time, each without a possessive ``'s``."""
    found: set[str] = set()
    for sentence in sentences(text):
        for clause in _CLAUSE.split(LABEL.sub("", sentence)):
            for position, match in enumerate(_WORD.finditer(clause)):
                word = _POSSESSIVE.sub("", match.group())
                if position == 0 or not word[:1].isupper() or _names_time(word):
                    continue
                # a typographic apostrophe (iPhones type one) read as the straight one NOT_NAMES lists:
                # "I’m" was a name until 2026-12-07 and swapped the note that held the answer (a reviewer)
                if len(word) > 1 and _straight(word.lower()) not in NOT_NAMES:
                    found.add(_straight(word.lower()))  # "O’Neill" is "O'Neill" (a third review)
    return found


def asked_names(question: str, candidates: Sequence[MemoryCandidate]) -> set[str]:
    """The names ``question`` asks about, lower-cased: :func:`names`, and, when the question is
    typed in lower case (its first letter is not a capital), each of its words that one of
    ``candidates`` says as a name (:func:`names` of its text, or a label it is said by)."""
    asked = names(question)
    if not typed_in_lower_case(question) or not candidates:
        return asked
    words = {w for m in _WORD.finditer(question)
             if (w := _straight(_POSSESSIVE.sub("", m.group()).lower())) not in NOT_NAMES}  # fmt: skip
    named: set[str] = set()
    for candidate in candidates:
        named |= names(candidate.text) | _labels(candidate)
    return asked | (words & named)


def typed_in_lower_case(question: str) -> bool:
    """Whether ``question``'s first letter is a lower-case one (its names need not be capitalised)."""
    first = next((c for c in question if c.isalpha()), "")
    return first.islower()


def _names_time(word: str) -> bool:
    """A month, a weekday or another word of time, or its plural ("Sundays": a habit, not a name)."""
    return bool(TEMPORAL.fullmatch(word) or (word.lower().endswith("s") and TEMPORAL.fullmatch(word[:-1])))


def says(text: str, name: str, capitalised: bool = False) -> bool:
    """Whether ``text`` says ``name`` as a whole word, case aside (a possessive counts); with
    ``capitalised``, only where its first letter is a capital ("That's great!" does not say the
    "Great" of the Great Wall)."""
    text, name = _straight(text), _straight(name)  # either apostrophe says the name
    if not capitalised:
        return re.search(rf"(?<![\w'’-]){re.escape(name)}(?![\w-])", text, re.IGNORECASE) is not None
    first, rest = re.escape(name[:1].upper()), re.escape(name[1:])
    return re.search(rf"(?<![\w'’-]){first}(?i:{rest})(?![\w-])", text) is not None


def relations(text: str, name: str) -> set[str]:
    """How ``text`` says ``name`` is related to the speaker, lower-cased: "my boss Siobhan",
    "Yara, my sister" and "Dmitri (my cousin)" give "boss", "sister" and "cousin"."""
    word = re.escape(name)
    found = re.findall(rf"\bmy ({_RELATION}) {word}\b", text, re.IGNORECASE)
    # after the name, the relation is set off ("Yara, my sister, ..."): "Jon, my online store" is not one
    found += re.findall(rf"\b{word}(?:,| \() ?my ({_RELATION})(?=[,)]|$)", text, re.IGNORECASE | re.MULTILINE)
    return {relation.lower() for relation in found}


def says_relation(text: str, relation: str) -> bool:
    """Whether ``text`` says "my <relation>" and does not name someone right after it ("my boss's
    flat" does; "my friend Wren" names Wren, not the friend asked about)."""
    for match in re.finditer(rf"\bmy {re.escape(relation)}\b(['’]s)?(\s+\S+)?", text, re.IGNORECASE):
        following = (match.group(2) or "").strip()
        if match.group(1) or not following[:1].isupper():
            return True
    return False


def about_someone_else(note: MemoryCandidate, asked: set[str], related: set[str] = frozenset()) -> bool:
    """Whether ``note`` says none of the names ``asked`` (nor, for ``related``, "my <relation>"
    about them) but names someone or something else."""
    if says_any(note, asked) or any(says_relation(note.text, relation) for relation in related):
        return False
    return bool(names(note.text) | _labels(note))


def keep_named(
    chosen: Sequence[MemoryCandidate], candidates: Sequence[MemoryCandidate], question: str | None
) -> list[MemoryCandidate]:
    """``chosen`` less the notes about someone else than the question's names, each place given to
    the next of ``candidates`` (rank order) that says one of them, if any (the module's rule).

    ``question`` ``None``, without names, or with names no candidate says leaves ``chosen`` as it is.
    """
    asked = names(question or "")
    if not asked or not any(says_any(c, asked) for c in candidates):
        return list(chosen)
    related = {r for c in candidates for name in asked for r in relations(c.text, name)}
    kept = [c for c in chosen if not about_someone_else(c, asked, related)]
    if len(kept) == len(chosen):
        return kept
    ids = {c.id for c in chosen}
    spare = [c for c in candidates if c.id not in ids and says_any(c, asked)]
    return kept + spare[: len(chosen) - len(kept)]


def says_any(candidate: MemoryCandidate, asked: set[str], capitalised: bool = False) -> bool:
    """Whether ``candidate`` says one of the names ``asked`` (lower-cased): in its text as a whole
    word (with ``capitalised``, only capitalised: :func:`says`; "Ingrid keeps bees." says Ingrid),
    or as who it is labelled as said by (a word of the label: "Caroline Smith" says Caroline; until
    2026-12-07 only the whole label, and her note was dropped as someone else's, a reviewer)."""
    labels = _labels(candidate)
    return any(label in asked or not asked.isdisjoint(label.split()) for label in labels) or any(
        says(candidate.text, name, capitalised) for name in asked
    )


def _labels(candidate: MemoryCandidate) -> set[str]:
    """Who a note is labelled as said by: its speaker (not a bare role) and the labels of its lines.
    (A line's "Password: ..." counts as a label too; keeping labels to units of several turns, tried
    on 2026-12-07, lost single turns written with their speaker, "Caroline: ...", a second review.)"""
    meta = candidate.metadata or {}
    labels = {m.group(1) for m in LABEL.finditer(candidate.text)}
    speaker = meta.get("speaker")
    if isinstance(speaker, str):
        labels.add(speaker)
    return {_straight(label.strip().lower()) for label in labels if label.strip()} - NOT_NAMES

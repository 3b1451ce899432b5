"""Training examples from the conversation families: notes as the memory returns them, replies that use them.

Every family user's turns are written into a real (temporary) memory store with the writer's
settings, and every question is searched there the way a ``<recall>`` searches, so the notes a
tuned model learns from are the ones it will read: the right note or not, acknowledgements,
stale versions and near misses included. The settings of the call vary as they do in use:

* the caller's system message (one of :data:`TRAIN_SYSTEM_PROMPTS`, or none);
* a few earlier exchanges of the current session before the question;
* where the recall happens: at the start of the reply, after a few words of it (mid-answer),
  or with the notes already in the system message (``recall_policy="auto"``).

The reply is a short answer that names the note's value when a note holds the current value,
else ``"I don't know."`` (an unanswerable question, or a search that missed). Nothing here
uses an evaluation seed: families are generated with :data:`TRAIN_SEED` and up.
"""

from __future__ import annotations

import random
import re
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from recall_core.config import RecallConfig
from recall_core.decoding.abstain import ABSTENTION
from recall_core.decoding.select import choose_candidates
from recall_core.training.families import FAMILIES, base
from recall_core.types import MemoryCandidate, RecallQuery

#: Families are generated for training from this seed up (the evaluation uses other seeds).
TRAIN_SEED = 1000
#: What a tuned model says when its notes do not hold what was asked (the RAG instruction's words;
#: the decode loop reads the same text for ``RecallConfig.abstain_threshold``).
UNKNOWN_REPLY = ABSTENTION

#: Callers' system messages seen in training (``None``: the chat has none). The evaluation's
#: are written apart (benchmarks), so a figure under them is a held-out one.
TRAIN_SYSTEM_PROMPTS: tuple[str | None, ...] = (
    None,
    "You are a helpful assistant.",
    "You are a friendly companion app. Keep replies warm and short.",
    "You are Max, a personal assistant. Be concise and accurate.",
    "You help the user manage their daily life: reminders, plans and small questions.",
    "Answer in one or two sentences.",
    "You are a cheerful assistant for a language-learning app. Stay on topic and be brief.",
    "You are an AI assistant. If you are unsure, say so. Never make up personal details.",
    "You are Aria, the in-car voice assistant. Answer briefly; the user is driving.",
    "You are a support bot for a note-taking product. Be polite and to the point.",
    "Be direct. No small talk.",
    "You are a caring wellness coach. Be supportive but brief.",
)
#: A few words some replies start with before the model asks for its memory (a mid-answer recall).
LEAD_INS = ("Let me check.", "Sure!", "Good question.", "Hmm, let me see.", "Of course.", "One moment.")


@dataclass(frozen=True)
class Asked:
    """One question as training sees it: the notes a search returned and the reply to learn."""

    family: str
    user_id: str
    question: base.Question
    notes: tuple[MemoryCandidate, ...]
    reply: str
    holds: bool  # a note names the current value
    earlier: tuple[dict[str, str], ...] = field(default_factory=tuple)  # exchanges of this session before it
    small_talk: tuple[str, ...] = ()  # what this user said that states no fact (to bury a fact in: examples.in_passing)
    systems: tuple[str, ...] = ()  # the conversation's own callers' system messages (base.User.systems)
    statements: tuple[str, ...] = ()  # what this user said that states a fact (examples.in_company)
    deeper: tuple[MemoryCandidate, ...] = ()  # the search's candidates below the notes (examples.among_neighbours)


def family_users(families: Iterable[str], users: int, seed: int = TRAIN_SEED) -> dict[str, list[base.User]]:
    """``users`` users of each family, from the training seeds only."""
    out: dict[str, list[base.User]] = {}
    for name in families:
        if name not in FAMILIES:
            raise ValueError(f"family must be one of {', '.join(map(repr, FAMILIES))}, got {name!r}")
        out[name] = FAMILIES[name].generate(seed, users=users)
    return out


def memory_turns(user: base.User) -> list[dict[str, Any]]:
    """A family user's turns as the memory writer takes them (one session per dated session)."""
    return [
        {"user_id": user.user_id, "role": t.role, "content": t.content, "session_id": f"session-{t.session}",
         "timestamp": t.date, "turn_index": t.index, **({"metadata": {"speaker": t.speaker}} if t.speaker else {})}
        for t in user.turns
    ]  # fmt: skip


class Searched(NamedTuple):
    """What a search for one question returned: the notes the loop injects, and the best-ranked
    deeper candidate that names the answer when none of those does (``None`` otherwise)."""

    chosen: tuple[MemoryCandidate, ...]
    answering: MemoryCandidate | None = None
    #: The candidates of the deeper search below the chosen notes, best first (``depth``): the
    #: same user's other memories nearest the question, near misses among them.
    deeper: tuple[MemoryCandidate, ...] = ()


def retrieved(users: Mapping[str, Sequence[base.User]], config: RecallConfig, *, encoder: Any = None,
              writer_options: Mapping[str, Any] | None = None, store_options: Mapping[str, Any] | None = None,
              depth: int = 0, progress: bool = False) -> dict[str, Searched]:
    """The notes a ``<recall>`` would inject for every question, by question key.

    The users' turns go into a temporary local store (``writer_options`` for the writer,
    ``store_options`` for the store, e.g. ``unit``); each question is searched with its text
    and the candidates chosen as the loop chooses them (``config``: top_k, min_score,
    memories, deduplication). With ``depth`` above ``config.top_k``, every memory question is
    also searched ``depth`` deep: the candidates below the chosen notes are kept
    (:attr:`Searched.deeper`), and where the chosen notes miss the answer, the best-ranked deeper
    candidate that names it (:attr:`Searched.answering`), so that training can show the answer
    where the search missed it.
    """
    from recall_core.memory import MemoryStore, MemoryWriter

    out: dict[str, Searched] = {}
    with tempfile.TemporaryDirectory(prefix="recall-train-notes-") as folder:
        store = MemoryStore.local(folder, **({"encoder": encoder} if encoder is not None else {}),
                                  **dict(store_options or {}))  # fmt: skip
        try:
            writer = MemoryWriter(store, **dict(writer_options or {}))
            everyone = [u for group in users.values() for u in group]
            writer.add_turns([t for u in everyone for t in memory_turns(u)], progress=progress)
            for user in everyone:
                memory = store.for_user(user.user_id)
                for question in user.questions:
                    query = RecallQuery(text=question.text)
                    chosen, _ = choose_candidates(memory.search(query, config.top_k), config)
                    answering, below = None, ()
                    if depth > config.top_k and question.kind == "memory":
                        deeper = memory.search(query, depth)
                        seen = {c.id for c in chosen}
                        below = tuple(c for c in deeper if c.id not in seen)
                        if named_value(chosen, question) is None:
                            answering = next((c for c in deeper if named_value([c], question) is not None), None)
                    out[question.key] = Searched(tuple(chosen), answering, below)
        finally:
            store.close()
    return out


# --------------------------------------------------------------------------- replies
_NAMED = re.compile(r"\b(?:my|our) ((?:[a-z]+[ -]){0,2}[a-z]+?)(?:'s name\b| called\b| named\b| name\b)", re.I)


def named_value(notes: Sequence[MemoryCandidate], question: base.Question) -> str | None:
    """The form of the current value that the notes use (the first answer alias they name), else ``None``."""
    if question.kind != "memory":
        return None
    text = "\n".join(n.text for n in notes)
    return next((a for a in question.answers if base.names(text, a)), None)


def answer_for(question: str, value: str, rng: random.Random) -> str:
    """A short reply to ``question`` that names ``value``: a sentence when the question's shape
    allows one ("Your cat is called Brisket."), else the value itself."""
    value = value.strip()
    shown = value[:1].upper() + value[1:]
    named = _NAMED.search(question)
    lowered = question.lower()
    if named and rng.random() < 0.7:
        return f"Your {named.group(1).lower()} is called {value}."
    if re.search(r"\bwhat time\b", lowered) and rng.random() < 0.6:
        return f"At {value}."
    if re.search(r"\b(when|what date|what day|which day)\b", lowered) and rng.random() < 0.6:
        return f"On {value}."
    if re.search(r"\bwhere\b", lowered) and rng.random() < 0.5:
        return f"In {value}."
    return f"{shown}."


def asked(users: Mapping[str, Sequence[base.User]], notes: Mapping[str, Searched], rng: random.Random,
          config: RecallConfig | None = None, fill_share: float = 0.0) -> list[Asked]:
    """Every question with its notes and the reply to learn (``"I don't know."`` when no note holds the value).

    With probability ``fill_share``, a question whose search missed the answer gets the deeper
    note that names it (:attr:`Searched.answering`) in place of its last note (chosen again as
    the loop chooses, so in the loop's order, and only at or above ``min_score``, where the loop
    could inject it), and learns the answer. Without it, every search
    miss teaches "I don't know.": a third of the memory questions of the training families,
    which taught the tuned model to abstain with the answer in front of it (issue 19).
    """
    if not 0 <= fill_share <= 1:
        raise ValueError(f"fill_share must be in [0, 1], got {fill_share!r}")
    config = config or RecallConfig()
    out = []
    for family, group in users.items():
        for user in group:
            chat = chat_exchanges(user)
            small_talk = tuple(said for said, _ in chat)
            statements = tuple(t.content for t in user.turns if t.role == "user" and t.facts and not t.speaker)
            for question in user.questions:
                searched = notes.get(question.key, Searched(()))
                found = searched.chosen
                if searched.answering is not None and rng.random() < fill_share:
                    kept = list(found[: max(0, config.memories - 1)])
                    found = tuple(choose_candidates([*kept, searched.answering], config)[0]) or found
                value = named_value(found, question)
                reply = answer_for(question.text, value, rng) if value is not None else UNKNOWN_REPLY
                earlier = _earlier(chat, rng)
                out.append(Asked(family, user.user_id, question, found, reply, value is not None, earlier, small_talk,
                                 user.systems, statements, searched.deeper))  # fmt: skip
    return out


def chat_exchanges(user: base.User) -> list[tuple[str, str]]:
    """The user's exchanges that state no fact (greetings, small talk, requests): earlier turns to reuse.

    None from a conversation between named people (``Turn.speaker``): their chat is what the
    memory holds, not what the caller said to the assistant earlier in the session.
    """
    turns = user.turns
    out = []
    for first, second in zip(turns, turns[1:], strict=False):
        if first.speaker or second.speaker:
            continue
        if first.role == "user" and second.role == "assistant" and not first.facts and not first.values:
            out.append((first.content, second.content))
    return out


def chat_messages(users: Mapping[str, Sequence[base.User]], n: int, rng: random.Random) -> list[str]:
    """``n`` messages a user sends that ask nothing: one to three of one user's turns of one
    session, in order, said together (a user's turn in a chat is often several sentences, news
    and a request in one). Turns that end with ``?`` (a question may be one the memory answers)
    and turns between named people are left out. Distinct messages, deterministic for ``rng``;
    fewer than ``n`` where the users have fewer."""
    runs: list[list[str]] = []
    for family in sorted(users):
        for user in users[family]:
            sessions: dict[int, list[str]] = {}
            for turn in user.turns:
                if turn.role == "user" and not turn.speaker and not turn.content.rstrip().endswith("?"):
                    sessions.setdefault(turn.session, []).append(turn.content.strip())
            runs += [said for _, said in sorted(sessions.items())]
    pool = sorted({" ".join(said[i : i + size]) for said in runs for size in (1, 2, 3)
                   for i in range(len(said) - size + 1)})  # fmt: skip
    rng.shuffle(pool)
    return pool[:n]


def _earlier(chat: Sequence[tuple[str, str]], rng: random.Random) -> tuple[dict[str, str], ...]:
    """Zero to two exchanges of small talk before the question (half of the questions have none)."""
    if not chat or rng.random() < 0.5:
        return ()
    picked = rng.sample(list(chat), min(len(chat), rng.choice((1, 1, 2))))
    return tuple(m for user, assistant in picked
                 for m in ({"role": "user", "content": user}, {"role": "assistant", "content": assistant}))  # fmt: skip


def messages_for(item: Asked | str, system: str | None, earlier: Sequence[Mapping[str, str]] = ()) -> list[dict[str, str]]:
    """The chat of one call: the caller's system message (if any), earlier exchanges, the question."""
    text = item if isinstance(item, str) else item.question.text
    head = [{"role": "system", "content": system}] if system else []
    return [*head, *(dict(m) for m in earlier), {"role": "user", "content": text}]

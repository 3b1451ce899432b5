"""LoCoMo data for the benchmarks: conversations, turns, questions, and a fixed answer sample.

The file is read where it lies (``../shared/data/locomo_dev.json`` by default, or the full
``locomo10.json``); nothing is copied. Schema: a list of samples ``{sample_id,
conversation: {speaker_a, speaker_b, session_N_date_time, session_N: [{speaker, dia_id,
text, blip_caption?}]}, qa: [{question, answer | adversarial_answer, evidence, category}]}``.

Evidence ids are cleaned the same way for every question (split ``"D8:6; D9:17"``, repair
``"D:11:26"``, drop ids that name no turn); questions left without evidence are kept for the
answer metrics and left out of the retrieval metrics.
"""

from __future__ import annotations

import json
import random
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from recall_core.memory.text.formats import LocomoTurn, locomo_dialog

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
ANSWERABLE = (1, 2, 3, 4)
_DIA_ID = re.compile(r"D:?(\d+):(\d+)")
REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_DATA = REPO_ROOT.parent / "shared" / "data" / "locomo_dev.json"


@dataclass(frozen=True)
class DialogTurn:
    """One turn of a LoCoMo conversation."""

    sample_id: str
    dia_id: str
    session: int
    position: int
    date: str
    speaker: str
    text: str
    caption: str = ""

    def plain(self) -> str:
        """``"Speaker: text"`` plus the image caption: the text ``MemoryWriter.ingest`` stores."""
        return LocomoTurn(self.session, self.position, self.date, self.speaker, self.dia_id, self.text, self.caption).plain()


@dataclass(frozen=True)
class Question:
    """One LoCoMo question with its cleaned evidence ids."""

    sample_id: str
    index: int
    question: str
    answer: str
    category: int
    evidence: tuple[str, ...]
    adversarial_answer: str = ""

    @property
    def key(self) -> str:
        """Stable id of the question: ``"<sample_id>#<index in its qa list>"``."""
        return f"{self.sample_id}#{self.index}"


@dataclass
class Conversation:
    """One LoCoMo sample: its turns in order, and its questions."""

    sample_id: str
    speaker_a: str
    speaker_b: str
    turns: list[DialogTurn] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)

    def turn_index(self) -> dict[str, int]:
        """dia_id -> position of the turn in ``turns``."""
        return {t.dia_id: i for i, t in enumerate(self.turns)}


def resolve_data(path: str | Path | None) -> Path:
    """The data file: ``path`` as given (relative paths from the repository root first), or the default."""
    if path is None:
        return DEFAULT_DATA
    candidate = Path(path).expanduser()
    if not candidate.is_absolute() and not candidate.exists() and (REPO_ROOT / candidate).exists():
        return REPO_ROOT / candidate
    return candidate


def clean_evidence(raw: Iterable[object], known: set[str]) -> tuple[str, ...]:
    """Evidence ids that name a turn of the conversation, in order, without duplicates."""
    found: list[str] = []
    for item in raw:
        for match in _DIA_ID.finditer(str(item)):
            dia_id = f"D{match.group(1)}:{match.group(2)}"
            if dia_id in known and dia_id not in found:
                found.append(dia_id)
    return tuple(found)


def _turns(sample_id: str, conversation: dict) -> list[DialogTurn]:
    """The conversation's turns, read by the writer's own LoCoMo reader (what ``ingest`` stores)."""
    return [
        DialogTurn(
            sample_id=sample_id, dia_id=turn.dia_id, session=turn.session, position=turn.position, date=turn.date,
            speaker=turn.speaker, text=turn.text, caption=turn.caption,
        )  # fmt: skip
        for turn in locomo_dialog(conversation)
    ]


def _questions(sample_id: str, qa: Sequence[dict], known: set[str]) -> list[Question]:
    questions = []
    for index, item in enumerate(qa):
        category = int(item["category"])
        answer = item.get("answer")
        answer = "" if answer is None else str(answer)
        if category == 3:
            answer = answer.split(";")[0].strip()  # as the official evaluation does
        questions.append(
            Question(
                sample_id=sample_id, index=index, question=str(item["question"]), answer=answer,
                category=category, evidence=clean_evidence(item.get("evidence") or [], known),
                adversarial_answer=str(item.get("adversarial_answer") or ""),
            )  # fmt: skip
        )
    return questions


def load_locomo(path: str | Path, conversations: int | None = None) -> list[Conversation]:
    """Read a LoCoMo file; ``conversations`` keeps only the first N samples."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    samples = [data] if isinstance(data, dict) else list(data)
    if conversations is not None:
        samples = samples[:conversations]
    out = []
    for number, sample in enumerate(samples):
        sample_id = str(sample.get("sample_id") or f"conversation-{number}")
        conv = sample["conversation"]
        turns = _turns(sample_id, conv)
        known = {t.dia_id for t in turns}
        out.append(
            Conversation(
                sample_id=sample_id, speaker_a=str(conv.get("speaker_a") or ""),
                speaker_b=str(conv.get("speaker_b") or ""), turns=turns,
                questions=_questions(sample_id, sample.get("qa") or [], known),
            )  # fmt: skip
        )
    return out


def subset_file(path: str | Path, sample_ids: Sequence[str], target: Path) -> Path:
    """Write the samples ``sample_ids`` of ``path`` to ``target`` (a temporary file) and return it."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    samples = [data] if isinstance(data, dict) else list(data)
    keep = [s for s in samples if str(s.get("sample_id")) in set(sample_ids)]
    target.write_text(json.dumps(keep), encoding="utf-8")
    return target


def stratified_sample(questions: Sequence[Question], n: int, seed: int) -> list[Question]:
    """A fixed sample of ``n`` questions, spread over categories in proportion (at least one each).

    The shares are rounded by largest remainder; within a category the questions are drawn
    with ``random.Random(seed)``. The result is in file order (conversation, index).
    """
    if n >= len(questions):
        return list(questions)
    by_category: dict[int, list[Question]] = defaultdict(list)
    for q in questions:
        by_category[q.category].append(q)
    quotas = _quotas({c: len(v) for c, v in by_category.items()}, n)
    rng = random.Random(seed)
    chosen: list[Question] = []
    for category in sorted(by_category):
        pool = sorted(by_category[category], key=lambda q: (q.sample_id, q.index))
        chosen.extend(rng.sample(pool, quotas[category]))
    order = {q.key: i for i, q in enumerate(questions)}
    return sorted(chosen, key=lambda q: order[q.key])


def _quotas(sizes: dict[int, int], n: int) -> dict[int, int]:
    total = sum(sizes.values())
    exact = {c: n * size / total for c, size in sizes.items()}
    quotas = {c: max(1, min(sizes[c], int(v))) for c, v in exact.items()}
    by_remainder = sorted(sizes, key=lambda c: exact[c] - int(exact[c]), reverse=True)
    i = 0
    while sum(quotas.values()) < n and i < 10 * len(sizes):
        c = by_remainder[i % len(sizes)]
        if quotas[c] < sizes[c]:
            quotas[c] += 1
        i += 1
    while sum(quotas.values()) > n:
        c = max(quotas, key=lambda k: quotas[k])
        quotas[c] -= 1
    return quotas

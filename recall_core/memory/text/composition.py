"""What a memory is *searched* by, as opposed to what it returns.

A memory's ``text`` (what a search returns and recall injects) is the turn's own words. What
is embedded and word-indexed (the journal's ``context``) can say more: the day of the turn,
its speaker, and the end of the turn before it in the same session, so that a "when" question
finds it and an answer ("Yes, last Tuesday") is found by the question it answers (measured on
LoCoMo in BENCHMARKS.md).

:class:`SearchText` is the one place that composes it: the writer uses it for new turns and
for updated ones alike.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from recall_core.dates import day_label
from recall_core.memory.text.questions import ends_asking

#: Encoder tokens kept free in each chunk for the context put around it.
CONTEXT_RESERVE = 72
#: Words of the turn before that a memory repeats (its end: what the turn answers).
WINDOW_WORDS = 40


def speaker_of(role: str, extra: Mapping[str, Any]) -> str:
    """``metadata["speaker"]`` if the turn has one, else its role (``"User"``)."""
    speaker = extra.get("speaker")
    return str(speaker) if isinstance(speaker, str) and speaker.strip() else role.capitalize()


#: When a memory is searched with the end of the turn before it (see :class:`SearchText`).
WINDOWS = ("questions", "always", "never")


def check_window(window: object) -> str:
    """``window`` as one of :data:`WINDOWS` (``True`` is ``"always"``, ``False`` ``"never"``), else ``ValueError``."""
    if window is True:
        return "always"
    if window is False:
        return "never"
    if window not in WINDOWS:
        raise ValueError(f"window must be one of {', '.join(map(repr, WINDOWS))} (or a bool), got {window!r}")
    return str(window)


@dataclass(frozen=True)
class SearchText:
    """How memories are searched: ``[day] Speaker before: ...`` / ``Speaker: chunk``.

    Args:
        dated: put the day of the turn in front, ``"[8 May 2023] "``.
        window: when to put the end of the turn before (same session) on the line above:
            ``"questions"`` only when that turn asks something (it ends with a question mark:
            :func:`~recall_core.memory.text.questions.ends_asking`), so that an
            answer ("Yes, a beagle called Biscuit.") is found by the question it answers;
            ``"always"``; or ``"never"``. Not always by default: with the turn before on every
            memory, an assistant's "Noted!" was found by the user's fact it followed and
            outranked the fact itself, whose own search text was diluted by the unrelated turn
            before *it* (BENCHMARKS.md).
        speakers: begin each line with its speaker.
    """

    dated: bool = True
    window: str = "questions"
    speakers: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "window", check_window(self.window))

    @property
    def adds_context(self) -> bool:
        """Whether anything is searched besides the memory's own words."""
        return self.dated or self.window != "never" or self.speakers

    def uses(self, before: tuple[str, str] | None) -> bool:
        """Whether a memory is searched with ``before``, the ``(speaker, words)`` of the turn before it."""
        if before is None or self.window == "never":
            return False
        return self.window == "always" or ends_asking(before[1])

    def compose(
        self,
        chunks: Sequence[str],
        timestamp: str,
        role: str,
        extra: Mapping[str, Any],
        before: tuple[str, str] | None,
    ) -> list[str]:
        """What each chunk of one turn is searched by.

        ``before`` is ``(speaker, words)`` of the turn before in the same session (``None``:
        none, or ``window`` is off); only the first chunk repeats it.
        """
        head = f"[{day_label(timestamp)}] " if self.dated else ""
        speaker = speaker_of(role, extra) if self.speakers else None
        texts = []
        for chunk_index, chunk in enumerate(chunks):
            line = f"{speaker}: {chunk}" if speaker and not chunk.startswith(f"{speaker}:") else chunk
            if chunk_index == 0 and self.uses(before):
                assert before is not None
                words = before[1].split()
                tail = " ".join(words[-WINDOW_WORDS:])
                tail = tail if len(words) <= WINDOW_WORDS else "... " + tail
                labelled = self.speakers and not tail.startswith(f"{before[0]}:")
                line = (f"{before[0]}: {tail}" if labelled else tail) + "\n" + line
            texts.append(head + line)
        return texts

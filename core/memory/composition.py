"""What a memory is *searched* by, as opposed to what it returns.

A memory's ``text`` (what a search returns and recall injects) is the turn's own words. What
is embedded and word-indexed (the journal's ``context``) can say more: the day of the turn,
its speaker, and the end of the turn before it in the same session, so that a "when" question
finds it and an answer ("Yes, last Tuesday") is found by the question it answers. On the
LoCoMo dev file this lifted hybrid hit@5 from 0.646 to 0.680 (BENCHMARKS.md).

:class:`SearchText` is the one place that composes it: the writer uses it for new turns and
for updated ones alike.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..dates import day_label

#: Encoder tokens kept free in each chunk for the context put around it.
CONTEXT_RESERVE = 72
#: Words of the turn before that a memory repeats (its end: what the turn answers).
WINDOW_WORDS = 40


def speaker_of(role: str, extra: Mapping[str, Any]) -> str:
    """``metadata["speaker"]`` if the turn has one, else its role (``"User"``)."""
    speaker = extra.get("speaker")
    return str(speaker) if isinstance(speaker, str) and speaker.strip() else role.capitalize()


@dataclass(frozen=True)
class SearchText:
    """How memories are searched: ``[day] Speaker before: ...`` / ``Speaker: chunk``.

    Args:
        dated: put the day of the turn in front, ``"[8 May 2023] "``.
        window: put the end of the turn before (same session) on the line above.
        speakers: begin each line with its speaker.
    """

    dated: bool = True
    window: bool = True
    speakers: bool = True

    @property
    def adds_context(self) -> bool:
        """Whether anything is searched besides the memory's own words."""
        return self.dated or self.window or self.speakers

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
            if self.window and before is not None and chunk_index == 0:
                words = before[1].split()
                tail = " ".join(words[-WINDOW_WORDS:])
                tail = tail if len(words) <= WINDOW_WORDS else "... " + tail
                labelled = self.speakers and not tail.startswith(f"{before[0]}:")
                line = (f"{before[0]}: {tail}" if labelled else tail) + "\n" + line
            texts.append(head + line)
        return texts

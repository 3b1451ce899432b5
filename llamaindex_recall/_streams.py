"""A LlamaIndex response per piece of a recall stream, and what is written when the stream ends.

``finish`` writes the exchange when the stream ends; ``unfinished`` writes the user's turn when
it is left early (the consumer breaks, the generator is closed, the task is cancelled) or fails
midway: :meth:`~llamaindex_recall.RecallLLM.stream_chat` and the other streams of the adapter.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator
from typing import TypeVar

from recall_core import AsyncRecallStream, RecallResult, RecallStream
from recall_core.integration import stop_stream, unanswered

__all__ = ["achunks", "chunks"]

_Response = TypeVar("_Response")
#: Builds a stream's response from the text so far and the new piece (and, at the end, the result).
_ChunkBuilder = Callable[[str, str, RecallResult | None], _Response]


def chunks(
    stream: RecallStream, chunk: _ChunkBuilder[_Response], finish: Callable[[RecallResult], None] | None = None,
    unfinished: Callable[[], None] | None = None,
) -> Iterator[_Response]:
    """One response per piece of ``stream`` (text so far, piece), then the last (text, ``""``, result);
    ``finish`` is called with the result before the last one (the reply is written to memory there),
    ``unfinished`` when the stream is left early or fails midway (the user's turn is written there)."""
    text = ""
    try:
        for piece in stream:
            text += piece
            yield chunk(text, piece, None)
    except BaseException as error:
        if unfinished is not None and unanswered(error):
            stop_stream(stream)
            unfinished()
        raise
    assert stream.result is not None
    if finish is not None:
        finish(stream.result)
    yield chunk(text, "", stream.result)


async def achunks(
    stream: AsyncRecallStream, chunk: _ChunkBuilder[_Response], finish: Callable[[RecallResult], None] | None = None,
    unfinished: Callable[[], None] | None = None,
) -> AsyncIterator[_Response]:
    """:func:`chunks` for an :class:`~recall_core.AsyncRecallStream` (``finish`` and ``unfinished`` run
    in a worker thread; ``unfinished`` also when the consuming task is cancelled)."""
    text = ""
    try:
        async for piece in stream:
            text += piece
            yield chunk(text, piece, None)
    except BaseException as error:
        if unfinished is not None and unanswered(error):
            stop_stream(stream)
            await asyncio.to_thread(unfinished)
        raise
    assert stream.result is not None
    if finish is not None:
        await asyncio.to_thread(finish, stream.result)
    yield chunk(text, "", stream.result)

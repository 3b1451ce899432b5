"""Streaming one generation as text pieces: a worker thread decodes, the caller iterates.

:class:`RecallStream` is iterated with ``for``, :class:`AsyncRecallStream` with ``async for``.
Both run ``RecallGenerator.generate`` in ONE worker thread (in a copy of the caller's
context variables), finish the text the way ``generate`` does (stop strings cut, literal
``<recall>`` markers dropped), raise the worker's exception in the consumer, and stop the
generation at the next token when the consumer stops early. After the last piece,
``result`` holds the :class:`~recall_core.RecallResult`.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any

import torch
from transformers import StoppingCriteria, TextIteratorStreamer

from recall_core.reply import TextFinisher
from recall_core.types import RecallResult

#: What a stream runs: ``run(prompt, streamer=..., **kwargs) -> RecallResult`` (``RecallGenerator.generate``,
#: ``RecallSession.reply``, or an adapter's own runner).
Runner = Callable[..., RecallResult]


class TokenTextStreamer(TextIteratorStreamer):
    """A ``TextIteratorStreamer`` that hands over text at every token, not at every word.

    transformers' streamers wait for a space before showing a word; callbacks that expect
    every token (LangChain's ``on_llm_new_token``) get each token's text here. Text is held
    back only while it ends in an incomplete multi-byte character. ``keep_ids`` are special
    tokens shown anyway (a tool-call marker such as Mistral's ``[TOOL_CALLS]``).
    """

    def __init__(self, tokenizer: Any, skip_prompt: bool = False, keep_ids: frozenset[int] = frozenset(), **decode_kwargs: Any) -> None:
        super().__init__(tokenizer, skip_prompt=skip_prompt, **decode_kwargs)
        self.keep_ids = keep_ids
        if keep_ids and self.decode_kwargs.get("skip_special_tokens"):
            self.decode_kwargs["skip_special_tokens"] = False  # the others are dropped in put()
            from recall_core.structured.tools import special_ids

            self.dropped = special_ids(tokenizer) - keep_ids
        else:
            self.dropped = frozenset()

    def put(self, value: torch.Tensor) -> None:
        if value.dim() > 1:
            value = value[0]
        if self.skip_prompt and self.next_tokens_are_prompt:
            self.next_tokens_are_prompt = False
            return
        self.token_cache.extend(i for i in value.tolist() if i not in self.dropped)
        text = self.tokenizer.decode(self.token_cache, **self.decode_kwargs)
        if text.endswith("\ufffd") or len(text) <= self.print_len:
            return
        printable = text[self.print_len :]
        if text.endswith("\n"):
            self.token_cache, self.print_len = [], 0
        else:
            self.print_len = len(text)
        self.on_finalized_text(printable)


class _Stream:
    """What both streams share: the worker thread, the finishing of the text, cancelling."""

    def __init__(self, run: Runner, tokenizer: Any, prompt: Any, kwargs: dict[str, Any], stops: Sequence[str]) -> None:
        """Stream ``run(prompt, streamer=..., **kwargs)``; ``tokenizer`` decodes the pieces. ``stops``: every
        stop string the run cuts at (``RecallGenerator.call_stop_strings``: the generator's defaults too)."""
        if "streamer" in kwargs:
            raise TypeError("a stream makes its own streamer; use generate(streamer=...) to pass one")
        self.result: RecallResult | None = None
        self._error: BaseException | None = None
        self._finisher = TextFinisher(list(stops))
        self._cancel = threading.Event()
        self._tokenizer, self._prompt, self._run = tokenizer, prompt, run
        self._keep_ids = _marker_ids(tokenizer, kwargs)
        self._kwargs = {**kwargs, "stopping_criteria": [*(kwargs.get("stopping_criteria") or []), _Cancelled(self._cancel)]}
        self._thread: threading.Thread | None = None

    def _start(self, streamer: TokenTextStreamer) -> None:
        if self._thread is not None:
            raise RuntimeError(f"a {type(self).__name__} can be iterated once")
        context = contextvars.copy_context()
        self._thread = threading.Thread(target=context.run, args=(self._work, streamer), name="recall-stream", daemon=True)
        self._thread.start()

    def _work(self, streamer: TokenTextStreamer) -> None:
        try:
            self.result = self._run(self._prompt, streamer=streamer, **self._kwargs)
        except BaseException as error:  # handed to the consumer
            self._error = error
        finally:
            self._ended(streamer)

    def _ended(self, streamer: TokenTextStreamer) -> None:
        """Tell the consumer that the worker is done (``result`` or the error is set)."""
        raise NotImplementedError

    def _tail(self) -> str:
        """After the last piece: raise the worker's error, or return the text held back."""
        if self._error is not None:
            raise self._error
        return self._finisher.finish()

    def _running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()


class RecallStream(_Stream):
    """An iterator of text pieces from one generation; ``result`` is set when it ends.

    Pieces come token by token (held back only while a multi-byte character or a possible
    stop string is incomplete). Stopping early (``close()``, or leaving a ``for`` loop)
    ends the generation too.
    """

    def __iter__(self) -> Iterator[str]:
        streamer = TokenTextStreamer(
            self._tokenizer, skip_prompt=True, keep_ids=self._keep_ids, skip_special_tokens=True
        )
        self._start(streamer)
        try:
            for piece in streamer:  # ends at the streamer's stop signal
                shown = self._finisher.feed(piece)
                if shown:
                    yield shown
            self._thread.join()  # type: ignore[union-attr]  # the result is set just after
            tail = self._tail()
            if tail:
                yield tail
        finally:
            if self._running():  # the consumer stopped early
                self.close()

    def _ended(self, streamer: TokenTextStreamer) -> None:
        if self._error is not None:  # generate() did not get to end the streamer itself
            streamer.end()

    def close(self) -> None:
        """Stop generating (at the next token) and wait for the generation thread to end."""
        self._cancel.set()
        if self._running():  # its queue is unbounded: the thread never waits on us
            self._thread.join()  # type: ignore[union-attr]


class AsyncRecallStream(_Stream):
    """An async iterator of text pieces from one generation; ``result`` is set when it ends.

    The worker thread hands each piece to the event loop (``call_soon_threadsafe``), so
    awaiting the next piece never blocks the loop. Leaving the ``async for`` early stops the
    generation at the next token without waiting for it.
    """

    _DONE: Any = object()

    def __aiter__(self) -> AsyncIterator[str]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[str]:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[Any] = asyncio.Queue()

        def hand_over(item: Any) -> None:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, item)
            except RuntimeError:  # the loop was closed while generating: nobody is listening
                pass

        self._start(_HandOverStreamer(hand_over, self._tokenizer, skip_prompt=True,
                                      keep_ids=self._keep_ids, skip_special_tokens=True))  # fmt: skip
        try:
            while (piece := await queue.get()) is not self._DONE:
                shown = self._finisher.feed(piece)
                if shown:
                    yield shown
            tail = self._tail()
            if tail:
                yield tail
        finally:
            self._cancel.set()  # a no-op when the worker is done; else it stops at the next token

    def _ended(self, streamer: _HandOverStreamer) -> None:  # type: ignore[override]
        streamer.hand_over(self._DONE)


class _HandOverStreamer(TokenTextStreamer):
    """Gives each piece to ``hand_over`` (the end is signalled by the stream's worker, after the result)."""

    def __init__(self, hand_over: Callable[[Any], None], tokenizer: Any, **kwargs: Any) -> None:
        super().__init__(tokenizer, **kwargs)
        self.hand_over = hand_over

    def on_finalized_text(self, text: str, stream_end: bool = False) -> None:
        if text:
            self.hand_over(text)


def _marker_ids(tokenizer: Any, kwargs: dict[str, Any]) -> frozenset[int]:
    """With tools, the ids of the tool-call markers of the template's family (kept in the text)."""
    if not kwargs.get("tools"):
        return frozenset()
    from recall_core.structured.tools import tool_format

    vocab = tokenizer.get_vocab()
    return frozenset(vocab[token] for token in tool_format(tokenizer).marker_tokens() if token in vocab)


class _Cancelled(StoppingCriteria):
    def __init__(self, event: threading.Event) -> None:
        self.event = event

    def __call__(self, input_ids: torch.LongTensor, scores: Any, **kwargs: Any) -> torch.BoolTensor:
        return torch.full((input_ids.shape[0],), self.event.is_set(), dtype=torch.bool, device=input_ids.device)

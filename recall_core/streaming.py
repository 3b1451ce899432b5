"""Streaming one generation as text pieces: a worker thread decodes, the caller iterates.

:class:`RecallStream` is iterated with ``for``, :class:`AsyncRecallStream` with ``async for``.
Both run ``RecallGenerator.generate`` in ONE worker thread (in a copy of the caller's
context variables), finish the text the way ``generate`` does (stop strings cut, literal
``<recall>`` markers dropped), raise the worker's exception in the consumer, and stop the
generation at the next token when the consumer stops early (the result's ``finish_reason`` is
then ``"cancelled"``). After the last piece, ``result`` holds the :class:`~recall_core.RecallResult`.

A stream's streamer carries a :class:`Handover` (``streamer.handover``): how many generated ids
the consumer was handed the text of, and whether it stopped early. A runner that keeps the reply
(:class:`~recall_core.RecallSession`) keeps only those ids of an abandoned stream, so the next
turn goes on from the reply as the consumer saw it.
"""

from __future__ import annotations

import asyncio
import bisect
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
        self.handover = Handover()  # a stream replaces it with its own
        self.ids_put = 0  # generated ids put so far (the prompt's are not counted)
        self.shown_chars = 0  # characters of text handed on so far
        # (characters handed on, ids put) at each piece: which ids a text of so many characters stands for
        self.marks: list[tuple[int, int]] = [(0, 0)]
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
        self.ids_put += value.numel()
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

    def retract(self, ids: int) -> None:
        """The last ``ids`` put are gone from the sequence (a ``<recall>`` the loop wrote and took
        back, having found nothing): they stand for no text. Until 2026-12-07 a session kept one
        reply id more than its stream's consumer was handed per marker taken back (a reviewer)."""
        self.ids_put -= ids
        self.marks = [(chars, min(put, self.ids_put)) for chars, put in self.marks]

    def on_finalized_text(self, text: str, stream_end: bool = False) -> None:
        self._mark(text)
        super().on_finalized_text(text, stream_end)

    def _mark(self, text: str) -> None:
        """Record that the text handed on so far (now with ``text``) stands for every id put so far."""
        if text:
            self.shown_chars += len(text)
            self.marks.append((self.shown_chars, self.ids_put))

    def ids_for(self, chars: int) -> int:
        """How many generated ids the first ``chars`` characters handed on stand for (whole pieces only)."""
        # (the worker only appends, in order: the marks a consumer's text stands on are there already)
        return self.marks[bisect.bisect_right(self.marks, (chars, float("inf"))) - 1][1]


class Handover:
    """What the consumer of a stream was handed: ``ids``, the generated ids whose text it got, and
    ``cancel``, set when it stopped before the end (a :class:`CancelCriteria` on it stops the generation).
    Before 2026-12-06 a session kept the whole reply of an abandoned stream, text the consumer never got."""

    def __init__(self, cancel: threading.Event | None = None) -> None:
        self.cancel = cancel if cancel is not None else threading.Event()
        self.ids = 0

    @property
    def abandoned(self) -> bool:
        """Whether the consumer stopped before the end."""
        return self.cancel.is_set()


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
        self.handover = Handover()
        self._cancel = self.handover.cancel
        self._fed = 0  # characters the streamer handed to the consumer's side (before the finisher)
        self._tokenizer, self._prompt, self._run = tokenizer, prompt, run
        self._keep_ids = _marker_ids(tokenizer, kwargs)
        # With tools, a call's markup is held back: the pieces join to the result's text (before
        # 2026-12-07 they held the markup, and only the adapters held it back: a reviewer)
        self._splitter = _call_splitter(tokenizer, kwargs)
        self._kwargs = {**kwargs, "stopping_criteria": [*(kwargs.get("stopping_criteria") or []), CancelCriteria(self._cancel)]}
        self._thread: threading.Thread | None = None

    def _start(self, streamer: TokenTextStreamer) -> None:
        if self._thread is not None:
            raise RuntimeError(f"a {type(self).__name__} can be iterated once")
        streamer.handover = self.handover
        self._streamer = streamer
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

    def _shown(self, piece: str) -> str:
        """The part of the worker's ``piece`` the consumer is handed now (the finisher may hold some back),
        and how many generated ids what it has been handed stands for."""
        shown = self._finisher.feed(piece)
        self._fed += len(piece)
        held = len(self._finisher.buffer)
        if self._splitter is not None:
            shown = self._splitter.feed(shown)
            held += len(self._splitter.text) - self._splitter.shown
        self.handover.ids = self._streamer.ids_for(self._fed - held)
        return shown

    def _tail(self) -> str:
        """After the last piece: raise the worker's error, or return the text held back."""
        if self._error is not None:
            raise self._error
        tail = self._finisher.finish()
        if self._splitter is not None:
            tail = self._splitter.feed(tail) + self._splitter.finish()[0]
        return tail

    def _running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def cancel(self) -> None:
        """Stop generating at the next token, without waiting (the consumer stopped early: ``result``
        says ``finish_reason="cancelled"``). Safe from any thread, and a no-op once the worker is done."""
        self._cancel.set()


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
                shown = self._shown(piece)
                if shown:
                    yield shown
            self._thread.join()  # type: ignore[union-attr]  # the result is set just after
            tail = self._tail()
            if tail:
                self.handover.ids = self._streamer.ids_put
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
                shown = self._shown(piece)
                if shown:
                    yield shown
            tail = self._tail()
            if tail:
                self.handover.ids = self._streamer.ids_put
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
        self._mark(text)
        if text:
            self.hand_over(text)


def _call_splitter(tokenizer: Any, kwargs: dict[str, Any]) -> Any:
    """With tools, the splitter that holds a call's markup back from the pieces (the calls come with
    the result), as the engine reads calls; else ``None``."""
    if not kwargs.get("tools"):
        return None
    from recall_core.structured.tools import call_splitter

    return call_splitter(tokenizer, kwargs.get("tools"), kwargs.get("tool_choice"))


def _marker_ids(tokenizer: Any, kwargs: dict[str, Any]) -> frozenset[int]:
    """With tools, the ids of the tool-call markers of the template's family (kept in the text)."""
    if not kwargs.get("tools"):
        return frozenset()
    from recall_core.structured.tools import tool_format

    vocab = tokenizer.get_vocab()
    return frozenset(vocab[token] for token in tool_format(tokenizer).marker_tokens() if token in vocab)


class CancelCriteria(StoppingCriteria):
    """Stops the generation at the next token once ``event`` is set, and records that it did (``fired``):
    the result's ``finish_reason`` is then ``"cancelled"`` (:meth:`~recall_core.RecallGenerator.generate_ids`)."""

    def __init__(self, event: threading.Event) -> None:
        self.event = event
        self.fired = False

    def __call__(self, input_ids: torch.LongTensor, scores: Any, **kwargs: Any) -> torch.BoolTensor:
        stop = self.event.is_set()
        self.fired = self.fired or stop
        return torch.full((input_ids.shape[0],), stop, dtype=torch.bool, device=input_ids.device)


def was_cancelled(criteria: Sequence[Any] | None) -> bool:
    """Whether a :class:`CancelCriteria` among ``criteria`` stopped the generation."""
    return any(isinstance(c, CancelCriteria) and c.fired for c in criteria or ())

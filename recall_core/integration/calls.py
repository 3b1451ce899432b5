"""One framework call's life: resolved into a :class:`PreparedCall`, made cancellable, stopped
when its stream is left or its task cancelled, and its results as plain dicts."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any, TypeVar

from recall_core.config import RecallConfig
from recall_core.session.writes import CallReceipt
from recall_core.streaming import CancelCriteria
from recall_core.types import RecallResult


@dataclass
class PreparedCall:
    """Everything one engine call needs, resolved from the instance and the call's kwargs."""

    kwargs: dict[str, Any]
    user_id: str | None
    session_id: str | None
    config: RecallConfig
    thread_id: str | None = None
    #: The call's ``write_memory=`` (``None``: the instance decides).
    write_memory: bool | None = None
    #: Whether the call brought its own ``memory=``: its KV session key (user, thread) cannot say whose
    #: memory that is, so it gets no session (:meth:`RecallAdapterBase._pool_for`).
    own_memory: bool = False
    #: The call's own messages in its session (filled by the session), the ones marked written.
    receipt: CallReceipt = field(default_factory=CallReceipt)
    #: Where the adapter writes this call's turns, in the adapter's own terms (LlamaIndex's ``RecallLLM``:
    #: its write target); the call's session is told it before the reply (:meth:`RecallAdapterBase._session_for`).
    write_target: Any = None

    @property
    def session_key(self) -> tuple[str | None, str | None]:
        """Which KV session the call continues: one per (user, thread)."""
        return self.user_id, self.thread_id

    def cancellable(self) -> tuple[PreparedCall, threading.Event]:
        """This call with a stop event: setting it stops the generation at the next token
        (``finish_reason="cancelled"``), as leaving a stream early does (:func:`run_cancellable`)."""
        kwargs, event = cancellable_kwargs(self.kwargs)
        return replace(self, kwargs=kwargs), event


def cancellable_kwargs(kwargs: Mapping[str, Any]) -> tuple[dict[str, Any], threading.Event]:
    """A call's ``generate()`` arguments with a stop event: setting it stops the generation at the
    next token (a :class:`~recall_core.streaming.CancelCriteria` among its ``stopping_criteria``)."""
    event = threading.Event()
    return {**kwargs, "stopping_criteria": [*(kwargs.get("stopping_criteria") or []), CancelCriteria(event)]}, event


def unanswered(error: BaseException, streamed: bool = True) -> bool:
    """Whether a call that raised ``error`` leaves a user's turn without its reply, to be written alone:
    a stream left early (``GeneratorExit``), a cancelled call, a stream failing midway (not a call
    refused for its input, ``ValueError`` / ``TypeError``, nor a plain call's error: nothing was shown)."""
    if isinstance(error, (GeneratorExit, asyncio.CancelledError)):
        return True
    return streamed and isinstance(error, Exception) and not isinstance(error, (ValueError, TypeError))


def stop_stream(stream: Any) -> None:
    """Stop the generation of a stream left early at its next token, before the
    adapter writes the user's turn: the session then keeps only what was handed on (a stream's own
    ``finally`` may run later, when its iterator is collected)."""
    cancel = getattr(getattr(stream, "stream", stream), "cancel", None)
    if callable(cancel):
        cancel()


_Result = TypeVar("_Result")


async def run_cancellable(cancel: threading.Event, work: Callable[..., _Result], *args: Any) -> _Result:
    """``await asyncio.to_thread(work, *args)`` that a cancelled task stops: ``cancel`` is set (the
    generation stops at its next token) and the thread is waited for, so that nothing runs on
    after the ``CancelledError``. Before 2026-12-06 a cancelled ``ainvoke`` / ``achat`` went on
    generating to the end in its thread, and its session kept the whole reply."""
    task = asyncio.ensure_future(asyncio.to_thread(work, *args))
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        cancel.set()
        # The token being generated takes milliseconds; a call still waiting for its session (another
        # call generating) is not waited for: it finds ``cancel`` set and returns at its first token.
        await asyncio.wait([task], timeout=CANCEL_WAIT_S)
        if task.done() and not task.cancelled():
            task.exception()  # retrieved: the cancellation is what the caller sees
        else:
            task.add_done_callback(lambda done: done.cancelled() or done.exception())
        raise


def remember_later(work: Callable[..., Any], *args: Any) -> None:
    """Run ``work(*args)`` (writing a cancelled call's user turn) in a worker thread without waiting
    for it: marking the turn written waits for the call's session, which a call queued before this
    one may hold for its whole generation, and the ``CancelledError`` must not wait for that. A
    failure to write warns (``work``'s own doing); ``asyncio.run`` waits for it before returning."""
    asyncio.get_running_loop().run_in_executor(None, work, *args)


#: Seconds a cancelled call waits for its thread to stop (the token in progress) before the
#: ``CancelledError`` reaches the caller (a review measured 3.1 s for a call queued behind another).
CANCEL_WAIT_S = 0.5


def recall_dicts(result: RecallResult) -> list[dict[str, Any]]:
    """The recall trace as plain dicts (JSON-friendly), with ``injected`` spelled out."""
    out = []
    for recall in result.recalls:
        item = asdict(recall)
        item["candidates"] = [list(c) for c in recall.candidates]
        item["memories"] = [list(m) for m in recall.memories]
        item["injected"] = recall.injected
        out.append(item)
    return out


def usage_dict(result: RecallResult) -> dict[str, int]:
    """One call's usage in the names token counters read (OpenAI's). ``prompt_tokens`` is every token
    the model read before its reply: the prompt's and the injected memory's, as LangChain's
    ``input_tokens`` (a RAG recipe's retrieved text is prompt too, so the counts compare);
    ``injected_tokens`` says how many of them were memory, ``cached_tokens`` how many a session read
    from its cache. Until 2026-12-07 ``prompt_tokens`` left the memory out, and LlamaIndex's
    ``TokenCountingHandler`` counted 45 of the 189 tokens a call read. ``completion_tokens`` (the same
    as ``generated_tokens``) is the name counters read (LlamaIndex's estimated the count with tiktoken
    without it). :attr:`RecallResult.usage` keeps the prompt apart (``Usage.prompt_tokens``)."""
    usage = result.usage
    return {
        "prompt_tokens": usage.prompt_tokens + usage.injected_tokens,
        "injected_tokens": usage.injected_tokens,
        "cached_tokens": usage.cached_tokens,
        "generated_tokens": usage.generated_tokens,
        "completion_tokens": usage.generated_tokens,
        "total_tokens": usage.total_tokens,
    }

"""`RecallLLM`: a LangChain text-completion LLM (``BaseLLM``) over the recall engine."""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Iterator
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseLLM
from langchain_core.language_models.base import LangSmithParams
from langchain_core.outputs import Generation, GenerationChunk, LLMResult

from recall_core import RecallResult
from recall_core.integration import PreparedCall, cancellable_kwargs, mark_for_recall, run_cancellable

from ._common import (
    MODEL_CONFIG,
    RecallSettings,
    astream_chunks,
    astreamed_result,
    result_metadata,
    stream_chunks,
    streamed_result,
    token_usage,
)


def _text_chunk(piece: str) -> GenerationChunk:
    return GenerationChunk(text=piece)


class RecallLLM(RecallSettings, BaseLLM):
    """A local Hugging Face causal LM with long-term memory recalled *inside* generation.

    Prompts are strings (LangChain renders chat prompt values as text for ``BaseLLM``).
    With ``recall="auto"`` (the default) a ``<recall>`` marker is appended to the prompt,
    so the loop consults the memory right before the answer; ``"explicit"`` leaves the
    marker to the prompt, and ``"off"`` recalls nothing, even at a marker (``recall=``, at init
    or per call, is short for ``recall_config``'s ``recall_policy`` and is folded into it). The output is only the new text: the prompt is never echoed,
    and ``stop`` strings end generation and are cut, in ``invoke`` and ``stream`` alike.

    Example::

        from langchain_recall import RecallLLM
        from recall_core.memory import MemoryStore

        llm = RecallLLM(store=MemoryStore.local(), user_id="ada", use_chat_template=True, max_tokens=64)
        llm.invoke("What is my dog called?")

    Each generation's ``generation_info`` holds ``finish_reason``, ``usage`` (prompt,
    injected and generated tokens) and ``recalls`` (the trace: position, memory id, score,
    text, or why nothing was injected); ``llm_output["token_usage"]`` sums the usage.

    Per-call keyword arguments: any transformers ``generate()`` option (``max_tokens``,
    ``temperature``, ``top_p``...), plus ``user_id``, ``memory``, ``recall``,
    ``recall_config``, ``timeout``, ``on_recall``. Unknown names raise ``TypeError``.
    """

    model_config = MODEL_CONFIG

    use_chat_template: bool = False
    """Send each prompt as one user turn through the tokenizer's chat template (good for
    instruct models) instead of as raw text."""

    @property
    def _llm_type(self) -> str:
        return "recall"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {**self._common_identifying_params(), "use_chat_template": self.use_chat_template}

    def _get_ls_params(self, stop: list[str] | None = None, **kwargs: Any) -> LangSmithParams:
        return self._recall_ls_params("llm", stop, kwargs)

    # ------------------------------------------------------------------ prompt
    def _engine_prompt(self, prompt: str, call: PreparedCall) -> str | list[dict[str, str]]:
        if self.use_chat_template:
            return [{"role": "user", "content": prompt}]  # the engine applies the recall policy
        return mark_for_recall(prompt, call.config)

    def _generation(self, result: RecallResult) -> Generation:
        return Generation(text=result.text, generation_info=result_metadata(result, self.resolved_model_name))

    def _llm_result(self, results: list[RecallResult]) -> LLMResult:
        return LLMResult(
            generations=[[self._generation(result)] for result in results],
            llm_output={"token_usage": token_usage(results), "model_name": self.resolved_model_name},
        )

    def _last_chunk(self, result: RecallResult) -> GenerationChunk:
        return GenerationChunk(text="", generation_info=result_metadata(result, self.resolved_model_name))

    # ------------------------------------------------------------------ sync
    def _generate(
        self,
        prompts: list[str],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> LLMResult:
        call = self._prepare(stop, kwargs)
        results: list[RecallResult] = []
        for prompt in prompts:  # one engine call per prompt: each row gets its own recalls
            if self.streaming:
                stream = self.engine.stream(self._engine_prompt(prompt, call), **call.kwargs)
                results.append(streamed_result(stream, _text_chunk, run_manager))
            else:
                results.append(self.engine.generate(self._engine_prompt(prompt, call), **call.kwargs))
        return self._llm_result(results)

    def _stream(
        self,
        prompt: str,
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[GenerationChunk]:
        call = self._prepare(stop, kwargs)
        stream = self.engine.stream(self._engine_prompt(prompt, call), **call.kwargs)
        yield from stream_chunks(stream, _text_chunk, run_manager)
        assert stream.result is not None
        yield self._last_chunk(stream.result)

    # ------------------------------------------------------------------ async
    async def _agenerate(
        self,
        prompts: list[str],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> LLMResult:
        call = self._prepare(stop, kwargs)
        results: list[RecallResult] = []
        for prompt in prompts:
            engine_prompt = self._engine_prompt(prompt, call)
            if self.streaming:
                stream = self.engine.astream(engine_prompt, **call.kwargs)
                results.append(await astreamed_result(stream, _text_chunk, run_manager))
            else:  # a cancelled call stops generating at the next token (before 2026-12-06 it went on to the end)
                kwargs, cancel = cancellable_kwargs(call.kwargs)
                results.append(await run_cancellable(cancel, functools.partial(self.engine.generate, engine_prompt, **kwargs)))
        return self._llm_result(results)

    async def _astream(
        self,
        prompt: str,
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[GenerationChunk]:
        call = self._prepare(stop, kwargs)
        stream = self.engine.astream(self._engine_prompt(prompt, call), **call.kwargs)
        async for chunk in astream_chunks(stream, _text_chunk, run_manager):
            yield chunk
        assert stream.result is not None
        yield self._last_chunk(stream.result)

"""Forced tool calls on any chat template: structured prediction and ``predict_and_call`` of :class:`~llamaindex_recall.RecallLLM`.

``metadata.is_function_calling_model`` says whether the chat template renders tools, so that
LlamaIndex's agents pick ReAct where the model cannot choose a call. A *forced* call (a named
``tool_choice``, ``"any"``, ``tool_required=True``) is enforced by constrained decoding on any
template (the tools are then described in the system message), so structured prediction and a
forced ``predict_and_call`` keep the function-calling path where LlamaIndex would otherwise parse
free text or run a ReAct agent. A mixin of ``RecallLLM``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llama_index.core.base.llms.types import ChatResponse
from llama_index.core.program.function_program import FunctionCallingProgram, get_function_tool
from llama_index.core.types import PydanticProgramMode

__all__ = ["ForcedCalls", "forced"]


def forced(kwargs: dict[str, Any]) -> bool:
    """Whether a ``chat_with_tools`` call forces a call (``tool_required``, a tool's name, ``"any"`` / ``"required"``)."""
    choice = kwargs.get("tool_choice")
    return bool(kwargs.get("tool_required")) or (choice is not None and choice not in ("auto", "none"))


class ForcedCalls:
    """Structured output and ``predict_and_call`` with the call forced (see the module docstring). It
    declares no attributes: pydantic would take them for fields of the adapter."""

    def structured_predict(self, output_cls: Any, prompt: Any, llm_kwargs: dict[str, Any] | None = None,
                           **prompt_args: Any) -> Any:  # fmt: skip
        """Forces the call (constrained decoding), also where ``metadata.is_function_calling_model`` is
        ``False`` (a template without tools), where LlamaIndex would parse free text instead."""
        # LlamaIndex's own where it forces the call itself (its instrumentation's span and events)
        if self.metadata.is_function_calling_model or self.pydantic_program_mode != PydanticProgramMode.DEFAULT:
            return super().structured_predict(output_cls, prompt, llm_kwargs, **prompt_args)
        return _forced_program(self, output_cls, prompt)(llm_kwargs=llm_kwargs, **prompt_args)

    async def astructured_predict(self, output_cls: Any, prompt: Any, llm_kwargs: dict[str, Any] | None = None,
                                  **prompt_args: Any) -> Any:  # fmt: skip
        """:meth:`structured_predict` for ``await``."""
        # LlamaIndex's own where it forces the call itself (its instrumentation's span and events)
        if self.metadata.is_function_calling_model or self.pydantic_program_mode != PydanticProgramMode.DEFAULT:
            return await super().astructured_predict(output_cls, prompt, llm_kwargs, **prompt_args)
        return await _forced_program(self, output_cls, prompt).acall(llm_kwargs=llm_kwargs, **prompt_args)

    def _structured_stream_call(self, output_cls: Any, prompt: Any, llm_kwargs: dict[str, Any] | None = None,
                                **prompt_args: Any) -> Any:  # fmt: skip
        """Forces the call, as ``structured_predict`` does (LlamaIndex's ``stream_call`` drops ``tool_required``)."""
        if self.pydantic_program_mode != PydanticProgramMode.DEFAULT:
            return super()._structured_stream_call(output_cls, prompt, llm_kwargs, **prompt_args)
        return _forced_program(self, output_cls, prompt).stream_call(llm_kwargs=llm_kwargs, **prompt_args)

    async def _structured_astream_call(self, output_cls: Any, prompt: Any, llm_kwargs: dict[str, Any] | None = None,
                                       **prompt_args: Any) -> Any:  # fmt: skip
        """``astream_structured_predict`` forcing the call (see :meth:`_structured_stream_call`)."""
        if self.pydantic_program_mode != PydanticProgramMode.DEFAULT:
            return await super()._structured_astream_call(output_cls, prompt, llm_kwargs, **prompt_args)
        return await _forced_program(self, output_cls, prompt).astream_call(llm_kwargs=llm_kwargs, **prompt_args)

    def predict_and_call(self, tools: Sequence[Any], user_msg: Any = None, chat_history: Any = None, verbose: bool = False,
                         allow_parallel_tool_calls: bool = False, error_on_no_tool_call: bool = True,
                         error_on_tool_error: bool = False, **kwargs: Any) -> Any:  # fmt: skip
        """LlamaIndex's, through ``chat_with_tools`` also on a template without tools when the call is forced."""
        if self.metadata.is_function_calling_model or not forced(kwargs):
            return super().predict_and_call(tools, user_msg, chat_history, verbose, allow_parallel_tool_calls,  # type: ignore[misc]
                                            error_on_no_tool_call, error_on_tool_error, **kwargs)  # fmt: skip
        response = self.chat_with_tools(tools, user_msg=user_msg, chat_history=chat_history, verbose=verbose,  # type: ignore[attr-defined]
                                        allow_parallel_tool_calls=allow_parallel_tool_calls, **kwargs)  # fmt: skip
        return self._called(tools, response, verbose, allow_parallel_tool_calls, error_on_no_tool_call, error_on_tool_error)

    async def apredict_and_call(self, tools: Sequence[Any], user_msg: Any = None, chat_history: Any = None,
                                verbose: bool = False, allow_parallel_tool_calls: bool = False,
                                error_on_no_tool_call: bool = True, error_on_tool_error: bool = False,
                                **kwargs: Any) -> Any:  # fmt: skip
        """:meth:`predict_and_call` for ``await``."""
        if self.metadata.is_function_calling_model or not forced(kwargs):
            return await super().apredict_and_call(tools, user_msg, chat_history, verbose,  # type: ignore[misc]
                                                   allow_parallel_tool_calls, error_on_no_tool_call,
                                                   error_on_tool_error, **kwargs)  # fmt: skip
        response = await self.achat_with_tools(tools, user_msg=user_msg, chat_history=chat_history, verbose=verbose,  # type: ignore[attr-defined]
                                               allow_parallel_tool_calls=allow_parallel_tool_calls, **kwargs)  # fmt: skip
        return self._called(tools, response, verbose, allow_parallel_tool_calls, error_on_no_tool_call, error_on_tool_error)

    def _called(self, tools: Sequence[Any], response: ChatResponse, verbose: bool, parallel: bool,
                error_on_no_tool_call: bool, error_on_tool_error: bool) -> Any:  # fmt: skip
        """The reply's calls made, as ``FunctionCallingLLM.predict_and_call`` makes them."""
        from llama_index.core.chat_engine.types import AgentChatResponse
        from llama_index.core.tools.calling import call_tool_with_selection

        calls = self.get_tool_calls_from_response(response, error_on_no_tool_call=error_on_no_tool_call)  # type: ignore[attr-defined]
        outputs = [call_tool_with_selection(call, tools, verbose=verbose) for call in calls]
        if error_on_tool_error and any(output.is_error for output in outputs):
            raise ValueError("\n\n".join(output.content for output in outputs))
        if parallel:
            return AgentChatResponse(response="\n\n".join(output.content for output in outputs), sources=outputs)
        if len(outputs) > 1:
            raise ValueError("Invalid")
        if not outputs:
            return AgentChatResponse(response=response.message.content or "", sources=outputs)
        return AgentChatResponse(response=outputs[0].content, sources=outputs)


def _forced_program(llm: Any, output_cls: Any, prompt: Any) -> FunctionCallingProgram:
    """LlamaIndex's program for ``output_cls``, with its tool named as ``tool_choice`` (kept by ``stream_call``).
    Made directly: ``from_defaults`` refuses a model whose template has no tools, where a forced call works."""
    name = get_function_tool(output_cls).metadata.name
    return FunctionCallingProgram(output_cls=output_cls, llm=llm, prompt=prompt, tool_choice=name)

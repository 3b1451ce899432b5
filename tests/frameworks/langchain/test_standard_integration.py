"""langchain-tests' integration suite for `ChatRecall`, on the embedded default model
(SmolLM2-135M-Instruct, offline).

Tool calling, tool choice, structured output and JSON mode run (constrained decoding makes
even the 135M default model write a valid call or JSON when one is required). What a local
text-only model does not have (image / audio / PDF input) is declared through the suite's
own ``supports_*`` properties (False), so the suite skips those tests with their reason.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langchain_tests.integration_tests import ChatModelIntegrationTests

from langchain_recall import ChatRecall


class TestChatRecallIntegration(ChatModelIntegrationTests):
    @property
    def chat_model_class(self) -> type[ChatRecall]:
        return ChatRecall

    @property
    def chat_model_params(self) -> dict[str, Any]:
        # The embedded default model. 40 tokens: room for a forced tool call (at 28 the suite's seven
        # tool tests got no call, cut by the budget); the `model` fixture below gives the others 28.
        return {"max_tokens": 40}

    @pytest.fixture
    def model(self, request: Any) -> BaseChatModel:
        """The suite's fixture, with 28 tokens for tests that call no tool: a small JSON object still fits
        (constrained decoding closes open JSON in the last tokens of the budget), and the suite's real-model
        tests, most of which run to the budget, take about 0.14 s a token on two cores."""
        # the suite's own merge, in its order (langchain_tests' `model` fixture), then the budget
        params = {**self.standard_chat_model_params, **self.chat_model_params, **(getattr(request, "param", None) or {})}
        if not any(word in request.node.name for word in ("tool", "agent")):
            params["max_tokens"] = min(params["max_tokens"], 28)
        return self.chat_model_class(**params)

    @property
    def returns_usage_metadata(self) -> bool:
        return True

    @property
    def has_tool_calling(self) -> bool:
        return True

    @property
    def has_tool_choice(self) -> bool:
        return True

    @property
    def has_structured_output(self) -> bool:
        return True

    @property
    def supports_json_mode(self) -> bool:
        return True

    # The suite's agent loop binds a tool WITHOUT tool_choice ("auto") and expects the model to
    # choose a call. The 135M default model answers "What is the weather in San Francisco?" in
    # text (measured: it never opens <tool_call> unforced), and "auto" must stay the model's own
    # choice, so this fails on the model, not on ChatRecall: strict, so a model that does call
    # turns it into a visible XPASS. The same loop with a forced call is test_agent_loop_forced.
    @pytest.mark.xfail(reason="the 135M default model does not choose to call a tool under tool_choice='auto'",
                       strict=True)
    @pytest.mark.parametrize("model", [{}, {"output_version": "v1"}], indirect=True)
    def test_agent_loop(self, model: BaseChatModel) -> None:
        super().test_agent_loop(model)

    def test_agent_loop_forced(self, model: BaseChatModel) -> None:
        """The suite's agent loop with tool_choice="any" for the first turn: call, result, answer."""

        @tool
        def get_weather(location: str) -> str:
            """Get the weather at a location."""
            return "It's sunny."

        question = HumanMessage("What is the weather in San Francisco, CA?")
        call = model.bind_tools([get_weather], tool_choice="any").invoke([question])
        assert isinstance(call, AIMessage)
        assert [block["type"] for block in call.content_blocks].count("tool_call") == 1
        assert call.tool_calls[0]["name"] == "get_weather" and call.tool_calls[0]["args"]["location"]
        result = get_weather.invoke(call.tool_calls[0])
        assert isinstance(result, ToolMessage)
        answer = model.bind_tools([get_weather]).invoke([question, call, result])
        assert isinstance(answer, AIMessage) and answer.text

    # test_unicode_tool_call_integration runs as the suite has it: the 135M model used to fill
    # customer_name with a space instead of copying '你好啊集团' (an xfail here); since a required string
    # is never blank (recall_core.structured, 3ee8895) it copies the name. (langchain-tests lets a
    # subclass override a test only to mark it xfail: test_no_overrides_DO_NOT_OVERRIDE.)

"""langchain-tests standard suites for `ChatRecall`: the unit suite, on a tiny random Llama (seconds).

The integration suite, on the embedded default model: test_standard_integration.py.

Tool calling, tool choice, structured output and JSON mode run (constrained decoding makes
even the 135M default model write a valid call or JSON when one is required). What a local
text-only model does not have (image / audio / PDF input) is declared through the suites'
own ``supports_*`` properties (False), so the suites skip those tests with their reason.
"""

from __future__ import annotations

import functools
from typing import Any

from langchain_tests.unit_tests import ChatModelUnitTests

from langchain_recall import ChatRecall
from recall_core import RecallGenerator
from tests.helpers.tiny import tiny_model


@functools.lru_cache(maxsize=1)
def tiny_generator() -> RecallGenerator:
    model, tokenizer = tiny_model("llama")
    return RecallGenerator(model, tokenizer)


class TestChatRecallUnit(ChatModelUnitTests):
    @property
    def chat_model_class(self) -> type[ChatRecall]:
        return ChatRecall

    @property
    def chat_model_params(self) -> dict[str, Any]:
        return {"generator": tiny_generator(), "model": "tiny-llama"}

    @property
    def standard_chat_model_params(self) -> dict[str, Any]:
        # A local model has no API key and makes no network requests to retry: ChatRecall
        # refuses unknown init arguments instead of ignoring them, so these two are left out.
        params = super().standard_chat_model_params
        params.pop("api_key", None)
        params.pop("max_retries", None)
        return params

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



"""The settings both adapters share: declared once (RecallAdapterBase), checked the same way."""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage
from llama_index.core.base.llms.types import ChatMessage

from langchain_recall import ChatRecall
from langchain_recall import RecallLLM as LangChainLLM
from llamaindex_recall import RecallLLM as LlamaIndexLLM
from recall_core import RecallConfig, RecallGenerator
from recall_core.integration import RecallAdapterBase
from tests.helpers.memories import FixedMemory

ADAPTERS = [ChatRecall, LangChainLLM, LlamaIndexLLM]
FACT = "The user's dog is called Biscuit."


@pytest.mark.parametrize("cls", ADAPTERS)
def test_the_shared_fields_come_from_one_declaration(cls):
    for name, field in RecallAdapterBase.model_fields.items():
        assert repr(cls.model_fields[name]) == repr(field)  # pydantic copies the FieldInfo
    assert "recall" not in cls.model_fields  # a shortcut folded into recall_config, not a field


def test_an_adapter_must_say_where_its_framework_keeps_the_token_limit():
    class Incomplete(RecallAdapterBase):
        pass

    with pytest.raises(TypeError, match="abstract"):
        Incomplete()


@pytest.mark.parametrize("cls", ADAPTERS)
def test_the_recall_shortcut_is_folded_into_recall_config(cls, generator):
    explicit = cls(generator=generator, recall="explicit")
    assert explicit.recall_config.recall_policy == "explicit"
    assert explicit.recall_config.replace(recall_policy="auto") == generator.config  # the rest is the generator's
    tuned = cls(generator=generator, recall_config=RecallConfig(top_k=2), recall="explicit")
    assert (tuned.recall_config.top_k, tuned.recall_config.recall_policy) == (2, "explicit")
    assert cls(generator=generator, recall=None).recall_config is None
    with pytest.raises(ValueError, match="recall must be one of 'auto', 'explicit', 'model', 'ask', 'uncertainty', 'off', got 'sometimes'"):
        cls(generator=generator, recall="sometimes")
    with pytest.raises(TypeError, match="recall_config must be a recall_core.RecallConfig"):
        cls(generator=generator, recall_config={"top_k": 2}, recall="auto")


@pytest.mark.parametrize("cls", ADAPTERS)
def test_the_recall_shortcut_per_call(cls, generator):
    model = cls(generator=generator, memory=FixedMemory(FACT), recall="explicit")
    auto = model._prepare_call("X", {"recall": "auto"}, {"recall"}, user_id=None).config
    assert auto.recall_policy == "auto" and model.recall_config.recall_policy == "explicit"
    with pytest.raises(ValueError, match="recall must be one of"):
        model._prepare_call("X", {"recall": "never"}, {"recall"}, user_id=None)


@pytest.mark.parametrize("cls", ADAPTERS)
@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"temperature": -1}, "temperature must be >= 0"),
        ({"top_p": 1.5}, r"top_p must be in \(0, 1\]"),
        ({"top_k": -2}, "top_k must be an int >= 0"),
        ({"repetition_penalty": 0}, "repetition_penalty must be > 0"),
        ({"timeout": 0}, "timeout must be a number of seconds > 0"),
        ({"stop": [""]}, "stop strings must be non-empty"),
        # a flag or text where a number goes: pydantic took True as 1 and "7" as 7 (until 2026-12-07)
        ({"temperature": True}, "temperature must be a number, got True"),
        ({"top_k": True}, "top_k must be an int, got True"),
        ({"timeout": "30"}, "timeout must be a number, got '30'"),
        ({"max_new_tokens": True}, "max_new_tokens must be an int, got True"),
        ({"max_new_tokens": "7"}, "max_new_tokens must be an int, got '7'"),
        ({"max_new_tokens": 7.0}, "max_new_tokens must be an int, got 7.0"),  # a third reviewer
        ({"temperature": b"0.5"}, "temperature must be a number, got b'0.5'"),
    ],
)
def test_bad_settings_fail_at_init_naming_the_field(cls, generator, settings, message):
    with pytest.raises(ValueError, match=message):
        cls(generator=generator, **settings)


@pytest.mark.parametrize("cls", ADAPTERS)
@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"user_id": "   "}, "user_id must be"),
        ({"write_roles": ("User",)}, "write_roles must be a non-empty sequence of roles from 'user', 'assistant', 'system'"),
        ({"write_roles": ()}, "write_roles must be a non-empty sequence"),
        ({"session_id": "  "}, "session_id must be"),
    ],
)
def test_what_memory_is_written_with_is_checked_at_init(cls, generator, settings, message):
    """A bad one was accepted: every write then failed, or (roles nobody has) nothing was written, silently."""
    if not all(name in cls.model_fields for name in settings):
        pytest.skip(f"{cls.__name__} has no {', '.join(settings)}")
    with pytest.raises(ValueError, match=message):
        cls(generator=generator, **settings)


@pytest.mark.parametrize("cls", ADAPTERS)
def test_bad_call_settings_fail_naming_them(cls, generator):
    model = cls(generator=generator)
    with pytest.raises(ValueError, match="timeout must be a number of seconds > 0"):
        model._prepare_call("X", {"timeout": -1}, {"timeout"}, user_id=None)
    with pytest.raises(ValueError, match="max_tokens must be an int >= 1"):
        model._prepare_call("X", {"max_tokens": 0}, (), user_id=None)


@pytest.mark.parametrize("cls", ADAPTERS)
def test_the_standard_parameters_become_generate_options(cls, generator):
    model = cls(generator=generator, temperature=0.5, top_k=7, timeout=9, stop_sequences=["\n\n"], model="tiny")
    assert model.model_name == "tiny" and model.stop == ["\n\n"]
    options = model._prepare_call("X", {"max_tokens": 3}, (), user_id=None).kwargs
    assert options["temperature"] == 0.5 and options["do_sample"] is True
    assert options["top_k"] == 7 and options["max_time"] == 9.0 and options["max_new_tokens"] == 3
    assert options["stop"] == ["\n\n"]
    assert model._prepare_call("X", {"temperature": 0}, (), user_id=None).kwargs["do_sample"] is False


def test_from_model_keeps_a_given_name(tiny):
    model, tokenizer = tiny
    for cls in ADAPTERS:
        assert cls.from_model(model, tokenizer, model="mine").model_name == "mine"
        assert cls.from_model(model, tokenizer).model_name in (None, model.config.name_or_path)
        assert isinstance(cls.from_model(model, tokenizer).engine, RecallGenerator)


def test_recall_off_for_one_call_on_every_adapter(generator):
    """``recall="off"`` per call answers without memory on every adapter (the CLI's ``--no-memory``);
    the instance keeps its own policy for the next call."""
    question = "What is my dog called?"
    chat = ChatRecall(generator=generator, memory=FixedMemory(FACT), max_tokens=4)
    assert chat.invoke(question).response_metadata["recalls"][0]["injected"]
    off = chat.invoke([HumanMessage(question)], recall="off")
    assert off.response_metadata["recalls"] == [] and off.usage_metadata["input_token_details"]["recall_injected"] == 0
    assert chat.invoke(question).response_metadata["recalls"][0]["injected"]

    llm = LangChainLLM(generator=generator, memory=FixedMemory(FACT), max_tokens=4)
    infos = [llm.generate([question], recall=r).generations[0][0].generation_info for r in (None, "off")]
    assert infos[0]["recalls"][0]["injected"]
    assert [r["reason"] for r in infos[1]["recalls"]] in ([], ["recall off"])
    assert infos[1]["usage"]["injected_tokens"] == 0

    index = LlamaIndexLLM(generator=generator, memory=FixedMemory(FACT), max_new_tokens=4)
    assert index.chat([ChatMessage(role="user", content=question)]).raw["recalls"][0]["injected"]
    for raw in (index.chat([ChatMessage(role="user", content=question)], recall="off").raw,
                index.complete(question, recall="off").raw):  # fmt: skip
        assert raw["recalls"] == [] and raw["usage"]["injected_tokens"] == 0


@pytest.mark.parametrize("cls", [ChatRecall, LlamaIndexLLM])
def test_write_memory_per_call_is_checked(cls, generator):
    model = cls(generator=generator)
    assert model._prepare_call("X", {"write_memory": False}, {"write_memory"}, user_id=None).write_memory is False
    with pytest.raises(ValueError, match="write_memory must be True, False or None, got 'no'"):
        model._prepare_call("X", {"write_memory": "no"}, {"write_memory"}, user_id=None)
    with pytest.raises(TypeError, match="write_memory"):  # LangChain's RecallLLM writes nothing: refused
        LangChainLLM(generator=generator).invoke("Hi", write_memory=False)

"""Notebook 06: agents that call tools with recalled facts; RecallStore."""

from __future__ import annotations

from .cells import SETUP, code, md

CELLS = [
    md("""
# 6. Agents: a tool call that uses a fact recalled from a past session

An agent asks its model for tool calls. Here the model is the recall engine, so the
agent's long-term memory is recalled *inside* generation: on Monday Ada said where she
lives; on Friday she asks for the weather "where I live", the loop injects Monday's memory
at `<recall>`, and the tool call it writes already names her city.

The agents run on the plain release of the default model (SmolLM2-135M-Instruct,
`RecallGenerator.from_pretrained(tuned=False)`), as [docs/agents.md](../docs/agents.md)
advises for tool agents: the recall-tuned default was tuned to answer from notes, and tool
calls were not in its tuning data. Forced to call a tool, it writes the weather tool's city
as "Lisbon, Portugal" (a country the note does not hold), and asked to write down Ada's
allergy (the last section) it wrote the note `"I don't know. Keep the"` (checked
2026-12-07). Plain chats that read the memory (the structured output and the last chat
below) run on the tuned default, which reads notes best.

Three things make the agents work on a 135M model:

* the default model's chat template renders tools (Hermes / Qwen2.5 style, `<tool_call>`);
* a forced `tool_choice` (`"any"`, `"required"` or a tool's name) is enforced by
  **constrained decoding** (llguidance): even a 135M model writes a valid call;
* the recall loop and the grammar compose: the memory is injected before the call, and
  `<recall>` and the injected span are not text to the grammar.

Left to choose (`tool_choice="auto"`), a model this small answers in text rather than
calling tools, so both agents below force the first call.
"""),
    code(SETUP),
    code("""
from recall_core import RecallGenerator
from recall_core.memory import MemoryStore

PLAIN = RecallGenerator.from_pretrained(tuned=False)  # the release, for the agents (docs/agents.md)
store = MemoryStore.local(MEMORY_DIR)
# Monday's session: what Ada said is in her memory (the chat adapters write every exchange).
store.writer.add_turn("ada", "user", "I live in Lisbon, by the river.", session_id="monday")
print(store.for_user("ada").count(), "memory for ada")
"""),
    md("""
## LangChain: `create_agent` with `ChatRecall`

`ChatRecall.bind_tools` takes LangChain tools; the agent's middleware forces a call on
the first model turn (`tool_choice="any"`), then lets the model answer.
"""),
    code("""
from langchain.agents import create_agent
from langchain.agents.middleware import wrap_model_call
from langchain_core.messages import ToolMessage
from langchain_core.tools import tool

from langchain_recall import ChatRecall


@tool
def get_weather(city: str) -> str:
    \"\"\"Get today's weather in a city.\"\"\"
    return f"It is sunny and 24 C in {city}."


@wrap_model_call
def call_a_tool_first(request, handler):
    if not any(isinstance(m, ToolMessage) for m in request.messages):
        request = request.override(tool_choice="any")
    return handler(request)


chat = ChatRecall(generator=PLAIN, store=store, user_id="ada", session_id="friday", max_tokens=48, write_memory=False)
agent = create_agent(chat, tools=[get_weather], middleware=[call_a_tool_first])
state = agent.invoke({"messages": [{"role": "user", "content": "What is the weather like where I live?"}]})
for message in state["messages"]:
    message.pretty_print()
"""),
    md("""
The model turn that made the call recalled Monday's memory (the trace is in
`response_metadata["recalls"]`), and the arguments come from it:
"""),
    code("""
call = state["messages"][1]
recalled = [r["text"] for r in call.response_metadata["recalls"] if r["memory_id"]]
print("recalled:", recalled)
print("tool call:", call.tool_calls[0]["name"], call.tool_calls[0]["args"])
assert any("Lisbon" in text for text in recalled)  # Monday's memory was injected before the call
assert "Lisbon" in call.tool_calls[0]["args"]["city"]  # and the argument comes from it
"""),
    md("""
## Structured output

`with_structured_output` holds the reply to a schema with the same constrained decoding
(`method="json_schema"` by default; `"function_calling"` and `"json_mode"` too). A reply
that cannot be parsed (the token budget ran out) raises LangChain's `OutputParserException`.
"""),
    code("""
from pydantic import BaseModel, Field


class Home(BaseModel):
    \"\"\"Where the user lives.\"\"\"

    city: str = Field(description="the city")


home = ChatRecall(store=store, user_id="ada", max_tokens=24, write_memory=False).with_structured_output(Home)
print(home.invoke("Which city do I live in?"))
"""),
    md("""
## LlamaIndex: `FunctionAgent` with `RecallLLM`

`RecallLLM` is a `FunctionCallingLLM`; `initial_tool_choice` forces the first call.
"""),
    code("""
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.tools import FunctionTool

from llamaindex_recall import RecallLLM


def weather(city: str) -> str:
    \"\"\"Get today's weather in a city.\"\"\"
    return f"It is sunny and 24 C in {city}."


llm = RecallLLM(generator=PLAIN, store=store, user_id="ada", max_new_tokens=48)
li_agent = FunctionAgent(tools=[FunctionTool.from_defaults(weather)], llm=llm, initial_tool_choice="weather")
output = await li_agent.run("What is the weather like where I live?")
for call in output.tool_calls:
    print(call.tool_name, call.tool_kwargs, "->", call.tool_output.content)
print("answer:", output.response.content)
assert "Lisbon" in output.tool_calls[0].tool_kwargs["city"]
"""),
    md("""
## LangGraph's store is the same memory: `RecallStore`

LangGraph agents keep long-term memory in a `BaseStore`. `RecallStore` is one over the
same `MemoryStore`: an item put under `("ada", ...)` is a memory of Ada's, so the next
`<recall>` can inject it. Here a tool of the agent writes a note through `runtime.store`,
and a later, plain chat (on the tuned default) recalls it.
"""),
    code("""
from langchain.tools import ToolRuntime

from langchain_recall import RecallStore

agent_store = RecallStore(store, user_position=0)   # ("ada", "notes"): the first element is the user


@tool
def remember(note: str, runtime: ToolRuntime) -> str:
    \"\"\"Write down something about the user to remember later.\"\"\"
    runtime.store.put(("ada", "notes"), "allergy", {"text": note})
    return "noted"


writer = create_agent(chat, tools=[remember], middleware=[call_a_tool_first], store=agent_store)
writer.invoke({"messages": [{"role": "user", "content": "Remember that I am allergic to peanuts."}]})
note = agent_store.get(("ada", "notes"), "allergy")
print(note)
assert note is not None and "peanut" in note.value["text"].lower()  # the tool wrote the allergy down
"""),
    code("""
later = ChatRecall(store=store, user_id="ada", max_tokens=24, write_memory=False)  # the tuned default
reply = later.invoke("What am I allergic to?")
recalled = [r["text"] for r in reply.response_metadata["recalls"] if r["memory_id"]]
print("recalled:", recalled)
print("reply:", reply.content)
assert any("peanut" in text.lower() for text in recalled)  # the agent's note came back as a memory
"""),
    md("""
The final answers of a 135M model are weak; the point is the plumbing: the call is valid,
its argument was recalled from another session, the tool's result went back through the
chat template, and a note an agent's tool wrote is recalled by a later chat. A larger model (any Hugging Face causal LM whose template supports
tools: Qwen2.5, Llama 3.x, SmolLM3, Mistral) uses the same code, and can also be left to
choose its tools (`tool_choice="auto"`).
"""),
    code("""
store.close()
"""),
]

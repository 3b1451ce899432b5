"""Notebook 02: an LCEL chatbot with memory across sessions (ChatRecall)."""

from __future__ import annotations

from .cells import SETUP, code, md

CELLS = [
    md("""
# 2. A LangChain chatbot with memory across sessions (LCEL)

`langchain_recall.ChatRecall` is a LangChain chat model over the recall engine. With a
`store` and a `user_id` it does two things per call:

* **recall**: `<recall>` goes where the answer consults memory and the loop injects that
  user's best memories (up to two by default, as one block of notes) into the KV cache
  (nothing is added to the prompt);
* **remember**: with `write_memory=True` (the default) the exchange is written to the user's
  memory after the reply, so a later session can recall it.

The chat history *within* a session is ordinary LCEL: a `MessagesPlaceholder` we fill
ourselves. Long-term memory *across* sessions is recall's.

We keep only what the user says (`write_roles=("user",)`): a 135M model's own replies are
not worth remembering, and a wrong reply in memory would be recalled as if it were a fact.
"""),
    code(SETUP),
    code("""
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from recall_core.memory import MemoryStore

from langchain_recall import ChatRecall

store = MemoryStore.local(MEMORY_DIR)
chat = ChatRecall(store=store, user_id="ada", write_roles=("user",), max_tokens=40)

prompt = ChatPromptTemplate.from_messages(
    [
        ("system", "You are a helpful assistant."),
        MessagesPlaceholder("history"),
        ("human", "{input}"),
    ]
)
chain = prompt | chat  # an AIMessage: its response_metadata carries the recall trace
text_chain = chain | StrOutputParser()
"""),
    md("""
## Session 1: ada tells the bot about herself

`session_id` is recorded with each memory (bound per session with `.bind`).
"""),
    code("""
history = []
session = prompt | chat.bind(session_id="monday") | StrOutputParser()
for line in ["Hi! My dog is called Biscuit.", "I am allergic to peanuts."]:
    answer = session.invoke({"history": history, "input": line})
    history += [HumanMessage(line), AIMessage(answer)]
    print("ada:", line)
    print("bot:", answer)
print()
print(store.for_user("ada").count(), "memories written:")
for record in store.for_user("ada").all():
    print(f"  [{record.session_id}] {record.role}: {record.text}")
"""),
    md("""
## Days later: a new process, a new session, an empty history

We close the store and open it again from disk, as a new process would. The history list is
empty: whatever the bot knows now comes from recall.
"""),
    code("""
store.close()
store = MemoryStore.local(MEMORY_DIR)
chat = ChatRecall(store=store, user_id="ada", write_roles=("user",), max_tokens=40)
chain = prompt | chat
text_chain = chain | StrOutputParser()

message = chain.invoke({"history": [], "input": "What is my dog called?"})
print("bot:", message.content)
for recall in message.response_metadata["recalls"]:
    print(f"recalled {recall['text']!r} (score {recall['score']:.2f}) for query {recall['query']!r}")
print("usage:", message.usage_metadata)
"""),
    md("""
The injected memory counts as input tokens (`input_token_details["recall_injected"]`): the
model read it, but it was never part of the prompt. With a model this small the answer is
not always right even when the right memory is injected (notebook 5 measures it); the trace
always tells you what was recalled.
"""),
    md("""
## Streaming, and one model for many users

`stream` yields `AIMessageChunk`s (the last one carries usage and the trace). The user is a
per-call argument too, so one model instance can serve many users; their memories never
mix.
"""),
    code("""
for chunk in (prompt | chat.bind(user_id="ada") | StrOutputParser()).stream(
    {"history": [], "input": "What am I allergic to?"}
):
    print(chunk, end="|", flush=True)
print()

bruno = (prompt | chat.bind(user_id="bruno")).invoke({"history": [], "input": "What is my dog called?"})
print("bruno's bot:", bruno.content)
print("trace:", [(r["reason"], r["injected"]) for r in bruno.response_metadata["recalls"]])
"""),
    md("""
## Async

`ainvoke` / `astream` run the model in a worker thread: the event loop keeps serving other
tasks while the model decodes.
"""),
    code("""
import asyncio
import time


async def main():
    ticks = 0

    async def ticker():
        nonlocal ticks
        while True:
            await asyncio.sleep(0.05)
            ticks += 1

    task = asyncio.create_task(ticker())
    start = time.perf_counter()
    answer = await text_chain.ainvoke({"history": [], "input": "What is my dog called?"})
    task.cancel()
    return answer, ticks, time.perf_counter() - start


answer, ticks, seconds = await main()
print(answer)
print(f"the event loop ticked {ticks} times during {seconds:.1f} s of generation")
"""),
    code("""
store.close()
"""),
]

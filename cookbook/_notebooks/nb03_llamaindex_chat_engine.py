"""Notebook 03: SimpleChatEngine with RecallMemoryBlock."""

from __future__ import annotations

from .cells import SETUP, code, md

CELLS = [
    md("""
# 3. A LlamaIndex chat engine with `RecallMemoryBlock`

`llama_index.core.memory.Memory` keeps a short-term FIFO of the conversation and asks its
**memory blocks** for what to add to the prompt. `RecallMemoryBlock` is such a block:

* `_aget` does *not* return memory text to paste into the prompt; it returns a one-token
  marker, `<recall>`. `llamaindex_recall.RecallLLM` moves it to where the answer consults
  memory, and the decode loop injects the best memories (up to two by default, as one block
  of notes) into the KV cache there;
* the marker also asks `RecallLLM` to write each exchange into the recall `MemoryStore`
  right after the reply, under the `Memory`'s `session_id`. Nothing waits for `Memory` to
  flush its short-term queue (only past `token_limit`): the next session, or the next
  process, recalls what this one was told.
"""),
    code(SETUP),
    code("""
from llama_index.core.chat_engine import SimpleChatEngine
from llama_index.core.memory import Memory
from recall_core.memory import MemoryStore

from llamaindex_recall import RecallLLM, RecallMemoryBlock

store = MemoryStore.local(MEMORY_DIR)
llm = RecallLLM(store=store, max_new_tokens=40, system_prompt="You are a helpful assistant.")
print(llm.metadata)
"""),
    md("""
## Session 1

`Memory`'s defaults (a large `token_limit`): the chat history stays whole for the session,
and the block writes what the user says as it is said (`write_roles=("user",)`: a small
model's replies are rarely worth remembering).
"""),
    code("""
block = RecallMemoryBlock(store=store, user_id="ada", write_roles=("user",))


def new_memory(session_id):
    return Memory.from_defaults(session_id=session_id, memory_blocks=[block])


monday = new_memory("monday")
engine = SimpleChatEngine.from_defaults(llm=llm, memory=monday)
for line in ["My dog is called Biscuit.", "My sister Ana lives in Porto.", "I am allergic to peanuts."]:
    print("ada:", line)
    print("bot:", engine.chat(line))
print()
for record in store.for_user("ada").all():
    print(f"  long-term [{record.session_id}] {record.role}: {record.text}")
"""),
    md("""
Three turns, three memories, and no flush: `Memory` still holds the whole chat.
"""),
    code("""
print(store.for_user("ada").count(), "memories for ada;", len(await monday.aget_all()), "messages in Monday's Memory")
"""),
    md("""
## Session 2: a fresh short-term memory

The question is answered with a memory recalled by the loop; the instrumentation events
show the trace the LLM returned in `raw`.
"""),
    code("""
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events.llm import LLMChatEndEvent


class TraceCollector(BaseEventHandler):
    traces: list = []

    @classmethod
    def class_name(cls):
        return "TraceCollector"

    def handle(self, event, **kwargs):
        if isinstance(event, LLMChatEndEvent):
            self.traces.append(event.response.raw["recalls"])


collector = TraceCollector()
get_dispatcher().add_event_handler(collector)

engine = SimpleChatEngine.from_defaults(llm=llm, memory=new_memory("tuesday"))
for question in ["What am I allergic to?", "What is my sister called?"]:
    print("ada:", question)
    print("bot:", engine.chat(question))
    for recall in collector.traces[-1]:
        print(f"   recalled {recall['text']!r} (score {recall['score']:.2f})")
"""),
    md("""
## Streaming and completion

`stream_chat` / `stream_complete` format prompts exactly like `chat` / `complete`, and the
last chunk carries the trace in `raw`.
"""),
    code("""
response = engine.stream_chat("What is my dog called?")
for token in response.response_gen:
    print(token, end="|", flush=True)
print()

completion = llm.complete("What is my dog called?", user_id="ada")
print(completion.text)
print([(r["text"], round(r["score"], 2)) for r in completion.raw["recalls"]], completion.raw["usage"])
"""),
    md("""
## Recall off, and writing off, for one call

`recall="off"` answers without memory (the CLI's `--no-memory`); `write_memory=False` keeps
an exchange out of long-term memory. Both are per call; the block's `write_memory=False`
turns writing off for its whole `Memory`.
"""),
    code("""
from llama_index.core.base.llms.types import ChatMessage

before = store.for_user("ada").count()
question = [block.marker("tuesday"), ChatMessage(role="user", content="What is my dog called?")]
off = llm.chat(question, recall="off", write_memory=False)
print(off.message.content, off.raw["recalls"], store.for_user("ada").count() == before)
"""),
    code("""
get_dispatcher().event_handlers.remove(collector)
store.close()
"""),
]

